"""Validation beyond the basic API (issue 13): PettingZoo AEC envs, action masks,
reproductions that replay, valid snippets, exit statuses, long episodes, time budgets,
the example database, fan-out, vector envs, differential testing and declaration lints.
Budgets are small: the corpus tests (test_check_env.py) run the defaults."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from envcorpus import checks_envs as c
from envcorpus import gym_envs as g
from gymnasium import spaces
from hypothesis import given
from hypothesis import strategies as st

from spacealg.cli import main
from spacealg.testing import (
    EnvCheckError,
    EnvCheckWarning,
    check,
    check_aec_env,
    check_env,
    check_envs_match,
    check_many,
    check_parallel_env,
    check_vector_env,
    replay,
)
from spacealg.testing.engine.lints import space_lints
from spacealg.testing.engine.masks import MaskedAction, check_mask
from spacealg.testing.engine.resolve import resolve
from spacealg.testing.fanout import expand, summary_table
from spacealg.testing.kinds.match import close_enough
from spacealg.testing.registry import env_kind
from spacealg.testing.suite import checker_for

TESTS = Path(__file__).parent
SMALL = {"max_examples": 8, "max_steps": 40}
#: for the tests that read only the first broken property (its name, actions, reproduction): the
#: check stops there instead of searching on past it for others (``error.also``), as the corpus
#: tests that read the first error do (tests/test_check_env.py); the first error is the same
FIRST = {"max_broken": 1}

# -- AEC (points 2 and 10) -------------------------------------------------------------------

CLASSIC = ["chess_v6", "connect_four_v3", "tictactoe_v3", "go_v5"]
needs_pettingzoo = pytest.mark.skipif(importlib.util.find_spec("pettingzoo") is None,
                                      reason="pettingzoo is not installed")


@needs_pettingzoo
@pytest.mark.parametrize("name", CLASSIC)
def test_pettingzoo_classic_games_pass_with_masks_on(name):
    module = importlib.import_module(f"pettingzoo.classic.{name}")
    report = check(module.env, **SMALL)
    assert report.kind == "aec" and "action-mask" in report.properties and "agent-iteration" in report.properties
    assert report.steps > 0 and report.episodes >= 1


@needs_pettingzoo
def test_aec_envs_are_recognised_before_parallel_ones():
    from pettingzoo.classic import chess_v6

    assert env_kind(chess_v6.env()) == "aec" and env_kind(chess_v6.env().unwrapped) == "aec"
    assert checker_for("pettingzoo.classic.chess_v6:env") is check_aec_env
    assert checker_for("envcorpus.parallel_envs:Race") is check_parallel_env
    from spacealg.testing.kinds.gymnasium import GYMNASIUM

    assert checker_for("CartPole-v1") is GYMNASIUM.check  # the Gymnasium kind's (check_env asks the registry)


@needs_pettingzoo
def test_the_command_line_checks_an_aec_env(capsys):
    assert main(["check", "pettingzoo.classic.tictactoe_v3:env", "-n", "6"]) == 0
    out = capsys.readouterr().out
    assert "ok  agent-iteration" in out and "reset returned None" not in out


@needs_pettingzoo
def test_illegal_moves_of_classic_games_are_handled():
    from pettingzoo.classic import connect_four_v3

    report = check(connect_four_v3.env, illegal_actions=True, **SMALL)
    assert "illegal-action" in report.properties


@needs_pettingzoo
def test_an_aec_reproduction_replays_through_the_snippet():
    from envcorpus import aec_envs as a

    with pytest.raises(EnvCheckError) as caught:
        check(a.StuckTakeAway, **FIRST)
    error = caught.value
    namespace: dict = {}
    with pytest.raises(AssertionError):  # the snippet ends in an assertion
        exec(compile(error.reproduction(), "<reproduction>", "exec"), namespace)
    env = namespace["env"]
    assert not env.observe(env.agent_selection)["action_mask"].any()  # the empty mask, as reported


# -- masks (point 1) ------------------------------------------------------------------------


@given(st.lists(st.booleans(), min_size=1, max_size=9).filter(any), st.data())
def test_drawn_actions_are_legal_under_any_mask(bits, data):
    space = spaces.Discrete(len(bits), start=-2)
    mask = np.array(bits, dtype=np.int8)
    factors = check_mask(mask, space, True, None)
    action, legal = MaskedAction(space).draw(data, factors, st.nothing())
    assert legal and action in space and bits[int(action) + 2]


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=4).filter(any), min_size=1, max_size=3), st.data())
def test_drawn_multidiscrete_actions_are_legal_per_factor(masks, data):
    space = spaces.MultiDiscrete([len(m) for m in masks])
    mask = tuple(np.array(m, dtype=np.int8) for m in masks)
    action, legal = MaskedAction(space).draw(data, check_mask(mask, space, True, None), st.nothing())
    assert legal and action in space and all(m[int(x)] for m, x in zip(masks, action))


def test_malformed_masks_are_reported():
    space = spaces.Discrete(3)
    for mask, words in [
        (np.ones(4, dtype=np.int8), "shape (4,)"),
        (np.ones(3, dtype=np.float32), "dtype float32"),
        (np.array([0, 2, 1], dtype=np.int8), "other than 0 and 1"),
        ([1, 1, 1], "not a numpy array"),
        (np.zeros(3, dtype=np.int8), "allows no action"),
    ]:
        with pytest.raises(Exception, match=re.escape(words)):
            check_mask(mask, space, True, None)
    assert check_mask(np.zeros(3, dtype=bool), space, False, None) is not None  # may be empty when done
    assert check_mask(np.ones(3, dtype=np.int8), spaces.Box(0, 1, (3,)), True, None) is None  # not interpreted


def test_masks_can_be_switched_off():
    # without masks the grid is driven into its walls, which it rejects
    with pytest.raises(EnvCheckError) as caught:
        check(c.MaskedGridWorld, masks=False, **SMALL, **FIRST)
    assert caught.value.property == "no-exception"


# -- reproductions that replay (point 11), snippets (12), exit statuses (13) ------------------


class Bipedal(g.Corridor):
    """Like BipedalWalker-v3's bug: an episode that ended by termination leaves state behind
    that changes the next episode of the same instance, so a same-seed replay on the same
    instance differs at its first step."""

    def reset(self, *, seed=None, options=None):
        self.crashed = getattr(self, "crashed", False) or getattr(self, "hit", False)
        return super().reset(seed=seed, options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        self.hit = getattr(self, "hit", False) or terminated
        return obs, reward - float(getattr(self, "crashed", False)), terminated, truncated, info


def test_a_determinism_failure_reports_the_whole_history_and_replays():
    with pytest.raises(EnvCheckError) as caught:
        check(Bipedal, **FIRST)
    error = caught.value
    assert error.property == "step-determinism"
    assert len(error.actions) >= 4  # the history up to a termination, not only the diverging step
    with pytest.raises(EnvCheckError) as again:
        replay(Bipedal, error.seed, error.actions)
    assert again.value.property == "step-determinism"
    namespace: dict = {"__name__": "snippet"}
    snippet = error.reproduction().replace("env = Bipedal()", "")
    with pytest.raises(AssertionError, match="differs between the runs"):
        exec(compile(snippet, "<snippet>", "exec"), {**namespace, "Bipedal": Bipedal, "env": Bipedal()})


@pytest.mark.parametrize(("target", "prop"), [
    pytest.param("envcorpus.factories:parallel_env", "observation-in-space", marks=needs_pettingzoo),
    ("envcorpus.factories:env", "observation-in-space"),
])
def test_the_snippet_of_a_module_factory_target_is_valid_python_and_replays(target, prop):
    with pytest.raises(EnvCheckError) as caught:
        check(target, **FIRST)
    error = caught.value
    snippet = error.reproduction()
    assert "import envcorpus.factories" in snippet and "env = envcorpus.factories." in snippet
    namespace: dict = {}
    with pytest.raises(AssertionError):
        exec(compile(snippet, "<snippet>", "exec"), namespace)
    assert error.property == prop


def test_a_constructor_that_raises_exits_2(capsys):
    assert main(["check", "envcorpus.factories:broken"]) == 2
    err = capsys.readouterr().err  # errors go to stderr, one line
    assert "cannot make 'envcorpus.factories:broken'" in err and "FileNotFoundError" in err
    assert "Traceback" not in err


# -- long episodes (point 14) and the time budget (point 15) ----------------------------------


class CountingFuelCorridor(c.FuelCorridor):
    truncations = 0
    resets_after = 0

    def reset(self, *, seed=None, options=None):
        if getattr(self, "truncated", False):
            type(self).resets_after += 1
        self.truncated = False
        return super().reset(seed=seed, options=options)

    def step(self, action):
        result = super().step(action)
        if result[3]:
            type(self).truncations += 1
            self.truncated = True
        return result


def test_episodes_reach_the_time_limit_and_the_reset_after_it():
    report = check_env(CountingFuelCorridor, max_examples=30, hygiene=False)
    assert report.steps > 0
    assert CountingFuelCorridor.truncations > 0 and CountingFuelCorridor.resets_after > 0


class SlowCorridor(g.Corridor):
    def step(self, action):
        time.sleep(0.002)
        return super().step(action)


def test_the_time_budget_bounds_a_check_and_is_reported():
    started = time.perf_counter()
    report = check_env(SlowCorridor, budget=1.0, hygiene=False)
    assert time.perf_counter() - started < 8
    assert report.out_of_time and report.examples < 100 and report.steps > 0
    assert "time budget" in str(report)


class SlowTruncatedCorridor(g.IntTruncatedCorridor):
    def step(self, action):
        time.sleep(0.01)
        return super().step(action)


def test_a_failure_found_within_the_budget_is_still_reported_replayable():
    # shrinking is cut short by the budget, but what is reported has run and replays
    with pytest.raises(EnvCheckError) as caught:
        check_env(SlowTruncatedCorridor, budget=1.0, hygiene=False)
    error = caught.value
    assert error.property == "truncated-bool" and error.reproducible
    with pytest.raises(EnvCheckError):
        replay(SlowTruncatedCorridor, error.seed, error.actions)


# -- the example database, and the same run wherever installed (points 7, 17.2) ----------------


def test_no_hypothesis_folder_is_left_behind_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check_env(g.Corridor, **SMALL)
    with pytest.raises(EnvCheckError):
        check_env(g.LeakyCorridor, **SMALL)
    assert not (tmp_path / ".hypothesis").exists()


def test_a_database_directory_stores_failures_that_replay_first(tmp_path):
    database = tmp_path / "examples"
    with pytest.raises(EnvCheckError) as first:
        check_env(g.LeakyCorridor, database=database, max_examples=50)
    assert any(database.rglob("*"))
    with pytest.raises(EnvCheckError) as second:  # replayed from the database at once
        check_env(g.LeakyCorridor, database=str(database), max_examples=1)
    assert (second.value.seed, len(second.value.actions)) == (first.value.seed, len(first.value.actions))
    with pytest.raises(TypeError, match="database must be"):
        check_env(g.Corridor, database=42, **SMALL)


def test_the_same_seed_gives_the_same_run_whatever_hypothesis_collects_locally(monkeypatch):
    # Hypothesis mixes in constants from modules outside site-packages (a source checkout);
    # a check must not depend on them
    from hypothesis.internal.conjecture import providers

    baseline = check_env(g.Corridor, max_examples=30, hygiene=False)
    crowded = providers.Constants(integers=providers.SortedSet(range(-50, 50)))
    monkeypatch.setattr(providers, "_get_local_constants", lambda: crowded)
    providers.CONSTANTS_CACHE.cache.clear()
    again = check_env(g.Corridor, max_examples=30, hygiene=False)
    assert (again.examples, again.steps, again.episodes) == (baseline.examples, baseline.steps, baseline.episodes)


def test_the_command_line_gives_the_same_run_from_another_directory(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)])}
    command = [sys.executable, "-m", "spacealg", "check", "envcorpus.gym_envs:Corridor", "-n", "20", "--no-hygiene"]
    runs = [
        subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120).stdout
        for cwd in (TESTS.parent, tmp_path)
    ]
    counts = [run.split("held over ")[1].split(" in ")[0] for run in runs]
    assert counts[0] == counts[1]
    assert not (tmp_path / ".hypothesis").exists()


# -- fan-out (point 7) ----------------------------------------------------------------------


def test_check_many_runs_targets_in_worker_processes_and_summarises():
    outcomes = check_many(
        ["envcorpus.gym_envs:Corridor", "envcorpus.gym_envs:LeakyCorridor", "envcorpus.factories:broken"],
        jobs=2,
        progress=False,
        **SMALL,
    )
    assert [o.status for o in outcomes] == ["passed", "failed", "cannot make"]
    assert outcomes[1].property == "observation-in-space" and "Reproduce" not in outcomes[1].message
    table = summary_table(outcomes)
    assert "LeakyCorridor" in table and "1 passed, 1 failed, 1 cannot make of 3" in table


def test_globs_expand_over_the_registry():
    assert expand(["CartPole-*", "envcorpus.gym_envs:Corridor"]) == [
        *[i for i in gymnasium.registry if i.startswith("CartPole-")],
        "envcorpus.gym_envs:Corridor",
    ]
    with pytest.raises(ValueError, match="matches no registered"):
        expand(["NoSuchThing-*"])


def test_the_command_line_checks_several_envs_with_a_summary(capsys):
    targets = ["envcorpus.gym_envs:Corridor", "envcorpus.gym_envs:IntTruncatedCorridor"]
    status = main(["check", *targets, "-n", "8", "-j", "2", "--no-progress"])
    out = capsys.readouterr().out
    assert status == 1 and "environment" in out and "1 passed, 1 failed of 2" in out
    assert "truncated-bool" in out


def test_shards_run_independent_searches(capsys):
    assert main(["check", "CartPole-v1", "-n", "10", "--shard", "1/3", "--no-hygiene"]) == 0
    first = capsys.readouterr().out.split("held over ")[1].split(" in ")[0]
    assert main(["check", "CartPole-v1", "-n", "10", "--seed", "1", "--no-hygiene"]) == 0
    assert capsys.readouterr().out.split("held over ")[1].split(" in ")[0] == first
    assert main(["check", "CartPole-v1", "--shard", "3/3"]) == 2


# -- vector envs (point 3) and differential testing (point 6) --------------------------------


def test_a_registered_id_is_checked_as_a_vector_env_sync_against_async():
    report = check_vector_env("CartPole-v1", max_examples=5, max_steps=30)
    assert {"sync-async-agree", "autoreset", "sub-env-seeding", "row-isolation"} <= set(report.properties)


def test_the_command_line_checks_a_vector_env_and_a_match(capsys):
    assert main(["check", "CartPole-v1", "--vector", "-n", "4", "--max-steps", "20"]) == 0
    assert "ok  autoreset" in capsys.readouterr().out
    port = "envcorpus.checks_envs:SpeedCapPortedCorridor"
    assert main(["check", "envcorpus.gym_envs:Corridor", "--match", port]) == 1
    assert "FAILED: observations-match" in capsys.readouterr().out


def test_an_env_matches_itself_and_tolerances_apply():
    assert check_envs_match(g.Corridor, g.Corridor, **SMALL).steps > 0
    assert close_enough(np.float32([1.0, 2.0]), np.float32([1.0, 2.0 + 1e-6]), atol=1e-5)
    assert not close_enough(np.float32([1.0, 2.0]), np.float32([1.0, 2.0 + 1e-6]))
    assert not close_enough(np.float32([1.0]), np.float64([1.0]), atol=1)  # dtypes exactly
    assert close_enough({"a": (1.0, np.nan)}, {"a": (1.0, np.nan)})
    with pytest.raises(ValueError, match="atol"):
        check_envs_match(g.Corridor, g.Corridor, atol=-1)


def test_a_match_failure_snippet_runs_both_envs():
    with pytest.raises(EnvCheckError) as caught:
        check_envs_match(g.Corridor, c.SpeedCapPortedCorridor, **FIRST)
    snippet = caught.value.reproduction()
    assert "env_a = Corridor()" in snippet and "env_b = SpeedCapPortedCorridor()" in snippet
    with pytest.raises(AssertionError, match="implementations differ"):
        exec(compile(snippet, "<snippet>", "exec"), {})


# -- declaration lints and API hygiene (point 5) ----------------------------------------------


def test_declaration_lints_are_warnings_not_failures():
    with pytest.warns(EnvCheckWarning, match="not normalised"):
        report = check_env(c.UnnormalisedCorridor, **SMALL)
    assert any("infinite bounds" in w for w in report.warnings)
    image = spaces.Box(0.0, 1.0, (64, 64, 3), np.float32)
    assert any("image" in w for w in space_lints(image, spaces.Discrete(2)))
    assert any("low == high" in w for w in space_lints(spaces.Box(0, 0, (2,)), spaces.Discrete(2)))
    assert space_lints(spaces.Box(0, 255, (64, 64, 3), np.uint8), spaces.Box(-1, 1, (2,))) == []


def test_bad_options_are_value_errors_naming_them():
    for options, name in [({"max_examples": 0}, "max_examples"), ({"max_steps": -1}, "max_steps"),
                          ({"budget": 0}, "budget")]:
        with pytest.raises(ValueError, match=name):
            check_env(g.Corridor, **options)


def test_the_reproduction_of_a_probe_failure_replays():
    with pytest.raises(EnvCheckError) as caught:
        check(c.ReseedingCorridor, **FIRST)
    assert caught.value.seed is None
    with pytest.raises(EnvCheckError):
        replay(c.ReseedingCorridor, None, [])
    namespace: dict = {}
    with pytest.raises(AssertionError, match="reseeds"):
        exec(compile(caught.value.reproduction(), "<snippet>", "exec"), namespace)


def test_resolve_keeps_a_module_path_for_closures():
    source = resolve("envcorpus.factories:parallel_env")
    assert source.construction == "env = envcorpus.factories.parallel_env()"


def test_jax_observations_compare_by_value():
    # regression: phys2d/CartPole-v1 (a JAX env) was reported non-deterministic because
    # JAX arrays were compared as Python objects
    jnp = pytest.importorskip("jax.numpy")
    from spacealg.testing.engine.driver import same

    assert same(jnp.array([1.0, 2.0]), jnp.array([1.0, 2.0]))
    assert not same(jnp.array([1.0, 2.0]), jnp.array([1.0, 3.0]))
    assert close_enough(jnp.array([1.0]), jnp.array([1.0 + 1e-7]), atol=1e-6)
