"""Environments of the other ecosystems (issue 15): ``spacealg describe`` and the checkers
take dm_env, TorchRL, gymnax and Jumanji environments; broken ones fail by property."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from spacealg.testing import EnvCheckError, check, check_env

pytest.importorskip("dm_env")
from tests.dm_env_envs import Catch


def _describe(target: str) -> str:
    run = subprocess.run([sys.executable, "-m", "spacealg", "describe", target], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_check_env_passes_a_sound_dm_env_environment():
    report = check_env(Catch(), max_examples=10, max_steps=12)
    assert report.examples >= 1 and "discount-in-spec" in report.properties


def test_check_names_a_discount_outside_its_spec():
    with pytest.raises(EnvCheckError) as caught:
        check(lambda: Catch(bad_discount=True), max_examples=10, max_steps=8)
    assert caught.value.property == "discount-in-spec" and caught.value.step == 1


def test_check_names_a_wrong_step_type():
    import dm_env

    class NoFirst(Catch):
        def reset(self):
            return dm_env.transition(0.0, np.zeros(2, np.float32))

    with pytest.raises(EnvCheckError, match="first-step"):
        check_env(NoFirst(), max_examples=5, max_steps=3)


def test_check_names_an_observation_outside_its_spec():
    class Escapes(Catch):
        def step(self, action):
            step = super().step(action)
            return step._replace(observation=step.observation + 2)

    with pytest.raises(EnvCheckError, match="observation-in-spec"):
        check_env(Escapes(), max_examples=5, max_steps=3)


class _RaisesAtTwo(Catch):
    """Bug: the second step raises."""

    def step(self, action):
        if self.t == 1:
            raise RuntimeError("boom")
        return super().step(action)


class _NoFirstAfterLast(Catch):
    """Bug: the reset after a LAST time step returns a MID one."""

    def reset(self):
        import dm_env

        first = getattr(self, "ended", False)
        self.ended = True
        return super().reset() if not first else dm_env.transition(0.0, np.zeros(2, np.float32))


@pytest.mark.parametrize(("env", "prop", "step", "raised"), [
    (_RaisesAtTwo, "no-exception", 2, RuntimeError),
    (_NoFirstAfterLast, "reset-after-done", 5, AssertionError),
])
def test_the_dm_env_check_and_its_snippet_run_the_same_checks(env, prop, step, raised):
    """Law: an exception of the environment is ``no-exception`` at its step, a property broken
    at the reset after an end is ``reset-after-done`` at the end's step, and the snippet (the
    same checks in plain Python) raises there too: the property's AssertionError, or the
    environment's own exception."""
    with pytest.raises(EnvCheckError) as caught:
        check(env, max_examples=20, max_steps=8)
    error = caught.value
    assert (error.property, error.step, len(error.actions)) == (prop, step, step)
    lines = error.reproduction().splitlines()
    snippet = "\n".join(f"env = {env.__name__}()" if line.startswith("env = ") else line for line in lines)
    with pytest.raises(raised, match="first-step at reset" if raised is AssertionError else "boom"):
        exec(compile(snippet, "<snippet>", "exec"), {env.__name__: env})


def test_describe_a_dm_env_factory():
    out = _describe("tests.dm_env_envs:Catch")
    assert "observation spec" in out and "Box(0.0, 1.0, shape=(2,), dtype=np.float32)" in out
    assert "discount spec" in out and "Categorical(3, dtype=np.int32)" in out


def test_describe_env_takes_objects():
    from spacealg.adapters.envs import describe_env

    assert "ContinuousSpaceStyle(shape=(2,))" in describe_env(Catch())


def test_torchrl_environments():
    pytest.importorskip("torchrl")
    from torchrl.data import Unbounded

    from tests.dm_env_envs import make_torchrl_cartpole

    report = check("tests.dm_env_envs:make_torchrl_cartpole", max_examples=3, max_steps=10)
    assert "reward-in-spec" in report.properties
    env = make_torchrl_cartpole()
    env.reward_spec = Unbounded(shape=(2,))
    with pytest.raises(EnvCheckError, match=r"declared-specs|reward-in-spec"):
        check_env(env, max_examples=2, max_steps=2)
    assert "done spec" in _describe("tests.dm_env_envs:make_torchrl_cartpole")


def test_gymnax_and_jumanji_environments_are_described():
    pytest.importorskip("gymnax")
    pytest.importorskip("jumanji")
    assert "Categorical(2, dtype=np.int32)" in _describe("tests.dm_env_envs:make_gymnax_cartpole")
    assert "HybridSpaceStyle" in _describe("tests.dm_env_envs:make_jumanji_snake")


def _snippet_of(env, **options):
    with pytest.raises(EnvCheckError) as caught:
        check(env, **options)
    return caught.value.reproduction()


def test_the_dm_env_reproduction_is_a_regression_test():
    """Issue 23 point 7: the snippet ends in an assertion that fails while the bug is there
    (showing the value's dtype) and passes once it is fixed (the same snippet on the sound env)."""
    snippet = _snippet_of(Catch(bad_discount=True), max_examples=5, max_steps=3)
    assert "actions = [" in snippet and "print(" not in snippet

    def run(construction):
        built = "\n".join(construction if line.startswith("env = ") else line for line in snippet.splitlines())
        exec(compile(built, "<snippet>", "exec"), {})

    with pytest.raises(AssertionError, match=r"discount 2\.0 \(dtype float"):
        run("env = Catch(bad_discount=True)")  # the instance was built with an argument
    run("env = Catch()")


def test_the_torchrl_reproduction_is_a_regression_test():
    pytest.importorskip("torchrl")
    snippet = _snippet_of("tests.dm_env_envs:make_torchrl_cartpole_narrow", max_examples=3, max_steps=10)
    assert "print(" not in snippet
    with pytest.raises(AssertionError, match=r"observation .*\(dtype torch\.float32, shape \(4,\)\) is not in"):
        exec(compile(snippet, "<snippet>", "exec"), {})
    fixed = snippet.replace("make_torchrl_cartpole_narrow", "make_torchrl_cartpole")
    exec(compile(fixed, "<fixed>", "exec"), {})
