"""Gymnasium vector environments over the corpus' Corridor: sound ones and ones with a bug
in the vector layer (seeding, autoreset, row isolation)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from envcorpus.gym_envs import Corridor

ROWS = 3


def CorridorVector() -> SyncVectorEnv:
    """Three corridors, next-step autoreset. Sound."""
    return SyncVectorEnv([Corridor] * ROWS)


def SameStepCorridorVector() -> SyncVectorEnv:
    """Three corridors, same-step autoreset. Sound."""
    return SyncVectorEnv([Corridor] * ROWS, autoreset_mode=AutoresetMode.SAME_STEP)


class SameSeedVector(SyncVectorEnv):
    """Bug: ``reset(seed=s)`` seeds every sub-env with s instead of s + i (a seed: any)."""

    def __init__(self) -> None:
        super().__init__([Corridor] * ROWS)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        if isinstance(seed, int):
            seed = [seed] * self.num_envs
        return super().reset(seed=seed, options=options)


class MislabelledVector(SyncVectorEnv):
    """Bug: declares same-step autoreset but resets on the next step (reached only when a
    sub-env's episode ends: an action sequence)."""

    def __init__(self) -> None:
        super().__init__([Corridor] * ROWS, autoreset_mode=AutoresetMode.NEXT_STEP)
        self.metadata = {**self.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}


class WindyVector(SyncVectorEnv):
    """Bug: a shared "wind" applied after each step pushes row 1 by row 0's action, so
    one row's action changes another row (an action of row 0 other than coasting)."""

    def __init__(self) -> None:
        super().__init__([Corridor] * ROWS)

    def step(self, actions: Any) -> Any:
        wind = float(np.asarray(actions)[0]) - 1.0
        if wind:
            inner = self.envs[1].unwrapped
            inner.x = float(min(max(inner.x + 0.5 * wind, 0.0), inner.GOAL))
        obs, rewards, terminations, truncations, infos = super().step(actions)
        obs = np.array(obs, copy=True)
        obs[1, 0] = np.float32(self.envs[1].unwrapped.x)
        return obs, rewards, terminations, truncations, infos
