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

import functools
from collections.abc import Callable, Sequence
from typing import Any

from spacealg.testing.aec import AEC, check_aec_env
from spacealg.testing.errors import PropertyError
from spacealg.testing.parallel import PARALLEL, check_parallel_env
from spacealg.testing.resolve import EnvSource, env_kind, resolve
from spacealg.testing.runner import EnvCheckReport, EnvKind, close, fail, finalisers_caught, probe, replay_example
from spacealg.testing.single import GYMNASIUM, check_env

__all__ = ["check", "checker_for", "env_kind_of", "env_test", "replay"]


def _foreign(instance: Any) -> Callable[..., Any] | None:
    """The checker of :mod:`spacealg.testing.foreign` (dm_env, TorchRL) for ``instance``,
    where that module is present and recognises it."""
    try:
        from spacealg.testing import foreign
    except ImportError:
        return None
    pick = getattr(foreign, "checker_for", None)
    return pick(instance) if callable(pick) else None


def _jax(instance: Any) -> bool:
    """Whether ``instance`` is a functional JAX environment (:mod:`spacealg.testing.jax_env`)."""
    from spacealg.testing.jax_env import is_jax_env

    return is_jax_env(instance)


def env_kind_of(source: EnvSource) -> str:
    """The kind of the environment ``source`` builds (see :func:`~spacealg.testing.resolve.env_kind`)."""
    return str(probe(source, env_kind))


def checker_for(env: Any) -> Callable[..., EnvCheckReport]:
    """The checker :func:`check` uses for ``env``: ``check_aec_env`` (``agent_iter`` and
    ``agent_selection``), ``check_parallel_env`` (per-agent space methods),
    ``check_vector_env`` (``num_envs`` and single spaces), a foreign checker (dm_env,
    TorchRL), ``check_jax_env`` for a functional JAX environment (gymnax, Jumanji, pgx,
    Brax), else ``check_env``."""
    source = resolve(env)
    with finalisers_caught():  # its __del__ raising is reported by the check itself
        return _checker_of(source)


def _checker_of(source: EnvSource) -> Callable[..., EnvCheckReport]:
    instance = source.make()
    try:
        if _jax(instance):  # functional JAX environments (issue 24)
            from spacealg.testing.jax_env import check_jax_env

            return check_jax_env
        foreign = _foreign(instance)
        kind = env_kind(instance)
    finally:
        close(instance, source)
    if foreign is not None:
        return foreign
    if kind == "vector":
        from spacealg.testing.vector import check_vector_env

        return check_vector_env
    checkers: dict[str, Callable[..., EnvCheckReport]] = {"aec": check_aec_env, "parallel": check_parallel_env}
    return checkers.get(kind, check_env)


def check(env: Any, **options: Any) -> EnvCheckReport:
    """Check ``env`` with the checker of its kind (:func:`checker_for`); ``options`` as
    that checker's."""
    from spacealg.testing.jax_env import is_jax_id, jax_source

    if is_jax_id(env) or isinstance(env, tuple):  # "gymnax:CartPole-v1", gymnax's (env, params)
        from spacealg.testing.jax_env import check_jax_env

        return check_jax_env(jax_source(env), **options)
    source = resolve(env)
    return checker_for(source)(source, **options)


def replay(
    env: Any,
    seed: int | None,
    actions: Sequence[Any],
    *,
    determinism: bool = True,
    masks: bool = True,
    ignore_info_keys: Any = (),
) -> None:
    """Run the checks on one seed and action sequence (an :class:`EnvCheckError`'s
    ``seed`` and ``actions``, say, after a fix) on a fresh environment, replaying the whole
    sequence on the same instance for the determinism checks: raises the EnvCheckError of
    the first property that breaks, returns None if none does. For a parallel environment
    each action is the dict of the live agents' actions; for an AEC one, the actions of the
    agents that had to act, in order. ``seed=None`` (a failure of the one-off probes, which
    reports no seed) re-runs the probes. A vector environment replays through
    :func:`~spacealg.testing.vector.replay_vector` (its episode, or with ``seed=None`` its
    declared spaces; a changed row's laws need that function's ``row`` and ``changes``).
    ``ignore_info_keys`` as the checkers'."""
    from spacealg.testing.infos import ignoring, info_keys

    with ignoring(info_keys(ignore_info_keys)):
        _replay(env, seed, actions, determinism=determinism, masks=masks)


def _replay(env: Any, seed: int | None, actions: Sequence[Any], *, determinism: bool, masks: bool) -> None:
    source = resolve(env)
    kind = env_kind_of(source)
    if kind == "vector":  # seed=None too: its declaration is replay_vector's, not a probe of the Gymnasium kind
        from spacealg.testing.vector import replay_vector

        replay_vector(source, seed, actions, determinism=determinism)
        return
    if seed is None:
        _replay_probes(source, kind)
        return
    episode = functools.partial(_kind(kind).episode, masks=masks)
    replay_example(source, episode, seed, actions, determinism=determinism, kind=kind)


def _kind(kind: str) -> EnvKind:
    """The :class:`~spacealg.testing.runner.EnvKind` of an environment kind (a vector one
    replays through :func:`~spacealg.testing.vector.replay_vector`; foreign ones have none:
    their failures are replayed as Gymnasium episodes)."""
    return {"aec": AEC, "parallel": PARALLEL}.get(kind, GYMNASIUM)


def _replay_probes(source: EnvSource, kind: str) -> None:
    """The checks a failure without a seed came from: the declaration (``declared-spaces``),
    then the one-off probes."""
    from spacealg.testing.verdicts import partition

    probes = _kind(kind).probes
    try:
        probe(source, _kind(kind).declared)
        _, _, broken = partition(probes(source, None) if probes is not None else [])
    except PropertyError as violation:
        broken = [violation]
    if broken:
        error = fail(broken[0], source, True, 1, kind)
        error.also = tuple(fail(v, source, True, 1, kind) for v in broken[1:])
        raise error from None


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
