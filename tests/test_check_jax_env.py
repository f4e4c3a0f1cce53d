"""check_jax_env (issue 24): each law catches the toy environment that breaks it, the sound
toys pass, failures come with a JAX reproduction that fails, and a few real gymnax and
Jumanji environments pass under a bounded budget."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("hypothesis")

from spacealg.testing import check, check_jax_env
from spacealg.testing.jax_env import JAX_PROPERTIES, JaxEnvCheckError, replay_jax
from tests.jax_toy_envs import Undeclared, make_line, make_walk

FAST = {"max_examples": 4, "max_steps": 30, "batch": 8, "determinism": False}
"""The trajectory laws need neither the replays nor eager execution."""

RELATIONAL = {"max_examples": 6, "max_steps": 12, "batch": 4, "eager_steps": 3}


def _failure(env, **options) -> JaxEnvCheckError:
    """The error of a check that stops at the first broken property (``max_broken=1``), unless
    ``options`` ask for more: what these tests read."""
    with pytest.raises(JaxEnvCheckError) as caught:
        check_jax_env(env, **{"max_broken": 1, **options})
    return caught.value


def test_sound_walk_passes_every_law():
    report = check_jax_env(lambda: make_walk(), max_examples=8, max_steps=30, batch=8, eager_steps=4)
    assert set(report.properties) | set(report.not_checked) == set(JAX_PROPERTIES)
    assert report.steps == 8 * 30 * 8 and report.style == "gymnax"
    assert {"batching", "purity", "jit-eager", "global-rng", "compile-once"} <= set(report.properties)


def test_sound_line_passes_every_law():
    pytest.importorskip("jumanji")
    report = check_jax_env(lambda: make_line(), max_examples=8, max_steps=30, batch=8, eager_steps=4)
    assert {"action-mask", "discount-in-space", "episode-end", "batching"} <= set(report.properties)


@pytest.mark.parametrize(
    "bug",
    ["observation-in-space", "declared-dtypes", "finite-values", "reward-in-space", "max-episode-steps",
     "compile-once", "no-exception", "info-dict"],
)
def test_each_gymnax_style_defect_is_caught_by_its_law(bug):
    error = _failure(lambda: make_walk(bug), **FAST)
    assert error.property == bug, str(error)
    assert error.statement == JAX_PROPERTIES[bug]


@pytest.mark.parametrize("bug", ["action-mask", "discount-in-space", "episode-end"])
def test_each_jumanji_style_defect_is_caught_by_its_law(bug):
    pytest.importorskip("jumanji")
    error = _failure(lambda: make_line(bug), **FAST)
    assert error.property == bug, str(error)


@pytest.mark.parametrize("bug", ["purity", "global-rng", "jit-eager", "batching"])
def test_each_relational_defect_is_caught_by_its_law(bug):
    error = _failure(lambda: make_walk(bug), **RELATIONAL)
    assert error.property == bug, str(error)


def test_an_episode_limit_beyond_max_steps_is_reached_by_one_example_in_eight():
    """Issue 35: with ``max_steps`` (12) short of ``max_steps_in_episode`` (20), the long
    examples run just past the limit: an env that never ends an episode by it is caught
    there (at step 20, which must end it), its reproduction fails with JAX, and the sound
    walk passes with max-episode-steps held."""
    options = {**FAST, "max_examples": 16, "max_steps": 12}
    error = _failure("tests.jax_toy_envs:walk_endless_bug", **options)
    assert error.property == "max-episode-steps" and error.step == 20, str(error)
    with pytest.raises(AssertionError):
        exec(compile(error.reproduction(), "<reproduction>", "exec"), {})
    assert "max-episode-steps" in check_jax_env(lambda: make_walk(), **options).properties


def test_a_limit_no_episode_reached_is_not_checked():
    """Issue 35: gymnax's CartPole under random actions never lasts its 500 steps, so
    ``max-episode-steps`` (then folded into episode-end) read as held although no episode
    put it to the test. The walk with a limit of 5,000 steps (beyond the long examples' cap)
    and 12 steps drawn: not checked, with why; held where some episode ran to the limit."""
    from tests.jax_toy_envs import WalkParams

    report = check_jax_env((make_walk(), WalkParams(5000)), **{**FAST, "max_steps": 12})
    assert "max-episode-steps" not in report.properties
    assert "limit" in report.not_checked["max-episode-steps"]
    assert "max-episode-steps" in check_jax_env(lambda: make_walk(), **FAST).properties  # 30 steps


def test_every_broken_property_is_reported_with_its_own_shortest_reproduction():
    """Issue 35: a JAX check runs on the engine's loop, so a second broken property is not
    hidden behind the first: the walk whose reward is NaN from step 1 and whose observation
    leaves its Box after a few moves the same way reports both, each with the seed and actions
    that break it again, and holds or leaves unchecked the rest."""
    import jax.numpy as jnp

    class TwoDefects(type(make_walk())):
        bug = "observation-in-space"

        def step(self, key, state, action, params=None):
            obs, state, reward, done, info = super().step(key, state, action, params)
            return obs, state, reward * jnp.nan, done, info

    error = _failure(TwoDefects, **{**FAST, "max_examples": 8, "max_broken": 8})
    assert [e.property for e in error.broken] == ["finite-values", "observation-in-space"], str(error)
    assert error.step == 1 and error.also[0].step == len(error.also[0].actions) >= 3
    for broken in error.broken:
        assert broken.reproduction().rstrip().splitlines()[-1].startswith("assert ")
        with pytest.raises(JaxEnvCheckError):
            replay_jax(TwoDefects, broken.seed, broken.actions)
    assert {"reward-in-space", "episode-end"} <= set(error.held)
    assert set(error.verdicts()) == set(JAX_PROPERTIES)


def test_the_final_observation_message_names_the_step_where_the_episode_ended():
    # issue 35: gymnax 1.x puts the step's own observation in info["final_observation"] at
    # every step; an observation that leaves the (too narrow) Box mid-episode is blamed on
    # that step, not on "the final observation of the episode"
    from tests.jax_toy_envs import walk_final_in_info_bug

    error = _failure(walk_final_in_info_bug, **FAST)
    assert error.property == "observation-in-space"
    assert "final observation of the episode" not in error.detail, error.detail
    assert error.detail.startswith(f"the observation after step {error.step} is not in the observation space")


def test_illegal_actions_are_drawn_only_when_asked():
    pytest.importorskip("jumanji")
    check_jax_env(lambda: make_line("illegal-action"), **FAST)  # the mask keeps the walker on the line
    wide = {**FAST, "illegal_actions": True, "max_steps": 100, "batch": 32, "max_examples": 10}
    error = _failure(lambda: make_line("illegal-action"), **wide)  # a walk to x = -10, then a step off
    assert error.property == "illegal-action" and "outside the mask" in error.detail


def test_undeclared_spaces_are_reported():
    assert _failure(Undeclared, **FAST).property == "declared-spaces"


def test_the_library_sampler_is_checked_against_its_space():
    spaces = pytest.importorskip("gymnax.environments.spaces")
    import jax

    class Overflowing(spaces.Discrete):
        def sample(self, key):  # one value too many
            return jax.random.randint(key, (), 0, self.n + 1, dtype=self.dtype)

    class Sampled(type(make_walk())):
        def action_space(self, params):
            return Overflowing(3)

    error = _failure(Sampled, **FAST)
    assert error.property == "action-in-space"
    assert "gymnax's space.contains(value) is False" in error.detail


def test_a_failure_is_the_shortest_prefix_for_its_seed_and_replays():
    error = _failure("tests.jax_toy_envs:walk_observation_bug", **FAST)
    assert error.property == "observation-in-space" and error.step == len(error.actions) >= 3
    with pytest.raises(JaxEnvCheckError) as again:
        replay_jax("tests.jax_toy_envs:walk_observation_bug", error.seed, error.actions)
    assert again.value.property == "observation-in-space"
    replay_jax("tests.jax_toy_envs:walk_observation_bug", error.seed, error.actions[:-1])  # one step short: holds


@pytest.mark.parametrize(
    "target, options",
    [("tests.jax_toy_envs:walk_observation_bug", FAST), ("tests.jax_toy_envs:line_mask_bug", FAST),
     ("tests.jax_toy_envs:walk_batching_bug", RELATIONAL), ("tests.jax_toy_envs:walk_info_bug", FAST)],
)
def test_the_reproduction_replays_with_jax_and_fails_on_its_assertion(target, options):
    if "line" in target:
        pytest.importorskip("jumanji")
    error = _failure(target, **options)
    snippet = error.reproduction()
    assert snippet.rstrip().splitlines()[-1].startswith("assert ")
    with pytest.raises(AssertionError):
        exec(compile(snippet, "<reproduction>", "exec"), {})


def test_the_same_random_seed_gives_the_same_failure():
    first = _failure(lambda: make_walk("observation-in-space"), **FAST)
    second = _failure(lambda: make_walk("observation-in-space"), **FAST)
    assert (first.seed, first.step) == (second.seed, second.step)
    assert all(np.array_equal(a, b) for a, b in zip(first.actions, second.actions))


def test_check_dispatches_jax_environments_to_check_jax_env():
    with pytest.raises(JaxEnvCheckError) as caught:
        check(lambda: make_walk("observation-in-space"), **FAST)
    assert caught.value.kind == "jax"


def test_bad_options_are_rejected_by_name():
    for name, value in (("batch", 0), ("max_steps", -1), ("eager_steps", -1), ("budget", -1.0)):
        with pytest.raises(ValueError, match=name):
            check_jax_env(lambda: make_walk(), **{name: value})
    with pytest.raises(TypeError, match=r"returned <object object at .*>.*not an environment"):
        check_jax_env(lambda: object(), **FAST)  # not an environment of any kind (issue 35: named by env)


# -- real environments, bounded -------------------------------------------------------------

REAL = {"max_examples": 3, "max_steps": 50, "batch": 16, "eager_steps": 2}


def test_gymnax_cartpole_passes():
    pytest.importorskip("gymnax", reason="gymnax is not importable (installed with --no-deps: it pins gymnasium<1.4)")
    report = check_jax_env("gymnax:CartPole-v1", **REAL)
    assert report.style == "gymnax" and "action-in-space" in report.properties


def test_jumanji_snake_passes():
    pytest.importorskip("jumanji")
    report = check_jax_env("jumanji:Snake-v1", **{**REAL, "determinism": False})
    assert report.style == "jumanji" and "action-mask" in report.properties


def test_the_cli_checks_a_jax_environment_and_prints_its_reproduction(capsys):
    from spacealg.cli import main

    status = main(["check", "tests.jax_toy_envs:walk_observation_bug", "--examples", "3", "--max-steps", "30",
                   "--no-determinism"])
    printed = capsys.readouterr().out
    assert status == 1
    assert "FAILED: observation-in-space" in printed and "Reproduce with:" in printed
    assert "assert is_member(obs, space)" in printed


def test_jax_ids_resolve_to_the_library_make():
    from spacealg.cli.common import resolve_target

    pytest.importorskip("jumanji")
    target = resolve_target("jumanji:Snake-v1")
    assert target.construction == "env = jumanji.make('Snake-v1')" and target.imports == ("import jumanji",)


@pytest.mark.parametrize("mask_shape", [(3, 2), (2, 3)])
def test_masked_draws_of_a_multi_discrete_action_are_legal(mask_shape):
    """A joint mask (one entry per action, BinPack's) and a mask per factor (one row per
    factor, Connector's), traced abstractly too (the compile-once probe draws with an
    abstract mask)."""
    import jax
    import jax.numpy as jnp

    from spacealg.adapters.jax_protocols import Protocol
    from spacealg.spaces.categorical import Categorical
    from spacealg.testing.jax_env.laws import is_legal
    from spacealg.testing.jax_env.rollout import drawer

    space = Categorical([3, 2], dtype=np.int32)
    protocol = Protocol("jumanji", None, lambda k: (None, {}), lambda *a: (None, {}), None, space)
    draw = drawer(protocol, masks=True, illegal=False)
    mask = np.zeros(mask_shape, bool)
    if mask_shape == (3, 2):
        mask[2, 1] = mask[0, 1] = True
    else:
        mask[0, 1] = mask[1, 0] = True
    assert jax.eval_shape(draw, jax.random.key(0), jax.ShapeDtypeStruct(mask_shape, jnp.bool_)).shape == (2,)
    for i in range(20):
        action = np.asarray(jax.jit(draw)(jax.random.key(i), jnp.asarray(mask)))
        assert is_legal(mask, action, space), (mask, action)


def test_the_compile_once_probe_draws_under_an_abstract_multi_discrete_mask():
    """Regression: the probe closed over the abstract mask as a constant, which read as a 0-d
    mask, so every environment with a joint multi-discrete mask (BinPack) failed no-exception."""
    import jax.numpy as jnp

    from spacealg.adapters.jax_protocols import Protocol
    from spacealg.spaces.box import Box
    from spacealg.spaces.categorical import Categorical
    from spacealg.testing.jax_env.relations import compile_once
    from spacealg.testing.jax_env.rollout import Rollouts

    def out(state):
        return {"observation": state, "mask": jnp.ones((3, 2), bool)}

    protocol = Protocol(
        "jumanji", None, lambda key: (jnp.zeros(2), out(jnp.zeros(2))),
        lambda state, action, key, again: (state + action, out(state + action)),
        Box(-np.inf, np.inf, shape=(2,), dtype=np.float32), Categorical([3, 2], dtype=np.int32),
    )
    compile_once(protocol, Rollouts(protocol, 3, True, False))


def test_a_sound_brax_style_environment_passes():
    from tests.jax_toy_envs import Slide

    report = check_jax_env(Slide, **FAST)
    assert report.style == "brax" and "observation-in-space" in report.properties


def test_rounding_amplified_by_one_step_is_not_a_batching_or_jit_eager_defect():
    """Regression (the sweep's jaxmarl:ant_4x2, Brax's ant: batched and unbatched steps from
    one state differ by 2e-5, as one rounding unit of the state makes them): a difference at a
    step no larger than what the step makes of one-unit changes of its state is rounding; a
    larger one still breaks batching."""
    from tests.jax_toy_envs import Stiff

    report = check_jax_env(lambda: Stiff(nudge=1), **RELATIONAL)
    assert {"batching", "jit-eager"} <= set(report.properties)
    error = _failure(lambda: Stiff(nudge=1000), **RELATIONAL)
    assert error.property == "batching", str(error)


def test_a_pgx_environment_passes():
    pytest.importorskip("pgx")
    report = check_jax_env("pgx:tic_tac_toe", **{**FAST, "max_examples": 2, "max_steps": 20})
    assert report.style == "pgx" and "action-mask" in report.properties


def test_a_mask_per_agent_may_empty_a_finished_agents_row():
    """Regression (MMST-v0 in the sweep): Jumanji masks a finished agent's row by design;
    the law asks for one legal action in some row, not in every row."""
    from spacealg.spaces.categorical import Categorical
    from spacealg.testing.jax_env.laws import mask_factors

    space = Categorical([4, 4, 4], dtype=np.int32)
    masks = np.zeros((2, 3, 4), bool)
    masks[0, 1, 2] = True  # agents 0 and 2 finished, agent 1 may move
    allowed, why = mask_factors(masks, space, 1)
    assert allowed.tolist() == [True, False] and why == ""


def test_a_probe_failure_reproduces_through_its_snippet():
    error = _failure("tests.jax_toy_envs:walk_compile_bug", **FAST)
    assert error.property == "compile-once" and error.seed is None
    with pytest.raises(AssertionError, match="compile-once"):
        exec(compile(error.reproduction(), "<reproduction>", "exec"), {})


# -- JaxMARL and XLand-MiniGrid protocols (toys: no optional library needed) ---------------


def test_a_sound_jaxmarl_style_environment_passes_with_its_masks():
    from tests.jax_toy_envs import make_pair

    report = check_jax_env(make_pair, **{**RELATIONAL, "max_examples": 3})
    assert report.style == "jaxmarl"
    assert {"action-mask", "observation-in-space", "reward-in-space", "batching"} <= set(report.properties)


@pytest.mark.parametrize("bug", ["observation-in-space", "reward-in-space", "action-mask"])
def test_each_jaxmarl_style_defect_is_caught_by_its_law(bug):
    from tests.jax_toy_envs import make_pair

    error = _failure(lambda: make_pair(bug), **FAST)
    assert error.property == bug, str(error)


def test_a_jaxmarl_style_environment_of_tuples_indexed_by_integer_agents_is_read_by_index():
    """Regression (the sweep's jaxmarl:storm_2p: observations a tuple indexed by its agents
    0 and 1 were 'not in the space', and the failure's message raised TypeError): such an
    environment is read as ``obs[agent]`` and given its actions as a tuple."""
    from tests.jax_toy_envs import IndexedPair

    seen = []
    env = IndexedPair()
    inner_step = env.inner.step_env

    def spy(key, state, actions):
        seen.append({k: getattr(v, "shape", type(v)) for k, v in actions.items()})
        return inner_step(key, state, actions)

    env.inner.step_env = spy
    report = check_jax_env(lambda: env, **FAST)
    assert {"observation-in-space", "reward-in-space"} <= set(report.properties)
    assert seen and all(s == {"a0": (), "a1": ()} for s in seen)  # traced arrays, not the dict's keys 0 and 1


def test_a_jaxmarl_style_drawn_action_is_legal_for_every_agent():
    """The draws follow each agent's own mask (a dict of masks, uint8 read as bool)."""
    import jax

    from spacealg.adapters.jax_protocols import adapt
    from spacealg.testing.jax_env.laws import first_illegal
    from spacealg.testing.jax_env.rollout import Rollouts
    from tests.jax_toy_envs import make_pair

    protocol = adapt(make_pair())
    rollouts = Rollouts(protocol, 20, masks=True, illegal=False)
    seeds = np.arange(16, dtype=np.uint32)
    out0, traj, _ = jax.device_get(rollouts.drawn(seeds, jax.random.split(jax.random.key(1), 16)))
    assert all(first_illegal(protocol, out0, traj, row, 20) is None for row in range(16))
    assert np.asarray(out0["mask"]["a0"]).dtype == bool


def test_a_sound_xminigrid_style_environment_passes():
    from tests.jax_toy_envs import make_track

    report = check_jax_env(make_track, **{**RELATIONAL, "max_examples": 3, "max_steps": 20})
    assert report.style == "xminigrid"
    assert {"episode-end", "discount-in-space", "observation-in-space"} <= set(report.properties)
    assert "declared-dtypes" in report.not_checked  # XLand-MiniGrid declares shapes, not dtypes


@pytest.mark.parametrize("bug", ["observation-in-space", "episode-end", "discount-in-space"])
def test_each_xminigrid_style_defect_is_caught_by_its_law(bug):
    from tests.jax_toy_envs import make_track

    error = _failure(lambda: make_track(bug), **FAST)
    assert error.property == bug, str(error)


def test_every_jax_id_prefix_has_a_maker_whose_snippet_lines_name_it():
    from spacealg.adapters.envs import JAX_PREFIXES, MAKERS, jax_maker

    assert set(MAKERS) == set(JAX_PREFIXES)
    with pytest.raises(ValueError, match="not a JAX id"):
        jax_maker("nolib:Thing")
    pytest.importorskip("navix")
    _, construction, imports = jax_maker("navix:Navix-Empty-5x5-v0")
    assert construction == "env = ToGymnax.wrap(navix.make('Navix-Empty-5x5-v0'))"
    assert imports == ("import navix", "from navix.environments.wrappers import ToGymnax")


def test_the_cli_makes_a_craftax_id_with_its_keywords_as_its_snippet_prints():
    pytest.importorskip("craftax")
    from spacealg.cli.common import resolve_target

    target = resolve_target("craftax:Craftax-Classic-Symbolic-v1")
    assert target.construction == "env = make_craftax_env_from_name('Craftax-Classic-Symbolic-v1', auto_reset=True)"
    scope: dict = {}
    exec("\n".join([*target.imports, target.construction]), scope)
    assert type(scope["env"]) is type(target.make())
    assert type(resolve_target("craftax:Craftax-Classic-Symbolic-v1", ["auto_reset=False"]).make()).__name__.endswith(
        "NoAutoReset")


def test_the_automatic_reset_merges_a_node_that_merges_itself_through_its_where():
    """Regression (playground:CartpoleBalance in the sweep): MJX's Warp ``Data`` must be
    merged by ``Data.where`` (it keeps its unbatched fields); the checker's leaf-by-leaf
    select batched them and the compiled rollout raised inside MuJoCo's FFI."""
    from dataclasses import dataclass

    import jax
    import jax.numpy as jnp

    from spacealg.adapters.jax_protocols import _select

    @jax.tree_util.register_dataclass
    @dataclass
    class Data:
        qpos: jax.Array
        shared: jax.Array  # not batched: where() keeps the running value
        shape: tuple = ()  # MJX's Data has a shape attribute too

        def where(self, done, other):
            return Data(jnp.where(done, other.qpos, self.qpos), self.shared, self.shape)

    fresh = {"data": Data(jnp.zeros(2), jnp.full(3, 7.0)), "obs": jnp.zeros(2)}
    kept = {"data": Data(jnp.ones(2), jnp.full(3, 1.0)), "obs": jnp.ones(2)}
    merged = _select(jnp.bool_(True), fresh, kept)
    assert merged["data"].qpos.tolist() == [0.0, 0.0] and merged["obs"].tolist() == [0.0, 0.0]
    assert merged["data"].shared.tolist() == [1.0, 1.0, 1.0]  # Data.where's choice, not the fresh leaf
    assert _select(jnp.bool_(False), fresh, kept)["data"].qpos.tolist() == [1.0, 1.0]


def test_a_pettingzoo_style_parallel_env_is_not_taken_for_jaxmarl():
    """Regression: PettingZoo's parallel API has JaxMARL's agents and per-agent space methods;
    only JaxMARL's ``step_env`` tells them apart, so ``check`` keeps PettingZoo envs on
    ``check_parallel_env``."""
    from spacealg.testing.jax_env import is_jax_env
    from tests.jax_toy_envs import make_pair

    class Parallel:
        agents = ("a0", "a1")

        def observation_space(self, agent):
            return None

        action_space = observation_space

        def reset(self, seed=None, options=None):
            raise AssertionError("reset must not be called to tell the API")

        def step(self, actions):
            raise AssertionError("step must not be called to tell the API")

    assert not is_jax_env(Parallel()) and is_jax_env(make_pair())


def test_rounding_within_accepts_what_the_sensitivity_explains_and_nothing_more():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from spacealg.testing.jax_env.rounding import SLACK, within

    floats = st.floats(-1e3, 1e3, width=32)

    @settings(max_examples=50, deadline=None)
    @given(st.lists(floats, min_size=1, max_size=5), st.floats(0, 1, width=32), st.integers(0, 3))
    def law(values, change, k):
        a = {"obs": np.asarray(values, np.float32), "t": np.asarray(k, np.int32)}
        c = {"obs": np.full(len(values), change), "t": np.zeros(())}
        assert within(a, a, c, 1e-5, 1e-6)
        moved = {**a, "obs": a["obs"] + np.float32(0.5 * SLACK * change)}
        assert within(moved, a, c, 1e-5, 1e-6)  # float32 rounds the move by less than rtol * |a| + atol
        far = {**a, "obs": a["obs"] + np.float32(2 * SLACK * change + 1)}
        assert not within(far, a, c, 1e-5, 1e-6)
        other = {**a, "t": np.asarray(k + 1, np.int32)}
        assert not within(other, a, {**c, "t": np.full((), 1e9)}, 1e-5, 1e-6)

    law()


def test_the_eager_run_records_the_state_each_step_was_given_even_if_it_changes_it_in_place():
    """Regression (the sweep's navix rows: navix's eager step assigns into its input state's
    dict, so the eager state recorded before a step read as the state after it, and the
    jit-eager confirmation 'from identical inputs' replayed a step from the wrong state)."""
    import jax

    from spacealg.testing.jax_env import adapt
    from spacealg.testing.jax_env.rollout import Rollouts

    rollouts = Rollouts(adapt(make_walk("in-place")), horizon=4, masks=True, illegal=False)
    actions = np.ones(4, np.int32)
    seen = rollouts.eager(0, actions, 4)
    assert [int(jax.tree.leaves(state)[1]) for state, _ in seen] == [0, 1, 2, 3, 4]


def test_an_eager_step_that_changes_the_state_it_is_given_fails_purity_and_replays():
    """Regression (navix: run eagerly, ``step`` assigns into its input state's dict, so a
    caller keeping a state to replay or branch from finds it changed; the trajectories agree,
    so no other law saw it). The sound walk, run eagerly as well, passes (above)."""
    error = _failure(lambda: make_walk("in-place"), **RELATIONAL)
    assert error.property == "purity" and "changes the state it is given in place" in error.detail, str(error)
    assert error.step == 1 and "t" in error.detail
    with pytest.raises(JaxEnvCheckError) as again:
        replay_jax(make_walk("in-place"), error.seed, error.actions)
    assert again.value.property == "purity"


def test_changed_tells_a_state_changed_in_place_from_one_rebuilt_with_equal_values():
    import jax
    import jax.numpy as jnp

    from spacealg.testing.jax_env.rollout import _copied, changed

    state = {"grid": np.zeros(3, np.int32), "pos": jnp.arange(2), "key": jax.random.key(1), "n": 3}
    copy = _copied(state)
    assert changed(state, copy) is None
    assert changed({**state, "pos": jnp.arange(2)}, copy) is None  # a new array of equal value
    state["grid"][1] = 7  # NumPy written in place
    assert changed(state, copy) == "['grid']"
    state = {**copy, "pos": jnp.arange(2) + 1}
    assert changed(state, _copied(copy)) == "['pos']"
    assert changed({**copy, "key": jax.random.key(2)}, _copied(copy)) == "['key']"
    assert changed({**copy, "extra": 0}, _copied(copy)) == "its pytree structure"
    assert changed({**copy, "pos": jnp.arange(2, dtype=jnp.float32)}, _copied(copy)) == "['pos']"


def test_changed_finds_exactly_the_leaf_written_in_place():
    """``changed``'s laws over generated states: a state equals its ``_copied`` copy, and so
    does one rebuilt from new leaves of equal value; writing one element of one NumPy leaf
    in place (any dtype, shape, NaN included) is found, at that leaf's path, and the copy
    keeps the value it had (the examples above checked one state)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import array_shapes, arrays

    from spacealg.testing.jax_env.rollout import _copied, changed

    leaves = arrays(st.sampled_from([np.int32, np.uint8, np.float32, np.bool_]), array_shapes(min_dims=0, max_side=3))

    @settings(max_examples=60, deadline=None)
    @given(st.dictionaries(st.sampled_from("abcd"), leaves, min_size=1), st.data())
    def law(state, data):
        copy = _copied(state)
        assert changed(state, copy) is None
        assert changed({k: v.copy() for k, v in state.items()}, copy) is None
        name = data.draw(st.sampled_from(sorted(state)))
        leaf = state[name]
        at = np.unravel_index(data.draw(st.integers(0, leaf.size - 1)), leaf.shape)
        old = leaf[at].item()
        leaf[at] = (not old) if leaf.dtype == np.bool_ else (old ^ 1 if leaf.dtype.kind in "iu" else (old != 1) + 1)
        assert changed(state, copy) == f"[{name!r}]"
        assert np.asarray(copy[name][at]).item() == old or np.isnan(old)

    law()


def test_a_python_scalar_returned_eagerly_is_compared_as_jax_would_type_it():
    """Regression (the sweep's Jumanji SearchAndRescue-v0 failed jit-eager at reset:
    `observation.step` is the Python int 0 run eagerly (its State declares `step: int = 0`)
    and a weakly typed int32 compiled; read through NumPy, the eager value was int64, so equal
    values differed by dtype, reported once a rounding-sized difference at a later step made
    the runs unequal). A toy whose reset's reward is the Python float 0.0 and whose compiled
    rewards differ from the eager ones by 1e-7 passes (the weak type, a compile-once matter, is
    skipped as the sweep skips a law once failed)."""
    pytest.importorskip("jumanji")
    check_jax_env(lambda: make_line("python-scalar"), skip=["compile-once"], **RELATIONAL)


@pytest.mark.parametrize(
    "factory, bug",
    [("walk", ""), ("walk", "observation-in-space"), ("walk", "finite-values"), ("walk", "max-episode-steps"),
     ("walk", "final-in-info"), ("line", ""), ("pair", "")],
)
def test_the_laws_checked_in_the_compiled_rollout_agree_with_the_laws_on_every_row(factory, bug):
    """Issue 35.7: the search reads the first failing column of the screened laws from the
    compiled rollout (``laws.screen``) and runs the law itself only on the failing row. On
    every row of Hypothesis-drawn batches (sound and broken walks, Jumanji's records,
    JaxMARL's per-agent dicts), the screen's column is the law's first failing column, and
    ``first_violation`` with the screen finds what it finds without."""
    import jax
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from spacealg.testing.jax_env import adapt
    from spacealg.testing.jax_env.check import _keys, _seeds
    from spacealg.testing.jax_env.laws import ORDER, SCREENED, first_violation
    from spacealg.testing.jax_env.rollout import Rollouts
    from tests import jax_toy_envs

    if factory == "line":
        pytest.importorskip("jumanji")
    protocol = adapt(getattr(jax_toy_envs, f"make_{factory}")(bug))
    rollouts, horizon, laws = Rollouts(protocol, 24, masks=True, illegal=False), 24, dict(ORDER)

    @settings(max_examples=4, deadline=None, database=None)
    @given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 24))
    def law(seed, action_seed, n):
        out0, traj, firsts = jax.device_get(rollouts.drawn(_seeds(seed, 6), _keys(action_seed, 6)))
        for name, columns in firsts.items():
            ok, _ = laws[name](protocol, out0, traj, horizon)
            assert np.array_equal(columns, np.where(ok.all(1), horizon + 1, np.argmin(ok, 1))), name
        assert set(firsts) <= set(SCREENED)
        checked = set(dict(ORDER))
        assert first_violation(protocol, out0, traj, n, checked, firsts) == first_violation(
            protocol, out0, traj, n, checked)

    law()


def test_jit_eager_is_held_only_where_an_example_ran_eagerly():
    """Issue 35.7: the drawn row runs eagerly in one example in ``EAGER_EVERY`` (the first,
    all zeros, among them), so the walk whose compiled step differs from its eager one is
    still caught (``test_each_relational_defect_is_caught_by_its_law``); with no eager step
    (``eager_steps=0``) jit-eager is not checked, never held."""
    from spacealg.testing.jax_env.check import _mixed

    assert _mixed(0, 0, 0) == 0
    report = check_jax_env(lambda: make_walk(), max_examples=3, max_steps=6, batch=4, eager_steps=0)
    assert "jit-eager" not in report.properties and "eager" in report.not_checked["jit-eager"]
    assert "batching" in report.properties
