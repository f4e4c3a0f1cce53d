"""``isin`` on torch and JAX: a bool array of the batch's shape, on the batch's device.

Rules per leaf kind, the same comparisons as NumPy's (spacealg's dtype policy: members by
value, whatever the storage dtype):

======  ==============================================================================
kind    an entry ``x`` is inside when
======  ==============================================================================
real    ``low <= x <= high`` (``<`` at an open end); integer batches compare as floats;
        NaN is outside
int     ``x`` integral, within ``low..high`` and on the step (``(x - low) % step == 0``);
        float batches compare with the ends rounded inwards in their own dtype (exact)
set     ``x`` equals one of the items
======  ==============================================================================

A row is inside when every entry is; a product's row when every component's row is.
Law: ``isin(b, s)[i] == contains(b[i], s)`` for the row moved to NumPy.
Raises ValueError when the batch is not shaped as a batch of the space.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from spacealg.backends.kernel import Kernel
from spacealg.backends.leaves import ArrayLeaf, map_tree, tree_for, tree_values
from spacealg.spaces.interval import Interval, _clip_bounds

__all__ = ["batch_lead", "inner_float_bounds", "isin_on"]


def isin_on(name: str, batch: Any, space: Any) -> Any:
    """The membership of every row of a torch/JAX ``batch`` of ``space``."""
    tree = tree_for(space, name, "isin")
    first = _first(batch)
    k = Kernel.for_array(name, first)
    parts = tree_values(map_tree(lambda leaf, b: _isin_leaf(k, leaf, b), tree, batch, what="isin"))
    result = parts[0]
    for part in parts[1:]:
        if tuple(part.shape) != tuple(result.shape):
            raise ValueError(f"isin: the component batches of {space!r} have different batch shapes")
        result = result & part
    return result


def _first(batch: Any) -> Any:
    while isinstance(batch, (tuple, list, dict)):
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    return batch


def batch_lead(k: Kernel, leaf: ArrayLeaf, b: Any, what: str) -> tuple[int, ...]:
    """The batch shape of ``b``; ValueError naming ``what`` unless it ends in the element shape."""
    shape = tuple(b.shape) if hasattr(b, "shape") else None
    n = len(leaf.shape)
    if shape is None or len(shape) < n or shape[len(shape) - n :] != leaf.shape:
        raise ValueError(
            f"{what}: {type(b).__qualname__} of shape {shape} is not a batch of {leaf.space!r} "
            f"(elements of shape {leaf.shape})"
        )
    return shape[: len(shape) - n]


_ALL_ONES = 0x0101010101010101


def _all_trailing(k: Kernel, inside: Any, lead: tuple[int, ...], n: int) -> Any:
    """``inside`` reduced over the element's ``n`` trailing axes (every entry inside).

    On torch, rows of 8 to 64 bools are read as int64 words, eight entries per compare, and
    rows of fewer than 8 are and-ed entry by entry:
    torch's per-row reduction is several times slower for short rows (as NumPy's, which
    spacealg's NumPy path avoids the same way).
    """
    if not n:
        return inside
    width = math.prod(inside.shape[len(lead):])
    rows = k.xp.reshape(inside, (*lead, width))
    if k.name == "torch" and width and width % 8 == 0 and width <= 64 and rows.is_contiguous():
        words = rows.view(k.backend.module.uint8).view(k.backend.module.int64)
        result = words[..., 0] == _ALL_ONES
        for j in range(1, width // 8):
            result &= words[..., j] == _ALL_ONES
        return result
    if k.name == "torch" and 0 < width < 8:  # a few entries: one & per entry
        result = rows[..., 0]
        for j in range(1, width):
            result = result & rows[..., j]
        return result
    return k.xp.all(rows, axis=-1)


def _isin_leaf(k: Kernel, leaf: ArrayLeaf, b: Any) -> Any:
    lead = batch_lead(k, leaf, b, "isin")
    kind = k.kind(b)
    xp = k.xp
    if kind == "c":
        return xp.zeros(lead, dtype=xp.bool)
    if kind == "b":
        b = xp.astype(b, k.native(leaf, np.uint8), copy=False)
        kind = "i"
    if leaf.kind == "real":
        if kind != "f":
            b = xp.astype(b, k.widest_float(), copy=False)
        low, high = _real_bounds(k, leaf, b)
        above = b > low if leaf.open_low else b >= low
        below = b < high if leaf.open_high else b <= high
        inside = above & below
    elif leaf.kind == "int":
        inside = _int_inside(k, leaf, b, kind)
    else:
        inside = _set_inside(k, leaf, b, kind)
    return _all_trailing(k, inside, lead, len(leaf.shape))


def _real_bounds(k: Kernel, leaf: ArrayLeaf, b: Any) -> tuple[Any, Any]:
    """Interval ends as Python floats (NumPy's weak scalars); Box bounds in the Box's dtype."""
    if isinstance(leaf.base, Interval) or (leaf.uniform_bounds and leaf.size and k.numpy_dtype(b) == leaf.dtype):
        return float(leaf.low.reshape(-1)[0]), float(leaf.high.reshape(-1)[0])
    dtype = k.native(leaf)
    return k.const(leaf, "low", lambda: leaf.low, dtype), k.const(leaf, "high", lambda: leaf.high, dtype)


def _int_inside(k: Kernel, leaf: ArrayLeaf, b: Any, kind: str) -> Any:
    xp = k.xp
    if kind == "f":
        low, high = inner_float_bounds(k, leaf, b.dtype)
        inside = (b >= low) & (b <= high) & (xp.floor(b) == b)
    else:
        low, high = _int_bounds(k, leaf, b)
        inside = (b >= low) & (b <= high)
    if leaf.step != 1:
        first = int(leaf.low.reshape(-1)[0])
        wide = xp.astype(b, k.widest_float() if kind == "f" else k.widest_int(), copy=False)
        inside = inside & (xp.remainder(wide - first, leaf.step) == 0)
    return inside


def _int_bounds(k: Kernel, leaf: ArrayLeaf, b: Any) -> tuple[Any, Any]:
    """The integer ends clipped to ``b``'s dtype (exact comparisons in ``b``'s own dtype)."""
    np_dtype = k.numpy_dtype(b)
    key = ("int_bounds", np_dtype.str)
    if key not in leaf.cache:
        info = np.iinfo(np_dtype)
        low = np.asarray(leaf.low, dtype=object)
        high = np.asarray(leaf.high, dtype=object)
        empty = (low > info.max) | (high < info.min)
        lo = np.where(empty, info.max, np.maximum(low, info.min)).astype(np_dtype)
        hi = np.where(empty, info.min, np.minimum(high, info.max)).astype(np_dtype)
        if bool(np.asarray(empty).any()) and info.min == info.max - 1:  # pragma: no cover - 1-bit types
            raise TypeError(f"isin: batches of {np_dtype} cannot hold members of {leaf.space!r}")
        leaf.cache[key] = (lo, hi)
    lo, hi = leaf.cache[key]
    if _uniform(lo) and _uniform(hi) and lo.size:
        return int(lo.reshape(-1)[0]), int(hi.reshape(-1)[0])
    native = b.dtype
    tag = np_dtype.str
    return k.const(leaf, ("lo", tag), lambda: lo, native), k.const(leaf, ("hi", tag), lambda: hi, native)


def _set_inside(k: Kernel, leaf: ArrayLeaf, b: Any, kind: str) -> Any:
    xp = k.xp
    assert leaf.values is not None
    floating = kind == "f" or leaf.values.dtype.kind == "f"
    common = k.widest_float() if floating else k.widest_int()
    values = k.const(leaf, ("values", floating), lambda: leaf.values, common)
    wide = xp.astype(b, common, copy=False)
    return xp.any(wide[..., None] == values, axis=-1)


def _uniform(a: np.ndarray) -> bool:
    return a.size == 0 or bool((a == a.reshape(-1)[0]).all())


# -- the nearest members a float dtype can hold (shared with clamp and sample) -------------


def inner_float_bounds(k: Kernel, leaf: ArrayLeaf, dtype: Any) -> tuple[Any, Any]:
    """The ends of ``leaf`` rounded inwards into the native float ``dtype``.

    For an Interval, NumPy's own rule (its nearest floats inside, open ends stepped in);
    for boxes and integer ranges, the smallest/largest float of ``dtype`` within the
    bounds. Python floats where every entry has the same bounds, else cached constants.
    """
    np_dtype = np.dtype(k.backend.numpy_dtype(dtype))
    key = ("inner", np_dtype.str)
    if key not in leaf.cache:
        if isinstance(leaf.base, Interval):
            lo, hi = _clip_bounds(leaf.base, np_dtype)
            low, high = np.full(leaf.shape, lo, np_dtype), np.full(leaf.shape, hi, np_dtype)
        else:
            low = _round_inward(leaf.low, np_dtype, up=True)
            high = _round_inward(leaf.high, np_dtype, up=False)
        leaf.cache[key] = (low, high)
    low, high = leaf.cache[key]
    scalars = leaf.cache.get((key, "scalars"), False)
    if scalars is False:
        scalars = leaf.cache[(key, "scalars")] = _scalars(low, high)
    if scalars is not None:
        return scalars  # type: ignore[no-any-return]
    return k.const(leaf, ("inner_lo", np_dtype.str), lambda: low, dtype), k.const(
        leaf, ("inner_hi", np_dtype.str), lambda: high, dtype)


def _scalars(low: np.ndarray, high: np.ndarray) -> tuple[float, float] | None:
    if not (_uniform(low) and _uniform(high)):
        return None
    return (float(low.reshape(-1)[0]), float(high.reshape(-1)[0])) if low.size else (0.0, 0.0)


def _exact(v: Any) -> Fraction | None:
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    f = float(v)
    return Fraction(f) if math.isfinite(f) else None


def _round_inward(values: np.ndarray, dtype: np.dtype, up: bool) -> np.ndarray:
    out = np.empty(values.shape, dtype)
    largest = np.finfo(dtype).max
    for i, v in np.ndenumerate(values):
        with np.errstate(over="ignore"):
            f = dtype.type(v)
        exact = _exact(v)
        if exact is None:
            out[i] = f  # an infinite bound stays infinite
            continue
        if not np.isfinite(f):
            f = dtype.type(largest if f > 0 else -largest)
        if up and Fraction(float(f)) < exact:
            f = np.nextafter(f, dtype.type(np.inf))
        elif not up and Fraction(float(f)) > exact:
            f = np.nextafter(f, dtype.type(-np.inf))
        out[i] = f
    return out
