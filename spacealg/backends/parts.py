"""Products whose leaves take different routes on torch and JAX: leaf by leaf.

A kind that answers the batched operations with its own rule (``OneHot``,
:func:`spacealg.core.arrays.register_kind_rule`), and a ``Masked`` space, have no leaf model
for the per-leaf plans of :mod:`spacealg.backends`. A product holding such a leaf beside
ordinary leaves is served here: its plan splits the batch into leaf values, each leaf value
goes to the generic function with its leaf space (its own route: the kind's rule, the masked
draws, or the plan of that leaf alone), and the plan joins the results. Which leaves are
such is decided once per space (:func:`rule_leaves`).

Laws, for a product ``s`` holding such a leaf and a torch/JAX batch ``xs`` of it:
``isin(xs, s)`` is the ``&`` of its leaves' ``isin``; ``clamp``/``sample`` are the leaves'
joined; ``clamp_`` is all or nothing (every leaf is clamped on a copy before any is
written); ``flatten_batch`` concatenates the leaves' flattenings in the plan's leaf order,
in the NumPy flattening's dtype, and ``unflatten_batch`` reads them back. Each equals the
NumPy path value for value after moving to NumPy, as the single-route plans do.
"""

from __future__ import annotations

from typing import Any

from spacealg.backends.arrays import backend_named
from spacealg.backends.kernel import BackendKernel
from spacealg.core import protocol
from spacealg.core.arrays import backend_name, kind_rule
from spacealg.core.generic import as_space
from spacealg.core.leaf import leaf as leaf_model
from spacealg.core.plan import plan_for
from spacealg.ops.flatten import flatten_batch, leaf_codecs, unflatten_batch
from spacealg.spaces.masked import holds_masked

__all__ = ["by_leaves", "rule_leaves", "split_rng"]


def rule_leaves(space: Any, masked: bool = False) -> tuple[bool, ...]:
    """Per leaf of ``space`` (its plan's order), whether the leaf takes a route of its own: its
    kind has a rule of its own, or (``masked``) it holds a ``Masked`` part, which no per-leaf
    plan has a leaf for; empty where none does (or ``space`` is itself a leaf): the per-leaf
    plans serve it. Asked once per space and operation (the plan keeps the route,
    :func:`spacealg.core.plan.route`)."""
    plan = plan_for(space)
    if not isinstance(plan.structure, (tuple, dict)):
        return ()
    flags = tuple(_has_rule(leaf) or (masked and holds_masked(leaf)) for leaf in plan.leaf_spaces())
    return flags if any(flags) else ()


def _has_rule(space: Any) -> bool:
    """Whether ``space``'s kind answers by a rule of its own, having no leaf model for the plans."""
    try:
        space = as_space(space)
    except TypeError:
        return False
    return leaf_model(space) is None and kind_rule("isin", type(space)) is not None


def by_leaves(operation: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``operation`` (``sample``, ``isin``, ``clamp``, ``clamp_``, ``flatten_batch``,
    ``unflatten_batch``) of a product holding a rule leaf, leaf by leaf (see the module)."""
    if operation == "sample":
        space, size = args[0], (args[1] if len(args) > 1 else kwargs.get("size"))
        extra = {key: value for key, value in kwargs.items() if key not in ("rng", "size") and value is not None}
        if extra:
            raise TypeError(f"sample: {sorted(extra)} are not supported with a {name} rng")
        plan = plan_for(space)
        leaves = plan.leaf_spaces()
        keys = split_rng(name, kwargs["rng"], len(leaves))
        return plan.join([protocol.sample(leaf, size, rng=key) for leaf, key in zip(leaves, keys)])
    values, space = args[0], args[1]
    if operation == "clamp_" and name == "jax":  # before any check of the batch, as every JAX clamp_
        raise TypeError("clamp_: JAX arrays are immutable; use clamp")
    plan = plan_for(space)
    leaves = plan.leaf_spaces()
    if operation == "unflatten_batch":
        return plan.join(_unflattened(values, space, leaves))
    parts = _on_backend(name, plan.check(values, operation))
    if operation == "isin":
        answers = [protocol.isin(part, leaf) for part, leaf in zip(parts, leaves)]
        _same_leads([tuple(a.shape) for a in answers], operation, space)
        inside = answers[0]
        for answer in answers[1:]:
            inside = inside & answer
        return inside
    if operation == "clamp":
        return plan.join([protocol.clamp(part, leaf) for part, leaf in zip(parts, leaves)])
    if operation == "clamp_":
        # every leaf clamped on a copy first: a leaf that raises leaves the batch untouched
        staged = [protocol.clamp_(part.clone(), leaf) for part, leaf in zip(parts, leaves)]
        for part, done in zip(parts, staged):
            part.copy_(done)
        return values
    if operation == "flatten_batch":
        pieces = [flatten_batch(part, leaf) for part, leaf in zip(parts, leaves)]
        _same_leads([tuple(p.shape[:-1]) for p in pieces], operation, space)
        backend = backend_named(name)
        xp = _xp(name)
        dtype = backend.dtype(_flat_dtype(space), None, None, space)
        return xp.concat([xp.astype(p, dtype) for p in pieces], axis=-1)
    raise ValueError(f"by_leaves: no operation {operation!r}")


def _on_backend(name: str, parts: tuple[Any, ...]) -> tuple[Any, ...]:
    """The leaf batches, each an array of the backend: TypeError for a torch batch with a
    leaf that is no tensor (as the per-leaf plans say it); JAX takes NumPy leaves, as arrays."""
    BackendKernel.for_parts(name, parts)
    if name != "jax":
        return parts
    xp = _xp(name)
    return tuple(p if backend_name(p) == "jax" else xp.asarray(p) for p in parts)


def _unflattened(vs: Any, space: Any, leaves: list[Any]) -> list[Any]:
    _, codecs = leaf_codecs(space)
    dim = sum(codec.dim for codec in codecs)
    if len(vs.shape) < 1 or vs.shape[-1] != dim:
        raise ValueError(f"unflatten_batch: expected an array (*batch, {dim}), got shape {tuple(vs.shape)}")
    values, start = [], 0
    for leaf, codec in zip(leaves, codecs):
        values.append(unflatten_batch(vs[..., start : start + codec.dim], leaf))
        start += codec.dim
    return values


def _same_leads(leads: list[tuple[int, ...]], operation: str, space: Any) -> None:
    if any(lead != leads[0] for lead in leads):
        raise ValueError(f"{operation}: the component batches of {space!r} have different batch shapes")


def _flat_dtype(space: Any) -> Any:
    return leaf_codecs(space)[0].dtype


def _xp(name: str) -> Any:
    return BackendKernel(backend_named(name), None).xp


def split_rng(name: str, rng: Any, n: int) -> list[Any]:
    """``n`` generators for ``n`` parts: the torch generator itself, or ``n`` new JAX keys."""
    if name != "jax":
        return [rng] * n
    import jax

    return list(jax.random.split(rng, n)) if n else []
