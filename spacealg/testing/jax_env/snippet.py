"""Reproduction snippets of :class:`~.check.JaxEnvCheckError`: Python that replays the
failure with JAX and ends in an assertion that fails while the defect is there.

A gymnax or Jumanji failure of a trajectory law is replayed with the library's own calls
(the keys of :mod:`spacealg.adapters.jax_protocols`, the recorded actions, the automatic reset after an end);
the assertion is the law at the failing step, through
:func:`~spacealg.adapters.jax_spaces.is_member` where a space is involved. Other styles
and the laws that compare runs replay through :func:`~spacealg.testing.jax_env.replay_jax`
(one row) or the checker's own compiled rollouts (batching).
"""

from __future__ import annotations

from typing import Any

from spacealg.testing.engine.errors import literal

__all__ = ["reproduction"]

_NATIVE = {"observation-in-space", "declared-dtypes", "finite-values", "reward-in-space", "discount-in-space",
           "action-mask", "episode-end", "action-in-space"}
_GYMNAX = _NATIVE | {"max-episode-steps"}  # gymnax's episode clock is replayed as well


def _head(error: Any) -> list[str]:
    return [
        "import jax",
        "import jax.numpy as jnp",
        "import numpy as np",
        *error.imports,
        "",
        error.construction,
        f"seed = {error.seed}",
        f"actions = {literal(error.actions)}",
    ]


def _gymnax(error: Any) -> list[str]:
    lines = [
        "from spacealg.adapters.jax_spaces import is_member",
        "from spacealg.testing.jax_env.laws import mask_factors",
        *_head(error),
        "env, params = env if isinstance(env, tuple) else (env, env.default_params)",
        "k_reset, k_steps, k_resets = jax.random.split(jax.random.key(np.uint32(seed)), 3)",
        "obs, state = env.reset(k_reset, params)",
        "final, reward, flags, elapsed = obs, None, (), 0",
        "for t, action in enumerate(actions):",
        "    obs, state, reward, *flags, info = env.step(jax.random.fold_in(k_steps, t), state, jnp.asarray(action), "
        "params)",
        "    final = info.get('final_observation', obs)",
        "    elapsed = 0 if bool(np.any(flags)) else elapsed + 1",
        "space = env.observation_space(params)",
    ]
    return lines + _assertion(error, "gymnax")


def _jumanji(error: Any) -> list[str]:
    lines = [
        "from spacealg.adapters.jax_spaces import is_member",
        "from spacealg.testing.jax_env.laws import mask_factors",
        *_head(error),
        "k_reset, k_steps, k_resets = jax.random.split(jax.random.key(np.uint32(seed)), 3)",
        "state, timestep = env.reset(k_reset)",
        "obs = final = timestep.observation",
        "next_type = timestep.step_type",
        "for t, action in enumerate(actions):",
        "    state, timestep = env.step(state, jnp.asarray(action))",
        "    obs = final = timestep.observation",
        "    next_type = timestep.step_type",
        "    if int(timestep.step_type) == 2:  # LAST: the checker resets with the next key",
        "        state, first = env.reset(jax.random.fold_in(k_resets, t))",
        "        obs, next_type = first.observation, first.step_type",
        "reward, discount, space = timestep.reward, timestep.discount, env.observation_spec",
    ]
    return lines + _assertion(error, "jumanji")


