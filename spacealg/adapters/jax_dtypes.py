"""JAX's dtype rule, shared by the gymnax and Jumanji adapters.

Without JAX's x64 mode, JAX holds no 64-bit arrays: ``jnp.asarray`` turns int64 into int32,
uint64 into uint32 and float64 into float32. :func:`jax_dtype` applies that rule to a space
about to become a JAX spec, and refuses (TypeError naming the space) where the narrower
dtype cannot hold the space's bounds, so the narrowing is never a silent change of set.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

__all__ = ["fit_bounds", "jax_dtype"]


def jax_dtype(dtype: Any) -> np.dtype:
    """The dtype JAX stores ``dtype`` as (the same one under x64 mode)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(dtype))


def fit_bounds(low: np.ndarray, high: np.ndarray, dtype: np.dtype, space: Any, target: str) -> tuple[Any, Any]:
    """``low``/``high`` in ``dtype`` (floats rounded inwards: the narrower set is the members of
    ``space`` that ``dtype`` can hold); TypeError naming ``space`` if a finite bound does not fit."""
    if dtype.kind in "iub":
        info = (0, 1) if dtype.kind == "b" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        fits = low.size == 0 or (int(low.min()) >= info[0] and int(high.max()) <= info[1])
    else:
        with np.errstate(over="ignore"):
            fits = bool((np.isinf(low.astype(dtype)) <= np.isinf(low)).all()
                        and (np.isinf(high.astype(dtype)) <= np.isinf(high)).all())
    if not fits:
        raise TypeError(
            f"to_{target}: {space!r} has no {target} equivalent: it does not fit JAX's {dtype} "
            "(enable jax_enable_x64 for 64-bit dtypes)"
        )
    if dtype.kind != "f":
        return low.astype(dtype), high.astype(dtype)
    return _inward(low, dtype, up=True), _inward(high, dtype, up=False)


def _inward(bound: np.ndarray, dtype: np.dtype, up: bool) -> np.ndarray:
    """``bound`` in the narrower float ``dtype``, rounded towards the inside of the set (a low
    bound up, a high one down), as the backends round: the nearest float32 to 0.3 is above
    0.3, and ``float32(0.3)`` must not pass for ``Box(0.1, 0.3)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = bound.astype(dtype)
        wide = narrow.astype(bound.dtype) if bound.dtype.kind == "f" else narrow.astype(np.float64)
        outside = (wide < bound) if up else (wide > bound)
        step = np.nextafter(narrow, np.asarray(np.inf if up else -np.inf, dtype=dtype))
    return np.where(outside, step, narrow).astype(dtype)
