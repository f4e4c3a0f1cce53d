"""Gymnasium vector environments over the corpus' Corridor: sound ones and ones with a bug
in the vector layer (seeding, autoreset, row isolation)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space

from envcorpus.gym_envs import Corridor
from envcorpus.law_envs import AnsiCorridor

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


class _RejectingCorridor(Corridor):
    """A corridor whose step raises ValueError for full thrust (action 2, a member of the
    action space) from its second step on."""

    def _move(self, action: int) -> None:
        if self.t >= 1 and int(action) == 2:
            raise ValueError(f"action must be 0 or 1 after the first step, got {action}")
        super()._move(action)


def RejectingCorridorVector() -> SyncVectorEnv:
    """Bug: a sub-env's step raises ValueError for a legal action (full thrust after the
    first step; the sound twin is :func:`CorridorVector`)."""
    return SyncVectorEnv([_RejectingCorridor] * ROWS)


class ClosingVector(SyncVectorEnv):
    """Bug: ``close()`` closes the sub-envs, then raises RuntimeError (a teardown that
    fails: the first close already)."""

    def __init__(self) -> None:
        super().__init__([Corridor] * ROWS)

    def close_extras(self, **kwargs: Any) -> None:
        super().close_extras(**kwargs)
        raise RuntimeError("the worker pool was already shut down")


def AnsiCorridorVector(render_mode: str | None = "ansi") -> SyncVectorEnv:
    """Three painted corridors (``rgb_array`` and ``ansi`` declared), built rendering text.
    Sound."""
    return SyncVectorEnv([functools.partial(AnsiCorridor, render_mode=render_mode)] * ROWS)


class _BlankCorridor(AnsiCorridor):
    def render(self) -> Any:
        return None


def BlankCorridorVector(render_mode: str | None = "ansi") -> SyncVectorEnv:
    """Bug: the sub-envs declare ``rgb_array`` and ``ansi`` rendering but render None in
    every mode, so the vector env's frames are all None (any render in a declared mode)."""
    return SyncVectorEnv([functools.partial(_BlankCorridor, render_mode=render_mode)] * ROWS)


# -- natively batched: no single environments to compare rows with (issue 23 point 1) -------


