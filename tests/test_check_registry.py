"""The registry of environment kinds (issue 35): one entry per kind that everything reads,
so that a new kind is its module and one registry line; and verdicts earned: a property is
held only where some example took it past its precondition."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from spacealg.cli import main
from spacealg.testing import EnvCheckError, check, check_envs_match, check_vector_env, replay
from spacealg.testing.engine.runner import EnvKind
from spacealg.testing.registry import KINDS, kind_named, kind_of, register, unregister
from spacealg.testing.suite import checker_for

TESTS = Path(__file__).parent


def _python_path() -> str:
    return os.pathsep.join([str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")])


# -- a kind from outside the package ----------------------------------------------------------


def test_a_kind_registered_from_outside_gets_check_replay_and_snippets():
    from envcorpus.toy_kind import TALLY, OverTally, Tally, check_tally

    assert kind_of(Tally()) is TALLY and checker_for(Tally) is check_tally
    report = check(Tally, max_examples=20)
    assert report.kind == "tally" and set(report.properties) == set(TALLY.properties)
    with pytest.raises(EnvCheckError) as caught:
        check(OverTally, max_examples=30)
    error = caught.value
    assert (error.kind, error.property) == ("tally", "add-in-range")
    assert error.statement == TALLY.properties["add-in-range"] and "law: start" not in str(error)
    with pytest.raises(EnvCheckError) as again:
        replay(OverTally, error.seed, error.actions)
    assert again.value.property == "add-in-range"
    replay(Tally, error.seed, error.actions)  # the sound twin replays clean
    snippet = error.reproduction()
    assert "env.add(action)" in snippet and "from envcorpus.toy_kind import OverTally" in snippet
    run = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": _python_path()},
    )
    assert run.returncode == 1 and "AssertionError" in run.stderr  # fails while the bug is there


def test_a_kind_registered_from_outside_gets_the_cli_and_its_json(capsys):
    import envcorpus.toy_kind  # noqa: F401 - the module registers its kind

    assert main(["check", "envcorpus.toy_kind:Tally", "-n", "10"]) == 0
    out = capsys.readouterr().out
    assert "counts" in out and "ok  add-in-range" in out
    assert main(["check", "envcorpus.toy_kind:OverTally", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["status"] == "failed" and document["property"] == "add-in-range"
    assert document["spaces"]["action space"] == "Discrete(3)"
    assert "env.add(action)" in document["broken"][0]["reproduction"]
    assert set(document["verdicts"]) == set(kind_named("tally").properties)


def test_register_puts_a_kind_first_and_unregister_restores_the_registry():
    before = list(KINDS)
    toy = EnvKind("toy", {"p": "a law"}, check, recognises=lambda env: isinstance(env, str))
    try:
        assert register(toy) is toy and KINDS[0] is toy and kind_of("anything") is toy
    finally:
        unregister("toy")
    assert before == KINDS
    with pytest.raises(TypeError, match="kind must be an EnvKind"):
        register("toy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind must be one of"):
        kind_named("toy")


def test_every_kind_is_recognised_in_registry_order():
    from envcorpus.aec_envs import TakeAway
    from envcorpus.gym_envs import Corridor
    from envcorpus.parallel_envs import Race
    from envcorpus.vector_envs import CorridorVector

    names = [kind_of(env).name for env in (TakeAway(), Race(), CorridorVector(), Corridor())]
    assert names == ["aec", "parallel", "vector", "gymnasium"]
    assert [k.name for k in KINDS][-1] == "gymnasium" and kind_of(object()).name == "gymnasium"


def test_no_module_switches_on_a_kind_name():
    """A kind's name is compared nowhere: every decision about a kind reads its entry."""
    root = TESTS.parent / "spacealg"
    found = [
        f"{path}:{n}"
        for path in [*root.joinpath("testing").rglob("*.py"), *root.joinpath("cli").rglob("*.py")]
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for name in [k.name for k in KINDS if k.name != "tally"]
        if f'kind == "{name}"' in line or f'kind != "{name}"' in line or f'.kind in ("{name}"' in line
    ]
    assert found == []


