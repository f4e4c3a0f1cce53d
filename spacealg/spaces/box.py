"""Box: an axis-aligned box of real or integer arrays (Gymnasium's conventions).

>>> import numpy as np
>>> from spacealg import Box, SpaceStyle, cardinality
>>> b = Box(-1.0, 1.0, shape=(3,))                    # dtype float32 by default
>>> b.sample(rng=0) in b
True
>>> SpaceStyle(Box(0, 255, shape=(2, 2), dtype=np.uint8))
FiniteSpaceStyle(shape=(2, 2))
>>> cardinality(Box(0, 2, shape=(2,), dtype=np.int64))
9

Constructor: ``low``/``high`` are scalars or arrays; ``shape`` is inferred from arrays,
defaults to ``(1,)`` for two scalars; ``dtype`` is any bool, integer or floating dtype
(default float32). Integer boxes take ``-inf``/``inf`` as the dtype's limits (signed
only) and are *finite* spaces, enumerable and indexable in C order.

Bounds: finite float bounds must be values of the dtype (beyond ``finfo`` a ValueError
naming ``low``/``high``, as Gymnasium); unsigned and bool boxes take no infinite bound; a
shape whose single element cannot be allocated is a ValueError naming ``shape``. Uniform
bounds are kept as one number (``low``/``high`` are read-only broadcast views: a Box costs
no memory until it is sampled), and every exposed array is read-only.

Membership (spacealg's dtype policy): an array of the right shape whose values lie
within the bounds, whatever its numeric dtype; an integer box also requires integral
values. Values are compared exactly (never rounded to the box's or the array's dtype).
Gymnasium's ``Box.contains`` is stricter about storage dtype; ``contains`` on a
Gymnasium space keeps Gymnasium's answer. So a float64 ``x`` in ``Box(0, 1, (2,))`` is not
in ``gymnasium.spaces.Box(0, 1, (2,))`` although each space is a subspace of the other
(inclusion compares values): cast to the space's dtype first (docs/gymnasium.md).

Sampling follows Gymnasium's rule per entry: uniform when bounded on both sides, normal
when unbounded, shifted exponential when bounded on one side; integer boxes draw
uniformly among their integers.
"""

from __future__ import annotations

import math
import mmap
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from spacealg.core.leaf import widths
from spacealg.core.protocol import (
    cardinality,
    check_position,
    contains,
    element,
    elements,
    index,
    intersect,
    issubspace,
)
from spacealg.core.space import Space
from spacealg.core.styles import ContinuousSpaceStyle, FiniteSpaceStyle
from spacealg.spaces._batch import as_real_array, dtype_arg
from spacealg.spaces._counting import count_product, lazy_product, power
from spacealg.spaces._kind import leaf_model, register
from spacealg.spaces.finite import FiniteSet

__all__ = ["BoundLike", "Box", "DTypeArg"]

_Scalar = float | np.number[Any] | np.bool_
#: What a Box's ``low``/``high`` may be, for type checkers: a number, an array, or nested
#: sequences of numbers (a string is not a bound).
BoundLike = (
    _Scalar | np.ndarray | Sequence[_Scalar] | Sequence[Sequence[_Scalar]] | Sequence[Sequence[Sequence[_Scalar]]]
)
#: A numeric dtype: a numpy dtype, a scalar type (``np.uint8``, ``float``) or its name.
DTypeArg = np.dtype[Any] | type[Any] | str


def _dtype_limits(dtype: np.dtype) -> tuple[float, float]:
    if dtype.kind == "b":
        return 0, 1
    if dtype.kind == "f":
        return -math.inf, math.inf  # floats keep infinite bounds
    iinfo = np.iinfo(dtype)
    return int(iinfo.min), int(iinfo.max)


def _shape_arg(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if not isinstance(shape, Sequence):
        raise TypeError(f"Box: shape must be a tuple of ints, got {shape!r}")
    dims = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"Box: shape must be a tuple of ints, got {shape!r}")
        if d < 0:
            raise ValueError(f"Box: shape must have non-negative dimensions, got {shape!r}")
        dims.append(int(d))
    return tuple(dims)


def _bound_arg(name: str, value: Any) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"Box: {name} must be a real number or array, got {value!r}")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        raise TypeError(f"Box: {name} must be a real number or array, got {value!r}") from None
    if array.dtype.kind not in "biuf":
        raise TypeError(f"Box: {name} must be a real number or array, got dtype {array.dtype}")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError(f"Box: {name} must not contain NaN")
    return array


