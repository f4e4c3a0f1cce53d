"""Integer batches on NumPy, torch and JAX, compared and clipped exactly in their own dtype.

An integer batch meets a leaf's integer bounds in the batch's own dtype, the bounds
clipped to the dtype's range: no cast that wraps (uint64 through int64), no bound the
dtype cannot parse (a Python ``2**32 - 1`` meeting JAX's uint32 without x64), no rounding
through floats. Where torch lacks the comparison and clip kernels (uint16, uint32,
uint64), the batch is first mapped into int64 keeping its order: uint16/uint32 by a cast,
uint64 by flipping its sign bit (``x - 2**63``, exact), and the bounds are shifted alike;
bools are compared as the uint8 0 and 1.

Laws, for an integer batch ``b`` of native dtype ``d`` and a leaf with integer bounds
``low..high``: ``inside(b) == (low <= b) & (b <= high)`` by exact value; ``clip(b)`` is
``min(max(b, low), high)`` by exact value wherever ``d`` holds some integer of
``low..high`` (:func:`clip_bounds` says where it does not).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from spacealg.core.kernel import Kernel
from spacealg.core.leaf import LeafModel, common

#: beyond every integer dtype: what an infinite end of a real leaf becomes among its integers
_BEYOND = 2**65

__all__ = ["Ordered", "bound_scalar", "clip_bounds", "integer_members"]

_INT64_MIN = -(2**63)


class Ordered:
    """How a native integer dtype is compared: ``convert(b)`` into ``work`` (None: as is),
    values shifted down by ``shift``; ``restore(c, out)`` the inverse, cast to ``out``."""

    def __init__(self, k: Kernel, dtype: Any) -> None:
        self.convert: Callable[[Any], Any] | None = None
        self.work, self.shift = dtype, 0
        self.k = k
        if k.kind_of(dtype) == "b":  # bools are the integers 0 and 1
            uint8 = k.dtype(np.dtype(np.uint8))
            self.convert, self.work = (lambda b: k.xp.astype(b, uint8)), uint8
            return
        if k.name != "torch":
            return
        torch = k.module
        if dtype in (torch.uint16, torch.uint32):  # no ge/clamp kernels: int64 holds them
            self.convert, self.work = (lambda b: b.to(torch.int64)), torch.int64
        elif dtype == torch.uint64:  # the sign bit flipped: x - 2**63, order kept
            self.convert, self.work, self.shift = (lambda b: b.view(torch.int64) ^ _INT64_MIN), torch.int64, 2**63

    def __call__(self, b: Any) -> Any:
        return b if self.convert is None else self.convert(b)

    def restore(self, c: Any, out: Any) -> Any:
        """Values ``c`` of :attr:`work` back to their own values, in native dtype ``out``."""
        if self.shift:
            torch = self.k.module
            return (c ^ _INT64_MIN).view(torch.uint64).to(out)
        return self.k.xp.astype(c, out, copy=False)


def clip_bounds(k: Kernel, leaf: LeafModel, dtype: Any, view: Ordered) -> tuple[Any, Any, bool]:
    """``(low, high, disjoint)``: the leaf's integer bounds clipped to the range of native
    ``dtype`` and shifted as ``view`` shifts values, as scalars of the working dtype where
    every entry has the same (a NumPy scalar on JAX, whose Python ints are int32 without
    x64) or cached constants; ``disjoint`` when some entry has no integer ``dtype`` holds
    (its clipped low then exceeds its high)."""
    np_dtype = k.numpy_dtype(dtype)
    if np_dtype.kind == "b":
        np_dtype = np.dtype(np.uint8)
    work = k.numpy_dtype(view.work)
    key = ("int_bounds", np_dtype.str, work.str, view.shift)  # the view differs by backend
    if key not in leaf.cache:
        info = np.iinfo(np_dtype)
        info_min, info_max = int(info.min), int(info.max)
        lows = np.asarray(leaf.value_low, dtype=object).reshape(-1).tolist()  # exact Python ints
        highs = np.asarray(leaf.value_high, dtype=object).reshape(-1).tolist()
        empty = [lo > info_max or hi < info_min for lo, hi in zip(lows, highs)]
        lo = [(info_max if e else max(v, info_min)) - view.shift for v, e in zip(lows, empty)]
        hi = [(info_min if e else min(v, info_max)) - view.shift for v, e in zip(highs, empty)]
        shape = leaf.shape
        leaf.cache[key] = (np.array(lo, work).reshape(shape), np.array(hi, work).reshape(shape), any(empty))
    lo, hi, disjoint = leaf.cache[key]
    tag = (np_dtype.str, work.str)
    return (bound_scalar(k, leaf, lo, ("lo", tag), view.work), bound_scalar(k, leaf, hi, ("hi", tag), view.work),
            disjoint)


def bound_scalar(k: Kernel, leaf: LeafModel, bound: np.ndarray, tag: Any, work: Any) -> Any:
    """An integer ``bound`` of ``leaf`` (a NumPy array of native ``work``'s NumPy dtype) as one
    scalar where every entry has the same (a Python int on torch; a NumPy scalar elsewhere,
    as JAX reads Python ints as int32 without x64), else a constant cached on the leaf."""
    value = common(bound)
    if value is None:
        return k.const(leaf, tag, lambda: bound, work)
    return int(value) if k.name == "torch" else bound.dtype.type(value)


def integer_members(leaf: LeafModel) -> LeafModel:
    """The integers of a real leaf, as an integer leaf: per entry ``ceil(low)..floor(high)``
    (an open end's integer stepped in), exactly (ends beyond 2**53 included); an infinite end
    becomes an integer beyond every dtype. An entry holding no integer has low > high. Kept
    in the leaf's cache. Law: an integer ``x`` is a member of an entry of ``leaf`` exactly
    when it lies within that entry's bounds here."""
    key = "integer_members"
    if key not in leaf.cache:
        lows = [_end(v, up=True, open_end=leaf.open_low) for v in leaf.value_low.reshape(-1).tolist()]
        highs = [_end(v, up=False, open_end=leaf.open_high) for v in leaf.value_high.reshape(-1).tolist()]
        shape = leaf.shape
        leaf.cache[key] = LeafModel("Box", np.dtype(np.int64), shape, np.array(lows, dtype=object).reshape(shape),
                                    np.array(highs, dtype=object).reshape(shape), space=leaf.space)
    return leaf.cache[key]  # type: ignore[no-any-return]


def _end(value: Any, up: bool, open_end: bool) -> int:
    """The least (``up``) or greatest integer at or inside a real end, exactly."""
    if isinstance(value, float) and math.isinf(value):
        return -_BEYOND if value < 0 else _BEYOND
    exact = Fraction(value)
    integer = math.ceil(exact) if up else math.floor(exact)
    if open_end and integer == exact:
        integer += 1 if up else -1
    return int(integer)
