"""The composite kinds (``TupleProduct``, ``DictProduct``, ``ArraySpace``) on torch and JAX:
their one plan compiled, or their own rules. Registered for them by :mod:`spacealg.backends`
(:func:`spacealg.core.arrays.register_kind_rule`), over the rules each kind writes once for
every backend (``RULES`` of :mod:`spacealg.spaces.product` and :mod:`spacealg.spaces.array`,
which are NumPy's entries too).

A composite all of whose leaves have a leaf model (:mod:`spacealg.core.leaf`) is served by its
one plan, compiled per backend, device and dtypes (:data:`~spacealg.backends.operations.OPERATIONS`:
one JAX program for the whole batch); which serves a space is decided once per space
(:func:`modelled`). Any other composite, holding a leaf of a kind with rules of its own and no
leaf model (``OneHot``, ``Masked``, ``Union``, ...), and a product batch whose component batches
broadcast to a common batch shape without sharing it, goes by its kind's rule: a product
component by component (each through its own route), an array space through its entries'
rules for every entry at once. A product's ``clamp_`` there clamps every leaf on a copy before
any is written (all or nothing, as NumPy's ``clamp_``).

Laws, for a composite ``s`` and a torch/JAX batch ``xs`` of it: each operation equals the NumPy
path value for value after moving to NumPy (the kinds' rules state theirs: a product's ``isin``
broadcasts its component batches). ``flatten_batch`` and ``unflatten_batch`` are the one
flatten driver's (:mod:`spacealg.backends.flatten`), which takes a leaf with no leaf model by
its own rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spacealg.backends.kernel import BackendKernel
from spacealg.backends.operations import OPERATIONS
from spacealg.core import protocol
from spacealg.core.arrays import backend_name
from spacealg.core.generic import as_space
from spacealg.core.kernel import Kernel
from spacealg.core.leaf import leaf as leaf_model
from spacealg.core.plan import plan_for
from spacealg.spaces.array import RULES as ARRAY_RULES
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.product import RULES as PRODUCT_RULES

__all__ = ["RULES", "modelled"]


def modelled(space: Any) -> bool:
    """Whether every leaf of ``space`` has a leaf model, so that its one compiled plan serves
    it (asked once per space: kept in its plan). Measured (timeit, best of 5, loaded 2-core
    CPU): a warm ``isin`` of 17 rows of Dict(Box(3), range(5), Categorical([3, 4])) took 12 us
    whole against 55 us leaf by leaf on JAX, 35 against 402 us on torch; JAX's first call at a
    new batch size 0.5 s against 1.0 s."""
    plan = plan_for(space)
    return plan.variant(("modelled",), lambda: all(map(_has_model, plan.leaf_spaces())))  # type: ignore[no-any-return]


def _has_model(space: Any) -> bool:
    try:
        space = as_space(space)
    except TypeError:  # not a space: the plan says so
        return True
    return leaf_model(space) is not None


_FLAT = ("flatten_batch", "unflatten_batch")


def _rule(operation: str) -> Callable[..., Any]:
    whole = OPERATIONS[operation]

    def rule(k: Kernel, *args: Any, **kwargs: Any) -> Any:
        space = args[0] if operation == "sample" else args[1]
        if operation in _FLAT:  # the one flatten driver takes a part by its own rules
            return whole(k.name, *args, **kwargs)
        product = not isinstance(space, ArraySpace)
        if modelled(space):
            return whole(k.name, *args, **kwargs)
        own = (PRODUCT_RULES if product else ARRAY_RULES).get(operation)
        if own is None:  # a product's clamp_
            return _staged(k, *args)
        if product and operation != "sample":  # the leaves on the kernel's backend, as the compiled plans take them
            plan = plan_for(space)
            args = (plan.join(_on_backend(k, plan.check(args[0], operation))), space)
        return own(k, *args, **kwargs)

    return rule


def _staged(k: Kernel, values: Any, space: Any) -> Any:
    """``clamp_`` of a product holding a leaf without a leaf model: every leaf clamped on a
    copy first, so that a leaf that raises leaves the batch untouched."""
    if k.name == "jax":  # before any check of the batch, as every JAX clamp_
        raise TypeError("clamp_: JAX arrays are immutable; use clamp")
    plan = plan_for(space)
    parts = _on_backend(k, plan.check(values, "clamp_"))
    staged = [protocol.clamp_(part.clone(), leaf) for part, leaf in zip(parts, plan.leaf_spaces())]
    for part, done in zip(parts, staged):
        part.copy_(done)
    return values


def _on_backend(k: Kernel, parts: tuple[Any, ...]) -> tuple[Any, ...]:
    """The leaf batches, each an array of the backend: TypeError for a torch batch with a
    leaf that is no tensor (as the compiled plans say it); JAX takes NumPy leaves, as arrays."""
    BackendKernel.for_parts(k.name, parts)
    if k.name != "jax":
        return parts
    return tuple(p if backend_name(p) == "jax" else k.xp.asarray(p) for p in parts)


#: operation -> the composite kinds' rule on torch and JAX
RULES: dict[str, Callable[..., Any]] = {operation: _rule(operation) for operation in OPERATIONS}
