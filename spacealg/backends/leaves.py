"""What the backends need of a space: products as trees, and one :class:`ArrayLeaf` per leaf.

:func:`array_leaf` is registered once per kind of space whose batches stack into one
array (the rule table below); every batched operation on torch and JAX (``sample``,
``isin``, ``clamp``, ``flatten_batch``) is written once against the leaf. An
:class:`ArrayLeaf` describes a leaf's *members* (their values, bounds and steps, which
sampling, membership and clamping need); how a leaf is *stored* when flattened (one-hot,
positions or raveled, and in which dtype) is not decided here but read from the leaf
model, :func:`spacealg.core.leaf.leaf`, as NumPy's flattening reads it.

===================================  ======  ==================================================
space                                kind    values (per entry)
===================================  ======  ==================================================
``Box`` (float)                      real    ``low..high`` in its dtype
``Box`` (int, bool)                  int     integers ``low..high``
``Interval``                         real    float64, open ends excluded
``range(a, b, step)``                int     ``a + step * k``, int64
``Categorical`` (Discrete/MD forms)  int     ``start..start+nvec-1``
``FiniteSet`` of numbers             set     its items (their NumPy dtype)
``ArraySpace(base, *d)``             base's  the base's, on every entry
``TupleProduct``/``DictProduct``     tree    per component
OneOf, Sequence, Graph, Text,        —       TypeError naming the kind and the backend
FiniteSet of labels                          (their batches are object arrays)
===================================  ======  ==================================================

Gymnasium and Gym spaces reach these rules through :func:`~spacealg.core.generic.as_space`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.core.generic import as_space, generic
from spacealg.core.leaf import LeafModel, leaf
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet, range_length
from spacealg.spaces.interval import Interval
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = ["ArrayLeaf", "ObjectBatchError", "array_leaf", "cached_tree", "map_tree", "space_tree", "tree_for",
           "tree_values"]


class ObjectBatchError(TypeError):
    """A space whose batches are object arrays met a torch/JAX operation."""


@dataclasses.dataclass(frozen=True, eq=False)
class ArrayLeaf:
    """One stacking leaf: ``kind`` is ``"real"``, ``"int"`` or ``"set"``.

    ``shape``/``dtype``: an element's shape and NumPy dtype (that of NumPy's samples).
    ``low``/``high``: per-entry bounds (arrays of ``shape``; for ``int`` exact integers of
    ``dtype``, for ``real`` floats); ``bounded_low``/``bounded_high`` say which entries are
    bounded (sampling follows Gymnasium's rule); ``open_low``/``open_high`` mark open ends
    (Interval). ``step``: the spacing of a stepped range. ``values``: a set's items in order.
    ``flat``/``flat_dtype``: the flattening, read from the leaf model (see the module).
    """

    space: Any
    kind: str
    shape: tuple[int, ...]
    dtype: np.dtype
    low: np.ndarray
    high: np.ndarray
    bounded_low: np.ndarray
    bounded_high: np.ndarray
    open_low: bool = False
    open_high: bool = False
    step: int = 1
    values: np.ndarray | None = None
    base: Any = None  # the scalar space behind it: Interval (its clip rule), stepped range or set (index)
    cache: dict[Any, Any] = dataclasses.field(default_factory=dict)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @functools.cached_property
    def uniform_bounds(self) -> bool:
        """Whether every entry has the same bounds (scalars then suffice)."""
        return _uniform(self.low) and _uniform(self.high)

    @functools.cached_property
    def flat(self) -> str:
        """``"onehot"`` (of ``x - low``), ``"index"`` (one-hot of the stored position) or
        ``"ravel"``: whatever :func:`~spacealg.core.leaf.leaf` stores the leaf as."""
        model = self._model
        if model.items is not None:
            return "index"
        return "onehot" if model.image in ("Discrete", "MultiDiscrete") else "ravel"

    @functools.cached_property
    def flat_dtype(self) -> np.dtype:
        """The dtype of the flattened entries (the leaf model's stored dtype)."""
        return np.dtype(self._model.dtype)

    @property
    def _model(self) -> LeafModel:
        model = leaf(self.space)
        assert model is not None, f"{self.space!r} stacks but has no leaf model"
        return model

    def widths(self) -> np.ndarray:
        """Number of values per entry (``int``: ``(high - low) // step + 1``, as Python ints)."""
        span = np.asarray(self.high, dtype=object) - np.asarray(self.low, dtype=object)
        return np.asarray(span // self.step + 1, dtype=object)

    def over(self, dims: tuple[int, ...], space: Any) -> ArrayLeaf:
        """This leaf on every entry of arrays of shape ``dims`` (an ``ArraySpace``)."""
        shape = dims + self.shape

        def grow(a: np.ndarray) -> np.ndarray:
            return np.array(np.broadcast_to(a, shape))

        return dataclasses.replace(
            self, space=space, shape=shape, low=grow(self.low), high=grow(self.high),
            bounded_low=grow(self.bounded_low), bounded_high=grow(self.bounded_high), cache={},
        )


def _uniform(a: np.ndarray) -> bool:
    return a.size == 0 or bool((a == a.reshape(-1)[0]).all())


def _all(shape: tuple[int, ...], value: bool = True) -> np.ndarray:
    return np.full(shape, value)


@generic(0)
def array_leaf(space: Any) -> ArrayLeaf:
    """The :class:`ArrayLeaf` of a space whose batches are one stacked array.

    Raises TypeError naming the kind for a space whose batches are object arrays.
    """
    converted = as_space(space)
    if converted is not space:
        return array_leaf(converted)  # type: ignore[no-any-return]
    raise ObjectBatchError(
        f"{type(space).__qualname__} batches are object arrays (not numbers), so they have no "
        f"torch or JAX form: {space!r}"
    )


@array_leaf.register(Box)
def _box_leaf(space: Box) -> ArrayLeaf:
    kind = "int" if space.integral else "real"
    return ArrayLeaf(space, kind, space.shape, space.dtype, space.low, space.high,
                     space.bounded_below, space.bounded_above)


@array_leaf.register(Interval)
def _interval_leaf(space: Interval) -> ArrayLeaf:
    low, high = np.float64(space.low), np.float64(space.high)
    return ArrayLeaf(space, "real", (), np.dtype(np.float64), np.asarray(low), np.asarray(high),
                     np.asarray(np.isfinite(low)), np.asarray(np.isfinite(high)),
                     open_low=not space.closed_left, open_high=not space.closed_right, base=space)


@array_leaf.register(range)
def _range_leaf(space: range) -> ArrayLeaf:
    n = range_length(space)
    if n == 0:
        raise ValueError(f"{space!r} is empty")
    step = abs(space.step)
    first = space.start if space.step > 0 else space.start + (n - 1) * space.step
    last = first + step * (n - 1)
    if first < -(2**63) or last >= 2**63:
        raise TypeError(f"{space!r} has integers beyond int64, which torch and JAX cannot hold")
    low, high = np.asarray(first, np.int64), np.asarray(last, np.int64)
    return ArrayLeaf(space, "int", (), np.dtype(np.int64), low, high, _all(()), _all(()),
                     step=step if n > 1 else 1, base=space)


@array_leaf.register(Categorical)
def _categorical_leaf(space: Categorical) -> ArrayLeaf:
    return ArrayLeaf(space, "int", space.shape, space.dtype, space.low, space.high,
                     _all(space.shape), _all(space.shape))


@array_leaf.register(FiniteSet)
def _finite_leaf(space: FiniteSet) -> ArrayLeaf:
    values = space._array
    if not space._numeric or values.dtype.kind not in "biuf":
        raise ObjectBatchError(
            f"FiniteSet of labels: its batches are object/str arrays, which torch and JAX cannot "
            f"hold: {space!r} (use its index, spacealg.index, as an integer encoding)"
        )
    if not len(values):
        raise ValueError(f"{space!r} is empty")
    low, high = np.asarray(values.min()), np.asarray(values.max())
    return ArrayLeaf(space, "set", (), values.dtype, low, high, _all(()), _all(()), values=values,
                     base=space)


@array_leaf.register(ArraySpace)
def _array_leaf(space: ArraySpace) -> ArrayLeaf:
    return array_leaf(space.space).over(space.dims, space)


# -- products: trees of leaves -----------------------------------------------------------


def space_tree(space: Any) -> Any:
    """``space`` as a tree: a tuple (TupleProduct), a dict (DictProduct) or an ArrayLeaf.

    Raises TypeError (naming the kind) for a space with object batches anywhere inside.
    """
    space = as_space(space) if not isinstance(space, (TupleProduct, DictProduct)) else space
    if isinstance(space, TupleProduct):
        return tuple(space_tree(s) for s in space._spaces)
    if isinstance(space, DictProduct):
        return {k: space_tree(s) for k, s in space._spaces.items()}
    return array_leaf(space)


def cached_tree(space: Any) -> Any:
    """:func:`space_tree`, kept in the space's plan (:mod:`spacealg.backends.plan`, under the
    package's one cache rule, :mod:`spacealg.core.cache`)."""
    from spacealg.backends.plan import plan_for

    return plan_for(space).tree


def tree_for(space: Any, name: str, what: str) -> Any:
    """:func:`cached_tree` for operation ``what`` on backend ``name``; the TypeError for a kind
    with object batches names the kind, the operation and the backend."""
    from spacealg.backends.plan import plan_for

    return plan_for(space, name, what).tree


def map_tree(function: Callable[..., Any], tree: Any, *batches: Any, what: str = "batch") -> Any:
    """``function(leaf, *leaf_batches)`` over a tree and batches of the same structure.

    Raises ValueError naming ``what`` when a batch does not have the tree's structure.
    """
    if isinstance(tree, ArrayLeaf):
        return function(tree, *batches)
    if isinstance(tree, tuple):
        for b in batches:
            if not isinstance(b, (tuple, list)) or len(b) != len(tree):
                raise ValueError(f"{what}: a batch of a TupleProduct is a tuple of {len(tree)} component batches")
        return tuple(map_tree(function, t, *(b[i] for b in batches), what=what) for i, t in enumerate(tree))
    for b in batches:
        if not isinstance(b, dict) or set(b) != set(tree):
            raise ValueError(f"{what}: a batch of a DictProduct is a dict with the keys {list(tree)}")
    return {k: map_tree(function, t, *(b[k] for b in batches), what=what) for k, t in tree.items()}


def tree_values(tree: Any) -> list[Any]:
    """The leaves of a tree (tuples and dicts of leaves or arrays), depth first."""
    if isinstance(tree, tuple):
        return [v for part in tree for v in tree_values(part)]
    if isinstance(tree, dict):
        return [v for part in tree.values() for v in tree_values(part)]
    return [tree]
