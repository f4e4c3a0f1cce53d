"""Categorical: integers (or integer arrays) whose entry ``i`` lies in
``range(start[i], start[i] + nvec[i])``, stored as ``dtype``: the sets behind Gymnasium's
``Discrete`` and ``MultiDiscrete``.

>>> import numpy as np
>>> from spacealg import Categorical, ArraySpace, cardinality
>>> Categorical(3, start=1)                                  # int64: the canonical form is a range
range(1, 4)
>>> Categorical([4, 4, 4])                                   # uniform int64 arrays: an ArraySpace
ArraySpace(range(0, 4), 3)
>>> s = Categorical([[2, 3], [3, 2]], start=[[10, 20], [30, 40]], dtype=np.int8)
>>> s.sample(rng=0) in s, cardinality(s)
(True, 36)

``nvec`` an int (or numpy integer): scalar elements, as Gymnasium's ``Discrete``;
``nvec`` an array-like of any shape (a 0-d array included): arrays of that shape, as
``MultiDiscrete``. ``start`` is a scalar or an array of ``nvec``'s shape.

Canonical forms (what the constructor returns, so that ``==`` compares like with like):

=======================================  =========================================
arguments                                ``Categorical(...)`` is
=======================================  =========================================
int ``n``, ``dtype=int64``               ``range(start, start + n)``
uniform ``nvec``/``start``, int64        ``ArraySpace(range(s, s + n), *shape)``
zero-size ``nvec``, int64                ``ArraySpace(range(0, 1), *shape)``
anything else                            a ``Categorical`` (non-int64 dtypes, per-entry ranges)
=======================================  =========================================

Equality compares the kind (scalar or array), shape, dtype, ``nvec`` and ``start``.
Membership follows spacealg's dtype policy (by value: the right shape, integral values
within each entry's range, whatever the storage dtype). Samples are uniform and have the
space's dtype (numpy scalars for the scalar kind). ``elements``/``index`` enumerate in C
order (last entry fastest). Unlike a Box of integers, a Categorical is a set of unordered
labels: the Gymnasium adapters map it to ``Discrete``/``MultiDiscrete`` and flattening is one-hot.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

from spacealg.core.protocol import (
    bounds,
    cardinality,
    check_position,
    contains,
    element,
    elements,
    index,
    issubspace,
)
from spacealg.core.space import Space
from spacealg.core.styles import FiniteSpaceStyle
from spacealg.spaces._batch import as_real_array, dtype_arg
from spacealg.spaces._counting import count_product, lazy_product
from spacealg.spaces._kind import leaf_model, register
from spacealg.spaces.array import ArraySpace, array_of
from spacealg.spaces.box import Box

__all__ = ["Categorical"]

_INT64 = np.dtype(np.int64)


def _integers(name: str, value: Any) -> np.ndarray:
    """``value`` as an array of Python ints (object dtype), exactly; TypeError if not integral."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise TypeError(f"Categorical: {name} must be integers, got {value!r}") from None
    if array.dtype.kind in "iu" or (array.size == 0 and array.dtype.kind == "f"):
        return array.astype(object)
    if array.dtype.kind == "f" and not isinstance(value, np.ndarray):  # [2**62, 2**63] reads as floats
        with contextlib.suppress(TypeError, ValueError):
            array = np.array(value, dtype=object)
    if array.dtype.kind == "O" and all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in array.flat
    ):
        return array
    raise TypeError(f"Categorical: {name} must be integers, got {value!r}")


def _count_dtype(counts: np.ndarray, dtype: np.dtype) -> np.dtype:
    """The dtype ``nvec`` is stored in: the space's own where every count fits it, else the
    first of int64, uint64 that holds them (``Categorical(256, dtype=np.uint8)``: the
    values 0..255 fit uint8, their number does not), else Python ints (object)."""
    top = max(counts.flat, default=0)
    for candidate in (dtype, np.dtype(np.int64), np.dtype(np.uint64)):
        if top <= np.iinfo(candidate).max:
            return candidate
    return np.dtype(object)


def _is_scalar_arg(nvec: Any) -> bool:
    return isinstance(nvec, (int, np.integer)) and not isinstance(nvec, bool)


