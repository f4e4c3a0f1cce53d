"""PettingZoo AEC and parallel environments with one :class:`~mutants.defects.Defect`.

Steps are counted from 1 after each reset: agent-steps for AEC, joint steps for parallel
environments. The PettingZoo bases are deterministic, so no seed defect is applied here.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import BaseParallelWrapper, BaseWrapper

from mutants.defects import Defect

__all__ = ["AecMutant", "ParallelMutant"]


def _mask(observation: Any, info: Any) -> Any:
    for holder in (observation, info):
        if isinstance(holder, dict) and "action_mask" in holder:
            return holder["action_mask"]
    return None


class _Common:
    """What both APIs share: the declared spaces (the same object on every call), the
    declared ``max_cycles``, ``render`` and ``close``."""

    env: Any
    defect: Defect

    def _setup(self, defect: Defect, k: int, declared_limit: int | None) -> None:
        if defect.seeds is not None:
            raise NotImplementedError("no seed defect is written for PettingZoo (its bases are deterministic)")
        self.defect, self.k, self.t = defect, k, 0
        self.buffers: dict[Any, dict[str, Any]] = {}
        self.declared_spaces: dict[Any, Any] = {}
        if defect.unlimited:
            self.max_cycles = declared_limit

    @property
    def on(self) -> bool:
        return self.t == self.k if self.defect.once else self.t >= self.k

    def observation_space(self, agent: Any) -> Any:
        space = self.env.observation_space(agent)
        if self.defect.declared is None:
            return space
        if agent not in self.declared_spaces:
            self.declared_spaces[agent] = self.defect.declared(space)
        return self.declared_spaces[agent]

    def _observation(self, agent: Any, obs: Any) -> Any:
        if self.on and self.defect.observation is not None and obs is not None:
            return self.defect.observation(self.env.observation_space(agent), obs, self.buffers.setdefault(agent, {}))
        return obs

    def render(self) -> Any:
        frame = self.env.render()
        if self.defect.render_none and getattr(self.env, "render_mode", None) not in (None, "human"):
            return None
        return frame

    def close(self) -> None:
        self.env.close()
        if self.defect.close_raises:
            raise RuntimeError("close failed")


class AecMutant(_Common, BaseWrapper):
    """An AEC environment with ``defect`` from its ``k``-th agent-step on."""

    def __init__(self, env: Any, defect: Defect, k: int, declared_limit: int | None = None) -> None:
        BaseWrapper.__init__(self, env)
        self._setup(defect, k, declared_limit)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.t = 0
        self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        self.t += 1
        agent = self.env.agent_selection
        if self.on and self.defect.action is not None and action is not None:
            mask = _mask(self.env.observe(agent), self.env.infos.get(agent))
            action = self.defect.action(self.env.action_space(agent), action, mask)
        self.env.step(action)

    def observe(self, agent: Any) -> Any:
        return self._observation(agent, self.env.observe(agent))

    def _each(self, values: dict[Any, Any], hook: Any) -> dict[Any, Any]:
        if not self.on or hook is None:
            return values
        return {agent: hook(value) for agent, value in values.items()}

    @property
    def rewards(self) -> dict[Any, Any]:
        return self._each(self.env.rewards, self.defect.reward)

    @property
    def _cumulative_rewards(self) -> dict[Any, Any]:
        return self._each(self.env._cumulative_rewards, self.defect.reward)

    def _flags(self, which: int) -> dict[Any, Any]:
        terminations, truncations = self.env.terminations, self.env.truncations
        if not self.on or self.defect.flags is None:
            return (terminations, truncations)[which]
        return {a: self.defect.flags(terminations[a], truncations[a])[which] for a in terminations}

    @property
    def terminations(self) -> dict[Any, Any]:
        return self._flags(0)

    @property
    def truncations(self) -> dict[Any, Any]:
        return self._flags(1)

    @property
    def infos(self) -> dict[Any, Any]:
        return self._each(self.env.infos, self.defect.info)


class ParallelMutant(_Common, BaseParallelWrapper):
    """A parallel environment with ``defect`` from its ``k``-th joint step on."""

    def __init__(self, env: Any, defect: Defect, k: int, declared_limit: int | None = None) -> None:
        BaseParallelWrapper.__init__(self, env)
        self._setup(defect, k, declared_limit)
        self.previous: tuple[dict[Any, Any], dict[Any, Any]] = ({}, {})

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self.t = 0
        observations, infos = self.env.reset(seed=seed, options=options)
        self.previous = (observations, infos)
        return observations, infos

    def step(self, actions: dict[Any, Any]) -> Any:
        self.t += 1
        defect = self.defect
        if self.on and defect.action is not None:
            observations, infos = self.previous
            actions = {
                a: defect.action(self.env.action_space(a), act, _mask(observations.get(a), infos.get(a)))
                for a, act in actions.items()
            }
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self.previous = (observations, infos)
        if self.on:
            observations = {a: self._observation(a, o) for a, o in observations.items()}
            if defect.reward is not None:
                rewards = {a: defect.reward(r) for a, r in rewards.items()}
            if defect.flags is not None:
                both = {a: defect.flags(terminations[a], truncations[a]) for a in terminations}
                terminations = {a: flags[0] for a, flags in both.items()}
                truncations = {a: flags[1] for a, flags in both.items()}
            if defect.info is not None:
                infos = {a: defect.info(i) for a, i in infos.items()}
        return observations, rewards, terminations, truncations, infos
