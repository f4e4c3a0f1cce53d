"""GymnasiumVectorView: a PufferEnv as a Gymnasium VectorEnv, checked against Gymnasium's engines."""

from __future__ import annotations

import copy
import warnings

import gymnasium
import numpy as np
import pytest
from envs_for_layer import DyingAgentsEnv, NestedDictEnv, Walkers
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import batch_space
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from vector_envs import SampledEnv, SeededWalkers, Walker

from spacealg.emulation import GymnasiumPufferEnv, PettingZooPufferEnv, codec_for
from spacealg.emulation.spaces import emulate_observation_space
from spacealg.env import APIUsageError
from spacealg.ops import joint_space
from spacealg.strategies import gymnasium_spaces
from spacealg.vector import GymnasiumVectorView, puffer_env_flavour

MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]


def views() -> list[GymnasiumVectorView]:
    return [
        GymnasiumVectorView(SeededWalkers(3)),
        GymnasiumVectorView(Walkers(2), final_obs=False),
        GymnasiumVectorView(GymnasiumPufferEnv(gymnasium.make("CartPole-v1"))),
        GymnasiumVectorView(GymnasiumPufferEnv(NestedDictEnv())),
        GymnasiumVectorView(PettingZooPufferEnv(DyingAgentsEnv(dict_obs=True))),
    ]


@pytest.mark.parametrize("index", range(5))
def test_spaces_are_the_joint_spaces_of_the_single_spaces(index: int) -> None:
    view = views()[index]
    n = view.num_envs
    assert n == view.env.num_agents
    assert view.single_observation_space == view.env.single_observation_space
    assert view.single_action_space == view.env.single_action_space
    assert view.observation_space == joint_space(view.single_observation_space, n)
    assert view.action_space == joint_space(view.single_action_space, n)
    assert view.observation_space == batch_space(view.single_observation_space, n)
    assert view.action_space == batch_space(view.single_action_space, n)


@pytest.mark.parametrize("index", range(5))
@pytest.mark.parametrize("copy", [False, True])
def test_observations_are_the_buffer_unless_copy(index: int, copy: bool) -> None:
    view = views()[index]
    view.copy = copy
    view.action_space.seed(0)
    obs, _ = view.reset(seed=0)
    batches = [obs]
    for _ in range(12):
        obs, rewards, terminations, truncations, _ = view.step(view.action_space.sample())
        batches.append(obs)
        assert rewards.shape == terminations.shape == truncations.shape == (view.num_envs,)
        assert rewards is not view.env.rewards and terminations is not view.env.terminals
    for obs in batches:
        assert view.observation_space.contains(obs)
        assert (obs is view.env.observations) != copy
    if copy:
        assert len({id(b) for b in batches}) == len(batches)


def test_puffer_env_kind() -> None:
    assert puffer_env_flavour(SeededWalkers(2)) == "native"
    assert puffer_env_flavour(GymnasiumPufferEnv(Walker())) == "gymnasium"
    assert puffer_env_flavour(PettingZooPufferEnv(DyingAgentsEnv())) == "pettingzoo"
    with pytest.raises(TypeError, match="env must be a PufferEnv"):
        GymnasiumVectorView(Walker())


# ------------------------------------------------------------------------------- autoreset


def _lockstep(view: GymnasiumVectorView, reference: SyncVectorEnv, steps: int, seed: int = 3,
              compare_infos: bool = True) -> int:
    """Run both with the same seed and actions; return how many episode ends were seen."""
    obs, infos = view.reset(seed=seed)
    ref_obs, ref_infos = reference.reset(seed=seed)
    assert np.array_equal(obs, ref_obs)
    assert data_equivalence(infos, ref_infos)
    reference.action_space.seed(seed)
    ends = 0
    for _ in range(steps):
        actions = reference.action_space.sample()
        got = view.step(actions)
        want = reference.step(actions)
        assert np.array_equal(got[0], want[0])
        for a, b in zip(got[1:4], want[1:4]):
            assert np.array_equal(a, b) and a.dtype == b.dtype
        if compare_infos:
            assert data_equivalence(got[4], want[4]), (got[4], want[4])
        ends += int(np.sum(want[2] | want[3]))
    return ends


@pytest.mark.parametrize("mode", MODES[:2])
def test_emulated_autoreset_equals_sync_vector_env(mode: AutoresetMode) -> None:
    view = GymnasiumVectorView(GymnasiumPufferEnv(gymnasium.make("CartPole-v1")), autoreset_mode=mode)
    assert view.metadata["autoreset_mode"] == mode
    reference = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")], autoreset_mode=mode)
    assert _lockstep(view, reference, 120) >= 2


