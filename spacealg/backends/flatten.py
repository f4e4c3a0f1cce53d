"""``flatten_batch``/``unflatten_batch`` (Gymnasium's one-hot flattening) on torch and JAX.

The flattening is the NumPy one's, run by the one flatten driver (:func:`~spacealg.core.flat.flattener`,
:func:`~spacealg.core.flat.unflattener`: compiled per kernel and layout) that NumPy's flat codec runs: the space's plan
(:mod:`spacealg.core.plan`) splits and joins the batch, each leaf with a leaf model is its
segment, and a leaf without one (``OneHot``, ``Masked``, ...) a part flattened by its own
rules on the batch's backend. What is left here is the batch's kernel, the compiled
variants (one ``jax.jit`` program where every leaf has a leaf model) and a finite set's
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

from typing import Any

import numpy as np

from spacealg.backends.arrays import backend_name, backend_named
from spacealg.backends.kernel import BackendKernel
from spacealg.backends.sets import held, hits
from spacealg.backends.shapes import leaf_dtypes
from spacealg.core.flat import Layout, flattener, segment, unflattener
from spacealg.core.kernel import Kernel
from spacealg.core.leaf import LeafModel, leaf
from spacealg.core.plan import ObjectBatchError, Plan, array_leaf, plan_for
from spacealg.ops.flatten import flat_part, flatten_batch, unflatten_batch

__all__ = ["flatten_batch_on", "unflatten_batch_on"]


def _layout(plan: Plan, name: str, what: str) -> Layout:
    """The flat vector of the plan's space on torch/JAX: a leaf's segment where it has a leaf
    model, else a part flattened by its own rules there (:func:`~spacealg.ops.flatten.flat_part`).
    TypeError naming ``what`` and the backend for a leaf whose batches are object arrays."""
    def build() -> Layout:
        pieces = [segment(array_leaf(s)) if leaf(s) is not None else flat_part(s, what, flatten_batch, unflatten_batch)
                  for s in plan.leaf_spaces()]
        return Layout(pieces, flat_part(plan.space, what).dtype)

    try:
        return plan.variant(("flat layout", name), build)  # type: ignore[no-any-return]
    except ObjectBatchError as error:
        raise TypeError(f"{what} on {name}: {error}") from None


def _kernel(name: str, layout: Layout, parts: tuple[Any, ...]) -> BackendKernel:
    """The kernel of a call: one program (eager JAX) where every leaf has a leaf model; a
    part's own rules are no part of one program."""
    return BackendKernel.for_program(name, parts) if layout.modelled else BackendKernel.for_parts(name, parts)


def flatten_batch_on(name: str, xs: Any, space: Any) -> Any:
    """The ``(*batch, flatdim)`` array of a torch/JAX batch ``xs`` of ``space``."""
    plan = plan_for(space)
    layout = _layout(plan, name, "flatten_batch")
    parts = plan.check(xs, "flatten_batch")
    if name == "jax" and not layout.modelled:  # JAX takes NumPy leaves, as arrays
        parts = tuple(p if backend_name(p) == "jax" else backend_named(name).from_host(np.asarray(p)) for p in parts)
    dtypes = leaf_dtypes(plan, parts, "flatten_batch") if layout.modelled else None

    def build() -> Any:
        k = _kernel(name, layout, parts)
        out = k.dtype(layout.dtype, None, None, space)
        return k.compiled(flattener(k, layout, out, _index_of))

    run = plan.variant(("flatten_batch", dtypes, *BackendKernel.key_of(name, parts)), build)
    try:
        flat, bad = run(parts)
    except ValueError as error:
        raise ValueError(f"flatten_batch: {error}") from None
    _raise_at(bad, "flatten_batch: a value is not a member of {}", layout)
    return flat


def _raise_at(flags: Any, message: str, layout: Layout) -> None:
    """ValueError (``message`` formatted with the leaf's space) for the first leaf whose flag
    is True; nothing where there are no flags, or they cannot be read (traced, abstract)."""
    if flags is None:
        return
    name = backend_name(flags)
    if (name is not None and backend_named(name).is_traced(flags)) or getattr(flags, "is_meta", False):
        return
    if bool(flags.any()):
        first = int(np.argmax(np.asarray(flags.tolist(), dtype=bool)))
        raise ValueError(message.format(repr(layout.space_of(first))))


def _index_of(k: Kernel, leaf: LeafModel, rows: Any) -> tuple[Any, Any]:
    """Each entry's position among the base's items (elements order) and where none matches:
    compared with the items the rows' dtype holds exactly (:mod:`~spacealg.backends.sets`)."""
    xp = k.xp
    dtype = rows.dtype
    if k.kind_of(dtype) == "b":
        dtype = k.native(leaf, np.uint8)
        rows = xp.astype(rows, dtype)
    _, positions = held(leaf, k.numpy_dtype(dtype))
    matches = hits(k, leaf, dtype)(rows)
    found = xp.any(matches, axis=-1)
    wide = k.widest_int()
    at = xp.argmax(xp.astype(matches, k.native(leaf, np.int8)), axis=-1) if positions.size else xp.astype(found, wide)
    index = k.const(leaf, ("held_positions", str(dtype)),
                    lambda: positions if positions.size else np.zeros(1, np.int64), wide)
    return index[xp.astype(at, wide)], ~found


def unflatten_batch_on(name: str, vs: Any, space: Any) -> Any:
    """The batch of ``space`` whose flattenings are the rows of the torch/JAX array ``vs``."""
    plan = plan_for(space)
    layout = _layout(plan, name, "unflatten_batch")
    if len(vs.shape) < 1 or vs.shape[-1] != layout.dim:
        raise ValueError(f"unflatten_batch: expected an array (*batch, {layout.dim}), got shape {tuple(vs.shape)}")
    parts = (vs,)

    def build() -> Any:
        k = _kernel(name, layout, parts)
        return k.compiled(unflattener(k, layout))

    run = plan.variant(("unflatten_batch", vs.dtype, *BackendKernel.key_of(name, parts)), build)
    try:
        values, missing = run(vs)
    except ValueError as error:
        raise ValueError(f"unflatten_batch: {error}") from None
    _raise_at(missing, "unflatten_batch: a row is not a concatenation of one-hot vectors ({})", layout)
    return plan.join(values)
