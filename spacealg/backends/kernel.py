"""torch's and JAX's :class:`~spacealg.core.kernel.Kernel`: the one array vocabulary of the
batched rules, for the backends' arrays (registered with the core at import,
:func:`spacealg.core.kernel.register_kernel`).

Element-wise work goes through the array-API namespace (``array-api-compat``'s for torch;
``jax.numpy`` is one itself), so one rule serves NumPy (the core's kernel), torch and JAX;
the few things the standard lacks (one-hot scatter, in-place copies, order-keeping views)
are methods here with one branch per backend. Constants that depend only on the
space (bounds, item values) are built once per leaf, device and dtype and cached on the leaf.

Laws: ``k.constant(a, d)`` has ``a``'s values in the backend's dtype for ``d``
(:meth:`~spacealg.backends.arrays.Backend.dtype`'s policy), on the probe's device;
``k.below(w, shape)`` and ``k.uniform(shape)`` draw from the call's generator (a
``torch.Generator``, advanced, or a JAX key, split), on its device, so the same generator
state gives the same draws.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.arrays import BACKEND_ROOTS, Backend, backend_name, backend_named
from spacealg.backends.rng import rng_adapter
from spacealg.core.arrays import first_leaf
from spacealg.core.kernel import Kernel, register_kernel
from spacealg.core.leaf import LeafModel

__all__ = ["BackendKernel"]


class BackendKernel(Kernel):
    """The kernel of one call on ``backend``'s arrays, on ``device`` (see the module)."""

    queued = True  # a GPU runs the queued operations while the host goes on

    def __init__(self, backend: Backend, device: Any, like: Any = None, rng: Any = None) -> None:
        super().__init__(rng)
        self.backend = backend
        self.device = device
        self.name = backend.name
        self.module = backend.module
        self.xp = _namespace(backend)
        self.traced = backend.is_traced(like) if like is not None else False
        self.views = backend.name == "torch"  # JAX's arrays have no views
        self.adapter: Any = None

    @classmethod
    def for_call(cls, name: str, probe: Any, rng: Any = None) -> BackendKernel:
        """The kernel of a call whose batch (or generator) is ``probe`` and whose generator is
        ``rng`` (None for a batch operation): on the generator's device, else the batch's."""
        backend = backend_named(name)
        if rng is None:  # the device of the batch's first leaf (a product's batch is a tuple/dict)
            probe = first_leaf(probe)
            return cls(backend, backend.device(probe), probe)
        adapter = rng_adapter(rng, name)
        k = cls(backend, getattr(adapter, "device", None), rng=rng)
        k.adapter = adapter
        return k

    @classmethod
    def for_array(cls, name: str, x: Any) -> BackendKernel:
        backend = backend_named(name)
        return cls(backend, backend.device(x), x)

    @classmethod
    def on_device(cls, name: str, device: Any) -> BackendKernel:
        return cls(backend_named(name), device)

    @classmethod
    def for_parts(cls, name: str, parts: tuple[Any, ...]) -> BackendKernel:
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
    def for_program(cls, name: str, parts: tuple[Any, ...]) -> BackendKernel:
        """:meth:`for_parts`; for concrete JAX arrays, all on one device, a kernel whose
        variants run as one ``jax.jit`` program (:meth:`compiled`): ``traced``, so that every
        decision is the one made under ``jit``, its constants on the batch's device."""
        k = cls.for_parts(name, parts)
        if name == "jax" and not k.traced and k.device is not None:
            devices = [getattr(p, "devices", None) for p in parts]
            if all(d is not None and d() == {k.device} for d in devices):
                k.traced = k.program = True
        return k

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
        backend = backend_named(name)
        traced = any(backend.is_traced(p) for p in parts)
        return (name, None if traced else backend.device(parts[0]), traced, backend.policy())

    # -- dtypes ------------------------------------------------------------------------
    def dtype(self, dtype: Any, low: Any = None, high: Any = None, what: Any = None) -> Any:
        return self.backend.dtype(np.dtype(dtype), low, high, dtype if what is None else what)

    def native(self, leaf: LeafModel | None, dtype: Any = None) -> Any:
        """The native dtype of ``leaf``'s values (or of NumPy ``dtype`` for them), by the policy."""
        if leaf is None:
            return self.dtype(dtype)
        return self.backend.dtype(np.dtype(dtype or leaf.value_dtype), leaf.value_low, leaf.value_high, leaf.space)

    def numpy_dtype(self, native: Any) -> np.dtype:
        return self.backend.numpy_dtype(native)

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
    def constant(self, array: Any, dtype: Any = None) -> Any:
        array = np.asarray(array, dtype=dtype)
        return self.backend.constant(array, self.dtype(array.dtype), self.device)

    def const(self, leaf: LeafModel, tag: Any, make: Callable[[], Any], dtype: Any) -> Any:
        """A native array of ``make()`` in native ``dtype`` on this device, cached on the leaf."""
        key = (self.name, str(self.device), tag, str(dtype))
        try:
            return leaf.cache[key]
        except KeyError:
            value = leaf.cache[key] = self.backend.constant(make(), dtype, self.device)
            return value

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
        return lambda x: xp.clip(x, low, high)

    # -- what the Array API lacks --------------------------------------------------------
    def onehot(self, positions: Any, dim: int, dtype: Any) -> Any:
        """``(n, dim)`` zeros with a 1 at each row's ``positions`` (``(n, k)`` int array)."""
        n = positions.shape[0]
        if self.name == "torch":
            torch = self.backend.module
            out = torch.zeros((n, dim), dtype=dtype, device=positions.device)
            return out.scatter_(1, positions, 1)
        jnp = self.backend.module
        rows = jnp.arange(n)[:, None]
        return jnp.zeros((n, dim), dtype=dtype).at[rows, positions].set(1)

    def ordered(self, x: Any) -> Any:
        """``x``, or an array ordered as ``x`` (``argmax``, ``<``) in a dtype the backend can
        compare: torch cannot compare uint16/32/64 tensors, which become int64 (uint64 through
        its bits with the sign bit flipped, so that the order holds beyond 2**63), nor take the
        ``argmax`` of bools, which become int8."""
        if self.name != "torch" or str(x.dtype) not in ("torch.bool", "torch.uint16", "torch.uint32", "torch.uint64"):
            return x
        torch = self.backend.module
        if x.dtype == torch.bool:
            return x.to(torch.int8)
        if x.dtype == torch.uint64:
            return x.view(torch.int64) ^ torch.tensor(-(2**63), dtype=torch.int64, device=x.device)
        return x.to(torch.int64)

    @staticmethod
    def words(rows: Any, word: Any) -> Any:
        return rows.view(word) if rows.numel() and rows.is_contiguous() else None  # torch's (JAX: no views)

    def from_host(self, array: np.ndarray) -> Any:
        return self.backend.from_host(array)

    def to_host(self, x: Any) -> np.ndarray:
        return self.backend.to_numpy(x)

    def is_traced(self, x: Any) -> bool:
        return self.backend.is_traced(x)

    def any_true(self, flags: Any) -> bool:
        """Whether any entry is True; False for abstract (traced, meta) arrays, which cannot be read."""
        if self.traced or self.backend.is_traced(flags):
            return False
        return bool(self.xp.any(flags))

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """Zeros of native ``dtype`` on this device (torch's factories default to the CPU)."""
        if self.name == "torch":
            return self.module.zeros(shape, dtype=dtype, device=self.device)
        return self.module.zeros(shape, dtype=dtype)

    def ones(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """Ones of native ``dtype`` on this device."""
        if self.name == "torch":
            return self.module.ones(shape, dtype=dtype, device=self.device)
        return self.module.ones(shape, dtype=dtype)

    # -- draws -----------------------------------------------------------------------------
    def below(self, widths: Any, shape: tuple[int, ...]) -> Any:
        return self._drawing().below(np.asarray(widths, dtype=object), shape)

    def uniform(self, shape: tuple[int, ...]) -> Any:
        return self._drawing().uniform(shape, self.dtype(np.float64))

    def spawn(self) -> Any:
        spawn = getattr(self._drawing(), "spawn", None)  # a JAX key: a fresh subkey; torch: the generator
        return spawn() if spawn is not None else self.rng

    def _drawing(self) -> Any:
        if self.adapter is None:
            raise TypeError(f"{self.name}: this operation has no generator to draw from")
        return self.adapter


def numpy_memory(x: Any) -> bool:
    """Whether :meth:`BackendKernel.clipper` may clip the torch tensor ``x`` into NumPy-allocated
    memory: on the CPU only (the memory is host memory), and not where autograd records the
    clip (``out=`` has no gradient)."""
    return bool(x.is_cpu) and not (x.requires_grad and _grad_enabled())


def _grad_enabled() -> bool:
    import torch

    return bool(torch.is_grad_enabled())


_NAMESPACES: dict[str, Any] = {}
_DTYPE_LETTERS: dict[Any, str] = {}  # native dtype -> NumPy-style kind letter (a handful of dtypes per backend)


def _namespace(backend: Backend) -> Any:
    """The backend's array-API namespace (array-api-compat's for torch; ``jax.numpy`` is one itself)."""
    try:
        return _NAMESPACES[backend.name]
    except KeyError:
        if backend.name == "jax":
            namespace = backend.module
        else:
            import array_api_compat.torch as namespace
        _NAMESPACES[backend.name] = namespace
        return namespace


for _name in sorted(set(BACKEND_ROOTS.values())):
    register_kernel(_name, BackendKernel)
