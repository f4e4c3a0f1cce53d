"""The functional protocols JAX environments ship, each adapted to one shape.

A :class:`Protocol` is what the checker drives: pure functions ``reset(key) -> (state, out)``
and ``step(state, action, key, reset_key) -> (state, out)`` and the declared spaces. ``out``
is a dict of arrays with fixed keys per style (see :data:`OUT_KEYS`):

- ``observation``: what the agent sees next (after the episode's automatic reset);
- ``final_observation``: the step's own observation (differs from ``observation`` only at
  the step that ends an episode);
- ``reward``, ``done`` (the episode ended at this step), and per style ``terminated``,
  ``truncated``, ``discount``, ``step_type``, ``next_step_type``, ``mask`` (the legal-action
  mask of what the agent sees next).

What happens after an end, per style (stated, as the checker's laws assume it):

- gymnax: ``step`` resets inside (``obs`` after ``done`` is the new episode's first one;
  gymnax 1.x returns ``(obs, state, reward, terminated, truncated, info)`` with the final
  observation in ``info["final_observation"]``, gymnax 0.x ``(obs, state, reward, done,
  info)``);
- Jumanji: ``step`` returns ``StepType.LAST``; the checker then calls ``reset(reset_key)``;
- pgx: ``terminated``/``truncated``; the checker then calls ``init(reset_key)``;
- Brax/MuJoCo Playground: ``state.done``; the checker then calls ``reset(reset_key)``.

Keys: one example row has a seed ``s``; ``k_reset, k_steps, k_resets = split(key(s), 3)``;
step ``t`` (0-based) gets ``fold_in(k_steps, t)`` and a reset after an end at step ``t``
gets ``fold_in(k_resets, t)``. The reproduction snippets replay exactly this.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["OUT_KEYS", "Protocol", "adapt", "is_jax_env"]

OUT_KEYS = (
    "observation",
    "final_observation",
    "reward",
    "done",
    "terminated",
    "truncated",
    "discount",
    "step_type",
    "next_step_type",
    "mask",
)


@dataclass
class Protocol:
    """One JAX environment behind the checker's uniform protocol (see the module docstring).

    ``observation_space``/``action_space``/``reward_space``/``discount_space`` are the
    declared spaces as the library declares them (a gymnax space, a Jumanji spec, a spacealg
    space; None: not declared); ``sample_action(key)`` is the library's own action sampler
    where it has one (None: the checker draws from the converted action space);
    ``max_steps``: the episode limit the library promises (None: none)."""

    style: str
    env: Any
    reset: Callable[[Any], tuple[Any, dict[str, Any]]]
    step: Callable[[Any, Any, Any, Any], tuple[Any, dict[str, Any]]]
    observation_space: Any
    action_space: Any
    reward_space: Any = None
    discount_space: Any = None
    sample_action: Callable[[Any], Any] | None = None
    max_steps: int | None = None
    mask_of: str = ""  # where the mask comes from, for messages ("observation.action_mask")
    extras: dict[str, Any] = field(default_factory=dict)


def _roots(obj: Any) -> set[str]:
    return {c.__module__.partition(".")[0] for c in type(obj).__mro__}


def is_jax_env(env: Any) -> bool:
    """Whether ``env`` (an instance, or the ``(env, params)`` pair of ``gymnax.make``)
    follows one of the functional JAX protocols this checker knows."""
    try:
        adapt(env)
        return True
    except TypeError:
        return False


def adapt(env: Any) -> Protocol:
    """The :class:`Protocol` of ``env``: a gymnax ``(env, params)`` pair or environment (its
    ``default_params``), a Jumanji environment (``observation_spec``/``action_spec``), a pgx
    environment (``init``, ``legal_action_mask``), a Brax/MuJoCo Playground one
    (``reset(rng)`` returning a state with ``obs``, ``reward``, ``done``). TypeError for
    anything else."""
    if isinstance(env, tuple) and len(env) == 2 and _gymnax_like(env[0]):
        return _gymnax(env[0], env[1])
    if _gymnax_like(env):
        return _gymnax(env, env.default_params)
    if _jumanji_like(env):
        return _jumanji(env)
    if callable(getattr(env, "init", None)) and hasattr(env, "num_actions") and callable(getattr(env, "step", None)):
        return _pgx(env)
    if hasattr(env, "action_size") and hasattr(env, "observation_size") and callable(getattr(env, "reset", None)):
        return _brax(env)
    raise TypeError(
        f"{type(env).__qualname__} is not a JAX environment of a known protocol (gymnax, Jumanji, pgx, Brax)"
    )


def _jumanji_like(env: Any) -> bool:
    """Jumanji's specs as values (properties), not as methods (dm_env's); TorchRL's
    ``observation_spec``/``action_spec`` properties are specs of another library."""
    specs = [getattr(env, name, None) for name in ("observation_spec", "action_spec")]
    return (all(s is not None and not callable(s) and type(s).__module__.split(".")[0] == "jumanji" for s in specs)
            and callable(getattr(env, "reset", None)))


def _gymnax_like(env: Any) -> bool:
    methods = ("reset", "step", "observation_space", "action_space")
    return all(callable(getattr(env, name, None)) for name in methods) and hasattr(env, "default_params")


# -- gymnax ----------------------------------------------------------------------------------


def _gymnax(env: Any, params: Any) -> Protocol:
    import jax.numpy as jnp

    def reset(key: Any) -> tuple[Any, dict[str, Any]]:
        obs, state = env.reset(key, params)
        return state, {"observation": obs}

    def step(state: Any, action: Any, key: Any, reset_key: Any) -> tuple[Any, dict[str, Any]]:
        result = env.step(key, state, action, params)
        if len(result) == 6:
            obs, state, reward, terminated, truncated, info = result
            done = jnp.logical_or(terminated, truncated)
            flags = {"terminated": terminated, "truncated": truncated}
        else:
            obs, state, reward, done, info = result
            flags = {}
        if isinstance(info, dict) and "final_observation" in info:  # gymnax 1.x
            flags["final_observation"] = info["final_observation"]
        return state, {"observation": obs, "reward": reward, "done": done, **flags}

    action_space = env.action_space(params)
    sampler = getattr(action_space, "sample", None)
    limit = getattr(params, "max_steps_in_episode", None)
    return Protocol(
        "gymnax",
        env,
        reset,
        step,
        env.observation_space(params),
        action_space,
        sample_action=sampler if _roots(action_space) & {"gymnax"} else None,
        max_steps=int(limit) if isinstance(limit, int) and limit > 0 else None,
        extras={"params": params},
    )


# -- Jumanji ---------------------------------------------------------------------------------


def _mask(observation: Any) -> Any:
    return getattr(observation, "action_mask", None)


def _jumanji(env: Any) -> Protocol:
    import jax

    def reset(key: Any) -> tuple[Any, dict[str, Any]]:
        state, ts = env.reset(key)
        out = {"observation": ts.observation, "step_type": ts.step_type, "reward": ts.reward, "discount": ts.discount}
        if _mask(ts.observation) is not None:
            out["mask"] = _mask(ts.observation)
        return state, out

    def step(state: Any, action: Any, key: Any, reset_key: Any) -> tuple[Any, dict[str, Any]]:
        state, ts = env.step(state, action)
        done = ts.step_type == 2  # StepType.LAST
        fresh, first = env.reset(reset_key)
        state = jax.tree.map(lambda a, b: jax.lax.select(done, a, b), fresh, state)
        seen = jax.tree.map(lambda a, b: jax.lax.select(done, a, b), first.observation, ts.observation)
        out = {
            "observation": seen,
            "final_observation": ts.observation,
            "reward": ts.reward,
            "discount": ts.discount,
            "step_type": ts.step_type,
            "next_step_type": jax.lax.select(done, first.step_type, ts.step_type),
            "done": done,
        }
        if _mask(seen) is not None:
            out["mask"] = _mask(seen)
        return state, out

    return Protocol(
        "jumanji",
        env,
        reset,
        step,
        env.observation_spec,
        env.action_spec,
        reward_space=getattr(env, "reward_spec", None),
        discount_space=getattr(env, "discount_spec", None),
        mask_of="observation.action_mask",
    )


# -- pgx -------------------------------------------------------------------------------------


def _pgx(env: Any) -> Protocol:
    import jax
    import numpy as np

    from spacealg.spaces.box import Box
    from spacealg.spaces.categorical import Categorical

    def view(state: Any) -> dict[str, Any]:
        return {"observation": state.observation, "mask": state.legal_action_mask}

    def reset(key: Any) -> tuple[Any, dict[str, Any]]:
        state = env.init(key)
        return state, view(state)

    def step(state: Any, action: Any, key: Any, reset_key: Any) -> tuple[Any, dict[str, Any]]:
        stepped = env.step(state, action, key)
        done = stepped.terminated | stepped.truncated
        fresh = env.init(reset_key)
        state = jax.tree.map(lambda a, b: jax.lax.select(done, a, b), fresh, stepped)
        return state, {
            **view(state),
            "final_observation": stepped.observation,
            "reward": stepped.rewards,
            "done": done,
            "terminated": stepped.terminated,
            "truncated": stepped.truncated,
        }

    sample = env.init(jax.random.key(0))
    obs = np.asarray(sample.observation)
    low, high = (False, True) if obs.dtype == bool else (-np.inf, np.inf)
    observation_space = Box(low, high, shape=tuple(env.observation_shape), dtype=obs.dtype)
    return Protocol(
        "pgx", env, reset, step, observation_space, Categorical(int(env.num_actions), dtype=np.int32),
        mask_of="state.legal_action_mask",
    )


# -- Brax / MuJoCo Playground ----------------------------------------------------------------


def _brax(env: Any) -> Protocol:
    import jax
    import numpy as np

    from spacealg.spaces.box import Box

    def reset(key: Any) -> tuple[Any, dict[str, Any]]:
        state = env.reset(key)
        return state, {"observation": state.obs}

    def step(state: Any, action: Any, key: Any, reset_key: Any) -> tuple[Any, dict[str, Any]]:
        state = env.step(state, action)
        done = state.done > 0
        final = state.obs
        fresh = env.reset(reset_key)
        state = jax.tree.map(lambda a, b: jax.lax.select(done, a, b), fresh, state)
        return state, {"observation": state.obs, "final_observation": final, "reward": state.reward, "done": done}

    size = env.observation_size
    shape = (int(size),) if isinstance(size, int) else None
    observation_space = Box(-np.inf, np.inf, shape=shape, dtype=np.float32) if shape else None
    actions = Box(-1.0, 1.0, shape=(int(env.action_size),), dtype=np.float32)
    return Protocol("brax", env, reset, step, observation_space, actions)
