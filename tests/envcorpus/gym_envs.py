"""Small Gymnasium environments: sound ones, and variants with one realistic bug each.

Each buggy class overrides the one method that holds its bug; its docstring says what
the bug is and how it is reached (at once, through a specific action sequence, through a
specific seed, or only at the end of an episode).
"""

from __future__ import annotations

import math
import random
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

# -- Corridor: reach x = 10 by accelerating; a sound environment ---------------------------


class Corridor(gym.Env):
    """A cart in a corridor [0, 10]: actions decelerate, coast or accelerate (Discrete(3));
    the episode ends at the far wall (terminated) or after 50 steps (truncated)."""

    GOAL = 10.0
    LIMIT = 50

    def __init__(self) -> None:
        self.observation_space = spaces.Box(
            np.array([0.0, -5.0], dtype=np.float32), np.array([10.0, 5.0], dtype=np.float32)
        )
        self.action_space = spaces.Discrete(3)
        self.x, self.v, self.t = 0.0, 0.0, 0

    def _obs(self) -> np.ndarray:
        return np.array([self.x, self.v], dtype=np.float32)

    def _start(self) -> float:
        return float(self.np_random.uniform(0.0, 2.0))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.x, self.v, self.t = self._start(), 0.0, 0
        return self._obs(), {}

    def _move(self, action: int) -> None:
        self.v = float(np.clip(self.v + int(action) - 1, -5.0, 5.0))
        self.x = min(max(self.x + self.v, 0.0), self.GOAL)
        if self.x in (0.0, self.GOAL):
            self.v = 0.0

    def _reward(self, before: float) -> float:
        return 10.0 if self.x >= self.GOAL else -1.0

    def _info(self, terminated: bool) -> Any:
        return {"success": terminated}

    def step(self, action: Any) -> tuple[Any, ...]:
        before = self.x
        self._move(action)
        self.t += 1
        terminated = self.x >= self.GOAL
        truncated = self.t >= self.LIMIT
        return self._obs(), self._reward(before), terminated, truncated, self._info(terminated)


class LeakyCorridor(Corridor):
    """Bug: the far wall is not clamped, so the position leaves the observation space at
    the step that reaches the goal fast enough (an action sequence: accelerate repeatedly)."""

    def _move(self, action: int) -> None:
        self.v = float(np.clip(self.v + int(action) - 1, -5.0, 5.0))
        self.x = max(self.x + self.v, 0.0)
        if self.x == 0.0:
            self.v = 0.0


class Float64ResetCorridor(Corridor):
    """Bug: reset builds its observation in float64 (the space and step use float32)."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return np.array([self.x, self.v]), {}


class GlobalRngResetCorridor(Corridor):
    """Bug: the start position comes from numpy's global generator, not ``self.np_random``,
    so reset(seed=...) is not reproducible."""

    def _start(self) -> float:
        return float(np.random.uniform(0.0, 2.0))


class SlipperyCorridor(Corridor):
    """Bug: a 10% slip uses Python's global ``random``, so steps are not reproducible."""

    def _move(self, action: int) -> None:
        if random.random() < 0.1:
            action = 1
        super()._move(action)


class SpeedRewardCorridor(Corridor):
    """Bug: the reward divides the progress by the speed, NaN when coasting at rest."""

    def _reward(self, before: float) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.float64(self.x - before) / np.float64(abs(self.v)))


class IntTruncatedCorridor(Corridor):
    """Bug: ``truncated`` is computed as an int (0 or 1)."""

    def step(self, action: Any) -> tuple[Any, ...]:
        obs, reward, terminated, _, info = super().step(action)
        return obs, reward, terminated, int(self.t // self.LIMIT), info


class ListInfoCorridor(Corridor):
    """Bug: at the goal the info is a list of episode records, not a dict (reached only by
    an action sequence that gets to the goal)."""

    def _info(self, terminated: bool) -> Any:
        return [{"success": True, "steps": self.t}] if terminated else {}


class OldApiCorridor(Corridor):
    """Bug: step returns the old Gym 4-tuple (observation, reward, done, info)."""

    def step(self, action: Any) -> tuple[Any, ...]:
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated or truncated, info


class CheckpointCorridor(Corridor):
    """Bug: passing the midpoint appends a checkpoint flag to the observation, which then
    has shape (3,) instead of (2,) (an action sequence: get past x = 5)."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self.checkpoints: list[float] = []
        return super().reset(seed=seed, options=options)

    def _obs(self) -> np.ndarray:
        if self.x >= 5.0 and not self.checkpoints:
            self.checkpoints.append(1.0)
        return np.array([self.x, self.v, *self.checkpoints], dtype=np.float32)


class CurriculumCorridor(Corridor):
    """Bug: each success moves to the next start of a curriculum that has only one level,
    so the reset after reaching the goal raises IndexError (only after an episode ends)."""

    STARTS = (0.0,)

    def __init__(self) -> None:
        super().__init__()
        self.level = 0

    def _start(self) -> float:
        return self.STARTS[self.level]

    def step(self, action: Any) -> tuple[Any, ...]:
        result = super().step(action)
        if result[2]:
            self.level += 1
        return result


class WideStartCorridor(Corridor):
    """Bug: the start is drawn from [-0.5, 2), so for some seeds the first observation is
    below the space's low bound (a specific seed)."""

    def _start(self) -> float:
        return float(self.np_random.uniform(-0.5, 2.0))


class ArrayRewardCorridor(Corridor):
    """Bug: the reward is a one-element array, not a scalar."""

    def _reward(self, before: float) -> Any:
        return np.array([super()._reward(before)], dtype=np.float32)


class LogBarrierCorridor(Corridor):
    """A continuous cart (Box(-1, 1) thrust). Bug: a log-barrier fuel cost
    ``log(1 - |a|)`` raises at the bounds of the action space, which are allowed actions."""

    def __init__(self) -> None:
        super().__init__()
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)

    def _move(self, action: Any) -> None:
        self.fuel = math.log(1.0 - abs(float(action[0])))
        super()._move(1 + int(np.sign(action[0])))


