"""Small PettingZoo parallel environments: a sound race, and variants with one bug each."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv


class Race(ParallelEnv):
    """Two cars race to x = 10: actions stay, step (+1) or sprint (+2); a car that arrives
    terminates and leaves; everyone still racing is truncated after 30 steps."""

    metadata: ClassVar[dict[str, Any]] = {"name": "race_v0"}
    FINISH = 10.0
    LIMIT = 30

    def __init__(self) -> None:
        self.possible_agents = ["car_0", "car_1"]
        self.agents: list[str] = []

    @functools.cache  # noqa: B019 - PettingZoo wants the same object per agent
    def observation_space(self, agent: str) -> spaces.Space:
        return spaces.Box(0.0, self.FINISH, shape=(1,), dtype=np.float32)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Space:
        return spaces.Discrete(3)

    def _starts(self) -> np.ndarray:
        return self.rng.uniform(0.0, 1.0, size=len(self.possible_agents))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.position = dict(zip(self.agents, self._starts()))
        self.t = 0
        return {a: self._obs(a) for a in self.agents}, {a: {} for a in self.agents}

    def _obs(self, agent: str) -> np.ndarray:
        return np.array([min(self.position[agent], self.FINISH)], dtype=np.float32)

    def _advance(self, actions: dict[str, Any]) -> None:
        for agent, action in actions.items():
            self.position[agent] += float(action)

    def _reward(self, agent: str, arrived: bool) -> Any:
        return 1.0 if arrived else 0.0

    def _leave(self, done: dict[str, bool]) -> None:
        self.agents = [a for a in self.agents if not done[a]]

    def _returned(self) -> list[str]:
        return list(self.agents)

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        self._advance(actions)
        self.t += 1
        returned = self._returned()
        terminations = {a: bool(self.position[a] >= self.FINISH) for a in returned}
        truncations = {a: self.t >= self.LIMIT for a in returned}
        rewards = {a: self._reward(a, terminations[a]) for a in returned}
        observations = {a: self._obs(a) for a in returned}
        infos = {a: {} for a in returned}
        self._leave({a: terminations[a] or truncations[a] for a in returned})
        return observations, rewards, terminations, truncations, infos


class ZombieRace(Race):
    """Bug: a car that arrives is never removed from ``env.agents`` (only after a car
    finishes: an action sequence)."""

    def _leave(self, done: dict[str, bool]) -> None:
        if self.t >= self.LIMIT:
            self.agents = []


class GhostRace(Race):
    """Bug: the dicts keep holding every car, finished or not, although finished cars
    leave ``env.agents`` (PettingZoo's own test only warns about this)."""

    def _returned(self) -> list[str]:
        return list(self.possible_agents)

    def _leave(self, done: dict[str, bool]) -> None:
        self.agents = [a for a in self.agents if not done[a]]


class MarshalRace(Race):
    """Bug: when both cars sprint at once, a race marshal joins ``env.agents``, but it is
    not in possible_agents (a specific joint action)."""

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        both_sprint = len(actions) == 2 and all(int(a) == 2 for a in actions.values())
        result = super().step(actions)
        if both_sprint and "marshal" not in self.agents:
            self.agents.append("marshal")
            self.position["marshal"] = 0.0
        return result


class OvershootRace(Race):
    """Bug: the observation is not capped at the finish line, so a car that sprints over
    it observes 11 > high (a per-agent observation outside its space)."""

    def _obs(self, agent: str) -> np.ndarray:
        return np.array([self.position[agent]], dtype=np.float32)


class IdleRewardRace(Race):
    """Bug: a car that stays put gets reward None instead of 0."""

    def _reward(self, agent: str, arrived: bool) -> Any:
        return None if self._last_actions.get(agent) == 0 else float(arrived)

    def _advance(self, actions: dict[str, Any]) -> None:
        self._last_actions = {a: int(v) for a, v in actions.items()}
        super()._advance(actions)


class UnseededRace(Race):
    """Bug: start positions come from numpy's global generator, so reset(seed=...) is not
    reproducible."""

    def _starts(self) -> np.ndarray:
        return np.random.uniform(0.0, 1.0, size=len(self.possible_agents))


class GustyRace(Race):
    """A sound race whose cars all start at 0, with gusts drawn from the seeded generator at
    each step: different seeds differ only after the first step."""

    def _starts(self) -> np.ndarray:
        return np.zeros(len(self.possible_agents))

    def _advance(self, actions: dict[str, Any]) -> None:
        super()._advance(actions)
        for agent in actions:
            self.position[agent] += float(self.rng.uniform(0.0, 0.5))


class SeededOnceGustyRace(GustyRace):
    """Bug: the generator is seeded once, in the constructor, and reset ignores its seed;
    every race starts at 0, so only the gusts of the steps show it (16 seeds on fresh
    instances, then a step)."""

    def __init__(self) -> None:
        super().__init__()
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        return super().reset(seed=None, options=options)


class BufferRace(Race):
    """Bug: each car's observation is a buffer of its own, updated in place at every step, so
    the observations dict a step returned changes afterwards (the step after any step)."""

    def _obs(self, agent: str) -> np.ndarray:
        buffers = self.__dict__.setdefault("buffers", {})
        buffer = buffers.setdefault(agent, np.zeros(1, dtype=np.float32))
        buffer[0] = min(self.position[agent], self.FINISH)
        return buffer


class CappedRace(Race):
    """Sound: declares ``max_cycles`` = 8 and truncates every car still racing at step 8."""

    LIMIT = 8

    def __init__(self) -> None:
        super().__init__()
        self.max_cycles = self.LIMIT


class EndlessRace(Race):
    """Bug: declares ``max_cycles`` = 5 (the race was shortened) but still truncates at step
    30, so a slow race runs past five cycles (an action sequence of small moves)."""

    def __init__(self) -> None:
        super().__init__()
        self.max_cycles = 5
