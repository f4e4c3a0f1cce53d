"""benchmarks/mutation_score.py cannot rot silently: each operator really injects the defect
it states (seen by a direct assertion on the mutant, and absent from the unmutated base),
where an operator applies is decided as stated, and the table writer round-trips."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import mutation_score  # noqa: E402
from mutants import BASES, OPERATORS, NotApplicable, mutant  # noqa: E402
from mutants.catalogue import MATCH, NotObservable  # noqa: E402
from mutants.checkers import Verdict  # noqa: E402
from sections import markers, write_section  # noqa: E402

K = 2
BY_NAME = {b.name: b for b in BASES}
BEACON, CARTPOLE = BY_NAME["Beacon (Dict obs)"], BY_NAME["CartPole-v1"]
STAY, RIGHT = 1, 2  # Beacon's actions


def _run(make: Callable[..., Any], actions: list[int], seed: int = 0, **keywords: Any) -> dict[str, list[Any]]:
    """Reset ``make(**keywords)`` with ``seed`` and take ``actions``: what it returned, and
    copies of the observations taken when they were returned."""
    env = make(**keywords)
    obs, _ = env.reset(seed=seed)
    seen: dict[str, list[Any]] = {"obs": [obs], "copies": [_copy(obs)], "rewards": [], "terminated": [],
                                  "truncated": [], "infos": []}
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(np.int64(action))
        for key, value in zip(("rewards", "terminated", "truncated", "infos"), (reward, terminated, truncated, info)):
            seen[key].append(value)
        seen["obs"].append(obs)
        seen["copies"].append(_copy(obs))
        if np.any(terminated) or np.any(truncated):
            break
    env.close()
    return seen


def _copy(obs: Any) -> Any:
    return {k: np.array(v, copy=True) for k, v in obs.items()} if isinstance(obs, dict) else np.array(obs, copy=True)


def _first_obs(make: Callable[..., Any], seed: int) -> Any:
    return _copy(make().reset(seed=seed)[0])


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return all(_same(a[key], b[key]) for key in a)
    return bool(np.array_equal(a, b))


def _never_ends(make: Callable[..., Any]) -> tuple[int, Any]:
    """Beacon staying put from a start away from its beacon: (steps run up to 60, its spec)."""
    env = make()
    env.reset(seed=0)
    for step in range(1, 61):
        _, _, terminated, truncated, _ = env.step(np.int64(STAY))
        if terminated or truncated:
            return step, env.spec
    return 60, env.spec


def _global_rng(make: Callable[..., Any]) -> bool:
    runs = []
    for state in (0, 1):
        np.random.seed(state)
        runs.append(_run(make, [RIGHT] * 6)["copies"])
    return not all(_same(a, b) for a, b in zip(*runs))


def _rejects(make: Callable[..., Any]) -> bool:
    env = make()
    env.reset(seed=0)
    env.step(np.int64(STAY))
    try:
        env.step(np.int64(RIGHT))  # the last action of Discrete(3), a member
    except ValueError:
        return True
    return False


def _closes_badly(make: Callable[..., Any]) -> bool:
    env = make()
    try:
        env.close()
    except RuntimeError:
        return True
    return False


# operator -> (base, does the defect show?); each returns True on the mutant, False on the base
WITNESSES: dict[str, tuple[Any, Callable[[Callable[..., Any]], bool]]] = {
    "observation-out-of-space": (BEACON, lambda make: not all(
        make().observation_space.contains(o) for o in _run(make, [RIGHT] * 4)["obs"])),
    "dtype-drift": (BEACON, lambda make: any(
        o["position"].dtype != np.float32 for o in _run(make, [RIGHT] * 4)["obs"])),
    "shape-drift": (BEACON, lambda make: any(o["position"].shape != (2,) for o in _run(make, [RIGHT] * 4)["obs"])),
    "seed-ignored": (BEACON, lambda make: _same(_first_obs(make, 1), _first_obs(make, 2))),
    "seeded-once": (BEACON, lambda make: (lambda env: not _same(
        _copy(env.reset(seed=1)[0]), _copy(env.reset(seed=1)[0])))(make())),
    "global-rng": (BEACON, _global_rng),
    "nan-reward": (BEACON, lambda make: any(np.isnan(r) for r in _run(make, [RIGHT] * 4)["rewards"])),
    "reward-array": (BEACON, lambda make: any(isinstance(r, np.ndarray) for r in _run(make, [STAY] * 3)["rewards"])),
    "flags-array": (BEACON, lambda make: any(
        isinstance(f, np.ndarray) for f in _run(make, [STAY] * 3)["terminated"])),
    "info-not-dict": (BEACON, lambda make: any(not isinstance(i, dict) for i in _run(make, [STAY] * 3)["infos"])),
    "aliased-observation": (CARTPOLE, lambda make: (lambda seen: not all(
        _same(o, c) for o, c in zip(seen["obs"], seen["copies"])))(_run(make, [0, 1, 0, 1]))),
    "aliased-dict-observation": (BEACON, lambda make: (lambda seen: not all(
        _same(o, c) for o, c in zip(seen["obs"], seen["copies"])))(_run(make, [STAY, RIGHT, 0, RIGHT, 0]))),
    "action-rejected": (BEACON, _rejects),
    "close-raises": (BEACON, _closes_badly),
    "render-none": (BEACON, lambda make: (lambda env: (env.reset(seed=0), env.render())[1] is None)(
        make(render_mode="ansi"))),
    "malformed-space": (BEACON, lambda make: (lambda env: not env.observation_space.contains(env.reset(seed=0)[0]))(
        make())),
    "never-truncates": (BEACON, lambda make: (lambda run: run[0] > run[1].max_episode_steps == 50)(_never_ends(make))),
    "action-ignored": (BEACON, lambda make: not all(
        _same(a, b) for a, b in zip(_run(make, [RIGHT] * 4)["copies"], _run(BEACON.make, [RIGHT] * 4)["copies"]))),
    "flags-swapped": (BEACON, lambda make: (lambda env: (env.reset(seed=0), [env.step(np.int64(STAY))
                                                                            for _ in range(50)])[1][-1][2:4]
                                            == (True, False))(make())),
}


@pytest.mark.parametrize("operator", OPERATORS, ids=str)
def test_each_operator_injects_its_defect_and_the_base_has_none(operator: Any) -> None:
    base, shows = WITNESSES[operator.name]
    assert shows(mutant(base, operator, K)), f"{operator.name} on {base.name}: the defect does not show"
    assert not shows(base.make), f"{base.name} shows the defect of {operator.name} unmutated"


def test_every_operator_has_a_witness_and_the_catalogue_is_as_large_as_promised() -> None:
    assert set(WITNESSES) == {o.name for o in OPERATORS}
    assert sum(o.scored_by != MATCH for o in OPERATORS) >= 14
    kinds = [b.kind for b in BASES]
    assert kinds.count("gymnasium") >= 6 and kinds.count("gymnax") >= 2 and "vector" in kinds
    assert {"aec", "parallel"} <= set(kinds)


def test_a_defect_starts_at_step_k() -> None:
    nan = next(o for o in OPERATORS if o.name == "nan-reward")
    rewards = _run(mutant(BEACON, nan, 3), [STAY] * 4)["rewards"]
    assert not np.isnan(rewards[:2]).any() and np.isnan(rewards[2:]).all()


def test_pettingzoo_mutants_break_what_they_say() -> None:
    """never-truncates on rps (parallel): declares max_cycles 15 and plays on past it; the
    aliasing inside tictactoe's Dict observation (AEC) overwrites an observation returned earlier."""
    never = next(o for o in OPERATORS if o.name == "never-truncates")
    for make, ends in ((BY_NAME["rps_v2 (parallel)"].make, True), (mutant(BY_NAME["rps_v2 (parallel)"], never), False)):
        env = make()
        env.reset(seed=0)
        truncated = [any(env.step({a: 0 for a in env.agents})[3].values()) for _ in range(20) if env.agents]
        declared = getattr(env, "max_cycles", None) or env.unwrapped.max_cycles
        assert declared == 15 and any(truncated) == ends
    aliased = next(o for o in OPERATORS if o.name == "aliased-dict-observation")
    tictactoe = BY_NAME["tictactoe_v3 (AEC)"]
    for make, overwritten in ((tictactoe.make, False), (mutant(tictactoe, aliased), True)):
        env = make()
        env.reset(seed=0)
        kept = []
        for action in (0, 1, 5, 2, 7, 3):  # no line for either player: the game goes on
            observation = env.observe(env.agent_selection)
            kept.append((observation["observation"], observation["observation"].copy()))
            env.step(action)
        assert (not all(np.array_equal(o, c) for o, c in kept)) == overwritten


