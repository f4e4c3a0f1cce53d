"""``flatten_batch``/``unflatten_batch`` (Gymnasium's one-hot flattening) on torch and JAX.

The flattening of each leaf is the one of :mod:`spacealg.ops.flatten`'s table, read from
the leaf's ``flat`` rule: ``ravel`` (Box, Interval, MultiBinary as int8, arrays of open
intervals as float64) or a one-hot per entry, of ``x - low`` (``onehot``: Discrete,
MultiDiscrete, Categorical) or of the item's index (``index``: finite sets, stepped
ranges). A product concatenates its leaves in the promoted dtype.

Laws: value for value and dtype for dtype equal to the NumPy path
(``to_numpy(flatten_batch(xs, s)) == flatten_batch(to_numpy(xs), s)``);
``unflatten_batch(flatten_batch(xs, s), s) == xs``. A value outside a one-hot range or a
row that is not one-hot raises ValueError, except under ``jax.jit`` where values cannot be
read (there such a value sets no bit, and a zero segment reads as its first value).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from spacealg.backends.kernel import Kernel
from spacealg.backends.leaves import first_array, map_tree, tree_for, tree_values
from spacealg.backends.sets import held, hits
from spacealg.backends.shapes import batch_lead
from spacealg.core.leaf import LeafModel

__all__ = ["flatten_batch_on", "unflatten_batch_on"]


def _width(leaf: LeafModel) -> int:
    """Entries of the flat vector taken by ``leaf``."""
    if leaf.flat == "ravel":
        return leaf.size
    if leaf.flat == "onehot":
        return int(leaf.widths().sum())
    return leaf.size * _count(leaf)


def _count(leaf: LeafModel) -> int:
    """Items of an ``index`` leaf's base."""
    return len(leaf.items or ())


def flat_dtype(tree: Any) -> np.dtype:
    return np.result_type(*[leaf.dtype for leaf in tree_values(tree)])


def flatten_batch_on(name: str, xs: Any, space: Any) -> Any:
    """The ``(*batch, flatdim)`` array of a torch/JAX batch ``xs`` of ``space``."""
    tree = tree_for(space, name, "flatten_batch")
    k = Kernel.for_array(name, first_array(xs))
    out_dtype = k.backend.dtype(flat_dtype(tree), None, None, space)
    leads: list[tuple[int, ...]] = []

    def flat(leaf: LeafModel, b: Any) -> Any:
        lead = batch_lead(leaf, b, "flatten_batch")
        leads.append(lead)
        return _flatten_leaf(k, leaf, k.xp.reshape(b, (math.prod(lead), leaf.size)), out_dtype)

    parts = tree_values(map_tree(flat, tree, xs, what="flatten_batch"))
    if any(lead != leads[0] for lead in leads):
        raise ValueError(f"flatten_batch: the component batches of {space!r} have different batch shapes")
    joined = parts[0] if len(parts) == 1 else k.xp.concat(parts, axis=-1)
    return k.xp.reshape(joined, (*leads[0], int(joined.shape[-1])))


def _flatten_leaf(k: Kernel, leaf: LeafModel, rows: Any, out: Any) -> Any:
    xp = k.xp
    if leaf.flat == "ravel":
        return xp.astype(xp.astype(rows, k.native(leaf, leaf.dtype)), out)
    if leaf.flat == "onehot":
        widths = leaf.widths().reshape(-1).astype(np.int64)
        wide = k.widest_int()
        low = k.const(leaf, "flat_low", lambda: leaf.value_low.reshape(-1), wide)
        offset = xp.astype(xp.round(rows), wide) if k.kind(rows) == "f" else xp.astype(rows, wide)
        offset = offset - low
        bad = (offset < 0) | (offset >= k.const(leaf, "flat_widths", lambda: widths, wide))
        starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    else:
        offset, bad = _index_of(k, leaf, rows)
        starts = np.arange(leaf.size) * _count(leaf)
    if k.any_true(bad):
        raise ValueError(f"flatten_batch: a value is not a member of {leaf.space!r}")
    positions = offset + k.const(leaf, "flat_starts", lambda: starts, k.widest_int())
    return k.onehot(positions, _width(leaf), out)


