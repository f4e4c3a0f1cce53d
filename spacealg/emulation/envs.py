"""Emulation environments: Gymnasium and PettingZoo environments as PufferLib-style envs.

:class:`GymnasiumPufferEnv` and :class:`PettingZooPufferEnv` present any environment through
flat spaces and preallocated buffers (:mod:`spacealg.env.buffers`):

- observations: a structured observation (Dict, Tuple, Discrete, ...) is *emulated*: written,
  field by field, into a structured view of its row of the ``observations`` buffer, which is
  a flat Box (``emulate_observation_space``). A Box observation is copied in as is. Nothing
  is allocated per step; ``nativize`` (or the observation codec) turns a row back.
- actions: an action of the emulated action space (``emulate_action_space``; MultiDiscrete
  for Dict/Tuple of discrete spaces) is *nativized* to the wrapped environment's own action
  before each step. Discrete, MultiDiscrete and Box actions pass through (reshaped from the
  buffer's row shape when needed).

Seeding follows Gymnasium: ``reset(seed=s)`` reseeds, ``reset()`` continues. The constructor's
``seed`` (default 0, as in PufferLib) seeds the first reset that is given none; pass
``seed=None`` for an unseeded first reset. ``seed(s)`` sets the seed of the next reset.

Both keep the final observations of ended episodes in ``final_observations`` (the
final-observation hook of :class:`spacealg.env.PufferEnv`, declared by
``keeps_final_observations = True``): row ``i`` holds the observation that ended row ``i``'s
latest episode, written by the step that ended it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from spacealg.emulation.codec import codec_for
from spacealg.emulation.guard import (
    FLAG_TYPES,
    REWARD_TYPES,
    flag_guard,
    observation_guard,
    observation_writer,
    reward_guard,
)
from spacealg.emulation.spaces import emulate_action_space, emulate_observation_space
from spacealg.env.buffers import BUFFER_NAMES, HasBuffers, set_buffers
from spacealg.env.errors import APIUsageError, InvalidAgentError
from spacealg.env.kinds import puffer_space_class
from spacealg.env.namespace import Namespace

__all__ = ["GymnasiumPufferEnv", "PettingZooPufferEnv", "check_space", "make_object", "pad_agent_data"]


def make_object(
    object_instance: Any = None,
    object_creator: Callable[..., Any] | None = None,
    creator_args: Sequence[Any] | None = (),
    creator_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    """``object_instance`` itself, or ``object_creator(*creator_args, **creator_kwargs)``.

    Exactly one of the two must be given (ValueError otherwise). A callable instance (a class,
    a function) is a TypeError (pass it as ``object_creator``), as is a creator that is not
    callable.
    """
    if (object_instance is None) == (object_creator is None):
        raise ValueError("make_object: give exactly one of object_instance and object_creator")
    if object_instance is not None:
        if callable(object_instance):
            raise TypeError(
                f"object_instance must be an instance, not {object_instance!r}; "
                "pass a class or a function as object_creator"
            )
        return object_instance
    if not callable(object_creator):
        raise TypeError(f"object_creator must be callable, got {object_creator!r}")
    return object_creator(*(creator_args or ()), **(creator_kwargs or {}))


def check_space(data: Any, space: Any) -> bool:
    """PufferLib's ``check_space``: True if ``data`` is in ``space``; APIUsageError (naming
    both) if it is not, or if the space's ``contains`` raised."""
    _check_space(data, space, "data")
    return True


def pad_agent_data(data: Mapping[Any, Any], agents: Sequence[Any], pad_value: Any) -> dict[Any, Any]:
    """PufferLib's ``pad_agent_data``: ``{agent: data[agent]}`` for every agent, ``pad_value``
    for the agents missing from ``data`` (in the order of ``agents``)."""
    return {agent: data.get(agent, pad_value) for agent in agents}


def _env_name(env: Any) -> str:
    """The environment's registered id, or its class name."""
    spec = getattr(env, "spec", None)
    return str(getattr(spec, "id", None) or type(getattr(env, "unwrapped", env)).__name__)


