"""A gymnax environment with one defect, for the JAX bases.

A functional environment is traced once, so "from step ``k`` on" is a value, not a branch:
``active`` is ``state.time + 1 >= k`` (gymnax's step counter) and value defects are
``jnp.where(active, broken, right)``. A dtype or shape is part of the compiled program, so
those defects (and arrays in place of scalars) change every step's output. :data:`JAX_DEFECTS`
maps an operator's name to its defect here; an operator missing from it does not apply to
a functional environment (nothing to alias, nothing to raise under ``jit``, no ``close``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["JAX_DEFECTS", "GymnaxMutant"]


def _first_bounded(space: Any) -> int:
    high = np.broadcast_to(np.asarray(space.high, dtype=np.float64), space.shape).ravel()
    bounded = np.flatnonzero(np.isfinite(high) & (high < np.finfo(np.float32).max / 2))
    return int(bounded[0])


def _outside(space: Any, obs: Any, active: Any) -> Any:
    index = _first_bounded(space)
    high = np.broadcast_to(np.asarray(space.high, dtype=np.float64), space.shape).ravel()[index]
    flat = obs.reshape(-1)
    return jnp.where(active, flat.at[index].set(high + 1), flat).reshape(obs.shape)


def _ignored_key(key: Any) -> Any:
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.wrap_key_data(jnp.zeros_like(jax.random.key_data(key)))
    return jnp.zeros_like(key)


def _malformed(space: Any) -> Any:
    from gymnax.environments import spaces

    return spaces.Box(space.low, space.high, (*space.shape, 1), space.dtype)


class Hooks(dict):
    """Per-defect functions: ``observation(space, obs, active)``, ``reward(r, active)``,
    ``flags(terminated, truncated, active)``, ``info(info)``, ``action(space, a, active)``,
    ``key(key)`` (the reset key), ``declared(space)``; ``unlimited`` (a bool)."""


def _hooks(**hooks: Any) -> Hooks:
    return Hooks(hooks)


def _global_action(space: Any, action: Any, active: Any) -> Any:
    drawn = np.random.randint(int(space.n))  # read while tracing: the program depends on the global state
    return jnp.where(active & (np.random.random() < 0.5), jnp.asarray(drawn, action.dtype), action)


JAX_DEFECTS: dict[str, Hooks] = {
    "observation-out-of-space": _hooks(observation=_outside),
    "dtype-drift": _hooks(observation=lambda space, obs, active: obs.astype(jnp.float16)),
    "shape-drift": _hooks(observation=lambda space, obs, active: obs[None]),
    "seed-ignored": _hooks(key=_ignored_key),
    "global-rng": _hooks(action=_global_action),
    "nan-reward": _hooks(reward=lambda r, active: jnp.where(active, jnp.nan, r)),
    "reward-array": _hooks(reward=lambda r, active: jnp.reshape(r, (1,))),
    "flags-array": _hooks(flags=lambda te, tr, active: (jnp.reshape(te, (1,)), jnp.reshape(tr, (1,)))),
    "info-not-dict": _hooks(info=lambda info: tuple(info.values())),
    "malformed-space": _hooks(declared=_malformed),
    "never-truncates": _hooks(unlimited=True),
}


class GymnaxMutant:
    """``env`` (a gymnax environment, with its ``params``) with the defect ``hooks``; its
    ``default_params`` are the declared ones (an ``unlimited`` mutant runs with an episode
    limit of 10**6 while declaring the original)."""

    def __init__(self, env: Any, params: Any, hooks: Hooks, k: int) -> None:
        self.env, self.hooks, self.k = env, hooks, k
        self.default_params = params
        self.run_params = params.replace(max_steps_in_episode=10**6) if hooks.get("unlimited") else params

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def _hook(self, name: str) -> Callable[..., Any] | None:
        return self.hooks.get(name)

    def observation_space(self, params: Any = None) -> Any:
        space = self.env.observation_space(params if params is not None else self.default_params)
        declared = self._hook("declared")
        return declared(space) if declared is not None else space

    def action_space(self, params: Any = None) -> Any:
        return self.env.action_space(params if params is not None else self.default_params)

    def reset(self, key: Any, params: Any = None) -> Any:
        ignore = self._hook("key")
        return self.env.reset(ignore(key) if ignore is not None else key, self.run_params)

    def step(self, key: Any, state: Any, action: Any, params: Any = None) -> Any:
        active = state.time + 1 >= self.k
        hook = self._hook("action")
        if hook is not None:
            action = hook(self.env.action_space(self.default_params), jnp.asarray(action), active)
        obs, state, reward, terminated, truncated, info = self.env.step(key, state, action, self.run_params)
        if (hook := self._hook("observation")) is not None:
            obs = hook(self.env.observation_space(self.default_params), obs, active)
        if (hook := self._hook("reward")) is not None:
            reward = hook(reward, active)
        if (hook := self._hook("flags")) is not None:
            terminated, truncated = hook(terminated, truncated, active)
        if (hook := self._hook("info")) is not None:
            info = hook(info)
        return obs, state, reward, terminated, truncated, info
