"""NumPy as an array kernel: the one backend of batched rules written once for three.

A leaf's batch rules (flattening, :mod:`spacealg.ops.flatten`; emulation decoding,
:mod:`spacealg.emulation.codec`) are written once over an array kernel ``k``: ``k.xp`` an
array-API namespace, ``k.native(model, dtype)`` the library's dtype for a NumPy one,
``k.const(model, tag, make, dtype)`` an array of ``make()`` where the batch lives (cached
on the leaf model where that costs a copy), ``k.widest_int()``/``k.widest_float()``,
``k.kind(x)`` (``"b"``, ``"i"``, ``"f"``), ``k.any_true(flags)`` (False for values that
cannot be read, as under ``jax.jit``) and ``k.traced``. torch and JAX pass their
:class:`spacealg.backends.kernel.Kernel`; NumPy passes :data:`NUMPY`.

Law: a rule called with :data:`NUMPY` on NumPy arrays gives what it gives on torch or JAX
arrays of the same values, moved to NumPy (dtypes as each library's policy has them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.core.leaf import LeafModel

__all__ = ["NUMPY", "NumpyKernel"]


class _NumpyArrays:
    """The array-API functions the rules call, as NumPy's array methods: NumPy's module
    functions wrap the methods in Python (``np.astype`` alone cost 1.3 us of the 1.7 us a
    256-row Box(3) ``flatten_batch`` took)."""

    @staticmethod
    def astype(x: np.ndarray, dtype: Any, copy: bool = True) -> np.ndarray:
        return x.astype(dtype, copy=copy)

    @staticmethod
    def reshape(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return x.reshape(shape)

    @staticmethod
    def round(x: np.ndarray) -> np.ndarray:
        return x.round()

    @staticmethod
    def clip(x: np.ndarray, low: Any, high: Any) -> np.ndarray:
        return x.clip(low, high)

    @staticmethod
    def argmax(x: np.ndarray, axis: int | None = None) -> Any:
        return x.argmax(axis)

    @staticmethod
    def any(x: np.ndarray, axis: int | None = None) -> Any:
        return x.any(axis)

    @staticmethod
    def all(x: np.ndarray, axis: int | None = None) -> Any:
        return x.all(axis)

    abs = staticmethod(np.abs)
    where = staticmethod(np.where)
    stack = staticmethod(np.stack)
    concat = staticmethod(np.concatenate)


_INT64 = np.dtype(np.int64)
_FLOAT64 = np.dtype(np.float64)


class NumpyKernel:
    """NumPy as the batch rules see an array library (see the module)."""

    name = "numpy"
    xp = _NumpyArrays
    traced = False
    device = None

    def native(self, model: LeafModel | None, dtype: Any = None) -> Any:
        return dtype if dtype is not None or model is None else model.value_dtype  # NumPy takes it as it is

    def widest_int(self) -> np.dtype:
        return _INT64

    def widest_float(self) -> np.dtype:
        return _FLOAT64

    def kind(self, x: Any) -> str:
        kind = x.dtype.kind
        return "i" if kind in "iu" else kind

    def const(self, model: LeafModel, tag: Any, make: Callable[[], Any], dtype: Any) -> np.ndarray:
        return np.asarray(make(), dtype)  # NumPy arrays already: no copy to keep

    def any_true(self, flags: Any) -> bool:
        return bool(flags.any())


NUMPY = NumpyKernel()
