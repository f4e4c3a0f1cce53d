"""check_env / check_parallel_env on the corpus: every bug caught with its property named
and a shortest reproduction; no false alarm on sound environments or on Gymnasium's own
classic-control and toy-text environments."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

import gymnasium
import numpy as np
import pytest
from envcorpus import BUGGY, SOUND, run_case
from envcorpus import gym_envs as g
from hypothesis import given, settings
from hypothesis import strategies as st

from spacealg.cli import main
from spacealg.testing import (
    EnvCheckError,
    check,
    check_aec_env,
    check_env,
    check_parallel_env,
    check_vector_env,
    env_test,
    replay,
    replay_vector,
)
from spacealg.testing.engine.runner import DECIDED_FIRST
from spacealg.testing.registry import properties_of

pytest_plugins = ["pytester"]


def _caught(factory, **options) -> EnvCheckError:
    with pytest.raises(EnvCheckError) as caught:
        check(factory, **options)
    return caught.value


# Each buggy case is checked once per process, when a test first asks for its error. Under
# pytest-xdist the tests of one case run on one worker and different cases on different
# workers (XDIST_SCOPE: tests/conftest.py groups this file's tests by their parameter), so the
# corpus is checked once, spread over the workers. The tests that read a case's error take
# it as their parameter, so that their node id names the case.
XDIST_SCOPE = "parameter"


class _Caught(Mapping[str, EnvCheckError]):
    """The error check() raises on each buggy environment, by case name: computed on first
    use and kept (for this process)."""

    def __init__(self) -> None:
        self._cases = {case.name: case for case in BUGGY}
        self._errors: dict[str, EnvCheckError] = {}

    def __getitem__(self, name: str) -> EnvCheckError:
        if name not in self._errors:
            case = self._cases[name]
            if case.needs:
                pytest.importorskip(case.needs)
            with pytest.raises(EnvCheckError) as caught:  # the first broken property is what these tests read
                run_case(case, max_broken=1)
            self._errors[name] = caught.value
        return self._errors[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)


_CAUGHT = _Caught()


@pytest.fixture
def caught() -> Mapping[str, EnvCheckError]:
    """The error check() raises on each buggy environment (each computed once, when first read)."""
    return _CAUGHT


@pytest.mark.parametrize("case", [c.param for c in BUGGY])
def test_every_bug_is_caught_with_its_property_named(case, caught):
    error = caught[case.name]
    assert isinstance(error, AssertionError)
    assert error.property == case.expected
    message = str(error)
    assert f"property {case.expected!r}" in message
    assert f"seed={error.seed}" in message and "actions:" in message


@pytest.mark.parametrize("case", [c.param for c in BUGGY])
def test_the_reported_seed_and_actions_reproduce_and_are_shortest(case, caught):
    error = caught[case.name]
    if case.api == "match":
        pytest.skip("a match failure replays through its snippet (two implementations side by side)")
    if case.api == "vector":  # replay_vector: a changed row's laws need the row and its changed actions
        row, changes = error.changed or (None, None)

        def again_with(actions: list) -> None:
            kept = {k: a for k, a in (changes or {}).items() if k <= len(actions)} or None
            replay_vector(case.factory, error.seed, actions, row=row if kept else None, changes=kept)
    else:
        options = {"masks": True, **{k: v for k, v in case.options.items() if k == "ignore_info_keys"}}

        def again_with(actions: list) -> None:
            replay(case.factory, error.seed, actions, **options)

    with pytest.raises(EnvCheckError) as again:
        again_with(error.actions)
    assert again.value.property == error.property
    if error.actions and error.property not in ("step-determinism", "global-rng", "illegal-action"):
        # the failure happens at the last action: no prefix reproduces it
        again_with(error.actions[:-1])


def _leaky_corridor(actions: list) -> None:
    # the cart needs four actions to pass the wall from a start in [0, 2): v = 1, 2, 3 then
    # at least a coast (x <= 2 + 6 after three steps)
    assert len(actions) == 4
    assert [int(a) for a in actions[:3]] == [2, 2, 2]


def _off_by_one_grid_world(actions: list) -> None:
    # four moves down leave the grid; the minimal sequence is exactly that
    assert [int(a) for a in actions] == [1, 1, 1, 1]


def _overfull_warehouse(actions: list) -> None:
    # four picks overflow the inventory
    assert [int(a[0]) for a in actions] == [1, 1, 1, 1]


def _log_barrier_corridor(actions: list) -> None:
    # a crash at the action bound: one action, at a bound
    (action,) = actions
    assert abs(float(action[0])) == 1.0 and action.dtype == np.float32


def _marshal_race(actions: list) -> None:
    # both cars sprint once
    assert actions == [{"car_0": 2, "car_1": 2}]


SHORTEST = {
    "LeakyCorridor": _leaky_corridor,
    "OffByOneGridWorld": _off_by_one_grid_world,
    "OverfullWarehouse": _overfull_warehouse,
    "LogBarrierCorridor": _log_barrier_corridor,
    "MarshalRace": _marshal_race,
}


@pytest.mark.parametrize("name", SHORTEST)
def test_bugs_behind_action_sequences_shrink_to_the_minimal_length(name, caught):
    SHORTEST[name](caught[name].actions)


AT_RESET = ["Float64ResetCorridor", "GlobalRngResetCorridor", "WideStartCorridor", "UnseededRace"]


@pytest.mark.parametrize("name", AT_RESET)
def test_bugs_at_reset_report_no_actions(name, caught):
    error = caught[name]
    assert error.actions == [] and error.step is None and "at reset" in str(error)


@pytest.mark.parametrize("name", ["WideStartCorridor"])
def test_a_seed_dependent_bug_reports_a_failing_seed(name, caught):
    error = caught[name]
    env = g.WideStartCorridor()
    obs, _ = env.reset(seed=error.seed)
    assert obs not in env.observation_space


@pytest.mark.parametrize("name", ["LeakyCorridor"])
def test_the_reproduction_snippet_replays_the_failure(name, caught):
    error = caught[name]
    snippet = error.reproduction()
    assert "from envcorpus.gym_envs import LeakyCorridor" in snippet
    assert f"SEED = {error.seed}" in snippet
    namespace: dict = {}
    with pytest.raises(AssertionError, match=r"dtype float32\) is not in Box"):  # ends in an assertion
        exec(compile(snippet, "<reproduction>", "exec"), namespace)
    space = namespace["env"].observation_space
    assert any(entry[0] not in space for entry in namespace["trace"])


@pytest.mark.parametrize("case", [c.param for c in BUGGY])
def test_every_reproduction_snippet_compiles(case, caught):
    compile(caught[case.name].reproduction(), "<reproduction>", "exec")


def _sound_base(case):
    """The sound class a buggy one derives from, where the recorded actions mean the same
    there: the same action space, and no mask that the bug changes."""
    sound = {c.factory for c in SOUND}
    base = next((k for k in getattr(case.factory, "__mro__", ())[1:] if k in sound), None)
    if base is None or "mask" in case.reach or case.api != "gymnasium":
        return base if base is not None and case.api != "gymnasium" else None
    return base if base().action_space == case.factory().action_space else None


@pytest.mark.parametrize("case", [c.param for c in BUGGY if c.api != "match"])
def test_every_reproduction_is_a_regression_test(case, caught):
    """Issue 23 point 7: a snippet fails (an exception: exit status 1) while the bug is
    there, and passes once it is fixed (the same snippet on the sound class the buggy one
    derives from)."""
    error = caught[case.name]
    snippet = error.reproduction()
    # a vector snippet ends in replay_vector: it raises the property itself, not an error on the way there
    # (but where the env raises first, and for the one-off probes, which replay in plain Python)
    plain = ("no-exception", "close-twice", "render-modes")
    expected = EnvCheckError if case.api == "vector" and case.expected not in plain else Exception
    with pytest.raises(expected) as raised:
        exec(compile(snippet, "<reproduction>", "exec"), {"__name__": "snippet"})
    assert expected is Exception or raised.value.property == case.expected
    base = _sound_base(case)
    if base is None:
        return
    name = case.factory.__name__
    fixed = "\n".join(line for line in snippet.splitlines() if not line.startswith("from envcorpus"))
    exec(compile(fixed, "<fixed>", "exec"), {"__name__": "snippet", name: base})


@pytest.mark.parametrize("name", ["FloatPaintedCorridor", "BlankCorridorVector"])
def test_the_render_probe_and_its_snippet_run_the_same_lines(name, caught):
    """Law: the render-modes probe runs the lines its snippet shows (``snippets.RENDER``):
    the snippet's AssertionError is the probe's finding, word for word."""
    error = caught[name]
    assert error.property == "render-modes"
    with pytest.raises(AssertionError) as raised:
        exec(compile(error.reproduction(), "<reproduction>", "exec"), {"__name__": "snippet"})
    assert str(raised.value) == error.detail


def test_an_aec_reset_seed_reproduction_is_a_regression_test():
    """The reset-seed and reset-stream snippet reads an AEC game's first observation through
    ``observe`` (its reset returns None): it fails while the bug is there and passes on the
    sound game (it raised a TypeError on both)."""
    pytest.importorskip("pettingzoo")
    from envcorpus.aec_envs import SeedlessTakeAway

    with pytest.raises(EnvCheckError) as caught:
        check(SeedlessTakeAway, max_examples=5)
    assert caught.value.property == "reset-seed"
    snippet = caught.value.reproduction()
    with pytest.raises(AssertionError, match="gave the same episode"):
        exec(compile(snippet, "<reproduction>", "exec"), {"__name__": "snippet"})
    fixed = snippet.replace("SeedlessTakeAway", "TakeAway")
    exec(compile(fixed, "<fixed>", "exec"), {"__name__": "snippet"})


@pytest.mark.parametrize("name", ["OldApiCorridor"])
def test_old_api_reproduction_fails_the_same_way(name, caught):
    namespace: dict = {}
    with pytest.raises(AssertionError, match="step returned"):
        exec(compile(caught[name].reproduction(), "<reproduction>", "exec"), namespace)


@pytest.mark.parametrize("case", [c.param for c in SOUND])
def test_sound_environments_pass(case):
    # 40 examples keep the suite short (vector envs: check_vector_env's default, 30, which the
    # sound bases of the vector bugs had when their reproductions reran the check);
    # benchmarks/compare_checkers.py runs the defaults
    report = run_case(case, max_examples=40 if case.api != "vector" else 30)
    assert report.examples >= (30 if case.api == "vector" else 40) and report.steps > 0 and report.episodes > 0
    table = properties_of(case.api)
    # issue 23 point 2: every property is held or not checked with why, none silently dropped
    assert set(report.properties) | set(report.not_checked) == set(table)
    assert not set(report.properties) & set(report.not_checked) and all(report.not_checked.values())
    basics = {"observation-in-space", "no-exception", "reset-after-done", "step-determinism"}
    if case.api in ("gymnasium", "parallel", "aec"):
        assert basics <= set(report.properties)
        assert ("illegal-action" in report.properties) == bool(case.options.get("illegal_actions"))
    if case.api == "gymnasium":
        hygiene = {"global-rng", "reset-seed", "reset-stream", "observation-aliasing"}
        assert hygiene <= set(report.properties)
        assert "render-modes" in report.properties or "render_modes" in report.not_checked["render-modes"]
    assert any("not normalised" in w for w in report.warnings) == case.warns


def _latest(name: str) -> str:
    versions = [env_id for env_id in gymnasium.registry if env_id.split("-v")[0] == name]
    return max(versions, key=lambda env_id: int(env_id.rsplit("-v", 1)[1]))


BUILTIN = [
    "CartPole",
    "MountainCar",
    "MountainCarContinuous",
    "Pendulum",
    "Acrobot",
    "FrozenLake",
    "FrozenLake8x8",
    "Taxi",
    "CliffWalking",
    "Blackjack",
]


@pytest.mark.parametrize("name", BUILTIN)
def test_no_false_alarm_on_gymnasium_classic_control_and_toy_text(name):
    report = check_env(_latest(name), max_examples=30)
    assert report.steps > 0


def test_instances_factories_ids_and_module_paths_are_accepted():
    assert check_env(g.Corridor(), max_examples=10).examples >= 10
    assert check_env(lambda: g.GridWorld(), max_examples=10).examples >= 10
    assert check_env("CartPole-v1", max_examples=10).env_name == "CartPole-v1"
    with pytest.raises(EnvCheckError) as caught:
        check_env("envcorpus.gym_envs:OldApiCorridor", max_examples=10)
    snippet = caught.value.reproduction()
    assert "import envcorpus.gym_envs" in snippet and "env = envcorpus.gym_envs.OldApiCorridor()" in snippet


def test_a_module_path_of_a_parallel_env_is_accepted():
    pytest.importorskip("pettingzoo")
    assert check("envcorpus.parallel_envs:Race", max_examples=10).env_name == "envcorpus.parallel_envs:Race"


def test_an_instance_made_by_gymnasium_make_reproduces_through_make():
    with pytest.raises(EnvCheckError) as caught:
        gymnasium.register("envcorpus/Overshoot-v0", entry_point=g.LeakyCorridor)
        check_env(gymnasium.make("envcorpus/Overshoot-v0"))
    assert "gymnasium.make('envcorpus/Overshoot-v0')" in caught.value.reproduction()


class Undeclared:
    """A parallel environment with possible_agents hidden (PettingZoo makes it optional)."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        if name == "possible_agents":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_possible_agents_is_optional_as_in_pettingzoo():
    # regression: without possible_agents the checker reported 'declared-spaces' (and check()
    # took the env for a Gymnasium one) on PettingZoo's own spawning-agents example env
    pytest.importorskip("pettingzoo")
    from envcorpus import parallel_envs as p
    from pettingzoo.test.example_envs import generated_agents_parallel_v0

    report = check(generated_agents_parallel_v0.parallel_env, max_examples=15, max_steps=40)
    assert "agents-possible" not in report.properties and "agents-life-cycle" in report.properties
    assert check(lambda: Undeclared(p.Race()), max_examples=10).steps > 0
    for buggy in (p.ZombieRace, p.GhostRace):
        assert _caught(lambda buggy=buggy: Undeclared(buggy()), max_examples=30).property == "agents-life-cycle"