def test_where_an_operator_does_not_apply_it_says_why() -> None:
    by_name = {o.name: o for o in OPERATORS}
    with pytest.raises(NotApplicable, match="no Box leaf"):
        mutant(BY_NAME["Taxi-v4"], by_name["dtype-drift"])
    with pytest.raises(NotApplicable, match="no randomness"):
        mutant(BY_NAME["tictactoe_v3 (AEC)"], by_name["seeded-once"])
    with pytest.raises(NotObservable, match="SyncVectorEnv copies"):
        mutant(BY_NAME["SyncVectorEnv(3 x CartPole-v1)"], by_name["aliased-observation"])
    with pytest.raises(NotApplicable, match="not for gymnax environments"):
        mutant(BY_NAME["gymnax CartPole-v1"], by_name["close-raises"])


def _fake_run() -> Any:
    ops = {o.name: o for o in OPERATORS}
    one = mutation_score.Mutant(CARTPOLE, ops["nan-reward"], verdicts={
        "spacealg": Verdict("killed", "reward-finite-real"), "Gymnasium check_env": Verdict("passed")})
    two = mutation_score.Mutant(CARTPOLE, ops["close-raises"], verdicts={
        "spacealg": Verdict("crashed", "RuntimeError: close failed"),
        "Gymnasium check_env": Verdict("killed", "RuntimeError")})
    gone = mutation_score.Mutant(CARTPOLE, ops["aliased-dict-observation"], absent="no Dict")
    sound = {CARTPOLE.name: {"spacealg": Verdict("passed"), "Gymnasium check_env": Verdict("warned", "w", ("w",))}}
    return mutation_score.Run([one, two, gone], sound, "not asked for", {"max_examples": 1}, K)


