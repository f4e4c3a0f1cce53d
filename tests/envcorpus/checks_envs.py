"""Gymnasium environments for the checks beyond the basic API: action masks, RNG
discipline, API hygiene, long episodes and differential testing. Sound ones and variants
with one realistic bug each; each bug is reached only through a seed, an action sequence,
a mask or the environment's own time limit (see each docstring)."""

from __future__ import annotations

import itertools
import random
import time
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from envcorpus.gym_envs import Corridor, GridWorld

# -- masks: a grid whose info["action_mask"] forbids walking into the walls -----------------


class MaskedGridWorld(GridWorld):
    """A sound grid that publishes ``info["action_mask"]`` (int8, one entry per move): moves
    into a wall are illegal, and an illegal move is rejected with a ValueError."""

    def _mask(self) -> np.ndarray:
        mask = np.ones(4, dtype=np.int8)
        for i, (dr, dc) in enumerate(self.MOVES):
            r, c = self.row + dr, self.col + dc
            if not (0 <= r < self.SIZE and 0 <= c < self.SIZE):
                mask[i] = 0
        return mask

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, _ = super().reset(seed=seed, options=options)
        return obs, {"action_mask": self._mask()}

    def _illegal(self, action: Any) -> None:
        raise ValueError(f"move {int(action)} walks into a wall")

    def step(self, action: Any) -> tuple[Any, ...]:
        if not self._mask()[int(action)]:
            self._illegal(action)
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated, truncated, {**info, "action_mask": self._mask()}


class DeadEndGridWorld(MaskedGridWorld):
    """Bug: the mask forgets the up move in the bottom-left cell, so it allows no action
    there (a mask that is empty while the agent must act; an action sequence: three moves
    down from the left column)."""

    def _mask(self) -> np.ndarray:
        mask = super()._mask()
        if (self.row, self.col) == (self.SIZE - 1, 0):
            mask[:] = 0
        return mask


