"""Small environments for the environment-layer tests (spacealg.env/emulation/wrappers).

- :class:`NestedDictEnv`: a Gymnasium env with a nested Dict observation of mixed dtypes and
  a Dict-of-Discrete action.
- :class:`DyingAgentsEnv`: a PettingZoo-style parallel env whose agents die over time.
- :class:`Walkers`: a native PufferEnv (N agents on a line).
- :class:`ImageEnv`: a Box-image observation env for ResizeObservation.
- :class:`OldGymEnv`: the pre-0.26 Gym API (4-tuple step, bare reset).

Every environment is deterministic given its reset seed and actions.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from spacealg.env import PufferEnv


class NestedDictEnv(gymnasium.Env):
    """A token on a 5×5 grid; nested Dict observations, Dict-of-Discrete actions."""

    metadata = {"render_modes": []}  # noqa: RUF012

    def __init__(self, max_steps: int = 40) -> None:
        self.max_steps = max_steps
        self.observation_space = spaces.Dict(
            {
                "position": spaces.Box(-1.0, 1.0, (2,), np.float32),
                "status": spaces.Dict(
                    {
                        "steps": spaces.Discrete(max_steps + 1),
                        "flags": spaces.MultiBinary(3),
                        "heading": spaces.Discrete(4, start=1),
                    }
                ),
                "view": spaces.Box(0, 9, (2, 3), np.int16),
            }
        )
        self.action_space = spaces.Dict({"move": spaces.Discrete(4), "boost": spaces.Discrete(2)})

    def _obs(self) -> dict[str, Any]:
        return {
            "position": (self.xy / 2.0 - 1.0).astype(np.float32),
            "status": {
                "steps": self.t,
                "flags": self.flags.copy(),
                "heading": self.heading,
            },
            "view": self.view.copy(),
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        self.xy = self.np_random.integers(0, 5, size=2)
        self.flags = self.np_random.integers(0, 2, size=3, dtype=np.int8)
        self.heading = 1
        self.view = self.np_random.integers(0, 10, size=(2, 3)).astype(np.int16)
        if options and "start" in options:
            self.xy = np.asarray(options["start"])
        return self._obs(), {"start": self.xy.copy()}

    def step(self, action: dict[str, Any]) -> tuple[Any, float, bool, bool, dict]:
        move, boost = int(action["move"]), int(action["boost"])
        delta = [(0, 1), (1, 0), (0, -1), (-1, 0)][move]
        self.xy = np.clip(self.xy + (1 + boost) * np.asarray(delta), 0, 4)
        self.heading = move + 1
        self.t += 1
        self.flags = self.np_random.integers(0, 2, size=3, dtype=np.int8)
        self.view = ((self.view + self.xy.sum() + boost) % 10).astype(np.int16)
        reward = float(self.xy[0] == 4 and self.xy[1] == 4) - 0.01 * boost
        terminated = bool(self.xy[0] == 4 and self.xy[1] == 4)
        truncated = self.t >= self.max_steps
        return self._obs(), reward, terminated, truncated, {"distance": float(8 - self.xy.sum())}


class DyingAgentsEnv:
    """A PettingZoo parallel env: each agent dies at a random step (drawn at reset).

    Observations are Box(0, 1, (3,)) (or the nested Dict of ``dict_obs=True``); actions are
    Discrete(3). An agent's reward is its action times a per-step random factor.
    """

    metadata = {"render_modes": [], "name": "dying_agents_v0"}  # noqa: RUF012
    render_mode = None

    def __init__(self, n_agents: int = 4, max_steps: int = 30, dict_obs: bool = False) -> None:
        self.possible_agents = [f"agent_{i}" for i in range(n_agents)]
        self.agents: list[str] = []
        self.max_steps = max_steps
        self.dict_obs = dict_obs
        if dict_obs:
            self._obs_space = spaces.Dict(
                {"x": spaces.Box(0.0, 1.0, (3,), np.float32), "alive_for": spaces.Discrete(max_steps + 2)}
            )
        else:
            self._obs_space = spaces.Box(0.0, 1.0, (3,), np.float32)
        self._atn_space = spaces.Discrete(3)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._atn_space

    def _obs(self, agent: str) -> Any:
        x = self.rng.random(3, dtype=np.float32)
        if self.dict_obs:
            return {"x": x, "alive_for": int(self.death[agent] - self.t)}
        return x

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        self.rng = np.random.default_rng(seed)
        self.t = 0
        self.agents = list(self.possible_agents)
        self.death = {a: int(self.rng.integers(2, self.max_steps + 1)) for a in self.agents}
        # The last agent outlives the horizon; the episode then ends by truncation.
        self.death[self.possible_agents[-1]] = self.max_steps + 1
        return {a: self._obs(a) for a in self.agents}, {a: {"alive": True} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        self.t += 1
        factor = float(self.rng.random())
        obs, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        for agent in self.agents:
            rewards[agent] = float(int(actions[agent]) * factor)
            terminations[agent] = self.t >= self.death[agent]
            truncations[agent] = self.t >= self.max_steps and not terminations[agent]
            obs[agent] = self._obs(agent)
            infos[agent] = {"nested": {"action": int(actions[agent])}, "name": agent}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return obs, rewards, terminations, truncations, infos

    def render(self) -> None:
        return None

    def close(self) -> None:
        pass


class Walkers(PufferEnv):
    """A native PufferEnv: ``num_agents`` walkers on [-1, 1]; Discrete(3) moves left/stay/right."""

    def __init__(self, num_agents: int = 4, buf: Any = None) -> None:
        self.single_observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.single_action_space = spaces.Discrete(3)
        self.num_agents = num_agents
        super().__init__(buf)
        self.rng = np.random.default_rng()

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[dict]]:
        self.rng = np.random.default_rng(seed)
        self.observations[:, 0] = self.rng.uniform(-1, 1, self.num_agents)
        self.observations[:, 1] = 0
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        return self.observations, []

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        self.actions[:] = actions
        position = self.observations[:, 0] + 0.1 * (self.actions - 1)
        self.terminals[:] = np.abs(position) > 1
        self.rewards[:] = self.terminals
        # Walkers that fall off restart at a random position.
        restart = self.rng.uniform(-1, 1, self.num_agents).astype(np.float32)
        self.observations[:, 0] = np.where(self.terminals, restart, position)
        self.observations[:, 1] = np.where(self.terminals, 0, np.minimum(self.observations[:, 1] + 0.01, 1))
        infos = [{"fell": int(self.terminals.sum())}] if self.terminals.any() else []
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def close(self) -> None:
        pass


class ImageEnv(gymnasium.Env):
    """Random uint8 images of shape ``shape``; the reward is the action."""

    def __init__(self, shape: tuple[int, ...] = (8, 6)) -> None:
        self.observation_space = spaces.Box(0, 255, shape, np.uint8)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.received: list[np.ndarray] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        return self._image(), {"options": options}

    def _image(self) -> np.ndarray:
        return self.np_random.integers(0, 256, self.observation_space.shape, dtype=np.uint8)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.received.append(np.array(action))
        return self._image(), float(np.sum(action)), False, False, {}


class OldGymEnv:
    """The pre-0.26 Gym API: ``reset()`` → obs, ``step`` → (obs, reward, done, info), ``seed``."""

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012
    render_mode = "ansi"

    def __init__(self) -> None:
        self.observation_space = spaces.Discrete(10)
        self.action_space = spaces.Discrete(2)
        self.rng = np.random.default_rng()
        self.closed = False

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> int:
        if seed is not None:
            self.seed(seed)
        self.state = int(self.rng.integers(0, 10))
        return self.state

    def step(self, action: int) -> tuple[int, float, bool, dict]:
        self.state = (self.state + int(action) + 1) % 10
        return self.state, float(action), self.state == 0, {"state": self.state}

    def render(self) -> str:
        return f"state={self.state}"

    def close(self) -> None:
        self.closed = True


class OldestGymEnv(OldGymEnv):
    """Gym before 0.22: ``reset()`` takes no seed; seeding is ``seed(s)``."""

    def reset(self) -> int:  # type: ignore[override]
        return super().reset()
