"""Environments for the laws of issue 35 that a black-box checker can see: each bug with a
sound twin that must pass with no false alarm (see each docstring)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec
from gymnasium.wrappers import TimeLimit

from envcorpus.checks_envs import PaintedCorridor
from envcorpus.gym_envs import Corridor, GridWorld, Warehouse

# -- declared spaces: well-formed sets (declared-spaces) -----------------------------------


class PairGridWorld(GridWorld):
    """A sound grid driven by a MultiDiscrete([4, 2]) action: a move and how far (1 or 2)."""

    def __init__(self) -> None:
        super().__init__()
        self.action_space = spaces.MultiDiscrete([4, 2])

    def step(self, action: Any) -> tuple[Any, ...]:
        move, far = (int(a) for a in action)
        result = super().step(move)
        return super().step(move) if far and not (result[2] or result[3]) else result


class MisshapenPairGridWorld(PairGridWorld):
    """Bug: the action space's shape was set to (3,) for a third component that was never
    added to its nvec: its own sample() is a pair, which its contains rejects (a declared
    space whose samples are not members)."""

    def __init__(self) -> None:
        super().__init__()
        self.action_space._shape = (3,)


class MalformedBoxCorridor(Corridor):
    """Bug: the observation Box's low was replaced by a 3-entry array after construction
    (a third feature dropped from the observation but not from the bounds): low has shape
    (3,), the Box's shape is (2,)."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space.low = np.array([0.0, -5.0, 0.0], dtype=np.float32)


# -- render_mode among metadata["render_modes"] (render-modes) ------------------------------


class AnsiCorridor(PaintedCorridor):
    """A sound painted corridor built in a declared mode by default (``ansi``)."""

    def __init__(self, render_mode: str | None = "ansi") -> None:
        super().__init__(render_mode=render_mode)


class MisspeltModeCorridor(PaintedCorridor):
    """Bug: built by default with ``render_mode="rgb"``, a misspelt ``rgb_array`` that
    ``metadata["render_modes"]`` does not declare (so ``render()`` silently returns None)."""

    def __init__(self, render_mode: str | None = "rgb") -> None:
        super().__init__(render_mode=render_mode)


# -- observation-aliasing inside Dict and Tuple observations --------------------------------


class LiveInventoryWarehouse(Warehouse):
    """Bug: the Dict observation hands out the robot's inventory array itself, which a pick
    or a drop then updates in place (an action sequence: any pick), so an observation
    already returned changes afterwards inside its ``"inventory"`` entry."""

    def _obs(self) -> dict[str, Any]:
        return {**super()._obs(), "inventory": self.inventory}


class ClockedCorridor(Corridor):
    """A sound corridor with a Tuple observation: (position and speed, the step count)."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Tuple((self.observation_space, spaces.Discrete(self.LIMIT + 1)))

    def _obs(self) -> Any:
        return super()._obs(), self.t


class BufferClockedCorridor(ClockedCorridor):
    """Bug: the position and speed inside the Tuple observation are one buffer updated in
    place at every step (the step after any step)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = np.zeros(2, dtype=np.float32)

    def _obs(self) -> Any:
        self.buffer[:] = (self.x, self.v)
        return self.buffer, self.t


# -- max-episode-steps: the declared episode limit ---------------------------------------------


class _Treadmill(Corridor):
    """A corridor whose far wall is a treadmill: reaching it puts the cart back at the start,
    so nothing but a time limit ends an episode."""

    LIMIT = 10**9

    def _move(self, action: int) -> None:
        super()._move(action)
        if self.x >= self.GOAL:
            self.x, self.v = 0.0, 0.0


class LimitedTreadmill(gymnasium.Wrapper):
    """Sound: a treadmill under Gymnasium's TimeLimit of 120 steps, its spec declaring
    ``max_episode_steps=120`` (as ``gymnasium.make`` builds a registered env)."""

    STEPS = 120

    def __init__(self) -> None:
        super().__init__(self._inner())

    def _inner(self) -> gymnasium.Env:
        return TimeLimit(_Treadmill(), self.STEPS)

    @property
    def spec(self) -> EnvSpec:  # type: ignore[override]
        return EnvSpec(f"envcorpus/{type(self).__name__}-v0", entry_point=type(self), max_episode_steps=self.STEPS)


class UnlimitedTreadmill(LimitedTreadmill):
    """Bug: the spec declares ``max_episode_steps=120`` but the TimeLimit was left out, so an
    episode runs on past step 120 (an episode that long: one example in eight)."""

    def _inner(self) -> gymnasium.Env:
        return _Treadmill()


class UnlimitedTreadmillAtMaxSteps(UnlimitedTreadmill):
    """Bug: as :class:`UnlimitedTreadmill`, with ``max_episode_steps=100``, the checker's
    default ``max_steps``: the long draw must reach a limit equal to ``max_steps`` too."""

    STEPS = 100