class BatchedCorridors(VectorEnv):
    """Three corridors in NumPy arrays, natively batched (no sub-env objects): a batch of
    identical corridors (``metadata["identical_sub_envs"]``), row ``i`` seeded with
    ``seed + i``; next-step autoreset (the step after an end resets the row,
    ignoring its action, with reward 0 and both flags False). Sound."""

    GOAL, LIMIT = 10.0, 50

    def __init__(self, num_envs: int = ROWS) -> None:
        self.num_envs = num_envs
        self.single_observation_space = spaces.Box(
            np.array([0.0, -5.0], dtype=np.float32), np.array([10.0, 5.0], dtype=np.float32)
        )
        self.single_action_space = spaces.Discrete(3)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "identical_sub_envs": True}
        self.rngs = [np.random.default_rng(i) for i in range(num_envs)]
        self.x = np.zeros(num_envs)
        self.v = np.zeros(num_envs)
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.done = np.zeros(num_envs, dtype=bool)

    def _seeds(self, seed: int) -> list[int]:
        return [seed + i for i in range(self.num_envs)]

    def _restart(self, rows: np.ndarray) -> None:
        for i in np.flatnonzero(rows):
            self.x[i], self.v[i], self.t[i] = self.rngs[i].uniform(0.0, 2.0), 0.0, 0

    def _obs(self) -> np.ndarray:
        return np.stack([self.x, self.v], axis=1).astype(np.float32)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        if seed is not None:
            self.rngs = [np.random.default_rng(s) for s in self._seeds(int(seed))]
        self._restart(np.ones(self.num_envs, dtype=bool))
        self.done[:] = False
        return self._obs(), {}

    def _ends(self, ended: np.ndarray, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> None:
        """What the rows that ended at this step do (next-step: restart on the next step)."""
        self.done = ended

    def step(self, actions: Any) -> Any:
        actions = np.asarray(actions)
        restarting = self.done.copy()
        self.v = np.clip(self.v + actions - 1, -5.0, 5.0)
        self.x = np.clip(self.x + self.v, 0.0, self.GOAL)
        self.v[(self.x == 0.0) | (self.x == self.GOAL)] = 0.0
        self.t += 1
        terminated = self.x >= self.GOAL
        truncated = self.t >= self.LIMIT
        rewards = np.where(terminated, 10.0, -1.0)
        self._restart(restarting)
        rewards[restarting], terminated[restarting], truncated[restarting] = 0.0, False, False
        self._ends(terminated | truncated, rewards, terminated, truncated)
        return self._obs(), rewards, terminated, truncated, {}


class SameSeedBatch(BatchedCorridors):
    """Bug: ``reset(seed=s)`` seeds every row with ``s``, not ``s + i`` (a seed: any), and
    there are no single envs to compare rows with."""

    def _seeds(self, seed: int) -> list[int]:
        return [seed] * self.num_envs


class EagerResetBatch(BatchedCorridors):
    """Bug: declares next-step autoreset but restarts an ended row in the same step, so the
    step after an end is an ordinary step (reached when a row's episode ends: an action
    sequence)."""

    def _ends(self, ended: np.ndarray, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> None:
        self._restart(ended)
        self.done[:] = False


class PoolCorridors(BatchedCorridors):
    """EnvPool's declared-space convention (as ``envpool.make(..., env_type="gymnasium")``):
    no ``single_*_space``, ``observation_space`` and ``action_space`` are the single spaces.
    Bug (declared-spaces only): Gymnasium's rule asks for the batched spaces; the dynamics,
    seeding and autoreset are sound and are checked all the same."""

    def __init__(self, num_envs: int = ROWS) -> None:
        super().__init__(num_envs)
        self.observation_space, self.action_space = self.single_observation_space, self.single_action_space
        del self.single_observation_space, self.single_action_space


class ActionLeakBatch(BatchedCorridors):
    """Bug: the reset step of next-step autoreset (reward 0, flags False, as declared) still
    applies the row's action to the restarted cart (an action sequence that ends a row's
    episode, then any action but coasting)."""

    def step(self, actions: Any) -> Any:
        restarting = self.done.copy()
        _, rewards, terminated, truncated, infos = super().step(actions)
        pushed = restarting & (np.asarray(actions) != 1)
        self.x[pushed] = np.clip(self.x[pushed] + 0.5 * (np.asarray(actions)[pushed] - 1), 0.0, self.GOAL)
        return self._obs(), rewards, terminated, truncated, infos


# -- rows that are not sub-envs: sub-env-seeding does not apply, rows-differ does (issue 35) ---


class SharedRngBatch(BatchedCorridors):
    """Sound: corridors whose rows all draw from one generator seeded by ``reset`` (as the
    agents of one multi-agent env), not declared a batch of identical sub-envs; each restart
    draws a start for every row, so one row's end never shifts another row's draws."""

    def __init__(self, num_envs: int = ROWS) -> None:
        super().__init__(num_envs)
        self.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}
        self.rng = np.random.default_rng(0)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        if seed is not None:
            self.rng = np.random.default_rng(int(seed))
        return super().reset(options=options)

    def _restart(self, rows: np.ndarray) -> None:
        starts = self.rng.uniform(0.0, 2.0, self.num_envs)
        self.x[rows], self.v[rows], self.t[rows] = starts[rows], 0.0, 0


class UndeclaredSameSeedBatch(SameSeedBatch):
    """Bug: as SameSeedBatch (every row seeded with the reset's seed, so every row of a reset
    is the same: a seed, any), in an env not declared a batch of identical sub-envs."""

    def __init__(self, num_envs: int = ROWS) -> None:
        super().__init__(num_envs)
        self.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}
