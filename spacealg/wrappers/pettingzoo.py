"""Wrappers for PettingZoo parallel environments (PettingZoo itself is not imported).

PettingZoo ships no ParallelEnv wrapper base; :class:`PettingZooWrapper` forwards the
parallel API (and any public attribute) to the wrapped environment, and the others refine
``reset``/``step``:

- :class:`MeanOverAgents`: per-agent infos → one dict of means over agents.
- :class:`MultiagentEpisodeStats`: each agent's episode statistics in its last info.
- :class:`PettingZooTruncatedWrapper`: the Gymnasium-era API (``(obs, infos)`` from reset,
  a truncations dict from step) for environments that may still speak the old one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spacealg.wrappers.nested import unroll_nested_dict
from spacealg.wrappers.stats import Episode, mean_of

__all__ = ["MeanOverAgents", "MultiagentEpisodeStats", "PettingZooTruncatedWrapper", "PettingZooWrapper"]


class PettingZooWrapper:
    """Forward a PettingZoo parallel environment's API and public attributes unchanged.

    Laws: every method returns what the wrapped environment's method returns; attributes not
    defined on the wrapper (``agents``, ``observation_space``, ``render``, ``close``, ...) are
    read from the wrapped environment, except private ones
    (a leading underscore, bar ``_cumulative_rewards``), which raise AttributeError.
    """

    def __init__(self, env: Any) -> None:
        self.env = env

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not yet set (e.g. while unpickling): no recursion
            raise AttributeError(name)
        if name.startswith("_") and name != "_cumulative_rewards":
            raise AttributeError(f"accessing private attribute {name!r} is prohibited")
        return getattr(self.env, name)

    @property
    def unwrapped(self) -> Any:
        """The innermost environment (the wrapped one, if it has no ``unwrapped``)."""
        return getattr(self.env, "unwrapped", self.env)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if options is None:
            return self.env.reset(seed=seed)
        return self.env.reset(seed=seed, options=options)

    def step(self, actions: Mapping[Any, Any]) -> Any:
        return self.env.step(actions)

    def __str__(self) -> str:
        return f"{type(self).__name__}<{self.env}>"


def mean_over_agents(infos: Mapping[Any, Any]) -> dict[Any, Any]:
    """One dict: for every info leaf, the mean of its numeric values over the agents having it.

    Nested infos are unrolled to ``"a/b"`` keys; leaves with a non-numeric value are skipped.
    """
    collected: dict[Any, list[Any]] = {}
    for info in infos.values():
        for key, value in unroll_nested_dict(info):
            collected.setdefault(key, []).append(value)
    means = {}
    for key, values in collected.items():
        mean = mean_of(values)
        if mean is not None:
            means[key] = mean
    return means


class MeanOverAgents(PettingZooWrapper):
    """Replace the per-agent infos of reset and step by their mean over agents.

    Law: the info returned is ``mean_over_agents(infos)`` of the wrapped environment's.
    """

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observations, infos = super().reset(seed=seed, options=options)
        return observations, mean_over_agents(infos)

    def step(self, actions: Mapping[Any, Any]) -> Any:
        observations, rewards, terminations, truncations, infos = super().step(actions)
        return observations, rewards, terminations, truncations, mean_over_agents(infos)


class MultiagentEpisodeStats(PettingZooWrapper):
    """Report each agent's episode statistics in its info on the step its episode ends.

    Laws: for every agent that acted, its info is ``{}`` except on the step it terminates or
    truncates, where it is ``{"episode_return", "episode_length", **summed numeric info
    leaves}`` of that agent's episode (see :class:`spacealg.wrappers.stats.Episode`).
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.episodes: dict[Any, Episode] = {}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observations, infos = super().reset(seed=seed, options=options)
        self.episodes = {agent: Episode() for agent in self.possible_agents}
        return observations, infos

    def step(self, actions: Mapping[Any, Any]) -> Any:
        observations, rewards, terminations, truncations, infos = super().step(actions)
        out: dict[Any, dict[Any, Any]] = {}
        for agent in {**dict.fromkeys(rewards), **dict.fromkeys(infos)}:
            episode = self.episodes.setdefault(agent, Episode())
            episode.add(rewards.get(agent, 0.0), infos.get(agent, {}))
            done = terminations.get(agent, False) or truncations.get(agent, False)
            out[agent] = episode.summary() if done else {}
        return observations, rewards, terminations, truncations, out


class PettingZooTruncatedWrapper(PettingZooWrapper):
    """Give an environment the Gymnasium-era parallel API with truncations.

    Laws: ``reset`` returns ``(observations, {agent: {} for agent in observations})``, whether
    the wrapped reset returns ``observations`` alone (old API) or ``(observations, infos)``;
    ``step`` returns the wrapped 5-tuple unchanged, and turns an old 4-tuple
    ``(obs, rewards, dones, infos)`` into ``(obs, rewards, dones, {agent: False}, infos)``.
    """

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        result = super().reset(seed=seed, options=options)
        observations = result[0] if isinstance(result, tuple) else result
        return observations, {agent: {} for agent in observations}

    def step(self, actions: Mapping[Any, Any]) -> Any:
        result = super().step(actions)
        if len(result) == 4:
            observations, rewards, dones, infos = result
            return observations, rewards, dones, dict.fromkeys(dones, False), infos
        return result
