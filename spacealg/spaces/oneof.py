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
    index,
    issubspace,
    sample,
)
from spacealg.core.styles import FiniteSpaceStyle, HybridSpaceStyle, Style, UnknownSpaceStyle
from spacealg.spaces._batch import isin_objects
from spacealg.spaces._kind import empty, once, register, register_unshaped
from spacealg.spaces.product import SpaceTuple
from spacealg.spaces.sequence import one_by_one

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


def _contains(x: Any, space: OneOf) -> bool:
    i = _tag(x, len(space._spaces))
    return i is not None and contains(x[1], space._spaces[i])


def _one(space: OneOf, generator: np.random.Generator) -> tuple[int, Any]:
    """A branch uniformly among those that have members (Gymnasium's rule), so a OneOf with
    any member never fails to sample; ValueError if none has one. Then a member of it."""
    branches = once(space, "_branches", lambda: [i for i, s in enumerate(space._spaces) if not empty(s)])
    if not branches:
        raise ValueError(f"sample: {space!r} is empty (every branch is)")
    i = branches[int(generator.integers(len(branches)))]
    return (i, sample(space._spaces[i], rng=generator))


def _style(space: OneOf) -> Style:
    styles = [SpaceStyle(s) for s in space._spaces]
    if all(isinstance(s, FiniteSpaceStyle) for s in styles):
        return FiniteSpaceStyle(())
    if any(isinstance(s, UnknownSpaceStyle) for s in styles):
        return UnknownSpaceStyle()
    return HybridSpaceStyle((), ())


def _clamp(x: Any, space: OneOf) -> Any:
    i = _tag(x, len(space._spaces))
    if i is None:
        raise ValueError(f"clamp: x must be a pair (i, value) with i in range({len(space._spaces)})")
    return (i, clamp(x[1], space._spaces[i]))


def _cardinality(space: OneOf) -> int | float:
    counts = [cardinality(s) for s in space._spaces]
    return math.inf if math.inf in counts else sum(counts)  # inf + a huge int overflows


def _elements(space: OneOf) -> Iterator[tuple[int, Any]]:
    return itertools.chain.from_iterable(((i, v) for v in elements(s)) for i, s in enumerate(space._spaces))


def _index(x: Any, space: OneOf) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    offset = sum(cardinality(s) for s in space._spaces[: x[0]])
    return int(offset + index(x[1], space._spaces[x[0]]))


def _element(i: Any, space: OneOf) -> tuple[int, Any]:
    i = check_position(i, _cardinality(space))
    for tag, s in enumerate(space._spaces):
        n = cardinality(s)
        if i < n:
            return (tag, element(int(i), s))
        i -= n
    raise AssertionError("unreachable")


register(OneOf, contains=_contains, isin=isin_objects, eltype=lambda space: tuple[int, Any], SpaceStyle=_style,
         clamp=_clamp, cardinality=_cardinality, elements=_elements, index=_index, element=_element,
         sample=one_by_one(_one))
register_unshaped(OneOf, "(index, value) pairs")


@issubspace.register(OneOf, OneOf)
def _oneof_subset(a: OneOf, b: OneOf) -> bool:
    return len(a._spaces) == len(b._spaces) and all(issubspace(sa, sb) for sa, sb in zip(a._spaces, b._spaces))


hooks.one_of.define(OneOf)  # ``a + b`` on spacealg's spaces