class WideMaskGridWorld(MaskedGridWorld):
    """Bug: for odd seeds the mask is built for a 5-action variant of the grid (shape (5,)
    for Discrete(4): a specific seed)."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        if seed is not None and seed % 2:
            info["action_mask"] = np.append(info["action_mask"], np.int8(1))
        return obs, info


class WallCrashGridWorld(MaskedGridWorld):
    """Bug: an illegal move is not rejected clearly: it indexes past the wall table and
    raises IndexError (found only with ``illegal_actions=True``: an action outside the mask)."""

    WALLS = (0, 1, 2, 3)

    def _illegal(self, action: Any) -> None:
        self.WALLS[int(action) + self.SIZE]


class MaskLiesGridWorld(MaskedGridWorld):
    """Bug: the mask allows moving up from the top row in column 1, but the move is then
    rejected (a legal action refused: an action sequence through column 1)."""

    def _mask(self) -> np.ndarray:
        mask = super()._mask()
        if (self.row, self.col) == (0, 1):
            mask[3] = 1
        return mask

    def step(self, action: Any) -> tuple[Any, ...]:
        if (self.row, self.col) == (0, 1) and int(action) == 3:
            raise ValueError("move 3 walks into a wall")
        return super().step(action)


# -- RNG discipline ------------------------------------------------------------------------


class ConstructorSeededCorridor(Corridor):
    """Bug: the generator is seeded once in the constructor and reset ignores its seed
    (EnvPool PR #434): fresh instances agree for every seed, so same-seed tests pass, but
    different seeds give the same start (16 seeds on fresh instances)."""

    def __init__(self) -> None:
        super().__init__()
        self.rng = np.random.default_rng(0)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self.x, self.v, self.t = float(self.rng.uniform(0.0, 2.0)), 0.0, 0
        return self._obs(), {}


class ReseedingCorridor(Corridor):
    """Bug: ``reset()`` without a seed reseeds with a default seed instead of continuing the
    stream, so every unseeded episode starts at the same place (successive resets)."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return super().reset(seed=42 if seed is None else seed, options=options)


class GustyCorridor(Corridor):
    """A sound corridor whose every episode starts at the same place, with gusts drawn from
    the seeded generator at each step: different seeds differ only after the first step."""

    def _start(self) -> float:
        return 1.0

    def _move(self, action: int) -> None:
        super()._move(action)
        self.x = min(max(self.x + float(self.np_random.uniform(-0.5, 0.5)), 0.0), self.GOAL)


class SeededOnceGustyCorridor(GustyCorridor):
    """Bug: the generator is seeded once, in the constructor, and reset ignores its seed;
    the start is fixed, so first observations agree for every seed and only the gusts of
    the steps show it (16 seeds on fresh instances, then a step)."""

    def __init__(self) -> None:
        super().__init__()
        self.np_random = np.random.default_rng(0)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return super().reset(seed=None, options=options)


class BufferCorridor(Corridor):
    """Bug: the observation is one buffer updated in place at every step, so an observation
    already returned changes afterwards (Gymnasium #1681: the step after any step)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = np.zeros(2, dtype=np.float32)

    def _obs(self) -> np.ndarray:
        self.buffer[:] = (self.x, self.v)
        return self.buffer


class CallCounterCorridor(Corridor):
    """Bug: the info reports a call counter shared by every instance, so replaying the same
    seed and actions gives different infos (infos compared across replays: step 1)."""

    calls: ClassVar[itertools.count] = itertools.count()

    def _info(self, terminated: bool) -> Any:
        return {"success": terminated, "call": next(self.calls)}


class TimedCorridor(Corridor):
    """Sound, with a volatile info: ``info["elapsed"]`` is wall-clock time, left out of the
    replay comparison with ``ignore_info_keys=("elapsed",)``; every other info compared."""

    def _info(self, terminated: bool) -> Any:
        return {"success": terminated, "elapsed": time.perf_counter()}


class TimedSlipCorridor(TimedCorridor):
    """Bug: besides the volatile ``info["elapsed"]`` (ignored), ``info["success"]`` reports
    success when the cart reaches x >= 9 with the global RNG's help, so a replay differs
    in an info that is compared (reached through an action sequence toward the wall)."""

    def _info(self, terminated: bool) -> Any:
        lucky = self.x >= 5.0 and random.random() < 0.5
        return {"success": terminated or lucky, "elapsed": time.perf_counter()}


# -- API hygiene ---------------------------------------------------------------------------


class NoOptionsCorridor(Corridor):
    """Bug: reset takes no ``options`` argument (a TypeError for ``reset(options={})``)."""

    def reset(self, *, seed: int | None = None) -> tuple[Any, dict[str, Any]]:  # type: ignore[override]
        return super().reset(seed=seed)


class StartOptionCorridor(Corridor):
    """Bug: reset reads ``options["start"]`` whenever options are given, so
    ``reset(options={})`` raises KeyError (reached only through an option: issue 23 point 3)."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = super().reset(seed=seed)
        if options is not None:
            self.x = float(options["start"])
            obs = self._obs()
        return obs, info


class BrokenResetCorridor(Corridor):
    """Bug: every reset raises TypeError (as PettingZoo 1.24.3's waterworld under NumPy 2),
    with options or without: the crash, not ``reset-options``, is the finding."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        raise TypeError("unsupported operand type(s) for +: 'NoneType' and 'float'")


class DoubleCloseCorridor(Corridor):
    """Bug: ``close()`` releases a window handle and a second call fails on the released one."""

    def __init__(self) -> None:
        super().__init__()
        self.window: dict[str, Any] | None = {"open": True}

    def close(self) -> None:
        self.window.clear()  # type: ignore[union-attr]
        self.window = None


class PaintedCorridor(Corridor):
    """A sound corridor that renders: ``rgb_array`` an 8x32 uint8 strip, ``ansi`` a line."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array", "ansi"], "render_fps": 4}

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__()
        self.render_mode = render_mode

    def _frame(self) -> np.ndarray:
        frame = np.zeros((8, 32, 3), dtype=np.uint8)
        frame[:, min(int(self.x * 3), 31)] = 255
        return frame

    def render(self) -> Any:
        if self.render_mode == "rgb_array":
            return self._frame()
        if self.render_mode == "ansi":
            return "." * int(self.x) + "o"
        return None


