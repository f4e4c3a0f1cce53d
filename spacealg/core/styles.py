"""Space styles: hashable value objects that say what kind of set a space is.

``FiniteSpaceStyle(shape)``, ``ContinuousSpaceStyle(shape)``,
``HybridSpaceStyle(continuous_shape, finite_shape)`` and ``UnknownSpaceStyle()``.
The shape of a leaf space is the shape of its elements (``()`` for scalars). The shape of
each part (continuous, finite) of a product is the shape of its component when one
component alone makes that part, and ``(n,)`` when several do, ``n`` counting their
scalar entries: ``product(-1..1, 0..1)`` is ``ContinuousSpaceStyle((2,))`` and
``product(-1..1, 0..1, ("cat", "dog"))`` is ``HybridSpaceStyle((2,), ())``, as the style
table of CommonRLSpaces.jl's README gives them.

Promotion (:func:`combine_styles`, the style of a product):

==========  ==========  ==========  ==========  ==========
 +          Finite      Continuous  Hybrid      Unknown
==========  ==========  ==========  ==========  ==========
Finite      Finite      Hybrid      Hybrid      Unknown
Continuous  Hybrid      Continuous  Hybrid      Unknown
Hybrid      Hybrid      Hybrid      Hybrid      Unknown
Unknown     Unknown     Unknown     Unknown     Unknown
==========  ==========  ==========  ==========  ==========

with continuous and finite component counts added up.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ContinuousSpaceStyle",
    "FiniteSpaceStyle",
    "HybridSpaceStyle",
    "Style",
    "UnknownSpaceStyle",
    "combine_styles",
]

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Style:
    """Base of the four styles."""

    def counts(self) -> tuple[int, int] | None:
        """(continuous, finite) scalar component counts; None for Unknown."""
        raise NotImplementedError


@dataclass(frozen=True)
class FiniteSpaceStyle(Style):
    """A finite set: iterable with :func:`elements`, indexable with :func:`index`."""

    shape: Shape = ()

    def counts(self) -> tuple[int, int]:
        return 0, math.prod(self.shape)


@dataclass(frozen=True)
class ContinuousSpaceStyle(Style):
    """An uncountable set of reals or real arrays: has :func:`bounds` and :func:`clamp`."""

    shape: Shape = ()

    def counts(self) -> tuple[int, int]:
        return math.prod(self.shape), 0


@dataclass(frozen=True)
class HybridSpaceStyle(Style):
    """A product of continuous and finite parts."""

    continuous_shape: Shape = ()
    finite_shape: Shape = ()

    def counts(self) -> tuple[int, int]:
        return math.prod(self.continuous_shape), math.prod(self.finite_shape)


@dataclass(frozen=True)
class UnknownSpaceStyle(Style):
    """Nothing is known beyond membership and sampling."""

    def counts(self) -> None:
        return None


def combine_styles(styles: Iterable[Style]) -> Style:
    """The style of a product of spaces with these styles (see the module's table).

    A part (continuous or finite) that one component alone contributes keeps that
    component's shape; a part several components contribute to is ``(n,)``, ``n`` counting
    their scalar entries. So ``product(a..b, c..d, ("cat", "dog"))`` is
    ``HybridSpaceStyle((2,), ())``, the table of CommonRLSpaces.jl's README.
    """
    parts: dict[str, list[Shape]] = {"continuous": [], "finite": []}
    kinds = set()
    for style in styles:
        if isinstance(style, UnknownSpaceStyle) or style.counts() is None:
            return UnknownSpaceStyle()
        kinds.add(type(style))
        if isinstance(style, FiniteSpaceStyle):
            parts["finite"].append(style.shape)
        elif isinstance(style, ContinuousSpaceStyle):
            parts["continuous"].append(style.shape)
        elif isinstance(style, HybridSpaceStyle):
            parts["continuous"].append(style.continuous_shape)
            parts["finite"].append(style.finite_shape)
    continuous, finite = _part_shape(parts["continuous"]), _part_shape(parts["finite"])
    if kinds <= {FiniteSpaceStyle}:
        return FiniteSpaceStyle(finite)
    if kinds == {ContinuousSpaceStyle}:
        return ContinuousSpaceStyle(continuous)
    return HybridSpaceStyle(continuous, finite)


def _part_shape(shapes: list[Shape]) -> Shape:
    """A lone contributor's shape, or ``(n,)`` with ``n`` the scalar entries of several."""
    if len(shapes) == 1:
        return shapes[0]
    return (sum(math.prod(shape) for shape in shapes),)