def _check_float_range(name: str, values: np.ndarray, dtype: np.dtype) -> None:
    """Finite float bounds must be values of ``dtype`` (Gymnasium's rule): beyond its range
    they would become infinite (yet be marked bounded) or silently round (65505 in float16)."""
    finite = values[np.isfinite(values)] if values.dtype.kind == "f" else values.reshape(-1)
    if not finite.size:
        return
    info = np.finfo(dtype)
    low_value, high_value = finite.min(), finite.max()
    if _exact(low_value) < _exact(info.min) or _exact(high_value) > _exact(info.max):
        raise ValueError(
            f"Box: {name} lies outside the range of {dtype} "
            f"([{info.min}, {info.max}]); use -inf/inf for an unbounded side"
        )


def _exact(value: Any) -> int | float:
    """A numpy or Python real as the exact Python number it stores."""
    return value.item() if isinstance(value, np.generic) else value  # type: ignore[no-any-return]


def _integer_bounds(
    name: str, values: np.ndarray, bounded: np.ndarray, limit: int | float, dtype: np.dtype
) -> np.ndarray:
    """Integer bounds: infinite entries become the dtype's limit; finite ones must fit."""
    finite = values[bounded]
    low_limit, high_limit = _dtype_limits(dtype)
    if finite.size and (finite.astype(object).min() < low_limit or finite.astype(object).max() > high_limit):
        raise ValueError(f"Box: {name} lies outside the range of {dtype}")
    if finite.size and finite.dtype.kind == "f" and (np.floor(finite) != finite).any():
        raise ValueError(f"Box: {name} must hold integers for the integer dtype {dtype}")
    cast = np.full(values.shape, limit, dtype=dtype)
    cast[bounded] = finite.astype(dtype)
    return cast