def test_native_autoreset_is_same_step_and_equals_sync_vector_env_infos_included() -> None:
    """The final-observation hook gives Gymnasium's final_obs/final_info (object array, masks)."""
    view = GymnasiumVectorView(SeededWalkers(4))
    assert view.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    reference = SyncVectorEnv([Walker] * 4, autoreset_mode=AutoresetMode.SAME_STEP)
    assert _lockstep(view, reference, 150) >= 4
    assert isinstance(view.logs, list)


def test_final_obs_are_the_users_and_match_gymnasiums_types() -> None:
    view = GymnasiumVectorView(SeededWalkers(3))
    reference = SyncVectorEnv([Walker] * 3, autoreset_mode=AutoresetMode.SAME_STEP)
    view.reset(seed=1)
    reference.reset(seed=1)
    kept = []
    for _ in range(60):
        got, want = view.step(np.full(3, 2)), reference.step(np.full(3, 2))
        if "final_obs" in want[4]:
            infos = got[4]
            assert infos["final_obs"].dtype == object and infos["_final_obs"].dtype == bool
            assert np.array_equal(infos["_final_obs"], want[4]["_final_obs"])
            assert np.array_equal(infos["_final_info"], want[4]["_final_info"])
            kept.append((infos, want[4]))
    assert len(kept) >= 2
    for got, want in kept:  # later ends and resets never changed what an earlier step handed out
        assert data_equivalence(got, want)


def test_a_native_env_without_the_hook_is_refused_unless_final_obs_false() -> None:
    with pytest.raises(APIUsageError, match="keeps_final_observations = True"):
        GymnasiumVectorView(Walkers(2))
    view = GymnasiumVectorView(Walkers(2), final_obs=False)
    assert view.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP and view.metadata["final_obs"] is False
    view.reset(seed=0)
    for _ in range(40):
        *_, infos = view.step(np.full(2, 2))
        assert "final_obs" not in infos
    with pytest.raises(TypeError, match="final_obs"):
        GymnasiumVectorView(SeededWalkers(2), final_obs="yes")
    declared = Walkers(2)
    declared.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # taken at its word: no final obs needed
    assert GymnasiumVectorView(declared).metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP


@pytest.mark.parametrize(
    "refused",
    [
        lambda view: view.__init__(Walkers(2)),  # no final-observation hook
        lambda view: view.__init__(object()),  # not a PufferEnv
        lambda view: view.__init__(SeededWalkers(2), copy="yes"),  # refused before the env is held
    ],
    ids=["no-hook", "not-a-puffer-env", "bad-copy"],
)
def test_a_view_whose_construction_was_refused_closes_quietly(refused) -> None:
    # the half-built instance Python finalises (VectorEnv's finaliser, where Gymnasium has one,
    # calls close): closing it raises nothing, and its finaliser prints nothing
    view = GymnasiumVectorView.__new__(GymnasiumVectorView)
    with pytest.raises((APIUsageError, TypeError)):
        refused(view)
    view.close()
    assert view.closed
    view.close()  # twice, as a finaliser after an explicit close


def test_save_final_observations_needs_the_declaration() -> None:
    env = Walkers(2)
    assert env.final_observations is None
    with pytest.raises(APIUsageError, match="keeps_final_observations"):
        env.save_final_observations(np.array([True, False]))
    hooked = SeededWalkers(2)
    assert hooked.final_observations.shape == hooked.observations.shape
    assert hooked.final_observations.dtype == hooked.observations.dtype


def test_native_env_declaring_its_mode_is_taken_at_its_word() -> None:
    env = SeededWalkers(2)
    env.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}
    assert GymnasiumVectorView(env).metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    with pytest.raises(ValueError, match="autoreset_mode"):
        GymnasiumVectorView(SeededWalkers(2), autoreset_mode=AutoresetMode.NEXT_STEP)
    with pytest.raises(ValueError, match="autoreset_mode"):
        GymnasiumVectorView(GymnasiumPufferEnv(Walker()), autoreset_mode="sometimes")


def test_disabled_autoreset_needs_a_reset_and_accepts_gymnasiums_reset_mask() -> None:
    view = GymnasiumVectorView(GymnasiumPufferEnv(Walker()), autoreset_mode=AutoresetMode.DISABLED)
    reference = SyncVectorEnv([Walker], autoreset_mode=AutoresetMode.DISABLED)
    view.reset(seed=5)
    reference.reset(seed=5)
    mask = np.array([True])
    for _ in range(200):
        got, want = view.step(np.array([2])), reference.step(np.array([2]))
        assert np.array_equal(got[0], want[0])
        if want[2][0]:
            break
    with pytest.raises(APIUsageError, match="DISABLED"):
        view.step(np.array([2]))
    obs, _ = view.reset(options={"reset_mask": mask})
    ref_obs, _ = reference.reset(options={"reset_mask": mask})
    assert np.array_equal(obs, ref_obs)
    with pytest.raises(ValueError, match="reset_mask"):
        GymnasiumVectorView(SeededWalkers(2)).reset(options={"reset_mask": np.array([True, False])})
    with pytest.raises(TypeError, match="reset_mask"):
        view.reset(options={"reset_mask": [True]})


