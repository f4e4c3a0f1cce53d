"""Toy JAX environments for tests/test_check_jax_env.py: a sound one per protocol and one
buggy variant per law of ``check_jax_env``, each defect reachable by a key or an action
sequence (``bug`` names it).

``Walk`` (gymnax style, spacealg spaces): a walker on the integers -10..10; actions 0, 1, 2
move left, stay, right (with probability 0.1 a random move instead, drawn from the step's
key); the observation is ``[x / 10, t / 20]`` in ``Box(-1, 1, (2,), float32)``; the episode
ends when ``|x| == 10`` or after 20 steps (``params.max_steps_in_episode``); ``step`` resets
inside, as gymnax does.

``Line`` (Jumanji style, Jumanji specs): the same walker with a legal-action mask (no move
off the line), ``TimeStep``s and ``StepType``; ends at ``x == 10``.

``Pair`` (JaxMARL style, spacealg spaces per agent): two walkers ``a0``, ``a1`` on -5..5,
dicts of observations, actions, rewards and ``dones`` (``"__all__"`` after 12 steps or when
both reach 5), ``step`` resetting inside, ``get_avail_actions`` as uint8 masks (as SMAX's).

``Track`` (XLand-MiniGrid style): ``reset(params, key) -> TimeStep``, ``step(params,
timestep, action)``, ``observation_shape(params)``, ``num_actions(params)``; a walker on
0..8 whose uint8 observation is a one-hot row; LAST at 8 (discount 0) or after
``params.max_steps`` steps.

``Slide`` (Brax style) and ``Stiff`` (Brax style, amplifying rounding): see their
docstrings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical


@jax.tree_util.register_dataclass
@dataclass
class WalkState:
    x: jax.Array
    t: jax.Array


@dataclass(frozen=True)
class WalkParams:
    max_steps_in_episode: int = 20


class Walk:
    """The sound gymnax-style walker (see the module docstring); ``bug`` selects a defect."""

    bug = ""

    def __init__(self) -> None:
        self.calls = 0

    @property
    def default_params(self) -> WalkParams:
        return WalkParams()

    def observation_space(self, params: WalkParams) -> Box:
        if self.bug == "final-in-info":  # too narrow: x leaves it at |x| > 5, t after step 10
            return Box(-0.5, 0.5, shape=(2,), dtype=np.float32)
        return Box(-1.0, 1.0, shape=(2,), dtype=np.float32)

    def action_space(self, params: WalkParams) -> Categorical:
        return Categorical(3, dtype=np.int32)

    def _obs(self, state: WalkState) -> jax.Array:
        scale = 5.0 if self.bug == "observation-in-space" else 10.0
        obs = jnp.stack([state.x / scale, state.t / 20.0]).astype(jnp.float32)
        if self.bug == "declared-dtypes":
            return obs.astype(jnp.float16)
        if self.bug == "purity":
            self.calls += 1  # state outside the state pytree
            return obs.at[1].set(self.calls % 7 / 10)
        if self.bug == "global-rng":
            return obs.at[1].set(np.float32(np.random.uniform(0, 1)))
        if self.bug == "batching":
            shift = jax.pure_callback(
                lambda x: (x - x.mean()).astype(np.float32),
                jax.ShapeDtypeStruct((), jnp.float32),
                obs[0],
                vmap_method="expand_dims",
            )
            return obs.at[0].set(jnp.clip(obs[0] + shift, -1, 1))
        return obs

    def reset_env(self, key: jax.Array, params: WalkParams) -> tuple[jax.Array, WalkState]:
        x = jax.random.randint(key, (), -3, 4, dtype=jnp.int32)
        t = jnp.asarray(0) if self.bug == "compile-once" else jnp.zeros((), jnp.int32)
        state = WalkState(x, t)
        return self._obs(state), state

    def reset(self, key: jax.Array, params: WalkParams | None = None) -> tuple[jax.Array, WalkState]:
        return self.reset_env(key, params or self.default_params)

    def step(self, key: jax.Array, state: WalkState, action: Any, params: WalkParams | None = None) -> Any:
        params = params or self.default_params
        k_noise, k_move, k_reset = jax.random.split(key, 3)
        move = jnp.where(jax.random.uniform(k_noise) < 0.1, jax.random.randint(k_move, (), 0, 3), action) - 1
        x = jnp.clip(state.x + move.astype(jnp.int32), -10, 10)
        t = state.t + jnp.int32(1)
        if self.bug == "in-place" and not isinstance(state.t, jax.core.Tracer):
            state.t = t  # run eagerly, it changes the state it was given (as navix's State.set_player)
        stepped = WalkState(x, t)
        limit = 10**6 if self.bug == "max-episode-steps" else params.max_steps_in_episode
        done = (jnp.abs(x) == 10) | (t >= limit)
        reward = -jnp.abs(x).astype(jnp.float32) / 10
        if self.bug == "finite-values":
            reward = jnp.where(x >= 6, jnp.inf, reward)
        if self.bug == "reward-in-space":
            reward = jnp.stack([reward, reward])
        if self.bug == "jit-eager" and isinstance(x, jax.core.Tracer):
            reward = reward + 1.0
        if self.bug == "no-exception":
            reward = reward + jnp.zeros(3) @ jnp.zeros(4)
        obs_step = self._obs(stepped)
        obs_reset, fresh = self.reset_env(k_reset, params)
        state = jax.tree.map(lambda a, b: jax.lax.select(done, a, b), fresh, stepped)
        obs = jnp.where(done, obs_reset, obs_step)
        if self.bug == "final-in-info":  # gymnax 1.x: the step's own observation in info, at every step
            return obs, state, reward, done, jnp.zeros_like(done), {"final_observation": obs_step}
        if self.bug == "info-dict":  # the info's values without their keys
            return obs, state, reward, done, (jnp.zeros_like(done),)
        return obs, state, reward, done, {}


def make_walk(bug: str = "") -> Walk:
    """A ``Walk`` with the defect ``bug`` ("" for the sound one)."""
    env = Walk()
    env.bug = bug
    return env


class Undeclared(Walk):
    """An observation space no adapter converts."""

    def observation_space(self, params: WalkParams) -> Any:
        return object()


# -- Jumanji style ---------------------------------------------------------------------------


class LineObservation(NamedTuple):
    position: jax.Array
    action_mask: jax.Array


@jax.tree_util.register_dataclass
@dataclass
class LineState:
    x: jax.Array
    key: jax.Array


class Line:
    """The sound Jumanji-style walker; ``bug`` selects a defect."""

    bug = ""

    @property
    def observation_spec(self) -> Any:
        import jumanji.specs as js

        return js.Spec(
            LineObservation,
            "ObservationSpec",
            position=js.BoundedArray((), jnp.int32, -10, 10, "position"),
            action_mask=js.BoundedArray((3,), bool, False, True, "action_mask"),
        )

    @property
    def action_spec(self) -> Any:
        import jumanji.specs as js

        return js.DiscreteArray(3, jnp.int32, "action")

    @property
    def reward_spec(self) -> Any:
        import jumanji.specs as js

        return js.Array((), jnp.float32, "reward")

    @property
    def discount_spec(self) -> Any:
        import jumanji.specs as js

        return js.BoundedArray((), jnp.float32, 0.0, 1.0, "discount")

    def _obs(self, x: jax.Array) -> LineObservation:
        mask = jnp.stack([x > -10, jnp.bool_(True), x < 10])
        if self.bug == "action-mask":
            mask = mask & (x != 5)
        return LineObservation(x, mask)

    def reset(self, key: jax.Array) -> Any:
        from jumanji.types import restart

        x = jax.random.randint(key, (), -3, 4, dtype=jnp.int32)
        timestep = restart(self._obs(x))
        if self.bug == "python-scalar":  # run eagerly, a Python float, as SearchAndRescue's `step: int = 0`
            timestep = timestep.replace(reward=0.0)
        return LineState(x, key), timestep

    def step(self, state: LineState, action: Any) -> Any:
        from jumanji.types import termination, transition

        x = state.x + action.astype(jnp.int32) - 1
        if self.bug != "illegal-action":
            x = jnp.clip(x, -10, 10)
        reward = jnp.float32(1.0) * (x == 10)
        if self.bug == "python-scalar" and isinstance(x, jax.core.Tracer):
            reward = reward + jnp.float32(1e-7)  # compiled code rounding differently: within tolerance
        obs = self._obs(x)
        ended = x >= 10
        discount = jnp.float32(2.0) if self.bug == "discount-in-space" else jnp.float32(1.0)
        mid = transition(reward, obs, discount)
        last = termination(reward, obs)
        timestep = jax.tree.map(lambda a, b: jax.lax.select(ended, a, b), last, mid)
        if self.bug == "episode-end":
            timestep = timestep.replace(step_type=jnp.where(x == 7, jnp.int8(0), timestep.step_type))
        return LineState(x, state.key), timestep


def make_line(bug: str = "") -> Line:
    """A ``Line`` with the defect ``bug`` ("" for the sound one)."""
    env = Line()
    env.bug = bug
    return env


def walk_observation_bug() -> Walk:
    """``Walk`` whose observation leaves its Box after six moves the same way."""
    return make_walk("observation-in-space")


def walk_endless_bug() -> Walk:
    """``Walk`` that still declares ``max_steps_in_episode = 20`` but never ends an episode by
    it (a limit of 10**6)."""
    return make_walk("max-episode-steps")


def walk_info_bug() -> Walk:
    """``Walk`` whose step returns its info as a tuple of values, not a dict (every step)."""
    return make_walk("info-dict")


def walk_final_in_info_bug() -> Walk:
    """``Walk`` in gymnax 1.x's shape (``info["final_observation"]`` at every step) whose
    observation leaves a too narrow Box (``Box(-0.5, 0.5)``) in the middle of an episode."""
    return make_walk("final-in-info")


def line_mask_bug() -> Line:
    """``Line`` whose mask allows nothing at ``x == 5``."""
    return make_line("action-mask")


def walk_batching_bug() -> Walk:
    """``Walk`` whose observation depends on the other rows of a vmapped batch."""
    return make_walk("batching")


# -- Brax style ------------------------------------------------------------------------------


@jax.tree_util.register_dataclass
@dataclass
class BraxState:
    obs: jax.Array
    reward: jax.Array
    done: jax.Array
    t: jax.Array


class Slide:
    """A Brax-style toy: a point pushed by a continuous action in [-1, 1]^2, ``done`` (a float,
    as Brax's) after 15 steps; no randomness in step."""

    action_size = 2
    observation_size = 2

    def reset(self, rng: jax.Array) -> BraxState:
        obs = jax.random.uniform(rng, (2,), jnp.float32, -1, 1)
        return BraxState(obs, jnp.zeros((), jnp.float32), jnp.zeros((), jnp.float32), jnp.zeros((), jnp.int32))

    def step(self, state: BraxState, action: jax.Array) -> BraxState:
        obs = state.obs + 0.1 * action
        t = state.t + 1
        return BraxState(obs, -jnp.sum(obs**2), (t >= 15).astype(jnp.float32), t)


@jax.tree_util.register_dataclass
@dataclass
class StiffState:
    x: jax.Array
    obs: jax.Array
    reward: jax.Array
    done: jax.Array


class Stiff:
    """A Brax-style toy whose step amplifies rounding, as a physics engine's substeps do: the
    state ``x`` lies within 1e-3 of 1 and the observation is ``(x - 1) * 1e3``, so one
    rounding unit of ``x`` (1.2e-7) moves the observation by 1.2e-4, past a fixed tolerance.
    Under ``vmap`` (a ``custom_vmap`` rule) ``x`` is moved by ``nudge`` rounding units first,
    as batched code rounds differently: ``nudge=1`` is rounding, a large one is a batching
    defect. Reset does not amplify."""

    action_size = 1
    observation_size = 1

    def __init__(self, nudge: int = 1) -> None:
        self.nudge = nudge

        @jax.custom_batching.custom_vmap
        def centred(x: jax.Array) -> jax.Array:
            return (x - 1.0) * 1e3

        @centred.def_vmap
        def _batched(axis_size: int, in_batched: list[bool], x: jax.Array) -> tuple[jax.Array, bool]:
            moved = x * (1 + self.nudge * jnp.finfo(jnp.float32).eps)
            return (moved - 1.0) * 1e3, in_batched[0]

        self._centred = centred

    def reset(self, rng: jax.Array) -> StiffState:
        x = 1.0 + jax.random.uniform(rng, (1,), jnp.float32, -1e-3, 1e-3)
        zero = jnp.zeros((), jnp.float32)
        return StiffState(x, jnp.zeros((1,), jnp.float32), zero, zero)

    def step(self, state: StiffState, action: jax.Array) -> StiffState:
        x = jnp.clip(state.x + 1e-5 * action, 1.0 - 1e-3, 1.0 + 1e-3)
        obs = self._centred(x)
        return StiffState(x, obs, -jnp.sum(obs**2), jnp.zeros((), jnp.float32))


def walk_compile_bug() -> Walk:
    """``Walk`` whose reset builds a weakly typed step counter."""
    return make_walk("compile-once")


# -- JaxMARL style ---------------------------------------------------------------------------


@jax.tree_util.register_dataclass
@dataclass
class PairState:
    x: jax.Array  # (2,) positions
    t: jax.Array


class Pair:
    """The sound JaxMARL-style pair of walkers (see the module docstring); ``bug`` selects a
    defect."""

    bug = ""
    agents: ClassVar[list[str]] = ["a0", "a1"]
    num_agents = 2

    def observation_space(self, agent: str) -> Box:
        return Box(-1.0, 1.0, shape=(2,), dtype=np.float32)

    def action_space(self, agent: str) -> Categorical:
        return Categorical(3, dtype=np.int32)

    def _obs(self, state: PairState) -> dict[str, jax.Array]:
        scale = 2.5 if self.bug == "observation-in-space" else 5.0
        return {a: jnp.stack([state.x[i] / scale, state.t / 12.0]).astype(jnp.float32)
                for i, a in enumerate(self.agents)}

    def reset(self, key: jax.Array) -> tuple[dict[str, jax.Array], PairState]:
        state = PairState(jax.random.randint(key, (2,), -2, 3, dtype=jnp.int32), jnp.zeros((), jnp.int32))
        return self._obs(state), state

    def get_avail_actions(self, state: PairState) -> dict[str, jax.Array]:
        masks = {}
        for i, a in enumerate(self.agents):
            mask = jnp.stack([state.x[i] > -5, jnp.bool_(True), state.x[i] < 5])
            if self.bug == "action-mask":
                mask = mask & (state.x[0] != 4) & (state.x[1] != 4)
            masks[a] = mask.astype(jnp.uint8)
        return masks

    def step_env(self, key: jax.Array, state: PairState, actions: dict[str, jax.Array]) -> Any:
        move = jnp.stack([actions[a] for a in self.agents]).astype(jnp.int32) - 1
        x = jnp.clip(state.x + move, -5, 5)
        stepped = PairState(x, state.t + jnp.int32(1))
        done = (stepped.t >= 12) | jnp.all(x == 5)
        rewards = {a: (x[i] == 5).astype(jnp.float32) for i, a in enumerate(self.agents)}
        if self.bug == "reward-in-space":
            rewards["a1"] = jnp.stack([rewards["a1"], rewards["a1"]])
        dones = {a: done for a in self.agents} | {"__all__": done}
        return self._obs(stepped), stepped, rewards, dones, {}

    def step(self, key: jax.Array, state: PairState, actions: dict[str, jax.Array]) -> Any:
        key, key_reset = jax.random.split(key)
        obs, stepped, rewards, dones, infos = self.step_env(key, state, actions)
        obs_reset, fresh = self.reset(key_reset)
        state = jax.tree.map(lambda a, b: jax.lax.select(dones["__all__"], a, b), fresh, stepped)
        obs = jax.tree.map(lambda a, b: jax.lax.select(dones["__all__"], a, b), obs_reset, obs)
        return obs, state, rewards, dones, infos


def make_pair(bug: str = "") -> Pair:
    """A ``Pair`` with the defect ``bug`` ("" for the sound one)."""
    env = Pair()
    env.bug = bug
    return env


class IndexedPair:
    """JaxMARL's tuple variant (its ``storm_2p``): ``Pair`` with the integer agents 0 and 1,
    observations, actions and rewards as tuples indexed by agent, ``dones`` only
    ``"__all__"``. ``step`` unpacks its actions (``a0, a1 = actions``), so a dict of actions
    would reach it as its keys."""

    agents: ClassVar[list[int]] = [0, 1]
    num_agents = 2

    def __init__(self) -> None:
        self.inner = make_pair()

    def observation_space(self, agent: int) -> Box:
        return self.inner.observation_space("a0")

    def action_space(self, agent: int) -> Categorical:
        return self.inner.action_space("a0")

    def reset(self, key: jax.Array) -> tuple[tuple[jax.Array, jax.Array], PairState]:
        obs, state = self.inner.reset(key)
        return (obs["a0"], obs["a1"]), state

    def _wrap(self, result: Any) -> Any:
        obs, state, rewards, dones, infos = result
        return (obs["a0"], obs["a1"]), state, (rewards["a0"], rewards["a1"]), {"__all__": dones["__all__"]}, infos

    def step_env(self, key: jax.Array, state: PairState, actions: tuple[jax.Array, jax.Array]) -> Any:
        a0, a1 = actions
        return self._wrap(self.inner.step_env(key, state, {"a0": a0, "a1": a1}))

    def step(self, key: jax.Array, state: PairState, actions: tuple[jax.Array, jax.Array]) -> Any:
        a0, a1 = actions
        return self._wrap(self.inner.step(key, state, {"a0": a0, "a1": a1}))


# -- XLand-MiniGrid style --------------------------------------------------------------------


@dataclass(frozen=True)
class TrackParams:
    max_steps: int = 16


@jax.tree_util.register_dataclass
@dataclass
class TrackStep:
    state: jax.Array  # the position
    step_type: jax.Array
    reward: jax.Array
    discount: jax.Array
    observation: jax.Array
    t: jax.Array


class Track:
    """The sound XLand-MiniGrid-style walker (see the module docstring); ``bug`` selects a
    defect."""

    bug = ""

    def default_params(self) -> TrackParams:
        return TrackParams()

    def num_actions(self, params: TrackParams) -> int:
        return 3

    def observation_shape(self, params: TrackParams) -> tuple[int, ...]:
        return (9,)

    def _obs(self, x: jax.Array) -> jax.Array:
        width = 8 if self.bug == "observation-in-space" else 9
        return jax.nn.one_hot(x, 9, dtype=jnp.uint8)[:width]

    def reset(self, params: TrackParams, key: jax.Array) -> TrackStep:
        x = jax.random.randint(key, (), 0, 4, dtype=jnp.int32)
        zero = jnp.zeros((), jnp.float32)
        return TrackStep(x, jnp.uint8(0), zero, jnp.ones((), jnp.float32), self._obs(x), jnp.zeros((), jnp.int32))

    def step(self, params: TrackParams, timestep: TrackStep, action: jax.Array) -> TrackStep:
        x = jnp.clip(timestep.state + action.astype(jnp.int32) - 1, 0, 8)
        t = timestep.t + 1
        goal = x == 8
        last = goal | (t >= params.max_steps)
        step_type = jnp.where(last, jnp.uint8(2), jnp.uint8(1))
        if self.bug == "episode-end":
            step_type = jnp.where(x == 6, jnp.uint8(0), step_type)
        discount = jnp.where(goal, jnp.float32(0), jnp.float32(2.0 if self.bug == "discount-in-space" else 1.0))
        return TrackStep(x, step_type, goal.astype(jnp.float32), discount, self._obs(x), t)


def make_track(bug: str = "") -> tuple[Track, TrackParams]:
    """A ``Track`` with the defect ``bug`` ("" for the sound one) and its params, as
    ``xminigrid.make`` returns them."""
    env = Track()
    env.bug = bug
    return env, env.default_params()
