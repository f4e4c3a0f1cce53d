"""gymnax's classic-control ports against Gymnasium's originals through state bridges
(``check_envs_match(port, reference, bridge=...)``); a broken port is caught."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacealg.adapters.jax_bridges import BRIDGES, bridge_for
from spacealg.testing.jax_env.ports import PortMatchError, check_port_matches
from spacealg.testing.kinds.match import check_envs_match

gymnax = pytest.importorskip("gymnax")
gymnasium = pytest.importorskip("gymnasium")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

AGREE = ["CartPole-v1", "Acrobot-v1", "Pendulum-v1", "MountainCar-v0", "MountainCarContinuous-v0"]


@pytest.mark.parametrize("env_id", AGREE)
def test_port_agrees_step_by_step(env_id: str) -> None:
    report = check_envs_match(f"gymnax:{env_id}", env_id, bridge=bridge_for(env_id), max_examples=2, max_steps=120)
    assert report.properties == ("observations-match", "rewards-match", "flags-match")
    assert report.steps >= 2


@pytest.mark.parametrize("env_id", AGREE)
def test_port_agrees_over_whole_trajectories_before_drift(env_id: str) -> None:
    """Without resynchronising, float32 rounding has not yet compounded past 1e-5 in 100 steps."""
    check_envs_match(f"gymnax:{env_id}", env_id, bridge=bridge_for(env_id), max_examples=1, max_steps=100, resync=False)


def test_acrobot_float32_drift_is_found_without_resync_and_not_with_it() -> None:
    """Acrobot is chaotic: gymnax's float32 RK4 leaves Gymnasium's float64 one by 1e-5
    within a few hundred steps; each step from the same state agrees."""
    with pytest.raises(PortMatchError) as info:
        check_envs_match(
            "gymnax:Acrobot-v1",
            "Acrobot-v1",
            bridge=bridge_for("Acrobot-v1"),
            max_examples=1,
            max_steps=400,
            random_seed=1,
            resync=False,
        )
    assert info.value.property == "observations-match" and info.value.step is not None and info.value.step > 100
    check_envs_match(
        "gymnax:Acrobot-v1", "Acrobot-v1", bridge=bridge_for("Acrobot-v1"), max_examples=1, max_steps=400, random_seed=1
    )


def _pump(observation: Any) -> np.ndarray:
    return np.array([1.0 if observation[1] >= 0 else -1.0], dtype=np.float32)


def test_mountain_car_continuous_left_wall_differs() -> None:
    """gymnax zeroes the velocity past the goal (continuous_mountain_car.py line 65,
    ``position >= goal_position``) where Gymnasium zeroes it at the left wall
    (``position == min_position``): pumping energy reaches the wall, and they part there."""
    with pytest.raises(PortMatchError) as info:
        check_envs_match(
            "gymnax:MountainCarContinuous-v0",
            "MountainCarContinuous-v0",
            bridge=bridge_for("MountainCarContinuous-v0"),
            max_examples=1,
            max_steps=999,
            policy=_pump,
        )
    error = info.value
    assert error.property == "observations-match"
    assert "-1.2000000476837158, 0.0]" in error.detail  # the reference stopped at the wall
    namespace: dict[str, Any] = {}
    exec(compile(error.reproduction(), "<reproduction>", "exec"), namespace)  # self-contained: ids and bridge
    port_obs, reference_obs = np.asarray(namespace["p"][0]), namespace["r"][0]
    assert reference_obs[1] == 0.0 and port_obs[1] < 0  # it replays the divergence


def test_mountain_car_discrete_left_wall_agrees() -> None:
    check_envs_match(
        "gymnax:MountainCar-v0",
        "MountainCar-v0",
        bridge=bridge_for("MountainCar-v0"),
        max_examples=2,
        max_steps=200,
        policy=lambda o: 2 if o[1] >= 0 else 0,
    )


@settings(max_examples=3, deadline=None, database=None)
@given(seed=st.integers(0, 2**16))
def test_cartpole_agrees_for_any_seed(seed: int) -> None:
    check_envs_match(
        "gymnax:CartPole-v1",
        "CartPole-v1",
        bridge=bridge_for("CartPole-v1"),
        max_examples=1,
        max_steps=60,
        random_seed=seed,
    )


def test_wrong_gravity_is_found_and_replays() -> None:
    env, params = gymnax.make("CartPole-v1")
    port = (env, params.replace(gravity=9.0))
    reference = gymnasium.make("CartPole-v1")
    bridge = bridge_for("CartPole-v1")
    with pytest.raises(PortMatchError) as info:
        check_envs_match(port, reference, bridge=bridge, max_examples=3, max_steps=100)
    error = info.value
    assert error.property == "observations-match" and error.step is not None
    assert len(error.actions) == error.step
    snippet = error.reproduction()
    namespace: dict[str, Any] = {"port": port, "reference": gymnasium.make("CartPole-v1"), "bridge": bridge}
    exec(compile(snippet, "<reproduction>", "exec"), namespace)
    p, r = namespace["p"], namespace["r"]
    assert not np.allclose(np.asarray(p[0]), r[0], atol=1e-5, rtol=1e-5)


class _FlippedReward:
    """A gymnax port whose reward has the wrong sign."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.default_params = env.default_params

    def reset_env(self, key: Any, params: Any) -> Any:
        return self.env.reset_env(key, params)

    def step_env(self, key: Any, state: Any, action: Any, params: Any) -> Any:
        obs, state, reward, done, info = self.env.step_env(key, state, action, params)
        return obs, state, -reward, done, info

    def is_truncated(self, state: Any, params: Any) -> Any:
        return self.env.is_truncated(state, params)


