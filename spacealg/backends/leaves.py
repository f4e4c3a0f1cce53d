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

from typing import Any

from spacealg.core.plan import ObjectBatchError, Plan, array_leaf, map_tree, plan_for, tree_values

__all__ = ["ObjectBatchError", "array_leaf", "cached_tree", "first_array", "map_tree", "space_tree", "tree_for",
           "tree_values"]


def first_array(batch: Any) -> Any:
    """The first leaf array of a batch (tuples, lists and dicts of arrays), depth first."""
    while isinstance(batch, (tuple, list, dict)):
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    return batch


def space_tree(space: Any) -> Any:
    """``space`` as a tree: a tuple (TupleProduct), a dict (DictProduct) or a leaf model
    (:func:`~spacealg.core.plan.array_leaf`), walked afresh.

    Raises TypeError (naming the kind) for a space with object batches anywhere inside.
    """
    return Plan(space).tree


def cached_tree(space: Any) -> Any:
    """:func:`space_tree`, kept in the space's plan (:mod:`spacealg.core.plan`, under the
    package's one cache rule, :mod:`spacealg.core.cache`)."""
    return plan_for(space).tree


def tree_for(space: Any, name: str, what: str) -> Any:
    """:func:`cached_tree` for operation ``what`` on backend ``name``; the TypeError for a kind
    with object batches names the kind, the operation and the backend."""
    return plan_for(space, name, what).tree
