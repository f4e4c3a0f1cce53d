"""The per-call context of a batched operation: backend, array namespace, device, constants.

Element-wise work goes through the array-API namespace (``array-api-compat``'s for torch;
``jax.numpy`` and NumPy 2 are namespaces themselves), so one rule serves NumPy, torch and
JAX; the few things the standard lacks (one-hot scatter, in-place
copies, reinterpreting bytes) are methods here with one branch per backend. Constants
that depend only on the space (bounds, item values) are built once per leaf, device and
dtype and cached on the leaf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.arrays import Backend, backend_name, backend_named
from spacealg.core.leaf import LeafModel

__all__ = ["Kernel"]


class Kernel:
    """``backend`` and ``device`` of one call, with helpers for the operation modules."""

    def __init__(self, backend: Backend, device: Any, like: Any = None) -> None:
        self.backend = backend
        self.device = device
        self.name = backend.name
        self.xp = _namespace(backend)
        self.traced = backend.is_traced(like) if like is not None else False

    @classmethod
    def for_array(cls, name: str, x: Any) -> Kernel:
        backend = backend_named(name)
        return cls(backend, backend.device(x), x)

    @classmethod
    def for_parts(cls, name: str, parts: tuple[Any, ...]) -> Kernel:
        """The kernel of a batch's leaf arrays: the first one's device; traced (JAX) when any
        one is, so a jitted call that closes over some concrete leaves reads no value.

        Raises TypeError for a torch batch with a leaf that is no tensor (a NumPy array
        beside tensors: torch's operations take no NumPy operand); JAX takes NumPy leaves.
        """
        if name == "torch":
            strays = sorted({f"{type(p).__module__}.{type(p).__qualname__}" for p in parts
                             if backend_name(p) != "torch"})
            if strays:
                raise TypeError(f"torch: a batch mixes tensors with {', '.join(strays)} leaves; "
                                "move every leaf to torch (torch.as_tensor)")
        kernel = cls.for_array(name, parts[0])
        if name != "torch" and not kernel.traced and any(kernel.backend.is_traced(p) for p in parts):
            kernel.traced, kernel.device = True, None
        return kernel

    @classmethod
    def for_program(cls, name: str, parts: tuple[Any, ...]) -> Kernel:
        """:meth:`for_parts`; for concrete JAX arrays, all on one device, a kernel whose
        variants run as one ``jax.jit`` program (:meth:`compiled`): ``traced``, so that every
        decision is the one made under ``jit``, its constants on the batch's device."""
        k = cls.for_parts(name, parts)
        if name == "jax" and not k.traced and k.device is not None:
            devices = [getattr(p, "devices", None) for p in parts]
            if all(d is not None and d() == {k.device} for d in devices):
                k.traced = k.program = True
        return k

    #: whether this kernel's variants run as one compiled program (:meth:`for_program`)
    program = False

    def compiled(self, run: Callable[..., Any]) -> Callable[..., Any]:
        """``run`` as one ``jax.jit`` program for a :meth:`for_program` kernel, else ``run``.
        Eager JAX compiles each operation once per new shape: an ``isin`` of a three-leaf
        Dict at a new batch size took 490 ms eager, 120 ms as one program (2-core CPU)."""
        if not self.program:
            return run
        import jax

        return jax.jit(run)

    @staticmethod
    def key_of(name: str, parts: tuple[Any, ...]) -> tuple[Any, ...]:
        """What a compiled plan variant depends on besides the space and the dtypes: the
        backend, the first leaf's device (torch: meta tensors are abstract, and have their
        own device), whether any leaf is traced, and the backend's dtype policy."""
        if name == "torch":
            return ("torch", parts[0].device)
        if name == "numpy":
            return ("numpy",)
        backend = backend_named(name)
        traced = any(backend.is_traced(p) for p in parts)
        return (name, None if traced else backend.device(parts[0]), traced, backend.policy())

    # -- dtypes ------------------------------------------------------------------------
    def native(self, leaf: LeafModel, dtype: Any = None) -> Any:
        """The native dtype of ``leaf``'s values (or of NumPy ``dtype`` for them), by the policy."""
        return self.backend.dtype(np.dtype(dtype or leaf.value_dtype), leaf.value_low, leaf.value_high, leaf.space)

    def numpy_dtype(self, x: Any) -> np.dtype:
        return self.backend.numpy_dtype(x.dtype)

    def kind(self, x: Any) -> str:
        """``"b"``, ``"i"`` (signed or unsigned integers), ``"f"`` or ``"c"``/other."""
        return self.kind_of(x.dtype)

    def kind_of(self, dtype: Any) -> str:
        """:meth:`kind` of an array of native ``dtype``."""
        try:
            return _DTYPE_LETTERS[dtype]
        except KeyError:
            xp = self.xp
            kind = next((k for k, name in (("b", "bool"), ("i", "integral"), ("f", "real floating"))
                         if xp.isdtype(dtype, name)), "c")
            _DTYPE_LETTERS[dtype] = kind
            return kind

    def widest_float(self) -> Any:
        return self.backend.dtype(np.dtype(np.float64), None, None, "float64")

    def widest_int(self) -> Any:
        return self.backend.dtype(np.dtype(np.int64), None, None, "int64")

    # -- constants ---------------------------------------------------------------------
    def const(self, leaf: LeafModel, tag: Any, make: Callable[[], Any], dtype: Any) -> Any:
        """A native array of ``make()`` in native ``dtype`` on this device, cached on the leaf."""
        key = (self.name, str(self.device), tag, str(dtype))
        try:
            return leaf.cache[key]
        except KeyError:
            value = leaf.cache[key] = self.backend.constant(make(), dtype, self.device)
            return value

    def clip(self, x: Any, low: Any, high: Any) -> Any:
        """``clip(x, low, high)`` into a new array (:meth:`clipper` of ``x``'s dtype)."""
        return self.clipper(x.dtype, low, high)(x)

    def clipper(self, dtype: Any, low: Any, high: Any) -> Callable[[Any], Any]:
        """``clip(x)``: ``x`` (of native ``dtype``) clipped to ``low..high``, into a new array.

        A torch CPU tensor with float bounds is clipped into memory allocated by NumPy:
        torch's CPU allocator maps fresh pages for every large tensor, which costs several
        times the clip itself (about 40 ms for 64 MB on one thread, against 5 ms for the
        clip), where NumPy's reuses them."""
        xp = self.xp
        torch = self.backend.module
        if (self.name == "torch" and isinstance(low, float) and isinstance(high, float)
                and dtype in (torch.float32, torch.float64)):
            np_dtype = self.backend.numpy_dtype(dtype)
            from_numpy, empty, clamp = torch.from_numpy, np.empty, torch.clamp

            def clip(x: Any) -> Any:
                if not numpy_memory(x):
                    return clamp(x, low, high)
                return clamp(x, low, high, out=from_numpy(empty(tuple(x.shape), dtype=np_dtype)))

            return clip
        if self.name == "torch":  # torch's own clamp: the Array API wrapper costs more than a small clip
            scalars = (isinstance(low, (int, float)), isinstance(high, (int, float)))
            if scalars[0] != scalars[1]:  # one side a scalar: as a tensor too, for one clamp
                if scalars[0]:
                    low = torch.full(tuple(high.shape), low, dtype=high.dtype, device=high.device)
                else:
                    high = torch.full(tuple(low.shape), high, dtype=low.dtype, device=low.device)
            return lambda x: torch.clamp(x, low, high)
        if self.name == "numpy":
            return lambda x: np.clip(x, low, high)
        return lambda x: xp.clip(x, low, high)

    # -- what the Array API lacks --------------------------------------------------------
    def onehot(self, positions: Any, dim: int, dtype: Any) -> Any:
        """``(n, dim)`` zeros with a 1 at each row's ``positions`` (``(n, k)`` int array)."""
        n = positions.shape[0]
        if self.name == "torch":
            torch = self.backend.module
            out = torch.zeros((n, dim), dtype=dtype, device=positions.device)
            return out.scatter_(1, positions, 1)
        if self.name == "numpy":
            out = np.zeros((n, dim), dtype=dtype)
            np.put_along_axis(out, positions, 1, axis=1)
            return out
        jnp = self.backend.module
        rows = jnp.arange(n)[:, None]
        return jnp.zeros((n, dim), dtype=dtype).at[rows, positions].set(1)

    def any_true(self, flags: Any) -> bool:
        """Whether any entry is True; False for abstract (traced, meta) arrays, which cannot be read."""
        if self.traced or self.backend.is_traced(flags):
            return False
        return bool(self.xp.any(flags))

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """Zeros of native ``dtype`` on this device (torch's factories default to the CPU)."""
        if self.name == "torch":
            return self.backend.module.zeros(shape, dtype=dtype, device=self.device)
        return self.backend.module.zeros(shape, dtype=dtype)

    def ones(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """Ones of native ``dtype`` on this device."""
        if self.name == "torch":
            return self.backend.module.ones(shape, dtype=dtype, device=self.device)
        return self.backend.module.ones(shape, dtype=dtype)


def numpy_memory(x: Any) -> bool:
    """Whether :meth:`Kernel.clipper` may clip the torch tensor ``x`` into NumPy-allocated
    memory: on the CPU only (the memory is host memory), and not where autograd records the
    clip (``out=`` has no gradient)."""
    return bool(x.is_cpu) and not (x.requires_grad and _grad_enabled())


def _grad_enabled() -> bool:
    import torch

    return bool(torch.is_grad_enabled())


_NAMESPACES: dict[str, Any] = {}
_DTYPE_LETTERS: dict[Any, str] = {}  # native dtype -> NumPy-style kind letter (a handful of dtypes per backend)


def _namespace(backend: Backend) -> Any:
    """The backend's array-API namespace (array-api-compat's for torch; ``jax.numpy`` and
    NumPy 2 are ones themselves)."""
    try:
        return _NAMESPACES[backend.name]
    except KeyError:
        if backend.name in ("jax", "numpy"):
            namespace = backend.module
        else:
            import array_api_compat.torch as namespace
        _NAMESPACES[backend.name] = namespace
        return namespace
