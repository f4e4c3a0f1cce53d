"""The one episode of every stepped kind (Gymnasium, PettingZoo parallel and AEC, match, dm_env
and TorchRL): a kind describes its API in an :class:`Api`; :class:`Episode` runs it, and
:func:`plain_episode` writes the same episode in plain Python for the snippet. A check
written once in plain Python runs through :func:`plain_checks` and is shown by the snippet
as it ran.

The driver does what every stepped episode does: reset with the seed, then ``n`` steps
(resetting after each end, and before a step where no one is left to act), stopping between
steps once the check's deadline has passed; at each step, the masks the actors see are
checked (:data:`~spacealg.testing.engine.runner.MASKED`), the action is drawn, an action
outside a mask is marked (:data:`~spacealg.testing.engine.runner.ILLEGAL`) and a clear
rejection of it starts a new episode; every observation handed out is held and compared
when the next one is (``observation-aliasing``); the kind's episode limit
(:class:`Limit`) is applied. The kind says only how to reset, who acts and what they see,
how to draw a step's action, how a step is called (``env.step(action)`` unless it says
otherwise), what a step's result must be, and where its limit lies; any of its functions may
raise :class:`Stop` to end the run there.

Laws: the trace (the entries the kind records) is a function of the seed and the actions;
an episode stepped ``n`` times without a violation has ``steps == n`` (fewer only where no
one is left to act); a property raised inside is a PropertyError naming the step.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, NoReturn

import numpy as np

from spacealg.testing.engine.driver import passed_over, snapshot, tick
from spacealg.testing.engine.errors import PropertyError
from spacealg.testing.engine.masks import MaskedAction, check_mask, find_mask
from spacealg.testing.engine.runner import ILLEGAL, MASKED
from spacealg.testing.engine.values import aliased, stepped

__all__ = [
    "FAIL", "Actor", "Api", "Episode", "Limit", "Plain", "Stop", "act_alone", "plain_checks", "plain_episode", "who",
]


def who(agent: Any) -> str:
    """How messages name ``agent`` (None: the single agent, unnamed)."""
    return "" if agent is None else f"agent {agent!r}: "


class Stop(Exception):  # noqa: N818 - not an error: the run's end
    """Raised by an :class:`Api`'s function: the run ends there (as if its steps were all
    taken), with the trace so far."""


def act_alone(episode: Episode, actors: list[Actor], factors: dict[Any, Any]) -> tuple[Any, dict[Any, Any]]:
    """The ``act`` of a single unnamed agent: its action drawn from its checked mask, if any."""
    action = episode.draw(factors.get(None))
    return action, {None: action}


class Actor(NamedTuple):
    """An agent that acts at a step: what it sees (its mask is read there: ``masked``) and
    its action space (``space(step)``, read only where a mask is)."""

    agent: Any
    observation: Any
    info: Any
    space: Callable[[int | None], Any]
    masked: bool = True


@dataclass(frozen=True)
class Limit:
    """An episode limit: ``property`` broken by an episode still running after ``end_by - 1``
    steps since its reset (``said``: the limit in words); reached (``mark``) by an episode
    that ends after ``reach`` steps or later, or that breaks it."""

    property: str
    mark: str
    reach: int
    end_by: int
    said: str


@dataclass(frozen=True)
class Plain:
    """An episode in plain Python: ``reset`` (an expression, the trace entry of a reset;
    ``{seed}`` stands for ``seed=SEED`` at the first reset, for ``unseeded`` after an end),
    ``step`` (the lines of step ``k`` with ``action``, appending to ``trace``) and ``ended``
    (the condition that the episode ended)."""

    reset: str
    step: Sequence[str]
    ended: str
    unseeded: str = ""


def plain_episode(plain: Plain, env: str = "") -> list[str]:
    """``def episode()`` for the snippet (``env``: its parameter, else the global ``env``):
    the steps of :class:`Episode`, in plain Python."""
    return [
        f"def episode({env}):",
        f"    trace = [{plain.reset.format(seed='seed=SEED')}]",
        "    for k, action in enumerate(actions, 1):",
        *(f"        {line}" for line in plain.step),
        f"        if {plain.ended}:",
        f"            trace.append({plain.reset.format(seed=plain.unseeded)})",
        "    return trace",
    ]


FAIL = [
    "def fail(prop, k, detail):  # a broken property: which, where, what",
    "    raise AssertionError(f\"{prop} {'at reset' if k is None else f'at step {k}'}: {detail}\")",
    "",
]
"""The snippet's ``fail``: an AssertionError naming the property, the step and what broke."""


def _fail(prop: str, k: int | None, detail: str) -> NoReturn:
    raise PropertyError(prop, detail, k)


@functools.cache
def plain_checks(source: tuple[str, ...]) -> dict[str, Any]:
    """The names that ``source`` (a kind's checks in plain Python, the lines its snippet
    shows) defines, run once with ``np`` and with ``fail(property, k, detail)`` raising the
    property's PropertyError at step ``k``. Law: the check and its snippet run the same lines."""
    namespace: dict[str, Any] = {"np": np, "fail": _fail}
    exec(compile("\n".join(source), "<plain checks>", "exec"), namespace)
    return namespace


