"""Finite sets: ``FiniteSet`` of labels or numbers, and Python's own finite objects.

>>> from spacealg import FiniteSet, sample, index, element, cardinality
>>> s = FiniteSet("up", "left", "down", "right")
>>> sample(s, rng=0) in s, cardinality(s), index("down", s), element(3, s)
(True, 4, 2, 'right')

As in Julia, plain Python objects are finite spaces: a ``tuple``, ``list``, ``set`` or
``frozenset`` is the set of its items (a tuple is a set, never a product), ``range`` is
the set of its integers, the type ``bool`` is ``{False, True}`` and a numpy integer type
is the range of its dtype. ``range`` is used as is (every protocol function is
registered for it, in O(1) for membership, index and clamp; its batches go through the
backends' per-leaf rules, :mod:`spacealg.backends.host`); the others become a
``FiniteSet`` through :func:`as_space`.

Items are ordered as given (sets: sorted where their items sort) and deduplicated;
``index``/``element`` follow that order. Numeric sets have ``bounds`` and clamp to the
nearest item (ties to the lower); labels have neither. Batches are arrays of items
(unicode for strings, numeric for numbers, object otherwise).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Hashable
from typing import Any

import numpy as np

from spacealg.core.generic import as_space
from spacealg.core.protocol import (
    bounds,
    check_position,
    contains,
    element,
    eltype,
    index,
    intersect,
    issubspace,
)
from spacealg.core.rng import RngLike, as_generator
from spacealg.core.space import Space
from spacealg.core.styles import FiniteSpaceStyle
from spacealg.spaces._batch import has_nan, isin_objects, normalize_size
from spacealg.spaces._kind import register
from spacealg.spaces.interval import REALS, Interval, real_value

__all__ = ["BOOL", "FiniteSet", "ascending", "int64_ends", "int64_run", "range_length", "require_nonempty"]


def _is_real(item: Any) -> bool:
    return isinstance(item, numbers.Real) and not (isinstance(item, float) and math.isnan(item))


def _scalar(x: Any) -> Any:
    """0-d arrays and numpy scalars as Python scalars (for hashing lookups)."""
    if isinstance(x, np.ndarray):
        return x.item() if x.shape == () else x
    if isinstance(x, np.generic):
        return x.item()
    return x


class FiniteSet(Space):
    """The finite set of ``items`` (hashable; ordered as given, duplicates dropped)."""

    _fields = ("items",)
    items: tuple[Hashable, ...]
    _positions: dict[Any, int]
    _numeric: bool
    _sorted: Any  # a sorted float64 array for numeric sets, else None
    _array: np.ndarray
    _drawn: np.ndarray  # what sample draws from: _array where it holds every item exactly, else the items

    def __init__(self, *items: Hashable) -> None:
        unique: dict[Any, Any] = {}
        for position, item in enumerate(items):
            if has_nan(item):
                raise ValueError(
                    f"FiniteSet: item {position} is (or holds) NaN, which equals nothing, "
                    "itself included, so it could never be a member"
                )
            try:
                unique.setdefault(_scalar(item), item)
            except TypeError:
                raise TypeError(
                    f"FiniteSet: items must be hashable; item {position} is a "
                    f"{type(item).__qualname__}"
                ) from None
        kept = tuple(unique.values())
        numeric = bool(kept) and all(_is_real(i) for i in kept)
        self._set(
            items=kept,
            _positions={key: i for i, key in enumerate(unique)},
            _numeric=numeric,
            _sorted=np.sort(np.asarray(kept, dtype=np.float64)) if numeric else None,
            _array=(array := _item_array(kept)),
            _drawn=array if not numeric or _holds(array, kept) else _objects(kept),
        )

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.items, {}

    def _key(self) -> tuple[Any, ...]:
        return (frozenset(self._positions),)

    def __eq__(self, other: object) -> bool:
        # a set: equal whatever the order of items
        if isinstance(other, FiniteSet):
            return self._positions.keys() == other._positions.keys()
        return NotImplemented

    __hash__ = Space.__hash__


def _item_array(items: tuple[Any, ...]) -> np.ndarray:
    """The items as an array: strings, or numbers in NumPy's dtype for them, unless uint64
    holds every one exactly where that dtype does not (``2**63 - 5`` and ``2**63 + 9`` are
    no float64 numbers); else an object array of the items themselves. (Items that no
    dtype holds, ``0.5`` and ``2**53 + 1``, keep NumPy's float64: the leaf model reads
    their exact values from ``items``.)"""
    types = {type(i) for i in items}
    if types and types <= {str}:
        return np.asarray(items)
    if types and all(_is_real(i) for i in items):
        array = np.asarray(items)
        values = [real_value(i) for i in items]
        if not _holds(array, items) and all(isinstance(v, int) and 0 <= v < 2**64 for v in values):
            return np.asarray(items, dtype=np.uint64)
        return array
    return _objects(items)


def _objects(items: tuple[Any, ...]) -> np.ndarray:
    """The items themselves in an object array (exact: ``0.5`` and ``2**53 + 1`` together)."""
    array = np.empty(len(items), dtype=object)
    array[:] = items if items else []
    return array


def _holds(array: np.ndarray, items: tuple[Any, ...]) -> bool:
    """Whether ``array`` holds every item's exact value."""
    return array.dtype.kind in "biuf" and all(real_value(v) == real_value(i) for v, i in zip(array, items))


