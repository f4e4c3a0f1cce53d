"""OneOf: the direct sum (tagged union) of spaces; elements are ``(index, value)``.

>>> from spacealg import OneOf, Interval, cardinality
>>> s = OneOf(("left", "right"), Interval(0, 1))    # also ("left", "right") + Interval(0, 1)
>>> s.sample(rng=0) in s, (0, "left") in s, (1, "left") in s
(True, True, False)

Sampling follows Gymnasium's ``OneOf``: a branch uniformly, then a member of it. A batch
is an object array of ``(index, value)`` pairs. Laws: ``cardinality`` adds up;
``elements`` runs through the branches in order; ``clamp((i, v))`` is ``(i, clamp(v, s_i))``.
Style: Finite if every branch is finite; Unknown if any branch is; Hybrid otherwise
(shapeless: ``HybridSpaceStyle((), ())``, as members have no common shape).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

from spacealg.core import hooks
from spacealg.core.protocol import (
    SpaceStyle,
    cardinality,
    check_position,
    clamp,
    contains,
    element,
    elements,
    eltype,
    index,
    isin,
    issubspace,
    sample,
)
from spacealg.core.rng import RngLike, as_generator
from spacealg.core.styles import FiniteSpaceStyle, HybridSpaceStyle, Style, UnknownSpaceStyle
from spacealg.spaces._batch import isin_objects, normalize_size
from spacealg.spaces.product import SpaceTuple
from spacealg.spaces.sequence import register_unshaped

__all__ = ["OneOf"]


class OneOf(SpaceTuple):
    """The tagged union of ``spaces``: members are ``(i, x)`` with ``x`` in ``spaces[i]``."""

    def __init__(self, *spaces: Any) -> None:
        if not spaces:
            raise ValueError("OneOf: needs at least one space")
        super().__init__(*spaces)


def _tag(x: Any, n: int) -> int | None:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        return None
    i = x[0]
    if isinstance(i, bool) or not isinstance(i, (numbers.Integral, np.integer)):
        return None
    return int(i) if 0 <= i < n else None  # type: ignore[operator]


@contains.register(OneOf)
def _contains(x: Any, space: OneOf) -> bool:
    i = _tag(x, len(space._spaces))
    return i is not None and contains(x[1], space._spaces[i])


@sample.register(OneOf)
def _sample(space: OneOf, size: Any = None, *, rng: RngLike = None) -> Any:
    generator = as_generator(rng)
    if size is None:
        branches = _nonempty_branches(space)
        i = branches[int(generator.integers(len(branches)))]
        return (i, sample(space._spaces[i], rng=generator))
    shape = normalize_size(size)
    batch = np.empty(shape, dtype=object)
    for position in np.ndindex(shape):
        batch[position] = _sample(space, rng=generator)
    return batch


def _nonempty_branches(space: OneOf) -> list[int]:
    """The branches that have members: sampling draws among them (uniformly, Gymnasium's
    rule), so a OneOf with any member never fails to sample. ValueError if none has one."""
    branches: list[int] | None = space.__dict__.get("_branches")
    if branches is None:  # once per space (a OneOf is immutable)
        branches = [i for i, s in enumerate(space._spaces) if not _is_empty(s)]
        space._set(_branches=branches)
    if not branches:
        raise ValueError(f"sample: {space!r} is empty (every branch is)")
    return branches


def _is_empty(space: Any) -> bool:
    try:
        return cardinality(space) == 0
    except (TypeError, OverflowError):
        return False


isin.register(OneOf)(isin_objects)
register_unshaped(OneOf, "(index, value) pairs")


@eltype.register(OneOf)
def _eltype(space: OneOf) -> Any:
    return tuple[int, Any]


@SpaceStyle.register(OneOf)
def _style(space: OneOf) -> Style:
    styles = [SpaceStyle(s) for s in space._spaces]
    if all(isinstance(s, FiniteSpaceStyle) for s in styles):
        return FiniteSpaceStyle(())
    if any(isinstance(s, UnknownSpaceStyle) for s in styles):
        return UnknownSpaceStyle()
    return HybridSpaceStyle((), ())


@clamp.register(OneOf)
def _clamp(x: Any, space: OneOf) -> Any:
    i = _tag(x, len(space._spaces))
    if i is None:
        raise ValueError(f"clamp: x must be a pair (i, value) with i in range({len(space._spaces)})")
    return (i, clamp(x[1], space._spaces[i]))


@cardinality.register(OneOf)
def _cardinality(space: OneOf) -> int | float:
    counts = [cardinality(s) for s in space._spaces]
    return math.inf if math.inf in counts else sum(counts)  # inf + a huge int overflows


@elements.register(OneOf)
def _elements(space: OneOf) -> Iterator[tuple[int, Any]]:
    return itertools.chain.from_iterable(
        ((i, v) for v in elements(s)) for i, s in enumerate(space._spaces)
    )


@index.register(OneOf)
def _index(x: Any, space: OneOf) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    offset = sum(cardinality(s) for s in space._spaces[: x[0]])
    return int(offset + index(x[1], space._spaces[x[0]]))


@element.register(OneOf)
def _element(i: Any, space: OneOf) -> tuple[int, Any]:
    total = _cardinality(space)
    i = check_position(i, total)
    for tag, s in enumerate(space._spaces):
        n = cardinality(s)
        if i < n:
            return (tag, element(int(i), s))
        i -= n
    raise AssertionError("unreachable")


@issubspace.register(OneOf, OneOf)
def _oneof_subset(a: OneOf, b: OneOf) -> bool:
    return len(a._spaces) == len(b._spaces) and all(
        issubspace(sa, sb) for sa, sb in zip(a._spaces, b._spaces)
    )

hooks.one_of.define(OneOf)  # ``a + b`` on spacealg's spaces
