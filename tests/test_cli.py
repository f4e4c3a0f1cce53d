"""What every ``spacealg`` subcommand shares (spacealg.cli.common): ENV_ID resolved the same
way (the working directory first), --env-kwarg, --json, --version, one-line messages with
exit status 2 for an environment that cannot be made or a missing optional package, 130 on
Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import spacealg
from spacealg.cli import main
from spacealg.cli.common import CommandError, parse_env_kwargs

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["describe", "check"]

MODULE = '''
import gymnasium as gym


class Good(gym.Env):
    def __init__(self, size=3, label="plain"):
        self.label = label
        self.observation_space = gym.spaces.Discrete(size)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 0, 0.0, True, False, {}


def Broken():
    raise ValueError("the map file is missing\\nlook in ./maps")


NOT_A_FACTORY = 3
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A module ``usermod_<n>`` in a fresh working directory, as a user's ``myenv.py``."""
    name = f"usermod_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])
    yield name
    sys.modules.pop(name, None)


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"spacealg {spacealg.__version__}"


def test_version_agrees_with_the_package_metadata():
    """The version is written once, in spacealg/__init__.py; the package metadata reads it."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "spacealg.__version__" }' in pyproject


@pytest.mark.parametrize("command", COMMANDS)
def test_both_commands_import_from_the_working_directory(command, user_module, capsys):
    arguments = [command, f"{user_module}:Good"] + (["-n", "3"] if command == "check" else [])
    assert main(arguments) == 0
    assert "Discrete(3)" in capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_a_constructor_that_raises_is_one_line_and_exit_2(command, user_module, capsys):
    assert main([command, f"{user_module}:Broken"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"spacealg {command}: cannot make '{user_module}:Broken': ValueError: the map file is missing" in err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_attribute_is_named_not_a_gymnasium_suggestion(command, user_module, capsys):
    assert main([command, f"{user_module}:Nope"]) == 2
    err = capsys.readouterr().err
    assert f"module '{user_module}'" in err and "has no attribute 'Nope'" in err
    assert "Did you mean" not in err and err.count("\n") == 1


@pytest.mark.parametrize("command", COMMANDS)
def test_other_unmakeable_targets_exit_2(command, user_module, capsys):
    assert main([command, "no_such_module_anywhere:Env"]) == 2
    assert "there is no module 'no_such_module_anywhere'" in capsys.readouterr().err
    assert main([command, f"{user_module}:NOT_A_FACTORY"]) == 2
    assert "is a int, not a class or function" in capsys.readouterr().err
    assert main([command, "NoSuchEnv-v0"]) == 2
    assert "cannot make 'NoSuchEnv-v0'" in capsys.readouterr().err


def test_an_import_error_inside_the_users_module_is_reported(tmp_path, monkeypatch, capsys):
    (tmp_path / "usermod_broken_import.py").write_text("import not_installed_anywhere_xyz\n")
    monkeypatch.chdir(tmp_path)
    try:
        assert main(["describe", "usermod_broken_import:Env"]) == 2
    finally:
        sys.modules.pop("usermod_broken_import", None)
    err = capsys.readouterr().err
    assert "importing 'usermod_broken_import' failed: ModuleNotFoundError" in err


@pytest.mark.parametrize("command", COMMANDS)
def test_env_kwargs_reach_the_constructor(command, user_module, capsys):
    extra = ["-n", "3"] if command == "check" else []
    assert main([command, f"{user_module}:Good", "--env-kwarg", "size=7", *extra]) == 0
    assert "Discrete(7)" in capsys.readouterr().out


def test_env_kwargs_reach_gymnasium_make(capsys):
    assert main(["check", "CartPole-v1", "--env-kwarg", "max_episode_steps=3", "-n", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["steps"] <= 3 * report["episodes"]
    assert main(["describe", "CartPole-v1", "--env-kwarg", "bogus=1"]) == 2
    assert "unexpected keyword argument 'bogus'" in capsys.readouterr().err


def test_env_kwarg_values_are_literals_or_strings():
    assert parse_env_kwargs(["n=50", "on=True", "x=0.5", "mode=rgb_array", "s='7'", "v=[1, 2]", "e="]) == {
        "n": 50,
        "on": True,
        "x": 0.5,
        "mode": "rgb_array",
        "s": "7",
        "v": [1, 2],
        "e": "",
    }
    for bad in ["novalue", "=3", "not a name=1"]:
        with pytest.raises(CommandError, match="--env-kwarg takes KEY=VALUE"):
            parse_env_kwargs([bad])


def test_a_malformed_env_kwarg_exits_2(capsys):
    assert main(["describe", "CartPole-v1", "--env-kwarg", "oops"]) == 2
    assert "--env-kwarg takes KEY=VALUE" in capsys.readouterr().err


def test_describe_json(capsys):
    assert main(["describe", "CarRacing-v3", "--json"]) in (0, 2)  # box2d may be missing
    captured = capsys.readouterr()
    if "box2d" in captured.err.lower():
        assert json.loads(captured.out)["status"] == "error"
    else:
        document = json.loads(captured.out)
        observation = document["spaces"][0]
        assert observation["cardinality"].startswith("256^27648 ≈ ")
    assert main(["describe", "Blackjack-v1", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["command"] == "describe" and document["env_id"] == "Blackjack-v1"
    observation, action = document["spaces"]
    assert observation["name"] == "observation space" and action["name"] == "action space"
    assert observation["space"] == "TupleProduct(range(0, 32), range(0, 11), range(0, 2))"
    assert observation["cardinality"] == "704" and set(observation) >= {"style", "bounds", "eltype", "elsize"}


def test_check_json_on_success_and_failure(capsys):
    assert main(["check", "CartPole-v1", "-n", "5", "--json"]) == 0
    passed = json.loads(capsys.readouterr().out)
    assert passed["status"] == "passed" and passed["exit_status"] == 0
    assert "observation-in-space" in passed["properties"] and passed["examples"] >= 1
    assert main(["check", "envcorpus.gym_envs:LeakyCorridor", "--json"]) == 1
    failed = json.loads(capsys.readouterr().out)
    assert failed["status"] == "failed" and failed["exit_status"] == 1
    assert failed["property"] == "observation-in-space" and failed["seed"] == 0
    assert len(failed["actions"]) == 4 and all(isinstance(a, int) for a in failed["actions"])
    assert failed["actions_literal"].startswith("[np.int64(")
    assert "from envcorpus.gym_envs import LeakyCorridor" in failed["reproduction"]


@pytest.mark.parametrize("command", COMMANDS)
def test_json_errors_are_json_too(command, capsys):
    assert main([command, "NoSuchEnv-v0", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["status"] == "error" and "cannot make" in err


def _run(code: str, cwd: Path = ROOT, **kwargs) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True, text=True, **kwargs
    )


def test_a_missing_optional_package_names_the_extra():
    # as after a bare `pip install .`: importing hypothesis fails
    done = _run(
        """
        import sys
        sys.modules["hypothesis"] = None  # import hypothesis -> ModuleNotFoundError
        from spacealg.cli import main
        sys.exit(main(["check", "CartPole-v1"]))
        """,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "'hypothesis'" in done.stderr and "pip install '.[check]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_describe_needs_no_optional_package():
    done = _run(
        """
        import sys
        sys.modules["hypothesis"] = None
        from spacealg.cli import main
        sys.exit(main(["describe", "CartPole-v1"]))
        """,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def interrupted_check(tmp_path, target: str) -> tuple[int, str]:
    """Starts ``spacealg check TARGET`` (a long run), sends SIGINT once the header is out,
    and gives its exit code and stderr (the process never outlives the test)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "spacealg", "check", target, "-n", "100000", "--max-steps", "500"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # the header: the check has started
        assert first.startswith(f"spacealg check {target}"), first
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)  # the grace period is 3 s
    finally:
        process.kill()  # never leave a check running when the test fails
        process.wait()
    return process.returncode, err


def assert_clean_interrupt(code: int, err: str) -> None:
    assert code == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "spacealg check: interrupted (Ctrl-C)"


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_ctrl_c_is_a_clean_message_and_exit_130(tmp_path):
    assert_clean_interrupt(*interrupted_check(tmp_path, "CartPole-v1"))


STUBBORN = '''
import time

import gymnasium as gym


class Stubborn(gym.Env):
    """Swallows every exception in step, KeyboardInterrupt included."""

    observation_space = gym.spaces.Discrete(2)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        try:
            time.sleep(0.002)
        except BaseException:
            pass
        return 0, 0.0, False, False, {}
'''


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_ctrl_c_ends_the_command_even_when_the_environment_swallows_it(tmp_path):
    (tmp_path / "stubborn.py").write_text(STUBBORN)
    assert_clean_interrupt(*interrupted_check(tmp_path, "stubborn:Stubborn"))
