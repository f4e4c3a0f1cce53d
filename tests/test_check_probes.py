"""The RNG probes and their snippets (issue 35): a snippet replays what its probe compared
(the same fixed actions, through the same plain-Python lines), so a seed that is ignored
only after the first step gives a snippet that fails while the bug is there and passes on
the sound twin (the first-observation snippet passed on both)."""

from __future__ import annotations

import pytest

from spacealg.testing import EnvCheckError, check
from spacealg.testing.engine.snippets import SEEDING

# (the buggy env, its sound twin, the property): first observations agree for every seed
LATE = [
    ("checks_envs", "SeededOnceGustyCorridor", "GustyCorridor", "reset-seed"),
    ("parallel_envs", "SeededOnceGustyRace", "GustyRace", "reset-seed"),
    ("aec_envs", "SeededOnceGustyTakeAway", "GustyTakeAway", "reset-seed"),
    ("checks_envs", "ConstructorSeededCorridor", "Corridor", "reset-seed"),
    ("checks_envs", "ReseedingCorridor", "Corridor", "reset-stream"),
    ("aec_envs", "SeedlessTakeAway", "TakeAway", "reset-seed"),
]


def _factories(module: str, buggy: str, sound: str) -> tuple[type, type]:
    if module != "checks_envs":
        pytest.importorskip("pettingzoo")
    import importlib

    corpus = importlib.import_module(f"envcorpus.{module}")
    return getattr(corpus, buggy), getattr(corpus, sound)


def _run(snippet: str) -> None:
    exec(compile(snippet, "<reproduction>", "exec"), {"__name__": "snippet"})


@pytest.fixture(scope="module")
def caught() -> dict[str, EnvCheckError]:
    return {}


def _caught(caught: dict[str, EnvCheckError], module: str, buggy: str, sound: str) -> EnvCheckError:
    if buggy not in caught:
        bug, _ = _factories(module, buggy, sound)
        with pytest.raises(EnvCheckError) as raised:
            check(bug, max_examples=5, max_broken=1)
        caught[buggy] = raised.value
    return caught[buggy]


@pytest.mark.parametrize(("module", "buggy", "sound", "prop"), LATE, ids=[case[1] for case in LATE])
def test_the_probe_finds_it_and_its_snippet_is_a_regression_test(caught, module, buggy, sound, prop):
    """The check reports the property; the snippet's AssertionError is the probe's finding,
    word for word (they ran the same lines); on the sound twin the snippet passes."""
    error = _caught(caught, module, buggy, sound)
    assert error.property == prop and error.seed is None
    snippet = error.reproduction()
    with pytest.raises(AssertionError) as raised:
        _run(snippet)
    assert str(raised.value) == error.detail
    _run(snippet.replace(buggy, sound))


@pytest.mark.parametrize(("module", "buggy", "sound"), [case[:3] for case in LATE[:3]], ids=[c[1] for c in LATE[:3]])
def test_first_observations_alone_would_not_show_it(caught, module, buggy, sound):
    """Why the snippet replays the steps: the same snippet with no action (the first
    observations only, what it compared before) passes on the buggy env too."""
    snippet = _caught(caught, module, buggy, sound).reproduction()
    start, end = snippet.index("actions = ["), snippet.index("]\n", snippet.index("actions = [")) + 2
    _run(snippet[:start] + "actions = []\n" + snippet[end:])


@pytest.mark.parametrize(("module", "buggy", "sound"), [case[:3] for case in LATE[:3]], ids=[c[1] for c in LATE[:3]])
def test_the_sound_twin_holds_the_rng_laws(module, buggy, sound):
    _, twin = _factories(module, buggy, sound)
    report = check(twin, max_examples=5)
    assert {"reset-seed", "reset-stream"} <= set(report.properties)


def test_the_snippet_shows_the_lines_the_probe_ran(caught):
    """Law: the snippet holds :data:`SEEDING` and the kind's ``probe_episode`` as the probe
    ran them, and the probe's fixed actions."""
    from spacealg.testing.kinds.gymnasium import PROBE_EPISODE

    error = _caught(caught, *LATE[0][:3])
    snippet = error.reproduction()
    assert "\n".join([*SEEDING, *PROBE_EPISODE]) in snippet
    assert len(error.context["probe_actions"]) == 3 and "actions = [\n" in snippet


def test_a_probe_that_crashes_leaves_its_properties_not_checked():
    """An env whose every step raises: the search reports the crash, and the seeding
    properties, whose probe steps too, are "not checked" with the probe's error, never held."""
    from envcorpus.checks_envs import Corridor

    class CrashingCorridor(Corridor):
        def step(self, action):
            raise RuntimeError("the step of this env always fails")

    with pytest.raises(EnvCheckError) as raised:
        check(CrashingCorridor, max_examples=5)
    verdicts = raised.value.verdicts()
    assert verdicts["no-exception"] == "broken"
    for prop in ("reset-seed", "reset-stream"):
        assert verdicts[prop].startswith("not checked: their probe raised RuntimeError"), verdicts[prop]