BOOL = FiniteSet(False, True)
"""The set {False, True}: the space of the type ``bool``."""


def _lookup(x: Any, space: FiniteSet) -> int | None:
    try:
        return space._positions.get(_scalar(x))
    except TypeError:  # unhashable
        return None


@contains.register(FiniteSet)
def _contains(x: Any, space: FiniteSet) -> bool:
    # a hash lookup: members by value, so 1, 1.0 and True are alike (as in Python sets)
    return _lookup(x, space) is not None


def require_nonempty(space: Any, n: int) -> None:
    if n == 0:
        raise ValueError(f"sample: {space!r} is empty")


def sample_items(space: FiniteSet, size: Any = None, *, rng: RngLike = None) -> Any:
    """``sample`` by position among the items: one item itself (``size=None``), or a batch
    of a set whose items no numeric dtype holds (labels; ``0.5`` and ``2**53 + 1``), which
    only NumPy's object arrays hold. Batches of numbers go through the backends' rule."""
    require_nonempty(space, len(space.items))
    generator = as_generator(rng)
    if size is None:
        return space.items[int(generator.integers(len(space.items)))]
    return space._drawn[generator.integers(len(space.items), size=normalize_size(size))]


def isin_items(batch: Any, space: FiniteSet) -> np.ndarray:
    """``isin`` of a batch that is no array of numbers, or of a set of labels: strings
    against string items, Python objects entry by entry (``contains``); no member else.
    Arrays of numbers meet a set of numbers through the backends' rule."""
    try:
        array = np.asarray(batch) if not isinstance(batch, np.ndarray) else batch
    except Exception:
        raise ValueError(f"isin: {type(batch).__qualname__} is not a batch of {space!r}") from None
    if space._array.dtype.kind == "U" and array.dtype.kind == "U":
        return np.isin(array, space._array)
    if array.dtype.kind != "O" and space._array.dtype.kind != "O":
        return np.zeros(array.shape, dtype=bool)
    return isin_objects(array, space)


@eltype.register(FiniteSet)
def _eltype(space: FiniteSet) -> Any:
    types = {type(i) for i in space.items}
    return types.pop() if len(types) == 1 else object


def require_numeric(space: FiniteSet, what: str) -> None:
    """TypeError naming ``what`` unless ``space`` is a set of numbers."""
    if not space._numeric:
        raise TypeError(f"{what}: {space!r} is not a set of numbers")


@bounds.register(FiniteSet)
def _bounds(space: FiniteSet) -> tuple[Any, Any]:
    require_numeric(space, "bounds")
    return min(space.items), max(space.items)  # type: ignore[type-var]


register(FiniteSet, elsize=lambda space: (), SpaceStyle=lambda space: FiniteSpaceStyle(()),
         cardinality=lambda space: len(space.items), elements=lambda space: iter(space.items))


@index.register(FiniteSet)
def _index(x: Any, space: FiniteSet) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    return space._positions[_scalar(x)]  # type: ignore[no-any-return]


