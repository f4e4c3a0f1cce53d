"""Helpers shared by the core law tests: equality of members, and values near a space."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from hypothesis import strategies as st

import spacealg as sa
from spacealg.core.plan import Plan
from spacealg.strategies.spaces import boxes, finite_sets, intervals, ranges


def same(a: Any, b: Any) -> bool:
    """Equal in value: arrays by shape and value (whatever their dtype, NaN equal to NaN),
    tuples/lists item by item, mappings key by key in order."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.kind == "O" or b.dtype.kind == "O":
            return a.shape == b.shape and all(same(x, y) for x, y in zip(a.ravel(), b.ravel()))
        nan = a.dtype.kind in "fc" and b.dtype.kind in "fc"
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=nan))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b) or (a != a and b != b)


def member_at(batch: Any, i: int) -> Any:
    """Member ``i`` of a spacealg batch (tuples/dicts of component batches, arrays)."""
    if isinstance(batch, tuple):
        return tuple(member_at(b, i) for b in batch)
    if isinstance(batch, Mapping):
        return {k: member_at(b, i) for k, b in batch.items()}
    item = batch[i]
    return str(item) if isinstance(item, np.str_) else item


def numeric_finite_sets() -> st.SearchStrategy[sa.FiniteSet]:
    return finite_sets().filter(lambda s: s._numeric)


def clampable_leaves() -> st.SearchStrategy[Any]:
    """Spaces whose clamp is defined for every real input of the right shape."""
    numeric_arrays = st.builds(
        lambda base, dims: sa.ArraySpace(base, *dims),
        st.one_of(ranges(), numeric_finite_sets(), st.just(bool), intervals().filter(lambda i: i.closed != "both")),
        st.lists(st.integers(1, 3), min_size=1, max_size=2),
    )
    return st.one_of(intervals(), ranges(), numeric_finite_sets(), st.just(sa.BOOL), boxes(), numeric_arrays)


def clampable_spaces() -> st.SearchStrategy[Any]:
    leaf = clampable_leaves()
    return st.recursive(
        leaf,
        lambda children: st.one_of(
            st.lists(children, min_size=1, max_size=3).map(lambda p: sa.TupleProduct(*p)),
            st.dictionaries(st.sampled_from("abcd"), children, min_size=1, max_size=3).map(sa.DictProduct),
        ),
        max_leaves=6,
    )


_reals = st.one_of(
    st.floats(-1e4, 1e4, allow_nan=False),
    st.integers(-1000, 1000),
    st.sampled_from([np.inf, -np.inf]),
)


@st.composite
def outsiders(draw: Any, space: Any) -> Any:
    """A value of the element's structure, with arbitrary real entries (often outside)."""
    if isinstance(space, sa.TupleProduct):
        return tuple(draw(outsiders(s)) for s in space.spaces)
    if isinstance(space, sa.DictProduct):
        return {k: draw(outsiders(s)) for k, s in space.spaces.items()}
    shape = sa.elsize(space)
    if shape == ():
        return draw(_reals)
    size = int(np.prod(shape))
    entries = draw(st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=size, max_size=size))
    return np.array(entries, dtype=np.float64).reshape(shape)


def stacks(space: Any) -> bool:
    """Whether batches of ``space`` stack into arrays (the kinds the torch/JAX backends take):
    every leaf has an array leaf model, or is of a kind with batched rules of its own and no
    leaf model (OneHot)."""
    from spacealg.core.arrays import kind_rule
    from spacealg.core.leaf import leaf as leaf_model
    from spacealg.core.plan import array_leaf

    try:
        for leaf in Plan(space).leaf_spaces():
            if leaf_model(leaf) is None and kind_rule("isin", type(leaf)) is not None:
                continue
            array_leaf(leaf)  # raises for a kind with object batches
    except (TypeError, ValueError):
        return False
    return True


def mutated_document(document: Any, data: Any, hostile: Any, changes: Any = None) -> str | None:
    """A JSON document with 1 to 3 (or ``changes``) of its fields, drawn by ``data``, replaced by
    values of the strategy ``hostile``; as text, or None where the result is no JSON."""
    import copy
    import json

    paths = list(_paths(document))
    mutated = copy.deepcopy(document)
    for _ in range(data.draw(changes if changes is not None else st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent = mutated
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = data.draw(hostile)
        except (KeyError, IndexError, TypeError):
            continue
    try:
        return json.dumps(mutated)
    except (ValueError, TypeError):
        return None


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Any:
    """Every path into a JSON document (dict keys and list positions), depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield (*prefix, i)
            yield from _paths(value, (*prefix, i))


def map_leaves(batch: Any, f: Any) -> Any:
    """``f`` of every leaf array (as NumPy's) of a tuple/dict batch, in its structure."""
    if isinstance(batch, tuple):
        return tuple(map_leaves(b, f) for b in batch)
    if isinstance(batch, dict):
        return {k: map_leaves(b, f) for k, b in batch.items()}
    return f(np.asarray(batch))


def to_backend(name: str, batch: Any) -> Any:
    """A NumPy batch on backend ``name`` ("numpy": a copy, "torch", "jax"), its structure
    (tuples, dicts) kept; torch and JAX are imported only when asked for."""
    return map_leaves(batch, lambda array: _on(name, array))


def _on(name: str, array: np.ndarray) -> Any:
    if name == "numpy":
        return array.copy()
    if name == "torch":
        import torch

        return torch.as_tensor(array.copy())
    import jax.numpy as jnp

    return jnp.asarray(array)
