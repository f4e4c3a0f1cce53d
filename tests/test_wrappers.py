"""spacealg.wrappers: each wrapper's behaviour from the PufferLib seeds, laws and error paths."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from envs_for_layer import DyingAgentsEnv, ImageEnv, NestedDictEnv, OldestGymEnv, OldGymEnv
from gymnasium import spaces
from hypothesis import given
from hypothesis import strategies as st

from spacealg.wrappers import (
    ClipAction,
    EpisodeStats,
    GymToGymnasium,
    MeanOverAgents,
    MultiagentEpisodeStats,
    PettingZooTruncatedWrapper,
    PettingZooWrapper,
    ResizeObservation,
    unroll_nested_dict,
)
from spacealg.wrappers.pettingzoo import mean_over_agents

# ---------------------------------------------------------------- unroll_nested_dict

_keys = st.text("abcxyz", min_size=1, max_size=3)
_leaves = st.one_of(
    st.integers(), st.floats(allow_nan=False), st.text(max_size=3), st.none(), st.lists(st.integers())
)
_nested = st.recursive(_leaves, lambda inner: st.dictionaries(_keys, inner, max_size=4), max_leaves=12)


def _leaves_depth_first(d: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if not isinstance(d, dict):
        return [(path, d)]
    out = []
    for k, v in d.items():
        out.extend(_leaves_depth_first(v, (*path, k)))
    return out


@given(_leaves)
def test_unroll_nested_dict_loses_nothing(x: Any) -> None:
    assert list(unroll_nested_dict(x)) == [("", x)]


@given(st.dictionaries(_keys, _nested, max_size=5))
def test_unroll_nested_dict_yields_exactly_the_leaves_in_depth_first_order(d: dict) -> None:
    expected = [
        ("/".join(map(str, path)) if len(path) > 1 else path[0], leaf)
        for path, leaf in _leaves_depth_first(d)
        if path  # a top-level empty dict has no leaves
    ]
    assert list(unroll_nested_dict(d)) == expected


def test_unroll_nested_dict_examples() -> None:
    info = {"a": 1, "b": {"c": 2, "d": {"e": "x"}}, 3: 4, "empty": {}}
    assert list(unroll_nested_dict(info)) == [("a", 1), ("b/c", 2), ("b/d/e", "x"), (3, 4)]
    assert list(unroll_nested_dict([1, 2])) == [("", [1, 2])]
    assert list(unroll_nested_dict(None)) == [("", None)]


# ---------------------------------------------------------------- ResizeObservation

_dims = st.integers(1, 4)


@given(_dims, _dims, _dims, st.sampled_from([(), (3,)]), st.integers(0, 99))
def test_resize_observation_is_strided_and_a_member(d: int, h: int, w: int, rest: tuple, seed: int) -> None:
    raw, wrapped = ImageEnv((h * d, w * d, *rest)), ResizeObservation(ImageEnv((h * d, w * d, *rest)), d)
    assert wrapped.observation_space.shape == (h, w, *rest)
    assert wrapped.observation_space.dtype == np.uint8
    for (obs, _), (raw_obs, _) in [(wrapped.reset(seed=seed), raw.reset(seed=seed))]:
        assert np.array_equal(obs, raw_obs[::d, ::d])
        assert wrapped.observation_space.contains(obs)
    for _ in range(3):
        obs, *_ = wrapped.step(np.zeros(2, np.float32))
        raw_obs, *_ = raw.step(np.zeros(2, np.float32))
        assert np.array_equal(obs, raw_obs[::d, ::d])
        assert wrapped.observation_space.contains(obs)


def test_resize_observation_matches_pufferlib_space_for_grayscale() -> None:
    space = ResizeObservation(ImageEnv((84, 84)), 2).observation_space
    assert space == spaces.Box(0, 255, (42, 42), np.uint8)


def test_resize_observation_forwards_reset_options() -> None:
    _, info = ResizeObservation(ImageEnv((4, 4))).reset(seed=1, options={"k": 1})
    assert info == {"options": {"k": 1}}


@pytest.mark.parametrize(
    ("env", "downscale", "error", "match"),
    [
        (lambda: ImageEnv((6, 4)), 4, ValueError, "divide"),
        (lambda: ImageEnv((6, 4)), 0, ValueError, "downscale"),
        (lambda: ImageEnv((6, 4)), 1.5, ValueError, "downscale"),
        (lambda: ImageEnv((6,)), 2, TypeError, "Box observation space of shape"),
        (lambda: gymnasium.make("FrozenLake-v1"), 2, TypeError, "Box observation space"),
    ],
)
def test_resize_observation_errors(env: Any, downscale: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ResizeObservation(env(), downscale)


# ---------------------------------------------------------------- ClipAction


@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=2, max_size=2))
def test_clip_action_passes_the_clipped_action_which_is_a_member(action: list[float]) -> None:
    env = ImageEnv((2, 2))
    wrapped = ClipAction(env)
    wrapped.reset(seed=0)
    a = np.asarray(action, np.float32)
    assert wrapped.action_space.contains(a)
    wrapped.step(a)
    assert np.array_equal(env.received[-1], np.clip(a, -1.0, 1.0))
    assert env.action_space.contains(env.received[-1])


def test_clip_action_space_spans_the_dtype() -> None:
    space = ClipAction(gymnasium.make("Pendulum-v1")).action_space
    limits = np.finfo(np.float32)
    assert space.shape == (1,) and space.dtype == np.float32
    assert space.low[0] == limits.min and space.high[0] == limits.max


def test_clip_action_in_lockstep_with_clipped_raw_pendulum() -> None:
    raw, wrapped = gymnasium.make("Pendulum-v1"), ClipAction(gymnasium.make("Pendulum-v1"))
    raw.reset(seed=3)
    wrapped.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = rng.uniform(-10, 10, 1).astype(np.float32)
        got, want = wrapped.step(a), raw.step(np.clip(a, -2, 2))
        assert np.array_equal(got[0], want[0]) and got[1] == want[1]


def test_clip_action_integer_box_uses_iinfo() -> None:
    env = ImageEnv((2, 2))
    env.action_space = spaces.Box(-3, 3, (2,), np.int32)
    space = ClipAction(env).action_space
    assert space.low[0] == np.iinfo(np.int32).min and space.dtype == np.int32


def test_clip_action_rejects_non_box() -> None:
    with pytest.raises(TypeError, match="Box action space"):
        ClipAction(gymnasium.make("CartPole-v1"))


# ---------------------------------------------------------------- EpisodeStats


class ScriptedEnv(gymnasium.Env):
    """Plays back a fixed list of (reward, info) steps, terminating on the last one."""

    def __init__(self, script: list[tuple[float, Any]], truncate: bool = False) -> None:
        self.observation_space = spaces.Discrete(1)
        self.action_space = spaces.Discrete(1)
        self.script = script
        self.truncate = truncate
        self.resets = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[int, dict]:
        self.resets += 1
        self.t = 0
        return 0, {"reset": True, "options": options}

    def step(self, action: Any) -> tuple[int, float, bool, bool, Any]:
        reward, info = self.script[self.t]
        self.t += 1
        last = self.t == len(self.script)
        return 0, reward, last and not self.truncate, last and self.truncate, info


_info_values = st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.booleans(), st.text(max_size=2))


@given(
    st.lists(
        st.tuples(st.floats(-10, 10), st.dictionaries(st.sampled_from("ab"), _info_values, max_size=2)),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
)
def test_episode_stats_reports_sums_on_the_last_step_only(script: list, truncate: bool) -> None:
    env = EpisodeStats(ScriptedEnv(script, truncate))
    env.reset(seed=0)
    infos = [env.step(0)[4] for _ in script]
    assert all(info == {} for info in infos[:-1])
    last = infos[-1]
    assert last["episode_length"] == len(script)
    assert last["episode_return"] == pytest.approx(sum(r for r, _ in script))
    for key in "ab":
        values = [i[key] for _, i in script if key in i]
        if values and all(not isinstance(v, str) for v in values):
            assert last[key] == pytest.approx(sum(values))
        else:
            assert key not in last


def test_episode_stats_unrolls_nested_infos_and_drops_non_numeric() -> None:
    script = [
        (1.0, {"n": {"a": 1, "b": np.array([1, 2])}, "name": "x"}),
        (2.0, {"n": {"a": 2, "b": np.array([3, 4])}}),
    ]
    env = EpisodeStats(ScriptedEnv(script))
    env.reset()
    env.step(0)
    *_, info = env.step(0)
    assert info["n/a"] == 3 and np.array_equal(info["n/b"], [4, 6])
    assert "name" not in info
    assert info["episode_return"] == 3.0 and info["episode_length"] == 2


def test_episode_stats_does_not_reset_in_constructor_and_forwards_options() -> None:
    raw = ScriptedEnv([(1.0, {})])
    env = EpisodeStats(raw)
    assert raw.resets == 0
    _, info = env.reset(seed=1, options={"o": 1})
    assert info == {"reset": True, "options": {"o": 1}}


def test_episode_stats_on_cartpole_in_lockstep() -> None:
    raw, env = gymnasium.make("CartPole-v1"), EpisodeStats(gymnasium.make("CartPole-v1"))
    rng = np.random.default_rng(1)
    episodes = 0
    for seed in range(5):
        raw.reset(seed=seed)
        env.reset(seed=seed)
        total, steps, done = 0.0, 0, False
        while not done:
            a = int(rng.integers(2))
            obs, r, term, trunc, info = env.step(a)
            raw_obs, raw_r, raw_term, raw_trunc, _ = raw.step(a)
            assert np.array_equal(obs, raw_obs) and (r, term, trunc) == (raw_r, raw_term, raw_trunc)
            total, steps, done = total + r, steps + 1, term or trunc
            assert (info != {}) == done
        assert info == {"episode_return": total, "episode_length": steps}
        episodes += 1
    assert episodes == 5


def test_episode_stats_starts_afresh_after_an_episode_without_reset() -> None:
    env = EpisodeStats(ScriptedEnv([(1.0, {}), (2.0, {})]))
    env.reset()
    env.step(0)
    assert env.step(0)[4]["episode_return"] == 3.0
    env.env.t = 1  # an auto-resetting env carries on without reset()
    assert env.step(0)[4] == {"episode_return": 2.0, "episode_length": 1}


# ---------------------------------------------------------------- PettingZoo wrappers


def _lockstep_pz(wrapper: type, seed: int = 5, dict_obs: bool = False) -> list[tuple[Any, Any]]:
    """(raw, wrapped) results of reset and every step of one episode with the same actions."""
    raw, wrapped = DyingAgentsEnv(dict_obs=dict_obs), wrapper(DyingAgentsEnv(dict_obs=dict_obs))
    pairs = [(raw.reset(seed=seed), wrapped.reset(seed=seed))]
    rng = np.random.default_rng(seed)
    while raw.agents:
        assert wrapped.agents == raw.agents
        actions = {a: int(rng.integers(3)) for a in raw.agents}
        pairs.append((raw.step(actions), wrapped.step(dict(actions))))
    assert wrapped.agents == []
    return pairs


def _assert_same_obs(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k], b[k])


@given(st.integers(0, 2**31 - 1))
def test_pettingzoo_wrapper_forwards_everything_unchanged(seed: int) -> None:
    pairs = _lockstep_pz(PettingZooWrapper, seed=seed)
    assert len(pairs) > 2
    for raw, wrapped in pairs:
        _assert_same_obs(raw[0], wrapped[0])
        assert raw[1:] == wrapped[1:]



def test_pettingzoo_wrapper_forwards_attributes() -> None:
    env = PettingZooWrapper(DyingAgentsEnv())
    assert env.possible_agents == DyingAgentsEnv().possible_agents
    assert env.max_steps == 30 and env.metadata["name"] == "dying_agents_v0"
    assert env.observation_space("agent_0") == spaces.Box(0.0, 1.0, (3,), np.float32)
    assert env.action_space("agent_0") == spaces.Discrete(3)
    assert env.render() is None and env.close() is None
    assert str(env).startswith("PettingZooWrapper<")


def test_pettingzoo_wrapper_blocks_private_attributes() -> None:
    env = PettingZooWrapper(DyingAgentsEnv())
    with pytest.raises(AttributeError, match="private attribute '_obs_space'"):
        _ = env._obs_space
    env.env._cumulative_rewards = {"agent_0": 1.0}
    assert env._cumulative_rewards == {"agent_0": 1.0}
    with pytest.raises(AttributeError):
        _ = env.no_such_attribute


def test_pettingzoo_wrapper_reset_with_and_without_options() -> None:
    class NoOptions(DyingAgentsEnv):
        def reset(self, seed: int | None = None) -> tuple[dict, dict]:  # type: ignore[override]
            return super().reset(seed)

    obs, _ = PettingZooWrapper(NoOptions()).reset(seed=1)
    assert len(obs) == 4
    obs, _ = PettingZooWrapper(DyingAgentsEnv()).reset(seed=1, options={"x": 1})
    assert len(obs) == 4


@given(st.integers(0, 2**31 - 1))
def test_mean_over_agents_replaces_infos_by_their_mean(seed: int) -> None:
    pairs = _lockstep_pz(MeanOverAgents, seed=seed)
    _, (_, infos) = pairs[0]
    assert infos == {"alive": 1.0}
    for raw, wrapped in pairs[1:]:
        assert raw[1:4] == wrapped[1:4]
        actions = [info["nested"]["action"] for info in raw[4].values()]
        assert wrapped[4] == {"nested/action": pytest.approx(np.mean(actions))}  # "name" is skipped


def test_mean_over_agents_averages_arrays_entrywise_and_unrolls_nested_infos() -> None:
    infos = {"a": {"x": np.array([1.0, 2.0]), "n": {"y": 1}, "s": "hi", "f": True},
             "b": {"x": np.array([3.0, 4.0]), "n": {"y": 3}, "s": "yo", "f": False}}
    means = mean_over_agents(infos)
    assert set(means) == {"x", "n/y", "f"}  # the strings are skipped
    assert np.array_equal(means["x"], [2.0, 3.0]) and means["n/y"] == 2.0 and means["f"] == 0.5


@given(
    st.dictionaries(
        st.sampled_from(["a0", "a1", "a2"]),
        st.dictionaries(st.sampled_from("xy"), st.integers(-9, 9) | st.text(max_size=1), max_size=2),
        max_size=3,
    )
)
def test_mean_over_agents_is_the_mean_of_numeric_values(infos: dict) -> None:
    means = mean_over_agents(infos)
    for key in "xy":
        values = [i[key] for i in infos.values() if key in i]
        if values and all(isinstance(v, int) for v in values):
            assert means[key] == pytest.approx(np.mean(values))
        else:
            assert key not in means


@given(st.integers(0, 2**31 - 1))
def test_multiagent_episode_stats_reports_each_agents_episode(seed: int) -> None:
    pairs = _lockstep_pz(MultiagentEpisodeStats, seed=seed)
    (raw_reset, reset) = pairs[0]
    assert raw_reset[1] == reset[1]
    returns: dict[str, float] = {}
    lengths: dict[str, int] = {}
    actions: dict[str, int] = {}
    finished = set()
    for raw, wrapped in pairs[1:]:
        assert raw[1:4] == wrapped[1:4]
        _, rewards, terms, truncs, raw_infos = raw
        for agent, r in rewards.items():
            returns[agent] = returns.get(agent, 0.0) + r
            lengths[agent] = lengths.get(agent, 0) + 1
            actions[agent] = actions.get(agent, 0) + raw_infos[agent]["nested"]["action"]
            info = wrapped[4][agent]
            if terms[agent] or truncs[agent]:
                finished.add(agent)
                assert info == {
                    "nested/action": actions[agent],
                    "episode_return": pytest.approx(returns[agent]),
                    "episode_length": lengths[agent],
                }
            else:
                assert info == {}
    assert finished == set(DyingAgentsEnv().possible_agents)


def test_multiagent_episode_stats_restart_on_reset() -> None:
    env = MultiagentEpisodeStats(DyingAgentsEnv(n_agents=1, max_steps=2))
    for _ in range(2):
        env.reset(seed=0)
        env.step({"agent_0": 1})
        *_, infos = env.step({"agent_0": 1})
        assert infos["agent_0"]["episode_length"] == 2


class OldPettingZooEnv(DyingAgentsEnv):
    """The pre-truncation PettingZoo API: reset → obs; step → (obs, rewards, dones, infos)."""

    def reset(self, seed: int | None = None, options: dict | None = None) -> dict:  # type: ignore[override]
        return super().reset(seed)[0]

    def step(self, actions: dict) -> tuple:  # type: ignore[override]
        obs, rewards, terms, truncs, infos = super().step(actions)
        return obs, rewards, {a: terms[a] or truncs[a] for a in terms}, infos


@given(st.integers(0, 2**31 - 1))
def test_pettingzoo_truncated_wrapper_upgrades_the_old_api(seed: int) -> None:
    raw, env = OldPettingZooEnv(), PettingZooTruncatedWrapper(OldPettingZooEnv())
    raw_obs = raw.reset(seed=seed)
    obs, infos = env.reset(seed=seed)
    _assert_same_obs(raw_obs, obs)
    assert infos == {a: {} for a in raw_obs}
    while raw.agents:
        actions = dict.fromkeys(raw.agents, 1)
        raw_out, out = raw.step(actions), env.step(actions)
        assert len(out) == 5
        assert out[1] == raw_out[1] and out[2] == raw_out[2] and out[4] == raw_out[3]
        assert out[3] == dict.fromkeys(raw_out[2], False)


@given(st.integers(0, 2**31 - 1))
def test_pettingzoo_truncated_wrapper_keeps_the_new_api(seed: int) -> None:
    pairs = _lockstep_pz(PettingZooTruncatedWrapper, seed=seed)
    (raw_obs, _), (_, infos) = pairs[0]
    assert infos == {a: {} for a in raw_obs}  # reset infos are replaced by empty dicts
    for raw, wrapped in pairs[1:]:
        _assert_same_obs(raw[0], wrapped[0])
        assert raw[1:] == wrapped[1:]
    env = PettingZooTruncatedWrapper(DyingAgentsEnv())
    assert env.render_mode is None
    assert env.observation_space("agent_1") == DyingAgentsEnv().observation_space("x")


def test_pettingzoo_wrappers_pass_the_pettingzoo_api_test() -> None:
    pz_test = pytest.importorskip("pettingzoo.test")
    for wrapper in (PettingZooWrapper, MultiagentEpisodeStats, PettingZooTruncatedWrapper):
        pz_test.parallel_api_test(wrapper(DyingAgentsEnv()), num_cycles=50)


# ---------------------------------------------------------------- GymToGymnasium


@given(st.integers(0, 2**31 - 1), st.lists(st.integers(0, 1), max_size=50))
def test_gym_to_gymnasium_turns_the_old_api_into_the_new(seed: int, actions: list[int]) -> None:
    raw, env = OldGymEnv(), GymToGymnasium(OldGymEnv())
    assert env.reset(seed=seed) == (raw.reset(seed=seed), {})
    for a in actions:
        obs, reward, done, info = raw.step(a)
        assert env.step(a) == (obs, reward, done, False, info)


def test_gym_to_gymnasium_forwards_spaces_metadata_render_close() -> None:
    raw, env = OldGymEnv(), GymToGymnasium(OldGymEnv())
    raw.reset(seed=0)
    env.reset(seed=0)
    assert env.observation_space is env.env.observation_space and env.action_space is env.env.action_space
    assert env.metadata == raw.metadata and env.render_mode == "ansi"
    assert env.render() == raw.render()
    env.close()
    assert env.env.closed


def test_gym_to_gymnasium_seeds_like_gymnasium() -> None:
    env = GymToGymnasium(OldGymEnv())
    first = [env.reset(seed=s)[0] for s in range(10)]
    assert first == [env.reset(seed=s)[0] for s in range(10)]
    assert env.reset()[1] == {}


def test_gym_to_gymnasium_seeds_the_oldest_api_through_seed() -> None:
    env, raw = GymToGymnasium(OldestGymEnv()), OldGymEnv()
    assert [env.reset(seed=s)[0] for s in range(10)] == [raw.reset(seed=s) for s in range(10)]


def test_gym_to_gymnasium_composes_with_gymnasium_wrappers() -> None:
    env = EpisodeStats(GymToGymnasium(OldGymEnv()))
    env.reset(seed=0)
    done = False
    while not done:
        *_, term, trunc, info = env.step(1)
        done = term or trunc
    assert info["episode_length"] >= 1


def test_gym_to_gymnasium_rejects_a_new_api_env() -> None:
    env = GymToGymnasium(NestedDictEnv())
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"old Gym API.*returned 5 values"):
        env.step({"move": 0, "boost": 0})