# -- verdicts earned ---------------------------------------------------------------------------


def _no_progress() -> dict[str, tuple[tuple[Any, ...], dict[str, Any], str]]:
    """Per kind: the arguments of its checker for an environment that makes no progress
    (every example stops at step 0), options, and one law that needs a step."""
    from envcorpus.gym_envs import Corridor
    from envcorpus.parallel_envs import Race
    from envcorpus.toy_kind import Tally
    from envcorpus.vector_envs import CorridorVector

    from tests.dm_env_envs import Catch
    from tests.jax_toy_envs import WalkParams, make_walk

    return {  # (the walk's episode limit beyond the 2,000 steps of the long examples: none is drawn)
        "jax": (((make_walk(), WalkParams(5000)),), {"batch": 4}, "reward-in-space"),
        "gymnasium": ((Corridor,), {}, "step-signature"),
        "parallel": ((Race,), {}, "agents-life-cycle"),
        "aec": ((_idle_aec(),), {}, "agent-iteration"),
        "vector": ((CorridorVector,), {}, "batch-in-space"),
        "match": ((Corridor, Corridor), {}, "rewards-match"),
        "dm_env": ((Catch,), {}, "step-type"),
        "torchrl": (("tests.dm_env_envs:make_torchrl_cartpole",), {}, "reward-in-spec"),
        "tally": ((Tally,), {}, "add-in-range"),
    }


def _idle_aec() -> Any:
    """An AEC game whose every example stops at the first ``last()``: no agent is live
    after reset (the case that reported the AEC step laws held with 0 steps)."""
    from envcorpus.aec_envs import TakeAway

    class NoOneMoves(TakeAway):
        def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
            super().reset(seed=seed, options=options)
            self.agents = []
            for name in ("terminations", "truncations", "rewards", "infos", "_cumulative_rewards"):
                setattr(self, name, {})

    return NoOneMoves


@pytest.mark.parametrize("name", [k.name for k in KINDS])
def test_a_kind_that_makes_no_progress_holds_nothing_that_needs_progress(name):
    """Law: every kind run by the engine, on an environment whose every example stops at
    step 0, reports each property that needs a step, an end, a mask or an illegal action as
    not checked (with why), never held (a JAX environment: max_steps=0, the resets only)."""
    kind = kind_named(name)
    assert kind.preconditions, f"the {name} kind states no preconditions"
    if name in ("dm_env", "torchrl", "jax"):
        pytest.importorskip(name)
    import envcorpus.toy_kind  # noqa: F401 - registers the tally kind

    args, options, needs_a_step = _no_progress()[name]
    report = kind.check(*args, max_examples=5, max_steps=0, **options)
    progress = {"step", "end", "mask", "illegal", "cycles"}
    needing = [p for p, conditions in kind.preconditions.items() if any(c.mark in progress for c in conditions)]
    assert needs_a_step in needing
    for prop in needing:
        assert prop not in report.properties, f"{prop} held without a step"
        assert prop in report.not_checked
    why = report.not_checked[needs_a_step]
    assert "step" in why or "option" in why or "=" in why
    assert report.verdicts()[needs_a_step].startswith("not checked")


def test_the_aec_episode_that_stops_at_the_first_last_holds_no_step_law_at_any_length():
    report = check(_idle_aec(), max_examples=10)
    assert report.steps == 0
    for prop in ("step-signature", "agent-iteration", "reward-finite-real", "max-cycles", "no-exception"):
        assert prop not in report.properties and prop in report.not_checked


def test_max_cycles_is_not_held_where_no_episode_reached_an_end():
    """An AEC game that never ends and whose max_cycles lies beyond the steps drawn: the law
    was never put to the test (it was reported held)."""
    from envcorpus.aec_envs import TakeAway

    class Endless(TakeAway):
        MAX_CYCLES = 5000  # (5000 + 2) agent-steps per player: beyond the checker's cap

        def _take(self, action: Any) -> int:
            return 0  # the pile never shrinks: no game ends

    report = check(Endless, max_examples=10, max_steps=20)
    assert "max-cycles" not in report.properties
    assert "max-cycles" in report.not_checked


