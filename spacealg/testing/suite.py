"""One-line environment tests for users' own suites.

>>> from spacealg.testing import env_test
>>> test_cartpole = env_test("CartPole-v1")                  # doctest: +SKIP
>>> test_my_env = env_test("my_pkg.envs:make_env", max_steps=300)   # doctest: +SKIP

``env_test`` returns a test function that pytest collects under the name it is assigned
to; it runs :func:`check`. Options given to ``env_test`` win over the ``--spacealg-*``
command-line options of the pytest plugin (:mod:`spacealg.pytest_plugin`), which win over
the checkers' defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from spacealg.testing.driver import snapshot
from spacealg.testing.errors import PropertyError
from spacealg.testing.parallel import ParallelEpisode, check_parallel_env
from spacealg.testing.resolve import is_parallel_env, resolve
from spacealg.testing.single import EnvCheckReport, Episode, check_env, fail, probe, run_example

__all__ = ["check", "env_test", "replay"]


def check(env: Any, **options: Any) -> EnvCheckReport:
    """:func:`check_parallel_env` for a PettingZoo parallel environment (per-agent space
    methods and ``possible_agents``), :func:`check_env` otherwise; ``options`` as theirs."""
    source = resolve(env)
    instance = source.make()
    from spacealg.testing.foreign import foreign_checker  # dm_env and TorchRL (issue 15)

    foreign = foreign_checker(instance)
    if foreign is not None:
        return foreign(source, **options)
    parallel = is_parallel_env(instance)
    if source.owned:
        instance.close()
    return (check_parallel_env if parallel else check_env)(source, **options)


def replay(env: Any, seed: int, actions: Sequence[Any], *, determinism: bool = True) -> None:
    """Run the checks on one seed and action sequence (an :class:`EnvCheckError`'s
    ``seed`` and ``actions``, say, after a fix): raises the EnvCheckError of the first
    property that breaks, returns None if none does. For a parallel environment each
    action is the dict of the live agents' actions."""
    source = resolve(env)
    parallel = probe(source, is_parallel_env)
    pending = iter(actions)
    taken: list[Any] = []

    def draw(*_: Any) -> Any:
        action = next(pending)
        taken.append(snapshot(action))
        return action

    episode = ParallelEpisode if parallel else Episode
    try:
        run_example(source, episode, seed, len(actions), draw, taken, determinism=determinism)
    except PropertyError as violation:
        raise fail(violation, source, True, 1, parallel) from None


def env_test(env: Any, **options: Any) -> Callable[[], None]:
    """A pytest test function that checks ``env`` (an id, ``module:factory``, a factory or an
    instance) with :func:`check`; assign it to a ``test_...`` name in a test module."""

    def test() -> None:
        from spacealg.pytest_plugin import checker_options

        check(env, **{**checker_options, **options})

    label = env if isinstance(env, str) else getattr(env, "__qualname__", type(env).__qualname__)
    test.__name__ = test.__qualname__ = f"test_env[{label}]"
    test.__doc__ = f"spacealg.testing.check({label!r})"
    return test