def test_determinism_can_be_switched_off():
    pytest.importorskip("pettingzoo")
    from envcorpus import parallel_envs as p

    check_env(g.GlobalRngResetCorridor, determinism=False, max_examples=20)
    check_parallel_env(p.UnseededRace, determinism=False, max_examples=20)
    assert _caught(g.GlobalRngResetCorridor, max_examples=20).property == "global-rng"


def test_an_undrawable_action_space_is_reported_as_declared_spaces():
    class NoActions(g.Corridor):
        def __init__(self):
            super().__init__()
            self.action_space = None

    error = _caught(NoActions)
    assert error.property == "declared-spaces" and error.seed is None


# These two compare a fresh check with the corpus case's (by its parameter id they run in that
# case's group, on the worker that keeps its error): two independent runs all the same.
@pytest.mark.parametrize("name", ["SpeedRewardCorridor"])
def test_a_fixed_search_seed_gives_the_same_report_every_time(name, caught):
    first, second = caught[name], _caught(g.SpeedRewardCorridor)
    assert (first.seed, repr(first.actions)) == (second.seed, repr(second.actions))


@pytest.mark.parametrize("checker", [check_env, check_parallel_env, check_aec_env])
def test_every_checker_takes_the_same_options_and_names_an_unknown_one(checker):
    """One option table (runner.CheckOptions) for the three episode checkers: an unknown
    keyword is a TypeError naming it, before any environment is built; a bad value a
    ValueError naming the option."""
    with pytest.raises(TypeError, match="'max_step'"):
        checker("no_such_module:nothing", max_step=3)
    with pytest.raises(ValueError, match="max_steps"):
        checker(g.Corridor, max_steps=-1)


