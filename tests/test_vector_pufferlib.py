"""spacealg's environments in PufferLib's own pufferlib.vector (where PufferLib is installed:
``bash benchmarks/setup_pufferlib.sh`` builds benchmarks/.puffer-venv, then
``benchmarks/.puffer-venv/bin/python -m pytest tests/test_vector_pufferlib.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from envs_for_layer import DyingAgentsEnv, NestedDictEnv
from vector_envs import SeededWalkers

from spacealg.emulation import GymnasiumPufferEnv, PettingZooPufferEnv
from spacealg.vector import as_pufferlib, for_pufferlib

pufferlib_vector = pytest.importorskip("pufferlib.vector")
import pufferlib.emulation  # noqa: E402


def nested() -> GymnasiumPufferEnv:
    return GymnasiumPufferEnv(NestedDictEnv(max_steps=5))


def dying() -> PettingZooPufferEnv:
    return PettingZooPufferEnv(DyingAgentsEnv(n_agents=3, max_steps=6))


def test_as_pufferlib_relabels_without_changing_behaviour() -> None:
    env = nested()
    cls = type(env)
    assert as_pufferlib(env) is env
    assert isinstance(env, pufferlib.emulation.GymnasiumPufferEnv) and isinstance(env, cls)
    assert type(env).__mro__[1] is cls
    assert as_pufferlib(env) is env and type(env).__mro__[1] is cls  # idempotent
    assert isinstance(as_pufferlib(SeededWalkers(2)), pufferlib.PufferEnv)
    assert isinstance(as_pufferlib(dying()), pufferlib.emulation.PettingZooPufferEnv)
    with pytest.raises(TypeError):
        as_pufferlib(object())


@pytest.mark.parametrize("creator", [nested, dying])
def test_serial_and_multiprocessing_run_emulated_envs_alike(creator) -> None:
    serial = pufferlib_vector.make(for_pufferlib(creator), num_envs=2, backend=pufferlib_vector.Serial)
    multi = pufferlib_vector.make(for_pufferlib(creator), num_envs=2, num_workers=2,
                                  backend=pufferlib_vector.Multiprocessing)
    try:
        obs_s, _ = serial.reset(seed=3)
        obs_m, _ = multi.reset(seed=3)
        assert np.array_equal(obs_s, obs_m)
        rng = np.random.default_rng(0)
        for _ in range(12):
            actions = np.stack([serial.single_action_space.sample() for _ in range(serial.num_agents)])
            rng.shuffle(actions)
            got_s = serial.step(actions)
            got_m = multi.step(actions)
            for a, b in zip(got_s[:4], got_m[:4]):
                assert np.array_equal(a, b)
            if creator is dying and any(env.done for env in serial.envs):
                break  # DyingAgentsEnv's unseeded resets draw fresh entropy: stop comparing here
    finally:
        serial.close()
        multi.close()


def test_multiprocessing_runs_native_envs_in_shared_buffers() -> None:
    multi = pufferlib_vector.make(for_pufferlib(SeededWalkers), env_kwargs={"num_agents": 3}, num_envs=2,
                                  num_workers=2, backend=pufferlib_vector.Multiprocessing)
    direct = [SeededWalkers(3), SeededWalkers(3)]
    try:
        obs, _ = multi.reset(seed=0)  # PufferLib seeds worker w's environment with seed + w
        assert np.array_equal(obs, np.concatenate([env.reset(seed=w)[0] for w, env in enumerate(direct)]))
        for t in range(25):
            actions = np.array([2, 0, 1, 2, 2, t % 3])
            got = multi.step(actions)
            want = [env.step(part) for env, part in zip(direct, np.split(actions, 2))]
            for k in range(4):
                assert np.array_equal(got[k], np.concatenate([w[k] for w in want]))
    finally:
        multi.close()


def test_for_pufferlib_applies_buf_and_seed_a_creator_does_not_take() -> None:
    """PufferLib 3 calls every creator with buf= and seed=; PufferLib 2 assigns env.buf later."""
    template = nested()
    buf = {name: getattr(template, name).copy() for name in
           ("observations", "rewards", "terminals", "truncations", "masks", "actions")}
    env = for_pufferlib(nested)(buf=buf, seed=7)
    assert env.observations is buf["observations"]
    obs, _ = env.reset()  # the constructor's seed seeds the first reset
    assert np.array_equal(obs, nested().reset(seed=7)[0]) and np.shares_memory(obs, buf["observations"])
    with pytest.raises(TypeError, match="takes no buf"):
        for_pufferlib(lambda: SeededWalkers(2))(buf=buf, seed=0)
