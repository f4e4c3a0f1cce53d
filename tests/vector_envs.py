"""Environments for the vector tests (tests/test_vector*.py and the vector benchmark).

- :class:`Walker`: one walker on [-1, 1] as a Gymnasium env; :class:`SeededWalkers`: ``n``
  of them as a native PufferEnv that seeds walker ``i`` with ``seed + i`` and restarts a
  fallen walker in the same step, keeping its final observation (the final-observation hook).
  With the same seed and actions, ``GymnasiumVectorView(SeededWalkers(n))`` equals Gymnasium's
  ``SyncVectorEnv([Walker] * n, autoreset_mode=SAME_STEP)`` step for step, infos included.
- :class:`SampledEnv`: observations sampled from any given space; episodes of ``length`` steps.
- :class:`DictEnv`: a small Dict-observation env (a Box and a Discrete) for the benchmark.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from spacealg.env import PufferEnv


class Walker(gymnasium.Env):
    """A walker on [-1, 1]: Discrete(3) moves left/stay/right; falling off ends the episode."""

    metadata = {"render_modes": []}  # noqa: RUF012

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1.5, 1.5, (2,), np.float32)  # a fallen walker ends just past 1
        self.action_space = spaces.Discrete(3)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.state = np.array([self.np_random.uniform(-1, 1), 0], np.float32)
        return self.state.copy(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        position = self.state[0] + np.float32(0.1) * np.float32(int(action) - 1)
        fell = bool(abs(position) > 1)
        self.state = np.array([position, min(self.state[1] + np.float32(0.01), 1)], np.float32)
        return self.state.copy(), float(fell), fell, False, {}


class SeededWalkers(PufferEnv):
    """``num_agents`` :class:`Walker` s in one native PufferEnv (walker ``i`` seeded ``seed + i``)."""

    keeps_final_observations = True

    def __init__(self, num_agents: int = 4, buf: Any = None) -> None:
        self.single_observation_space = spaces.Box(-1.5, 1.5, (2,), np.float32)  # a fallen walker ends just past 1
        self.single_action_space = spaces.Discrete(3)
        self.num_agents = num_agents
        super().__init__(buf)
        self.rngs = [np.random.default_rng() for _ in range(num_agents)]

    def _restart(self, i: int) -> None:
        self.observations[i] = (self.rngs[i].uniform(-1, 1), 0)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[dict]]:
        self.rngs = [np.random.default_rng(None if seed is None else seed + i) for i in range(self.num_agents)]
        for i in range(self.num_agents):
            self._restart(i)
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        return self.observations, []

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        self.actions[:] = actions
        position = self.observations[:, 0] + np.float32(0.1) * (self.actions - 1).astype(np.float32)
        self.terminals[:] = np.abs(position) > 1
        self.rewards[:] = self.terminals
        self.observations[:, 0] = position
        self.observations[:, 1] = np.minimum(self.observations[:, 1] + np.float32(0.01), 1)
        self.save_final_observations(self.terminals)  # the hook: before the rows restart
        for i in np.flatnonzero(self.terminals):
            self._restart(i)  # the same step: SAME_STEP autoreset
        logs = [{"fell": int(self.terminals.sum())}] if self.terminals.any() else []
        return self.observations, self.rewards, self.terminals, self.truncations, logs

    def close(self) -> None:
        pass


class SampledEnv(gymnasium.Env):
    """Observations drawn from ``observation_space`` (seeded by reset); ``length``-step episodes."""

    metadata = {"render_modes": []}  # noqa: RUF012

    def __init__(self, observation_space: Any, length: int = 3) -> None:
        self.observation_space = observation_space
        self.action_space = spaces.Discrete(2)
        self.length = length

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        self.t = 0
        return self.observation_space.sample(), {"t": 0}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.t += 1
        return self.observation_space.sample(), 0.1 * float(action), self.t >= self.length, False, {"t": self.t}


class DictEnv(gymnasium.Env):
    """A point in a box with a heading: Dict observation, Discrete(4) action, 200-step episodes."""

    metadata = {"render_modes": []}  # noqa: RUF012

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            {"position": spaces.Box(-1.0, 1.0, (2,), np.float32), "heading": spaces.Discrete(4)}
        )
        self.action_space = spaces.Discrete(4)
        self._moves = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]], np.float32) * 0.05

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.position = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        self.heading = 0
        self.t = 0
        return {"position": self.position, "heading": self.heading}, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.heading = int(action)
        self.position = np.clip(self.position + self._moves[self.heading], -1, 1)
        self.t += 1
        return {"position": self.position, "heading": self.heading}, float(self.position[0]), False, self.t >= 200, {}
