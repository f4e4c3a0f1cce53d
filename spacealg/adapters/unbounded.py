"""The Box of every array of a shape and dtype, shared by the foreign adapters (dm_env's
``Array``, TorchRL's ``Unbounded``, Jumanji's ``Array``). It imports no optional package, so
each adapter needs only its own extra (tests/test_hardening_2.py checks every extra)."""

from __future__ import annotations

import numpy as np

from spacealg.spaces.box import Box

__all__ = ["is_unbounded", "unbounded_box"]


def unbounded_box(shape: tuple[int, ...], dtype: np.dtype) -> Box:
    """The Box of every array of ``shape`` and ``dtype`` (unbounded flags where it can)."""
    if dtype.kind == "b":
        return Box(False, True, shape=shape, dtype=dtype)
    if dtype.kind == "u":  # unsigned boxes take no infinite bound: the dtype's range
        return Box(0, int(np.iinfo(dtype).max), shape=shape, dtype=dtype)
    return Box(-np.inf, np.inf, shape=shape, dtype=dtype)


def is_unbounded(space: Box) -> bool:
    """Whether ``space`` is every array of its shape and dtype (``unbounded_box``'s image)."""
    if space.dtype.kind == "b":
        return bool((space.low == 0).all() and (space.high == 1).all())
    if space.dtype.kind == "u":
        return bool((space.low == 0).all() and (space.high == np.iinfo(space.dtype).max).all())
    return bool(not space.bounded_below.any() and not space.bounded_above.any())
