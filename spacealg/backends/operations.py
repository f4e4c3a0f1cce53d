"""The backends' table: which operation serves which generic function, on torch and on JAX.

Importing this module registers each with the core (:func:`spacealg.core.arrays.register_backend`);
:mod:`spacealg.backends` imports it at the first torch/JAX call, so ``import spacealg`` does
not. Each implementation takes the backend's name, then the generic function's arguments.

Law: after this import, ``backend_implementation(f, b)(*args) == table[f](b, *args)`` for
every function ``f`` of :data:`OPERATIONS` and backend ``b`` of
:data:`~spacealg.backends.arrays.BACKEND_ROOTS`.
"""

from __future__ import annotations

import functools
from typing import Any

from spacealg.backends.arrays import BACKEND_ROOTS
from spacealg.backends.clamp import clamp_inplace_on, clamp_on
from spacealg.backends.emulation import emulate_batch_on, nativize_batch_on
from spacealg.backends.flatten import flatten_batch_on, unflatten_batch_on
from spacealg.backends.isin import isin_on
from spacealg.backends.masked import masked_on_backend, sample_masked_on
from spacealg.backends.parts import by_leaves, rule_leaves
from spacealg.backends.sample import sample_on
from spacealg.core import hooks, protocol
from spacealg.core.arrays import register_backend
from spacealg.emulation.codec import Codec
from spacealg.ops.flatten import flatten_batch, unflatten_batch
from spacealg.spaces.masked import holds_masked

__all__ = ["OPERATIONS"]


def _sample(name: str, space: Any, size: Any = None, *, rng: Any, **extra: Any) -> Any:
    if any(value is not None for value in extra.values()):
        raise TypeError(f"sample: {sorted(extra)} are not supported with a {name} rng")
    return sample_on(name, space, size, rng)


def _sample_masked(name: str, space: Any, size: Any, mask: Any, probability: Any, *, rng: Any) -> Any:
    return sample_masked_on(name, space, size, mask, probability, rng)


def _by_route(operation: str, implementation: Any, space_at: int) -> Any:
    """``implementation``, except for a space whose leaves the per-leaf plans cannot all
    serve: one holding a ``Masked`` part (no plan has a leaf for a mask) goes to
    :func:`~spacealg.backends.masked.masked_on_backend`; a product holding a leaf of a kind
    with its own rule (``OneHot``) to :func:`~spacealg.backends.parts.by_leaves`."""

    @functools.wraps(implementation)
    def serve(name: str, *args: Any, **kwargs: Any) -> Any:
        space = args[space_at]
        if operation in _MASKED_OPERATIONS and holds_masked(space):
            return masked_on_backend(operation, name, args, kwargs)
        if rule_leaves(space):
            return by_leaves(operation, name, args, kwargs)
        return implementation(name, *args, **kwargs)

    return serve


_MASKED_OPERATIONS = frozenset({"sample", "isin", "clamp", "clamp_"})

#: generic function -> its implementation (backend name first, then the function's arguments)
OPERATIONS: dict[Any, Any] = {
    protocol.sample: _by_route("sample", _sample, 0),
    hooks.sample_with_mask: _sample_masked,
    protocol.isin: _by_route("isin", isin_on, 1),
    protocol.clamp: _by_route("clamp", clamp_on, 1),
    protocol.clamp_: _by_route("clamp_", clamp_inplace_on, 1),
    flatten_batch: _by_route("flatten_batch", flatten_batch_on, 1),
    unflatten_batch: _by_route("unflatten_batch", unflatten_batch_on, 1),
    Codec.emulate_batch: emulate_batch_on,
    Codec.nativize_batch: nativize_batch_on,
}

for _name in sorted(set(BACKEND_ROOTS.values())):
    for _function, _implementation in OPERATIONS.items():
        register_backend(_function, _name, functools.partial(_implementation, _name))
