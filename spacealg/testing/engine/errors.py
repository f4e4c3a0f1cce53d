"""The error a check raises: :class:`EnvCheckError`, with a reproduction snippet.

Each property has a stable name (used in messages, reports and the CLI) and a one-line
statement. A failure names the property, where it broke (reset, step ``k``, the reset
after an episode ended), the seed and the shortest action sequence found.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "OPTIONAL_PROPERTIES",
    "EnvCheckError",
    "PropertyError",
    "literal",
    "short",
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
        from spacealg.testing.engine.verdicts import verdicts

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


# -- literals: eval-able reprs of actions (numpy as np) ------------------------------------


def _number(value: float) -> str:
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


def _nested(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    if isinstance(value, float):
        return _number(value)
    return repr(value)


def short(value: Any) -> str:
    """:func:`literal` for a report's detail: a large array by its shape and dtype, and at
    most 400 characters."""
    text = (
        literal(value)
        if not isinstance(value, np.ndarray) or value.size <= 32
        else (f"array of shape {value.shape} and dtype {value.dtype}")
    )
    return text if len(text) <= 400 else text[:400] + " ..."


def literal(value: Any) -> str:
    """Python source that evaluates (with ``numpy as np``) to a value equal to ``value``,
    dtypes of numpy arrays and scalars included."""
    if isinstance(value, np.ndarray):
        dtype = f"np.{value.dtype.name}" if value.dtype.kind in "biuf" else repr(value.dtype.str)
        return f"np.array({_nested(value.tolist())}, dtype={dtype})"
    if isinstance(value, np.generic):
        item = value.item()
        inner = _number(item) if isinstance(item, float) else repr(item)
        return f"np.{type(value).__name__}({inner})"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    if type(value).__name__ == "GraphInstance":
        return (
            f"GraphInstance(nodes={literal(value.nodes)}, edges={literal(value.edges)}, "
            f"edge_links={literal(value.edge_links)})"
        )
    return repr(value)
