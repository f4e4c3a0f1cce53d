"""RLlib's env runner consuming spacealg envs (where RLlib is installed:
``pip install 'spacealg[rllib]'``; see docs/vector.md)."""

from __future__ import annotations

import numpy as np
import pytest
from envs_for_layer import NestedDictEnv

from spacealg.emulation import GymnasiumPufferEnv, codec_for
from spacealg.vector import GymnasiumVectorView

try:  # RLlib without ray[tune] raises a plain ImportError, which importorskip does not take
    import ray.rllib.algorithms.ppo  # noqa: F401
except ImportError as error:
    pytest.skip(f"RLlib is not importable here ({error}): pip install 'spacealg[rllib]'", allow_module_level=True)


def emulated_nested(config) -> GymnasiumPufferEnv:
    return GymnasiumPufferEnv(NestedDictEnv(max_steps=int(config.get("max_steps", 6))))


def nested_view(config) -> GymnasiumVectorView:
    """RLlib's vector entry point: called with config["num_envs"] (one emulated env: one row)."""
    assert config.get("num_envs", 1) == 1
    return GymnasiumVectorView(emulated_nested(config))


@pytest.mark.parametrize(("creator", "mode", "num_envs"), [(emulated_nested, "sync", 2),
                                                          (nested_view, "vector_entry_point", 1)])
def test_rllibs_env_runner_samples_episodes_of_emulated_envs(creator, mode, num_envs) -> None:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    config = (
        PPOConfig()
        .environment(env=creator, env_config={"max_steps": 6})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
    )
    runner = SingleAgentEnvRunner(config=config)
    try:
        assert runner.env.num_envs == num_envs
        episodes = runner.sample(num_timesteps=40, random_actions=True)
        done = [e for e in episodes if e.is_done]
        assert done and all(len(e) <= 6 for e in done)
        codec = codec_for(NestedDictEnv().observation_space, "observation")
        space = NestedDictEnv(max_steps=6).observation_space
        for episode in done:
            observations = episode.get_observations()
            assert len(observations) == len(episode) + 1  # reset + one per step: NEXT_STEP autoreset
            assert all(space.contains(codec.nativize(np.asarray(o))) for o in observations)
    finally:
        runner.stop()

