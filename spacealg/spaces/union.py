"""Union: the untagged union of spaces (``union(*spaces)``, ``a | b``): members of any part.

>>> from spacealg import Interval, union, cardinality, clamp
>>> union(Interval(0, 1), Interval(1, 2))          # touching intervals merge
Interval(0, 2)
>>> s = union(range(3), (2, 5))                     # {0, 1, 2, 5}: 2 counted once
>>> s, 5 in s, 3 in s, cardinality(s)
(Union(range(0, 3), FiniteSet(5)), True, False, 4)
>>> clamp(4.2, Interval(0, 1) | Interval(4, 5))     # the nearest member of any part
4.2
>>> float(clamp(3.0, Interval(0, 1) | Interval(4, 5)))
4.0

``Union(*spaces)`` keeps its parts as written (TorchRL's ``Choice`` converts to it and back);
``union(*spaces)`` and ``a | b`` give the canonical form: nested unions flattened, finite sets
joined into one, intervals that overlap or touch merged (a point at an open end closes it),
parts inside another part dropped; one part left is that part, none the empty ``FiniteSet()``.
(``a + b`` stays the *tagged* union ``OneOf``, a different set.) Laws:

* ``contains(x, union(*s)) == any(contains(x, p) for p in s)``; ``isin(b, u)[i] == contains(b[i], u)``;
* ``sample`` draws a part, then a member of it, and keeps it only where no earlier part holds
  it (else draws again): on a finite union every member is equally likely (parts weighted by
  their cardinalities, exactly up to 2**63 members in all, by float64 weights beyond); on an
  infinite one each part that has members is equally likely before that rejection. At least
  one draw in ``len(parts)`` is kept, so the rejection ends;
* ``cardinality`` counts each member once: ``cardinality(u) <= sum(cardinality(p))``, equal for
  disjoint parts; ``elements`` runs through the parts in order, skipping members of earlier
  parts, and ``index``/``element`` follow it;
* ``SpaceStyle``: Finite when every part is, else Continuous of the parts' common shape (Unknown
  when a part's style is, or shapes differ); ``bounds`` the least box holding every part's;
* ``clamp(x, u)`` is the nearest of the parts' clamps (Euclidean distance, ties to the first
  part); members unchanged; parts with no nearest member (labels) are skipped;
* ``issubspace(u, b)`` iff every part is in ``b``; ``issubspace(a, u)`` where ``a`` is in one part,
  by member for a finite ``a``, and for an interval in a union of intervals and finite sets;
  ``intersect(u, b) == union(*(intersect(p, b) for p in parts))``;
* ``==``/``hash`` compare the set of parts (order-free, as set union is commutative).

Batches: parts of numbers with one element shape stack (arrays of ``(*batch, *shape)``), and
``isin``, ``sample``, ``clamp``, ``clamp_`` are one rule each over a kernel, for NumPy,
torch and JAX alike (:func:`spacealg.core.arrays.register_kind_rule`; JAX's draws are not
traceable under ``jit``: the rejection reads its flags). Other unions (labels, products)
have object arrays of members as batches, on NumPy only.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Iterator, Sequence
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
    element,
    elements,
    elsize,
    eltype,
    index,
    intersect,
    isin,
    issubspace,
    sample,
)
from spacealg.core.rng import RngLike, as_generator, no_extra
from spacealg.core.space import Space
from spacealg.core.styles import ContinuousSpaceStyle, FiniteSpaceStyle, Style, UnknownSpaceStyle
from spacealg.spaces._batch import isin_objects, normalize_size
from spacealg.spaces._kind import clamp_into, decided, empty, once, register, register_batched
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.interval import _CLOSED_BY_ENDS, Interval, real_value
from spacealg.spaces.masked import Masked
from spacealg.spaces.product import SpaceTuple
from spacealg.spaces.sequence import object_batch

__all__ = ["ENUMERATED", "TIED", "Union", "draw_rows", "objects", "rows_where", "same_value", "settle_ties", "stacked",
           "union"]

ENUMERATED = 1_000_000  # a part overlapping earlier ones is counted member by member up to this many
_ROUNDS = 256  # draws of every pending row before a rejection gives up (a union keeps >= 1 in k)


class Union(SpaceTuple):
    """The untagged union of ``spaces``, as written (see :func:`union` for the canonical form)."""

    def __init__(self, *spaces: Any) -> None:
        if not spaces:
            raise ValueError("Union: needs at least one space (the empty set is FiniteSet())")
        super().__init__(*spaces)

    def _key(self) -> tuple[Any, ...]:
        return (frozenset(self._spaces),)


# -- the canonical form -------------------------------------------------------------------------


def union(*spaces: Any) -> Any:
    """The union of ``spaces`` in canonical form (see the module docstring)."""
    parts: list[Any] = []
    for s in map(as_space, spaces):
        parts.extend(s._spaces if isinstance(s, Union) else [s])
    items = [i for p in parts if isinstance(p, FiniteSet) for i in p.items]
    intervals = [p for p in parts if isinstance(p, Interval)]
    others = [p for p in parts if not isinstance(p, (FiniteSet, Interval)) and not empty(p)]
    intervals, items = _merged(intervals, items)
    items = [i for i in items if not any(contains(i, p) for p in others)]
    kept = [*others, *intervals] + ([FiniteSet(*items)] if items else [])
    kept = [p for i, p in enumerate(kept) if not any(_inside(p, q) for j, q in enumerate(kept)
                                                   if j != i and (j < i or not _inside(q, p)))]
    if not kept:
        return FiniteSet()
    return kept[0] if len(kept) == 1 else Union(*kept)


def _inside(a: Any, b: Any) -> bool:
    """``a ⊆ b`` where decided (False where not)."""
    return decided(issubspace, a, b)


def _merged(intervals: list[Interval], items: list[Any]) -> tuple[list[Interval], list[Any]]:
    """Intervals that overlap or touch merged (sorted by their low ends), with the numbers
    among ``items`` that lie in one dropped and those at an open end closing it."""
    points = [v for v in map(real_value, items) if v is not None and v == v]
    closed = sorted(intervals, key=lambda i: (i.low, not i.closed_left))
    merged: list[Interval] = []
    for part in closed:
        part = _closed_at(part, points)
        last = merged[-1] if merged else None
        if last is not None and (part.low < last.high or (part.low == last.high and (
                last.closed_right or part.closed_left))):
            high, right = max((last.high, last.closed_right), (part.high, part.closed_right))
            if part.high == last.high:
                right = last.closed_right or part.closed_right
            merged[-1] = Interval(last.low, high, _CLOSED_BY_ENDS[last.closed_left, right])
        else:
            merged.append(part)
    items = [i for i in items if not any(contains(i, part) for part in merged)]
    return merged, items


def _closed_at(part: Interval, points: list[Any]) -> Interval:
    left = part.closed_left or part.low in points
    right = part.closed_right or part.high in points
    return part if (left, right) == (part.closed_left, part.closed_right) else Interval(
        part.low, part.high, _CLOSED_BY_ENDS[left, right])


hooks.union.define(union)  # ``a | b`` on spacealg's spaces


# -- membership, style, bounds ----------------------------------------------------------------


def _contains(x: Any, space: Union) -> bool:
    return any(contains(x, p) for p in space._spaces)


def stacked(space: Any, parts: Sequence[Any]) -> bool:
    """Whether batches of ``space`` (whose members are those of ``parts``) stack: every part's
    members are numbers, or numeric arrays, of one shape (every part has ``bounds``)."""
    return bool(once(space, "_stacked", lambda: _one_numeric_shape(parts)))


def objects(batch: Any, space: Any, parts: Sequence[Any]) -> bool:
    """Whether ``batch`` is in the form ``sample`` gives where batches of ``space`` do not stack
    (see :func:`stacked`): an object array of members."""
    return isinstance(batch, np.ndarray) and batch.dtype.kind == "O" and not stacked(space, parts)


def _one_numeric_shape(parts: Sequence[Any]) -> bool:
    try:
        shapes = {tuple(elsize(p)) for p in parts}
        for p in parts:  # a TypeError unless p holds numbers (has bounds; an empty one holds none)
            with contextlib.suppress(ValueError):
                bounds(p)
    except TypeError:  # labels, products, shapeless members
        return False
    return len(shapes) == 1 and all(isinstance(d, int) for d in next(iter(shapes)))


def _eltype(space: Union) -> Any:
    kinds = {eltype(p) for p in space._spaces}
    return kinds.pop() if len(kinds) == 1 else object


def _elsize(space: Union) -> Any:
    shapes = {tuple(elsize(p)) for p in space._spaces}
    if len(shapes) != 1:
        raise TypeError(f"elsize: the parts of {space!r} have different shapes")
    return shapes.pop()


def _style(space: Union) -> Style:
    styles = [SpaceStyle(p) for p in space._spaces]
    if any(isinstance(s, UnknownSpaceStyle) for s in styles):
        return UnknownSpaceStyle()
    try:
        shape = _elsize(space)
    except TypeError:
        return UnknownSpaceStyle()
    if all(isinstance(s, FiniteSpaceStyle) for s in styles):
        return FiniteSpaceStyle(shape)
    return ContinuousSpaceStyle(shape)


def _occupied(space: Union) -> tuple[Any, ...]:
    """The parts that have members (kept on the space); ValueError if none has."""
    parts = once(space, "_occupied", lambda: tuple(p for p in space._spaces if not empty(p)))
    if not parts:
        raise ValueError(f"{space!r} is empty")
    return parts  # type: ignore[no-any-return]


def _bounds(space: Union) -> tuple[Any, Any]:
    lows, highs = zip(*(bounds(p) for p in _occupied(space)))
    if all(np.ndim(v) == 0 for v in lows + highs):  # scalars keep their type (integer ends stay ints)
        return min(lows), max(highs)
    return np.minimum.reduce(np.broadcast_arrays(*lows)), np.maximum.reduce(np.broadcast_arrays(*highs))


# -- counting: each member once, in the order of the parts --------------------------------------


def _new_counts(space: Union) -> list[tuple[int, bool]]:
    """Per part: how many of its members no earlier part holds, and whether it is disjoint from
    them (then its own ``index``/``element`` serve); kept on the space."""
    return once(space, "_counts", lambda: [_new_count(space, i) for i in range(len(space._spaces))])  # type: ignore[no-any-return]


def _new_count(space: Union, i: int) -> tuple[int, bool]:
    p = space._spaces[i]
    n = cardinality(p)
    if n == math.inf:
        raise TypeError(f"elements: {space!r} is not finite")
    if all(decided(lambda a, b: cardinality(intersect(a, b)) == 0, p, q) for q in space._spaces[:i]):
        return int(n), True
    if n > ENUMERATED:
        raise TypeError(f"cardinality: not decided for {space!r} (a part of more than {ENUMERATED} "
                        "members overlaps an earlier one)")
    return sum(1 for _ in _new_members(space, i)), False


def _new_members(space: Union, i: int) -> Iterator[Any]:
    earlier = space._spaces[:i]
    return (x for x in elements(space._spaces[i]) if not any(contains(x, q) for q in earlier))


def _cardinality(space: Union) -> int | float:
    if any(cardinality(p) == math.inf for p in space._spaces):
        return math.inf
    return sum(n for n, _ in _new_counts(space))


def _elements(space: Union) -> Iterator[Any]:
    _new_counts(space)  # a TypeError for an infinite union, before iterating
    return itertools.chain.from_iterable(_new_members(space, i) for i in range(len(space._spaces)))


def _index(x: Any, space: Union) -> int:
    offset = 0
    for i, (p, (n, disjoint)) in enumerate(zip(space._spaces, _new_counts(space))):
        if contains(x, p):
            if disjoint:
                return offset + int(index(x, p))
            return offset + next(k for k, y in enumerate(_new_members(space, i)) if same_value(x, y))
        offset += n
    raise ValueError(f"index: x={x!r} is not a member of {space!r}")


def same_value(x: Any, y: Any) -> bool:
    """Whether members ``x`` and ``y`` are equal (arrays entry by entry)."""
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return bool(np.array_equal(x, y))
    return bool(x == y)


def _element(k: Any, space: Union) -> Any:
    counts = _new_counts(space)
    k = check_position(k, sum(n for n, _ in counts))
    for i, (p, (n, disjoint)) in enumerate(zip(space._spaces, counts)):
        if k < n:
            return element(k, p) if disjoint else next(itertools.islice(_new_members(space, i), k, None))
        k -= n
    raise AssertionError("unreachable")


# -- the batched rules, written once over a kernel ----------------------------------------


def rows_where(k: Kernel, rows: Any, a: Any, b: Any) -> Any:
    """``a`` where ``rows`` (a bool per row of the batch), else ``b``."""
    xp = k.xp
    if a.ndim > rows.ndim:
        rows = xp.reshape(rows, (*rows.shape, *([1] * (a.ndim - rows.ndim))))
    return xp.where(rows, a, b)


def draw_rows(k: Kernel, size: Any, extra: dict[str, Any], draw: Any, what: Any) -> Any:
    """Rows drawn by ``draw(k, shape) -> (candidates, kept)`` until every row of ``size``'s
    shape has kept one (at most :data:`_ROUNDS` rounds; ``size=None``: one row, returned
    unbatched): the bounded rejection of unions and differences, as their batched ``sample``
    rule. TypeError for ``extra`` keywords; ValueError naming ``what`` where some row never
    keeps a draw."""
    no_extra(extra)
    shape = normalize_size(1 if size is None else size)
    result, done = draw(k, shape)
    for _ in range(_ROUNDS):
        if bool(k.xp.all(done)):
            break
        candidates, kept = draw(k, shape)
        result, done = rows_where(k, kept & ~done, candidates, result), done | kept
    if not bool(k.xp.all(done)):
        raise ValueError(f"sample: {what!r} is empty or too thin to draw from (no member in {_ROUNDS + 1} "
                         "draws of a row)")
    return result[0] if size is None else result


def _weights(space: Union) -> tuple[list[int], list[Any]]:
    """The parts that have members and their weights: their cardinalities where all are finite
    (each member then equally likely), else 1 each."""
    return once(space, "_weights", lambda: _part_weights(space))  # type: ignore[no-any-return]


def _part_weights(space: Union) -> tuple[list[int], list[Any]]:
    counts = [cardinality(p) for p in space._spaces]
    chosen = [i for i, n in enumerate(counts) if n != 0]
    if not chosen:
        raise ValueError(f"sample: {space!r} is empty")
    return chosen, [int(counts[i]) if math.inf not in counts else 1 for i in chosen]


def _picks(k: Kernel, weights: list[int], shape: tuple[int, ...]) -> Any:
    """Per row, ``k`` drawn with weight ``weights[k]``, and the running total to compare with."""
    total = sum(weights)
    if total <= np.iinfo(k.numpy_dtype(k.widest_int())).max:  # int32 on JAX without x64
        return k.below(np.full(shape, total, dtype=np.int64), shape), list(itertools.accumulate(weights))
    drawn = k.uniform(shape)  # float weights beyond the backend's integers
    return drawn, [w / total for w in itertools.accumulate(weights)]


def _sample_rule(k: Kernel, space: Union, size: Any = None, *, rng: Any = None, **extra: Any) -> Any:
    parts = space._spaces

    def draw(k: Kernel, shape: tuple[int, ...]) -> tuple[Any, Any]:
        chosen, weights = _weights(space)
        picked, ends = _picks(k, weights, shape)
        result, kept, start = None, None, 0
        for i, end in zip(chosen, ends):
            rows = (picked >= start) & (picked < end)
            drawn = sample(parts[i], shape, rng=k.spawn())
            for q in parts[:i]:
                rows = rows & ~isin(drawn, q)
            result = drawn if result is None else rows_where(k, rows, drawn, result)
            kept = rows if kept is None else kept | rows
            start = end
        return result, kept

    return draw_rows(k, size, extra, draw, space)


def _isin_rule(k: Kernel, batch: Any, space: Union) -> Any:
    """Any part's ``isin``. Where the parts' members have no one shape, a part whose members
    have another shape than the batch's rows holds none of them (its ``isin`` refuses the
    batch); a batch that every part refuses is refused with the first part's ValueError. A part
    whose members the backend holds no array of (labels, on torch and JAX) is asked entry by
    entry on the host."""
    inside, refused = None, None
    for p in space._spaces:
        try:
            found = isin(batch, p)
        except ValueError as error:
            if stacked(space, space._spaces):
                raise
            refused = refused or error
            continue
        except TypeError:
            if k.traced or not hasattr(batch, "shape"):
                raise
            found = k.constant(isin_objects(k.to_host(batch), p))
        inside = found if inside is None else inside | found
    if inside is None:
        raise refused  # type: ignore[misc]
    return inside


def _clamp_rule(k: Kernel, x: Any, space: Union) -> Any:
    """The nearest of the parts' clamps (squared distance summed over the element's axes)."""
    xp, axes = k.xp, tuple(range(-len(_elsize(space)), 0))
    wide = k.dtype(np.float64)
    best = result = None
    for p in _occupied(space):
        try:
            candidate = clamp(x, p)
        except TypeError:  # a part with no nearest member (labels)
            continue
        gap = xp.abs(xp.astype(candidate, wide) - xp.astype(x, wide))
        gap = xp.sum(gap * gap, axis=axes) if axes else gap  # |d| for numbers: a square underflows
        if best is None:
            best, result = gap, candidate
        else:
            nearer = gap < best
            best, result = xp.where(nearer, gap, best), rows_where(k, nearer, candidate, result)
    if result is None:
        raise TypeError(f"clamp: no part of {space!r} has a nearest member")
    return rows_where(k, _isin_rule(k, x, space), x, result)  # members unchanged, whatever the gaps


# -- NumPy's entries: the same rules, and object batches for unions that do not stack ----------------


def _isin(batch: Any, space: Union) -> Any:
    if objects(batch, space, space._spaces):  # sample's batches of members (arrays of labels, say)
        return isin_objects(batch, space)
    try:
        _elsize(space)
    except TypeError:  # members of no one shape: an object array of them
        return isin_objects(batch, space)
    return np.asarray(_isin_rule(NUMPY, batch, space))  # the parts' batches, whatever they are


def _sample(space: Union, size: Any = None, *, rng: RngLike = None) -> Any:
    generator = as_generator(rng)
    if size is None or not stacked(space, space._spaces):
        return object_batch(lambda g: _one(space, g), size, generator)
    return _sample_rule(numpy_kernel(generator), space, size)


def _one(space: Union, generator: np.random.Generator) -> Any:
    chosen, weights = _weights(space)
    total = sum(weights)
    while True:  # a draw is kept with probability >= 1 / len(parts)
        k = int(generator.integers(total)) if total < 2**63 else int(generator.random() * total)
        i = chosen[next(j for j, end in enumerate(itertools.accumulate(weights)) if k < end)]
        x = sample(space._spaces[i], rng=generator)
        if not any(contains(x, q) for q in space._spaces[:i]):
            return x


def _clamp(x: Any, space: Union) -> Any:
    if contains(x, space):
        return x
    if not stacked(space, space._spaces):
        raise TypeError(f"clamp: {space!r} has members of different kinds: no nearest one")
    if np.ndim(x) == len(_elsize(space)) and not isinstance(x, np.ndarray):  # one member: a Python number
        nearest = np.asarray(_clamp_rule(NUMPY, np.asarray(x)[None], space))[0]
        return nearest.item() if nearest.ndim == 0 else nearest
    return _clamp_rule(NUMPY, np.asarray(x), space)


register(Union, contains=_contains, eltype=_eltype, elsize=_elsize, SpaceStyle=_style, bounds=_bounds,
         cardinality=_cardinality, elements=_elements, index=_index, element=_element)

register_batched(Union, {"isin": _isin, "sample": _sample, "clamp": _clamp}, isin=_isin_rule, sample=_sample_rule,
                 clamp=_clamp_rule, clamp_=clamp_into)


# -- inclusion and intersection --------------------------------------------------------------------


def _union_in(a: Union, b: Any) -> bool:
    return all(issubspace(p, b) for p in a._spaces)


def _in_union(a: Any, b: Union) -> bool:
    if any(_inside(a, p) for p in b._spaces):
        return True
    canonical = union(*b._spaces)
    if not isinstance(canonical, Union):
        return bool(issubspace(a, canonical))
    n = cardinality(a)
    if n != math.inf:
        if n > ENUMERATED:
            raise TypeError(f"issubspace: {a!r} is too large to check against {b!r} member by member")
        return all(contains(x, canonical) for x in elements(a))
    if isinstance(a, Interval) and all(isinstance(p, (Interval, FiniteSet)) for p in canonical._spaces):
        return False  # merged intervals leave a gap between any two; finitely many points fill none
    raise TypeError(f"issubspace: not decided for {a!r} and {b!r}")


def _union_intersect(a: Union, b: Any) -> Any:
    return union(*(intersect(p, b) for p in a._spaces))


def _intersect_union(a: Any, b: Union) -> Any:
    return union(*(intersect(a, p) for p in b._spaces))


#: kinds with a rule (kind, object) or (object, kind) of their own: the pairs with a union settled here
TIED = (FiniteSet, range, Categorical, Masked)

for _left in (Union, *TIED):
    issubspace.register(_left, Union)(_in_union if _left is not Union else _union_in)
issubspace.register(Union, object)(_union_in)
issubspace.register(object, Union)(_in_union)
issubspace.register(Union, Masked)(_union_in)
intersect.register(Union, object)(_union_intersect)
intersect.register(Union, Union)(_union_intersect)
intersect.register(object, Union)(_intersect_union)
intersect.register(FiniteSet, Union)(_intersect_union)  # settles the tie with (FiniteSet, object)


def settle_ties(cls: type) -> None:
    """``intersect`` of a ``cls`` with a finite set or a mask: the rules those kinds registered
    for any space (filtering the set's items; masking)."""
    intersect.register(cls, FiniteSet)(intersect.funcs[object, FiniteSet])
    intersect.register(cls, np.ndarray)(intersect.funcs[Space, np.ndarray])


settle_ties(Union)


# -- the catalogue: JSON ------------------------------------------------------------------------------

register_space_class(Union, "union")  # drawn by spaces(composites=("union",))
