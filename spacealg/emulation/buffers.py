"""PufferLib's buffer helpers: one structured row and its flat view (``make_buffer``,
``emulate_copy``), under PufferLib's names and signatures.

>>> import numpy as np, gymnasium
>>> from spacealg.emulation import dtype_from_space, emulate_copy, make_buffer
>>> space = gymnasium.spaces.Dict({"a": gymnasium.spaces.Discrete(3)})
>>> struct_dtype = dtype_from_space(space)
>>> arr, struct = make_buffer(np.int32, struct_dtype)       # one row, zeroed
>>> arr.shape, struct.shape
((1,), (1,))
>>> emulate_copy({"a": 2}, np.int32, struct_dtype)
array([2], dtype=int32)

Laws: ``arr`` and ``struct`` share memory (``arr`` is ``struct`` seen as ``arr_dtype``);
``n=None`` gives one flat row (PufferLib's single-agent case), ``n`` a ``(n, width)`` array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spacealg.emulation.codec import emulate

__all__ = ["emulate_copy", "make_buffer"]


def make_buffer(arr_dtype: Any, struct_dtype: Any, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(arr, struct)``: ``n`` zeroed rows of ``struct_dtype`` (one when ``n`` is None) and the
    same memory as ``arr_dtype``, flat for ``n=None``, ``(n, width)`` otherwise.

    Raises ValueError when ``struct_dtype``'s size is not a multiple of ``arr_dtype``'s.
    """
    arr_dtype, struct_dtype = np.dtype(arr_dtype), np.dtype(struct_dtype)
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0):
        raise ValueError(f"make_buffer: n must be None or a non-negative int, got {n!r}")
    if struct_dtype.itemsize % arr_dtype.itemsize:
        raise ValueError(
            f"make_buffer: a row of {struct_dtype} ({struct_dtype.itemsize} bytes) is not a whole "
            f"number of {arr_dtype} entries ({arr_dtype.itemsize} bytes)"
        )
    rows = 1 if n is None else int(n)
    struct = np.zeros(rows, dtype=struct_dtype)
    flat = struct.view(arr_dtype)
    arr = flat.reshape(-1) if n is None else flat.reshape(rows, struct_dtype.itemsize // arr_dtype.itemsize)
    return arr, struct


def emulate_copy(sample: Any, arr_dtype: Any, struct_dtype: Any) -> np.ndarray:
    """A fresh flat row of ``arr_dtype`` holding ``sample`` emulated (``make_buffer`` + ``emulate``)."""
    arr, struct = make_buffer(arr_dtype, struct_dtype)
    emulate(struct, sample)
    return arr