def _check_space(value: Any, space: Any, what: str) -> None:
    """The one-time sanity check of a wrapped environment's first observation/action."""
    try:
        ok = space.contains(value)
    except Exception as error:  # a foreign space's contains may raise on odd input
        raise APIUsageError(f"checking the {what} {value!r} against {space!r} raised {error!r}") from error
    if not ok:
        raise APIUsageError(f"the {what} {value!r} is not in the space {space!r}")


def _action_converter(native: Any) -> Callable[[Any], Any]:
    """The function that turns an action of the emulated action space into a native one.

    Dict/Tuple actions are nativized by the action :class:`Codec` (which casts an int32 or
    float row first); a Discrete action given as an array becomes its Python int; an array
    action of another shape (a buffer row) is reshaped to the space's shape.
    """
    space_class = puffer_space_class(native)
    if space_class is None:
        nativize = codec_for(native, "action").nativize
        width = codec_for(native, "action").width

        def structured_action(action: Any) -> Any:
            try:
                return nativize(action)
            except ValueError as error:
                if np.size(action) != width:
                    raise _wrong_size(action, width, native) from error
                raise

        return structured_action
    if space_class == "Discrete":
        def discrete_action(action: Any) -> Any:
            if type(action) is not np.ndarray:
                return action
            try:
                return action.item()
            except ValueError:  # not one entry
                raise _wrong_size(action, 1, native) from None

        return discrete_action
    shape = tuple(native.shape)
    size = int(np.prod(shape))

    def array_action(action: Any) -> Any:
        if type(action) is np.ndarray and action.shape != shape:
            if action.size != size:
                raise _wrong_size(action, size, native)
            return action.reshape(shape)
        return action

    return array_action


def _wrong_size(action: Any, size: int, space: Any) -> APIUsageError:
    return APIUsageError(
        f"the action array has {np.size(action)} entries (shape {np.shape(action)}) but the action "
        f"space {space!r} takes {size}"
    )


def _row_writer(native: Any, rows: np.ndarray) -> Callable[[int, Any], Any]:
    """``write(i, ob)``: the same for row ``i`` of a 2-D buffer (one view cache for all rows)."""
    if puffer_space_class(native) == "Box":
        return rows.__setitem__
    return functools.partial(codec_for(native, "observation").emulate_row, rows)


def _struct_view(observations: np.ndarray, struct_dtype: np.dtype) -> np.ndarray | None:
    """The observations buffer seen as one struct per agent (PufferLib's ``obs_struct``)."""
    try:
        return observations.view(struct_dtype).reshape(observations.shape[0])
    except (TypeError, ValueError):  # a non-contiguous user buffer
        return None


class _Seeds:
    """Gymnasium's seeding rule plus a pending seed (the constructor's, or ``seed()``'s)."""

    def __init__(self, seed: int | None) -> None:
        self.pending = seed

    def take(self, seed: int | None) -> int | None:
        if seed is None:
            seed, self.pending = self.pending, None
        else:
            self.pending = None
        return seed


def _reset(env: Any, seed: int | None, options: dict[str, Any] | None) -> Any:
    if options is None:
        return env.reset(seed=seed)
    return env.reset(seed=seed, options=options)


