"""The checkers' speed, shown (issue 36.5): a passed check's report carries
``steps_per_second`` (a field, so the repr a REPL shows of ``check_jax_env(...)`` has it),
its summary line gives it, and ``spacealg check`` prints it and puts it in its JSON. For a
JAX environment the figure is the search's, after the one-off compilation and probes, beside
the environment's own raw ``jit(vmap(scan(step)))`` rollout (issue 35)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("hypothesis")

from spacealg.cli import main
from spacealg.testing import check_env

SOUND_JAX = "tests.jax_toy_envs:make_walk"
JAX_OPTIONS = ["--examples", "3", "--max-steps", "30", "--no-determinism"]


def test_a_report_carries_its_steps_per_second_in_its_summary_line():
    report = check_env("CartPole-v1", max_examples=5)
    assert report.steps > 0 and report.seconds > 0
    assert report.steps_per_second == pytest.approx(report.steps / report.seconds)
    first = str(report).splitlines()[0]
    assert f"in {report.seconds:.1f} s, {report.steps_per_second:,.0f} steps/s" in first
    assert f"steps_per_second={report.steps_per_second!r}" in repr(report)


def test_a_jax_report_gives_the_search_speed_after_compiling():
    pytest.importorskip("jax")
    from spacealg.testing import check_jax_env
    from tests.jax_toy_envs import make_walk

    report = check_jax_env(lambda: make_walk(), max_examples=3, max_steps=30, batch=8, determinism=False)
    searching = report.seconds - report.setup_seconds
    assert 0 < searching < report.seconds
    assert report.steps_per_second == pytest.approx(report.steps / searching)
    first = str(report).splitlines()[0]
    assert f"{report.steps_per_second:,.0f} steps/s searching after {report.setup_seconds:.1f} s compiling" in first
    assert "steps/s inside the compiled rollouts" in first
    assert f"steps_per_second={report.steps_per_second!r}" in repr(report)  # what a REPL shows
    # issue 35: beside it, the raw jit(vmap(scan(step))) rollout of the same env, batch and horizon
    assert report.raw_steps_per_second > 0
    assert report.raw_ratio == pytest.approx(report.steps_per_second / report.raw_steps_per_second)
    assert (f"{report.raw_ratio:.2f}x the raw jit(vmap(scan(step))) rollout's {report.raw_steps_per_second:,.0f} "
            "steps/s") in first


def test_the_cli_prints_the_speed_of_a_jax_check(capsys):
    pytest.importorskip("jax")
    assert main(["check", SOUND_JAX, *JAX_OPTIONS]) == 0
    passed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("passed:"))
    assert " steps/s searching after " in passed and "inside the compiled rollouts" in passed
    assert "x the raw jit(vmap(scan(step))) rollout's " in passed
    assert main(["check", SOUND_JAX, *JAX_OPTIONS, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["steps_per_second"] > 0
    said, _, _ = document["speed"].partition(" steps/s searching after ")
    assert abs(float(said.replace(",", "")) - document["steps_per_second"]) <= 1  # (JSON rounds to 0.1)
    assert document["raw_steps_per_second"] > 0 and document["raw_ratio"] > 0
    said_ratio = document["speed"].split("x the raw jit(vmap(scan(step))) rollout's")[0].rsplit(" ", 1)[-1]
    assert abs(float(said_ratio) - document["raw_ratio"]) <= 0.0051  # the words round to 0.01, the JSON to 0.001


def test_the_cli_prints_the_speed_of_a_gymnasium_check(capsys):
    assert main(["check", "CartPole-v1", "-n", "5", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["steps_per_second"] == pytest.approx(document["steps"] / document["seconds"], rel=0.01)
    # the words round the unrounded figure, the JSON number keeps one decimal: 67.46 is "67 steps/s" and 67.5
    speed = float(document["speed"].removesuffix(" steps/s").replace(",", ""))
    assert document["speed"].endswith(" steps/s") and abs(speed - document["steps_per_second"]) <= 0.55
    assert main(["check", "CartPole-v1", "-n", "5"]) == 0
    passed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("passed:"))
    assert passed.endswith(" steps/s") and " s, " in passed
