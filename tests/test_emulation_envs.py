"""spacealg.emulation's environments: GymnasiumPufferEnv, PettingZooPufferEnv, make_object.

Lockstep tests: a raw environment and a wrapped copy, reset with the same seeds and given
the same actions, must agree on rewards, terminations, truncations and (nativized)
observations for hundreds of steps.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gymnasium
import numpy as np
import pytest
from envs_for_layer import DyingAgentsEnv, ImageEnv, NestedDictEnv
from gymnasium import spaces
from hypothesis import given
from hypothesis import strategies as st

from spacealg.emulation import GymnasiumPufferEnv, PettingZooPufferEnv, make_object, nativize
from spacealg.env import APIUsageError, InvalidAgentError
from spacealg.env.buffers import make_buffers


def same(a: Any, b: Any) -> bool:
    """Deep value equality of observations (dicts, tuples, arrays, numbers)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(
            same(a[k], b[k]) for k in a
        )
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(
            same(x, y) for x, y in zip(a, b)
        )
    x, y = np.asarray(a), np.asarray(b)
    return x.shape == y.shape and bool(np.array_equal(x, y))


def _wrapped_action(raw_space: spaces.Space, wrapped: GymnasiumPufferEnv, rng: np.random.Generator) -> tuple:
    """(action for the raw env, the same action as the wrapped env receives it)."""
    if isinstance(raw_space, spaces.Discrete):
        a = int(rng.integers(raw_space.n))
        row = np.array([a], np.int32)  # a row of an int32 actions buffer
        return a, row
    if isinstance(raw_space, spaces.Box):
        a = rng.uniform(raw_space.low, raw_space.high).astype(raw_space.dtype)
        return a, a[None]  # a (1, *shape) slice of an actions buffer
    if isinstance(raw_space, spaces.Dict):  # Gymnasium sorts keys: the MultiDiscrete follows that order
        values = {k: int(rng.integers(s.n)) + int(s.start) for k, s in raw_space.spaces.items()}
        return values, np.array([values[k] for k in raw_space.spaces], np.int32)
    raise AssertionError(raw_space)


def run_lockstep(make: Any, steps: int = 300, first_seed: int = 0) -> int:
    """Drive a raw and a wrapped copy; return the number of episodes seen."""
    raw, env = make(), GymnasiumPufferEnv(make())
    rng = np.random.default_rng(first_seed)
    seed, episodes = first_seed, 0
    raw_obs, raw_info = raw.reset(seed=seed)
    obs, info = env.reset(seed=seed)
    row = obs  # the same array every time, a view of the buffer: no per-step allocation
    assert np.shares_memory(row, env.observations) and row.shape == env.observations.shape[1:]
    assert same(nativize(obs, raw.observation_space, env.obs_dtype), raw_obs)
    assert info.keys() == raw_info.keys()
    for _ in range(steps):
        native, emulated = _wrapped_action(raw.action_space, env, rng)
        raw_obs, raw_reward, raw_term, raw_trunc, _ = raw.step(native)
        obs, reward, term, trunc, _ = env.step(emulated)
        assert (obs is row) != bool(term or trunc)  # the row itself; a fresh copy at an episode's end
        assert env.observation_space.contains(obs)
        assert same(nativize(obs, raw.observation_space, env.obs_dtype), raw_obs)
        assert (reward, term, trunc) == (raw_reward, raw_term, raw_trunc)
        assert env.rewards[0] == np.float32(raw_reward)
        assert (env.terminals[0], env.truncations[0], env.masks[0]) == (raw_term, raw_trunc, True)
        assert env.done == (raw_term or raw_trunc)
        if raw_term or raw_trunc:
            episodes += 1
            seed += 1
            raw_obs, _ = raw.reset(seed=seed)
            obs, _ = env.reset(seed=seed)
            assert same(nativize(obs, raw.observation_space, env.obs_dtype), raw_obs)
    return episodes


@pytest.mark.parametrize(
    ("env_id", "min_episodes"),
    [("CartPole-v1", 5), ("Blackjack-v1", 50), ("FrozenLake-v1", 10), ("Pendulum-v1", 1)],
)
def test_lockstep_with_gymnasium_envs(env_id: str, min_episodes: int) -> None:
    assert run_lockstep(lambda: gymnasium.make(env_id), steps=400) >= min_episodes


