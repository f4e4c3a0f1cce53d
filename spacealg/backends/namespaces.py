"""torch's and JAX's :class:`~spacealg.core.arrays.Namespace`: what a kind's batched rule,
written once over an array namespace, needs of each backend (registered with the core when
the backend's operations load; see :func:`spacealg.core.arrays.register_kind_rule`).

Laws: ``ns.constant(a, d)`` has ``a``'s values in the backend's dtype for ``d``
(:meth:`~spacealg.backends.arrays.Backend.dtype`'s policy), on the probe's device;
``ns.below(w, shape)`` and ``ns.uniform(shape)`` draw from the call's generator (a ``torch.Generator``, advanced, or a
JAX key, split), on its device, so the same generator state gives the same draws.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from spacealg.backends.arrays import BACKEND_ROOTS, backend_named
from spacealg.backends.kernel import _namespace
from spacealg.backends.rng import rng_adapter
from spacealg.core.arrays import Namespace, register_namespace

__all__ = ["BackendNamespace"]


class BackendNamespace(Namespace):
    """A torch or JAX :class:`~spacealg.core.arrays.Namespace` for one call."""

    def __init__(self, name: str, probe: Any, rng: Any) -> None:
        self.backend = backend_named(name)
        self.name = name
        self.adapter = rng_adapter(rng, name) if rng is not None else None
        device = getattr(self.adapter, "device", None) if rng is not None else self.backend.device(probe)
        super().__init__(_namespace(self.backend), device, rng)

    def dtype(self, dtype: Any) -> Any:
        return self.backend.dtype(np.dtype(dtype), what=dtype)

    def constant(self, array: Any, dtype: Any = None) -> Any:
        array = np.asarray(array, dtype=dtype)
        return self.backend.constant(array, self.dtype(array.dtype), self.device)

    def ordered(self, x: Any) -> Any:
        """``x``, or an array ordered as ``x`` (``argmax``, ``<``) in a dtype the backend can
        compare: torch cannot compare uint16/32/64 tensors, which become int64 (uint64 through
        its bits with the sign bit flipped, so that the order holds beyond 2**63), nor take the
        ``argmax`` of bools, which become int8."""
        if self.name != "torch" or str(x.dtype) not in ("torch.bool", "torch.uint16", "torch.uint32", "torch.uint64"):
            return x
        import torch  # x is a tensor: torch is loaded

        if x.dtype == torch.bool:
            return x.to(torch.int8)
        if x.dtype == torch.uint64:
            return x.view(torch.int64) ^ torch.tensor(-(2**63), dtype=torch.int64, device=x.device)
        return x.to(torch.int64)

    def below(self, widths: Any, shape: tuple[int, ...]) -> Any:
        return self._drawing().below(np.asarray(widths, dtype=object), shape)

    def uniform(self, shape: tuple[int, ...]) -> Any:
        return self._drawing().uniform(shape, self.dtype(np.float64))

    def child(self) -> Any:
        return self._drawing()._next() if self.name == "jax" else self.rng  # a JAX key is split, not advanced

    def _drawing(self) -> Any:
        if self.adapter is None:
            raise TypeError(f"{self.name}: this operation has no generator to draw from")
        return self.adapter


for _name in sorted(set(BACKEND_ROOTS.values())):
    register_namespace(_name, functools.partial(BackendNamespace, _name))