def test_pettingzoo_agents_stay_ended_until_all_end_then_reset_next_step() -> None:
    env = PettingZooPufferEnv(DyingAgentsEnv(n_agents=3, max_steps=6))
    view = GymnasiumVectorView(env)
    view.reset(seed=0)
    ended = np.zeros(3, bool)
    for _ in range(40):
        _, _, terminations, truncations, _ = view.step(np.zeros(3, np.int64))
        now = terminations | truncations
        assert np.all(now[ended])  # an ended agent stays ended (and masked) until all have ended
        assert not env.masks[ended].any()
        ended |= now
        if env.done:
            _, rewards, terminations, truncations, _ = view.step(np.zeros(3, np.int64))
            assert not terminations.any() and not truncations.any() and not rewards.any()
            assert env.masks.all()
            return
    pytest.fail("the PettingZoo environment never ended")


# ------------------------------------------------------------------------------- seeding


def test_reset_seeds_agent_i_with_seed_plus_i() -> None:
    view = GymnasiumVectorView(SeededWalkers(3))
    reference = SyncVectorEnv([Walker] * 3)
    for seed in (0, 7, [11, 12, 13]):
        obs, _ = view.reset(seed=seed)
        assert np.array_equal(obs, reference.reset(seed=seed)[0])
    single = GymnasiumVectorView(GymnasiumPufferEnv(Walker()))
    assert np.array_equal(single.reset(seed=[4])[0], SyncVectorEnv([Walker]).reset(seed=4)[0])
    assert view.reset(seed=[None, None, None])[0].shape == (3, 2)
    with pytest.raises(ValueError, match="seed"):
        view.reset(seed=[1, 3, 5])
    with pytest.raises(ValueError, match="num_envs=3"):
        view.reset(seed=[1, 2])
    with pytest.raises(TypeError, match="seed"):
        view.reset(seed="1")


# --------------------------------------------------------------- Gymnasium's own checks


