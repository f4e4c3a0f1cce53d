"""A kind of environment spacealg does not know, registered from outside the package: the
"tally" API (``start(seed) -> count``, ``add(action) -> (count, done)``, a Gymnasium
``action_space`` and a ``limit``). The kind is this module and one line, ``register(TALLY)``:
with it ``check``, ``spacealg check``, its JSON, ``replay`` and the reproduction snippets
serve tally environments with no other change (tests/test_check_registry.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymnasium import spaces

from spacealg.strategies.members import members
from spacealg.testing.engine.errors import PropertyError
from spacealg.testing.engine.runner import ENDED, STEPPED, Declared, Draws, EnvCheckReport, EnvKind, check_kind
from spacealg.testing.engine.snippets import reproduction
from spacealg.testing.registry import register

TALLY_PROPERTIES = {
    "start-in-range": "start(seed) returns a count in 0..limit",
    "add-in-range": "add(action) returns a count in 0..limit and a bool done",
    "restart-after-done": "start works again after done",
}


class Tally:
    """Sound: each action adds 0, 1 or 2 to the count; done at the limit, which the count
    never passes."""

    limit = 6

    def __init__(self) -> None:
        self.action_space = spaces.Discrete(3)
        self.count = 0

    def start(self, seed: int) -> int:
        self.count = seed % 2
        return self.count

    def add(self, action: int) -> tuple[int, bool]:
        self.count = min(self.count + int(action), self.limit)
        return self.count, self.count == self.limit


class OverTally(Tally):
    """Bug: the count passes the limit (add(2) at limit - 1)."""

    def add(self, action: int) -> tuple[int, bool]:
        self.count += int(action)
        return self.count, self.count >= self.limit


class TallyEpisode:
    """A tally run: start with the seed, ``n`` adds, a start again after each done."""

    def __init__(self, env: Any, seed: int, n: int, draw: Callable[..., Any], *, masks: bool = True) -> None:
        self.env, self.seed, self.n, self.draw = env, seed, n, draw
        self.trace: list[Any] = []
        self.steps, self.episodes = 0, 1

    def _start(self, k: int | None) -> None:
        count = self.env.start(self.seed)
        if not 0 <= count <= self.env.limit:
            prop = "start-in-range" if k is None else "restart-after-done"
            raise PropertyError(prop, f"start returned {count}", k)
        self.trace.append(("start", count))

    def run(self) -> list[Any]:
        self._start(None)
        for k in range(1, self.n + 1):
            action = self.draw()
            count, done = self.env.add(action)
            if not (0 <= count <= self.env.limit and isinstance(done, bool)):
                raise PropertyError("add-in-range", f"add({action}) returned ({count}, {done!r})", k)
            self.trace.append(("add", count, done))
            self.steps += 1
            if done:
                self._start(k)
                self.episodes += 1
        return self.trace


def _declared(env: Any) -> Declared:
    space = env.action_space
    strategy = members(space)

    def draw(draws: Draws) -> Any:
        return int(draws.action(None, None, lambda: space, lambda: strategy))

    return draw, None


EPISODE = [
    "def episode():",
    "    trace = [env.start(SEED)]",
    "    for action in actions:",
    "        count, done = env.add(action)",
    "        trace.append(count)",
    "        if done:",
    "            trace.append(env.start(SEED))",
    "    return trace",
]


def snippet(error: Any) -> str:
    return reproduction(
        error,
        EPISODE,
        lambda error: ["trace = episode()", "assert all(0 <= c <= env.limit for c in trace), trace"],
    )


def check_tally(env: Any, **options: Any) -> EnvCheckReport:
    """Check a tally environment (the options of :func:`spacealg.testing.check_env`)."""
    return check_kind(TALLY, env, options)


TALLY = EnvKind(
    "tally",
    TALLY_PROPERTIES,
    check_tally,
    {"add-in-range": (STEPPED,), "restart-after-done": (ENDED,)},
    recognises=lambda env: callable(getattr(env, "add", None)) and callable(getattr(env, "start", None)),
    spaces=lambda env: [("action space", env.action_space), ("counts", f"0..{env.limit}")],
    snippet=snippet,
    episode=TallyEpisode,
    declared=_declared,
)

register(TALLY)
