"""Issue 23 points 9, 1 and 2: the vector, dm_env and differential checks run on the engine
every checker shares, and a check goes on past a broken law: every property is held, broken
(each with its own reproduction) or not checked with why, never held without being run."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import gymnasium
import numpy as np
import pytest
from envcorpus import gym_envs as g
from envcorpus import vector_envs as v
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spacealg.testing import EnvCheckError, check_envs_match, check_vector_env
from spacealg.testing.engine.driver import same, snapshot
from spacealg.testing.engine.runner import DECIDED_FIRST
from spacealg.testing.registry import properties_of


class UnseededBatch(v.BatchedCorridors):
    """EnvPool's seeding: ``reset(seed=...)`` is ignored, the rows draw from streams seeded
    when the env is built (so two fresh copies are alike, two resets are not). Otherwise
    sound: next-step autoreset, isolated rows."""

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return super().reset(seed=None, options=options)


class Float64Batch(v.BatchedCorridors):
    """Bug: every batch of observations is float64, outside the float32 joint space."""

    def _obs(self) -> np.ndarray:
        return super()._obs().astype(np.float64)


def _broken(env: Any, **options: Any) -> EnvCheckError:
    with pytest.raises(EnvCheckError) as caught:
        check_vector_env(env, max_examples=10, **options)
    return caught.value


def test_an_env_that_ignores_reset_seeds_is_checked_past_its_seeding():
    error = _broken(UnseededBatch)
    verdicts = error.verdicts()
    assert set(verdicts) == set(properties_of("vector"))
    assert {e.property for e in error.broken} == {"sub-env-seeding", "reset-determinism"}
    for prop in ("no-exception", "batch-in-space", "autoreset", "row-isolation", "declared-spaces"):
        assert verdicts[prop] == "held", prop
    # the replay starts from another reset: step determinism cannot be judged, and says so
    assert verdicts["step-determinism"].startswith("not checked: no replay could be compared")
    assert error.steps > 0 and error.episodes > 1
    for each in error.broken:  # each its own shortest reproduction, ending in the check
        assert each.actions == [] and each.property in each.reproduction()
        compile(each.reproduction(), "<reproduction>", "exec")


def test_when_every_example_stops_at_a_broken_law_the_others_are_not_checked():
    error = _broken(Float64Batch)
    verdicts = error.verdicts()
    assert [e.property for e in error.broken] == ["batch-in-space"]
    assert verdicts["autoreset"] == "not checked: every example stopped at the broken batch-in-space"
    # the declaration and the one-off probes (close-twice) are decided before the search
    assert "held" not in {verdicts[p] for p in verdicts if p not in DECIDED_FIRST}


def test_a_leak_between_rows_is_reported_with_the_rows_it_makes_differ():
    # row-isolation is the precise diagnosis and comes first; rows-match-sub-envs is broken
    # too (row 1 is not what sub-env 1 returns), not held
    error = _broken(v.WindyVector)
    assert [e.property for e in error.broken] == ["row-isolation", "rows-match-sub-envs"]
    assert error.also[0].actions and len(error.also[0].actions) <= 2


def test_the_follow_up_replays_copies_against_copies():
    """The next-step law "the reset step ignores the row's action" is judged on two fresh
    copies: no false alarm where copies do not replay the first run (seeds ignored), and the
    bug is still caught where they do."""
    error = _broken(UnseededBatch)
    assert "autoreset" not in {e.property for e in error.broken}
    leak = _broken(v.ActionLeakBatch, max_steps=12)
    assert leak.property == "autoreset" and "ignores its action" in leak.detail


# -- dm_env and differential checks on the shared driver ------------------------------------


def test_dm_env_actions_are_drawn_by_the_shared_driver_and_shrink(tmp_path):
    pytest.importorskip("dm_env")
    from tests.dm_env_envs import Catch

    class Ladder(Catch):
        """Bug: three 2s in a row put the observation at 1.5, outside [0, 1]."""

        def reset(self):
            self.run = 0
            return super().reset()

        def step(self, action):
            self.run = self.run + 1 if int(action) == 2 else 0
            step = super().step(action)
            return step._replace(observation=np.full(2, 1.5, np.float32)) if self.run >= 3 else step

    from spacealg.testing import check

    with pytest.raises(EnvCheckError) as caught:
        check(Ladder, max_examples=100, max_steps=5, database=tmp_path)
    error = caught.value
    assert any(tmp_path.iterdir())  # the options of every checker apply: the failure is saved
    assert error.kind == "dm_env" and error.property == "observation-in-spec"
    assert [int(a) for a in error.actions] == [2, 2, 2]
    namespace: dict = {"Ladder": Ladder}
    lines = error.reproduction().splitlines()
    snippet = "\n".join("env = Ladder()" if line.startswith("env = ") else line for line in lines)
    with pytest.raises(AssertionError, match="observation"):
        exec(compile(snippet, "<reproduction>", "exec"), namespace)


def test_differing_spaces_stop_a_match_and_say_why_the_rest_is_not_checked():
    class Wider(g.Corridor):
        def __init__(self) -> None:
            super().__init__()
            from gymnasium import spaces

            self.action_space = spaces.Discrete(4)

    with pytest.raises(EnvCheckError) as caught:
        check_envs_match(g.Corridor, Wider, max_examples=5)
    verdicts = caught.value.verdicts()
    assert verdicts["spaces-match"] == "broken"
    assert verdicts["rewards-match"] == "not checked: the check stops at the broken spaces-match: no episode runs"


# -- EnvPool (optional: pip install envpool) ---------------------------------------------------


def test_envpool_is_checked_in_full():
    envpool = pytest.importorskip("envpool")

    def make() -> Any:
        return envpool.make("CartPole-v1", env_type="gymnasium", num_envs=4)

    with pytest.warns(UserWarning), pytest.raises(EnvCheckError) as caught:
        check_vector_env(make, max_examples=10)
    error = caught.value
    verdicts = error.verdicts()
    assert set(verdicts) == set(properties_of("vector"))
    assert verdicts["declared-spaces"] == "broken"  # observation_space is the single space
    for prop in ("no-exception", "batch-in-space", "autoreset", "row-isolation"):
        assert verdicts[prop] == "held", prop
    # EnvPool's rows are identical envs, but it does not declare it (metadata['identical_sub_envs']):
    # Gymnasium's seed + i convention is not asked of it (issue 35); its ignored seeds are reset-determinism's
    assert verdicts["sub-env-seeding"].startswith("not checked: the rows are not declared")
    assert verdicts["reset-determinism"] == "broken"
    assert all(why != "not checked: " for why in verdicts.values())
    assert error.steps > 0 and error.episodes > 1


def test_a_failure_stays_in_the_database_after_the_search_goes_past_it(tmp_path):
    """The search for further broken properties uses keys of its own: it used to replay the
    saved failure, pass over it, and so delete it from the database."""
    from spacealg.testing import check_env

    for max_examples in (100, 1):  # the second run finds it only by replaying the saved one
        with pytest.raises(EnvCheckError) as caught:
            check_env(g.LeakyCorridor, database=tmp_path, max_examples=max_examples, hygiene=False)
        assert caught.value.property == "observation-in-space"


# -- nothing held that did not run (issue 23 point 2, on the shared engine) ----------------------


def _error_of(case_name: str) -> EnvCheckError:
    from envcorpus import BUGGY, run_case

    (case,) = [c for c in BUGGY if c.name == case_name]
    if case.needs:
        pytest.importorskip(case.needs)
    with pytest.raises(EnvCheckError) as caught:
        run_case(case, max_examples=20)
    return caught.value


def test_a_reset_that_always_fails_leaves_the_episode_laws_not_checked():
    verdicts = _error_of("BrokenResetCorridor").verdicts()
    assert verdicts["no-exception"] == "broken"
    assert verdicts["observation-in-space"] == "not checked: every example stopped at the broken no-exception"
    assert verdicts["declared-spaces"] == "held"  # decided before the search: the spaces were read


def test_a_replay_that_never_agrees_leaves_determinism_not_checked_and_the_rest_checked():
    verdicts = _error_of("GlobalRngResetCorridor").verdicts()
    assert verdicts["global-rng"] == "broken"
    assert verdicts["step-determinism"].startswith("not checked: no replay could be compared past the broken")
    assert verdicts["observation-in-space"] == verdicts["reward-finite-real"] == "held"  # the first runs ran


def test_an_aec_env_with_fresh_spaces_is_checked_past_them():
    verdicts = _error_of("FreshSpaceTakeAway").verdicts()
    assert verdicts["same-space"] == "broken"
    assert verdicts["agent-iteration"] == verdicts["observation-in-space"] == "held"


@pytest.mark.parametrize("bug", ["DoubleCloseCorridor", "SameSeedBatch"])
def test_a_reproduction_of_a_factory_named_make_does_not_call_itself(bug, tmp_path, monkeypatch):
    """The snippet's own ``def make()`` shadowed a user's factory named ``make`` and recursed."""
    from spacealg.testing import check

    module = "checks_envs" if bug == "DoubleCloseCorridor" else "vector_envs"
    source = f"from envcorpus.{module} import {bug}\n\n\ndef make():\n    return {bug}()\n"
    (tmp_path / "userfactory.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(EnvCheckError) as caught:
        check("userfactory:make", max_examples=5)
    snippet = caught.value.reproduction()
    with pytest.raises(Exception) as failed:  # the bug's failure: an assertion or the env's own error
        exec(compile(snippet, "<reproduction>", "exec"), {"__name__": "snippet"})
    assert not isinstance(failed.value, RecursionError)


@pytest.mark.parametrize("search_seed", [7])
def test_silent_draws_generate_the_same_examples_and_shrink_to_the_same_one(search_seed):
    """The search's draws skip Hypothesis's notes: a seeded search drawing through
    ``SilentDraws`` generates the examples that ``data.draw`` generates, and a failure shrinks
    to the same minimal example (the path there may differ: ``data.draw`` also wraps each draw
    in a span of its own, which the shrinker reads)."""
    from hypothesis import given, seed, settings
    from hypothesis import strategies as st

    from spacealg.strategies import members
    from spacealg.testing.engine.driver import SilentDraws

    strategy = st.tuples(st.integers(0, 9), members(gymnasium.spaces.Box(-1, 1, (1,))), st.booleans())

    def run(wrap, fails):
        seen = []

        @seed(search_seed)
        @settings(max_examples=100 if fails else 40, database=None, derandomize=False)
        @given(st.data())
        def body(data):
            draws = wrap(data)
            values = [draws.draw(strategy) for _ in range(3)]
            seen.append(repr(values))
            assert not (fails and values[0][0] >= 5 and values[1][1][0] > 0.5)

        with contextlib.suppress(AssertionError):
            body()
        return seen

    assert run(lambda data: data, False) == run(SilentDraws, False)  # 40 examples, no failure
    plain, silent = run(lambda data: data, True), run(SilentDraws, True)
    assert plain[-1] == silent[-1] and plain[-1].startswith("[(5, array([0.]")  # the minimal failing one


# --- The engine's copies and comparisons of observations (testing/driver.py) ---------------

_dtypes = st.sampled_from([np.float32, np.float64, np.int8, np.int64, np.uint8, np.bool_, np.complex64])
_arrays = _dtypes.flatmap(lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3)))
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=2),
                     _arrays.map(lambda a: a[()] if a.ndim == 0 else a))
_observations = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(st.sampled_from("abc"), inner, max_size=3)),
    max_leaves=6,
)


def _equal(a: Any, b: Any) -> bool:
    """The reference: equal type and structure, arrays by dtype, shape and value, NaN equal to NaN."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):
        return bool(a == b or (np.isnan(a) and np.isnan(b)))
    return bool(type(a) is type(b) and a == b)