def test_lockstep_with_nested_dict_observations_and_dict_actions() -> None:
    assert run_lockstep(lambda: NestedDictEnv(max_steps=25), steps=400) >= 10


@given(st.integers(0, 2**31 - 1), st.integers(1, 60))
def test_gymnasium_puffer_env_nativized_observations_equal_the_wrapped_envs(seed: int, steps: int) -> None:
    run_lockstep(lambda: NestedDictEnv(max_steps=10), steps=steps, first_seed=seed)


def test_emulated_spaces_and_properties() -> None:
    env = GymnasiumPufferEnv(env_creator=gymnasium.make, env_args=["Blackjack-v1"], env_kwargs={"sab": True})
    assert env.env.spec.kwargs["sab"] is True
    assert isinstance(env.observation_space, spaces.Box) and env.observation_space.shape == (3,)
    assert env.single_observation_space is env.observation_space
    assert env.single_action_space is env.action_space == spaces.Discrete(2)
    assert env.num_agents == 1 and env.is_obs_emulated and not env.is_atn_emulated
    assert env.observations.shape == (1, 3) and env.actions.shape == (1,)
    assert env.emulated.observation_dtype == env.emulated["observation_dtype"] == env.observation_space.dtype
    assert env.emulated.emulated_observation_dtype == env.obs_dtype
    assert env.render_mode is None and env.obs_struct.dtype == env.obs_dtype
    nested = GymnasiumPufferEnv(NestedDictEnv())
    assert nested.observation_space.dtype == np.uint8  # mixed leaf dtypes: bytes, as PufferLib
    assert isinstance(nested.action_space, spaces.MultiDiscrete) and nested.is_atn_emulated
    assert nested.actions.shape == (1, 2) and nested.actions.dtype == np.int32
    cartpole = GymnasiumPufferEnv(gymnasium.make("CartPole-v1"))
    assert cartpole.observation_space is cartpole.env.observation_space and not cartpole.is_obs_emulated


def test_top_level_discrete_observation_is_not_zero_width() -> None:
    env = GymnasiumPufferEnv(gymnasium.make("FrozenLake-v1"))
    assert env.observation_space.shape == (1,)
    obs, _ = env.reset(seed=3)
    assert obs[0] == env.env.reset(seed=3)[0]


def test_given_buffers_are_used() -> None:
    env = GymnasiumPufferEnv(NestedDictEnv())
    buf = make_buffers(env)
    env = GymnasiumPufferEnv(NestedDictEnv(), buf=buf)
    assert all(getattr(env, name) is array for name, array in buf.items())
    obs, _ = env.reset(seed=0)
    assert np.shares_memory(obs, buf["observations"])
    env.step(np.array([1, 2]))
    assert buf["masks"][0] and buf["rewards"][0] == np.float32(-0.01)
    namespace = SimpleNamespace(**make_buffers(env))
    env = GymnasiumPufferEnv(NestedDictEnv(), buf=namespace)
    assert env.observations is namespace.observations


def test_box_actions_from_a_buffer_row_are_reshaped() -> None:
    raw, env = gymnasium.make("Pendulum-v1"), GymnasiumPufferEnv(gymnasium.make("Pendulum-v1"))
    raw.reset(seed=1)
    env.reset(seed=1)
    env.actions[:] = 1.5
    assert env.step(env.actions)[1] == raw.step(np.array([1.5], np.float32))[1]


def test_step_before_reset_and_after_done() -> None:
    env = GymnasiumPufferEnv(gymnasium.make("CartPole-v1"))
    with pytest.raises(APIUsageError, match=r"step\(\) called before reset\(\)"):
        env.step(0)
    env.reset(seed=0)
    done = False
    while not done:
        *_, term, trunc, _ = env.step(1)
        done = term or trunc
    with pytest.raises(APIUsageError, match="after the episode ended"):
        env.step(1)
    env.reset()
    env.step(0)


def test_seeding_follows_gymnasium() -> None:
    raw = NestedDictEnv()
    env = GymnasiumPufferEnv(NestedDictEnv(), seed=7)
    code = env.obs_dtype
    first = nativize(env.reset()[0], raw.observation_space, code)  # the constructor's seed
    assert same(first, raw.reset(seed=7)[0])
    for _ in range(3):  # later resets continue the generator, as Gymnasium's do
        assert same(nativize(env.reset()[0], raw.observation_space, code), raw.reset()[0])
    assert same(nativize(env.reset(seed=3)[0], raw.observation_space, code), raw.reset(seed=3)[0])
    env.seed(11)
    assert same(nativize(env.reset()[0], raw.observation_space, code), raw.reset(seed=11)[0])
    assert same(nativize(env.reset()[0], raw.observation_space, code), raw.reset()[0])