class _RenderNeedsPygame:
    """Mixin: rgb_array rendering needs a package that is missing."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"]}

    def render(self) -> Any:
        raise ImportError("No module named 'pygame' (the optional dependency of rgb_array)")


def _missing_dependency() -> dict[str, Any]:
    from envcorpus.aec_envs import TakeAway
    from envcorpus.gym_envs import Corridor
    from envcorpus.parallel_envs import Race

    def build(base: type) -> type:
        class Unrendered(_RenderNeedsPygame, base):  # type: ignore[valid-type, misc]
            def __init__(self, render_mode: str | None = None) -> None:
                base.__init__(self)
                self.render_mode = render_mode

        Unrendered.__qualname__ = f"Unrendered{base.__name__}"
        return Unrendered

    def vector(render_mode: str | None = None) -> Any:
        from gymnasium.vector import SyncVectorEnv

        return SyncVectorEnv([functools.partial(build(Corridor), render_mode=render_mode)] * 2)

    return {"gymnasium": build(Corridor), "parallel": build(Race), "aec": build(TakeAway), "vector": vector}


@pytest.mark.parametrize("name", [k.name for k in KINDS])
def test_a_kind_missing_an_optional_dependency_holds_nothing_it_needed(name):
    """Law: where a kind's check needs an optional dependency (rendering: the kinds that
    declare ``render-modes``) and it is missing, the property is not checked, and says why."""
    kind = kind_named(name)
    if "render-modes" not in kind.properties:
        assert name not in _missing_dependency()
        pytest.skip(f"the {name} kind needs no optional dependency of its own")
    env = _missing_dependency()[name]
    report = kind.check(env, max_examples=5, max_steps=5)
    assert "render-modes" not in report.properties
    assert "pygame" in report.not_checked["render-modes"]


def test_a_property_with_a_mask_precondition_is_held_only_where_a_mask_was_seen():
    from envcorpus.gym_envs import Corridor

    report = check(Corridor, max_examples=10)
    assert "action-mask" in report.not_checked and "mask" in report.not_checked["action-mask"]
    assert np.isin(["step-signature", "reset-after-done"], report.properties).all()


def test_vector_and_match_kinds_take_their_own_arguments():
    from envcorpus.gym_envs import Corridor
    from envcorpus.vector_envs import CorridorVector

    assert check_vector_env(CorridorVector, max_examples=3, max_steps=5).kind == "vector"
    assert check_envs_match(Corridor, Corridor, max_examples=3, max_steps=5).kind == "match"


# -- the Gymnasium entry point: the registry decides the kind ---------------------------------


@pytest.mark.parametrize(("make", "kind"), [("Catch", "dm_env"), ("make_torchrl_cartpole", "torchrl")])
def test_check_env_hands_a_dm_env_or_torchrl_env_to_its_kind_through_the_registry(make, kind):
    """Issue 35 point 2: ``check_env`` asks the registry, as ``check`` does; without the
    kind registered the same instance is taken for a Gymnasium environment."""
    pytest.importorskip("dm_env" if kind == "dm_env" else "torchrl")
    import tests.dm_env_envs as foreign
    from spacealg.testing import check_env

    factory = getattr(foreign, make)
    assert check_env(factory(), max_examples=2, max_steps=3).kind == kind
    assert check(factory(), max_examples=2, max_steps=3).kind == kind
    registered = kind_named(kind)
    at = KINDS.index(registered)
    unregister(kind)
    try:
        try:
            outcome = check_env(factory(), max_examples=2, max_steps=3).kind
        except EnvCheckError as error:
            outcome = error.kind
        assert outcome != kind
    finally:
        KINDS.insert(at, registered)


def test_check_env_hands_a_kind_registered_from_outside_to_it():
    from envcorpus.toy_kind import Tally

    from spacealg.testing import check_env

    assert check_env(Tally, max_examples=5).kind == "tally"