class _InjectableBuffers(HasBuffers):
    """The ``buf`` attribute: PufferLib 2.0's vectorisation assigns ``env.buf`` after construction.

    Law: after ``env.buf = b``, each buffer ``b`` names (a mapping or an object with the
    attributes; PufferLib 2.0 gives all but ``actions``) is exactly ``b``'s array, the others
    are kept, and the environment writes into them from then on. Reading ``env.buf`` gives a
    :class:`Namespace` of the six buffers.
    """

    keeps_final_observations = True
    final_observations: np.ndarray
    env: Any

    @property
    def buf(self) -> Namespace:
        return Namespace(**{name: getattr(self, name) for name in BUFFER_NAMES})

    @buf.setter
    def buf(self, buf: Any) -> None:
        if buf is None:
            return
        get = buf.get if isinstance(buf, Mapping) else functools.partial(getattr, buf)
        set_buffers(self, {name: get(name, getattr(self, name)) for name in BUFFER_NAMES})
        self._bind_buffers()

    def _emulate(self, native_obs: Any, native_atn: Any, owner: str, seed: int | None) -> tuple[Any, Any]:
        """The emulated observation and action spaces of the wrapped ones; sets what both
        environments derive from them (dtypes, emulation flags, the action converter, the
        reward guard, the seeds) and their initial state."""
        obs_space, self.obs_dtype = emulate_observation_space(native_obs)
        atn_space, self.atn_dtype = emulate_action_space(native_atn)
        self.is_obs_emulated = puffer_space_class(native_obs) != "Box"
        self.is_atn_emulated = puffer_space_class(native_atn) is None
        self.emulated = Namespace(observation_dtype=obs_space.dtype, emulated_observation_dtype=self.obs_dtype)
        self.metadata = getattr(self.env, "metadata", {})
        self._to_native = _action_converter(native_atn)
        self._owner = owner
        self._check_reward = reward_guard(owner)
        self._seeds = _Seeds(seed)
        self.initialized = False
        self.is_observation_checked = False
        self.is_action_checked = False
        return obs_space, atn_space

    def seed(self, seed: int | None) -> None:
        """Seed the next reset (Gymnasium seeds through reset; this is PufferLib's spelling)."""
        self._seeds.pending = seed

    @property
    def render_mode(self) -> Any:
        return getattr(self.env, "render_mode", None)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> Any:
        return self.env.close()

    def _bind_buffers(self) -> None:
        """Derive the views of the current buffers (each subclass adds its own)."""
        self.final_observations = np.zeros_like(self.observations)
        self.obs_struct = (
            _struct_view(self.observations, self.obs_dtype) if self.is_obs_emulated else self.observations
        )


