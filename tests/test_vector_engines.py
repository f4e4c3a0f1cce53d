"""Gymnasium's engines around spacealg's envs, and Gymnasium vector envs as PufferLib-style envs."""

from __future__ import annotations

import copy

import gymnasium
import numpy as np
import pytest
from envs_for_layer import NestedDictEnv
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from vector_envs import SampledEnv

from spacealg.emulation import GymnasiumPufferEnv, codec_for, emulate_action_space, emulate_observation_space
from spacealg.strategies import gymnasium_spaces
from spacealg.vector import GymnasiumVectorView, VectorPufferEnv, info_rows


def _emulated_nested() -> GymnasiumPufferEnv:
    return GymnasiumPufferEnv(NestedDictEnv(max_steps=6))


def _emulated_cartpole() -> GymnasiumPufferEnv:
    return GymnasiumPufferEnv(gymnasium.make("CartPole-v1"))


# ------------------------------------------------ point 3: AsyncVectorEnv == SyncVectorEnv


@pytest.mark.parametrize("make", [_emulated_nested, _emulated_cartpole])
def test_async_vector_env_with_shared_memory_equals_sync_step_for_step(make) -> None:
    sync = SyncVectorEnv([make, make])
    asynchronous = AsyncVectorEnv([make, make], shared_memory=True)
    try:
        assert asynchronous.single_observation_space == sync.single_observation_space
        obs_a, info_a = asynchronous.reset(seed=11)
        obs_s, info_s = sync.reset(seed=11)
        assert np.array_equal(obs_a, obs_s) and data_equivalence(info_a, info_s)
        sync.action_space.seed(11)
        ends = 0
        for _ in range(40):
            actions = sync.action_space.sample()
            got, want = asynchronous.step(actions), sync.step(actions)
            assert np.array_equal(got[0], want[0])
            for a, b in zip(got[1:4], want[1:4]):
                assert np.array_equal(a, b)
            assert data_equivalence(got[4], want[4])
            ends += int(np.sum(want[2] | want[3]))
        assert ends > 0  # autoresets happened in the workers too
    finally:
        asynchronous.close()
        sync.close()


# ------------------------------------------------------ point 2: VectorPufferEnv


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(
    space=gymnasium_spaces(max_depth=2, classes=("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Tuple", "Dict")),
    seed=st.integers(0, 2**16),
)
def test_vector_puffer_env_emulates_the_vector_envs_batches(space, seed) -> None:
    try:
        emulated_space, _ = emulate_observation_space(space)
    except (ValueError, TypeError):
        assume(False)
    make = [lambda: SampledEnv(copy.deepcopy(space))] * 3
    env = VectorPufferEnv(SyncVectorEnv(make))
    reference = SyncVectorEnv(make)
    codec = codec_for(space, "observation")
    assert env.num_agents == 3
    assert env.single_observation_space == emulated_space
    assert env.single_action_space == emulate_action_space(reference.single_action_space)[0]
    obs, infos = env.reset(seed=seed)
    ref_obs, ref_infos = reference.reset(seed=seed)
    assert obs is env.observations
    assert data_equivalence(codec.nativize_batch(obs), ref_obs)
    assert infos == info_rows(ref_infos, 3)
    for t in range(5):
        actions = np.array([t % 2, 1, 0])
        got, want = env.step(actions), reference.step(actions)
        assert env.observation_space.contains(got[0])
        assert data_equivalence(codec.nativize_batch(got[0]), want[0])
        for a, b in zip(got[1:4], want[1:4]):
            assert np.array_equal(a, b.astype(a.dtype))
        assert data_equivalence(got[4], info_rows(want[4], 3))