def test_gymnasiums_vector_machinery_accepts_the_view() -> None:
    """Gymnasium 1.x ships no vector env checker; these are the checks its vector code makes:
    ``make_vec``'s metadata check (a warning), and the asserts of its vector wrappers."""
    gymnasium.register(
        "spacealg-test/SeededWalkers-v0",
        vector_entry_point=lambda num_envs, **kwargs: GymnasiumVectorView(SeededWalkers(num_envs)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        envs = gymnasium.make_vec("spacealg-test/SeededWalkers-v0", num_envs=3, vectorization_mode="vector_entry_point")
    envs = gymnasium.wrappers.vector.RecordEpisodeStatistics(envs)
    envs = gymnasium.wrappers.vector.DictInfoToList(envs)
    envs.reset(seed=0)
    episodes = 0
    for _ in range(40):
        *_, infos = envs.step(np.full(3, 2))  # walk right: every walker falls off within 20 steps
        episodes += sum("episode" in info for info in infos)
    assert episodes > 0
    normalized = gymnasium.wrappers.vector.NormalizeObservation(GymnasiumVectorView(GymnasiumPufferEnv(Walker())))
    normalized.reset(seed=0)
    normalized.step(normalized.action_space.sample())
    with pytest.raises((AssertionError, ValueError)):  # SAME_STEP: Gymnasium's observation wrappers refuse it
        gymnasium.wrappers.vector.NormalizeObservation(GymnasiumVectorView(SeededWalkers(2)))


# --------------------------------------------------- any observation space, emulated


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(
    space=gymnasium_spaces(max_depth=2, classes=("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Tuple", "Dict")),
    mode=st.sampled_from(MODES[:2]),
    seed=st.integers(0, 2**16),
)
def test_emulated_view_nativizes_to_sync_vector_env_of_the_raw_env(space, mode, seed) -> None:
    try:
        emulate_observation_space(space)
    except (ValueError, TypeError):
        assume(False)
    view = GymnasiumVectorView(GymnasiumPufferEnv(SampledEnv(copy.deepcopy(space))), autoreset_mode=mode)
    reference = SyncVectorEnv([lambda: SampledEnv(copy.deepcopy(space))], autoreset_mode=mode)
    codec = codec_for(space, "observation")
    obs, infos = view.reset(seed=seed)
    ref_obs, ref_infos = reference.reset(seed=seed)
    assert data_equivalence(codec.nativize_batch(obs), ref_obs)
    assert data_equivalence(infos, ref_infos)
    for t in range(5):
        got, want = view.step(np.array([t % 2])), reference.step(np.array([t % 2]))
        assert view.observation_space.contains(got[0])
        assert data_equivalence(codec.nativize_batch(got[0]), want[0])
        assert np.array_equal(got[1], want[1]) and got[1].dtype == want[1].dtype
        assert np.array_equal(got[2], want[2])
        if mode == AutoresetMode.SAME_STEP and "final_obs" in want[4]:
            final = got[4]["final_obs"][0]
            assert np.array_equal(final, codec.emulate(want[4]["final_obs"][0]))  # the final rows, emulated
        else:
            assert data_equivalence(got[4], want[4])


# ------------------------------------------- spacealg's vector checker (check_vector_env)


class HooklessWalkers(SeededWalkers):
    """SeededWalkers without the final-observation hook (as most native envs are written)."""

    keeps_final_observations = False

    def save_final_observations(self, rows) -> None:
        pass


def test_check_vector_env_holds_on_a_native_view() -> None:
    from spacealg.testing import check_vector_env

    report = check_vector_env(lambda: GymnasiumVectorView(SeededWalkers(3)), single=Walker, max_examples=6,
                              max_steps=40)
    assert {"autoreset", "sub-env-seeding", "rows-match-sub-envs"} <= set(report.properties)


class OneRngWalkers(SeededWalkers):
    """SeededWalkers whose agents all draw from one generator (seeded by reset): a sound
    multi-agent env whose rows are not sub-envs seeded ``seed + i``. Every step draws a
    restart position for every agent, so one agent's action never shifts another's draws."""

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[dict]]:
        self.rng = np.random.default_rng(seed)
        self.draws = self.rng.uniform(-1, 1, self.num_agents)
        self.observations[:, 0], self.observations[:, 1] = self.draws, 0
        self.rewards[:], self.terminals[:], self.truncations[:] = 0, False, False
        return self.observations, []

    def _restart(self, i: int) -> None:
        self.observations[i] = (self.draws[i], 0)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        self.draws = self.rng.uniform(-1, 1, self.num_agents)
        return super().step(actions)


def test_a_native_view_whose_agents_share_one_generator_passes() -> None:
    # issue 35: sub-env-seeding is Gymnasium's convention for a batch of identical envs; agents
    # drawn from one generator owe it nothing, and owe what every vector env owes (rows-differ)
    from spacealg.testing import check_vector_env

    report = check_vector_env(lambda: GymnasiumVectorView(OneRngWalkers(3)), max_examples=6, max_steps=40)
    verdicts = report.verdicts()
    assert verdicts["sub-env-seeding"].startswith("not checked: the rows are not declared a batch of identical")
    assert verdicts["rows-differ"] == verdicts["autoreset"] == verdicts["reset-determinism"] == "held"


@pytest.mark.parametrize("mode", MODES)
def test_check_vector_env_holds_on_an_emulated_view(mode: AutoresetMode) -> None:
    from spacealg.testing import check_vector_env

    def emulated() -> GymnasiumPufferEnv:
        return GymnasiumPufferEnv(NestedDictEnv(max_steps=6))

    report = check_vector_env(lambda: GymnasiumVectorView(emulated(), autoreset_mode=mode), single=emulated,
                              max_examples=5, max_steps=20)
    assert "autoreset" in report.properties


def test_check_vector_env_reports_a_native_view_without_final_obs() -> None:
    from spacealg.testing import EnvCheckError, check_vector_env

    with pytest.raises(EnvCheckError, match="'autoreset' failed"):
        check_vector_env(lambda: GymnasiumVectorView(HooklessWalkers(3), final_obs=False), single=Walker,
                         max_examples=6, max_steps=40)


def test_pettingzoo_same_step_final_obs_are_each_agents_last_row() -> None:
    env = PettingZooPufferEnv(DyingAgentsEnv(n_agents=3, max_steps=8))
    view = GymnasiumVectorView(env, autoreset_mode=AutoresetMode.SAME_STEP)
    view.reset(seed=2)
    last_rows: dict[int, np.ndarray] = {}
    for _ in range(20):
        obs, _, terminations, truncations, infos = view.step(np.zeros(3, np.int64))
        if "final_obs" in infos:
            assert infos["_final_obs"].all() and env.masks.all()  # the whole env ended and reset
            for i, row in last_rows.items():
                assert np.array_equal(infos["final_obs"][i], row)  # the row agent i ended with
            assert len(last_rows) >= 1
            return
        for i in np.flatnonzero((terminations | truncations) & env.masks):
            last_rows.setdefault(int(i), obs[i].copy())  # present in the step that ended it
    pytest.fail("the PettingZoo environment never ended")
