"""The leaf of a Gymnasium space that a defect changes, and the changed values.

A defect touches one leaf of a (possibly nested) space: the first ``Box`` (or ``Discrete``)
leaf, trying the key ``"observation"`` of a Dict first (PettingZoo's classic games put the
action mask beside it). Each function raises :class:`NotApplicable` where the space has no
such leaf, so that "where an operator applies" is decided by the space alone.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = [
    "NotApplicable",
    "aliased",
    "drifted",
    "global_draw",
    "malformed",
    "outside",
    "path_to",
    "rejects",
    "reshaped",
]


class NotApplicable(Exception):  # noqa: N818  (a reason, not an error)
    """The operator has no place in this base (the message says why)."""


def path_to(space: Any, kinds: tuple[type, ...]) -> tuple[Any, ...]:
    """The path (keys and indices) to the first leaf of ``space`` of one of ``kinds``."""
    if isinstance(space, kinds):
        return ()
    if isinstance(space, spaces.Dict):
        keys = sorted(space.spaces, key=lambda key: key != "observation")
        children = [(key, space.spaces[key]) for key in keys]
    elif isinstance(space, spaces.Tuple):
        children = list(enumerate(space.spaces))
    else:
        children = []
    for key, child in children:
        try:
            return (key, *path_to(child, kinds))
        except NotApplicable:
            continue
    names = "/".join(kind.__name__ for kind in kinds)
    raise NotApplicable(f"a {type(space).__name__} observation space has no {names} leaf")


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _put(value: Any, path: tuple[Any, ...], leaf: Any) -> Any:
    """``value`` with the leaf at ``path`` replaced (containers copied, never changed)."""
    if not path:
        return leaf
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _put(value[head], rest, leaf)}
    items = list(value)
    items[head] = _put(items[head], rest, leaf)
    return tuple(items)


def outside(space: Any, value: Any) -> Any:
    """``value`` with one entry of its first Box or Discrete leaf moved just past the
    leaf's bounds: not a member of ``space`` (same types, shapes and dtypes)."""
    path = path_to(space, (spaces.Box, spaces.Discrete))
    leaf = _get(space, path)
    if isinstance(leaf, spaces.Discrete):
        return _put(value, path, type(_get(value, path))(int(leaf.start) + int(leaf.n)))
    bounded = np.flatnonzero(np.isfinite(leaf.high) & (leaf.high < np.finfo(np.float32).max / 2))
    if bounded.size == 0:
        raise NotApplicable("its Box leaf has no finite upper bound to step past")
    array = np.array(_get(value, path), dtype=leaf.dtype, copy=True)
    index = int(bounded[0])
    array.flat[index] = leaf.high.flat[index] + 1
    return _put(value, path, array)


def _box_path(space: Any) -> tuple[Any, ...]:
    return path_to(space, (spaces.Box,))


def drifted(space: Any, value: Any) -> Any:
    """``value`` with its first Box leaf in another dtype of the same kind (float32 <->
    float64, other integers -> int64 or int32): the numbers are right, the dtype is not."""
    path = _box_path(space)
    dtype = np.dtype(_get(space, path).dtype)
    other = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.float32}.get(dtype)
    if other is None:
        other = np.int32 if dtype == np.int64 else np.int64
    return _put(value, path, np.asarray(_get(value, path)).astype(other))


def reshaped(space: Any, value: Any) -> Any:
    """``value`` with its first Box leaf given a leading axis of length 1."""
    path = _box_path(space)
    return _put(value, path, np.asarray(_get(value, path))[None])


def aliased(space: Any, value: Any, buffers: dict[str, Any], inside: bool) -> Any:
    """``value`` with its first Box leaf copied into one buffer kept in ``buffers`` and the
    buffer itself returned: every later observation overwrites the earlier ones in place.
    ``inside``: the leaf must sit inside a Dict (else: a bare array observation)."""
    path = _box_path(space)
    if inside != bool(path) or (inside and not isinstance(space, spaces.Dict)):
        where = "inside a Dict" if inside else "as the whole observation"
        raise NotApplicable(f"a {type(space).__name__} observation space has no array leaf {where}")
    leaf = np.asarray(_get(value, path))
    if "buffer" not in buffers or buffers["buffer"].shape != leaf.shape:
        buffers["buffer"] = np.empty_like(leaf)
    buffers["buffer"][...] = leaf
    return _put(value, path, buffers["buffer"])


def malformed(space: Any) -> Any:
    """A copy of ``space`` whose first Box leaf declares a shape its ``low``/``high`` (and
    so its samples) do not have: its own ``sample()`` is not a member."""
    path = _box_path(space)
    broken = copy.deepcopy(space)
    leaf = _get(broken, path)
    leaf._shape = (*leaf.shape, 1)  # what a constructor that forgets to broadcast leaves behind
    return broken


def global_draw(space: Any) -> Any:
    """A member of ``space`` drawn from NumPy's global generator (not the env's own)."""
    if isinstance(space, spaces.Discrete):
        return np.int64(int(space.start) + np.random.randint(int(space.n)))
    if isinstance(space, spaces.Box) and np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high)):
        return np.random.uniform(space.low, space.high).astype(space.dtype)
    raise NotApplicable(f"no global draw written for the action space {space}")


def rejects(space: Any, action: Any) -> bool:
    """Whether the mutant rejects ``action``, a member of ``space``: the last action of a
    Discrete space, or a Box action whose first entry lies in the top quarter of its range."""
    if isinstance(space, spaces.Discrete):
        if int(space.n) < 2:
            raise NotApplicable(f"{space} has a single action")
        return int(action) == int(space.start) + int(space.n) - 1
    if isinstance(space, spaces.Box) and np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high)):
        low, high = float(space.low.flat[0]), float(space.high.flat[0])
        return float(np.asarray(action).flat[0]) > low + 0.75 * (high - low)
    raise NotApplicable(f"no rejected action written for the action space {space}")
