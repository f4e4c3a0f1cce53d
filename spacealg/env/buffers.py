"""The shared buffers of a PufferLib-style environment, and ``set_buffers``.

An environment with ``num_agents = N``, ``single_observation_space`` O and
``single_action_space`` A owns six arrays (PufferLib's layout):

============== ================ ====================================================
name           shape            dtype
============== ================ ====================================================
observations   ``(N, *O.shape)`` ``O.dtype``
rewards        ``(N,)``         float32
terminals      ``(N,)``         bool
truncations    ``(N,)``         bool
masks          ``(N,)``         bool (allocated True: every agent is live)
actions        ``(N, *A.shape)`` A's dtype for a Box; int32 for any other space
                                (what native C environments read), unless its values
                                do not fit in int32
============== ================ ====================================================

``(N, *A.shape)`` is the shape of ``joint_space(A, N)`` for Discrete, MultiDiscrete and Box.
Given ``buf`` (a mapping, or an object with these attributes), the environment uses exactly
those arrays (no copy), after checking their shapes and dtype kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spacealg.env.errors import APIUsageError
from spacealg.env.kinds import puffer_space_class

__all__ = ["BUFFER_NAMES", "HasBuffers", "action_dtype", "buffer_layout", "make_buffers", "set_buffers"]

BUFFER_NAMES = ("observations", "rewards", "terminals", "truncations", "masks", "actions")

_INT32 = np.iinfo(np.int32)


class HasBuffers:
    """The six buffer attributes that :func:`set_buffers` gives an environment (for typing)."""

    observations: np.ndarray
    rewards: np.ndarray
    terminals: np.ndarray
    truncations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray


def _values_fit_int32(space: Any) -> bool:
    space_class = puffer_space_class(space)
    if space_class == "Discrete":
        low, high = int(space.start), int(space.start) + int(space.n) - 1
    elif space_class == "MultiDiscrete":
        start = np.asarray(getattr(space, "start", 0))
        low = int(np.min(start, initial=0))
        high = int(np.max(start + np.asarray(space.nvec) - 1, initial=0))
    else:
        return True
    return bool(_INT32.min <= low and high <= _INT32.max)


def action_dtype(space: Any) -> np.dtype:
    """The dtype of an action buffer for ``space`` (see the module table)."""
    if puffer_space_class(space) == "Box":
        return np.dtype(space.dtype)
    if _values_fit_int32(space):
        return np.dtype(np.int32)
    return np.dtype(space.dtype)


def _shape(space: Any, role: str) -> tuple[int, ...]:
    shape = getattr(space, "shape", None)
    if shape is None:
        raise APIUsageError(
            f"single_{role}_space {space!r} has no fixed shape, so it has no buffer; "
            "emulate it first (spacealg.emulation)"
        )
    return tuple(shape)


def buffer_layout(env: Any) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """``{name: (shape, dtype)}`` of the six buffers ``env`` needs (the module table)."""
    n = int(env.num_agents)
    obs = env.single_observation_space
    atn = env.single_action_space
    boolean = np.dtype(bool)
    return {
        "observations": ((n, *_shape(obs, "observation")), np.dtype(obs.dtype)),
        "rewards": ((n,), np.dtype(np.float32)),
        "terminals": ((n,), boolean),
        "truncations": ((n,), boolean),
        "masks": ((n,), boolean),
        "actions": ((n, *_shape(atn, "action")), action_dtype(atn)),
    }


def make_buffers(env: Any) -> dict[str, np.ndarray]:
    """Fresh zeroed buffers for ``env`` (masks all True)."""
    buffers = {name: np.zeros(shape, dtype) for name, (shape, dtype) in buffer_layout(env).items()}
    buffers["masks"][:] = True
    return buffers


def _given(buf: Any, name: str) -> Any:
    if isinstance(buf, Mapping):
        if name not in buf:
            raise APIUsageError(f"buf is missing {name!r}; it must hold {', '.join(BUFFER_NAMES)}")
        return buf[name]
    if not hasattr(buf, name):
        raise APIUsageError(f"buf has no attribute {name!r}; it must hold {', '.join(BUFFER_NAMES)}")
    return getattr(buf, name)


def _check(name: str, array: Any, shape: tuple[int, ...], dtype: np.dtype) -> None:
    if not isinstance(array, np.ndarray):
        raise APIUsageError(f"buf[{name!r}] must be a numpy array, got {type(array).__qualname__}")
    if array.shape != shape:
        raise APIUsageError(f"buf[{name!r}] has shape {array.shape}; this environment needs {shape}")
    if array.dtype.kind != dtype.kind:
        raise APIUsageError(
            f"buf[{name!r}] has dtype {array.dtype}; this environment needs {dtype} "
            f"(or another dtype of kind {dtype.kind!r})"
        )


def set_buffers(env: Any, buf: Any = None) -> None:
    """Give ``env`` its six buffers as attributes: fresh ones, or exactly the arrays in ``buf``.

    Laws: with ``buf``, ``env.<name> is buf[<name>]`` for every buffer name; without, every
    buffer has the shape and dtype of the module table. Raises APIUsageError for a missing,
    wrongly shaped or wrongly typed buffer.
    """
    if buf is None:
        for name, array in make_buffers(env).items():
            setattr(env, name, array)
        return
    layout = buffer_layout(env)
    arrays = {name: _given(buf, name) for name in BUFFER_NAMES}
    for name, array in arrays.items():
        _check(name, array, *layout[name])
    for name, array in arrays.items():
        setattr(env, name, array)