@pytest.mark.parametrize("name", ["OvershootRace"])
def test_the_same_search_seed_gives_the_same_run_for_every_kind(name, caught):
    """The one driver draws in the same order for every kind: equal reports for equal seeds,
    and (for a failing environment) the same seed and actions."""
    pytest.importorskip("pettingzoo")
    from envcorpus import parallel_envs as p

    for env, checker in ((g.Corridor, check_env), (p.Race, check_parallel_env)):
        a, b = checker(env, max_examples=15), checker(env, max_examples=15)
        assert (a.examples, a.steps, a.episodes) == (b.examples, b.steps, b.episodes)
    first, second = caught[name], _caught(p.OvershootRace)
    assert (first.seed, repr(first.actions)) == (second.seed, repr(second.actions))


def test_a_sound_env_passes_with_long_episodes_too():
    report = check_env(g.Corridor, max_examples=20, max_steps=400)
    assert report.episodes > 20


# -- the pytest plugin and env_test ---------------------------------------------------------


def test_env_test_makes_a_one_line_pytest_test(pytester):
    pytester.syspathinsert(str(pytester.path.parent))
    pytester.makepyfile(
        test_envs="""
        from spacealg.testing import env_test
        from envcorpus.gym_envs import Corridor, LeakyCorridor

        test_corridor = env_test(Corridor)
        test_leaky = env_test("envcorpus.gym_envs:LeakyCorridor")
        """
    )
    import envcorpus

    pytester.syspathinsert(str(__import__("pathlib").Path(envcorpus.__file__).parents[1]))
    result = pytester.runpytest_inprocess("--spacealg-examples", "30", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*property 'observation-in-space' failed*", "*spacealg reproduction*"])


def test_the_one_liner_works_in_a_fresh_pytest_process(pytester, monkeypatch):
    # a separate interpreter: the plugin comes from the installed pytest11 entry point alone
    import envcorpus

    monkeypatch.setenv("PYTHONPATH", str(__import__("pathlib").Path(envcorpus.__file__).parents[1]))
    pytester.makepyfile(
        test_fresh="""
        from spacealg.testing import env_test

        test_corridor = env_test("envcorpus.gym_envs:Corridor")
        test_leaky = env_test("envcorpus.gym_envs:LeakyCorridor")
        """
    )
    result = pytester.runpytest_subprocess("--spacealg-examples", "30", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*spacealg reproduction*", "*envcorpus.gym_envs*LeakyCorridor*"])


def test_the_spacealg_check_fixture_uses_the_command_line_options(pytester):
    import envcorpus

    pytester.syspathinsert(str(__import__("pathlib").Path(envcorpus.__file__).parents[1]))
    pytester.makepyfile(
        test_fixture="""
        from envcorpus.gym_envs import Corridor

        def test_corridor(spacealg_check):
            report = spacealg_check(Corridor)
            assert report.examples < 40
        """
    )
    result = pytester.runpytest_inprocess("--spacealg-examples", "15", "--spacealg-max-steps", "20")
    result.assert_outcomes(passed=1)


def test_env_test_is_named_after_what_it_checks():
    assert env_test("CartPole-v1").__name__ == "test_env[CartPole-v1]"


# -- volatile infos (issue 23 point 5) -------------------------------------------------------


def test_gymnasiums_own_timing_wrapper_is_no_false_alarm():
    """RecordEpisodeStatistics writes wall-clock time to info["episode"]["t"]: recognised
    without options; its return and length are still compared."""
    report = check_env(
        lambda: gymnasium.wrappers.RecordEpisodeStatistics(gymnasium.make("CartPole-v1")), max_examples=20
    )
    assert "step-determinism" in report.properties


def test_a_volatile_info_fails_replay_unless_named_and_only_that_entry_is_left_out():
    from envcorpus import checks_envs as c

    with pytest.raises(EnvCheckError) as caught:
        check_env(c.TimedCorridor, max_examples=20)
    assert caught.value.property == "step-determinism"
    check_env(c.TimedCorridor, max_examples=20, ignore_info_keys="elapsed")
    with pytest.raises(EnvCheckError) as caught:  # the other infos are still compared
        check_env(c.TimedSlipCorridor, max_examples=50, ignore_info_keys=["elapsed"])
    assert caught.value.property in ("global-rng", "step-determinism")


@pytest.mark.parametrize("bad", [3, [""], [b"x"]])
def test_ignore_info_keys_must_be_strings(bad):
    with pytest.raises(TypeError, match="ignore_info_keys"):
        check_env(g.Corridor, max_examples=1, ignore_info_keys=bad)


def test_strip_removes_exactly_the_named_entries():
    from hypothesis import given
    from hypothesis import strategies as st

    from spacealg.testing.engine.infos import strip

    names = st.sampled_from(["a", "b", "c", "a.b"])
    infos = st.dictionaries(names, st.integers() | st.dictionaries(names, st.integers(), max_size=3), max_size=4)

    @given(infos, st.lists(names, max_size=3))
    def law(info, keys):
        before = repr(info)
        out = strip(info, keys)
        assert repr(info) == before  # the argument is left alone
        assert set(out) <= set(info)
        for key in info:
            if key not in keys and "." not in key and not any(k.startswith(key + ".") for k in keys):
                assert out[key] == info[key]
            if key in keys:
                assert key not in out

    law()


def test_a_check_reports_every_broken_property_each_with_its_own_reproduction():
    """Issue 23 point 2: two bugs, two broken properties, each with its seed, its actions
    and a snippet; the rest held or not checked with why."""

    class TwoBugs(g.Float64ResetCorridor, g.IntTruncatedCorridor):
        pass

    with pytest.raises(EnvCheckError) as caught:
        check_env(TwoBugs, max_examples=30)
    error = caught.value
    assert [e.property for e in error.broken] == ["observation-in-space", "truncated-bool"]
    (other,) = error.also
    assert other.step == 1 and len(other.actions) == 1 and "truncated-bool" in other.reproduction()
    verdicts = error.verdicts()
    assert set(verdicts) == set(properties_of("gymnasium"))
    assert verdicts["truncated-bool"] == "broken" and verdicts["no-exception"] == "held"
    assert verdicts["illegal-action"].startswith("not checked: ")
    assert "also broken" in str(error) and "truncated-bool at step 1" in str(error)


def test_max_broken_stops_the_check_at_that_many_broken_properties():
    """``max_broken=1`` stops at the first broken property (as ``pytest -x``): no other is
    reported, and what the search had not found broken is not checked (never held); the
    probes' verdicts stand. A count below 1 is refused, naming the option, by API and CLI."""

    class TwoBugs(g.Float64ResetCorridor, g.IntTruncatedCorridor):
        pass

    with pytest.raises(EnvCheckError) as caught:
        check_env(TwoBugs, max_examples=30, max_broken=1)
    error = caught.value
    assert [e.property for e in error.broken] == ["observation-in-space"] and error.also == ()
    verdicts = error.verdicts()
    assert verdicts["truncated-bool"].startswith("not checked: ")
    searched = set(verdicts) - {"observation-in-space", *DECIDED_FIRST}
    assert not any(verdicts[p] == "held" for p in searched)
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match="max_broken"):
            check_env(g.Corridor, max_examples=1, max_broken=bad)
    assert main(["check", "envcorpus.gym_envs:Corridor", "-n", "1", "--max-broken", "0"]) == 2


def test_an_instance_is_reported_with_what_it_could_not_check():
    report = check_env(g.Corridor(), max_examples=5)
    assert "close-twice" in report.not_checked and "instance" in report.not_checked["close-twice"]
    assert "render-modes" in report.not_checked


# -- natively batched vector envs (issue 23 point 1) ----------------------------------------------


def test_an_envpool_style_declaration_is_one_finding_and_the_rest_is_checked():
    from envcorpus import vector_envs as v

    from spacealg.testing import check_vector_env

    with pytest.raises(EnvCheckError) as caught:
        check_vector_env(v.PoolCorridors, max_examples=10)
    verdicts = caught.value.verdicts()
    assert [e.property for e in caught.value.broken] == ["declared-spaces"]
    for prop in ("sub-env-seeding", "autoreset", "batch-in-space", "step-determinism", "row-isolation"):
        assert verdicts[prop] == "held"
    assert verdicts["rows-match-sub-envs"].startswith("not checked: no single environments")


def test_a_natively_batched_env_is_checked_without_single_envs():
    from envcorpus import vector_envs as v

    from spacealg.testing import check_vector_env

    report = check_vector_env(v.BatchedCorridors, max_examples=10)
    assert {"sub-env-seeding", "autoreset"} <= set(report.properties)
    assert set(report.not_checked) == {"rows-match-sub-envs", "sync-async-agree", "render-modes"}
    assert "declares no render mode" in report.not_checked["render-modes"]  # the probes' only gap here


def test_replay_routes_a_vector_env_to_replay_vector_and_names_bad_arguments(caught):
    """``replay`` of a vector environment is ``replay_vector``'s episode replay (no search);
    a changed row needs its row, fresh copies and steps among the actions."""
    from envcorpus import vector_envs as v

    error = caught["SameSeedBatch"]
    with pytest.raises(EnvCheckError) as again:
        replay(v.SameSeedBatch, error.seed, error.actions)
    assert again.value.property == "sub-env-seeding" and again.value.kind == "vector"
    replay(v.BatchedCorridors, error.seed, error.actions)  # the sound batch: nothing breaks
    with pytest.raises(EnvCheckError, match="declared-spaces"):  # regression: replay ran the Gymnasium probes
        replay(v.PoolCorridors, None, [])
    replay(v.BatchedCorridors, None, [])
    rows = [[np.int64(1)] * 3] * 2
    with pytest.raises(ValueError, match="actions must give each step the same number of rows"):
        replay_vector(v.BatchedCorridors, 0, [rows[0], rows[1][:2]])
    with pytest.raises(ValueError, match="changes needs row"):
        replay_vector(v.BatchedCorridors, 0, rows, changes={1: np.int64(0)})
    with pytest.raises(ValueError, match="row must be the index of a row"):
        replay_vector(v.BatchedCorridors, 0, rows, row=3, changes={1: np.int64(0)})
    with pytest.raises(ValueError, match=r"changes must map steps 1\.\.2"):
        replay_vector(v.BatchedCorridors, 0, rows, row=0, changes={3: np.int64(0)})
    with pytest.raises(ValueError, match="env must be a factory or an id"):
        replay_vector(v.BatchedCorridors(), 0, rows, row=0, changes={1: np.int64(0)})
    replay_vector(v.BatchedCorridors, 0, rows, row=0, changes={1: np.int64(0), 2: np.int64(2)})


# -- warnings worth reading (issue 23 point 8) ------------------------------------------------------


def test_warnings_point_at_the_callers_line_and_sound_envs_get_none_about_reset():
    import warnings

    from envcorpus import checks_envs as c

    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        check_env(c.UnnormalisedCorridor, max_examples=5)
    assert records and all(r.filename == __file__ for r in records)
    for case in SOUND:
        if case.api == "gymnasium":
            report = run_case(case, max_examples=3)
            assert not any("before reset" in w for w in report.warnings), case.name


def test_a_step_before_reset_that_answers_garbage_is_warned():
    class Garbage(g.Corridor):
        def step(self, action):
            if not hasattr(self, "t_started"):
                self.t_started = True
                if not hasattr(self, "_np_random") or self._np_random is None:
                    return np.full(2, 99.0, np.float32), 0.0, False, False, {}
            return super().step(action)

    report = check_env(Garbage, max_examples=3)
    assert any("step before reset did not fail" in w for w in report.warnings)


def test_gymnasiums_own_envs_lint_only_when_asked():
    pytest.importorskip("pygame")  # without it CartPole's rgb_array rendering is unchecked, with a warning
    assert check_env("CartPole-v1", max_examples=3).warnings == ()
    assert any("infinite bounds" in w for w in check_env("CartPole-v1", max_examples=3, lint=True).warnings)


class _WorkerStartCorridor(g.Corridor):
    """Starts at the wall in a process other than ``main``'s (the test's, passed as the id's
    keyword, so that it reaches worker processes however they start): a Corridor whose
    asynchronous vector env disagrees with the synchronous one (``sync-async-agree``)."""

    def __init__(self, main: int) -> None:
        super().__init__()
        self.main = main

    def _start(self) -> float:
        start = super()._start()
        return start if os.getpid() == self.main else 0.0


def test_a_sync_async_failure_of_an_id_replays_against_the_async_env():
    gymnasium.register(
        "spacealg-tests/WorkerStartCorridor-v0", entry_point=_WorkerStartCorridor, kwargs={"main": os.getpid()}
    )
    try:
        with pytest.raises(EnvCheckError) as caught:
            check_vector_env("spacealg-tests/WorkerStartCorridor-v0", max_examples=5)
        error = caught.value
        assert error.property == "sync-async-agree"
        snippet = error.reproduction()
        assert "compare=make_other" in snippet and "vectorization_mode='async'" in snippet
        with pytest.raises(EnvCheckError, match="sync-async-agree"):
            exec(compile(snippet, "<reproduction>", "exec"), {"__name__": "snippet"})
        # without the async implementation, the same example passes: the snippet needs it
        replay_vector(lambda: gymnasium.make_vec("spacealg-tests/WorkerStartCorridor-v0", 3), error.seed, error.actions)
    finally:
        gymnasium.registry.pop("spacealg-tests/WorkerStartCorridor-v0", None)


def test_a_sync_async_failure_against_a_given_implementation_replays_against_it():
    from envcorpus import vector_envs as v

    with pytest.raises(EnvCheckError) as caught:
        check_vector_env(v.BatchedCorridors, compare=v.SameSeedBatch, max_examples=5)
    snippet = caught.value.reproduction()
    assert caught.value.property == "sync-async-agree" and "return SameSeedBatch()" in snippet
    with pytest.raises(EnvCheckError, match="sync-async-agree"):
        exec(compile(snippet, "<reproduction>", "exec"), {"__name__": "snippet"})


def test_replay_vector_of_an_id_makes_as_many_sub_envs_as_the_actions_have_rows():
    """A check of an id with ``num_envs=2`` replays on two sub-envs (before, replay_vector made
    the default four and reported a false ``no-exception`` for the two-row actions)."""
    actions = [[np.int64(0), np.int64(1)], [np.int64(1), np.int64(1)]]
    replay_vector("CartPole-v1", 3, actions, row=0, changes={1: np.int64(1)})
    replay_vector("CartPole-v1", 3, actions)


def make_other():
    """A user's factory named as the snippet's factory of the implementation compared with."""
    from envcorpus import vector_envs as v

    return v.SameSeedBatch()


def test_a_sync_async_snippet_does_not_shadow_the_users_factory_of_the_other_implementation():
    """Regression: with ``compare=make_other`` (a user's factory of that name) the snippet
    defined its own ``make_other`` returning ``make_other()``, which called itself
    (RecursionError); its factories are now named apart from the constructions they call."""
    from envcorpus import vector_envs as v

    with pytest.raises(EnvCheckError) as caught:
        check_vector_env(v.BatchedCorridors, compare=make_other, max_examples=5)
    snippet = caught.value.reproduction()
    assert caught.value.property == "sync-async-agree" and "def make_other():" not in snippet
    with pytest.raises(EnvCheckError, match="sync-async-agree"):
        exec(compile(snippet, "<reproduction>", "exec"), {"__name__": "snippet"})


def _reset_steps(env_class, seed, rows):
    """``(k, row)`` where ``row``'s episode ended at step ``k - 1`` of ``rows``: the steps
    whose row action next-step autoreset ignores."""
    env = env_class()
    env.reset(seed=seed)
    found = []
    for k, step in enumerate(rows, 1):
        _, _, terminated, truncated, _ = env.step(np.asarray(step))
        found += [(k + 1, int(i)) for i in np.flatnonzero(terminated | truncated) if k < len(rows)]
    return found


pushes = st.sampled_from((2, 2, 1, 0))  # mostly accelerating: episodes end within a few steps


@given(
    st.integers(0, 2**31),
    st.lists(st.lists(pushes, min_size=3, max_size=3), max_size=14),
    st.integers(0, 2),
    st.dictionaries(st.integers(1, 14), st.integers(0, 2), max_size=3),
    st.data(),
)
def test_replay_vector_finds_what_breaks_and_nothing_else(seed, actions, row, changes, data):
    """``replay_vector``'s laws, on any seed, row actions and changed actions: the sound batch
    replays to None, its episode and any changed row alike (row-isolation, and next-step
    autoreset ignoring a reset step's action, hold); ActionLeakBatch, whose reset steps apply
    the row's action, raises ``autoreset`` for a changed action at a reset step."""
    from envcorpus import vector_envs as v

    rows = [[np.int64(a) for a in step] for step in actions]
    replay_vector(v.BatchedCorridors, seed, rows)
    kept = {k: np.int64(a) for k, a in changes.items() if k <= len(rows)}
    if kept:
        replay_vector(v.BatchedCorridors, seed, rows, row=row, changes=kept)
    resets = _reset_steps(v.ActionLeakBatch, seed, rows)
    if resets:
        k, ended = data.draw(st.sampled_from(resets))
        other = np.int64(data.draw(st.sampled_from([a for a in range(3) if a != rows[k - 1][ended]])))
        replay_vector(v.BatchedCorridors, seed, rows[:k], row=ended, changes={k: other})
        with pytest.raises(EnvCheckError, match="autoreset"):
            replay_vector(v.ActionLeakBatch, seed, rows[:k], row=ended, changes={k: other})


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31), st.lists(st.lists(pushes, min_size=3, max_size=3), min_size=1, max_size=4))
def test_replay_vector_finds_a_row_that_moves_another(seed, actions):
    """``replay_vector``'s row-isolation law where it breaks, on any seed and row actions:
    WindyVector's wind pushes row 1 by row 0's action, so changing row 0's first action from
    coasting to pushing (wind 0 to +0.5) changes row 1 when row 1 does not brake then (a
    brake could clamp both runs to the wall); the sound CorridorVector keeps every other row
    for the same change."""
    from envcorpus import vector_envs as v

    first = [np.int64(1), np.int64(max(actions[0][1], 1)), np.int64(actions[0][2])]
    rows = [first] + [[np.int64(a) for a in step] for step in actions[1:]]
    replay_vector(v.CorridorVector, seed, rows, row=0, changes={1: np.int64(2)})
    with pytest.raises(EnvCheckError, match="row-isolation") as raised:
        replay_vector(v.WindyVector, seed, rows, row=0, changes={1: np.int64(2)})
    assert raised.value.changed == (0, {1: np.int64(2)}) and raised.value.step == 1