def _arrays_in(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return [array for item in items for array in _arrays_in(item)]


@given(_observations, _observations)
@example({"x": np.array([np.nan, 1.0], np.float32), "y": (np.float64("nan"), [np.int8(1)])}, np.zeros(2, np.float32))
@example(np.array([complex("nan"), 0j]), np.array([complex("nan"), 0j]))
def test_snapshot_is_a_deep_copy_and_same_is_structural_equality(a: Any, b: Any) -> None:
    """Laws: ``same(snapshot(x), copy.deepcopy(x))`` and ``same(snapshot(x), x)`` (NaN equal to
    NaN); the snapshot shares no array buffer with ``x``; ``same(a, b)`` is the reference
    structural equality, for any two observations."""
    copied = snapshot(a)
    assert same(copied, copy.deepcopy(a)) and same(copied, a) and _equal(copied, a)
    for original, kept in zip(_arrays_in(a), _arrays_in(copied)):
        assert not np.shares_memory(original, kept)
    assert same(a, b) == _equal(a, b)


class GatedSyncVector(gymnasium.vector.SyncVectorEnv):
    """A sound SyncVectorEnv of CartPoles that raises when stepped after ``close`` and, where
    ``gate`` is given, holds its first step until the gate opens."""

    def __init__(self, gate: Any = None) -> None:
        super().__init__([lambda: gymnasium.make("CartPole-v1")] * 2)
        self.gate = gate

    def step(self, actions: Any) -> Any:
        if self.gate is not None:
            assert self.gate.wait(120), "the other check never ended"
            self.gate = None
        if self.closed:
            raise RuntimeError("stepped after close: another check closed this check's env")
        return super().step(actions)


def test_two_vector_checks_in_threads_close_only_their_own_envs():
    # review leftover of issue 35: the vector envs a check opened were one module-level list,
    # so a check ending in one thread closed the env another thread's check was stepping
    import threading

    other_done = threading.Event()
    built: list[Any] = []

    def gated() -> Any:  # the check's own instance (its first) waits for the other check to end
        built.append(GatedSyncVector(other_done if not built else None))
        return built[-1]

    outcome: list[Any] = []

    def waiting_check() -> None:
        try:
            outcome.append(check_vector_env(gated, max_examples=2, max_steps=3, random_seed=0))
        except BaseException as error:  # handed to the main thread
            outcome.append(error)

    thread = threading.Thread(target=waiting_check)
    thread.start()
    try:
        check_vector_env(GatedSyncVector, max_examples=2, max_steps=3, random_seed=0)
    finally:
        other_done.set()
        thread.join(120)
    assert not thread.is_alive()
    assert len(outcome) == 1 and not isinstance(outcome[0], BaseException), outcome
    assert built[0].closed  # the waiting check closed its own env when it ended


def test_a_vector_check_refuses_bad_options_by_name_before_building_anything():
    # the options are validated in one place (runner.options_of), for every checker
    built: list[Any] = []
    for name, value in (("max_broken", 0), ("max_examples", 0), ("budget", -1.0)):
        with pytest.raises(ValueError, match=name):
            check_vector_env(lambda: built.append(1) or GatedSyncVector(), **{name: value})
    assert built == []
