"""The search to a shortest failure, length first and shrinking last (engine/runner.py's
``refine``, engine/driver.py's ``search`` and ``Unshrunk``): a failure found unshrunk is found
again and shrunk; a shrink never trades actions for simpler choices; refining a property that
no replay decides replays nothing; and the whole keeps what the reports promise (the
property, a reproduction, and the shortest length where the corpus tests say so)."""

from __future__ import annotations

from typing import Any

import pytest
from envcorpus import gym_envs as g
from hypothesis import strategies as st

from spacealg.testing import EnvCheckError, check_env, replay
from spacealg.testing.engine.driver import Budget, Focus, Unshrunk, search
from spacealg.testing.engine.errors import PropertyError
from spacealg.testing.engine.resolve import resolve
from spacealg.testing.engine.runner import episode_body, options_of
from spacealg.testing.registry import kind_named


def _body(needed: int, runs: list[list[int]]) -> Any:
    """An episode of up to 40 draws in 0..9 that breaks once ``needed`` of them are 9 (the
    shortest failure: ``needed`` nines); every run's draws are recorded in ``runs``."""

    def body(data: Any) -> None:
        n = data.draw(st.integers(0, 40))
        drawn: list[int] = []
        runs.append(drawn)
        for step in range(1, n + 1):
            drawn.append(data.draw(st.integers(0, 9)))
            if drawn.count(9) >= needed:
                error = PropertyError("nines", f"{needed} nines", step)
                error.actions = list(drawn)
                raise error

    return body


@pytest.mark.parametrize("needed", [1, 2, 3])
@pytest.mark.parametrize("random_seed", [0, 40961])  # (a search of its own: Hypothesis does not nest)
def test_a_failure_found_unshrunk_is_found_again_and_shrunk(needed, random_seed):
    """Law: ``search(shrink=False)`` reports its first failure as found, saved in an
    ``Unshrunk`` database; after ``shrink_next()``, ``search(generate=False)`` runs that failure
    first (and nothing new) and shrinks it to the minimal one."""
    database, runs = Unshrunk(), []
    found = search(_body(needed, runs), max_examples=200, random_seed=random_seed, database=database, shrink=False)
    assert found.violation is not None and found.reproducible
    assert found.violation.actions == runs[-1]  # the failure as it was found: no shrinking ran
    assert found.violation.actions.count(9) == needed
    database.shrink_next()
    shrink_runs: list[list[int]] = []
    shrunk = search(_body(needed, shrink_runs), max_examples=200, random_seed=random_seed, database=database,
                    generate=False)
    assert shrink_runs[0] == found.violation.actions  # the saved failure, replayed first
    assert shrunk.violation is not None and shrunk.reproducible
    assert shrunk.violation.actions == [9] * needed  # the minimal failure


def test_a_search_that_may_not_generate_runs_nothing_without_a_saved_failure():
    runs: list[list[int]] = []
    outcome = search(_body(1, runs), max_examples=50, random_seed=0, database=Unshrunk(), generate=False)
    assert outcome.violation is None and runs == []


def test_a_global_seed_does_not_keep_a_failure_from_being_shrunk(monkeypatch):
    """pytest --hypothesis-seed sets a global seed, under which Hypothesis uses no database
    for a test of its own: the search keeps its key, so its failure is still shrunk."""
    import hypothesis.core

    monkeypatch.setattr(hypothesis.core, "global_force_seed", 12345)
    database = Unshrunk()
    found = search(_body(2, []), max_examples=200, random_seed=0, database=database, shrink=False)
    database.shrink_next()
    shrunk = search(_body(2, []), max_examples=200, random_seed=0, database=database, generate=False)
    assert found.violation is not None and shrunk.violation is not None
    assert shrunk.violation.actions == [9, 9]


def test_the_callers_database_still_receives_the_failures():
    from hypothesis.database import InMemoryExampleDatabase

    inner = InMemoryExampleDatabase()
    search(_body(2, []), max_examples=200, random_seed=0, database=Unshrunk(inner), shrink=False)
    assert any(inner.data.values())


def test_a_shrink_counts_no_failure_longer_than_the_best():
    """Law: with ``Focus.most``, a violation taking more actions passes (``longer``), so a
    shrink keeps within the best length found."""
    short, long = PropertyError("p", "", 2), PropertyError("p", "", 5)
    short.actions, long.actions = [0, 1], [0] * 5
    focus = Focus(most=3)
    assert not focus.longer(short) and focus.longer(long)
    assert not Focus().longer(long)


class _CountingResets(g.OffByOneGridWorld):
    resets = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        type(self).resets += 1
        return super().reset(seed=seed, options=options)


@pytest.mark.parametrize(
    ("only", "replays"), [(None, True), ("observation-in-space", False), ("step-determinism", True)]
)
def test_refining_a_property_no_replay_decides_replays_nothing(only, replays):
    """Law: an example of a search for one property that is not a determinism one runs once
    (one reset, on a grid too small for any failure); any other search replays it (two)."""
    kind, source = kind_named("gymnasium"), resolve(_CountingResets)
    options = options_of({})
    body = episode_body(kind, source, options, {"steps": 0, "episodes": 0, "replayed": 0, "reached": set()},
                        Budget(None), Focus(0, only))
    _CountingResets.resets = 0
    search(body, max_examples=3, random_seed=0)
    assert _CountingResets.resets == 3 * (2 if replays else 1)


@pytest.mark.parametrize("env", [g.OffByOneGridWorld, g.LeakyCorridor])
def test_the_reported_failure_replays_and_no_prefix_does(env):
    """The search's result keeps its promises: it replays with its seed and actions, and
    its actions without the last do not (the failure is at the last action)."""
    with pytest.raises(EnvCheckError) as caught:
        check_env(env, max_broken=1)
    error = caught.value
    with pytest.raises(EnvCheckError) as again:
        replay(env, error.seed, error.actions)
    assert again.value.property == error.property
    replay(env, error.seed, error.actions[:-1])
