"""Difference: the members of one space that are not in another (``difference(a, b)``, ``a - b``).

>>> from spacealg import Interval, Box, difference, sample
>>> difference(Interval(0, 2), Interval(1, 3))          # a closed form where there is one
Interval(0, 1, closed='left')
>>> difference((0, 1, 2, 3, 4), range(1, 4, 2))
FiniteSet(0, 2, 4)
>>> ring = Box(-1, 1, (2,)) - Box(-0.5, 0.5, (2,))       # else the kind itself
>>> x = sample(ring, rng=0); x in ring, bool(abs(x).max() > 0.5)
(True, True)

``Difference(a, b)`` keeps ``a`` and ``b`` as written; ``difference(a, b)`` and ``a - b`` give a
closed form where one is known: a union's parts each less ``b``; ``a`` less each part of a
union ``b`` in turn; a finite set's items not in ``b``; an interval less an interval or a set
of numbers is a union of intervals; ``a`` itself where ``b``'s members have another shape or
``a & b`` is empty; the empty ``FiniteSet()`` where ``a <= b``. Laws:

* ``contains(x, a - b) == (contains(x, a) and not contains(x, b))``; ``isin`` likewise;
* ``sample`` draws members of ``a`` and keeps those not in ``b`` (every member of a finite or
  bounded difference as likely as under ``sample(a)``); a bounded rejection: ValueError for an
  empty difference, and where no draw of a row is kept in 257 tries, ValueError saying the
  difference is empty or too thin to draw from;
* ``eltype``, ``elsize``, ``bounds`` are ``a``'s (``bounds`` enclose the difference, not
  tightly); ``cardinality`` and ``SpaceStyle`` are those of the closed form where there is one,
  else a finite ``a``'s members not in ``b`` counted (up to a million), or ``inf`` and ``a``'s
  style for an infinite ``a`` (a remainder of measure zero, a closed box less its interior,
  is counted so: sampling it raises the error above); ``elements`` are ``a``'s not in ``b``, in
  ``a``'s order, and ``index``/``element`` follow them;
* ``clamp(x, a - b)``: the closed form's where there is one; else members unchanged, and
  ``clamp(x, a)`` where that is not in ``b``; where it is, the nearest member is not decided
  here: TypeError naming the space;
* ``issubspace(a - b, c)`` where ``a <= c`` or member by member for a finite ``a``;
  ``issubspace(c, a - b)`` iff ``c <= a`` and ``c & b`` is empty;
  ``intersect(a - b, c) == difference(a & c, b)``.

Batches are ``a``'s: ``isin``, ``sample``, ``clamp``, ``clamp_`` are one rule each over a
kernel (:mod:`spacealg.core.kernel`) for NumPy, torch and JAX where ``a``'s batches stack (JAX:
not under ``jit``), and object arrays of members on NumPy otherwise.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction
from functools import reduce
from typing import Any

import numpy as np

from spacealg.core import hooks
from spacealg.core.catalog import register_space_class
from spacealg.core.generic import as_space
from spacealg.core.kernel import NUMPY, Kernel, numpy_kernel
from spacealg.core.protocol import (
    SpaceStyle,
    bounds,
    cardinality,
    check_position,
    clamp,
    contains,
    elements,
    elsize,
    eltype,
    intersect,
    isin,
    issubspace,
    sample,
)
from spacealg.core.rng import RngLike, as_generator
from spacealg.core.styles import Style
from spacealg.spaces._batch import isin_objects
from spacealg.spaces._kind import clamp_into, decided, empty, once, register, register_batched
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.interval import Interval, real_value
from spacealg.spaces.masked import Masked
from spacealg.spaces.product import SpaceTuple
from spacealg.spaces.sequence import object_batch
from spacealg.spaces.union import (
    ENUMERATED,
    TIED,
    Union,
    draw_rows,
    objects,
    rows_where,
    same_value,
    settle_ties,
    stacked,
    union,
)

__all__ = ["Difference", "difference"]


class Difference(SpaceTuple):
    """The members of ``a`` not in ``b``, as written (see :func:`difference` for closed forms)."""

    def __init__(self, a: Any, b: Any) -> None:
        super().__init__(a, b)

    @property
    def a(self) -> Any:
        """The space whose members are kept."""
        return self._spaces[0]

    @property
    def b(self) -> Any:
        """The space whose members are taken away."""
        return self._spaces[1]


# -- closed forms ----------------------------------------------------------------------------------


def difference(a: Any, b: Any) -> Any:
    """``a`` less ``b``, in a closed form where one is known (see the module docstring)."""
    a, b = as_space(a), as_space(b)
    if isinstance(a, Union):
        return union(*(difference(p, b) for p in a._spaces))
    if isinstance(b, Union):
        return reduce(difference, b._spaces, a)
    if isinstance(a, FiniteSet):
        return FiniteSet(*(i for i in a.items if not contains(i, b)))
    if isinstance(a, Interval) and isinstance(b, Interval):
        return _interval_less(a, b)
    if isinstance(a, Interval) and isinstance(b, FiniteSet):
        values = [real_value(i) for i in b.items]
        points = sorted({v + 0 for v in values if isinstance(v, (int, float)) and v == v})  # bools as ints
        if not any(isinstance(v, Fraction) for v in values):  # (a longdouble's Fraction is no end)
            return reduce(lambda d, v: difference(d, Interval(v, v)), points, a)
    if decided(lambda x, y: tuple(elsize(x)) != tuple(elsize(y)), a, b):
        return a  # members of another shape: none of b's is a's
    if decided(issubspace, a, b):
        return FiniteSet()
    if decided(lambda x, y: cardinality(intersect(x, y)) == 0, a, b):
        return a
    return Difference(a, b)


def _interval_less(a: Interval, b: Interval) -> Any:
    """What of ``a`` lies below ``b`` and above it: at most two intervals."""
    pieces = []
    if b.low > -math.inf:
        pieces.append(intersect(a, Interval(-math.inf, b.low, "neither" if b.closed_left else "right")))
    if b.high < math.inf:
        pieces.append(intersect(a, Interval(b.high, math.inf, "neither" if b.closed_right else "left")))
    return union(*pieces)


hooks.difference.define(difference)  # ``a - b`` on spacealg's spaces


# -- membership, and what is a's ---------------------------------------------------------------------


def _contains(x: Any, space: Difference) -> bool:
    return contains(x, space.a) and not contains(x, space.b)


def _closed_form(space: Difference) -> Any:
    """:func:`difference` of the parts (kept on the space): itself where it has no closed form."""
    return once(space, "_closed", lambda: difference(space.a, space.b))


def _style(space: Difference) -> Style:
    closed = _closed_form(space)
    return SpaceStyle(space.a if isinstance(closed, Difference) else closed)  # type: ignore[no-any-return]


def _cardinality(space: Difference) -> int | float:
    closed = _closed_form(space)
    if not isinstance(closed, Difference):
        return cardinality(closed)  # type: ignore[no-any-return]
    n = cardinality(space.a)
    if n == math.inf:
        return math.inf
    if n > ENUMERATED:
        raise TypeError(f"cardinality: not decided for {space!r} (a has more than {ENUMERATED} members)")
    return once(space, "_count", lambda: sum(1 for _ in _members(space)))  # type: ignore[no-any-return]


def _members(space: Difference) -> Iterator[Any]:
    """The members in order: the closed form's where there is one, else ``a``'s not in ``b``."""
    closed = _closed_form(space)
    if not isinstance(closed, Difference):
        return elements(closed)  # type: ignore[no-any-return]
    return (x for x in elements(space.a) if not contains(x, space.b))


def _elements(space: Difference) -> Iterator[Any]:
    _cardinality(space)  # a TypeError for an infinite or too large a, before iterating
    return _members(space)


def _index(x: Any, space: Difference) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    _cardinality(space)
    return next(i for i, y in enumerate(_members(space)) if same_value(x, y))


def _element(i: Any, space: Difference) -> Any:
    i = check_position(i, _cardinality(space))
    return next(itertools.islice(_members(space), i, None))


# -- the batched rules, written once over a kernel ---------------------------------------


def _isin_rule(k: Kernel, batch: Any, space: Difference) -> Any:
    inside = isin(batch, space.a)
    return inside & ~_in_b(k, batch, space, inside)


def _in_b(k: Kernel, batch: Any, space: Difference, lead: Any) -> Any:
    """Per row of ``batch`` (a batch of ``a``, rows shaped as ``lead``), whether it is in ``b``:
    none where ``b``'s members have another shape, by ``isin`` where they have ``a``'s, else row
    by row (``contains``: members of no one shape)."""
    shapes = _shapes(space)
    if shapes is None:
        return _row_by_row(k, batch, space, lead)
    if shapes[0] == shapes[1]:
        try:
            return isin(batch, space.b)
        except ValueError:  # members of another kind (products): none of them a's
            pass
        except TypeError:  # members the backend holds no array of (labels): asked row by row
            if k.traced:
                raise
            return _row_by_row(k, batch, space, lead)
    return lead & ~lead


def _row_by_row(k: Kernel, batch: Any, space: Difference, lead: Any) -> Any:
    """``contains(row, b)`` for each row, read on the host (contains reads NumPy's values, and
    takes no 0-d tensor for a number)."""
    rows = k.to_host(batch) if hasattr(batch, "shape") else batch
    found = [contains(rows[i], space.b) for i in np.ndindex(tuple(lead.shape))]
    return k.constant(np.array(found, dtype=bool).reshape(tuple(lead.shape)))


def _shapes(space: Difference) -> tuple[Any, Any] | None:
    """The shapes of ``a``'s and ``b``'s members; None where one has no one shape."""
    try:
        return tuple(elsize(space.a)), tuple(elsize(space.b))
    except TypeError:
        return None


def _sample_rule(k: Kernel, space: Difference, size: Any = None, *, rng: Any = None, **extra: Any) -> Any:
    def draw(k: Kernel, shape: tuple[int, ...]) -> tuple[Any, Any]:
        if empty(space):
            raise ValueError(f"sample: {space!r} is empty")
        drawn = sample(space.a, shape, rng=k.spawn())
        return drawn, _isin_rule(k, drawn, space)

    return draw_rows(k, size, extra, draw, space)


def _clamp_rule(k: Kernel, x: Any, space: Difference) -> Any:
    closed = _closed_form(space)
    if not isinstance(closed, Difference):
        return clamp(x, closed)
    inside = _isin_rule(k, x, space)
    nearest = rows_where(k, inside, x, clamp(x, space.a))
    if bool(k.xp.any(_in_b(k, nearest, space, inside))):
        raise TypeError(f"clamp: not decided for {space!r}: the nearest member of a lies in b")
    return nearest


# -- NumPy's entries: the same rules, object batches where a's do not stack ---------------------------


def _stacks(space: Difference) -> bool:
    return stacked(space, (space.a,))


def _isin(batch: Any, space: Difference) -> Any:
    if objects(batch, space, (space.a,)):  # sample's batches of members where a's do not stack
        return isin_objects(batch, space)
    return np.asarray(_isin_rule(NUMPY, batch, space))  # a's batches, whatever they are


def _sample(space: Difference, size: Any = None, *, rng: RngLike = None) -> Any:
    generator = as_generator(rng)
    if size is not None and _stacks(space):
        return _sample_rule(numpy_kernel(generator), space, size)
    if empty(space):  # once per call, not per member drawn
        raise ValueError(f"sample: {space!r} is empty")
    return object_batch(lambda g: _sample_rule_one(space, g), size, generator)  # one: a's own type


def _sample_rule_one(space: Difference, generator: np.random.Generator) -> Any:
    """One member, by rejection from ``a`` (the caller has found the difference not empty)."""
    for _ in range(257):
        x = sample(space.a, rng=generator)
        if not contains(x, space.b):
            return x
    raise ValueError(f"sample: {space!r} is empty or too thin to draw from (no member in 257 draws)")


def _clamp(x: Any, space: Difference) -> Any:
    if contains(x, space):
        return x
    closed = _closed_form(space)
    if not isinstance(closed, Difference):
        return clamp(x, closed)
    if np.ndim(x) > len(elsize(space.a)) and _stacks(space):  # a batch
        return _clamp_rule(NUMPY, np.asarray(x), space)
    nearest = clamp(x, space.a)
    if contains(nearest, space.b):
        raise TypeError(f"clamp: not decided for {space!r}: the nearest member of a lies in b")
    return nearest


register(Difference, contains=_contains, eltype=lambda space: eltype(space.a), elsize=lambda space: elsize(space.a),
         bounds=lambda space: bounds(space.a), SpaceStyle=_style, cardinality=_cardinality, elements=_elements,
         index=_index, element=_element)

register_batched(Difference, {"isin": _isin, "sample": _sample, "clamp": _clamp}, isin=_isin_rule, sample=_sample_rule,
                 clamp=_clamp_rule, clamp_=clamp_into)


# -- inclusion and intersection --------------------------------------------------------------------


def _difference_in(a: Difference, c: Any) -> bool:
    if decided(issubspace, a.a, c):
        return True
    n = cardinality(a.a)
    if n == math.inf or n > ENUMERATED:
        raise TypeError(f"issubspace: not decided for {a!r} and {c!r}")
    return all(contains(x, c) for x in _members(a))


def _in_difference(c: Any, d: Difference) -> bool:
    return bool(issubspace(c, d.a)) and cardinality(intersect(c, d.b)) == 0


for _other in (object, Difference, Union, Masked):
    issubspace.register(Difference, _other)(_difference_in)
for _left in (object, *TIED):
    issubspace.register(_left, Difference)(_in_difference)
issubspace.register(Union, Difference)(lambda a, d: all(issubspace(p, d) for p in a._spaces))
for _other in (object, Difference, Union):
    intersect.register(Difference, _other)(lambda d, c: difference(intersect(d.a, c), d.b))
for _other in (object, Union, FiniteSet):
    intersect.register(_other, Difference)(lambda c, d: difference(intersect(c, d.a), d.b))
settle_ties(Difference)


# -- the catalogue: JSON ------------------------------------------------------------------------------

register_space_class(Difference, "difference")  # drawn by spaces(composites=("difference",))
