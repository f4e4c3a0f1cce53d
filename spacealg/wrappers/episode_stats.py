"""EpisodeStats: episodic return, length and summed info values of a Gymnasium environment."""

from __future__ import annotations

from typing import Any

import gymnasium

from spacealg.wrappers.stats import Episode

__all__ = ["EpisodeStats"]


class EpisodeStats(gymnasium.Wrapper):
    """Report each finished episode's statistics in the info of its last step.

    Laws (as PufferLib): ``info`` is ``{}`` on every step but the last of an episode; on the
    last (terminated or truncated) it is ``{"episode_return": sum of rewards,
    "episode_length": number of steps, **sums of the numeric info leaves}`` (nested infos
    unrolled to ``"a/b"`` keys, non-numeric values dropped). ``reset`` returns the wrapped
    environment's ``(obs, info)`` unchanged and starts a new episode. Unlike PufferLib's, the
    constructor does not reset the environment, and ``reset`` forwards ``options``.
    """

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.episode = Episode()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        self.episode = Episode()
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.episode.add(reward, info)
        if not (terminated or truncated):
            return obs, reward, terminated, truncated, {}
        summary = self.episode.summary()
        self.episode = Episode()
        return obs, reward, terminated, truncated, summary
