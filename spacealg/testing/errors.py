"""The properties that :func:`check_env` and :func:`check_parallel_env` check, and the
error they raise: :class:`EnvCheckError`, with a reproduction snippet.

Each property has a stable name (used in messages, reports and the CLI) and a one-line
statement. A failure names the property, where it broke (reset, step ``k``, the reset
after an episode ended), the seed and the shortest action sequence found.
"""

from __future__ import annotations

import builtins
import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "AEC_PROPERTIES",
    "OPTIONAL_PROPERTIES",
    "PARALLEL_PROPERTIES",
    "PROPERTIES",
    "EnvCheckError",
    "PropertyError",
    "announce_broken",
    "literal",
    "on_broken",
    "short",
]

PROPERTIES: dict[str, str] = {
    "declared-spaces": "the environment declares observation and action spaces that can be drawn from",
    "no-exception": "reset(seed=...) and step(action) raise no exception for an action of the action space",
    "reset-signature": "reset returns a pair (observation, info)",
    "step-signature": "step returns a 5-tuple (observation, reward, terminated, truncated, info)",
    "observation-in-space": "every observation is a member of the declared observation space",
    "reward-finite-real": "every reward is a finite real scalar (int, float or a numpy number)",
    "terminated-bool": "terminated is a bool",
    "truncated-bool": "truncated is a bool",
    "info-dict": "info is a dict",
    "reset-after-done": "reset works after an episode has ended",
    "reset-determinism": "the same seed gives the same first observation",
    "step-determinism": "the same seed and actions give the same trajectory (observations, rewards, flags and infos)",
    "global-rng": "the environment's randomness comes from its own generator (self.np_random, seeded "
    "by reset), not from the global random or numpy.random state",
    "reset-seed": "reset(seed=s) seeds the environment: where resets are random at all, different "
    "seeds give different episodes",
    "reset-stream": "reset() without a seed continues the random stream instead of reseeding",
    "observation-aliasing": "a returned observation is not a buffer the environment mutates later",
    "action-mask": "a published action mask has the shape and dtype the action space needs and "
    "allows at least one action while the agent must act",
    "illegal-action": "an action outside the mask is rejected with a clear exception or handled like any step",
    "reset-options": "reset(seed=..., options={}) is accepted",
    "close-twice": "close() can be called twice",
    "render-modes": "each declared render mode renders what metadata['render_modes'] promises (an "
    "RGB uint8 image, a string, a list of them, None for human)",
}
"""The properties ``check_env`` checks: name -> the law it states."""

OPTIONAL_PROPERTIES = ("illegal-action",)
"""Checked only when asked for (``illegal_actions=True``)."""

PARALLEL_PROPERTIES: dict[str, str] = {
    **PROPERTIES,
    "agents-possible": "every agent (in env.agents and in the returned dicts) is one of possible_agents",
    "agents-life-cycle": "each live agent gets a reward, terminated and truncated; an agent that "
    "terminated or was truncated is not returned again and leaves env.agents",
    "same-space": "observation_space(agent) and action_space(agent) return the same object on every call",
}
"""The properties ``check_parallel_env`` checks (those of ``PROPERTIES`` and the agents'): name -> law."""

AEC_PROPERTIES: dict[str, str] = {
    **PARALLEL_PROPERTIES,
    "reset-signature": "reset returns None (PettingZoo's AEC API)",
    "step-signature": "step returns None; last() returns (observation, reward, terminated, truncated, info)",
    "agent-iteration": "agent_selection (and agent_iter) names a live agent; a terminated or truncated agent "
    "is stepped with None and then leaves env.agents; terminations, truncations, rewards, infos and "
    "_cumulative_rewards hold exactly the live agents; last() agrees with observe() and "
    "_cumulative_rewards, and its reward is the sum of the agent's rewards entries since it last acted",
    "state-in-space": "state() is a member of state_space",
    "max-cycles": "an environment with max_cycles ends every episode within max_cycles cycles",
}
"""The properties ``check_aec_env`` checks (the parallel ones and the AEC protocol's): name -> law."""


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

    def __post_init__(self) -> None:
        self.kind = self.kind or ("parallel" if self.parallel else "gymnasium")
        from spacealg.testing.tables import properties_of

        table = properties_of(self.kind)
        self.statement = self.statement or table.get(self.property, "")
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
        from spacealg.testing.verdicts import verdicts

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
        """A self-contained Python snippet that replays the failing seed and actions."""
        from spacealg.testing.snippets import reproduction

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
