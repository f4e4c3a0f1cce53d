"""A small sound Gymnasium environment with a Dict observation (none of Gymnasium's own
environments that install without extras has one)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

__all__ = ["BEACON_SPEC", "Beacon", "make_beacon"]


class Beacon(gymnasium.Env):
    """A walker on a 1-D track of 9 cells looks for a beacon placed at random.

    Observation: ``{"position": Box(-1, 1, (2,), float32)`` (its cell scaled to [-1, 1] and
    its last move), ``"beacon": Discrete(9)}``; actions 0 (left), 1 (stay), 2 (right);
    reward 1 on reaching the beacon (the episode terminates), -0.01 per step otherwise.
    Randomness: the beacon and the start cell come from ``self.np_random``.
    """

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012
    cells = 9

    def __init__(self, render_mode: str | None = None) -> None:
        self.observation_space = spaces.Dict(
            {"position": spaces.Box(-1.0, 1.0, (2,), np.float32), "beacon": spaces.Discrete(self.cells)}
        )
        self.action_space = spaces.Discrete(3)
        self.render_mode = render_mode
        self.cell, self.beacon, self.move = 0, 0, 0

    def _observation(self) -> dict[str, Any]:
        scaled = 2.0 * self.cell / (self.cells - 1) - 1.0
        return {"position": np.array([scaled, self.move], dtype=np.float32), "beacon": int(self.beacon)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.beacon = int(self.np_random.integers(self.cells))
        self.cell = int(self.np_random.integers(self.cells))
        self.move = 0
        return self._observation(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.move = int(action) - 1
        self.cell = int(np.clip(self.cell + self.move, 0, self.cells - 1))
        reached = self.cell == self.beacon
        return self._observation(), 1.0 if reached else -0.01, reached, False, {}

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return "".join("B" if i == self.beacon else ("W" if i == self.cell else ".") for i in range(self.cells))


BEACON_SPEC = EnvSpec(id="Beacon-v0", entry_point=Beacon, max_episode_steps=50, disable_env_checker=True)


def make_beacon(**kwargs: Any) -> Any:
    """A :class:`Beacon` made by ``gymnasium.make`` (a 50-step TimeLimit, a spec)."""
    return gymnasium.make(BEACON_SPEC, **kwargs)