def test_vector_puffer_env_nativizes_dict_actions_and_runs_async_workers() -> None:
    make = [lambda: NestedDictEnv(max_steps=5)] * 2
    vec = AsyncVectorEnv(make, shared_memory=True, autoreset_mode=AutoresetMode.SAME_STEP)
    reference = SyncVectorEnv(make, autoreset_mode=AutoresetMode.SAME_STEP)
    env = VectorPufferEnv(vec)
    try:
        assert env.single_action_space == gymnasium.spaces.MultiDiscrete([2, 4])  # sorted keys: boost, move
        assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
        env.async_reset(seed=0)
        obs, rewards, terminals, truncations, infos, agent_ids, masks = env.recv()
        ref_obs, _ = reference.reset(seed=0)
        assert obs.shape == (2, env.single_observation_space.shape[0]) and masks.all()
        assert list(agent_ids) == [0, 1]
        codec = codec_for(vec.single_observation_space, "observation")
        assert data_equivalence(codec.nativize_batch(obs), ref_obs)
        ends = 0
        for t in range(12):
            actions = np.array([[1, t % 4], [0, 3]])
            env.send(actions)
            obs, rewards, terminals, truncations, infos, *_ = env.recv()
            want = reference.step({"boost": actions[:, 0], "move": actions[:, 1]})
            assert data_equivalence(codec.nativize_batch(obs), want[0])
            assert np.array_equal(rewards, want[1].astype(np.float32))
            assert np.array_equal(terminals, want[2]) and np.array_equal(truncations, want[3])
            assert data_equivalence(infos, info_rows(want[4], 2))
            ends += int(np.sum(terminals | truncations))
        assert ends >= 2
        assert env.emulated.emulated_observation_dtype == env.obs_dtype
        assert env.obs_struct.shape == (2,)
    finally:
        env.close()


def test_vector_puffer_env_round_trips_through_the_gymnasium_view() -> None:
    """VectorPufferEnv(SyncVectorEnv(...)) seen again as a VectorEnv gives the same batches and final_obs."""
    make = [lambda: gymnasium.make("CartPole-v1")] * 3
    view = GymnasiumVectorView(VectorPufferEnv(SyncVectorEnv(make, autoreset_mode=AutoresetMode.SAME_STEP)))
    reference = SyncVectorEnv(make, autoreset_mode=AutoresetMode.SAME_STEP)
    assert view.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert np.array_equal(view.reset(seed=2)[0], reference.reset(seed=2)[0])
    reference.action_space.seed(2)
    ends = 0
    for _ in range(60):
        actions = reference.action_space.sample()
        got, want = view.step(actions), reference.step(actions)
        assert np.array_equal(got[0], want[0])
        assert data_equivalence(got[4], want[4])  # final_obs through VectorPufferEnv's hook
        ends += "final_obs" in want[4]
    assert ends >= 1


def test_vector_puffer_env_rejects_what_is_not_a_vector_env() -> None:
    with pytest.raises(TypeError, match="vector_env must be a Gymnasium VectorEnv"):
        VectorPufferEnv(gymnasium.make("CartPole-v1"))


def test_info_rows_inverts_gymnasiums_add_info() -> None:
    vec = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3)
    per_env = [{"a": 1, "nested": {"b": 2.0}}, {}, {"a": 3}]
    infos: dict = {}
    for i, info in enumerate(per_env):
        infos = vec._add_info(infos, info, i)
    assert info_rows(infos, 3) == per_env
    assert info_rows(infos, 3) == gymnasium.wrappers.vector.DictInfoToList(vec)._convert_info_to_list(infos)