class Categorical(Space):
    """Integers (``nvec`` an int) or integer arrays (``nvec`` an array) with entry ``i`` in
    ``range(start[i], start[i] + nvec[i])``, stored as ``dtype``."""

    nvec: Any
    start: Any
    dtype: np.dtype
    shape: tuple[int, ...]
    scalar: bool
    low: np.ndarray
    high: np.ndarray
    _size: int

    def __new__(cls, nvec: Any, start: Any = 0, dtype: Any = np.int64) -> Any:
        checked = dtype_arg("Categorical", dtype, "iu", "an integer dtype")
        if checked != _INT64:
            return super().__new__(cls)
        counts, starts = _integers("nvec", nvec), _integers("start", start)
        if _is_scalar_arg(nvec) and starts.ndim == 0:
            n, s = int(counts[()]), int(starts[()])
            info = np.iinfo(np.int64)
            if n > 0 and info.min <= s and s + n - 1 <= info.max:  # else __init__ says why not
                return range(s, s + n)
        elif not _is_scalar_arg(nvec) and (starts.ndim == 0 or starts.shape == counts.shape):
            shape = counts.shape
            if counts.size == 0:
                return ArraySpace(range(0, 1), *shape)
            full_starts = np.broadcast_to(starts, shape)
            if _leaf_model.all_equal(counts) and _leaf_model.all_equal(full_starts) and counts.flat[0] > 0:
                s, n = int(full_starts.flat[0]), int(counts.flat[0])
                info = np.iinfo(np.int64)
                if info.min <= s and s + n - 1 <= info.max:
                    return ArraySpace(range(s, s + n), *shape)
        return super().__new__(cls)

    def __init__(self, nvec: Any, start: Any = 0, dtype: Any = np.int64) -> None:
        checked = dtype_arg("Categorical", dtype, "iu", "an integer dtype")
        scalar = _is_scalar_arg(nvec)
        counts, starts = _integers("nvec", nvec), _integers("start", start)
        if scalar and starts.ndim:
            raise ValueError(f"Categorical: start must be an int when nvec is an int, got {start!r}")
        if starts.ndim and starts.shape != counts.shape:
            raise ValueError(
                f"Categorical: start.shape {starts.shape} does not match nvec.shape {counts.shape}"
            )
        starts = np.broadcast_to(starts, counts.shape)
        if counts.size and np.asarray(counts <= 0).any():
            raise ValueError(f"Categorical: nvec must be positive, got {nvec!r}")
        info = np.iinfo(checked)
        lasts = np.asarray(starts + counts - 1, dtype=object).reshape(counts.shape)
        if counts.size and (min(starts.flat) < info.min or max(lasts.flat) > info.max):
            raise ValueError(f"Categorical: the ranges do not fit the dtype {checked}")
        low = np.array(starts, dtype=checked) if counts.size else np.zeros(counts.shape, dtype=checked)
        high = np.array(lasts, dtype=checked) if counts.size else np.zeros(counts.shape, dtype=checked)
        counted = _count_dtype(counts, checked)
        stored_nvec = np.array(counts, dtype=counted) if counts.size else np.zeros(counts.shape, checked)
        for array in (low, high, stored_nvec):
            array.flags.writeable = False
        self._set(
            scalar=scalar,
            dtype=checked,
            shape=() if scalar else counts.shape,
            nvec=counted.type(counts[()]) if scalar else stored_nvec,
            start=checked.type(starts[()]) if scalar else low,
            low=low,
            high=high,
            _size=int(math.prod(counts.shape)),
        )

    def _key(self) -> tuple[Any, ...]:
        return (self.scalar, self.shape, self.dtype.str, self.low.tobytes(), self.high.tobytes())

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs: dict[str, Any] = {}
        if self.scalar:
            if self.start != 0:
                kwargs["start"] = int(self.start)
            kwargs["dtype"] = self.dtype
            return (int(self.nvec),), kwargs
        if (self.low != 0).any():
            kwargs["start"] = np.asarray(self.low)
        kwargs["dtype"] = self.dtype
        return (np.asarray(self.nvec),), kwargs


@contains.register(Categorical)
def _contains(x: Any, space: Categorical) -> bool:
    # by the leaf model: 5.7-7.3 us a Categorical([3, 4]) row, as the old copy (5.1-7.2); isin rule 39.4
    if isinstance(x, (str, bytes)):
        return False
    a = as_real_array(x)
    if a is None or a.shape != space.shape:
        return False
    return bool(leaf_model(space).inside(a).all())


