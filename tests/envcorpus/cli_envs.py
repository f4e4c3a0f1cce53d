"""Environments that are hostile to the command line itself (issue 25 points 31-35): a
close() that raises, a constructor that calls sys.exit(0), an environment (and a module)
that prints, a step that blocks, a space that raises. Each is sound otherwise."""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from typing import Any

from envcorpus.gym_envs import Corridor

print("envcorpus.cli_envs imported")  # a module that prints on import


class CloseRaises(Corridor):
    """Bug: ``close()`` raises."""

    def close(self) -> None:
        raise RuntimeError("the window was already gone")


class Exits(Corridor):
    """Bug: the constructor calls ``sys.exit(0)`` (a script's habit)."""

    def __init__(self) -> None:
        sys.exit(0)


class Chatty(Corridor):
    """Sound, but prints at every step."""

    def step(self, action: Any) -> tuple[Any, ...]:
        print("stepping")
        return super().step(action)


class Blocks(Corridor):
    """Bug: every step blocks forever (a lost lock). Not only a later step: under a small
    budget on a loaded machine, the search could end before any episode reached it."""

    def step(self, action: Any) -> tuple[Any, ...]:
        threading.Event().wait()
        return super().step(action)


class SpaceRaises(Corridor):
    """Bug: reading ``observation_space`` after construction raises."""

    def __init__(self) -> None:
        super().__init__()
        self.ready = True

    def __getattribute__(self, name: str) -> Any:
        if name == "observation_space" and object.__getattribute__(self, "__dict__").get("ready"):
            raise ZeroDivisionError("the space is computed from an empty table")
        return object.__getattribute__(self, name)


class Crashes(Corridor):
    """Bug: a step kills the process (a segfault in an extension, here SIGSEGV sent to itself)."""

    def step(self, action: Any) -> tuple[Any, ...]:
        os.kill(os.getpid(), signal.SIGSEGV)
        return super().step(action)


class LeaksThenBlocks(Corridor):
    """Bugs: the first observation after reset is outside the space (found at once), and a
    step after the third blocks forever: a check without a time limit hangs after finding
    the first bug."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self.steps_taken = 0
        observation, info = super().reset(seed=seed, options=options)
        return observation + 1000, info

    def step(self, action: Any) -> tuple[Any, ...]:
        self.steps_taken += 1
        if self.steps_taken > 3:
            threading.Event().wait()
        return super().step(action)


class SlowSlipperyCorridor(Corridor):
    """Bug: as SlipperyCorridor (a slip, one step in two, drawn from Python's global ``random``), in an
    environment that is slow but never blocks: every step sleeps 1 ms and episodes run up to
    1,000 steps (its declared limit), so a long example takes seconds with the checker's own
    work per step, and its replays and shrinking many times that."""

    LIMIT = 1000
    _max_episode_steps = 1000

    def _move(self, action: int) -> None:
        if random.random() < 0.5:
            action = 1
        super()._move(action)

    def step(self, action: Any) -> tuple[Any, ...]:
        time.sleep(0.001)
        return super().step(action)


def forgets_return() -> Any:
    """Bug: a factory that builds the environment but forgets to return it."""
    Corridor()
