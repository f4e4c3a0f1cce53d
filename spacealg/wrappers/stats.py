"""Episode statistics shared by EpisodeStats and MultiagentEpisodeStats.

An :class:`Episode` accumulates one agent's rewards and info values over an episode; its
``summary()`` is what the wrappers put in the info of the episode's last step:
``episode_return`` (the sum of rewards), ``episode_length`` (the number of steps) and, for
every leaf of the infos (nested dicts unrolled to ``"a/b"`` keys), the sum of its values
when they are all numeric. Non-numeric values are dropped, as in PufferLib.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from spacealg.wrappers.nested import unroll_nested_dict

__all__ = ["Episode", "is_numeric", "mean_of"]


def is_numeric(value: Any) -> bool:
    """Whether ``value`` is a number, a numpy number/bool, or a numeric (or bool) array."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"
    return isinstance(value, (numbers.Number, np.number, np.bool_))


def _sum(values: list[Any]) -> Any:
    """The sum of numeric ``values``, or None if they are not all numeric or do not add up."""
    if not all(is_numeric(v) for v in values):
        return None
    try:
        return sum(values[1:], values[0])
    except (TypeError, ValueError):  # arrays of different shapes
        return None


def mean_of(values: list[Any]) -> Any:
    """The mean of numeric ``values`` (elementwise for arrays), or None if there is none."""
    if not values or not all(is_numeric(v) for v in values):
        return None
    try:
        return np.mean(np.asarray(values), axis=0)
    except (TypeError, ValueError):
        return None


class Episode:
    """One agent's running episode: rewards and info leaves seen since the last reset."""

    def __init__(self) -> None:
        self.episode_return: Any = 0.0
        self.episode_length = 0
        self.values: dict[Any, list[Any]] = {}

    def add(self, reward: Any, info: Any) -> None:
        """Record one step's reward and info."""
        self.episode_return += reward
        self.episode_length += 1
        for key, value in unroll_nested_dict(info):
            self.values.setdefault(key, []).append(value)

    def summary(self) -> dict[Any, Any]:
        """``episode_return``, ``episode_length`` and the sum of each numeric info leaf."""
        summary: dict[Any, Any] = {}
        for key, values in self.values.items():
            total = _sum(values)
            if total is not None:
                summary[key] = total
        summary["episode_return"] = self.episode_return
        summary["episode_length"] = self.episode_length
        return summary