register(Categorical, eltype=lambda space: space.dtype.type if space.scalar else np.ndarray,
         elsize=lambda space: space.shape, SpaceStyle=lambda space: FiniteSpaceStyle(space.shape),
         bounds=lambda space: (int(space.low), int(space.high)) if space.scalar else (space.low, space.high))


def _widths(space: Categorical) -> list[int]:
    return [int(h) - int(lo) + 1 for lo, h in zip(space.low.flat, space.high.flat)]


@cardinality.register(Categorical)
def _cardinality(space: Categorical) -> int | float:
    return count_product(_widths(space))


def _build(space: Categorical, values: Any) -> Any:
    if space.scalar:
        return space.dtype.type(values[0])
    return np.array(values, dtype=space.dtype).reshape(space.shape)


@elements.register(Categorical)
def _elements(space: Categorical) -> Iterator[Any]:
    axes = [range(int(lo), int(h) + 1) for lo, h in zip(space.low.flat, space.high.flat)]
    return (_build(space, combo) for combo in lazy_product(axes.__getitem__, len(axes)))


@index.register(Categorical)
def _index(x: Any, space: Categorical) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    position = 0
    for value, lo, width in zip(np.asarray(x).flat, space.low.flat, _widths(space)):
        position = position * width + int(value) - int(lo)
    return position


@element.register(Categorical)
def _element(i: Any, space: Categorical) -> Any:
    i = check_position(i, _cardinality(space))
    digits = []
    for lo, width in zip(reversed(list(space.low.flat)), reversed(_widths(space))):
        i, digit = divmod(i, width)
        digits.append(int(lo) + digit)
    return _build(space, digits[::-1])


# -- inclusion -----------------------------------------------------------------------------


def _entry_ranges(space: Categorical) -> set[range]:
    return {range(int(lo), int(h) + 1) for lo, h in zip(space.low.flat, space.high.flat)}


@issubspace.register(Categorical, Categorical)
def _categorical_subset(a: Categorical, b: Categorical) -> bool:
    return (
        a.scalar == b.scalar
        and a.shape == b.shape
        and bool((a.low >= b.low).all() and (a.high <= b.high).all())
    )


@issubspace.register(Categorical, object)
def _categorical_in(a: Categorical, b: Any) -> bool:
    if a.scalar:
        return issubspace(range(int(a.low), int(a.high) + 1), b)  # type: ignore[no-any-return]
    if isinstance(b, Box):
        return b.shape == a.shape and bool((a.low >= b.low).all() and (a.high <= b.high).all())
    if isinstance(b, ArraySpace):
        return b.dims == a.shape and all(issubspace(r, b.space) for r in _entry_ranges(a))
    raise TypeError(f"issubspace: not decided for {a!r} and {b!r}")


@issubspace.register(range, Categorical)
def _range_in(a: range, b: Categorical) -> bool:
    if not b.scalar:
        return False
    return len(a) == 0 or (min(a) >= int(b.low) and max(a) <= int(b.high))


@issubspace.register(ArraySpace, Categorical)
def _array_in(a: ArraySpace, b: Categorical) -> bool:
    if b.scalar or a.dims != b.shape:
        return False
    try:
        low, high = bounds(a.space)
    except TypeError:
        return False
    integral = all(contains(v, range(int(np.floor(low)), int(np.floor(high)) + 1)) for v in (low, high))
    entries = range(int(np.floor(low)), int(np.floor(high)) + 1)
    return integral and issubspace(a.space, entries) and bool(
        (b.low <= low).all() and (b.high >= high).all()
    )


# -- arrays of categoricals stay categorical -----------------------------------------------


@array_of.register(Categorical)
def _categorical_array(space: Categorical, dims: tuple[int, ...], base: Any) -> Any:
    shape = dims + space.shape
    nvec = np.broadcast_to(np.asarray(space.high, dtype=object) - space.low.astype(object) + 1, shape)
    start = np.broadcast_to(space.low.astype(object), shape)
    return Categorical(np.array(nvec, dtype=object), start=np.array(start, dtype=object), dtype=space.dtype)


# -- the leaf model (spacealg.core.leaf) ------------------------------------------------------

from spacealg.core import leaf as _leaf_model  # noqa: E402


@_leaf_model.leaf.register(Categorical)
def _categorical_leaf(space: Categorical) -> _leaf_model.LeafModel:
    image = "Discrete" if space.scalar else "MultiDiscrete"
    return _leaf_model.LeafModel(image, space.dtype, space.shape, space.low, space.high, scalar=space.scalar,
                                 space=space)
