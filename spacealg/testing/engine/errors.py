"""The error a check raises: :class:`EnvCheckError`, with a reproduction snippet.

Each property has a stable name (used in messages, reports and the CLI) and a one-line
statement. A failure names the property, where it broke (reset, step ``k``, the reset
after an episode ended), the seed and the shortest action sequence found.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spacealg.testing.engine.literals import literal, short

__all__ = [
    "OPTIONAL_PROPERTIES",
    "EnvCheckError",
    "PropertyError",
    "announce_broken",
    "literal",
    "on_broken",
    "short",
    "verdicts",
]

OPTIONAL_PROPERTIES = ("illegal-action",)
"""Checked only when asked for (``illegal_actions=True``)."""

class PropertyError(Exception):
    """A broken property, raised inside an episode (internal: becomes an EnvCheckError)."""

    def __init__(self, prop: str, detail: str, step: int | None = None, where: str = "") -> None:
        super().__init__(prop, detail)
        self.property = prop
        self.detail = detail
        self.step = step  # None: at the first reset; k: at (or right after) the k-th step (1-based)
        self.where = where
        self.seed: int | None = None
        self.n: int | None = None  # the episode length drawn (to recognise the example)
        self.actions: list[Any] = []
        self.changed: tuple[int, dict[int, Any]] | None = None  # a vector row's changed actions: (row, {step: action})
        self.context: dict[str, Any] = {}  # what the kind's reproduction needs beyond the seed and actions


@dataclass(eq=False)
class EnvCheckError(AssertionError):
    """An environment broke a property. ``str(err)`` names the property, where, the seed and
    the shortest action sequence found; ``err.reproduction()`` is a runnable snippet."""

    property: str
    detail: str
    seed: int | None
    actions: list[Any]
    step: int | None = None
    where: str = ""
    env_name: str = "env"
    construction: str = "env = ...  # your environment"
    imports: Sequence[str] = ()
    parallel: bool = False
    reproducible: bool = True
    examples: int = 0  # examples searched (for the first broken property: by the whole check)
    statement: str = field(default="", repr=False)
    kind: str = ""  # "gymnasium", "parallel", "aec", "vector", "match"; "" = by ``parallel``
    also: tuple[EnvCheckError, ...] = field(default=(), repr=False)  # the other broken properties
    held: tuple[str, ...] = field(default=(), repr=False)  # the checked properties that held
    not_checked: dict[str, str] = field(default_factory=dict, repr=False)  # property -> why
    warnings: tuple[str, ...] = field(default=(), repr=False)
    ignored_info: tuple[str, ...] = field(default=(), repr=False)  # info keys left out of replays
    steps: int = field(default=0, repr=False)  # steps the check ran (all examples)
    episodes: int = field(default=0, repr=False)
    changed: tuple[int, dict[int, Any]] | None = field(default=None, repr=False)  # vector: (row, {step: action})
    compared_with: str = field(default="", repr=False)  # vector: the construction of the implementation compared with
    snippet: Callable[[EnvCheckError], str] | None = field(default=None, repr=False, compare=False)  # the kind's
    context: dict[str, Any] = field(default_factory=dict, repr=False)  # the kind's: what its snippet needs

    def __post_init__(self) -> None:
        self.kind = self.kind or ("parallel" if self.parallel else "gymnasium")
        super().__init__(self._message())

    def __str__(self) -> str:
        return self._message() + self._others()

    def _others(self) -> str:
        if not self.also:
            return ""
        lines = [f"  also broken ({len(self.also)} more; each has its own reproduction in .also):"]
        lines += [
            f"    {e.property} {e._location()} (seed={e.seed}, {len(e.actions)} action{'s' * (len(e.actions) != 1)})"
            for e in self.also
        ]
        return "\n" + "\n".join(lines)

    @builtins.property  # the field ``property`` shadows the builtin in the class body
    def broken(self) -> tuple[EnvCheckError, ...]:
        """Every broken property found: this one first, then :attr:`also`."""
        return (self, *self.also)

    def verdicts(self) -> dict[str, str]:
        """Each property: ``"held"``, ``"broken"`` or ``"not checked: <why>"``."""
        names = (*self.held, *(e.property for e in self.broken), *self.not_checked)
        return verdicts(dict.fromkeys(names), (e.property for e in self.broken), self.not_checked)

    def _location(self) -> str:
        if self.where:
            return self.where
        return "at reset" if self.step is None else f"at step {self.step}"

    def _message(self) -> str:
        lines = [
            f"{self.env_name}: property {self.property!r} failed {self._location()} "
            f"(seed={self.seed}, {len(self.actions)} action{'s' * (len(self.actions) != 1)})",
            f"  law: {self.statement}",
        ]
        lines += [f"  {line}" for line in self.detail.splitlines()]
        lines.append(f"  seed: {self.seed}")
        lines.append(f"  actions: {literal(self.actions)}")
        if not self.reproducible:
            lines.append(
                "  note: the failure did not reproduce when replayed: the environment is not "
                "deterministic for a given seed, so the snippet may need several runs"
            )
        return "\n".join(lines)

    def reproduction(self) -> str:
        """A self-contained Python snippet that replays the failing seed and actions (written
        by the snippet of the check's kind, else by the engine's)."""
        if self.snippet is not None:
            return self.snippet(self)
        from spacealg.testing.engine.snippets import reproduction

        return reproduction(self)


def verdicts(
    properties: Iterable[str], broken: Iterable[str], not_checked: Mapping[str, str]
) -> dict[str, str]:
    """Each property of ``properties`` as ``"held"``, ``"broken"`` or ``"not checked: <why>"``
    (broken wins over not checked: a probe may break a property it could not finish)."""
    out: dict[str, str] = {}
    bad = set(broken)
    for prop in properties:
        if prop in bad:
            out[prop] = "broken"
        elif prop in not_checked:
            out[prop] = f"not checked: {not_checked[prop]}"
        else:
            out[prop] = "held"
    return out


_LISTENERS: list[Callable[[EnvCheckError], None]] = []


@contextlib.contextmanager
def on_broken(listener: Callable[[EnvCheckError], None]) -> Iterator[None]:
    """Inside, ``listener(error)`` is called with each broken property the moment a check
    (in any thread) has found and refined it, before the check goes on to look for others:
    what a process killed later (a hang, a timeout) had already found."""
    _LISTENERS.append(listener)
    try:
        yield
    finally:
        _LISTENERS.remove(listener)


def announce_broken(error: EnvCheckError) -> None:
    """Tell the listeners of :func:`on_broken` that ``error``'s property broke."""
    for listener in list(_LISTENERS):
        listener(error)
