"""What the kinds' modules share: a kind's table of its own protocol rules, and the small
decisions every composite kind makes the same way.

``register(Kind, contains=..., sample=..., ...)`` registers each rule on the protocol
function of its name (:mod:`spacealg.core.protocol`), so that a kind's module ends with its
rule table, read top to bottom; ``register_batched(Kind, {"isin": ...}, isin=..., ...)`` likewise
its batched rules over a kernel, with their NumPy entries (:func:`spacealg.core.arrays.register_kind_rule`;
``on_numpy`` makes the rules themselves the entries);
``register_infinite``/``register_unshaped`` are the rules of kinds without ``elements`` or
without array members; ``clamp_into`` the ``clamp_`` rule of kinds whose ``clamp`` is a
batched rule; ``leaf_model`` a leaf space's model, kept in its plan; ``shown`` a component
as ``repr`` shows it; ``once`` a value computed once per (immutable) space; ``decided`` a
question a space may leave open (False where it raises
TypeError, ValueError or OverflowError).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.core import protocol
from spacealg.core.arrays import register_kind_rule
from spacealg.core.generic import as_space
from spacealg.core.kernel import NUMPY, Kernel
from spacealg.core.leaf import LeafModel, leaf
from spacealg.core.plan import kept_plan, variant_of
from spacealg.core.rng import as_generator

__all__ = ["clamp_into", "decided", "empty", "leaf_model", "on_numpy", "once", "register", "register_batched",
           "register_infinite", "register_unshaped", "shown"]


def register(cls: type, **rules: Callable[..., Any]) -> None:
    """Register each of ``rules`` for ``cls`` on the protocol function it is named after."""
    for name, rule in rules.items():
        getattr(protocol, name).register(cls)(rule)


def register_batched(cls: type, numpy: dict[str, Callable[..., Any]] | None = None,
                     **rules: Callable[..., Any]) -> None:
    """Register each of ``rules`` as ``cls``'s batched rule (over a kernel) of the operation it
    is named after, with ``numpy[operation]`` as its NumPy entry where given (else NumPy's calls
    take the rule over NumPy's kernel)."""
    for operation, rule in rules.items():
        register_kind_rule(operation, cls, rule, numpy=(numpy or {}).get(operation))


def on_numpy(**rules: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """Each of ``rules`` as its own NumPy entry (for :func:`register_batched`'s ``numpy``): over
    NumPy's kernel, ``sample``'s drawing from ``as_generator(rng)``; so NumPy's calls take the
    kind's rule even where a backend registers a wrapper of it as the rule (the products')."""

    def entry(operation: str, rule: Callable[..., Any]) -> Callable[..., Any]:
        if operation != "sample":
            return functools.partial(rule, NUMPY)

        def drawn(space: Any, size: Any = None, *, rng: Any = None, **extra: Any) -> Any:
            return rule(_Drawing(as_generator(rng)), space, size, rng=rng, **extra)

        return drawn

    return {operation: entry(operation, rule) for operation, rule in rules.items()}


def register_infinite(cls: type, why: str = "") -> None:
    """Spaces of class ``cls`` are infinite: ``cardinality`` is ``inf`` and ``elements``,
    ``index`` and ``element`` raise TypeError (saying ``why``, where given)."""

    def not_finite(*args: Any) -> Any:
        raise TypeError(f"{args[-1]!r} is not finite{why}: it has no elements/index/element")

    register(cls, cardinality=lambda space: math.inf, elements=not_finite, index=not_finite, element=not_finite)


def register_unshaped(cls: type, members: str) -> None:
    """Members of class ``cls`` are ``members``, not arrays: ``elsize`` and ``bounds`` raise TypeError."""

    def no_elsize(space: Any) -> Any:
        raise TypeError(f"elsize: members of {space!r} are {members}, not arrays")

    def no_bounds(space: Any) -> Any:
        raise TypeError(f"bounds: {space!r} has no bounds (its members are {members})")

    register(cls, elsize=no_elsize, bounds=no_bounds)


def leaf_model(space: Any) -> LeafModel:
    """The :func:`~spacealg.core.leaf.leaf` model of a leaf space, built on first use and kept
    as a variant of its plan (``leaf`` builds a new one, its bounds computed again, per call)."""
    plan = kept_plan(space)  # the hot path: an attribute of the kept plan (0.30 us; by variant_of 0.57, timeit)
    model = None if plan is None else plan.leaf_model
    return model if model is not None else variant_of(space, "leaf_model", leaf)  # type: ignore[no-any-return]


class _Drawing(Kernel):
    """NumPy's kernel of one draw whose generator is resolved already: a further draw takes it
    as it is (a product's draw spawns one per component: 2 calls fewer each)."""

    def spawn(self) -> Any:
        return self.rng


def shown(space: Any) -> tuple[Any, Any]:
    """(what ``repr`` shows, the space operations use) for a component: a type stays a type."""
    converted = as_space(space)
    return (space if isinstance(space, type) else converted), converted


def once(space: Any, name: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, once per space: kept on it as ``name`` (a space is immutable), None too."""
    found = space.__dict__.get(name, once)  # (``once`` itself: nothing kept yet)
    if found is once:
        found = compute()
        space._set(**{name: found})
    return found


def decided(test: Callable[..., Any], *args: Any) -> bool:
    """``test(*args)``, False where it is not decided (TypeError, ValueError, OverflowError)."""
    try:
        return bool(test(*args))
    except (TypeError, ValueError, OverflowError):
        return False


def empty(space: Any) -> bool:
    """Whether ``space`` has no member, where decided (False where not)."""
    return decided(lambda s: protocol.cardinality(s) == 0, space)


def clamp_into(k: Kernel, x: Any, space: Any) -> Any:
    """The ``clamp_`` rule of a kind with a batched ``clamp`` (unions, differences, ``Dynamic``):
    ``clamp(x, space)`` written into ``x`` (NumPy's writable numeric arrays, torch's tensors;
    JAX's are immutable). TypeError, with nothing written, for anything else."""
    if k.name == "jax" or (k.name == "numpy" and not (
            isinstance(x, np.ndarray) and x.flags.writeable and x.dtype.kind in "biuf")):
        raise TypeError("clamp_: x must be a writable numeric array (JAX's are immutable: use clamp)")
    clamped = k.xp.astype(protocol.clamp(x, space), x.dtype)
    try:
        x[...] = clamped
    except (RuntimeError, ValueError) as error:  # torch: an expanded view, a leaf that requires grad
        raise TypeError(f"clamp_: x must be a writable array ({error})") from None
    return x
