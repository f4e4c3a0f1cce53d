"""One small random-number adapter per backend (random numbers are not in the Array API).

An adapter draws the few distributions that sampling needs, on its generator's device:
``uniform(shape, dtype)`` in ``[0, 1)``, ``between(shape, dtype, low, high)`` (scalars),
``normal``, ``exponential`` (rate 1) and ``below(widths, shape)``: integers ``0 <= k < w``
per entry (an int64/int32 array of offsets).

Seeding law (per backend): the same generator state, or the same key, on the same device
gives the same draws. torch's CPU and CUDA generators are different streams (a seed gives
different numbers on each device); a JAX key gives the same numbers on every device of a
platform. ``TorchRng`` advances its ``torch.Generator`` (like a NumPy Generator; on the
CPU, ``TorchCpuRng`` draws from a NumPy stream set from it, which is faster);
``JaxRng`` splits its key before every draw and never uses a key twice, so a function of a
key is pure (and traceable under ``jax.jit``/``jax.vmap``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.arrays import Backend, backend_named
from spacealg.core.leaf import all_equal

__all__ = ["JaxRng", "NumpyRng", "TorchCpuRng", "TorchRng", "rng_adapter", "torch_adapter_class"]

_WIDE = 2**62  # torch: offsets for per-entry widths come from [0, 2**62) mod w (bias < 2**-60)


class TorchRng:
    """Draws from a ``torch.Generator`` on its device (its state advances)."""

    name = "torch"

    def __init__(self, generator: Any) -> None:
        self.backend: Backend = backend_named("torch")
        self.torch = self.backend.module
        self.generator = generator
        self.device = self.backend.resolve(generator.device)  # type: ignore[attr-defined]
        self.plan_key = ("sample", type(self), "torch", str(self.device))  # a plan's variant of draws

    def uniform(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.torch.rand(shape, generator=self.generator, device=self.device, dtype=dtype)

    def between(self, shape: tuple[int, ...], dtype: Any, low: float, high: float) -> Any:
        out = self.torch.empty(shape, device=self.device, dtype=dtype)
        return out.uniform_(low, high, generator=self.generator)

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.torch.randn(shape, generator=self.generator, device=self.device, dtype=dtype)

    def exponential(self, shape: tuple[int, ...], dtype: Any) -> Any:
        out = self.torch.empty(shape, device=self.device, dtype=dtype)
        return out.exponential_(generator=self.generator)

    def below(self, widths: np.ndarray, shape: tuple[int, ...]) -> Any:
        """int64 offsets ``0 <= k < widths`` (broadcast over ``shape``'s trailing axes)."""
        return self.below_checked(type(self).check_below(widths), shape)

    @classmethod
    def check_below(cls, widths: np.ndarray) -> Any:
        """``widths`` prepared for :meth:`below_checked` (once per space: an int where every
        entry has the same width); ValueError when a width is beyond what the generator draws."""
        checked = _int64_widths(widths, "torch")
        if isinstance(checked, int):
            return checked
        _check_width(int(checked.max()), _WIDE, "torch")
        return _Widths(checked)

    def below_checked(self, widths: Any, shape: tuple[int, ...]) -> Any:
        """:meth:`below` of widths prepared by :meth:`check_below`."""
        if isinstance(widths, int):
            return self.torch.randint(0, widths, shape, generator=self.generator, device=self.device)
        drawn = self.torch.randint(0, _WIDE, shape, generator=self.generator, device=self.device)
        return self.torch.remainder(drawn, widths.on(self.torch, self.device))


class _Widths:
    """Per-entry widths (int64), with their tensor on each device they were used on."""

    def __init__(self, widths: np.ndarray) -> None:
        self.widths = widths
        self.tensors: dict[str, Any] = {}

    def on(self, torch: Any, device: Any) -> Any:
        key = str(device)
        tensor = self.tensors.get(key)
        if tensor is None:
            tensor = self.tensors[key] = torch.as_tensor(self.widths, device=device)
        return tensor


class TorchCpuRng(TorchRng):
    """A CPU ``torch.Generator``: the draws come from a NumPy PCG64 stream whose state and
    increment are four int64 words drawn from the generator (126 random bits each; the
    increment made odd, so the stream has its full period; the generator advances once per
    ``sample`` call), handed to torch without a copy (``torch.from_numpy``).

    NumPy's generator is faster than torch's CPU kernels (about 1.7× on uniform floats, on
    one thread), and the seeding law holds: the same generator state gives the same draws.
    float16/bfloat16 draws, which NumPy's generator does not make, use torch's own kernels.
    ``numpy`` is the NumPy generator (plans draw integers with it directly).
    """

    numpy_stream = True

    def __init__(self, generator: Any) -> None:
        super().__init__(generator)
        words = self.torch.randint(0, 2**63 - 1, (4,), generator=generator, dtype=self.torch.int64).tolist()
        self._state: dict[str, Any] = {  # 126 random bits of position, 126 of stream (odd increment)
            "bit_generator": "PCG64",
            "state": {"state": (words[0] << 64) | words[1], "inc": (words[2] << 64) | words[3] | 1},
            "has_uint32": 0, "uinteger": 0,
        }

    @property
    def numpy(self) -> np.random.Generator:
        """The NumPy generator holding this adapter's stream.

        One PCG64 per thread serves every adapter (seeding a new one costs about 15 µs, more
        than a small draw): the adapter that draws puts its state in, and the state of an
        adapter still alive that drew last is saved into it first, so interleaved adapters
        keep their own streams.
        """
        local = _LOCAL.__dict__
        shared = local.get("shared")
        if shared is None:
            bits = np.random.PCG64(0)
            shared = local["shared"] = [bits, np.random.Generator(bits), _dead]
        owner = shared[2]()
        if owner is not self:
            if owner is not None:
                owner._state = shared[0].state
            shared[0].state = self._state
            shared[2] = weakref.ref(self)
        return shared[1]  # type: ignore[no-any-return]

    def _float(self, dtype: Any) -> Any:
        """The NumPy type of torch ``dtype`` where NumPy's generator draws it (float32/64),
        else None (float16 and bfloat16, which the backend maps to wider NumPy types)."""
        if dtype == self.torch.float32 or dtype == self.torch.float64:
            return self.backend.numpy_dtype(dtype).type
        return None

    def uniform(self, shape: tuple[int, ...], dtype: Any) -> Any:
        f = self._float(dtype)
        if f is None:
            return super().uniform(shape, dtype)
        return self.torch.from_numpy(self.numpy.random(shape, dtype=f))

    def between(self, shape: tuple[int, ...], dtype: Any, low: float, high: float) -> Any:
        f = self._float(dtype)
        if f is None:
            return super().between(shape, dtype, low, high)
        drawn = self.numpy.random(shape, dtype=f)
        drawn *= f(high - low)  # in the draw's dtype, as torch's uniform_: never above ``high``
        drawn += f(low)         # when the width is exact (sample clips where it is not)
        return self.torch.from_numpy(drawn)

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        f = self._float(dtype)
        if f is None:
            return super().normal(shape, dtype)
        return self.torch.from_numpy(self.numpy.standard_normal(shape, dtype=f))

    def exponential(self, shape: tuple[int, ...], dtype: Any) -> Any:
        f = self._float(dtype)
        if f is None:
            return super().exponential(shape, dtype)
        return self.torch.from_numpy(self.numpy.standard_exponential(shape, dtype=f))

    @classmethod
    def check_below(cls, widths: np.ndarray) -> Any:
        return _int64_widths(widths, "torch")

    def below_checked(self, widths: Any, shape: tuple[int, ...]) -> Any:
        return self.torch.from_numpy(np.asarray(self.numpy.integers(0, widths, shape), dtype=np.int64))


_LOCAL = threading.local()


def _dead() -> None:
    return None


def _check_width(n: int, limit: int, name: str) -> None:
    if n > limit:
        raise ValueError(f"{name}: sampling among {n} integers needs a range of at most {limit}")


def _int64_widths(widths: np.ndarray, name: str) -> Any:
    """``widths`` for NumPy's ``integers``: one int where all are equal, else int64 (checked)."""
    exact = np.asarray(widths, dtype=object)
    _check_width(int(exact.max()) if exact.size else 1, 2**63 - 1, name)
    if all_equal(exact):
        return int(exact.reshape(-1)[0]) if exact.size else 1
    return exact.astype(np.int64)


class JaxRng:
    """Draws from a JAX PRNG key (``jax.random.key`` or ``PRNGKey``), splitting it each time."""

    name = "jax"

    def __init__(self, key: Any) -> None:
        import jax

        self.backend: Backend = backend_named("jax")
        self.random = jax.random
        self.key = key
        self.device = None

    @property
    def plan_key(self) -> Any:
        """The plan variant of draws for this adapter (the x64 flag decides the dtypes)."""
        return ("sample", JaxRng, "jax", None, self.backend.policy())

    def _next(self) -> Any:
        self.key, sub = self.random.split(self.key)
        return sub

    def spawn(self) -> Any:
        """A fresh subkey, for another rule's draw (the key held moves on: the next differs)."""
        return self._next()

    def uniform(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.random.uniform(self._next(), shape, dtype)

    def between(self, shape: tuple[int, ...], dtype: Any, low: float, high: float) -> Any:
        return self.random.uniform(self._next(), shape, dtype, low, high)

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.random.normal(self._next(), shape, dtype)

    def exponential(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.random.exponential(self._next(), shape, dtype)

    def below(self, widths: np.ndarray, shape: tuple[int, ...]) -> Any:
        return self.below_checked(type(self).check_below(widths), shape)

    @classmethod
    def check_below(cls, widths: np.ndarray) -> Any:
        dtype = np.int64 if getattr(backend_named("jax"), "x64", False) else np.int32
        limit = int(np.iinfo(dtype).max)
        exact = np.asarray(widths, dtype=object)
        _check_width(int(exact.max()) if exact.size else 1, limit, "jax")
        return (exact.astype(dtype) if exact.size else 1), dtype

    def below_checked(self, widths: Any, shape: tuple[int, ...]) -> Any:
        maxval, dtype = widths
        return self.random.randint(self._next(), shape, 0, maxval, dtype)


class NumpyRng:
    """Draws from a ``numpy.random.Generator`` (its state advances). ``numpy`` is the
    generator itself: plans draw integers with it directly, as for a CPU torch generator.
    float16 draws, which NumPy's generator does not make, are float32 draws rounded."""

    __slots__ = ("numpy",)
    name = "numpy"
    numpy_stream = True
    device = None
    plan_key = ("sample", "NumpyRng", "numpy")  # a plan's variant of draws

    def __init__(self, generator: np.random.Generator) -> None:
        self.numpy = generator

    def uniform(self, shape: tuple[int, ...], dtype: Any) -> Any:
        f = _DRAWN.get(dtype, _FLOAT32)
        return self.numpy.random(shape, dtype=f).astype(dtype, copy=False)

    def between(self, shape: tuple[int, ...], dtype: Any, low: float, high: float) -> Any:
        if len(shape) < 2 and (not shape or shape[0] < _SMALL):  # one ufunc: 1.4x at 16 entries
            # rounded to nearest: within; NumPy's uniform refuses a high of -0.0 over a low of 0.0
            return self.numpy.uniform(low, high if high != low else low, shape).astype(dtype)
        f = _DRAWN.get(dtype, _FLOAT32)
        drawn = self.numpy.random(shape, dtype=f)
        drawn *= high - low  # in the draw's dtype: never above ``high`` when the width is exact
        drawn += low         # (sample clips where it is not)
        return drawn if f is dtype.type else drawn.astype(dtype)

    def normal(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.numpy.standard_normal(shape, dtype=_DRAWN.get(dtype, _FLOAT32)).astype(dtype, copy=False)

    def exponential(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.numpy.standard_exponential(shape, dtype=_DRAWN.get(dtype, _FLOAT32)).astype(dtype, copy=False)

    def below(self, widths: np.ndarray, shape: tuple[int, ...]) -> Any:
        return self.below_checked(type(self).check_below(widths), shape)

    @classmethod
    def check_below(cls, widths: np.ndarray) -> Any:
        return _int64_widths(widths, "numpy")

    def below_checked(self, widths: Any, shape: tuple[int, ...]) -> Any:
        return self.numpy.integers(0, widths, shape, dtype=np.int64)


_FLOAT32 = np.float32
_SMALL = 256  # entries below which a float64 uniform draw and a cast beat a float32 draw and two ufuncs
#: the dtypes NumPy's generator draws floats in (others: float32 draws, rounded)
_DRAWN: dict[Any, Any] = {np.dtype(np.float32): np.float32, np.dtype(np.float64): np.float64}


def torch_adapter_class(device: Any) -> type[TorchRng]:
    """The adapter of a torch generator on ``device``: the NumPy-stream sampler for the CPU
    only (its draws are host memory); torch's own kernels on every other device."""
    return TorchCpuRng if device.type == "cpu" else TorchRng


def rng_adapter(rng: Any, name: str) -> TorchRng | JaxRng | NumpyRng:
    """The adapter of a ``torch.Generator`` (``name="torch"``), a JAX key (``"jax"``) or a
    ``numpy.random.Generator`` (``"numpy"``)."""
    return _ADAPTERS[name](rng)


def _numpy_adapter(rng: Any) -> NumpyRng:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng: expected a numpy.random.Generator, got {type(rng).__qualname__}")
    return NumpyRng(rng)


def _torch_adapter(rng: Any) -> TorchRng:
    torch = backend_named("torch").module
    if not isinstance(rng, torch.Generator):
        raise TypeError(f"rng: expected a torch.Generator, got {type(rng).__qualname__}")
    return torch_adapter_class(rng.device)(rng)


def _jax_adapter(rng: Any) -> JaxRng:
    backend = backend_named("jax")
    jax = backend._jax  # type: ignore[attr-defined]
    dtype = getattr(rng, "dtype", None)
    shape = tuple(getattr(rng, "shape", (None,)))
    typed = dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key) and shape == ()
    raw = dtype == np.uint32 and shape == (2,)
    if not (typed or raw):
        raise TypeError(
            "rng: a JAX array used as rng must be one PRNG key (jax.random.key(seed) or "
            f"jax.random.PRNGKey(seed); vmap over a batch of keys), got dtype {dtype} and shape {shape}"
        )
    return JaxRng(rng)


_ADAPTERS: dict[str, Callable[[Any], TorchRng | JaxRng | NumpyRng]] = {
    "numpy": _numpy_adapter, "torch": _torch_adapter, "jax": _jax_adapter}
