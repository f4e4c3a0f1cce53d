"""The backends' table: the compiled plans of a space of leaves, and the other functions the
backends serve, on torch and on JAX.

Importing this module registers with the core (:func:`~spacealg.core.arrays.register_backend`),
for each backend, the implementation of every batched operation for a space whose kind has
no rule of its own (:data:`OPERATIONS`: the per-leaf plans, compiled from the space's leaf
models; :func:`spacealg.core.plan.route` falls back to it) and of the other functions the
backends serve (:data:`FUNCTIONS`: masked draws, the emulation codec's batch methods). A kind
with rules of its own registers them instead (:func:`~spacealg.core.arrays.register_kind_rule`:
the leaf kinds', the composites' and ``Masked``'s are this package's). :mod:`spacealg.backends`
imports it at the first torch/JAX call, so ``import spacealg`` does not.

Law: after this import, ``backend_implementation(f, b)(*args, **kwargs)`` is
``FUNCTIONS[f](b, *args, **kwargs)`` for every function ``f`` of :data:`FUNCTIONS` (a routed
operation's: ``OPERATIONS[f.__name__]``) and every backend ``b`` of
:data:`~spacealg.backends.arrays.BACKEND_ROOTS`.
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
from spacealg.backends.masked import sample_masked_on
from spacealg.backends.sample import sample_on
from spacealg.core import hooks, protocol
from spacealg.core.arrays import register_backend
from spacealg.core.rng import no_extra
from spacealg.emulation.codec import Codec
from spacealg.ops.flatten import flatten_batch, unflatten_batch

__all__ = ["FUNCTIONS", "OPERATIONS"]


def _sample(name: str, space: Any, size: Any = None, *, rng: Any, **extra: Any) -> Any:
    no_extra(extra, name)
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

#: function -> its implementation (backend name first, then the function's arguments)
FUNCTIONS: dict[Any, Any] = {
    **{f: OPERATIONS[f.__name__] for f in (protocol.sample, protocol.isin, protocol.clamp, protocol.clamp_,
                                           flatten_batch, unflatten_batch)},
    hooks.sample_with_mask: _sample_masked,
    Codec.emulate_batch: emulate_batch_on,
    Codec.nativize_batch: nativize_batch_on,
}

for _name in sorted(set(BACKEND_ROOTS.values())):
    for _function, _implementation in FUNCTIONS.items():
        register_backend(_function, _name, functools.partial(_implementation, _name))
