"""The leaf model: what every derived operation needs to know of a leaf space, decided once.

>>> import spacealg as sa
>>> from spacealg.core.leaf import leaf
>>> leaf(range(2, 5))
LeafModel(image='Discrete', dtype=int64, shape=(), low=2, high=4, scalar)
>>> leaf(sa.ArraySpace(bool, 3))
LeafModel(image='MultiBinary', dtype=int8, shape=(3,), low=0, high=1)
>>> leaf(sa.FiniteSet("up", "down")).items
('up', 'down')
>>> leaf(sa.DictProduct(a=range(2))) is None      # a product is not a leaf
True

A *leaf* is a space whose members are stored as one array of numbers (or one number):
``Box``, ``range``, ``Categorical``, ``FiniteSet``, ``Interval`` and ``ArraySpace`` over
one of the scalar ones. :func:`leaf` is registered once per kind, at the end of the
kind's own module in ``spacealg/spaces/``; flattening (:mod:`spacealg.ops.flatten`),
emulation layouts (:mod:`spacealg.emulation.spaces`), ``joint_space``, ``encode`` and
``to_gymnasium``'s array rules all read it, so these decisions are made here only:

=====================================  ==============  ========  ==========================
space                                  ``image``       dtype     stored values
=====================================  ==============  ========  ==========================
``Box``                                Box             its own   the entries
``range(a, b)``, step 1 (or one item)  Discrete        int64     the integers (``low = a``)
other ``range``, ``FiniteSet``         Discrete        int64     positions in ``items``
``Categorical``                        (Multi)Discrete its own   the integers
closed ``Interval`` (or infinite end)  Box             float64   the number (``scalar``)
open finite ``Interval``               None            float64   the number (``scalar``)
``ArraySpace(base, *d)``               see below       …         ``base``'s, per entry
=====================================  ==============  ========  ==========================

``ArraySpace`` over ``bool`` is MultiBinary (int8 0/1); over a consecutive range or labels
MultiDiscrete (int64, positions for labels); over an interval the interval's image.
Laws: ``low <= high`` entrywise for a non-empty leaf; ``items`` is set exactly when stored
values are positions (then ``low == 0`` and ``high == len(items) - 1``); ``scalar`` exactly
when members are Python/numpy scalars rather than arrays; ``image`` is the class name of
``to_gymnasium(space)`` for every leaf with one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.core.generic import as_space, generic

__all__ = ["LeafModel", "consecutive", "labels", "leaf", "plain"]

INT64 = np.dtype(np.int64)


@dataclass(frozen=True, eq=False)
class LeafModel:
    """One leaf, as the derived operations see it (see the module's table).

    ``image``: the Gymnasium class of its image ("Box", "Discrete", "MultiDiscrete",
    "MultiBinary"; None where it has none); ``dtype``/``shape``: of the stored entries;
    ``low``/``high``: bounds of stored values (scalars or arrays broadcasting to
    ``shape``); ``items``: the labels that stored positions stand for, or None;
    ``scalar``: members are scalars; ``integral``: stored values are integers.
    """

    image: str | None
    dtype: np.dtype
    shape: tuple[int, ...]
    low: Any
    high: Any
    items: tuple[Any, ...] | None = None
    scalar: bool = False
    integral: bool = True

    @property
    def discrete(self) -> bool:
        """Whether the leaf is a finite set of integers (Discrete, MultiDiscrete, MultiBinary)."""
        return self.image in ("Discrete", "MultiDiscrete", "MultiBinary")

    @functools.cached_property
    def lookup(self) -> dict[Any, int]:
        """Label -> position (numpy scalars keyed by their Python value); empty without labels."""
        return {plain(item): i for i, item in enumerate(self.items or ())}

    @functools.cached_property
    def item_array(self) -> np.ndarray:
        """The labels as an array (of their numbers or strings when all are; else objects)."""
        items = self.items or ()
        if items and (all(isinstance(i, str) for i in items) or all(
                isinstance(i, (int, float, np.integer, np.floating)) and not isinstance(i, bool) for i in items)):
            return np.asarray(items)
        array = np.empty(len(items), dtype=object)
        array[:] = list(items)
        return array

    @property
    def stacks(self) -> bool:
        """Whether members stack into one numeric array (labels do not: their positions do)."""
        return self.items is None

    def __repr__(self) -> str:
        def show(bound: Any) -> str:
            array = np.asarray(bound)
            return repr(array.item()) if array.size == 1 else np.array2string(array, threshold=6)

        flags = ", scalar" if self.scalar else ""
        return (f"LeafModel(image={self.image!r}, dtype={self.dtype}, shape={self.shape}, "
                f"low={show(self.low)}, high={show(self.high)}{flags})")


def plain(x: Any) -> Any:
    """A numpy scalar (or 0-d array) as its Python value, for label lookups; else ``x``."""
    if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.shape == ()):
        return x.item()
    return x


def consecutive(r: Any) -> bool:
    """A non-empty range of consecutive integers (Gymnasium's ``Discrete(n, start)``);
    a range of one integer counts whatever its step."""
    if not isinstance(r, range):
        return False
    nonempty = r.start < r.stop if r.step > 0 else r.start > r.stop  # len() overflows past maxsize
    return nonempty and (r.step == 1 or r[0] == r[-1])


def labels(items: tuple[Any, ...], shape: tuple[int, ...] = ()) -> LeafModel:
    """Labels stored as their positions: Discrete (``shape == ()``) or MultiDiscrete."""
    image = "Discrete" if shape == () else "MultiDiscrete"
    return LeafModel(image, INT64, shape, 0, len(items) - 1, tuple(items), scalar=shape == ())


@generic(0)
def leaf(space: Any) -> LeafModel | None:
    """The :class:`LeafModel` of ``space``, or None for a space that is not a leaf.

    Plain and Gymnasium objects go through :func:`spacealg.as_space`; raises TypeError for
    an object that is not a space.
    """
    converted = as_space(space)
    if converted is not space:
        return leaf(converted)  # type: ignore[no-any-return]
    return None
