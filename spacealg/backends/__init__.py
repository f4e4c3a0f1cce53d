"""Spaces on accelerators: every batched operation on torch (CPU and CUDA) and JAX arrays.

The data decides the backend. ``sample(space, size, rng=g)`` gives NumPy arrays for ``g``
None, an int or a ``numpy.random.Generator``; torch tensors on ``g.device`` for a
``torch.Generator``; JAX arrays for a JAX PRNG key (``jax.random.key(k)`` or
``jax.random.PRNGKey(k)``). ``isin``, ``clamp``, ``clamp_``, ``flatten_batch``,
``unflatten_batch`` and the emulation codec's ``emulate_batch``/``nativize_batch`` take
batches of any backend and answer in that backend, on that device.

The core knows none of this package: loading it registers torch's and JAX's package names
with the core's recogniser (:func:`spacealg.core.arrays.backend_name`: types are recognised
by their package's name, so neither library is imported until one of its objects arrives)
and a loader that, at the first torch/JAX call, imports the operations' modules and
registers each one's implementation for its generic function
(:func:`spacealg.core.arrays.register_backend`: ``sample``, ``isin``, ``clamp``, ``clamp_``,
``sample(mask=...)``, ``flatten_batch``, ``unflatten_batch`` and the emulation codec's batch
methods). One module per operation, each written once against
:mod:`~spacealg.backends.leaves` (the per-kind table):

==================  ==================================================================
module              operation
==================  ==================================================================
``arrays``          backends, their dtype policy, ``to_numpy``
``rng``             one RNG adapter per backend (torch Generator, JAX key splitting)
``leaves``          ``array_leaf``: one registration per kind of space
``plan``            per-space plans: the operations' decisions made once per space,
                    backend, device and dtypes (kept under the package's cache rule)
``sample``          ``sample``
``isin``            ``isin``
``clamp``           ``clamp``, ``clamp_``
``flatten``         ``flatten_batch``, ``unflatten_batch``
``masked``          ``sample`` with ``mask=``/``probability=``
``emulation``       ``nativize_tensor``, ``emulate_tensor`` and the codec's batch operations
==================  ==================================================================

See docs/backends.md for the laws, the dtype policy and measured speed.
"""

from __future__ import annotations

import functools
from typing import Any

from spacealg.backends.arrays import BACKEND_ROOTS, backend_name, backend_of, is_backend_array, to_numpy
from spacealg.core.arrays import register_array_root, register_backend, register_backend_loader

__all__ = [
    "backend_name",
    "backend_of",
    "emulate_tensor",
    "is_backend_array",
    "nativize_tensor",
    "to_numpy",
]


def _register_operations() -> None:
    """Import the operations' modules and register each for torch and JAX.

    Run by the core at the first torch/JAX call (:func:`register_backend_loader`): the
    modules load the leaf tables, plans and codecs, which ``import spacealg`` never needs.
    """
    from spacealg.backends.clamp import clamp_inplace_on, clamp_on
    from spacealg.backends.emulation import emulate_batch_on, nativize_batch_on
    from spacealg.backends.flatten import flatten_batch_on, unflatten_batch_on
    from spacealg.backends.isin import isin_on
    from spacealg.backends.masked import sample_masked_on
    from spacealg.backends.sample import sample_on
    from spacealg.core import hooks, protocol
    from spacealg.emulation.codec import Codec
    from spacealg.ops.flatten import flatten_batch, unflatten_batch

    def sample_unmasked(name: str, space: Any, size: Any = None, *, rng: Any, **extra: Any) -> Any:
        if any(value is not None for value in extra.values()):
            raise TypeError(f"sample: {sorted(extra)} are not supported with a {name} rng")
        return sample_on(name, space, size, rng)

    def sample_masked(name: str, space: Any, size: Any, mask: Any, probability: Any, *, rng: Any) -> Any:
        return sample_masked_on(name, space, size, mask, probability, rng)

    # each implementation takes the backend's name, then the generic function's arguments
    table: dict[Any, Any] = {
        protocol.sample: sample_unmasked,
        hooks.sample_with_mask: sample_masked,
        protocol.isin: isin_on,
        protocol.clamp: clamp_on,
        protocol.clamp_: clamp_inplace_on,
        flatten_batch: flatten_batch_on,
        unflatten_batch: unflatten_batch_on,
        Codec.emulate_batch: emulate_batch_on,
        Codec.nativize_batch: nativize_batch_on,
    }
    for name in sorted(set(BACKEND_ROOTS.values())):
        for function, implementation in table.items():
            register_backend(function, name, functools.partial(implementation, name))


for _root, _name in BACKEND_ROOTS.items():
    register_array_root(_root, _name)
    register_backend_loader(_name, _register_operations)


def __getattr__(name: str) -> Any:
    # the emulation helpers load the emulation package, which ``import spacealg`` does not
    if name in ("emulate_tensor", "nativize_tensor"):
        from spacealg.backends import emulation

        return getattr(emulation, name)
    raise AttributeError(f"module 'spacealg.backends' has no attribute {name!r}")
