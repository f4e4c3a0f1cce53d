"""What the backends need of a space: products as trees of leaf models.

Every batched operation on torch and JAX (``sample``, ``isin``, ``clamp``,
``flatten_batch``, the emulation codec) is written once against the leaf model,
:class:`spacealg.core.leaf.LeafModel` (one registration per kind, at the end of the kind's
module in ``spacealg/spaces/``), read as NumPy's flattening and emulation read it:

===================================  ========  ================================================
space                                members   values (per entry)
===================================  ========  ================================================
``Box`` (float)                      REAL      ``low..high`` in its dtype
``Box`` (int, bool)                  INTEGERS  integers ``low..high``
``Interval``                         REAL      float64, open ends excluded
``range(a, b, step)``                INTEGERS  ``a + step * k``, int64
``Categorical`` (Discrete/MD forms)  INTEGERS  ``start..start+nvec-1``
``FiniteSet`` of numbers             NUMBERS   its items (their NumPy dtype)
``ArraySpace(base, *d)``             base's    the base's, on every entry
``TupleProduct``/``DictProduct``     tree      per component
OneOf, Sequence, Graph, Text,        —         TypeError naming the kind and the backend
FiniteSet of labels                            (their batches are object arrays)
===================================  ========  ================================================

Gymnasium and Gym spaces reach these rules through :func:`~spacealg.core.generic.as_space`,
keeping their own dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spacealg.core.generic import as_space
from spacealg.core.leaf import LeafModel, Members, leaf
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = ["ObjectBatchError", "array_leaf", "cached_tree", "first_array", "map_tree", "space_tree", "tree_for",
           "tree_values"]


class ObjectBatchError(TypeError):
    """A space whose batches are object arrays met a torch/JAX operation."""


def array_leaf(space: Any) -> LeafModel:
    """The leaf model of a space whose batches are one stacked array of numbers.

    Raises TypeError naming the kind for a space whose batches are object arrays, or whose
    integers lie beyond int64; ValueError for an empty space.
    """
    model = leaf(space)
    if model is None or model.members is Members.LABELS:
        kind = type(space).__qualname__
        what = "FiniteSet of labels" if model is not None else f"{kind} batches are object arrays (not numbers)"
        raise ObjectBatchError(
            f"{what}: their batches are object/str arrays, which torch and JAX cannot hold: {space!r}"
            + (" (use its index, spacealg.index, as an integer encoding)" if model is not None else "")
        )
    if model.members is Members.NUMBERS and not len(model.numbers):  # type: ignore[arg-type]
        raise ValueError(f"{space!r} is empty")
    if model.members is Members.INTEGERS and model.size:
        if (model.value_low > model.value_high).any():
            raise ValueError(f"{space!r} is empty")
        if model.value_low.dtype.kind == "O" or model.value_high.dtype.kind == "O":
            low, high = int(model.value_low.min()), int(model.value_high.max())
            if low < -(2**63) or high >= 2**64 or (low < 0 and high >= 2**63):
                raise TypeError(f"{space!r} has integers beyond int64, which torch and JAX cannot hold")
    return model


def first_array(batch: Any) -> Any:
    """The first leaf array of a batch (tuples, lists and dicts of arrays), depth first."""
    while isinstance(batch, (tuple, list, dict)):
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    return batch


# -- products: trees of leaves -----------------------------------------------------------


def space_tree(space: Any) -> Any:
    """``space`` as a tree: a tuple (TupleProduct), a dict (DictProduct) or an ArrayLeaf.

    Raises TypeError (naming the kind) for a space with object batches anywhere inside.
    """
    converted = as_space(space) if not isinstance(space, (TupleProduct, DictProduct)) else space
    if isinstance(converted, TupleProduct):
        return tuple(space_tree(s) for s in converted._spaces)
    if isinstance(converted, DictProduct):
        return {k: space_tree(s) for k, s in converted._spaces.items()}
    return array_leaf(space)  # the space itself: a converted space keeps its own dtype


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
    if isinstance(tree, LeafModel):
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
