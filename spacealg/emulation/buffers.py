"""PufferLib's free functions on structured buffers, under its names and signatures: one
structured row and its flat view (``make_buffer``, ``emulate_copy``), a sample written into
a structured array (``emulate``) and read back (``nativize``).

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

from collections.abc import Mapping
from typing import Any

import numpy as np

from spacealg.core.cache import IdentityCache
from spacealg.core.codegen import Generator
from spacealg.emulation.codec import cached_views_function, codec_for, read_leaves
from spacealg.emulation.spaces import Struct

__all__ = ["emulate", "emulate_copy", "make_buffer", "nativize"]


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


def nativize(arr: Any, space: Any, struct_dtype: Any) -> Any:
    """The member of ``space`` stored in ``arr`` under ``struct_dtype`` (PufferLib's signature).

    ``struct_dtype`` is the one returned by ``emulate_observation_space`` or
    ``emulate_action_space`` for ``space`` (which layout is meant). Arrays in the result
    are views of ``arr`` (as in PufferLib); Discrete values are Python ints.
    """
    for role in ("observation", "action"):
        try:
            codec = codec_for(space, role)
        except ValueError:
            continue
        if codec.struct_dtype is struct_dtype or codec.struct_dtype == np.dtype(struct_dtype):
            return codec.nativize(arr)
    raise ValueError(
        f"nativize: {np.dtype(struct_dtype)} is neither the observation nor the action layout of {space!r}"
    )


class _StructWriter:
    """Writes samples into structured arrays of one dtype (PufferLib's ``emulate``), fast.

    The field tree comes from the dtype alone: levels named ``f0, f1, ...`` are read from
    the sample by position (Tuples), others by field name (Dicts). Views are kept per
    array, by identity. A sample of another shape (a dict for a tuple level, non-str keys)
    makes the generated code raise, and :func:`emulate` falls back to the recursive walk.
    """

    def __init__(self, dtype: np.dtype) -> None:
        self.names: list[tuple[str, ...]] = []
        tree = self._tree(dtype, ())
        self._views: IdentityCache[tuple[np.ndarray, ...]] = IdentityCache("struct views", 64)
        gen = Generator(f"writing {dtype}")
        gen.namespace.update(_views=self._views, _bind=self._bind)
        miss = ["v = _views.get(struct)", "if v is None: v = _bind(struct)"]
        body = read_leaves(gen, tree, store=lambda k, value: f"v{k}[...] = {value}")
        self.write = cached_views_function(gen, "def write(struct, x):", "struct", len(self.names), miss, body)

    def _tree(self, dtype: Any, names: tuple[str, ...]) -> Any:
        """The dtype's levels as :class:`Struct` nodes (leaves: None); collects leaf names."""
        if dtype.names is None:
            self.names.append(names)
            return None
        positional = dtype.names == tuple(f"f{i}" for i in range(len(dtype.names)))
        keys = tuple(range(len(dtype.names))) if positional else dtype.names
        parts = tuple(self._tree(dtype.fields[name][0], (*names, name)) for name in dtype.names)
        return Struct(keys, dtype.names, parts, not positional)

    def _bind(self, struct: np.ndarray) -> tuple[np.ndarray, ...]:
        views = []
        for names in self.names:
            view: Any = struct
            for name in names:
                view = view[name]
            views.append(view)
        return self._views.put(struct, tuple(views))


_WRITERS: IdentityCache[_StructWriter] = IdentityCache("struct writers", 256, by_value=True)


def _emulate_slow(struct: Any, sample: Any) -> None:
    if struct.dtype.names is None:
        struct[...] = sample
    elif isinstance(sample, Mapping):
        for key, value in sample.items():
            _emulate_slow(struct[key if isinstance(key, str) else str(key)], value)
    else:
        for i, value in enumerate(sample):
            _emulate_slow(struct[f"f{i}"], value)


def emulate(struct: Any, sample: Any) -> None:
    """Writes ``sample`` into the structured array ``struct`` (PufferLib's signature).

    Dict samples go to the fields named by their keys, tuples (and lists) to ``f0, f1, ...``,
    anything else into the array itself; values are written raw (cast to the field's
    dtype). Spaces whose leaves need an encoding (labels) go through :class:`Codec`.
    """
    dtype = struct.dtype if isinstance(struct, np.ndarray) else None
    if dtype is None or dtype.names is None:
        _emulate_slow(struct, sample)
        return
    writer = _WRITERS.get_or_compute(dtype, _StructWriter)
    try:
        writer.write(struct, sample)
    except (KeyError, TypeError, IndexError):
        _emulate_slow(struct, sample)