def _assertion(error: Any, style: str) -> list[str]:
    prop = error.property
    actions_space = "env.action_space(params)" if style == "gymnax" else "env.action_spec"
    if prop == "observation-in-space":
        return ["assert is_member(obs, space) and is_member(final, space), (obs, final)  # fails: the defect"]
    if prop == "declared-dtypes":
        return [
            "from spacealg.adapters.jax_spaces import converted, dtype_problem",
            "problem = dtype_problem(obs, converted(space))",
            "assert not problem, problem  # fails: the defect",
        ]
    if prop == "finite-values":
        return [
            "leaves = [np.asarray(x) for x in jax.tree.leaves((obs, final, reward))]",
            "floats = [x for x in leaves if x.dtype.kind == 'f']",
            "assert all(np.isfinite(x).all() for x in floats), (obs, final, reward)  # fails: the defect",
        ]
    if prop == "reward-in-space":
        if style == "jumanji":
            return ["assert is_member(reward, env.reward_spec), reward  # fails: the defect"]
        return ["assert np.shape(reward) == () and np.asarray(reward).dtype.kind in 'iuf', reward  # fails: the defect"]
    if prop == "discount-in-space":
        return ["assert is_member(discount, env.discount_spec) and 0 <= discount <= 1, discount  # fails: the defect"]
    if prop == "action-mask":
        return [
            "from spacealg.adapters.jax_spaces import converted",
            f"allowed, why = mask_factors(np.asarray(obs.action_mask)[None], converted({actions_space}), 1)",
            "assert allowed.all(), (obs.action_mask, why)  # fails: the defect",
        ]
    if prop == "action-in-space":
        return [f"assert is_member(actions[-1], {actions_space}), actions[-1]  # fails: the defect"]
    if prop == "episode-end" and style == "gymnax":
        return ["assert all(np.asarray(f).dtype == bool and np.shape(f) == () for f in flags), flags  # fails: "
                "the defect"]
    if prop == "max-episode-steps":  # the steps since the last end, after the last step
        return ["assert elapsed < params.max_steps_in_episode, elapsed  # fails: the defect"]
    return [
        "kind = int(timestep.step_type)",
        "expected = (0,) if not actions else (1, 2)  # reset: FIRST; step: MID or LAST",
        "assert kind in expected and (kind != 2 or int(next_type) == 0), (kind, int(next_type))  # fails: the defect",
    ]


def _replayed(error: Any) -> list[str]:
    return [
        *_head(error),
        "from spacealg.testing.jax_env import replay_jax",
        "try:",
        "    replay_jax(env, seed, actions)",
        "    problem = None",
        "except AssertionError as error:",
        "    problem = error",
        f"assert problem is None, problem  # fails: {error.property}",
    ]


def _batched(error: Any) -> list[str]:
    c = error.context
    return [
        *_head(error)[:-2],
        "from spacealg.testing.jax_env import adapt",
        "from spacealg.testing.jax_env.relations import difference",
        "from spacealg.testing.jax_env.rollout import Rollouts",
        f"rollouts = Rollouts(adapt(env), horizon={c.get('horizon')}, masks=True, illegal=False)",
        f"seeds = ((np.uint64({c.get('first_seed')}) + np.arange({c.get('batch')}, dtype=np.uint64)) % 2**32)"
        ".astype(np.uint32)",
        f"keys = jax.vmap(jax.random.fold_in, (None, 0))(jax.random.key(np.uint32({c.get('action_seed')})), "
        f"jnp.arange({c.get('batch')}))",
        "out0, traj, _ = jax.device_get(rollouts.drawn(seeds, keys))",
        f"row = jax.tree.map(lambda a: a[{c.get('row')}], (out0, traj))",
        f"replay = jax.device_get(rollouts.replay(seeds[{c.get('row')}], row[1]['action']))",
        f"found = difference(row, replay, {c.get('n')})",
        "assert found is None or not found[2], found  # fails: the batched row differs from its unbatched replay",
    ]


def reproduction(error: Any) -> str:
    """The snippet for ``error`` (see the module docstring)."""
    if error.property == "batching" and error.context:
        lines = _batched(error)
    elif error.style == "gymnax" and error.property in _GYMNAX:
        lines = _gymnax(error)
    elif error.style == "jumanji" and error.property in _NATIVE:
        lines = _jumanji(error)
    else:
        lines = _replayed(error)
    return "\n".join(lines) + "\n"