def test_unseeded_first_reset() -> None:
    env = GymnasiumPufferEnv(ImageEnv((2, 2)), seed=None)
    env.reset()
    assert env.env.np_random_seed not in (0, None)


def test_reset_forwards_options() -> None:
    env = GymnasiumPufferEnv(ImageEnv((2, 2)))
    assert env.reset(seed=0, options={"x": 1})[1] == {"options": {"x": 1}}
    nested = GymnasiumPufferEnv(NestedDictEnv())
    obs, info = nested.reset(seed=0, options={"start": [4, 3]})
    assert np.array_equal(info["start"], [4, 3])
    assert np.allclose(nativize(obs, nested.env.observation_space, nested.obs_dtype)["position"], [1.0, 0.5])


class _BadObservationEnv(gymnasium.Env):
    observation_space = spaces.Box(0, 1, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        return np.array([5.0, 5.0], np.float32), {}

    def step(self, action: Any) -> tuple:
        return np.zeros(2, np.float32), 0.0, False, False, {}


def test_first_observation_and_action_are_checked() -> None:
    with pytest.raises(APIUsageError, match=r"_BadObservationEnv.*observation = .* is not in its declared space"):
        GymnasiumPufferEnv(_BadObservationEnv()).reset()
    env = GymnasiumPufferEnv(gymnasium.make("CartPole-v1"))
    env.reset(seed=0)
    with pytest.raises(APIUsageError, match="action 7 is not in the space Discrete"):
        env.step(7)


class _RenderingEnv(ImageEnv):
    render_mode = "rgb_array"
    metadata = {"render_modes": ["rgb_array"]}  # noqa: RUF012

    def render(self) -> np.ndarray:
        return np.zeros((2, 2, 3), np.uint8)

    def close(self) -> None:
        self.closed = True


def test_render_close_and_metadata_are_forwarded() -> None:
    env = GymnasiumPufferEnv(_RenderingEnv((2, 2)))
    assert env.render_mode == "rgb_array" and env.metadata == {"render_modes": ["rgb_array"]}
    env.reset(seed=0)
    assert env.render().shape == (2, 2, 3)
    env.close()
    assert env.env.closed


# ---------------------------------------------------------------- make_object


def test_make_object() -> None:
    instance = object()
    assert make_object(instance) is instance
    made = make_object(object_creator=dict, creator_args=[[("a", 1)]], creator_kwargs={"b": 2})
    assert made == {"a": 1, "b": 2}
    assert make_object(object_creator=list, creator_args=None, creator_kwargs=None) == []
    with pytest.raises(ValueError, match="exactly one"):
        make_object()
    with pytest.raises(ValueError, match="exactly one"):
        make_object(instance, dict)
    with pytest.raises(TypeError, match="must be an instance"):
        make_object(NestedDictEnv)
    with pytest.raises(TypeError, match="must be callable"):
        make_object(object_creator=3)


def test_gymnasium_env_constructor_errors() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        GymnasiumPufferEnv()
    with pytest.raises(TypeError, match="must be an instance"):
        GymnasiumPufferEnv(NestedDictEnv)


# ---------------------------------------------------------------- PettingZooPufferEnv


def _pz_lockstep(dict_obs: bool, seed: int, array_actions: bool) -> tuple[int, int]:
    """Lockstep episodes of a raw and a wrapped DyingAgentsEnv; (steps, agent deaths seen)."""
    raw = DyingAgentsEnv(dict_obs=dict_obs)
    env = PettingZooPufferEnv(DyingAgentsEnv(dict_obs=dict_obs))
    agents = raw.possible_agents
    space = raw.observation_space(agents[0])
    rng = np.random.default_rng(seed)
    steps = deaths = 0
    for episode in range(4):
        raw_obs, raw_infos = raw.reset(seed=seed + episode)
        obs, infos = env.reset(seed=seed + episode)
        assert infos == raw_infos and list(obs) == agents
        for i, agent in enumerate(agents):
            assert same(nativize(obs[agent], space, env.obs_dtype), raw_obs[agent])
            assert obs[agent] is env.dict_obs[agent] and np.shares_memory(obs[agent], env.observations[i])
        assert env.masks.all()
        while raw.agents:
            live = list(raw.agents)
            assert env.agents == live
            actions = {a: int(rng.integers(3)) for a in live}
            if array_actions:  # one row per possible agent; dead agents' rows are ignored
                wrapped_actions: Any = np.array([actions.get(a, 2) for a in agents], np.int32)
            else:
                wrapped_actions = dict(actions)
            raw_out = raw.step(actions)
            out = env.step(wrapped_actions)
            steps += 1
            raw_obs, raw_rewards, raw_terms, raw_truncs, raw_infos = raw_out
            obs, rewards, terms, truncs, infos = out
            assert infos == raw_infos
            for i, agent in enumerate(agents):
                if agent in raw_obs:
                    assert same(nativize(obs[agent], space, env.obs_dtype), raw_obs[agent])
                    assert env.masks[i]
                    assert rewards[agent] == raw_rewards[agent]
                    assert env.rewards[i] == np.float32(raw_rewards[agent])
                    assert terms[agent] == raw_terms[agent] == env.terminals[i]
                    assert truncs[agent] == raw_truncs[agent] == env.truncations[i]
                    deaths += bool(raw_terms[agent])
                else:  # absent: zero row, masked out, padded
                    assert not env.observations[i].any() and not env.masks[i]
                    assert rewards[agent] == 0 and env.rewards[i] == 0
                    assert terms[agent] is True and env.terminals[i]
                    assert truncs[agent] is False and not env.truncations[i]
            assert env.done == (not raw.agents)
        with pytest.raises(APIUsageError, match="after every agent is done"):
            env.step({})
    return steps, deaths


@pytest.mark.parametrize("dict_obs", [False, True])
@pytest.mark.parametrize("array_actions", [False, True])
def test_pettingzoo_lockstep_with_dying_agents(dict_obs: bool, array_actions: bool) -> None:
    steps, deaths = _pz_lockstep(dict_obs, seed=3, array_actions=array_actions)
    assert steps >= 100 and deaths >= 8


@given(st.integers(0, 2**31 - 1), st.booleans())
def test_pettingzoo_puffer_env_rows_hold_present_agents_and_pad_absent_ones(seed: int, dict_obs: bool) -> None:
    _pz_lockstep(dict_obs, seed=seed, array_actions=True)


def test_pettingzoo_env_is_a_real_pettingzoo_env() -> None:
    pettingzoo = pytest.importorskip("pettingzoo")
    from pettingzoo.test import parallel_api_test

    class PZDying(DyingAgentsEnv, pettingzoo.ParallelEnv):
        pass

    parallel_api_test(PZDying(), num_cycles=100)
    env = PettingZooPufferEnv(env_creator=PZDying, env_kwargs={"n_agents": 3, "dict_obs": True})
    obs, _ = env.reset(seed=0)
    assert len(obs) == 3 and env.observations.shape == (3, env.single_observation_space.shape[0])


def test_pettingzoo_properties_and_spaces() -> None:
    env = PettingZooPufferEnv(DyingAgentsEnv(dict_obs=True))
    assert env.num_agents == 4 and env.possible_agents == [f"agent_{i}" for i in range(4)]
    assert env.observation_space("agent_2") is env.single_observation_space
    assert env.action_space("agent_2") is env.single_action_space == spaces.Discrete(3)
    assert env.is_obs_emulated and env.observations.shape == (4, env.single_observation_space.shape[0])
    assert env.emulated.emulated_observation_dtype == env.obs_dtype
    assert env.render_mode is None and env.render() is None and env.close() is None
    assert env.done  # before reset
    assert env.obs_struct.shape == (4,)


def test_pettingzoo_errors() -> None:
    env = PettingZooPufferEnv(DyingAgentsEnv())
    with pytest.raises(InvalidAgentError, match="'nobody'"):
        env.observation_space("nobody")
    with pytest.raises(InvalidAgentError, match="'nobody'"):
        env.action_space("nobody")
    with pytest.raises(APIUsageError, match=r"step\(\) called before reset\(\)"):
        env.step({"agent_0": 1})
    env.reset(seed=0)
    with pytest.raises(APIUsageError, match="actions has length 3 but the environment has 4 agents"):
        env.step(np.zeros(3, np.int32))
    with pytest.raises(InvalidAgentError, match=r"'nobody'.*agent_0"):
        env.step({"agent_0": 1, "nobody": 1})
    with pytest.raises(APIUsageError, match="action of 'agent_0' 5 is not in the space"):
        env.step({"agent_0": 5})


def test_pettingzoo_agents_must_share_spaces() -> None:
    class Mixed(DyingAgentsEnv):
        def observation_space(self, agent: str) -> spaces.Space:
            return spaces.Box(0, 1, (3 if agent != "agent_3" else 4,), np.float32)

    with pytest.raises(APIUsageError, match="one observation_space shared by all agents"):
        PettingZooPufferEnv(Mixed())


def test_pettingzoo_given_buffers_are_used() -> None:
    buf = make_buffers(PettingZooPufferEnv(DyingAgentsEnv(dict_obs=True)))
    env = PettingZooPufferEnv(DyingAgentsEnv(dict_obs=True), buf=buf)
    assert all(getattr(env, name) is array for name, array in buf.items())
    obs, _ = env.reset(seed=1)
    assert np.shares_memory(obs["agent_0"], buf["observations"])


def test_pettingzoo_seeding() -> None:
    raw = DyingAgentsEnv()
    env = PettingZooPufferEnv(DyingAgentsEnv(), seed=5)
    obs, _ = env.reset()
    assert np.array_equal(obs["agent_1"], raw.reset(seed=5)[0]["agent_1"])
    obs, _ = env.reset(seed=9, options={"ignored": True})
    assert np.array_equal(obs["agent_1"], raw.reset(seed=9)[0]["agent_1"])


def test_a_subclass_step_override_is_kept_and_super_step_works() -> None:
    class Counting(GymnasiumPufferEnv):
        calls = 0

        def step(self, action: Any) -> tuple:
            Counting.calls += 1
            return super().step(action)

    env = Counting(gymnasium.make("CartPole-v1"))
    env.reset(seed=0)
    raw = gymnasium.make("CartPole-v1")
    raw.reset(seed=0)
    for a in [0, 1, 1, 0]:
        obs, *_ = env.step(a)
        assert np.array_equal(obs, raw.step(a)[0])
    assert Counting.calls == 4


def _pufferlib2_buffers(n_rows: int, env: Any) -> SimpleNamespace:
    """Buffers for ``n_rows`` agents laid out as PufferLib 2.0's vectorisation allocates them."""
    space = env.single_observation_space
    return SimpleNamespace(
        observations=np.zeros((n_rows, *space.shape), space.dtype),
        rewards=np.zeros(n_rows, np.float32),
        terminals=np.zeros(n_rows, bool),
        truncations=np.zeros(n_rows, bool),
        masks=np.ones(n_rows, bool),
    )


@given(st.integers(0, 2), st.integers(0, 2**31 - 1), st.lists(st.integers(0, 3), min_size=1, max_size=9))
def test_injectable_buffers_are_written_after_assignment(row: int, seed: int, moves: list[int]) -> None:
    env = GymnasiumPufferEnv(NestedDictEnv(max_steps=100))
    shared = _pufferlib2_buffers(3, env)
    actions = env.actions
    env.buf = SimpleNamespace(**{k: v[row : row + 1] for k, v in vars(shared).items()})  # as Serial does
    assert env.actions is actions
    assert all(np.shares_memory(getattr(env, k), v) for k, v in vars(shared).items())
    raw = NestedDictEnv(max_steps=100)
    obs, _ = env.reset(seed=seed)
    assert np.shares_memory(obs, shared.observations[row])
    stored = shared.observations[row]
    assert same(nativize(stored, raw.observation_space, env.obs_dtype), raw.reset(seed=seed)[0])
    others = [i for i in range(3) if i != row]
    for move in moves:
        _, _, term, *_ = env.step(np.array([1, move]))
        raw_obs, raw_reward, *_ = raw.step({"boost": 1, "move": move})
        assert same(nativize(shared.observations[row], raw.observation_space, env.obs_dtype), raw_obs)
        assert shared.rewards[row] == np.float32(raw_reward) and shared.terminals[row] == term
        assert not shared.observations[others].any() and not shared.rewards[others].any()
        if term:
            break
    assert env.buf.observations is env.observations and env.buf["actions"] is actions
    env.buf = None  # PufferLib 2.0's own constructor does this: no change
    assert env.actions is actions


def test_pettingzoo_buffers_injected_after_construction() -> None:
    env = PettingZooPufferEnv(DyingAgentsEnv(dict_obs=True))
    shared = _pufferlib2_buffers(6, env)
    env.buf = {k: v[2:6] for k, v in vars(shared).items()}
    obs, _ = env.reset(seed=0)
    assert all(np.shares_memory(obs[a], shared.observations[2:6]) for a in obs)
    assert not shared.observations[:2].any() and shared.observations[2:].any()
    with pytest.raises(APIUsageError, match="shape"):
        env.buf = {"rewards": np.zeros(3, np.float32)}


# ---------------------------------------------------------------- wrong-size actions, allocation


def test_action_arrays_of_the_wrong_size_raise_api_usage_error() -> None:
    cases = [
        (gymnasium.make("CartPole-v1"), [np.array([1, 0]), np.array([], np.int32)], np.array([1], np.int32)),
        (gymnasium.make("Pendulum-v1"), [np.array([1.0, 0.0], np.float32)], np.array([[0.5]], np.float32)),
        (NestedDictEnv(), [np.array([1, 2, 3]), np.array([1])], np.array([[1, 0]])),
    ]
    for raw, wrong, right in cases:
        env = GymnasiumPufferEnv(raw)
        env.reset(seed=0)
        for action in wrong:
            with pytest.raises(APIUsageError, match=f"has {action.size} entries"):
                env.step(action)
        env.step(right)  # a buffer row of the right size (any shape) is fine
    env = PettingZooPufferEnv(DyingAgentsEnv())
    env.reset(seed=0)
    with pytest.raises(APIUsageError, match="no length"):
        env.step(np.array(1, np.int32))
    with pytest.raises(APIUsageError, match="has 2 entries"):
        env.step({"agent_0": np.array([1, 1])})


class _ConstantImageEnv(gymnasium.Env):
    """Returns one preallocated 64 KiB observation every step: it allocates nothing itself."""

    def __init__(self, nested: bool) -> None:
        image = spaces.Box(0, 255, (128, 128, 4), np.uint8)
        if nested:
            self.observation_space = spaces.Dict(image=image, aux=spaces.Dict(k=spaces.Discrete(3)))
            self.ob: Any = {"image": np.zeros((128, 128, 4), np.uint8), "aux": {"k": 1}}
            self.action_space = spaces.Dict(a=spaces.Discrete(3))
        else:
            self.observation_space, self.action_space = image, spaces.Discrete(3)
            self.ob = np.zeros((128, 128, 4), np.uint8)
        self.result = (self.ob, 0.0, False, False, {})

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        return self.ob, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        return self.result


def _peak_bytes(step: Any, steps: int = 50) -> int:
    import tracemalloc

    step()  # warm the caches
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(steps):
            step()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("nested", [False, True])
def test_step_writes_into_the_buffers_without_allocating_observations(nested: bool) -> None:
    env = GymnasiumPufferEnv(_ConstantImageEnv(nested))
    obs, _ = env.reset(seed=0)
    action = env.actions[0] if nested else 1
    assert _peak_bytes(lambda: env.step(action)) < env.observations.nbytes // 16
    assert env.step(action)[0] is obs and np.shares_memory(obs, env.observations)


def test_pettingzoo_step_writes_into_the_buffers_without_allocating_observations() -> None:
    class Constant:
        def __init__(self) -> None:
            self.possible_agents = self.agents = ["a", "b", "c"]
            self.metadata: dict = {}
            self.space = spaces.Dict(image=spaces.Box(0, 255, (128, 128, 4), np.uint8), k=spaces.Discrete(3))
            ob = {"image": np.ones((128, 128, 4), np.uint8), "k": 2}
            self.result = ({"a": ob, "b": ob}, {"a": 1.0, "b": 0.0}, {"a": False, "b": False},
                           {"a": False, "b": False}, {})

        def observation_space(self, agent: str) -> spaces.Space:
            return self.space

        def action_space(self, agent: str) -> spaces.Space:
            return spaces.Discrete(3)

        def reset(self, seed: int | None = None, options: Any = None) -> tuple[dict, dict]:
            return self.result[0], {}

        def step(self, actions: Any) -> tuple:
            return self.result

    env = PettingZooPufferEnv(Constant())
    env.reset(seed=0)
    assert _peak_bytes(lambda: env.step(env.actions)) < env.observations[0].nbytes // 8
    assert env.masks.tolist() == [True, True, False] and not env.observations[2].any()
    assert env.terminals.tolist() == [False, False, True]
