"""The backends' table: which operation serves which batched call, on torch and on JAX.

Importing this module registers, with the core, the route chooser of each backend
(:func:`spacealg.core.arrays.register_route`: asked once per space and operation, its answer
kept in the space's plan by :func:`spacealg.core.plan.route`) and the implementations of
the other functions the backends serve (:func:`~spacealg.core.arrays.register_backend`:
masked draws, the emulation codec's batch methods). :mod:`spacealg.backends` imports it at
the first torch/JAX call, so ``import spacealg`` does not.

A space's route: a product holding a leaf of a kind with its own rule (``OneHot``) or a
``Masked`` leaf goes to :func:`~spacealg.backends.parts.by_leaves` (each leaf by its own
route); a ``Masked`` space, or an array of them, to
:func:`~spacealg.backends.masked.masked_on_backend` (no plan has a leaf for a mask); every
other space to its per-leaf plans (:data:`OPERATIONS`).

Law: after this import, ``backend_route(b)(op, s)(*args, **kwargs)`` is
``OPERATIONS[op](b, *args, **kwargs)`` for a space ``s`` of leaves, and
``backend_implementation(f, b)(*args) == FUNCTIONS[f](b, *args)`` for every function ``f`` of
:data:`FUNCTIONS` and backend ``b`` of :data:`~spacealg.backends.arrays.BACKEND_ROOTS`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from spacealg.backends.arrays import BACKEND_ROOTS
from spacealg.backends.clamp import clamp_inplace_on, clamp_on
from spacealg.backends.emulation import emulate_batch_on, nativize_batch_on
from spacealg.backends.flatten import flatten_batch_on, unflatten_batch_on
from spacealg.backends.isin import isin_on
from spacealg.backends.masked import masked_on_backend, sample_masked_on
from spacealg.backends.parts import by_leaves, rule_leaves
from spacealg.backends.sample import sample_on
from spacealg.core import hooks
from spacealg.core.arrays import register_backend, register_route
from spacealg.emulation.codec import Codec
from spacealg.spaces.masked import holds_masked

__all__ = ["FUNCTIONS", "OPERATIONS", "choose"]


def _sample(name: str, space: Any, size: Any = None, *, rng: Any, **extra: Any) -> Any:
    if any(value is not None for value in extra.values()):
        raise TypeError(f"sample: {sorted(extra)} are not supported with a {name} rng")
    return sample_on(name, space, size, rng)


def _sample_masked(name: str, space: Any, size: Any, mask: Any, probability: Any, *, rng: Any) -> Any:
    return sample_masked_on(name, space, size, mask, probability, rng)


#: operation -> its per-leaf plan's implementation (backend name first, then the call's arguments)
OPERATIONS: dict[str, Callable[..., Any]] = {
    "sample": _sample,
    "isin": isin_on,
    "clamp": clamp_on,
    "clamp_": clamp_inplace_on,
    "flatten_batch": flatten_batch_on,
    "unflatten_batch": unflatten_batch_on,
}
_MASKED_OPERATIONS = frozenset({"sample", "isin", "clamp", "clamp_"})


def choose(name: str, operation: str, space: Any) -> Callable[..., Any]:
    """``run(*args, **kwargs)``: what serves ``operation`` for ``space`` on backend ``name`` (see
    the module); decided once per space (the plan keeps it)."""
    masked = operation in _MASKED_OPERATIONS
    if rule_leaves(space, masked):
        return lambda *args, **kwargs: by_leaves(operation, name, args, kwargs)
    if masked and holds_masked(space):
        return lambda *args, **kwargs: masked_on_backend(operation, name, args, kwargs)
    return functools.partial(OPERATIONS[operation], name)


#: function -> its implementation (backend name first, then the function's arguments)
FUNCTIONS: dict[Any, Any] = {
    hooks.sample_with_mask: _sample_masked,
    Codec.emulate_batch: emulate_batch_on,
    Codec.nativize_batch: nativize_batch_on,
}

for _name in sorted(set(BACKEND_ROOTS.values())):
    register_route(_name, functools.partial(choose, _name))
    for _function, _implementation in FUNCTIONS.items():
        register_backend(_function, _name, functools.partial(_implementation, _name))