def _index_of(k: Kernel, leaf: LeafModel, rows: Any) -> tuple[Any, Any]:
    """Each entry's position among the base's items (elements order) and where none matches:
    compared with the items the rows' dtype holds exactly (:mod:`~spacealg.backends.sets`)."""
    xp = k.xp
    dtype = rows.dtype
    if k.kind_of(dtype) == "b":
        dtype = k.native(leaf, np.uint8)
        rows = xp.astype(rows, dtype)
    _, positions = held(leaf, k.backend.numpy_dtype(dtype))
    matches = hits(k, leaf, dtype)(rows)
    found = xp.any(matches, axis=-1)
    wide = k.widest_int()
    at = xp.argmax(xp.astype(matches, k.native(leaf, np.int8)), axis=-1) if positions.size else xp.astype(found, wide)
    index = k.const(leaf, ("held_positions", str(dtype)),
                    lambda: positions if positions.size else np.zeros(1, np.int64), wide)
    return index[xp.astype(at, wide)], ~found


def unflatten_batch_on(name: str, vs: Any, space: Any) -> Any:
    """The batch of ``space`` whose flattenings are the rows of the torch/JAX array ``vs``."""
    tree = tree_for(space, name, "unflatten_batch")
    k = Kernel.for_array(name, vs)
    dim = sum(_width(leaf) for leaf in tree_values(tree))
    if len(vs.shape) < 1 or vs.shape[-1] != dim:
        raise ValueError(f"unflatten_batch: expected an array (*batch, {dim}), got shape {tuple(vs.shape)}")
    lead = tuple(vs.shape[:-1])
    rows = k.xp.reshape(vs, (math.prod(lead), dim))
    start = [0]

    def read(leaf: LeafModel) -> Any:
        width = _width(leaf)
        segment = rows[:, start[0] : start[0] + width]
        start[0] += width
        values = _read_leaf(k, leaf, segment)
        return k.xp.reshape(values, (*lead, *leaf.shape))

    return map_tree(read, tree)


def _read_leaf(k: Kernel, leaf: LeafModel, segment: Any) -> Any:
    xp = k.xp
    if leaf.flat == "ravel":
        return xp.astype(segment, k.native(leaf, leaf.dtype))
    n = segment.shape[0]
    hot = segment != 0
    if leaf.flat == "onehot":
        widths = leaf.widths().reshape(-1).astype(np.int64)
        if leaf.size and (widths == widths[0]).all():
            per_entry = xp.reshape(hot, (n, leaf.size, int(widths[0])))
            found = xp.all(xp.any(per_entry, axis=-1))
            k_index = xp.argmax(xp.astype(per_entry, k.native(leaf, np.int8)), axis=-1)
        else:
            starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
            columns, ok = [], []
            for s, w in zip(starts, widths):
                part = hot[:, int(s) : int(s + w)]
                ok.append(xp.all(xp.any(part, axis=-1)))
                columns.append(xp.argmax(xp.astype(part, k.native(leaf, np.int8)), axis=-1))
            found = xp.all(xp.stack(ok)) if ok else True
            k_index = xp.stack(columns, axis=-1) if columns else k.zeros((n, 0), k.widest_int())
        if not k.traced and not bool(found):
            raise ValueError("unflatten_batch: a row is not a concatenation of one-hot vectors")
        low = k.const(leaf, "flat_low", lambda: leaf.value_low.reshape(-1), k.widest_int())
        return xp.astype(xp.astype(k_index, k.widest_int()) + low, k.native(leaf, leaf.dtype))
    count = _count(leaf)
    per_entry = xp.reshape(hot, (n, leaf.size, count))
    if not k.traced and not bool(xp.all(xp.any(per_entry, axis=-1))):
        raise ValueError("unflatten_batch: a row is not a concatenation of one-hot vectors")
    positions = xp.argmax(xp.astype(per_entry, k.native(leaf, np.int8)), axis=-1)
    items = leaf.numbers if leaf.numbers is not None else np.asarray(leaf.items, dtype=np.int64)
    values = k.const(leaf, "item_values", lambda: items, k.native(leaf, items.dtype))
    return values[positions]