def test_the_table_scores_what_the_verdicts_say() -> None:
    text = mutation_score.table(_fake_run())
    assert "| `nan-reward` |" in text and "| 1 | 1/1 | 0/1 |" in text
    assert "| spacealg | 2 | 2 | 100% | 0 | 0 of 1 |" in text
    assert "| Gymnasium check_env | 2 | 1 | 50% | 0 | 0 of 1 |" in text
    assert "**Survivors of Gymnasium check_env** (checker missed; a warning it gave instead in brackets):\n\n" \
           "- `nan-reward`: CartPole-v1\n" in text
    assert "(1 of them by a raw exception instead of a property)" in text
    assert "- `close-raises` on `CartPole-v1`: RuntimeError: close failed" in text
    assert "`CartPole-v1` (no Dict)" in text


def test_the_writer_replaces_only_the_marked_section(tmp_path: Path) -> None:
    # the one writer of both benchmarks' --write (benchmarks/sections.py)
    begin, end = markers(mutation_score.SECTION)
    page = tmp_path / "page.md"
    page.write_text(f"before\n{begin}\nold\n{end}\nafter\n")
    for text in ("first table", "second table"):
        write_section(page, mutation_score.SECTION, text)
        assert page.read_text() == f"before\n{begin}\n{text}\n{end}\nafter\n"
    (tmp_path / "bare.md").write_text("no markers")
    with pytest.raises(SystemExit, match="markers"):
        write_section(tmp_path / "bare.md", mutation_score.SECTION, "x")
    assert (tmp_path / "bare.md").read_text() == "no markers"