def test_flipped_reward_is_found_at_step_one() -> None:
    env, _ = gymnax.make("MountainCar-v0")
    with pytest.raises(PortMatchError) as info:
        check_envs_match(
            _FlippedReward(env), "MountainCar-v0", bridge=bridge_for("MountainCar-v0"), max_examples=1, max_steps=10
        )
    assert (info.value.property, info.value.step) == ("rewards-match", 1)
    assert "port 1.0, reference -1.0" in info.value.detail


def test_wrong_time_limit_is_a_flags_divergence() -> None:
    env, params = gymnax.make("Pendulum-v1")
    with pytest.raises(PortMatchError) as info:
        check_envs_match(
            (env, params.replace(max_steps_in_episode=150)),
            "Pendulum-v1",
            bridge=bridge_for("Pendulum-v1"),
            max_examples=1,
            max_steps=200,
        )
    assert (info.value.property, info.value.step) == ("flags-match", 150)


def test_bridge_law_is_checked() -> None:
    to_reference, _ = bridge_for("CartPole-v1")
    with pytest.raises(ValueError, match="bridge"):
        check_envs_match(
            "gymnax:CartPole-v1",
            "CartPole-v1",
            bridge=(to_reference, lambda r, s: s.replace(x=s.x + 1)),
            max_examples=1,
            max_steps=5,
        )


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="bridge"):
        check_port_matches(gymnax.make("CartPole-v1"), gymnasium.make("CartPole-v1"), bridge=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="episodes"):
        check_port_matches(
            gymnax.make("CartPole-v1"), gymnasium.make("CartPole-v1"), bridge=bridge_for("CartPole-v1"), episodes=0
        )
    with pytest.raises(ValueError, match="port"):
        check_envs_match("jumanji:Snake-v1", "CartPole-v1", bridge=bridge_for("CartPole-v1"))
    with pytest.raises(ValueError, match="env_id"):
        bridge_for("Breakout-v5")
    assert sorted(BRIDGES) == sorted(AGREE)


def test_cartpole_time_limit_agrees_when_balanced() -> None:
    """A balancing policy reaches the 500-step limit: both truncate at step 500."""
    report = check_envs_match(
        "gymnax:CartPole-v1",
        "CartPole-v1",
        bridge=bridge_for("CartPole-v1"),
        max_examples=1,
        max_steps=600,
        policy=lambda o: int(o[2] + 0.5 * o[3] + 0.01 * o[0] + 0.1 * o[1] > 0),
    )
    assert report.steps == 500


class _GymnaxAsGymnasium(gymnasium.Env):  # type: ignore[misc]
    """A gymnax env behind Gymnasium's API, its state exposed as ``state`` through a bridge."""

    def __init__(self, env_id: str) -> None:
        import jax

        self.env, self.params = gymnax.make(env_id)
        self.to_reference, self.to_port = bridge_for(env_id)
        space = self.env.action_space(self.params)
        if hasattr(space, "n"):
            self.action_space = gymnasium.spaces.Discrete(int(space.n))
        else:
            self.action_space = gymnasium.spaces.Box(float(space.low), float(space.high), space.shape, np.float32)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, self.env.observation_space(self.params).shape)
        self._jax = jax
        self._reset, self._step = jax.jit(self.env.reset_env), jax.jit(self.env.step_env)  # as the check compiles
        self._state: Any = None
        self._t = 0

    @property
    def state(self) -> Any:
        return self.to_reference(self._state)

    @state.setter
    def state(self, value: Any) -> None:
        self._state = self.to_port(value, self._state)

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self._seed = 0 if seed is None else seed
        obs, self._state = self._reset(self._jax.random.key(self._seed), self.params)
        self._t = 0
        return np.asarray(obs), {}

    def step(self, action: Any) -> Any:
        self._t += 1
        key = self._jax.random.fold_in(self._jax.random.key(self._seed), self._t)
        obs, self._state, reward, done, _ = self._step(key, self._state, np.asarray(action), self.params)
        return np.asarray(obs), float(reward), bool(done), bool(self.env.is_truncated(self._state, self.params)), {}


@settings(
    max_examples=5,
    deadline=None,
    database=None,
)
@given(env_id=st.sampled_from(AGREE), seed=st.integers(0, 2**16), resync=st.booleans())
def test_a_port_matches_itself_exactly(env_id: str, seed: int, resync: bool) -> None:
    """Law: a port against itself behind Gymnasium's API, through its bridge, agrees with
    zero tolerance, resynchronised or not (both compiled: eager and ``jit`` differ by an ulp)."""
    check_port_matches(
        gymnax.make(env_id),
        _GymnaxAsGymnasium(env_id),
        bridge=bridge_for(env_id),
        atol=0.0,
        rtol=0.0,
        episodes=1,
        max_steps=40,
        random_seed=seed,
        resync=resync,
    )