class FloatPaintedCorridor(PaintedCorridor):
    """Bug: the ``rgb_array`` frame is float64 in [0, 1], not uint8 (a declared render mode)."""

    def _frame(self) -> np.ndarray:
        return super()._frame() / 255.0


class UnnormalisedCorridor(Corridor):
    """Sound, with declaration lints (warnings, not failures): a continuous thrust in [-2, 2]
    and an unbounded velocity entry."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Box(
            np.array([0.0, -np.inf], dtype=np.float32), np.array([10.0, np.inf], dtype=np.float32)
        )
        self.action_space = spaces.Box(-2.0, 2.0, shape=(1,), dtype=np.float32)

    def _move(self, action: Any) -> None:
        self.v = float(np.clip(self.v + float(np.asarray(action).reshape(-1)[0]), -5.0, 5.0))
        self.x = min(max(self.x + self.v, 0.0), self.GOAL)


# -- long episodes: a time limit beyond the default episode length -------------------------


class FuelCorridor(Corridor):
    """A corridor with a fuel gauge and no goal: episodes end only at the time limit of 150
    steps (declared as ``spec.max_episode_steps``, as ``gymnasium.make`` does). Sound."""

    LIMIT = 150

    def __init__(self) -> None:
        super().__init__()
        self.spec = EnvSpec("envcorpus/FuelCorridor-v0", max_episode_steps=self.LIMIT)
        self.observation_space = spaces.Box(
            np.array([0.0, -5.0, 0.0], dtype=np.float32), np.array([10.0, 5.0, 1.0], dtype=np.float32)
        )

    def _fuel(self) -> float:
        return 1.0 - self.t / self.LIMIT

    def _obs(self) -> np.ndarray:
        return np.array([self.x, self.v, self._fuel()], dtype=np.float32)

    def step(self, action: Any) -> tuple[Any, ...]:
        obs, reward, _, truncated, info = super().step(action)
        return obs, reward, False, truncated, info


class EmptyTankCorridor(FuelCorridor):
    """Bug: the fuel gauge is computed against 149 steps, so the last observation of an
    episode (step 150, the time limit) shows negative fuel, outside the space (reached only
    by an episode that runs to its time limit)."""

    def _fuel(self) -> float:
        return 1.0 - self.t / (self.LIMIT - 1)


# -- differential testing: a "port" of Corridor ---------------------------------------------


class PortedCorridor(gym.Env):
    """An independent reimplementation of :class:`Corridor` (a port): state in a numpy
    array, the same dynamics. Sound: it matches Corridor step for step."""

    def __init__(self) -> None:
        reference = Corridor()
        self.observation_space, self.action_space = reference.observation_space, reference.action_space
        self.state = np.zeros(3)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.state = np.array([self.np_random.uniform(0.0, 2.0), 0.0, 0.0])
        return self.state[:2].astype(np.float32), {}

    def _speed(self, v: float, action: int) -> float:
        return float(np.clip(v + action - 1, -5.0, 5.0))

    def step(self, action: Any) -> tuple[Any, ...]:
        x, v, t = self.state
        v = self._speed(v, int(action))
        x = float(np.clip(x + v, 0.0, Corridor.GOAL))
        if x in (0.0, Corridor.GOAL):
            v = 0.0
        self.state = np.array([x, v, t + 1])
        terminated = x >= Corridor.GOAL
        reward = 10.0 if terminated else -1.0
        return self.state[:2].astype(np.float32), reward, terminated, t + 1 >= Corridor.LIMIT, {"success": terminated}


class SpeedCapPortedCorridor(PortedCorridor):
    """Bug: the port caps the speed at 3 instead of 5, so it parts from Corridor once the
    cart has accelerated four times in a row (an action sequence)."""

    def _speed(self, v: float, action: int) -> float:
        return float(np.clip(v + action - 1, -5.0, 3.0))
