"""Factories as packages ship them, for the command line and the reproduction snippets:
a closure made by a helper (like PettingZoo's ``parallel_wrapper_fn``), whose qualified
name cannot be imported, and a constructor that raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envcorpus import gym_envs as g


def wrapper_fn(cls: Callable[..., Any]) -> Callable[..., Any]:
    def env_fn(**kwargs: Any) -> Any:
        return cls(**kwargs)

    return env_fn


def _overshoot_race(**kwargs: Any) -> Any:
    """A PettingZoo env, imported when made: this module imports without PettingZoo (an extra)."""
    from envcorpus.parallel_envs import OvershootRace

    return OvershootRace(**kwargs)


parallel_env = wrapper_fn(_overshoot_race)
env = wrapper_fn(g.LeakyCorridor)


def broken() -> Any:
    """A constructor that raises (a missing asset, say)."""
    raise FileNotFoundError("assets/track.png")


def corridor(leaky: bool = False) -> Any:
    """A corridor whose bug is switched on by an option (``--env-kwarg leaky=True``)."""
    return g.LeakyCorridor() if leaky else g.Corridor()
