"""Per-space plans: what a batched operation decides about a space, decided once.

A call of ``sample``/``isin``/``clamp`` on torch or JAX used to walk the space's tree and
re-derive, per leaf and per call, the same dtypes, bounds, constants and kernels: tens of
microseconds of Python that a small batch (a few thousand rows) pays on every call. A
:class:`Plan` keeps those decisions. There is one plan per space, kept in the package's
one cache (:class:`~spacealg.core.cache.IdentityCache`, keyed by the space's identity),
and it holds:

* ``tree``: the space as a tree of :class:`~spacealg.core.leaf.LeafModel`;
* ``split(batch)``: the batch's leaf arrays as a tuple, depth first, or None when the
  batch does not have the tree's structure (a generated function, :mod:`spacealg.core.codegen`);
* ``join(parts)``: the inverse, a batch of the tree's structure from the leaf arrays;
* ``variants``: one compiled function per operation, backend, device, dtype policy and
  leaf dtypes (what the operation modules build on first use, with every decision made).

Laws: ``plan.split(plan.join(parts)) == parts`` and ``plan.join(plan.split(b))`` has
``b``'s structure; two spaces never share a plan (identity keys); a plan's entry is dropped
with its space (weak keys; a leaf space's plan refers to it and lives until the cache's
bounds evict it, as the cache rule says), and its weight (the bounds' bytes) is measured
again, device constants included, whenever a variant is added.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.leaves import ObjectBatchError, map_tree, space_tree, tree_values
from spacealg.core.cache import IdentityCache, footprint
from spacealg.core.codegen import Generator
from spacealg.core.leaf import LeafModel

__all__ = ["MAX_VARIANTS", "Plan", "plan_for", "variant"]

#: Compiled variants kept per plan (first in, first out): a space meets few dtypes and devices.
MAX_VARIANTS = 32


class Plan:
    """The tree of one space, its generated ``split``/``join``, and its compiled variants."""

    def __init__(self, space: Any) -> None:
        self.tree = space_tree(space)
        self.leaves: list[LeafModel] = tree_values(self.tree)
        # a plain dict/list standing for a space is never cached (its content can change):
        # its plan serves one call, so it walks the tree instead of compiling code
        kept = not isinstance(space, (dict, list, set))
        self.split, self.join = _structure(self.tree, space) if kept else _walkers(self.tree)
        self.variants: dict[Any, Any] = {}

    def check(self, batch: Any, what: str) -> tuple[Any, ...]:
        """``split(batch)``; ValueError naming ``what`` when the structure is not the tree's."""
        parts = self.split(batch)
        if parts is None:
            map_tree(_nothing, self.tree, batch, what=what)  # raises the message naming the structure
            raise ValueError(f"{what}: the batch does not have the structure of the space")
        return parts  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<Plan of {len(self.leaves)} leaves, {len(self.variants)} variants>"


def _nothing(*args: Any) -> None:
    return None


_PLANS: IdentityCache[Plan] = IdentityCache("backend plans", max_entries=4096, weigh=lambda p: _weigh(p))


def plan_for(space: Any, name: str | None = None, what: str | None = None) -> Plan:
    """The plan of ``space``, kept under the package's one cache rule.

    With ``name``/``what``, the TypeError for a kind with object batches names the kind,
    the operation and the backend.
    """
    try:
        return _PLANS.get_or_compute(space, Plan)
    except ObjectBatchError as error:
        if what is None:
            raise
        raise TypeError(f"{what} on {name}: {error}") from None


def variant(space: Any, plan: Plan, key: Any, build: Callable[[], Any]) -> Any:
    """The compiled function ``build()`` of ``plan`` under ``key``, built on first use.

    A new variant re-weighs the plan's cache entry (its device constants included), so the
    cache's byte bound holds what plans keep.
    """
    function = plan.variants.get(key)
    if function is None:
        function = build()
        if len(plan.variants) >= MAX_VARIANTS:
            plan.variants.pop(next(iter(plan.variants)))
        plan.variants[key] = function
        if _PLANS.get(space) is plan:
            _PLANS.put(space, plan)
    return function


def _weigh(plan: Any) -> int:
    """The plan's footprint, plus the bytes of the device constants its leaves keep (and a
    held key's footprint)."""
    if not isinstance(plan, Plan):
        return footprint(plan)
    extra = 0
    for leaf in plan.leaves:
        for value in leaf.cache.values():
            for item in value if isinstance(value, tuple) else (value,):
                if not isinstance(item, np.ndarray):
                    extra += int(getattr(item, "nbytes", 0) or 0)
    return footprint(plan) + extra


def _walkers(tree: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """``split`` and ``join`` walking ``tree`` (no code generated)."""

    def split(batch: Any) -> Any:
        parts: list[Any] = []
        try:
            map_tree(lambda leaf, b: parts.append(b), tree, batch)
        except ValueError:
            return None
        return tuple(parts)

    def join(parts: Any) -> Any:
        items = iter(parts)
        return map_tree(lambda leaf: next(items), tree)

    return split, join


def _structure(tree: Any, space: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """Generated ``split`` and ``join`` for ``tree`` (straight-line code, no tree walking)."""
    gen = Generator(f"the backends' plan of {space!r}")
    gen.namespace["_isinstance"] = isinstance
    gen.namespace["_tuple_list"] = (tuple, list)
    gen.namespace["_dict"] = dict
    counter = [0]
    leaves: list[str] = []

    def walk(node: Any, var: str) -> str:
        """Lines checking ``var`` against ``node``; returns the join expression of ``node``."""
        if isinstance(node, LeafModel):
            leaves.append(var)
            return f"p[{len(leaves) - 1}]"
        items = list(enumerate(node)) if isinstance(node, tuple) else list(node.items())
        if isinstance(node, tuple):
            gen.line(f"if not _isinstance({var}, _tuple_list) or len({var}) != {len(node)}: return None")
        else:
            keys = gen.bind(frozenset(node))
            gen.line(f"if not _isinstance({var}, _dict) or {var}.keys() != {keys}: return None")
        parts = []
        for key, child in items:
            counter[0] += 1
            sub = f"x{counter[0]}"
            gen.line(f"{sub} = {var}[{gen.key(key)}]")
            expression = walk(child, sub)
            parts.append(expression if isinstance(node, tuple) else f"{gen.key(key)}: {expression}")
        if isinstance(node, tuple):
            return "(" + "".join(f"{p}, " for p in parts) + ")"
        return "{" + ", ".join(parts) + "}"

    joined = walk(tree, "x")
    gen.line(f"return ({''.join(f'{v}, ' for v in leaves)})")
    split = gen.function("def split(x):")
    join = gen.function("def join(p):", [f"return {joined}"])
    return split, join