@dataclass(frozen=True)
class Api:
    """How a kind's environment is stepped. Each function takes the :class:`Episode`:

    ``start(env)``: the kind's state of one episode (``episode.state``); ``reset(episode,
    done_at)``: reset (``done_at`` None: with the seed; else after the end at that step),
    check and record; ``actors(episode, k)``: who acts at step ``k``, with what they see;
    ``act(episode, actors, factors)``: the step's action, drawn with ``episode.draw``, and
    each actor's part of it (``factors``: each masked actor's checked mask); ``returned(episode,
    k, result)``: check and record what the step returned, whether the episode ended;
    ``limit(episode)``: the episode limit (None: none); ``idle(episode)``: whether no one is
    left to act before a step (then the episode is reset without a step); ``seen``: how many
    steps before the acting one the actors' masks were published (1: by the step before, 0:
    read at the step); ``plain``: the episode in plain Python, for the snippet; ``call(env,
    action, k, illegal, said)``: the step itself, (its result, None) or (None, the exception's
    type where an ``illegal`` action was clearly rejected) (default
    :func:`~spacealg.testing.engine.values.stepped`: ``env.step(action)``)."""

    reset: Callable[[Episode, int | None], None]
    actors: Callable[[Episode, int], list[Actor]]
    act: Callable[[Episode, list[Actor], dict[Any, list[np.ndarray]]], tuple[Any, dict[Any, Any]]]
    returned: Callable[[Episode, int, Any], bool]
    plain: Plain
    call: Callable[[Any, Any, int, bool, str], tuple[Any, str | None]] = stepped
    start: Callable[[Any], Any] = lambda env: None
    limit: Callable[[Episode], Limit | None] = lambda episode: None
    idle: Callable[[Episode], bool] | None = None
    seen: int = 1

    def episode(self, env: Any, seed: int, n: int, draw: Callable[..., Any], *, masks: bool = True) -> Episode:
        """An :attr:`~spacealg.testing.engine.runner.EnvKind.episode` of this API."""
        return Episode(self, env, seed, n, draw, masks=masks)


class Episode:
    """One run of an environment of ``api`` from ``seed`` through ``n`` steps, its actions
    from ``draw`` (in the kind's signature, called by ``api.act``); ``masks``: whether
    published masks are read. ``run()`` returns the trace; ``steps``, ``episodes`` and
    ``reached`` (precondition marks) say how far it went."""

    def __init__(self, api: Api, env: Any, seed: int, n: int, draw: Callable[..., Any], *, masks: bool = True) -> None:
        self.api, self.env, self.seed, self.n, self.draw, self.masks = api, env, seed, n, draw, masks
        self.trace: list[Any] = []
        self.steps = 0
        self.episodes = 1
        self.since_reset = 0  # the steps of the episode running
        self.reached: set[str] = set()
        self.held: dict[Any, tuple[Any, Any, int | None, str]] = {}  # observations handed out, to detect aliasing
        self.last: Any = None  # what the kind keeps of the last reset or step
        self.acting: list[Actor] = []  # the actors of the step being checked
        self.state = api.start(env)

    def run(self) -> list[Any]:
        with contextlib.suppress(Stop):
            self.reset(None)
            k = 0
            while k < self.n:
                tick()  # past the check's deadline the episode stops here
                if self.api.idle is not None and self.api.idle(self):  # no one left to act: a new episode
                    self.reset(k)
                    self.episodes += 1
                    if self.api.idle(self):
                        break
                    continue
                k += 1
                if self.step(k):
                    self.reset(k)
                    self.episodes += 1
        return self.trace

    def reset(self, done_at: int | None) -> None:
        self.api.reset(self, done_at)
        self.since_reset = 0

    def hold(self, holder: Any, observation: Any, at: int | None, what: str = "the observation") -> None:
        """``observation-aliasing``: no observation held (one per ``holder``) changed in place
        since it was handed out; then hold ``observation``, handed out at step ``at``."""
        for returned, copied, when, said in self.held.values():
            aliased(returned, copied, when, at, said)
        self.held[holder] = (observation, snapshot(observation), at, what)

    def step(self, k: int) -> bool:
        """Step ``k``: the actors' masks, the action, the step and its checks; whether the
        episode ended (a clear rejection of an illegal action ends it too)."""
        actors = self.api.actors(self, k)
        at = (k - self.api.seen) or None
        factors: dict[Any, list[np.ndarray]] = {}
        for actor in actors:
            mask = find_mask(actor.observation, actor.info) if self.masks and actor.masked else None
            if mask is not None:
                self.reached.add(MASKED.mark)
                checked = check_mask(mask, actor.space(at), True, at, who(actor.agent))
                if checked is not None:
                    factors[actor.agent] = checked
        action, parts = self.api.act(self, actors, factors)
        spaces = {actor.agent: actor.space for actor in actors}
        illegal = any(
            a in parts and not MaskedAction(spaces[a](at)).is_legal(parts[a], f) for a, f in factors.items()
        )
        if illegal:
            self.reached.add(ILLEGAL.mark)
        said = who(actors[0].agent) if len(actors) == 1 else ""
        result, rejected = self.api.call(self.env, action, k, illegal, said)
        self.steps += 1
        if rejected:  # a clear rejection: start a new episode
            self.trace.append(("rejected", said, rejected))
            return True
        self.acting = actors
        ended = self.api.returned(self, k, result)
        self.since_reset += 1
        limit = self.api.limit(self)
        if limit is not None and self.since_reset >= limit.reach:
            if ended:
                self.reached.add(limit.mark)
            elif self.since_reset >= limit.end_by:
                self.reached.add(limit.mark)
                if not passed_over(limit.property):
                    detail = f"{limit.said} but the episode is still running after {self.since_reset} steps"
                    raise PropertyError(limit.property, detail, k)
        return ended