def _check_allocatable(shape: tuple[int, ...], dtype: np.dtype) -> None:
    """A Box whose single element could not be allocated is refused (ValueError naming shape).
    The probe is an anonymous mapping of the element's bytes, pages untouched and unmapped at
    once (no Python allocation: a Box costs the memory of its bounds, not of an element)."""
    n = math.prod(shape)
    nbytes = n * dtype.itemsize
    try:
        if nbytes > np.iinfo(np.intp).max:
            raise ValueError
        if nbytes:
            mmap.mmap(-1, nbytes).close()
    except (MemoryError, ValueError, OverflowError, OSError):
        raise ValueError(
            f"Box: shape {shape} has {n} entries; one element ({n * dtype.itemsize} bytes of "
            f"{dtype}) cannot be allocated"
        ) from None


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class Box(Space):
    """The box ``low <= x <= high`` of arrays of ``shape`` and ``dtype``.

    Every array it exposes (``low``, ``high``, ``bounded_below``, ``bounded_above``) is
    read-only; scalar bounds stay scalar (the arrays are broadcast views), so a Box of any
    allocatable shape costs no memory until it is sampled.
    """

    low: np.ndarray
    high: np.ndarray
    shape: tuple[int, ...]
    dtype: np.dtype
    bounded_below: np.ndarray
    bounded_above: np.ndarray
    integral: bool
    is_point: bool
    _all_bounded: bool
    _low_scalar: Any  # the common low (a numpy scalar of dtype) when every entry has it, else None
    _high_scalar: Any

    def __init__(
        self,
        low: BoundLike,
        high: BoundLike,
        shape: Sequence[int] | int | None = None,
        dtype: DTypeArg = np.float32,
    ) -> None:
        dtype = dtype_arg("Box", dtype)
        low_in, high_in = _bound_arg("low", low), _bound_arg("high", high)
        if shape is not None:
            shape = _shape_arg(shape)
        elif low_in.ndim or high_in.ndim:
            if low_in.ndim and high_in.ndim and low_in.shape != high_in.shape:
                raise ValueError(
                    f"Box: low.shape {low_in.shape} and high.shape {high_in.shape} differ"
                )
            shape = low_in.shape if low_in.ndim else high_in.shape
        else:
            shape = (1,)
        for name, array in (("low", low_in), ("high", high_in)):
            if array.ndim and array.shape != shape:
                raise ValueError(f"Box: {name}.shape {array.shape} does not match shape {shape}")
        _check_allocatable(shape, dtype)
        # validate and cast the bounds as given (a scalar stays a scalar: no allocation)
        bounded_below = np.asarray(low_in > -np.inf)
        bounded_above = np.asarray(high_in < np.inf)
        dtype_min, dtype_max = _dtype_limits(dtype)
        if dtype.kind == "f":
            _check_float_range("low", low_in, dtype)
            _check_float_range("high", high_in, dtype)
            low_cast = np.array(low_in, dtype=dtype)
            high_cast = np.array(high_in, dtype=dtype)
        else:
            if dtype.kind in "ub" and not bounded_below.all():
                raise ValueError(f"Box: low may not be -inf for the unsigned dtype {dtype}")
            if dtype.kind in "ub" and not bounded_above.all():
                raise ValueError(f"Box: high may not be inf for the unsigned dtype {dtype}")
            if not (low_in < np.inf).all() or not (high_in > -np.inf).all():
                raise ValueError("Box: low may not be +inf and high may not be -inf for an integer dtype")
            low_cast = _integer_bounds("low", low_in, bounded_below, dtype_min, dtype)
            high_cast = _integer_bounds("high", high_in, bounded_above, dtype_max, dtype)
        if math.prod(shape) and (low_cast > high_cast).any():
            raise ValueError(f"Box: low must not exceed high (low={low_cast}, high={high_cast})")
        if not math.prod(shape):  # every zero-size box is the same set, with one key
            low_cast = high_cast = np.zeros((), dtype=dtype)
            bounded_below = bounded_above = np.ones((), dtype=bool)
        common = [_common(a) for a in (low_cast, high_cast, bounded_below, bounded_above)]
        if all(c is not None for c in common):  # uniform bounds stay scalar
            low_cast, high_cast, bounded_below, bounded_above = (np.asarray(c) for c in common)
        uniform = low_cast.ndim == 0 and high_cast.ndim == 0 and common[0] is not None and common[1] is not None
        low_scalar, high_scalar = (common[0], common[1]) if uniform else (None, None)
        low_v, high_v, below_v, above_v = (
            _read_only(np.broadcast_to(a, shape)) if a.ndim == 0 else _read_only(np.array(a, copy=True))
            for a in (low_cast, high_cast, bounded_below, bounded_above)
        )
        integral = dtype.kind in "biu"
        self._set(
            low=low_v,
            high=high_v,
            shape=shape,
            dtype=dtype,
            bounded_below=below_v,
            bounded_above=above_v,
            integral=integral,
            is_point=bool((low_cast == high_cast).all()),
            _all_bounded=bool(bounded_below.all() and bounded_above.all()),
            _low_scalar=low_scalar,
            _high_scalar=high_scalar,
        )

    def _key(self) -> tuple[Any, ...]:
        # + 0 turns -0.0 into 0.0: the same set, so the same key; uniform boxes by their scalars
        if self._low_scalar is not None:
            return (self.shape, self.dtype.str, (self._low_scalar + 0).tobytes(), (self._high_scalar + 0).tobytes())
        return (self.shape, self.dtype.str, (self.low + 0).tobytes(), (self.high + 0).tobytes())

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        low: Any = self.low
        high: Any = self.high
        if self.low.size == 0:
            return (0, 0), {"shape": self.shape, "dtype": self.dtype}
        if self._low_scalar is not None:
            low = self._low_scalar if self.bounded_below.flat[0] else -np.inf
            high = self._high_scalar if self.bounded_above.flat[0] else np.inf
            return (low, high), {"shape": self.shape, "dtype": self.dtype}
        if self.integral and not self._all_bounded:
            low = np.where(self.bounded_below, self.low, -np.inf)
            high = np.where(self.bounded_above, self.high, np.inf)
        if ((low.flat[0] == low).all() and (high.flat[0] == high).all()):
            low, high = low.flat[0], high.flat[0]
            return (low, high), {"shape": self.shape, "dtype": self.dtype}
        return (np.asarray(low), np.asarray(high)), {"dtype": self.dtype}

    @property
    def is_finite(self) -> bool:
        """Whether the box has finitely many members (integer dtype, or a single point)."""
        return self.integral or self.is_point


def _common(values: np.ndarray) -> Any:
    """The value every entry of ``values`` has (a numpy scalar), or None."""
    if values.ndim == 0:
        return values[()]
    first = values.reshape(-1)[0]
    same = values == first
    if values.dtype.kind == "f":  # -0.0 and 0.0 are equal values but not the same bound bits
        same &= np.signbit(values) == np.signbit(first)
    return first if same.all() else None


@contains.register(Box)
def _contains(x: Any, space: Box) -> bool:
    # by the leaf model: 4.7-6.7 us a Box(16) float32 row, as the old copy on the Box's fields (4.2-6.8), isin rule 24.3
    a = x if isinstance(x, np.ndarray) and x.dtype.kind in "biuf" else as_real_array(x)
    if a is None or a.shape != space.shape:
        return False
    return bool(leaf_model(space).inside(a).all())