class ContinuousCorridor(Corridor):
    """A sound continuous variant: Box(-1, 1) thrust, quadratic fuel cost."""

    def __init__(self) -> None:
        super().__init__()
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)

    def step(self, action: Any) -> tuple[Any, ...]:
        thrust = float(action[0])
        obs, reward, terminated, truncated, info = super().step(1 + int(np.sign(thrust)))
        return obs, reward - 0.1 * thrust**2, terminated, truncated, info


# -- GridWorld: a 4x4 grid with a Discrete(16) observation --------------------------------


class GridWorld(gym.Env):
    """A 4x4 grid; actions left, down, right, up; the goal is the bottom-right cell."""

    SIZE = 4
    MOVES = ((0, -1), (1, 0), (0, 1), (-1, 0))

    def __init__(self) -> None:
        self.observation_space = spaces.Discrete(self.SIZE * self.SIZE)
        self.action_space = spaces.Discrete(4)
        self.row = self.col = self.t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.row, self.col, self.t = 0, int(self.np_random.integers(0, 2)), 0
        return self.row * self.SIZE + self.col, {}

    def _clip(self, value: int) -> int:
        return min(max(value, 0), self.SIZE - 1)

    def step(self, action: Any) -> tuple[Any, ...]:
        dr, dc = self.MOVES[int(action)]
        self.row, self.col = self._clip(self.row + dr), self._clip(self.col + dc)
        self.t += 1
        goal = (self.row, self.col) == (self.SIZE - 1, self.SIZE - 2)
        return self.row * self.SIZE + self.col, float(goal), goal, self.t >= 40, {}


class OffByOneGridWorld(GridWorld):
    """Bug: moves are clipped to SIZE instead of SIZE - 1, so walking off the bottom edge
    (four moves down) gives an observation of 16 or more, outside Discrete(16); walking off
    the right edge wraps silently into the next row (a specific action sequence)."""

    def _clip(self, value: int) -> int:
        return min(max(value, 0), self.SIZE)


class ThreeMovesGridWorld(GridWorld):
    """Bug: the action space says Discrete(5) (a "stay" action was added) but the move
    table was not extended: action 4 raises IndexError."""

    def __init__(self) -> None:
        super().__init__()
        self.action_space = spaces.Discrete(5)


# -- Warehouse: Dict observations, Tuple actions -------------------------------------------


class Warehouse(gym.Env):
    """A robot on a line picks and drops crates. Observation: Dict(position Box(2,),
    inventory MultiDiscrete([4, 4]), door Discrete(2)); action: Tuple(Discrete(3) for
    wait/pick/drop, Box(-1, 1, (2,)) for the move)."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            {
                "position": spaces.Box(-5.0, 5.0, shape=(2,), dtype=np.float32),
                "inventory": spaces.MultiDiscrete([4, 4]),
                "door": spaces.Discrete(2),
            }
        )
        self.action_space = spaces.Tuple(
            (spaces.Discrete(3), spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32))
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.position = self.np_random.uniform(-1.0, 1.0, size=2).astype(np.float32)
        self.inventory = np.zeros(2, dtype=np.int64)
        self.t = 0
        return self._obs(), {}

    def _obs(self) -> dict[str, Any]:
        return {
            "position": self.position.copy(),
            "inventory": self.inventory.copy(),
            "door": int(self.t % 7 == 0),
        }

    def _pick(self) -> None:
        self.inventory[0] = min(self.inventory[0] + 1, 3)

    def step(self, action: Any) -> tuple[Any, ...]:
        command, move = action
        self.position = np.clip(self.position + move, -5.0, 5.0).astype(np.float32)
        if command == 1:
            self._pick()
        elif command == 2 and self.inventory[0] > 0:
            self.inventory[0] -= 1
            self.inventory[1] = min(self.inventory[1] + 1, 3)
        self.t += 1
        delivered = self.inventory[1] == 3
        return self._obs(), float(delivered), bool(delivered), self.t >= 30, {}


class OverfullWarehouse(Warehouse):
    """Bug: picking does not cap the inventory, so the fourth pick gives 4, outside
    MultiDiscrete([4, 4]) (an action sequence: pick four times)."""

    def _pick(self) -> None:
        self.inventory[0] += 1
