"""``spacealg check ENV_ID``: a readable report, exit 0 on success, 1 on a broken property,
2 when the environment cannot be made; options for examples and episode length."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from spacealg.cli import main

TESTS = Path(__file__).parent


def test_check_passes_on_cartpole_with_exit_status_0(capsys):
    assert main(["check", "CartPole-v1"]) == 0
    out = capsys.readouterr().out
    assert "spacealg check CartPole-v1" in out and "action space" in out and "Discrete(2)" in out
    assert "properties held over" in out and "episodes)" in out
    assert "ok  observation-in-space" in out and "ok  step-determinism" in out


def test_check_fails_with_exit_status_1_and_a_reproduction(capsys):
    assert main(["check", "envcorpus.gym_envs:LeakyCorridor"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: observation-in-space at step 4" in out
    assert "seed: 0" in out and "actions: [np.int64(2), np.int64(2), np.int64(2)" in out
    assert "Reproduce with:" in out and "from envcorpus.gym_envs import LeakyCorridor" in out
    assert "env = LeakyCorridor()" in out


def test_check_handles_pettingzoo_parallel_envs(capsys):
    pytest.importorskip("pettingzoo")
    assert main(["check", "envcorpus.parallel_envs:Race", "-n", "20"]) == 0
    assert "action space of 'car_0'" in capsys.readouterr().out
    assert main(["check", "envcorpus.parallel_envs:MarshalRace"]) == 1
    assert "FAILED: agents-possible at step 1" in capsys.readouterr().out


def test_check_handles_parallel_envs_without_possible_agents(capsys):
    pytest.importorskip("pettingzoo")
    # PettingZoo's spawning-agents example declares no possible_agents: the report lists the
    # spaces of the agents present at reset
    env_id = "pettingzoo.test.example_envs.generated_agents_parallel_v0:parallel_env"
    assert main(["check", env_id, "-n", "10", "--max-steps", "20"]) == 0
    out = capsys.readouterr().out
    assert "action space of" in out and "ok  agents-life-cycle" in out and "ok  agents-possible" not in out
    assert "agents-possible not checked: the environment declares no possible_agents" in out  # not silent


def test_examples_and_episode_length_options(capsys):
    assert main(["check", "CartPole-v1", "--examples", "7", "--max-steps", "3"]) == 0
    out = capsys.readouterr().out
    steps = int(out.split("examples (")[1].split(" steps")[0].replace(",", ""))
    examples = int(out.split("held over ")[1].split(" examples")[0])
    assert examples < 20 and steps <= 3 * examples


def test_determinism_option(capsys):
    assert main(["check", "envcorpus.gym_envs:GlobalRngResetCorridor", "-n", "10"]) == 1
    assert "FAILED: global-rng at reset" in capsys.readouterr().out
    assert main(["check", "envcorpus.gym_envs:GlobalRngResetCorridor", "-n", "10", "--no-determinism"]) == 0
    out = capsys.readouterr().out
    assert "ok  global-rng" not in out and "global-rng not checked: determinism=False" in out


def test_unknown_environment_exits_2(capsys):
    assert main(["check", "NoSuchEnv-v0"]) == 2
    assert "cannot make 'NoSuchEnv-v0'" in capsys.readouterr().err
    assert main(["check", "CartPole-v1", "--examples", "0"]) == 2


def test_the_installed_command_runs_from_the_working_directory():
    env = {**os.environ, "PYTHONPATH": ""}
    script = Path(sys.executable).parent / "spacealg"  # the console script, not python -m
    launcher = [str(script)] if script.exists() else [sys.executable, "-m", "spacealg"]
    command = [*launcher, "check", "envcorpus.gym_envs:IntTruncatedCorridor", "-n", "10"]
    done = subprocess.run(command, cwd=TESTS, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "FAILED: truncated-bool at step 1" in done.stdout


@pytest.mark.parametrize("flag", ["--help"])
def test_help_lists_the_options(flag, capsys):
    with pytest.raises(SystemExit):
        main(["check", flag])
    out = capsys.readouterr().out
    assert "--examples" in out and "--max-steps" in out and "--no-determinism" in out


def test_a_single_check_shows_a_progress_bar_over_its_time_budget():
    # issue 17.2: a long check is never silent (the bar is shown on a terminal, not with --json)
    import io
    import time

    from spacealg.cli.check import time_bar

    stream = io.StringIO()
    with time_bar(5, True, stream):
        time.sleep(1.3)
    assert "checking (time budget)" in stream.getvalue() and "1/5" in stream.getvalue()
    quiet = io.StringIO()
    with time_bar(5, False, quiet):
        pass
    with time_bar(None, True, quiet):
        pass
    assert quiet.getvalue() == ""


def test_a_multi_env_run_names_each_env_s_not_checked_lines_once_and_only_where_there_are_some(capsys, monkeypatch):
    # review leftover of issue 37: the "-- X not checked" lines of a sweep were printed for
    # every row, passed ones included, under no env's name
    import spacealg.sweep

    rows = [
        {"env_id": "Quiet-v0", "status": "passed", "exit_status": 0, "seconds": 1.0, "not_checked": {}},
        {"env_id": "Partial-v0", "status": "passed", "exit_status": 0, "seconds": 1.0,
         "not_checked": {"action-mask": "no mask published"}},
        {"env_id": "Broken-v0", "status": "failed", "exit_status": 1, "seconds": 1.0, "property": "nan-reward",
         "message": "reward is nan", "not_checked": {"max-episode-steps": "no limit declared"}},
    ]
    monkeypatch.setattr(spacealg.sweep, "sweep", lambda *args, **kwargs: rows)
    assert main(["check", "Quiet-v0", "Partial-v0", "Broken-v0", "--no-progress"]) == 1
    out = capsys.readouterr().out
    blocks = out.split("\n\n")
    partial = next(b for b in blocks if "action-mask not checked" in b)
    broken = next(b for b in blocks if "max-episode-steps not checked" in b)
    assert partial.splitlines()[0] == "Partial-v0: passed, 1 not checked"
    assert broken.splitlines()[0] == "Broken-v0: FAILED"
    assert out.count("not checked:") == 2  # once per env that has some
    assert "Quiet-v0:" not in out  # nothing to say about it beyond the table
