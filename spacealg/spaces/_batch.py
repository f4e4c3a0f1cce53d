"""Shared helpers for the spaces' batched operations (array coercion without raising) and for
their constructors' dtype and size arguments."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from spacealg.core.kernel import NUMPY
from spacealg.core.protocol import contains

__all__ = ["REAL_KINDS", "all_trailing", "as_real_array", "batch_shape", "dtype_arg", "isin_objects", "items_array"]

REAL_KINDS = frozenset("biuf")


def dtype_arg(owner: str, dtype: Any, kinds: str = "biuf", what: str = "bool, integer or floating") -> np.dtype:
    """``dtype`` as a NumPy dtype of one of ``kinds``, for the constructor of ``owner``.

    Raises ValueError for None (NumPy reads it as float64: refused rather than guessed) and
    for a dtype of another kind, TypeError for what is no dtype; each names ``owner`` and ``what``."""
    if dtype is None:
        raise ValueError(f"{owner}: dtype must be given (None is not a dtype)")
    try:
        checked = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{owner}: dtype must be a numpy dtype, got {dtype!r}") from None
    if checked.kind not in kinds:
        raise ValueError(f"{owner}: dtype must be {what}, got {checked}")
    return checked


def as_real_array(x: Any) -> np.ndarray | None:
    """``x`` as a real-valued ndarray holding exactly the values of ``x``, or None if it is not
    one (strings, objects, ragged, datetimes, or Python ints no numpy dtype holds exactly).

    Never raises: objects whose ``__array__``, ``__len__`` or ``__iter__`` raise are not arrays.
    """
    if isinstance(x, np.ndarray):
        array = x
    else:
        if isinstance(x, (str, bytes)):
            return None
        try:
            array = np.asarray(x)
        except Exception:  # a hostile __array__/__len__/__iter__ makes x no array
            return None
    if array.dtype.kind not in REAL_KINDS:
        if array.dtype.kind == "O":  # an empty one holds no entry that is not a real number
            return _exact_object_array(array) if array.size else array.astype(np.float64)
        return None
    return array


_EXACT_DTYPES = (np.int64, np.uint64, np.float64)


def _exact_object_array(array: np.ndarray) -> np.ndarray | None:
    """An object array of real numbers as the first of int64, uint64, float64 that holds
    every value exactly (Python ints beyond 2**53 must not round), else None."""
    values = array.reshape(-1).tolist()
    if not all(isinstance(v, numbers.Real) and not isinstance(v, np.timedelta64) for v in values):
        return None
    for dtype in _EXACT_DTYPES:
        try:
            converted = np.array(values, dtype=dtype)
        except (OverflowError, ValueError, TypeError):
            continue
        try:
            exact = all(a == b or (a != a and b != b) for a, b in zip(converted.tolist(), values))
        except Exception:
            return None
        if exact:
            return converted.reshape(array.shape)
    return None


def has_nan(label: Any) -> bool:
    """Whether a label is NaN or a tuple holding one (a label that is not equal to itself)."""
    if isinstance(label, tuple):
        return any(has_nan(v) for v in label)
    try:
        return bool(label != label)
    except Exception:
        return False


def batch_shape(batch: np.ndarray, element_shape: tuple[int, ...], space: Any) -> tuple[int, ...]:
    """The leading batch shape of ``batch`` whose trailing shape must be ``element_shape``.

    Raises ValueError naming ``space`` (its repr, made only then) when the trailing shape
    does not match.
    """
    k = len(element_shape)
    if batch.ndim < k or batch.shape[batch.ndim - k :] != element_shape:
        raise ValueError(
            f"isin: batch of shape {batch.shape} is not a batch of {space!r} "
            f"(elements of shape {element_shape})"
        )
    return batch.shape[: batch.ndim - k]


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


def all_trailing(inside: np.ndarray, k: int) -> np.ndarray:
    """Reduce a per-entry membership array over its last ``k`` axes (the element's), by NumPy's
    kernel's row reduction (:meth:`~spacealg.core.kernel.Kernel.every`, decided once per width).

    Law: equal to ``inside.all(axis=last k axes)``.
    """
    if not k:
        return inside
    lead = inside.shape[: inside.ndim - k]
    width = math.prod(inside.shape[inside.ndim - k :])
    return NUMPY.every(width)(inside.reshape((*lead, width)))  # type: ignore[no-any-return]


def items_array(batch: Any) -> np.ndarray:
    """A batch as an array of elements: arrays as they are, sequences as 1-d object arrays."""
    if isinstance(batch, np.ndarray):
        return batch
    items = list(batch)
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item
    return array


def isin_objects(batch: Any, space: Any) -> np.ndarray:
    """``isin`` entry by entry (``contains``) of an object array, or a sequence, of elements."""
    array = items_array(batch)
    member = np.frompyfunc(lambda x: contains(x, space), 1, 1)
    return np.asarray(member(array), dtype=bool).reshape(array.shape)
