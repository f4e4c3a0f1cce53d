"""Factories as packages ship them, for the command line and the reproduction snippets:
a closure made by a helper (like PettingZoo's ``parallel_wrapper_fn``), whose qualified
name cannot be imported, and a constructor that raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envcorpus import gym_envs as g
from envcorpus import parallel_envs as p


def wrapper_fn(cls: type) -> Callable[..., Any]:
    def env_fn(**kwargs: Any) -> Any:
        return cls(**kwargs)

    return env_fn


parallel_env = wrapper_fn(p.OvershootRace)
env = wrapper_fn(g.LeakyCorridor)


def broken() -> Any:
    """A constructor that raises (a missing asset, say)."""
    raise FileNotFoundError("assets/track.png")


def corridor(leaky: bool = False) -> Any:
    """A corridor whose bug is switched on by an option (``--env-kwarg leaky=True``)."""
    return g.LeakyCorridor() if leaky else g.Corridor()
