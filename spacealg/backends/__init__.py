"""Spaces on accelerators: every batched operation on torch (CPU and CUDA) and JAX arrays.

The data decides the backend. ``sample(space, size, rng=g)`` gives NumPy arrays for ``g``
None, an int or a ``numpy.random.Generator``; torch tensors on ``g.device`` for a
``torch.Generator``; JAX arrays for a JAX PRNG key (``jax.random.key(k)`` or
``jax.random.PRNGKey(k)``). ``isin``, ``clamp``, ``clamp_``, ``flatten_batch``,
``unflatten_batch`` and the emulation codec's ``emulate_batch``/``nativize_batch`` take
batches of any backend and answer in that backend, on that device.

The protocol functions route here from one hook in :mod:`spacealg.core.protocol` (the
type of ``rng``, or of the batch: torch/JAX types are recognised by their package's name,
so neither library is imported until one of its objects arrives). One module per
operation, each written once against the leaf model (:mod:`spacealg.core.leaf`, the per-kind
table; :mod:`~spacealg.backends.leaves` walks products into trees of leaf models):

==================  ==================================================================
module              operation
==================  ==================================================================
``arrays``          backends, their dtype policy, ``to_numpy``
``rng``             one RNG adapter per backend (torch Generator, JAX key splitting)
``leaves``          products as trees of leaf models (``spacealg.core.leaf``)
``integers``        integer batches compared and clipped exactly in their own dtype
``sets``            batches meeting a set's items that their dtype holds exactly
``plan``            per-space plans: the operations' decisions made once per space,
                    backend, device and dtypes (kept under the package's cache rule)
``sample``          ``sample``
``isin``            ``isin``
``clamp``           ``clamp``, ``clamp_``
``flatten``         ``flatten_batch``, ``unflatten_batch``
``emulation``       ``nativize_tensor``, ``emulate_tensor`` and the codec's batch operations
==================  ==================================================================

See docs/backends.md for the laws, the dtype policy and measured speed.
"""

from __future__ import annotations

from typing import Any

from spacealg.backends.arrays import backend_name, backend_of, is_backend_array, to_numpy

__all__ = [
    "backend_name",
    "backend_of",
    "emulate_tensor",
    "is_backend_array",
    "nativize_tensor",
    "route",
    "to_numpy",
]


def route(operation: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run the protocol function ``operation`` on backend ``name`` (the protocol's hook)."""
    if operation == "sample":
        from spacealg.backends.sample import sample_on

        space, size = args[0], (args[1] if len(args) > 1 else kwargs.get("size"))
        extra = set(kwargs) - {"rng", "size"}
        if any(kwargs[key] is not None for key in extra):
            raise TypeError(f"sample: {sorted(extra)} are not supported with a {name} rng")
        return sample_on(name, space, size, kwargs["rng"])
    if operation == "isin":
        from spacealg.backends.isin import isin_on

        return isin_on(name, args[0], args[1])
    if operation == "clamp":
        from spacealg.backends.clamp import clamp_on

        return clamp_on(name, args[0], args[1])
    if operation == "clamp_":
        from spacealg.backends.clamp import clamp_inplace_on

        return clamp_inplace_on(name, args[0], args[1])
    raise ValueError(f"route: unknown operation {operation!r}")



def __getattr__(name: str) -> Any:
    # the emulation helpers load the spaces; the core imports this package, so they come lazily
    if name in ("emulate_tensor", "nativize_tensor"):
        from spacealg.backends import emulation

        return getattr(emulation, name)
    raise AttributeError(f"module 'spacealg.backends' has no attribute {name!r}")
