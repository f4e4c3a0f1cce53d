"""``flatten_batch``/``unflatten_batch`` (Gymnasium's one-hot flattening) on torch and JAX.

The flattening is the NumPy one's, decided once: the space's plan (:mod:`spacealg.core.plan`)
splits and joins the batch, and each leaf's segment (:mod:`spacealg.core.flat`: width,
offsets, lows, dtype) gives its batch rule, written once over an array kernel for NumPy's
codec and these alike (``RavelSegment.values``, ``OneHotSegment.columns``/``positions``/``values``).
What is left here is what the Array API lacks: the one-hot scatter, and a finite set's
positions by exact value (:mod:`~spacealg.backends.sets`; NumPy finds labels by lookup,
which tensors cannot hold).

Laws: value for value and dtype for dtype equal to the NumPy path
(``to_numpy(flatten_batch(xs, s)) == flatten_batch(to_numpy(xs), s)``);
``unflatten_batch(flatten_batch(xs, s), s) == xs``. A value outside a one-hot range (or a
float that is no integer there) or a row that is not one-hot raises ValueError, except
under ``jax.jit`` where values cannot be read (there such a value sets no bit, and a zero
segment reads as its first value).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from spacealg.backends.arrays import backend_name, backend_named
from spacealg.backends.kernel import BackendKernel
from spacealg.backends.sets import held, hits
from spacealg.backends.shapes import batch_lead, leaf_dtypes
from spacealg.core.flat import RavelSegment, segment
from spacealg.core.leaf import LeafModel
from spacealg.core.plan import Plan, plan_for

__all__ = ["flatten_batch_on", "unflatten_batch_on"]


class _Layout:
    """The flat vector of a space of leaves: its leaves' segments (the plan's leaf order), its
    width and its dtype (the products' promotion, part by part, as NumPy's codec promotes)."""

    def __init__(self, plan: Plan) -> None:
        self.segments = [segment(model) for model in plan.leaves]
        self.dim = sum(s.dim for s in self.segments)
        if not self.segments:
            raise ValueError(f"flatten_batch: {plan.space!r} cannot be flattened to one array "
                             "(an empty product has no flat dtype, as in Gymnasium)")
        self.dtype = self._promoted(plan.structure)

    def _promoted(self, node: Any) -> np.dtype:
        if isinstance(node, (tuple, dict)):
            return np.result_type(*map(self._promoted, node.values() if isinstance(node, dict) else node))
        return self.segments[node].dtype


def _layout(plan: Plan) -> _Layout:
    return plan.variant(("flat layout",), lambda: _Layout(plan))  # type: ignore[no-any-return]


def flatten_batch_on(name: str, xs: Any, space: Any) -> Any:
    """The ``(*batch, flatdim)`` array of a torch/JAX batch ``xs`` of ``space``."""
    plan = plan_for(space, name, "flatten_batch")
    parts = plan.check(xs, "flatten_batch")
    leads = [batch_lead(model, b, "flatten_batch") for model, b in zip(plan.leaves, parts)]
    if any(lead != leads[0] for lead in leads):
        raise ValueError(f"flatten_batch: the component batches of {space!r} have different batch shapes")
    dtypes = leaf_dtypes(plan, parts, "flatten_batch")
    run = plan.variant(("flatten_batch", dtypes, *BackendKernel.key_of(name, parts)),
                       lambda: _flattener(BackendKernel.for_program(name, parts), plan, space))
    flat, bad = run(parts)
    _raise_at(bad, "flatten_batch: a value is not a member of {}", plan)
    return flat


def _flattener(k: BackendKernel, plan: Plan, space: Any) -> Any:
    """``run(parts) -> (flat, bad)``: the flat rows and, for one program (eager JAX), per leaf
    whether a value is no member, read after it ran (:func:`_raise_at`); ``bad`` is None
    otherwise: torch reads each one-hot leaf before its scatter (:func:`_flatten_leaf`), and
    under ``jit`` nothing can be read."""
    layout = _layout(plan)
    out = k.backend.dtype(layout.dtype, None, None, space)
    xp = k.xp
    flag = k.backend.dtype(np.dtype(bool))

    def run(parts: tuple[Any, ...]) -> tuple[Any, Any]:
        lead = tuple(parts[0].shape[: len(parts[0].shape) - len(plan.leaves[0].shape)])
        n = math.prod(lead)
        pieces, bads = [], []
        for model, part, b in zip(plan.leaves, layout.segments, parts):
            piece, bad = _flatten_leaf(k, model, part, xp.reshape(b, (n, model.size)), out)
            pieces.append(piece)
            if k.program:
                bads.append(xp.any(bad) if bad is not None else k.zeros((), flag))
        joined = pieces[0] if len(pieces) == 1 else xp.concat(pieces, axis=-1)
        return xp.reshape(joined, (*lead, layout.dim)), (xp.stack(bads) if bads else None)

    return k.compiled(run)


def _raise_at(flags: Any, message: str, plan: Plan) -> None:
    """ValueError (``message`` formatted with the leaf's space) for the first leaf whose flag
    is True; nothing where there are no flags, or they cannot be read (traced, abstract)."""
    if flags is None:
        return
    backend = backend_named(backend_name(flags) or "numpy")
    if backend.is_traced(flags) or getattr(flags, "is_meta", False):
        return
    if bool(flags.any()):
        first = int(np.argmax(np.asarray(flags.tolist(), dtype=bool)))
        raise ValueError(message.format(repr(plan.leaves[first].space)))


def _flatten_leaf(k: BackendKernel, model: LeafModel, seg: Any, rows: Any, out: Any) -> tuple[Any, Any]:
    if isinstance(seg, RavelSegment):
        return k.xp.astype(seg.values(k, model, rows), out), None
    if model.items is None:
        columns, bad = seg.columns(k, model, rows)
    else:
        index, bad = _index_of(k, model, rows)
        columns = index + k.const(model, "flat_starts", lambda: seg.offsets, k.widest_int())
    if not k.program and k.any_true(bad):  # read before the scatter (torch refuses a column out of range)
        raise ValueError(f"flatten_batch: a value is not a member of {model.space!r}")
    return k.onehot(columns, seg.dim, out), bad


def _index_of(k: BackendKernel, leaf: LeafModel, rows: Any) -> tuple[Any, Any]:
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
    plan = plan_for(space, name, "unflatten_batch")
    dim = _layout(plan).dim
    if len(vs.shape) < 1 or vs.shape[-1] != dim:
        raise ValueError(f"unflatten_batch: expected an array (*batch, {dim}), got shape {tuple(vs.shape)}")
    parts = (vs,)
    run = plan.variant(("unflatten_batch", vs.dtype, *BackendKernel.key_of(name, parts)),
                       lambda: _unflattener(BackendKernel.for_program(name, parts), plan, space))
    values, missing = run(vs)
    _raise_at(missing, "unflatten_batch: a row is not a concatenation of one-hot vectors ({})", plan)
    return plan.join(values)


def _unflattener(k: BackendKernel, plan: Plan, space: Any) -> Any:
    """``run(vs) -> (leaf values, missing)``: per leaf, whether a one-hot segment has no hot
    entry (read after it, as :func:`_flattener`'s flags)."""
    layout = _layout(plan)
    dim, xp = layout.dim, k.xp
    flag = k.backend.dtype(np.dtype(bool))

    def run(vs: Any) -> tuple[list[Any], Any]:
        lead = tuple(vs.shape[:-1])
        rows = xp.reshape(vs, (math.prod(lead), dim))
        values, missing, start = [], [], 0
        for model, part in zip(plan.leaves, layout.segments):
            segment = rows[:, start : start + part.dim]
            start += part.dim
            value, found = _read_leaf(k, model, part, segment)
            values.append(xp.reshape(value, (*lead, *model.shape)))
            missing.append(~found if found is not None else k.zeros((), flag))
        return values, xp.stack(missing)

    return k.compiled(run)


def _read_leaf(k: BackendKernel, model: LeafModel, seg: Any, rows: Any) -> tuple[Any, Any]:
    if isinstance(seg, RavelSegment):
        return seg.values(k, model, rows), None
    index, found = seg.positions(k, model, rows)
    if model.items is None:
        return seg.values(k, model, index), found
    items = model.numbers if model.numbers is not None else np.asarray(model.items, dtype=np.int64)
    return k.const(model, "item_values", lambda: items, k.native(model, items.dtype))[index], found