class GymnasiumPufferEnv(_InjectableBuffers, gymnasium.Env):  # type: ignore[override]  # ours first: render, close, render_mode
    """A Gymnasium environment seen through flat spaces and one agent's buffers.

    Laws: ``observation_space``/``action_space`` are ``emulate_observation_space`` /
    ``emulate_action_space`` of the wrapped spaces (``single_*`` are the same, and
    ``num_agents == 1``); ``reset`` and ``step`` return ``observations[0]`` — the same array
    every time — holding the wrapped observation emulated, so
    ``nativize(obs, env.env.observation_space, env.obs_dtype)`` equals the wrapped
    environment's observation — except the step that ends an episode (terminated or
    truncated), which returns a fresh copy of the row, also kept in ``final_observations[0]``,
    so that an engine holding it past the next reset (Gymnasium's ``SAME_STEP``
    ``final_obs``) holds the final observation. With ``copy=True`` every ``reset``/``step``
    returns a fresh copy instead (what Gymnasium's ``check_env`` asks of an environment whose
    caller keeps observations); reward, terminal and truncation are the wrapped ones, also
    written to ``rewards[0]``, ``terminals[0]``, ``truncations[0]`` (``masks[0]`` is set True
    by ``reset``: a single agent is always live).
    """

    def __init__(
        self,
        env: Any = None,
        env_creator: Callable[..., Any] | None = None,
        env_args: Sequence[Any] | None = (),
        env_kwargs: Mapping[str, Any] | None = None,
        buf: Any = None,
        seed: int | None = 0,
        *,
        copy: bool = False,
    ) -> None:
        if not isinstance(copy, bool):
            raise TypeError(f"copy must be a bool, got {copy!r}")
        self.copy = copy
        self.env = make_object(env, env_creator, env_args, env_kwargs)
        owner = f"GymnasiumPufferEnv({_env_name(self.env)})"
        self.observation_space, self.action_space = self._emulate(
            self.env.observation_space, self.env.action_space, owner, seed
        )
        self.single_observation_space = self.observation_space
        self.single_action_space = self.action_space
        self.num_agents = 1
        self.render_modes = ["human", "rgb_array"]
        self.done = True
        set_buffers(self, buf)
        self._bind_buffers()

    def _bind_buffers(self) -> None:
        """Derive the row view, the writer and the bound step from the current buffers."""
        super()._bind_buffers()
        self.obs = self.observations[0, ...]  # a view, also for 0-d observations
        self._write = observation_writer(self.env.observation_space, self._owner, self.obs)  # checks too
        self._bound_step = self._bind_step()
        if type(self).step is GymnasiumPufferEnv.step:
            self.step = self._bound_step  # type: ignore[method-assign, assignment]

    @property  # type: ignore[override]
    def np_random(self) -> np.random.Generator:
        """The wrapped environment's generator (as a Gymnasium wrapper forwards it)."""
        return self.env.np_random  # type: ignore[no-any-return]

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self.env.np_random = value

    @property
    def np_random_seed(self) -> int:
        return self.env.np_random_seed  # type: ignore[no-any-return]

    @property
    def _np_random(self) -> np.random.Generator | None:  # type: ignore[override]
        """The wrapped environment's seeded generator, or None (what Gymnasium's checker reads)."""
        return getattr(getattr(self.env, "unwrapped", self.env), "_np_random", None)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        """Reset the wrapped environment (Gymnasium's seeding) and return ``(obs, info)``."""
        ob, info = _reset(self.env, self._seeds.take(seed), options)
        self._write(ob)  # every observation checked before the buffer is touched
        self.is_observation_checked = True
        self.rewards[0] = 0
        self.terminals[0] = False
        self.truncations[0] = False
        self.masks[0] = True
        self.initialized = True
        self.done = False
        return (self.obs.copy() if self.copy else self.obs), info

    def step(self, action: Any) -> tuple[np.ndarray, Any, bool, bool, dict]:
        """Nativize ``action``, step the wrapped environment, emulate its observation."""
        return self._bound_step(action)

    def _refuse_step(self) -> None:
        raise APIUsageError(
            "step() called after the episode ended; call reset()"
            if self.initialized
            else "step() called before reset()"
        )

    def _check_action(self, action: Any) -> None:
        _check_space(action, self.env.action_space, "action")
        self.is_action_checked = True

    def _bind_step(self) -> Callable[[Any], tuple[np.ndarray, Any, bool, bool, dict]]:
        """:meth:`step` with the wrapped step, the buffers and the converters in closure cells.

        The same behaviour with a third less overhead per call (no attribute lookups on the
        hot path). Unless a subclass overrides ``step``, the instance's ``step`` is this.
        """
        wrapper, env_step = self, self.env.step
        write, to_native, convert_all = self._write, self._to_native, self.is_atn_emulated
        check_reward, numbers = self._check_reward, REWARD_TYPES
        check_flag, flags = flag_guard(self._owner), FLAG_TYPES
        row, rewards, terminals, truncations = self.obs, self.rewards, self.terminals, self.truncations
        # the per-step stores go through memoryviews: numpy's own conversion rules (the same
        # results, tested) at about half the cost of ndarray item assignment
        reward_cell, terminal_cell = rewards.data, terminals.data
        truncation_cell = truncations.data
        final = self.final_observations[0, ...]
        ndarray, copy_out = np.ndarray, self.copy

        def step(action: Any) -> tuple[np.ndarray, Any, bool, bool, dict]:
            if wrapper.done:
                wrapper._refuse_step()
            if convert_all or type(action) is ndarray:
                action = to_native(action)
            if not wrapper.is_action_checked:
                wrapper._check_action(action)
            ob, reward, terminated, truncated, info = env_step(action)
            if type(reward) not in numbers or reward != reward:  # not a plain number, or NaN
                check_reward(reward)
            if type(terminated) not in flags or type(truncated) not in flags:
                check_flag(terminated, "terminated")
                check_flag(truncated, "truncated")
            write(ob)  # checked while copied, refused before any store: no half-written row
            try:
                reward_cell[0] = reward
            except (OverflowError, TypeError, ValueError):  # beyond the buffer's float: numpy's inf
                rewards[0] = reward
            terminal_cell[0] = terminated
            truncation_cell[0] = truncated
            done = wrapper.done = terminated or truncated
            if done:  # the final observation: a copy of its own, kept past the reset
                final[...] = row
                return final.copy(), reward, terminated, truncated, info
            return (row.copy() if copy_out else row), reward, terminated, truncated, info

        return step



