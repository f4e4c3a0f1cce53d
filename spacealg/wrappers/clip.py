"""ClipAction: accept any action of the right shape, and clip it into the Box bounds."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

__all__ = ["ClipAction"]


def _dtype_limits(dtype: np.dtype) -> tuple[Any, Any]:
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    return info.min, info.max


class ClipAction(gymnasium.Wrapper):
    """Widen a Box action space to its dtype's limits and clip actions to the original bounds.

    Laws: the wrapped environment receives ``numpy.clip(action, low, high)`` of the original
    space, which is a member of it; ``action_space`` has the original shape and dtype and the
    dtype's full range as bounds (so a policy's out-of-bounds action is a member too).
    """

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        space = env.action_space
        if not isinstance(space, gymnasium.spaces.Box):
            raise TypeError(f"env: ClipAction needs a Box action space, got {space!r}")
        self.low = space.low
        self.high = space.high
        low, high = _dtype_limits(space.dtype)
        self.action_space = gymnasium.spaces.Box(low=low, high=high, shape=space.shape, dtype=space.dtype)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict]:
        return self.env.step(np.clip(action, self.low, self.high))
