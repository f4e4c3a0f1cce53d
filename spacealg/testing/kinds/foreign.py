"""What the dm_env and TorchRL kinds share (:mod:`.dm_env`, :mod:`.torchrl`): their
episode's frame (:class:`ForeignEpisode`), their checker's options and their snippet's frame
(the actions replayed through that API, each property an assertion).

Those kinds are run by the engine every checker shares
(:func:`~spacealg.testing.engine.runner.check_kind`): Hypothesis draws the episodes (a seed, a
length, and actions drawn from the declared action spec, read through spacealg's adapters),
shrinks a failure to the shortest one, and raises an
:class:`~spacealg.testing.engine.errors.EnvCheckError` naming the broken property, the seed and
the actions; a sound environment returns an
:class:`~spacealg.testing.engine.runner.EnvCheckReport`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spacealg.testing.engine.driver import describe_exception, tick
from spacealg.testing.engine.errors import PropertyError, literal
from spacealg.testing.engine.runner import DEFAULT_OPTIONS, EnvCheckReport, EnvKind, check_kind

__all__ = ["ForeignEpisode", "foreign_snippet", "made_by"]


def _require(condition: bool, prop: str, detail: str, step: int | None) -> None:
    if not condition:
        raise PropertyError(prop, detail, step)


class ForeignEpisode:
    """One run of a dm_env or TorchRL environment: a reset, then ``n`` steps with the actions
    ``draw()`` gives (a reset after each end); any exception is ``no-exception`` at the step
    it broke. Subclasses say how to reset, step and observe."""

    def __init__(self, env: Any, seed: int, n: int, draw: Callable[..., Any], *, masks: bool = True) -> None:
        self.env, self.seed, self.n, self.draw = env, seed % 2**31, n, draw
        self.steps = 0
        self.episodes = 1

    def run(self) -> list[Any]:
        try:
            self.start()
            for k in range(1, self.n + 1):
                tick()  # past the check's deadline the episode stops here
                self.steps = k
                if self.step(k):
                    try:
                        self.restart(k)
                    except PropertyError as violation:
                        raise PropertyError(
                            "reset-after-done", violation.detail, k, "at the reset after the episode ended"
                        ) from None
                    self.episodes += 1
        except PropertyError:
            raise
        except Exception as error:
            raise PropertyError("no-exception", describe_exception(error), self.steps or None) from error
        return []

    def start(self) -> None:
        raise NotImplementedError

    def step(self, k: int) -> bool:
        raise NotImplementedError

    def restart(self, k: int) -> None:
        raise NotImplementedError


def made_by(package: str) -> Callable[[Any], bool]:
    """A kind's ``recognises``: an instance of a class of ``package`` (or of a subclass of one)."""
    return lambda env: package in {cls.__module__.partition(".")[0] for cls in type(env).__mro__}


def _check_foreign(kind: EnvKind, env: Any, options: dict[str, Any]) -> EnvCheckReport:
    """``env`` checked as ``kind``: the options of :func:`~spacealg.testing.check_env` it
    knows apply (no determinism: these episodes are not replayed; no probes)."""
    given = {k: v for k, v in options.items() if k in DEFAULT_OPTIONS}
    return check_kind(kind, env, {**given, "determinism": False, "hygiene": False})  # type: ignore[typeddict-item]


def foreign_snippet(error: Any, replay: list[str]) -> str:
    """A dm_env or TorchRL failure: the construction, the seed and the actions, then
    ``replay``, the kind's episode in plain Python with each property an assertion (an
    AssertionError or the environment's own exception while the bug is there)."""
    lines = [
        f"# spacealg: property {error.property!r} failed {error._location()}",
        f"# law: {error.statement}",
        "import numpy as np",
        *error.imports,
        "",
        error.construction,
        f"SEED = {(error.seed or 0) % 2**31}",
        f"ACTIONS = {literal(error.actions)}",
        *replay,
    ]
    lines += [f"# found: {line}" for line in error.detail.splitlines()]
    return "\n".join(lines) + "\n"
