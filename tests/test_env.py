"""spacealg.env: PufferEnv, set_buffers and the API-usage errors."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gymnasium
import numpy as np
import pytest
from envs_for_layer import Walkers
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from hypothesis import given
from hypothesis import strategies as st

from spacealg.env import APIUsageError, InvalidAgentError, PufferEnv, set_buffers
from spacealg.env.buffers import BUFFER_NAMES, make_buffers

_BOX_DTYPES = [np.float32, np.float64, np.uint8, np.int16, np.int64]


@st.composite
def _boxes(draw: Any) -> spaces.Box:
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    dtype = draw(st.sampled_from(_BOX_DTYPES))
    if np.issubdtype(dtype, np.integer):
        return spaces.Box(0, 5, shape, dtype)
    return spaces.Box(-1.0, 1.0, shape, dtype)


_action_spaces = st.one_of(
    st.builds(spaces.Discrete, st.integers(1, 9), start=st.integers(-3, 3)),
    st.builds(spaces.MultiDiscrete, st.lists(st.integers(1, 9), min_size=1, max_size=3)),
    _boxes(),
)


def _native(obs: Any, atn: Any, n: Any, buf: Any = None, **extra: Any) -> PufferEnv:
    class Native(PufferEnv):
        def __init__(self) -> None:
            if obs is not None:
                self.single_observation_space = obs
            if atn is not None:
                self.single_action_space = atn
            if n is not None:
                self.num_agents = n
            for k, v in extra.items():
                setattr(self, k, v)
            super().__init__(buf)

    return Native()


@given(_boxes(), _action_spaces, st.integers(1, 5))
def test_puffer_env_buffers_match_joint_spaces(obs: spaces.Box, atn: spaces.Space, n: int) -> None:
    env = _native(obs, atn, n)
    assert env.observation_space == batch_space(obs, n)
    assert env.action_space == batch_space(atn, n)
    assert env.observations.shape == env.observation_space.shape == (n, *obs.shape)
    assert env.observations.dtype == obs.dtype
    assert env.actions.shape == env.action_space.shape
    expected = atn.dtype if isinstance(atn, spaces.Box) else np.int32
    assert env.actions.dtype == expected
    for name, dtype in [("rewards", np.float32), ("terminals", bool), ("truncations", bool), ("masks", bool)]:
        array = getattr(env, name)
        assert array.shape == (n,) and array.dtype == dtype
    assert env.masks.all() and not env.terminals.any() and not env.rewards.any()
    assert np.array_equal(env.agent_ids, np.arange(n))


@given(_boxes(), _action_spaces, st.integers(1, 4))
def test_set_buffers_uses_exactly_the_given_arrays(obs: spaces.Box, atn: spaces.Space, n: int) -> None:
    donor = _native(obs, atn, n)
    buf = {name: getattr(donor, name) for name in BUFFER_NAMES}
    env = _native(obs, atn, n, buf=buf)
    for name in BUFFER_NAMES:
        assert getattr(env, name) is buf[name]
    namespace = SimpleNamespace(**buf)
    env = _native(obs, atn, n, buf=namespace)
    assert all(getattr(env, name) is buf[name] for name in BUFFER_NAMES)


def test_set_buffers_on_a_plain_object() -> None:
    holder = SimpleNamespace(
        single_observation_space=spaces.Box(0, 1, (2, 2), np.uint8),
        single_action_space=spaces.MultiDiscrete([2, 3]),
        num_agents=3,
    )
    set_buffers(holder)
    assert holder.observations.shape == (3, 2, 2) and holder.actions.shape == (3, 2)
    fresh = make_buffers(holder)
    set_buffers(holder, fresh)
    assert holder.actions is fresh["actions"]


def test_walkers_write_into_given_buffers() -> None:
    buf = make_buffers(Walkers(3))
    env = Walkers(3, buf=buf)
    obs, infos = env.reset(seed=1)
    assert obs is buf["observations"] and infos == []
    before = buf["observations"].copy()
    env.step(np.array([2, 2, 2]))
    assert np.array_equal(buf["actions"], [2, 2, 2])
    assert not np.array_equal(before, buf["observations"])


def test_walkers_are_deterministic_and_vectorised() -> None:
    a, b = Walkers(5), Walkers(5)
    a.reset(seed=3)
    b.reset(seed=3)
    rng = np.random.default_rng(0)
    fell = 0
    for _ in range(300):
        actions = rng.integers(0, 3, 5)
        ra, rb = a.step(actions), b.step(actions)
        for x, y in zip(ra[:4], rb[:4]):
            assert np.array_equal(x, y)
        fell += int(a.terminals.sum())
        assert a.observation_space.contains(a.observations)
    assert fell > 0


def test_native_properties() -> None:
    env = Walkers(4)
    assert env.emulated is False and env.done is False
    assert env.driver_env is env and env.agents_per_batch == env.agent_per_batch == 4


def test_async_reset_send_recv() -> None:
    env = Walkers(2)
    env.async_reset(seed=0)
    obs, rewards, terminals, truncations, infos, agent_ids, masks = env.recv()
    assert obs is env.observations and rewards is env.rewards and terminals is env.terminals
    assert truncations is env.truncations and masks is env.masks and infos == []
    assert np.array_equal(agent_ids, [0, 1])
    for _ in range(40):
        env.send(np.array([2, 0]))
        *_, infos, _, _ = env.recv()
        assert isinstance(infos, list)
    assert env.actions.tolist() == [2, 0]


def test_infos_must_be_lists() -> None:
    class DictInfos(Walkers):
        def reset(self, seed: int | None = None) -> tuple[np.ndarray, Any]:
            super().reset(seed)
            return self.observations, {}

        def step(self, actions: np.ndarray) -> tuple[Any, ...]:
            return (*super().step(actions)[:4], {})

    env = DictInfos(2)
    with pytest.raises(APIUsageError, match=r"reset must return infos as a list of dicts"):
        env.async_reset(0)
    with pytest.raises(APIUsageError, match=r"step must return infos as a list of dicts"):
        env.send(np.array([0, 0]))


def test_unimplemented_methods() -> None:
    env = _native(spaces.Box(0, 1, (1,)), spaces.Discrete(2), 1)
    for call in (env.reset, lambda: env.step(env.actions), env.close):
        with pytest.raises(NotImplementedError):
            call()


_OBS, _ATN = spaces.Box(0, 1, (3,), np.float32), spaces.Discrete(2)


@pytest.mark.parametrize("missing", ["single_observation_space", "single_action_space", "num_agents"])
def test_missing_attributes(missing: str) -> None:
    args = {"single_observation_space": _OBS, "single_action_space": _ATN, "num_agents": 2}
    args[missing] = None
    with pytest.raises(APIUsageError, match=rf"no attribute '{missing}'.*before calling super\(\).__init__"):
        _native(args["single_observation_space"], args["single_action_space"], args["num_agents"])


@pytest.mark.parametrize("n", [0, -1, 1.5, True, "2", np.float32(2)])
def test_num_agents_must_be_a_positive_int(n: Any) -> None:
    with pytest.raises(APIUsageError, match="num_agents must be an int >= 1"):
        _native(_OBS, _ATN, n)


def test_num_agents_numpy_int_is_fine() -> None:
    assert _native(_OBS, _ATN, np.int64(3)).observations.shape == (3, 3)


@pytest.mark.parametrize("joint", ["observation_space", "action_space"])
def test_spaces_already_defined(joint: str) -> None:
    with pytest.raises(APIUsageError, match=f"already defines {joint}; a PufferEnv defines single_{joint}"):
        _native(_OBS, _ATN, 2, **{joint: _OBS})


@pytest.mark.parametrize(
    "obs", [spaces.Discrete(3), spaces.Dict({"a": _OBS}), spaces.MultiDiscrete([2, 2]), spaces.Tuple((_OBS,))]
)
def test_observation_space_must_be_a_box(obs: spaces.Space) -> None:
    with pytest.raises(APIUsageError, match="single_observation_space must be a Box"):
        _native(obs, _ATN, 2)


@pytest.mark.parametrize(
    "atn", [spaces.MultiBinary(3), spaces.Dict({"a": _ATN}), spaces.Tuple((_ATN,)), spaces.Text(3)]
)
def test_unsupported_action_space(atn: spaces.Space) -> None:
    with pytest.raises(APIUsageError, match="single_action_space must be a Discrete, MultiDiscrete or Box"):
        _native(_OBS, atn, 2)


def test_huge_discrete_actions_keep_their_dtype() -> None:
    env = _native(_OBS, spaces.Discrete(2**40), 2)
    assert env.actions.dtype == np.int64 and env.actions.shape == (2,)


@pytest.mark.parametrize(
    ("name", "bad", "match"),
    [
        ("observations", np.zeros((2, 4), np.float32), r"shape \(2, 4\); this environment needs \(2, 3\)"),
        ("rewards", np.zeros(2, np.int32), "dtype int32; this environment needs float32"),
        ("masks", np.ones(3, bool), "masks.*shape"),
        ("actions", np.zeros(2, np.float32), "actions.*dtype float32"),
        ("terminals", [False, False], "must be a numpy array"),
    ],
)
def test_bad_buffers(name: str, bad: Any, match: str) -> None:
    buf = make_buffers(_native(_OBS, _ATN, 2))
    buf[name] = bad
    with pytest.raises(APIUsageError, match=match):
        _native(_OBS, _ATN, 2, buf=buf)
    del buf[name]
    with pytest.raises(APIUsageError, match=f"buf is missing '{name}'"):
        _native(_OBS, _ATN, 2, buf=buf)
    with pytest.raises(APIUsageError, match=f"buf has no attribute '{name}'"):
        _native(_OBS, _ATN, 2, buf=SimpleNamespace(**buf))


def test_legacy_gym_spaces() -> None:
    gym = pytest.importorskip("gym")
    env = _native(gym.spaces.Box(0, 1, (3,), np.float32), gym.spaces.Discrete(4), 2)
    assert env.observations.shape == (2, 3) and env.actions.shape == (2,)
    with pytest.raises(APIUsageError, match="must be a Box"):
        _native(gym.spaces.Discrete(3), gym.spaces.Discrete(4), 2)


def test_errors_subclass_pufferlibs_bases() -> None:
    assert issubclass(APIUsageError, RuntimeError) and issubclass(InvalidAgentError, ValueError)
    error = InvalidAgentError("x", ["a", "b"])
    assert "'x'" in str(error) and "['a', 'b']" in str(error)
    assert error.agent_id == "x" and error.agents == ["a", "b"]
    assert APIUsageError("boom").message == "boom"


def test_gymnasium_env_subclass_may_be_a_puffer_env() -> None:
    class Both(PufferEnv, gymnasium.Env):
        def __init__(self) -> None:
            self.single_observation_space = _OBS
            self.single_action_space = _ATN
            self.num_agents = 2
            super().__init__()

    assert Both().observation_space.shape == (2, 3)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), st.integers(), max_size=5))
def test_namespace_items_are_attributes(fields: dict[str, int]) -> None:
    import copy
    import pickle

    from spacealg.env.namespace import Namespace

    ns = Namespace(**fields)
    assert dict(ns) == fields and len(ns) == len(fields)
    for key in fields:
        assert ns[key] == getattr(ns, key)
    with pytest.raises(AttributeError):
        _ = ns.missing_field_
    with pytest.raises(AttributeError, match="read-only"):
        ns.x = 1
    assert dict(pickle.loads(pickle.dumps(ns))) == fields and dict(copy.deepcopy(ns)) == fields
    assert repr(ns).startswith("Namespace(")
