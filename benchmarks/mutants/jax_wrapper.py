"""A gymnax or Jumanji environment with one defect, for the JAX bases.

A functional environment is traced once, so "from step ``k`` on" is a value, not a branch:
``active`` is ``state.time + 1 >= k`` (gymnax's step counter) and value defects are
``jnp.where(active, broken, right)``. A dtype or shape is part of the compiled program, so
those defects (and arrays in place of scalars) change every step's output. :data:`JAX_DEFECTS`
maps an operator's name to its defect here; an operator missing from it does not apply to
a functional environment (nothing to alias, nothing to raise under ``jit``, no ``close``).
A Jumanji environment takes the same hooks, given its observation's first float
``BoundedArray`` leaf (``JUMANJI_ABSENT`` says which defects it has no place for).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jumanji.wrappers import Wrapper

__all__ = ["JAX_DEFECTS", "JUMANJI_ABSENT", "GymnaxMutant", "JumanjiMutant"]


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


JUMANJI_ABSENT = {
    "flags-array": "Jumanji has no terminated/truncated flags (a step type and a discount instead)",
    "info-not-dict": "Jumanji's extras are empty here",
    "never-truncates": "the base declares no episode limit the checkers read",
}


def _leaf_name(spec: Any) -> str:
    """The first field of an observation spec that is a float ``BoundedArray``."""
    from jumanji import specs

    for name, leaf in vars(spec).items():
        if isinstance(leaf, specs.BoundedArray) and jnp.issubdtype(leaf.dtype, jnp.floating):
            return name
    raise TypeError(f"no float BoundedArray in {spec}")


class _Shim:
    """A Jumanji spec seen with the attributes the gymnax hooks read."""

    def __init__(self, spec: Any) -> None:
        self.shape = tuple(spec.shape)
        self.high = np.broadcast_to(np.asarray(getattr(spec, "maximum", np.inf), dtype=np.float64), self.shape)
        self.n = int(getattr(spec, "num_values", 0))


class JumanjiMutant(Wrapper):
    """A Jumanji ``env`` with the defect ``hooks`` (:data:`JAX_DEFECTS`) on its observation's
    first float ``BoundedArray`` leaf; "from step ``k``" reads the state's ``step_count``."""

    def __init__(self, env: Any, hooks: Hooks, k: int) -> None:
        super().__init__(env)
        self.hooks, self.k = hooks, k
        self.leaf = _leaf_name(env.observation_spec)

    @property
    def observation_spec(self) -> Any:
        from jumanji import specs

        spec = self._env.observation_spec
        if "declared" not in self.hooks:
            return spec
        leaf = getattr(spec, self.leaf)
        broken = specs.BoundedArray((*leaf.shape, 1), leaf.dtype, leaf.minimum, leaf.maximum, leaf.name)
        return spec.replace(**{self.leaf: broken})

    def reset(self, key: Any) -> Any:
        ignore = self.hooks.get("key")
        return self._env.reset(ignore(key) if ignore is not None else key)

    def step(self, state: Any, action: Any) -> Any:
        active = state.step_count + 1 >= self.k
        if (hook := self.hooks.get("action")) is not None:
            action = hook(_Shim(self._env.action_spec), jnp.asarray(action), active)
        state, timestep = self._env.step(state, action)
        if (hook := self.hooks.get("observation")) is not None:
            spec = getattr(self._env.observation_spec, self.leaf)
            observation = timestep.observation
            leaf = hook(_Shim(spec), getattr(observation, self.leaf), active)
            timestep = timestep.replace(observation=observation._replace(**{self.leaf: leaf}))
        if (hook := self.hooks.get("reward")) is not None:
            timestep = timestep.replace(reward=hook(timestep.reward, active))
        return state, timestep
