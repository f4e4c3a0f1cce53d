"""A Gymnasium environment with one :class:`~mutants.defects.Defect` applied."""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium

from mutants.defects import Defect

__all__ = ["OWN_SEED", "GymMutant"]

OWN_SEED = 1234  # the seed a "seed ignored" mutant gives itself once, at construction


class GymMutant(gymnasium.Wrapper):
    """``env`` with ``defect`` from the ``k``-th step of every episode (counted from 1 after
    each reset); seeds, the declared space, ``close`` and ``render`` from the start.
    ``declared_limit``: the ``max_episode_steps`` an ``unlimited`` mutant still declares;
    ``remake``: the mutant's factory, which its ``spec`` makes (checkers that build fresh
    instances from ``env.spec``, as Gymnasium's render and close checks do, get the mutant)."""

    def __init__(
        self, env: Any, defect: Defect, k: int, declared_limit: int | None = None, remake: Any = None
    ) -> None:
        super().__init__(env)
        self.remake = remake
        self.defect, self.k, self.t = defect, k, 0
        self.buffers: dict[str, Any] = {}
        self.seeded = False
        self.declared_limit = declared_limit
        if defect.declared is not None:
            self.observation_space = defect.declared(env.observation_space)
        if defect.seeds == "ignored":
            env.reset(seed=OWN_SEED)

    @property
    def spec(self) -> Any:
        spec = self.env.spec
        if spec is None or self.remake is None:
            return spec
        limit = self.declared_limit if self.defect.unlimited else spec.max_episode_steps
        return dataclasses.replace(
            spec, entry_point=self.remake, max_episode_steps=limit, kwargs={}, additional_wrappers=(),
            order_enforce=False, disable_env_checker=True,
        )

    def _seed(self, seed: int | None) -> int | None:
        if self.defect.seeds == "ignored":
            return None
        if self.defect.seeds == "once" and seed is not None:
            if self.seeded:
                return None
            self.seeded = True
        return seed

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self.t = 0
        return self.env.reset(seed=self._seed(seed), options=options)

    def step(self, action: Any) -> Any:
        self.t += 1
        defect = self.defect
        on = self.t == self.k if defect.once else self.t >= self.k
        if on and defect.action is not None:
            action = defect.action(self.env.action_space, action, None)
        obs, reward, terminated, truncated, info = self.env.step(action)
        if on:
            if defect.observation is not None:
                obs = defect.observation(self.env.observation_space, obs, self.buffers)
            if defect.reward is not None:
                reward = defect.reward(reward)
            if defect.flags is not None:
                terminated, truncated = defect.flags(terminated, truncated)
            if defect.info is not None:
                info = defect.info(info)
        return obs, reward, terminated, truncated, info

    def render(self) -> Any:
        frame = self.env.render()
        if self.defect.render_none and self.env.render_mode not in (None, "human"):
            return None
        return frame

    def close(self) -> None:
        self.env.close()
        if self.defect.close_raises:
            raise RuntimeError("close failed")
