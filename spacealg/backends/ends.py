"""The ends of a leaf as floats of a batch's dtype: the nearest floats inside, exactly.

Laws: for a float dtype ``d``, every float of ``d`` between ``inner_float_bounds(k, leaf, d)``
is a member of the leaf (entry by entry), and every member of ``d`` lies between them;
on JAX, whose XLA kernels flush subnormal floats to zero, the ends are floats XLA keeps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spacealg.core.kernel import Kernel
from spacealg.core.leaf import LeafModel, common

__all__ = ["inner_float_bounds"]


def inner_float_bounds(k: Kernel, leaf: LeafModel, dtype: Any, what: str = "clamp") -> tuple[Any, Any]:
    """The ends of ``leaf`` rounded inwards into the native float ``dtype``
    (:meth:`~spacealg.core.leaf.LeafModel.inner_ends`): Python floats where every entry has
    the same bounds, else cached constants. On JAX, whose XLA kernels flush subnormal
    floats to zero, a subnormal end moves inwards to the nearest float XLA keeps (0 or the
    smallest normal), so a clamp into ``(0, 1]`` never gives 0."""
    np_dtype = np.dtype(k.numpy_dtype(dtype))
    low, high = leaf.inner_ends(np_dtype)
    if k.name == "jax" and what == "clamp":
        low, high = _normal_ends(low, high, np_dtype)
    if what == "clamp" and (low > high).any():
        raise ValueError(f"clamp: no {np_dtype} number {k.name} keeps lies in {leaf.space!r}")
    if not low.size:
        return 0.0, 0.0
    first, last = common(low), common(high)
    if first is not None and last is not None:  # a longdouble end stays one: float() rounds it outwards
        wide = np_dtype.itemsize > 8
        return (np_dtype.type(first), np_dtype.type(last)) if wide else (float(first), float(last))
    return k.const(leaf, ("inner_lo", np_dtype.str), lambda: low, dtype), k.const(
        leaf, ("inner_hi", np_dtype.str), lambda: high, dtype)


def _normal_ends(low: np.ndarray, high: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Subnormal ends moved inwards to the nearest float that is zero or normal."""
    tiny = np.finfo(dtype).smallest_normal
    low = np.where((low > 0) & (low < tiny), tiny, np.where((low < 0) & (low > -tiny), 0.0, low)).astype(dtype)
    high = np.where((high < 0) & (high > -tiny), -tiny, np.where((high > 0) & (high < tiny), 0.0, high)).astype(dtype)
    return low, high
