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
- JaxMARL (the multi-agent dict variant of gymnax's: ``reset(key) -> (obs, state)``,
  ``step(key, state, actions) -> (obs, state, rewards, dones, infos)``, one entry per agent
  of ``env.agents``, spaces from ``observation_space(agent)``/``action_space(agent)``):
  ``step`` resets inside when ``dones["__all__"]`` (the final observation is not returned);
  the legal-action mask is ``get_avail_actions(state)`` where the environment has one (read
  as bool: SMAX returns uint8); an environment whose reset returns its observations as a
  tuple indexed by its integer agents (JaxMARL's ``storm_2p``: ``agents = [0, 1]``) takes
  its actions as such a tuple too (``action_0, action_1 = actions``), and the checker reads
  and passes them so: its observations as ``{agent: obs[agent]}``;
- XLand-MiniGrid (``reset(params, key) -> TimeStep``, ``step(params, timestep, action)``,
  the timestep carried as the state): ``StepType.LAST``; the checker then calls
  ``reset(params, reset_key)``;
- pgx: ``terminated``/``truncated``; the checker then calls ``init(reset_key)``;
- Brax/MuJoCo Playground: ``state.done``; the checker then calls ``reset(reset_key)``.

Craftax follows gymnax's 0.x protocol with its own copy of gymnax's spaces (read by
:mod:`.lookalikes`); navix through its ``ToGymnax`` wrapper follows gymnax's. Where a
library declares no observation space (pgx, XLand-MiniGrid, Brax), the checker uses the
shapes it declares and the dtypes reset returns (``Protocol.inferred``).

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
    inferred: bool = False  # the observation space's dtypes are read from reset's output


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
    ``default_params``; Craftax, navix's ``ToGymnax``), a Jumanji environment
    (``observation_spec``/``action_spec``), a JaxMARL one (``agents``, per-agent spaces), an
    XLand-MiniGrid ``(env, params)`` pair or environment (``observation_shape``,
    ``num_actions``), a pgx environment (``init``, ``legal_action_mask``), a Brax/MuJoCo
    Playground one (``reset(rng)`` returning a state with ``obs``, ``reward``, ``done``).
    TypeError for anything else."""
    if isinstance(env, tuple) and len(env) == 2 and _gymnax_like(env[0]):
        return _gymnax(env[0], env[1])
    if isinstance(env, tuple) and len(env) == 2 and _xminigrid_like(env[0]):
        return _xminigrid(env[0], env[1])
    if _gymnax_like(env):
        return _gymnax(env, env.default_params)
    if _jumanji_like(env):
        return _jumanji(env)
    if _jaxmarl_like(env):
        return _jaxmarl(env)
    if _xminigrid_like(env):
        return _xminigrid(env, env.default_params())
    if callable(getattr(env, "init", None)) and hasattr(env, "num_actions") and callable(getattr(env, "step", None)):
        return _pgx(env)
    if hasattr(env, "action_size") and hasattr(env, "observation_size") and callable(getattr(env, "reset", None)):
        return _brax(env)
    raise TypeError(
        f"{type(env).__qualname__} is not a JAX environment of a known protocol "
        "(gymnax, Jumanji, JaxMARL, XLand-MiniGrid, pgx, Brax)"
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


def _jaxmarl_like(env: Any) -> bool:
    """JaxMARL's ``MultiAgentEnv``: per-agent spaces as methods, a list of agent names, and
    ``step_env`` (the step without its reset), which PettingZoo's parallel API, otherwise
    alike, does not have."""
    methods = ("reset", "step", "step_env", "observation_space", "action_space")
    agents = getattr(env, "agents", None)
    return (all(callable(getattr(env, name, None)) for name in methods) and isinstance(agents, (list, tuple))
            and bool(agents) and not hasattr(env, "default_params"))


def _xminigrid_like(env: Any) -> bool:
    """XLand-MiniGrid's ``Environment``: no declared spaces, ``observation_shape(params)`` and
    ``num_actions(params)``, ``default_params()`` a method."""
    methods = ("reset", "step", "observation_shape", "num_actions", "default_params")
    return all(callable(getattr(env, name, None)) for name in methods)


def _merges_itself(node: Any) -> bool:
    """Whether a state node merges itself: its class defines ``where(done, other)``, as
    MuJoCo MJX's ``Data`` does (its Warp implementation keeps unbatched fields, which a
    leaf-by-leaf select would batch, and its FFI then rejects)."""
    import jax
    import numpy as np

    return callable(getattr(type(node), "where", None)) and not isinstance(node, (jax.Array, np.ndarray, np.generic))


def _select(done: Any, fresh: Any, kept: Any) -> Any:
    """``fresh`` where ``done``, else ``kept`` (the checker's automatic reset): leaf by leaf,
    except that a node that merges itself (:func:`_merges_itself`) is merged by its own
    ``kept.where(done, fresh)``."""
    import jax

    def pick(a: Any, b: Any) -> Any:
        return b.where(done, a) if _merges_itself(b) else jax.lax.select(done, a, b)

    return jax.tree.map(pick, fresh, kept, is_leaf=_merges_itself)


def _inferred_space(observation: Any, shapes: Any = None) -> Any:
    """The observation space of a library that declares none: per leaf of ``observation``
    (an abstract value, say from ``jax.eval_shape``) a Box of its dtype, unbounded (the
    dtype's range for integers, {False, True} for bools), of the declared ``shapes`` where
    given (else the leaf's own); dicts become DictProducts."""
    import numpy as np

    from spacealg.spaces.box import Box
    from spacealg.spaces.product import DictProduct

    if isinstance(observation, dict):
        return DictProduct([(k, _inferred_space(v, shapes[k] if isinstance(shapes, dict) else None))
                            for k, v in observation.items()])
    dtype = np.dtype(observation.dtype)
    shape = tuple(int(d) for d in (observation.shape if shapes is None else shapes))
    if dtype == np.bool_:
        return Box(False, True, shape=shape, dtype=dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return Box(info.min, info.max, shape=shape, dtype=dtype)
    return Box(-np.inf, np.inf, shape=shape, dtype=dtype)


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
        # whether step's info is a dict, known when it is traced (the checker's info-dict law)
        flags["info_is_dict"] = jnp.asarray(isinstance(info, dict))
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
        state = _select(done, fresh, state)
        seen = _select(done, first.observation, ts.observation)
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


# -- JaxMARL --------------------------------------------------------------------------------


def _jaxmarl(env: Any) -> Protocol:
    import jax
    import jax.numpy as jnp

    agents = list(env.agents)

    def masks(state: Any) -> dict[str, Any]:
        return {"mask": {a: jnp.asarray(m).astype(bool) for a, m in env.get_avail_actions(state).items()
                         if a in agents}}

    try:  # the base class's get_avail_actions raises NotImplementedError
        _, probe = jax.eval_shape(env.reset, jax.random.key(0))
        jax.eval_shape(env.get_avail_actions, probe)
        with_mask = callable(getattr(env, "get_avail_actions", None))
    except Exception:
        with_mask = False

    try:  # observations as a tuple indexed by integer agents: actions go in as a tuple too
        indexed = isinstance(jax.eval_shape(env.reset, jax.random.key(0))[0], (tuple, list))
    except Exception:
        indexed = False
    indexed = indexed and all(isinstance(a, int) for a in agents)

    def observed(obs: Any) -> Any:
        return {a: obs[a] for a in agents} if indexed else obs

    def reset(key: Any) -> tuple[Any, dict[str, Any]]:
        obs, state = env.reset(key)
        return state, {"observation": observed(obs), **(masks(state) if with_mask else {})}

    def step(state: Any, action: Any, key: Any, reset_key: Any) -> tuple[Any, dict[str, Any]]:
        given = tuple(action[a] for a in agents) if indexed else action
        obs, state, rewards, dones, _ = env.step(key, state, given)
        out = {"observation": observed(obs), "reward": {a: rewards[a] for a in agents}, "done": dones["__all__"]}
        return state, {**out, **(masks(state) if with_mask else {})}

    return Protocol(
        "jaxmarl",
        env,
        reset,
        step,
        {a: env.observation_space(a) for a in agents},
        {a: env.action_space(a) for a in agents},
        mask_of="env.get_avail_actions(state)" if with_mask else "",
    )


# -- XLand-MiniGrid --------------------------------------------------------------------------


def _xminigrid(env: Any, params: Any) -> Protocol:
    import jax
    import numpy as np

    from spacealg.spaces.categorical import Categorical

    def view(ts: Any) -> dict[str, Any]:
        return {"observation": ts.observation, "step_type": ts.step_type, "reward": ts.reward, "discount": ts.discount}

    def reset(key: Any) -> tuple[Any, dict[str, Any]]:
        ts = env.reset(params, key)
        return ts, view(ts)

    def step(ts: Any, action: Any, key: Any, reset_key: Any) -> tuple[Any, dict[str, Any]]:
        stepped = env.step(params, ts, action)
        done = stepped.step_type == 2  # StepType.LAST
        state = _select(done, env.reset(params, reset_key), stepped)
        out = {**view(stepped), "observation": state.observation, "final_observation": stepped.observation,
               "next_step_type": state.step_type, "done": done}
        return state, out

    sample = jax.eval_shape(lambda k: env.reset(params, k), jax.random.key(0))
    observation_space = _inferred_space(sample.observation, env.observation_shape(params))
    limit = getattr(params, "max_steps", None)
    return Protocol(
        "xminigrid", env, reset, step, observation_space,
        Categorical(int(env.num_actions(params)), dtype=np.int32),
        max_steps=int(limit) if isinstance(limit, (int, np.integer)) and limit > 0 else None,
        extras={"params": params}, inferred=True,
    )


# -- pgx -------------------------------------------------------------------------------------


def _pgx(env: Any) -> Protocol:
    import jax
    import numpy as np

    from spacealg.spaces.categorical import Categorical

    def view(state: Any) -> dict[str, Any]:
        return {"observation": state.observation, "mask": state.legal_action_mask}

    def reset(key: Any) -> tuple[Any, dict[str, Any]]:
        state = env.init(key)
        return state, view(state)

    def step(state: Any, action: Any, key: Any, reset_key: Any) -> tuple[Any, dict[str, Any]]:
        stepped = env.step(state, action, key)
        done = stepped.terminated | stepped.truncated
        state = _select(done, env.init(reset_key), stepped)
        return state, {
            **view(state),
            "final_observation": stepped.observation,
            "reward": stepped.rewards,
            "done": done,
            "terminated": stepped.terminated,
            "truncated": stepped.truncated,
        }

    sample = jax.eval_shape(env.init, jax.random.key(0))
    return Protocol(
        "pgx", env, reset, step, _inferred_space(sample.observation, tuple(env.observation_shape)),
        Categorical(int(env.num_actions), dtype=np.int32), mask_of="state.legal_action_mask", inferred=True,
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
        stepped = env.step(state, action)
        done = stepped.done > 0
        state = _select(done, env.reset(reset_key), stepped)
        return state, {"observation": state.obs, "final_observation": stepped.obs, "reward": stepped.reward,
                       "done": done}

    size = env.observation_size  # an int, or (Playground) a dict of shapes
    shapes = (int(size),) if isinstance(size, (int, np.integer)) else (
        {k: tuple(v) for k, v in size.items()} if isinstance(size, dict) else None)
    observation_space = _inferred_space(jax.eval_shape(env.reset, jax.random.key(0)).obs, shapes)
    actions = Box(-1.0, 1.0, shape=(int(env.action_size),), dtype=np.float32)
    return Protocol("brax", env, reset, step, observation_space, actions, inferred=True)