def _shared_space(env: Any, method: str, agents: Sequence[Any]) -> Any:
    """The one space every agent has under ``env.<method>(agent)``; APIUsageError otherwise."""
    get = getattr(env, method)
    first = get(agents[0])
    for agent in agents[1:]:
        other = get(agent)
        if other is not first and other != first:
            raise APIUsageError(
                f"PettingZooPufferEnv needs one {method} shared by all agents; "
                f"{agents[0]!r} has {first!r} but {agent!r} has {other!r}"
            )
    return first


class PettingZooPufferEnv(_InjectableBuffers):
    """A PettingZoo parallel environment seen through flat spaces and per-agent buffer rows.

    Row ``i`` of every buffer belongs to ``possible_agents[i]``. Laws: after ``reset`` and
    every ``step``, an agent present in the wrapped step's observations has its emulated
    observation in its row and ``masks[i]`` True; an absent agent has a zero row and
    ``masks[i]`` False; rewards, terminals and truncations are the wrapped step's, padded
    with 0, True and False for agents missing from its dicts, in the buffers and in the
    returned dicts alike. The returned observations are ``{agent: observations[i]}`` (the
    same arrays every time). Dict actions are keyed by agent; an array action has one row
    per possible agent. Actions of agents that are no longer live are dropped. An agent
    present in a step that terminates or truncates it has that observation's row copied to
    ``final_observations[i]``.
    """

    def __init__(
        self,
        env: Any = None,
        env_creator: Callable[..., Any] | None = None,
        env_args: Sequence[Any] | None = (),
        env_kwargs: Mapping[str, Any] | None = None,
        buf: Any = None,
        seed: int | None = 0,
        *,
        to_puffer: bool = False,
    ) -> None:
        self.to_puffer = to_puffer  # PufferLib 2.0's flag, kept for parity (it reads it nowhere)
        self.env = make_object(env, env_creator, env_args, env_kwargs)
        agents = list(self.env.possible_agents)
        if not agents:
            raise APIUsageError("PettingZooPufferEnv needs an environment with at least one possible agent")
        self.env_single_observation_space = _shared_space(self.env, "observation_space", agents)
        self.env_single_action_space = _shared_space(self.env, "action_space", agents)
        owner = f"PettingZooPufferEnv({_env_name(self.env)})"
        self.single_observation_space, self.single_action_space = self._emulate(
            self.env_single_observation_space, self.env_single_action_space, owner, seed
        )
        self.num_agents = len(agents)
        self._agents = agents
        self._index = {agent: i for i, agent in enumerate(agents)}
        self._check_observation = observation_guard(self.env_single_observation_space, owner)
        self.all_done = True
        set_buffers(self, buf)
        self._bind_buffers()

    def _bind_buffers(self) -> None:
        """Derive the per-agent row views and the writer from the current buffers."""
        super()._bind_buffers()
        self.dict_obs = {agent: self.observations[i] for i, agent in enumerate(self._agents)}
        self._write_row = _row_writer(self.env_single_observation_space, self.observations)

    @property
    def agents(self) -> list[Any]:
        """The wrapped environment's live agents."""
        return self.env.agents

    @property
    def possible_agents(self) -> list[Any]:
        return self.env.possible_agents

    @property
    def done(self) -> bool:
        """Whether every agent is done (or no agent is left)."""
        return self.all_done or len(self.env.agents) == 0

    def observation_space(self, agent: Any) -> Any:
        """The emulated observation space of ``agent`` (InvalidAgentError for an unknown one)."""
        if agent not in self._index:
            raise InvalidAgentError(agent, self.possible_agents)
        return self.single_observation_space

    def action_space(self, agent: Any) -> Any:
        """The emulated action space of ``agent`` (InvalidAgentError for an unknown one)."""
        if agent not in self._index:
            raise InvalidAgentError(agent, self.possible_agents)
        return self.single_action_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        """Reset the wrapped environment; return ``({agent: row}, infos)``."""
        obs, infos = _reset(self.env, self._seeds.take(seed), options)
        self._refuse_malformed(obs, {})  # every observation, before the buffers are touched
        self.is_observation_checked = True
        self.observations[:] = 0
        self.masks[:] = False
        for agent, ob in obs.items():
            i = self._agent_row(agent)
            self._write_row(i, ob)
            self.masks[i] = True
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        self.initialized = True
        self.all_done = False
        return self.dict_obs, infos

    def _refuse_malformed(self, obs: dict[Any, Any], rewards: dict[Any, Any], *flags: dict[Any, Any]) -> None:
        """Every agent's observation, reward (a number, not NaN) and termination/truncation
        flag (a bool) checked before any row is written (so a malformed step leaves the
        buffers as they were); APIUsageError naming the env, the agent, the field and the value."""
        check_flag = flag_guard(self._owner)
        for name, values in zip(("terminations", "truncations"), flags):
            for agent, flag in values.items():
                check_flag(flag, f"{name}[{agent!r}]")
        for agent, ob in obs.items():
            self._agent_row(agent)
            try:
                self._check_observation(ob)
            except APIUsageError as error:
                raise APIUsageError(f"{error} (observation of agent {agent!r})") from None
        for agent, reward in rewards.items():
            try:
                self._check_reward(reward)
            except APIUsageError as error:
                raise APIUsageError(f"{error} (reward of agent {agent!r})") from None

    def _agent_row(self, agent: Any) -> int:
        try:
            return self._index[agent]
        except KeyError:
            raise InvalidAgentError(agent, self.possible_agents) from None

    def _native_actions(self, actions: Any) -> dict[Any, Any]:
        if isinstance(actions, np.ndarray):
            if actions.ndim == 0 or len(actions) != self.num_agents:
                length = f"length {len(actions)}" if actions.ndim else "no length (a 0-d array)"
                raise APIUsageError(
                    f"actions has {length} but the environment has "
                    f"{self.num_agents} agents (one row per possible agent)"
                )
            actions = dict(zip(self._agents, actions))
        live = set(self.env.agents)
        native = {}
        for agent, action in actions.items():
            if agent not in self._index:
                raise InvalidAgentError(agent, self.possible_agents)
            if agent in live:
                native[agent] = self._to_native(action)
        if not self.is_action_checked and native:
            for agent, action in native.items():
                _check_space(action, self.env_single_action_space, f"action of {agent!r}")
            self.is_action_checked = True
        return native

    def step(self, actions: Any) -> tuple[dict, dict, dict, dict, dict]:
        """Step the live agents with their (nativized) actions; write and pad every row."""
        if self.done:
            raise APIUsageError(
                "step() called after every agent is done; call reset()"
                if self.initialized
                else "step() called before reset()"
            )
        obs, rewards, terminations, truncations, infos = self.env.step(self._native_actions(actions))
        self._refuse_malformed(obs, rewards, terminations, truncations)  # InvalidAgentError for an unknown agent too
        for i, agent in enumerate(self._agents):
            if agent in obs:
                self._write_row(i, obs[agent])
                self.masks[i] = True
                if terminations.get(agent) or truncations.get(agent):
                    self.final_observations[i] = self.observations[i]
            else:
                self.observations[i] = 0
                self.masks[i] = False
            self.rewards[i] = rewards.get(agent, 0)
            self.terminals[i] = terminations.get(agent, True)
            self.truncations[i] = truncations.get(agent, False)
        self.all_done = all(terminations[a] or truncations.get(a, False) for a in terminations)
        padded_rewards = {a: rewards.get(a, 0) for a in self._agents}
        padded_terminals = {a: terminations.get(a, True) for a in self._agents}
        padded_truncations = {a: truncations.get(a, False) for a in self._agents}
        return self.dict_obs, padded_rewards, padded_terminals, padded_truncations, infos

