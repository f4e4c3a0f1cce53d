"""What the dm_env and TorchRL kinds share (:mod:`.dm_env`, :mod:`.torchrl`): their checks,
written once in plain Python, run by the one episode driver and shown by the snippet.

A kind states its checks as source lines (:func:`foreign_api`) defining ``reset(env, seed)``
(the episode's state after a reset, its checks done; ``seed`` None after an end) and
``step(env, state, action, k)`` (the state after step ``k`` and whether the episode ended),
each broken property a call ``fail(property, k, detail)``. The check runs those very lines
(:func:`~spacealg.testing.engine.episode.plain_checks`: ``fail`` raises the property's
:class:`~spacealg.testing.engine.errors.PropertyError`); the snippet shows them (``fail``
raising an AssertionError) with the episode written by
:func:`~spacealg.testing.engine.episode.plain_episode`.

Those kinds are run by the engine every checker shares
(:func:`~spacealg.testing.engine.runner.check_kind`): Hypothesis draws the episodes (a seed, a
length, and actions drawn from the declared action spec, read through spacealg's adapters),
shrinks a failure to the shortest one, and raises an
:class:`~spacealg.testing.engine.errors.EnvCheckError` naming the broken property, the seed and
the actions; a sound environment returns an
:class:`~spacealg.testing.engine.runner.EnvCheckReport`.

Laws: the snippet and the check run the same checks; any exception of the environment (or
of its specs) other than a broken property is ``no-exception`` at the step it broke; a
property broken at the reset after an end is ``reset-after-done``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from spacealg.testing.engine.driver import describe_exception
from spacealg.testing.engine.episode import FAIL, Actor, Api, Episode, Plain, plain_checks, plain_episode
from spacealg.testing.engine.errors import PropertyError
from spacealg.testing.engine.runner import DEFAULT_OPTIONS, EnvCheckReport, EnvKind, check_kind
from spacealg.testing.engine.snippets import reproduction

__all__ = ["foreign_api", "foreign_snippet", "made_by"]


@contextlib.contextmanager
def _guarded(k: int | None, done_at: int | None = None) -> Iterator[None]:
    """Any exception but a broken property: ``no-exception`` at step ``k``; a property
    broken at the reset after the end at step ``done_at``: ``reset-after-done``."""
    try:
        yield
    except PropertyError as violation:
        if done_at is None:
            raise
        raise PropertyError("reset-after-done", violation.detail, done_at,
                            "at the reset after the episode ended") from None
    except Exception as error:
        raise PropertyError("no-exception", describe_exception(error), k) from error


def foreign_api(source: Sequence[str]) -> Api:
    """The :class:`~spacealg.testing.engine.episode.Api` of the kind whose checks are
    ``source`` (compiled at its first episode: it may import the kind's package): one
    unnamed agent, actions from ``draw()``, the seed taken modulo 2**31."""
    lines = tuple(source)

    def checks() -> dict[str, Any]:
        return plain_checks(lines)

    def reset(episode: Episode, done_at: int | None) -> None:
        with _guarded(done_at, done_at):
            episode.state = checks()["reset"](episode.env, None if done_at is not None else episode.seed % 2**31)

    def act(episode: Episode, actors: list[Actor], factors: dict[Any, Any]) -> tuple[Any, dict[Any, Any]]:
        action = episode.draw()
        return (episode.state, action), {None: action}

    def call(env: Any, taken: tuple[Any, Any], k: int, illegal: bool, said: str) -> tuple[Any, None]:
        with _guarded(k):
            return checks()["step"](env, *taken, k), None

    def returned(episode: Episode, k: int, result: tuple[Any, bool]) -> bool:
        episode.state, ended = result
        return ended

    return Api(
        reset=reset,
        actors=lambda episode, k: [Actor(None, None, None, lambda at: None, masked=False)],
        act=act,
        returned=returned,
        plain=Plain("reset(env, {seed})", ["state, ended = step(env, trace[-1], action, k)", "trace.append(state)"],
                    "ended", unseeded="seed=None"),
        call=call,
    )


def made_by(package: str) -> Callable[[Any], bool]:
    """A kind's ``recognises``: an instance of a class of ``package`` (or of a subclass of one)."""
    return lambda env: package in {cls.__module__.partition(".")[0] for cls in type(env).__mro__}


def _check_foreign(kind: EnvKind, env: Any, options: dict[str, Any]) -> EnvCheckReport:
    """``env`` checked as ``kind``: the options of :func:`~spacealg.testing.check_env` it
    knows apply (no determinism: these episodes are not replayed; no probes)."""
    given = {k: v for k, v in options.items() if k in DEFAULT_OPTIONS}
    return check_kind(kind, env, {**given, "determinism": False, "hygiene": False})  # type: ignore[typeddict-item]


def foreign_snippet(error: Any, api: Api, source: Sequence[str], before: Sequence[str] = ()) -> str:
    """A dm_env or TorchRL failure: the construction, the seed and the actions, the kind's
    checks (``source``, as the check ran them) and its episode in plain Python, then
    ``before`` (what the check read before the episodes) and the episode: it raises (an
    AssertionError or the environment's own exception) while the bug is there."""
    episode = [*FAIL, *source, "", *plain_episode(api.plain)]
    return reproduction(error, episode, lambda e: [*before, "episode()  # raises while the bug is there"])