register(Box, eltype=lambda space: np.ndarray, elsize=lambda space: space.shape,
         bounds=lambda space: (space.low, space.high),
         SpaceStyle=lambda space: (FiniteSpaceStyle if space.is_finite else ContinuousSpaceStyle)(space.shape))


@cardinality.register(Box)
def _cardinality(space: Box) -> int | float:
    if not space.is_finite:
        return math.inf
    if space.is_point:
        return 1
    if space._low_scalar is not None:  # uniform bounds: one exact power, whatever the shape
        return power(widths(space._low_scalar, space._high_scalar), math.prod(space.shape))
    return count_product(widths(space.low, space.high).reshape(-1).tolist())


def _require_finite(space: Box, what: str) -> None:
    if not space.is_finite:
        raise TypeError(f"{what}: {space!r} is not finite")


@elements.register(Box)
def _elements(space: Box) -> Iterator[np.ndarray]:
    _require_finite(space, "elements")
    if space.is_point:
        return iter((space.low.copy(),))
    low, high = space.low.reshape(-1), space.high.reshape(-1)

    def axis(i: int) -> range:
        return range(int(low[i]), int(high[i]) + 1)

    return (np.array(t, dtype=space.dtype).reshape(space.shape) for t in lazy_product(axis, low.size))


@index.register(Box)
def _index(x: Any, space: Box) -> int:
    _require_finite(space, "index")
    if not contains(x, space):
        raise ValueError(f"index: x is not a member of {space!r}")
    if space.is_point:
        return 0
    position = 0
    for value, lo, hi in zip(np.asarray(x).flat, space.low.flat, space.high.flat):
        position = position * (int(hi) - int(lo) + 1) + int(value) - int(lo)
    return position


@element.register(Box)
def _element(i: Any, space: Box) -> np.ndarray:
    _require_finite(space, "element")
    n = _cardinality(space)
    i = check_position(i, n)
    if space.is_point:
        return space.low.copy()
    digits = []
    for lo, hi in zip(space.low.ravel()[::-1], space.high.ravel()[::-1]):
        width = int(hi) - int(lo) + 1
        i, digit = divmod(i, width)
        digits.append(int(lo) + digit)
    return np.array(digits[::-1], dtype=space.dtype).reshape(space.shape)


@issubspace.register(Box, Box)
def _box_subset(a: Box, b: Box) -> bool:
    if a.shape != b.shape:
        return False
    if b.integral and not a.integral:
        if not a.is_point:
            return False
        return contains(a.low, b)
    return bool((a.low >= b.low).all() and (a.high <= b.high).all())


def _integer_side(bound: np.ndarray, integral: bool, rounding: Any) -> np.ndarray:
    """A box bound as an object array of exact ints (or infinities), rounded inwards."""
    return bound.astype(object) if integral else rounding(bound.astype(np.float64)).astype(object)


@intersect.register(Box, Box)
def _box_intersect(a: Box, b: Box) -> Any:
    if a.shape != b.shape:
        return FiniteSet()
    if a.integral or b.integral:
        dtype = np.result_type(*[s.dtype for s in (a, b) if s.integral])
    else:
        dtype = np.result_type(a.dtype, b.dtype)
    if np.dtype(dtype).kind == "f":
        low = np.maximum(a.low.astype(dtype), b.low.astype(dtype))
        high = np.minimum(a.high.astype(dtype), b.high.astype(dtype))
    else:  # exact integers: float bounds round inwards, integer bounds stay exact
        low = np.asarray(np.maximum(*(_integer_side(s.low, s.integral, np.ceil) for s in (a, b))))
        high = np.asarray(np.minimum(*(_integer_side(s.high, s.integral, np.floor) for s in (a, b))))
    if (low > high).any():
        return FiniteSet()
    if np.dtype(dtype).kind != "f":
        low, high = low.astype(dtype), high.astype(dtype)
    return Box(low, high, shape=a.shape, dtype=dtype)


# -- the leaf model (spacealg.core.leaf) ------------------------------------------------------

from spacealg.core import leaf as _leaf_model  # noqa: E402


@_leaf_model.leaf.register(Box)
def _box_leaf(space: Box) -> _leaf_model.LeafModel:
    return _leaf_model.LeafModel("Box", space.dtype, space.shape, space.low, space.high, integral=space.integral,
                                 bounded=(space.bounded_below, space.bounded_above), space=space)
