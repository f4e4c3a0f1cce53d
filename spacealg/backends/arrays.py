"""The array backends: which one a batch or generator belongs to, and its dtype policy.

A :class:`Backend` is everything spacealg needs of an array library besides random
numbers (see :mod:`spacealg.backends.rng`) and element-wise work (the array-API namespace
of :mod:`spacealg.backends.kernel`): the native dtype for a NumPy dtype, constants on a device, and the
way back to NumPy. NumPy itself has none: its arrays are the core kernel's
(:class:`spacealg.core.kernel.Kernel`). torch and JAX are imported only when a tensor or a JAX array reaches
spacealg (the type's top-level package names the backend).

Dtype policy (what a backend lacks, and what spacealg does then):

=================  ===========================================================================
backend            policy
=================  ===========================================================================
torch              uint16/uint32/uint64 have few kernels: their values are held as int32 /
                   int64 / int64 (a documented promotion); a uint64 space whose values do not
                   fit int64 raises TypeError naming it. Everything else is native.
JAX (default)      without ``jax_enable_x64`` there is no float64, int64 or uint64: float64
                   becomes float32, int64 int32 and uint64 uint32 when the space's bounds fit
                   the smaller type; otherwise ValueError naming the space and the flag.
JAX with x64       native.
=================  ===========================================================================
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from spacealg.core.arrays import backend_name

__all__ = ["BACKEND_ROOTS", "RNG_FORMS", "Backend", "backend_name", "backend_named", "backend_of",
           "is_backend_array", "to_numpy"]

#: The top-level package of an array or generator type -> the backend that serves it
#: (registered with the core's recogniser, :func:`spacealg.core.arrays.backend_name`).
BACKEND_ROOTS: dict[str, str] = {"torch": "torch", "jax": "jax", "jaxlib": "jax"}
#: Each backend's generator, as an ``rng`` argument (named in the message of a rejected one).
RNG_FORMS: dict[str, str] = {
    "torch": "a torch.Generator",
    "jax": "a JAX PRNG key (jax.random.key(seed), jax.random.PRNGKey(seed))",
}


def is_backend_array(obj: Any) -> bool:
    """Whether ``obj`` (or the first leaf of a tuple/dict batch) is a torch or JAX array."""
    return backend_name(obj) is not None


class Backend:
    """One array library beside NumPy: dtypes, constants and conversion. Subclasses per library
    override what differs from the defaults (NumPy's conversions: a JAX dtype is a NumPy dtype)."""

    name: str
    module: Any

    def dtype(self, dtype: np.dtype, low: Any = None, high: Any = None, what: Any = None) -> Any:
        """The native dtype holding values of NumPy ``dtype`` within ``low..high``."""
        return np.dtype(dtype)

    def numpy_dtype(self, native: Any) -> np.dtype:
        """The NumPy dtype of a native dtype."""
        return np.dtype(native)

    def constant(self, array: Any, dtype: Any, device: Any) -> Any:
        """A native array of ``array``'s values with native ``dtype`` on ``device``."""
        value = np.array(array, dtype=dtype)  # a copy of its own, read-only: cached constants are shared
        value.flags.writeable = False
        return value

    def device(self, x: Any) -> Any:
        return None

    def from_host(self, array: np.ndarray) -> Any:
        """A native array of the NumPy ``array``'s values, sharing its memory where the
        library can (torch on the CPU, NumPy)."""
        return array

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def is_traced(self, x: Any) -> bool:
        """Whether ``x`` is abstract (a JAX tracer): no value to look at, no error to raise."""
        return False

    def policy(self) -> Any:
        """What the dtype policy depends on that can change at run time (JAX: the x64 flag)."""
        return None

    def __repr__(self) -> str:
        return f"<backend {self.name}>"


def _fits(low: Any, high: Any, dtype: np.dtype) -> bool:
    if low is None or high is None:
        return True
    lo = np.asarray(low)
    hi = np.asarray(high)
    if not lo.size:
        return True
    if dtype.kind == "f":
        finite = np.concatenate([lo.reshape(-1), hi.reshape(-1)]).astype(np.float64)
        finite = finite[np.isfinite(finite)]
        return not finite.size or bool(np.abs(finite).max() <= np.finfo(dtype).max)
    info = np.iinfo(dtype)
    return int(lo.astype(object).min()) >= info.min and int(hi.astype(object).max()) <= info.max


class TorchBackend(Backend):
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.module = torch
        self._to_native = {
            np.dtype(np.bool_): torch.bool,
            np.dtype(np.int8): torch.int8,
            np.dtype(np.int16): torch.int16,
            np.dtype(np.int32): torch.int32,
            np.dtype(np.int64): torch.int64,
            np.dtype(np.uint8): torch.uint8,
            np.dtype(np.float16): torch.float16,
            np.dtype(np.float32): torch.float32,
            np.dtype(np.float64): torch.float64,
        }
        self._to_numpy = {v: k for k, v in self._to_native.items()}
        self._promoted: dict[np.dtype, np.dtype] = {
            np.dtype(np.uint16): np.dtype(np.int32),
            np.dtype(np.uint32): np.dtype(np.int64),
            np.dtype(np.uint64): np.dtype(np.int64),
        }
        for native, numpy_dtype in ((getattr(torch, "uint16", None), np.uint16),
                                    (getattr(torch, "uint32", None), np.uint32),
                                    (getattr(torch, "uint64", None), np.uint64),
                                    (torch.complex64, np.complex64),  # read as NumPy reads complex batches
                                    (torch.complex128, np.complex128),
                                    (torch.bfloat16, np.float32)):
            if native is not None:
                self._to_numpy[native] = np.dtype(numpy_dtype)

    def dtype(self, dtype: np.dtype, low: Any = None, high: Any = None, what: Any = None) -> Any:
        dtype = np.dtype(dtype)
        promoted = self._promoted.get(dtype, dtype)
        if promoted not in self._to_native:
            raise TypeError(f"torch: {what!r} has values of dtype {dtype}, which torch cannot hold")
        if promoted != dtype and not _fits(low, high, promoted):
            raise TypeError(f"torch: {what!r} has {dtype} values beyond {promoted}; torch has no such dtype")
        return self._to_native[promoted]

    def numpy_dtype(self, native: Any) -> np.dtype:
        try:
            return self._to_numpy[native]
        except KeyError:  # complex32, float8, ...: no NumPy dtype to decide by
            raise TypeError(f"torch: a batch of dtype {native} has no NumPy counterpart") from None

    def constant(self, array: Any, dtype: Any, device: Any) -> Any:
        # cast on the host (NumPy's exact casts; no uint kernels needed on the device), a copy:
        # torch shares memory with (read-only) NumPy arrays; bfloat16 goes over as float32
        host = self._to_numpy.get(dtype)
        if host is None:
            host = np.dtype(np.float64 if dtype.is_floating_point else np.int64)
        value = np.array(array, dtype=host)
        return self.module.as_tensor(value, device=device).to(dtype)

    def device(self, x: Any) -> Any:
        return x.device

    def from_host(self, array: np.ndarray) -> Any:
        return self.module.from_numpy(array)

    def resolve(self, device: Any) -> Any:
        """``device`` with its index: ``torch.Generator(device="cuda")`` has none (it draws on
        whichever device is current), so plans and constants are keyed by the current one."""
        if device.index is not None or device.type in ("cpu", "meta"):
            return device
        current = getattr(getattr(self.module, device.type, None), "current_device", None)
        index = current() if current is not None else self.module.empty(0, device=device).device.index
        return self.module.device(device.type, index)

    def is_traced(self, x: Any) -> bool:
        """Meta tensors (shapes and dtypes, no data) are abstract: nothing to read."""
        return bool(getattr(x, "is_meta", False))

    def to_numpy(self, x: Any) -> np.ndarray:
        if x.dtype == self.module.bfloat16:
            x = x.float()
        return x.numpy(force=True)  # type: ignore[no-any-return]  # detached, on the host, conj/neg resolved


class JaxBackend(Backend):
    name = "jax"

    def __init__(self) -> None:
        import jax
        import jax.numpy as jnp

        self.module = jnp
        self._jax = jax

    @property
    def x64(self) -> bool:
        return bool(self._jax.config.read("jax_enable_x64"))

    def policy(self) -> Any:
        return self.x64

    def dtype(self, dtype: np.dtype, low: Any = None, high: Any = None, what: Any = None) -> Any:
        dtype = np.dtype(dtype)
        if self.x64 or dtype.itemsize < 8:
            return dtype
        smaller = np.dtype({"f": np.float32, "i": np.int32, "u": np.uint32}[dtype.kind])
        if not _fits(low, high, smaller):
            raise ValueError(
                f"jax: {what!r} has {dtype} values beyond {smaller}, and JAX has no {dtype} without "
                "x64; enable it with jax.config.update('jax_enable_x64', True)"
            )
        return smaller

    def constant(self, array: Any, dtype: Any, device: Any) -> Any:
        value = np.asarray(array).astype(dtype)
        with self._jax.ensure_compile_time_eval():  # a concrete array even while tracing (cached)
            if device is None:
                return self.module.asarray(value)
            return self._jax.device_put(value, device)

    def device(self, x: Any) -> Any:
        """The one device ``x`` lives on; None when traced or spread over several devices
        (sharded): constants are then left uncommitted, and JAX places them where needed."""
        if self.is_traced(x):
            return None
        devices = getattr(x, "devices", None)
        if devices is None:
            return None
        found = devices()
        return next(iter(found)) if len(found) == 1 else None

    def from_host(self, array: np.ndarray) -> Any:
        return self.module.asarray(array)

    def is_traced(self, x: Any) -> bool:
        return isinstance(x, self._jax.core.Tracer)


_BACKENDS: dict[str, Backend] = {}
_CLASSES = {"torch": TorchBackend, "jax": JaxBackend}


def backend_named(name: str) -> Backend:
    """The backend called ``name`` ("torch" or "jax"), created (and its library imported) once.
    NumPy is no backend here: its arrays are the core kernel's (:class:`spacealg.core.kernel.Kernel`)."""
    try:
        return _BACKENDS[name]
    except KeyError:
        if name not in _CLASSES:
            raise ValueError(f"backend: expected 'torch' or 'jax', got {name!r}") from None
        importlib.import_module(name)
        backend = _BACKENDS[name] = _CLASSES[name]()
        return backend


def backend_of(obj: Any) -> Backend:
    """The backend of a tensor/JAX array/generator/key (or a tuple/dict batch of them).

    Raises TypeError for NumPy arrays and Python objects (they are NumPy's).
    """
    name = backend_name(obj)
    if name is None:
        raise TypeError(f"{type(obj).__qualname__} is not a torch or JAX array")
    return backend_named(name)


def to_numpy(batch: Any) -> Any:
    """A batch (array, or tuple/dict of them) moved to NumPy on the host, structure kept."""
    if isinstance(batch, tuple):
        return tuple(to_numpy(b) for b in batch)
    if isinstance(batch, list):
        return [to_numpy(b) for b in batch]
    if isinstance(batch, dict):
        return {k: to_numpy(v) for k, v in batch.items()}
    name = backend_name(batch)
    if name is None:
        return np.asarray(batch)
    return backend_named(name).to_numpy(batch)
