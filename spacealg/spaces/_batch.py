"""Shared helpers for the spaces' batched operations (array coercion without raising)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["REAL_KINDS", "all_trailing", "as_real_array", "batch_shape"]

REAL_KINDS = frozenset("biuf")


def as_real_array(x: Any) -> np.ndarray | None:
    """``x`` as a real-valued ndarray, or None if it is not one (strings, objects, ragged)."""
    if isinstance(x, np.ndarray):
        array = x
    else:
        if isinstance(x, (str, bytes)):
            return None
        try:
            array = np.asarray(x)
        except (ValueError, TypeError, OverflowError):
            return None
    if array.dtype.kind not in REAL_KINDS:
        if array.dtype.kind == "O" and array.size:
            try:
                array = array.astype(np.float64)
            except (ValueError, TypeError, OverflowError):
                return None
        else:
            return None
    return array


def batch_shape(batch: np.ndarray, element_shape: tuple[int, ...], what: str) -> tuple[int, ...]:
    """The leading batch shape of ``batch`` whose trailing shape must be ``element_shape``.

    Raises ValueError naming ``what`` when the trailing shape does not match.
    """
    k = len(element_shape)
    if batch.ndim < k or batch.shape[batch.ndim - k :] != element_shape:
        raise ValueError(
            f"isin: batch of shape {batch.shape} is not a batch of {what} "
            f"(elements of shape {element_shape})"
        )
    return batch.shape[: batch.ndim - k]


def full_size(size: int | tuple[int, ...] | None, element_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a sample of ``size`` elements of shape ``element_shape``."""
    return normalize_size(size) + element_shape


def normalize_size(size: int | tuple[int, ...] | None) -> tuple[int, ...]:
    """``size`` as a shape tuple (None: a single element, ``()``); ValueError if invalid."""
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        dims: tuple[Any, ...] = (size,)
    elif isinstance(size, tuple):
        dims = size
    else:
        raise TypeError(f"size: expected None, an int or a tuple of ints, got {size!r}")
    for d in dims:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0:
            raise ValueError(f"size: expected non-negative ints, got {size!r}")
    return tuple(int(d) for d in dims)


_ALL_ONES = np.uint64(0x0101010101010101)


def all_trailing(inside: np.ndarray, k: int) -> np.ndarray:
    """Reduce a per-entry membership array over its last ``k`` axes (the element's).

    Law: equal to ``inside.all(axis=last k axes)``. Short rows (the common case: a batch of
    small vectors) are reduced eight entries at a time, reading each row's bools as
    uint64 words, which avoids numpy's slow per-row reduction overhead.
    """
    if not k:
        return inside
    lead = inside.shape[: inside.ndim - k]
    width = math.prod(inside.shape[inside.ndim - k :])
    if width == 0 or not inside.size:
        return np.ones(lead, dtype=bool) if width == 0 else np.zeros(lead, dtype=bool)
    rows = np.ascontiguousarray(inside).reshape((*lead, width))
    if width % 8 or width > 512:
        return np.asarray(rows.all(axis=-1))
    words = rows.view(np.uint64)
    result = words[..., 0] == _ALL_ONES
    for j in range(1, width // 8):
        result &= words[..., j] == _ALL_ONES
    return result  # type: ignore[no-any-return]
