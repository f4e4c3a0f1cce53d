"""spacealg's pytest plugin (registered through the ``pytest11`` entry point).

Test an environment in one line of a test module::

    from spacealg.testing import env_test

    test_my_env = env_test("my_package.envs:make_env")      # or "MyEnv-v0", a class, ...

or use the ``spacealg_check`` fixture inside a test of your own::

    def test_my_env(spacealg_check):
        spacealg_check(MyEnv, max_steps=300)

The plugin adds command-line options that apply to every such check (options written in
the test win over them): ``--spacealg-examples N``, ``--spacealg-max-steps N``,
``--spacealg-random`` (a fresh random search instead of the fixed seed 0),
``--spacealg-budget SECONDS`` and ``--spacealg-database DIR``, and it appends
a "spacealg reproduction" section with a runnable snippet to the report of a test that
failed with an :class:`~spacealg.testing.EnvCheckError`.

Importing this module imports neither Hypothesis nor Gymnasium.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator
from typing import Any

import pytest

__all__ = ["checker_options"]

checker_options: dict[str, Any] = {}
"""Checker options from the command line (empty when none are given)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("spacealg", "spacealg environment checks")
    group.addoption("--spacealg-examples", type=int, default=None, metavar="N", help="episodes per env check")
    group.addoption("--spacealg-max-steps", type=int, default=None, metavar="N", help="longest episode drawn")
    group.addoption(
        "--spacealg-random", action="store_true", default=False, help="random env-check searches (not seed 0)"
    )
    group.addoption("--spacealg-budget", type=float, default=None, metavar="SECONDS", help="time per env check")
    group.addoption(
        "--spacealg-database", default=None, metavar="DIR", help="Hypothesis example database for env checks"
    )


def pytest_configure(config: pytest.Config) -> None:
    checker_options.clear()
    examples = config.getoption("--spacealg-examples", default=None)
    steps = config.getoption("--spacealg-max-steps", default=None)
    if examples is not None:
        checker_options["max_examples"] = examples
    if steps is not None:
        checker_options["max_steps"] = steps
    if config.getoption("--spacealg-random", default=False):
        checker_options["random_seed"] = None
    budget = config.getoption("--spacealg-budget", default=None)
    if budget is not None:
        checker_options["budget"] = budget
    database = config.getoption("--spacealg-database", default=None)
    if database is not None:
        checker_options["database"] = database


@pytest.fixture
def spacealg_check() -> Callable[..., Any]:
    """``spacealg.testing.check`` with the command-line options as defaults."""
    from spacealg.testing import check

    def run(env: Any, **options: Any) -> Any:
        return check(env, **{**checker_options, **options})

    return run


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    errors = sys.modules.get("spacealg.testing.engine.errors")
    if errors is None or call.excinfo is None:
        return
    if isinstance(call.excinfo.value, errors.EnvCheckError):
        outcome.get_result().sections.append(("spacealg reproduction", call.excinfo.value.reproduction()))
