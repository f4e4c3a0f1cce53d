"""ResizeObservation: integer downscaling of image observations by strided indexing.

Faster than Gymnasium's interpolating ResizeObservation: it keeps every ``downscale``-th
row and column (``obs[::d, ::d]``), a view with no arithmetic.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

__all__ = ["ResizeObservation"]


class ResizeObservation(gymnasium.Wrapper):
    """Keep every ``downscale``-th row and column of a Box observation of shape ``(H, W, ...)``.

    Laws: the observation is ``obs[::downscale, ::downscale]`` of the wrapped one, and it is
    a member of the new ``observation_space`` (shape ``(H // d, W // d, ...)``, the same
    dtype, and the strided bounds) whenever the wrapped one is a member of the old.
    """

    def __init__(self, env: gymnasium.Env, downscale: int = 2) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(downscale, (int, np.integer)) or isinstance(downscale, bool) or downscale < 1:
            raise ValueError(f"downscale must be a positive int, got {downscale!r}")
        if not isinstance(space, gymnasium.spaces.Box) or len(space.shape) < 2:
            raise TypeError(
                f"env: ResizeObservation needs a Box observation space of shape (H, W, ...), got {space!r}"
            )
        height, width = space.shape[:2]
        if height % downscale or width % downscale:
            raise ValueError(
                f"downscale={downscale} must divide the observation's height and width {(height, width)}"
            )
        self.downscale = int(downscale)
        d = self.downscale
        self.observation_space = gymnasium.spaces.Box(
            low=space.low[::d, ::d], high=space.high[::d, ::d], dtype=space.dtype
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        return obs[:: self.downscale, :: self.downscale], info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs[:: self.downscale, :: self.downscale], reward, terminated, truncated, info