ENGINES = [
    ("sync", lambda fns, mode: SyncVectorEnv(fns, autoreset_mode=mode)),
    ("async-shm", lambda fns, mode: AsyncVectorEnv(fns, shared_memory=True, autoreset_mode=mode)),
    ("async-pipe", lambda fns, mode: AsyncVectorEnv(fns, shared_memory=False, autoreset_mode=mode)),
]


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
@pytest.mark.parametrize("engine", ENGINES, ids=[name for name, _ in ENGINES])
def test_gymnasiums_engines_give_the_raw_envs_batches_and_final_obs_in_every_mode(engine, mode) -> None:
    """GymnasiumPufferEnv returns a fresh copy of its row at an episode's end, so a SAME_STEP
    engine's final_obs (kept by reference, then reset into) is the final observation; the
    nativized batches, infos included, equal the raw env's in the same engine."""
    _, make = engine
    emulated = make([_emulated_nested] * 2, mode)
    raw = make([lambda: NestedDictEnv(max_steps=6)] * 2, mode)
    codec = codec_for(NestedDictEnv().observation_space, "observation")
    try:
        got, want = emulated.reset(seed=4), raw.reset(seed=4)
        assert data_equivalence(codec.nativize_batch(got[0]), want[0]) and data_equivalence(got[1], want[1])
        finals = 0
        kept = []
        for t in range(16):
            actions = np.array([[t % 2, t % 4], [1, (t + 1) % 4]])
            got = emulated.step(actions)
            want = raw.step({"boost": actions[:, 0], "move": actions[:, 1]})
            assert data_equivalence(codec.nativize_batch(got[0]), want[0])
            for a, b in zip(got[1:4], want[1:4]):
                assert np.array_equal(a, b)
            if "final_obs" in want[4]:
                assert np.array_equal(got[4]["_final_obs"], want[4]["_final_obs"])
                for i in np.flatnonzero(want[4]["_final_obs"]):
                    assert data_equivalence(codec.nativize(got[4]["final_obs"][i]), want[4]["final_obs"][i])
                finals += 1
                kept.append((got[4]["final_obs"], want[4]["final_obs"]))
            ended = want[2] | want[3]
            if mode == AutoresetMode.DISABLED and ended.any():
                got_obs, _ = emulated.reset(options={"reset_mask": ended})
                want_obs, _ = raw.reset(options={"reset_mask": ended})
                assert data_equivalence(codec.nativize_batch(got_obs), want_obs)
        assert (finals >= 2) == (mode == AutoresetMode.SAME_STEP)
        for got_finals, want_finals in kept:  # later steps never changed a handed-out final_obs
            for g, w in zip(got_finals, want_finals):
                assert (g is None) == (w is None) and (g is None or data_equivalence(codec.nativize(g), w))
    finally:
        emulated.close()
        raw.close()


def test_the_emulated_row_is_returned_without_copy_except_at_an_episode_end() -> None:
    env = GymnasiumPufferEnv(gymnasium.make("CartPole-v1"))
    obs, _ = env.reset(seed=0)
    assert obs is env.obs
    for _ in range(500):
        obs, _, terminated, truncated, _ = env.step(1)
        if terminated or truncated:
            assert obs is not env.obs and not np.shares_memory(obs, env.observations)
            assert np.array_equal(obs, env.final_observations[0]) and np.array_equal(obs, env.obs)
            return
        assert obs is env.obs  # the zero-copy fast path
    pytest.fail("CartPole never ended")


@pytest.mark.parametrize("make", [lambda: gymnasium.make("CartPole-v1"), lambda: NestedDictEnv(max_steps=6)])
def test_gymnasiums_check_env_passes_with_copy_and_names_the_shared_row_without(make) -> None:
    """Gymnasium 1.4's check_env wants fresh observations every call (copy=True gives them);
    the default returns the buffer row itself, which it reports as shared data."""
    import warnings

    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(GymnasiumPufferEnv(make(), copy=True), skip_render_check=True)
        with pytest.raises(AssertionError, match="share an object"):
            check_env(GymnasiumPufferEnv(make()), skip_render_check=True)
    env = GymnasiumPufferEnv(make(), copy=True)
    obs, _ = env.reset(seed=3)
    assert not np.shares_memory(obs, env.observations) and np.array_equal(obs, env.obs)
    assert env.np_random is env.env.np_random and env._np_random is env.env.unwrapped._np_random
    assert env.np_random_seed == 3
    with pytest.raises(TypeError, match="copy"):
        GymnasiumPufferEnv(make(), copy=1)