@element.register(FiniteSet)
def _element(i: Any, space: FiniteSet) -> Any:
    return space.items[check_position(i, len(space.items))]


# -- range: Python's own finite set of integers, O(1) everywhere ---------------------


def range_length(r: range) -> int:
    """len(r) without OverflowError for ranges wider than sys.maxsize."""
    if r.step > 0:
        return max(0, (r.stop - r.start + r.step - 1) // r.step)
    return max(0, (r.start - r.stop - r.step - 1) // -r.step)


def ascending(r: range) -> tuple[int, int, int]:
    """(first, step, n) of r in ascending order."""
    n = range_length(r)
    if r.step > 0:
        return r.start, r.step, n
    return r.start + (n - 1) * r.step, -r.step, n


def _as_int(x: Any) -> int | None:
    """``x`` as the exact int it is (bools are 0 and 1, as in Python), or None."""
    value = real_value(x)
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    return value if isinstance(value, int) else None  # a Fraction is never whole


@contains.register(range)
def _range_contains(x: Any, space: range) -> bool:
    value = _as_int(x)
    return value is not None and value in space


def int64_run(space: Any) -> bool:
    """Whether ``space`` is a nonempty range of consecutive integers (step 1, or one item)
    that int64 holds: the ranges the foreign adapters write as int64 bounds."""
    if not isinstance(space, range):
        return False
    n = range_length(space)
    return bool(n) and (space.step == 1 or n == 1) and int64_ends(space)


@bounds.register(range)
def _range_bounds(space: range) -> tuple[int, int]:
    first, step, n = ascending(space)
    if n == 0:
        raise ValueError(f"bounds: {space!r} is empty")
    return first, first + step * (n - 1)


def int64_ends(space: range) -> bool:
    """Whether int64 holds every item of ``space`` (the backends' rule stores them as int64)."""
    first, step, n = ascending(space)
    return first >= -(2**63) and first + step * (n - 1) < 2**63


register(range, eltype=lambda space: int, elsize=lambda space: (), SpaceStyle=lambda space: FiniteSpaceStyle(()),
         cardinality=range_length, elements=iter)


@index.register(range)
def _range_index(x: Any, space: range) -> int:
    value = _as_int(x)
    if value is None or value not in space:
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    return (value - space.start) // space.step


@element.register(range)
def _range_element(i: Any, space: range) -> int:
    return space.start + space.step * check_position(i, range_length(space))


# -- inclusion and intersection --------------------------------------------------------

_ENUMERATION_LIMIT = 1_000_000


@issubspace.register(FiniteSet, object)
def _finite_subset(a: FiniteSet, b: Any) -> bool:
    return all(contains(item, b) for item in a.items)


@issubspace.register(range, object)
def _range_subset(a: range, b: Any) -> bool:
    if range_length(a) > _ENUMERATION_LIMIT:
        raise TypeError(f"issubspace: {a!r} is too large to check against {b!r} item by item")
    return all(contains(item, b) for item in a)


@issubspace.register(range, range)
def _range_range_subset(a: range, b: range) -> bool:
    first, step, n = ascending(a)
    if n == 0:
        return True
    if n == 1:
        return first in b
    return first in b and (first + step * (n - 1)) in b and step % abs(b.step) == 0


@issubspace.register(range, Interval)
def _range_interval_subset(a: range, b: Interval) -> bool:
    if range_length(a) == 0:
        return True
    low, high = _range_bounds(a)
    return contains(low, b) and contains(high, b)


@issubspace.register(Interval, FiniteSet)
@issubspace.register(Interval, range)
def _interval_finite_subset(a: Interval, b: FiniteSet | range) -> bool:
    return a.is_point and contains(a.low, b)


@intersect.register(FiniteSet, object)
@intersect.register(FiniteSet, FiniteSet)  # settles the tie with (object, FiniteSet)
def _finite_intersect(a: FiniteSet, b: Any) -> FiniteSet:
    return FiniteSet(*(item for item in a.items if contains(item, b)))


@intersect.register(object, FiniteSet)
def _object_finite_intersect(a: Any, b: FiniteSet) -> FiniteSet:
    return FiniteSet(*(item for item in b.items if contains(item, as_space(a))))


@intersect.register(range, range)
def _range_intersect(a: range, b: range) -> Any:
    if abs(a.step) == 1 and abs(b.step) == 1:
        (fa, _, na), (fb, _, nb) = ascending(a), ascending(b)
        low, high = max(fa, fb), min(fa + na, fb + nb)
        return range(low, max(low, high))
    return _range_intersect_by_items(a, b)


def _range_intersect_by_items(a: range, b: Any) -> FiniteSet:
    if range_length(a) > _ENUMERATION_LIMIT:
        raise TypeError(f"intersect: {a!r} is too large to intersect item by item")
    return FiniteSet(*(i for i in a if contains(i, b)))


@intersect.register(range, Interval)
def _range_interval_intersect(a: range, b: Interval) -> Any:
    if abs(a.step) == 1 and range_length(a) > 0:
        first, _, n = ascending(a)
        low = max(first, math.ceil(b.inner_low)) if math.isfinite(b.inner_low) else first
        high = min(first + n - 1, math.floor(b.inner_high)) if math.isfinite(b.inner_high) else first + n - 1
        return range(low, max(low, high + 1))
    return _range_intersect_by_items(a, b)


@intersect.register(Interval, range)
def _interval_range_intersect(a: Interval, b: range) -> Any:
    return _range_interval_intersect(b, a)


# -- plain Python objects as spaces ---------------------------------------------------


@as_space.register(tuple)
@as_space.register(list)
def _sequence_as_space(obj: Any) -> FiniteSet:
    return FiniteSet(*obj)


@as_space.register(set)
@as_space.register(frozenset)
def _set_as_space(obj: Any) -> FiniteSet:
    try:
        return FiniteSet(*sorted(obj))
    except TypeError:
        return FiniteSet(*sorted(obj, key=repr))


@as_space.register(range)
@as_space.register(Space)
def _identity(obj: Any) -> Any:
    return obj


def _type_as_space(obj: type) -> Any:
    # a dataclass declares the product of its fields: spacealg.declarative extends this rule
    if obj is bool or obj is np.bool_:
        return BOOL
    if obj is float or (isinstance(obj, type) and issubclass(obj, np.floating)):
        return REALS
    if isinstance(obj, type) and issubclass(obj, np.integer):
        info = np.iinfo(obj)
        return range(int(info.min), int(info.max) + 1)
    raise TypeError(
        f"the type {obj.__qualname__} is not a space: spacealg knows bool, float, numpy "
        "bool/integer/floating types and dataclasses whose fields are annotated with spaces"
    )


as_space.register(type)(_type_as_space)


# -- the leaf model (spacealg.core.leaf): Discrete over integers, or labels by position ---------

from spacealg.core import leaf as _leaf_model  # noqa: E402


@_leaf_model.leaf.register(range)
def _range_leaf(space: range) -> _leaf_model.LeafModel:
    if _leaf_model.consecutive(space):
        return _leaf_model.LeafModel("Discrete", np.dtype(np.int64), (), space.start, space[-1], scalar=True,
                                     space=space, ties_by_position=True)
    if not (space.start < space.stop if space.step > 0 else space.start > space.stop):  # empty
        return dataclasses.replace(_leaf_model.labels(()), space=space)
    ends = (space[0], space[-1]) if space.step > 0 else (space[-1], space[0])  # a stepped range: positions
    n = range_length(space)  # its items are the range itself: range(0, 2**40, 3) is never enumerated
    return _leaf_model.LeafModel("Discrete", np.dtype(np.int64), (), 0, n - 1, space, scalar=True,
                                 members=_leaf_model.Members.INTEGERS, step=abs(space.step), span=ends, space=space,
                                 ties_by_position=True)


@_leaf_model.leaf.register(FiniteSet)
def _finite_leaf(space: FiniteSet) -> _leaf_model.LeafModel:
    values = space._array
    numbers = values if space._numeric and values.dtype.kind in "biuf" else None
    members = _leaf_model.Members.LABELS if numbers is None else _leaf_model.Members.NUMBERS
    return dataclasses.replace(_leaf_model.labels(space.items), members=members, numbers=numbers,
                               value_dtype=None if numbers is None else numbers.dtype, space=space)
