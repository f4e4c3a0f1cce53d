"""Running a check: what the episode checkers of every kind of environment share.

A checker states what is particular to its kind of environment in an :class:`EnvKind`: the
episode class, how to read the declared action spaces (and the episode limit) from a fresh
environment and draw one action, the properties, the probes. :func:`check_kind` does the
rest, the same for every kind: validate the options, run the one-off probes, build the
Hypothesis body of :func:`episode_body` (an episode length, a reset seed, the time budget,
then the actions, drawn through :class:`Draws` and recorded for the report), search, refine
each failure to the shortest action sequence found, and report.

Laws: the same ``random_seed`` and options give the same run (the same draws in the same
order for every kind); a failure's ``actions`` replay it with :func:`spacealg.testing.replay`;
every property of a kind's table is reported held, broken or not checked (with why), never
silently dropped.

How a new kind plugs in: one :class:`EnvKind` (its module under
:mod:`spacealg.testing.kinds`, or anywhere) and one line in :mod:`spacealg.testing.registry`
(or :func:`spacealg.testing.registry.register`). The kind states:

1. **Recognition** (``recognises(instance)``, ``claims(argument)``) and its **checker**
   (``check``; :func:`check_kind` for the kinds this engine runs).
2. **Properties**: ``{name: one-line law}``, each with its **precondition**
   (:class:`Precondition`: what an example must have reached, a step, an episode end, a
   mask, for the law to have been checked by it; a property no example took past its
   precondition is reported not checked, with why, never held).
3. **Episodes**: a class built as ``episode(env, seed, n, draw, masks=...)`` with ``run()``
   (returning the trace: a list of entries compared with :func:`compare` on replay),
   ``steps``, ``episodes`` and optionally ``reached`` (the marks of the preconditions it
   reached beyond a step and an end); a broken property is raised inside as
   :class:`~spacealg.testing.engine.errors.PropertyError` ``(property, detail, step, where)``.
   Stepped APIs describe themselves in an :class:`~spacealg.testing.engine.episode.Api`
   and take its :class:`~spacealg.testing.engine.episode.Episode`. Record infos with
   :func:`spacealg.testing.engine.infos.recorded` so that ``ignore_info_keys`` applies.
4. **Drivers**: ``declared(env) -> (draw, limit)`` reads the action spaces from a fresh
   environment (raising ``declared-spaces``) and returns ``draw(draws, *args)``, which draws
   one action through :meth:`Draws.action`, and the episode limit; ``spaces(env)`` names the
   declared spaces for the command line.
5. **Probes** (optional): ``probes(source, clock) -> findings``: warnings (``str``),
   :class:`~spacealg.testing.engine.verdicts.NotChecked` and ``PropertyError``;
   ``unchecked(env)`` returns ``{property: why}`` for properties that do not apply.
6. **Replays, follow-ups and snippets** (optional): ``replay`` builds the episode of the
   determinism replay; ``after(ran)`` follows an example up (:class:`Ran`); ``replays``
   replays a recorded failure (default :func:`replay_kind`); ``snippet(error)`` writes its
   reproduction (default :func:`spacealg.testing.engine.snippets.reproduction`).

:func:`check_kind` returns an :class:`EnvCheckReport` (``properties`` held,
``not_checked``, ``warnings``) or raises an
:class:`~spacealg.testing.engine.errors.EnvCheckError` whose ``also`` holds every further
broken property, each with its reproduction; :func:`run_check` (search, refine, report around
``make_body(source, stats, clock, focus)``) is what it runs, for a body of one's own, which
must pass over the violations its ``focus`` ignores (:meth:`Focus.ignores`).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from spacealg.strategies.members import members
from spacealg.testing.engine.driver import (
    DEFAULT_BUDGET,
    SEEDS,
    Budget,
    Focus,
    Outcome,
    OutOfTime,
    Unshrunk,
    describe_exception,
    examples_database,
    first_difference,
    global_rng,
    passed_over,
    passing_over,
    same,
    search,
    snapshot,
    tick,
    working_until,
)
from spacealg.testing.engine.errors import OPTIONAL_PROPERTIES, EnvCheckError, PropertyError, announce_broken, short
from spacealg.testing.engine.infos import current as current_info_keys
from spacealg.testing.engine.infos import ignoring, info_keys
from spacealg.testing.engine.lints import own_gymnasium, space_fault
from spacealg.testing.engine.masks import MaskedAction
from spacealg.testing.engine.resolve import EnvSource, resolve
from spacealg.testing.engine.verdicts import partition, verdicts

__all__ = [
    "DEFAULT_MAX_EXAMPLES",
    "DEFAULT_MAX_STEPS",
    "AgentActions",
    "CheckOptions",
    "Draws",
    "EnvCheckReport",
    "EnvKind",
    "Ran",
    "agents_of",
    "check_declared",
    "check_kind",
    "episode_body",
    "finalisers_caught",
    "refine",
    "run_check",
    "run_example",
]

DEFAULT_MAX_EXAMPLES = 100
DEFAULT_MAX_STEPS = 100
MAX_BROKEN = 8
"""By default, at most this many broken properties are searched for and reported by one check
(the ``max_broken`` option: 1 stops at the first, as ``pytest -x`` does)."""


class CheckOptions(TypedDict, total=False):
    """The options of ``check_env``, ``check_parallel_env`` and ``check_aec_env`` (documented
    in :func:`spacealg.testing.check_env`; defaults in :data:`DEFAULT_OPTIONS`)."""

    max_examples: int
    max_steps: int
    max_broken: int
    determinism: bool
    random_seed: int | None
    budget: float | None
    database: Any
    masks: bool
    illegal_actions: bool
    hygiene: bool
    ignore_info_keys: Any
    lint: bool


DEFAULT_OPTIONS: CheckOptions = {
    "max_examples": DEFAULT_MAX_EXAMPLES,
    "max_steps": DEFAULT_MAX_STEPS,
    "max_broken": MAX_BROKEN,
    "determinism": True,
    "random_seed": 0,
    "budget": DEFAULT_BUDGET,
    "database": None,
    "masks": True,
    "illegal_actions": False,
    "hygiene": True,
    "ignore_info_keys": (),
    "lint": False,
}


@dataclass
class EnvCheckReport:
    """A passed check: what was checked, and how much. ``properties``: those that held;
    ``not_checked``: every property of the checker's table that was not checked, and why;
    ``steps_per_second``: steps checked per second of the search (:meth:`searching_seconds`)."""

    env_name: str
    examples: int
    steps: int
    episodes: int
    seconds: float
    properties: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    out_of_time: bool = False  # the time budget ended the search before max_examples
    kind: str = "gymnasium"
    not_checked: dict[str, str] = field(default_factory=dict)
    steps_per_second: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        searching = self.searching_seconds()
        self.steps_per_second = self.steps / searching if searching > 0 else 0.0

    def searching_seconds(self) -> float:
        """The seconds the search took (all of ``seconds`` here)."""
        return self.seconds

    def verdicts(self) -> dict[str, str]:
        """Each property: ``"held"`` or ``"not checked: <why>"``."""
        return verdicts((*self.properties, *self.not_checked), (), self.not_checked)

    def __str__(self) -> str:
        budget = " (the time budget ended the search)" if self.out_of_time else ""
        skipped = f"; {len(self.not_checked)} not checked" if self.not_checked else ""
        return (
            f"{self.env_name}: {len(self.properties)} properties held over {self.examples} examples "
            f"({self.steps:,} steps, {self.episodes:,} episodes) in {self.seconds:.1f} s, "
            f"{self.speed()}{budget}{skipped}"
        )

    def speed(self) -> str:
        """``steps_per_second`` in words, as the summary line gives it."""
        return f"{self.steps_per_second:,.0f} steps/s"


def action_fallback(space: Any, seed: int) -> Callable[[list[np.ndarray] | None], Any]:
    """Actions from a numpy generator (for the tail of a long episode, beyond what Hypothesis
    draws): legal under the mask factors when given."""
    g = np.random.default_rng(seed)
    if hasattr(space, "seed") and hasattr(space, "sample"):
        space.seed(int(g.integers(2**31)))
        whole: Callable[[], Any] = space.sample
    else:
        from spacealg.core.protocol import sample

        def whole() -> Any:
            return sample(space, rng=g)

    def draw(factors: list[np.ndarray] | None) -> Any:
        if factors is None:
            return whole()
        picks = [int(g.choice(np.flatnonzero(f))) for f in factors]
        start = np.asarray(getattr(space, "start", 0))
        if len(factors) == 1 and type(space).__name__ == "Discrete":
            return space.dtype.type(int(start) + picks[0])
        return (np.asarray(picks) + start).astype(space.dtype)

    return draw


def compare(
    first: list[Any], second: list[Any], what: str = "(observation, reward, terminated, truncated, info)"
) -> None:
    """Raise reset-/step-determinism at the first difference between two traces."""
    i = first_difference(first, second)
    if i is None:
        return
    step = sum(1 for entry in first[:i] if entry[0] != "reset") + (first[i][0] != "reset" if i < len(first) else 0)
    a = first[i] if i < len(first) else None
    b = second[i] if i < len(second) else None
    if i == 0:
        raise PropertyError(
            "reset-determinism",
            f"reset(seed=...) returned {short(a[1:])} and then {short(b[1:])}",  # type: ignore[index]
        )
    kind = (a or b)[0]  # type: ignore[index]
    said = "the reset after the episode end" if kind == "reset" else "step"
    raise PropertyError(
        "step-determinism",
        f"replaying the same seed and actions, {said} returned {short(a[1:] if a else None)} and then "
        f"{short(b[1:] if b else None)}\n{what}",
        step,
    )


def fail(
    violation: PropertyError, source: EnvSource, reproducible: bool, examples: int, kind: EnvKind
) -> EnvCheckError:
    """``violation`` as the EnvCheckError of a check of ``kind`` on ``source`` (its law
    quoted from the kind's table, its reproduction written by the kind's snippet, its class
    the kind's ``error``)."""
    return kind.error(
        property=violation.property,
        detail=violation.detail,
        seed=violation.seed,
        actions=violation.actions,
        step=violation.step,
        where=violation.where,
        env_name=source.name,
        construction=source.construction,
        imports=source.imports,
        reproducible=reproducible,
        examples=examples,
        kind=kind.name,
        statement=kind.properties.get(violation.property, ""),
        snippet=kind.snippet,
        ignored_info=current_info_keys(),
        changed=violation.changed,
        context=violation.context,
    )


def close(env: Any, source: EnvSource) -> None:
    """Close an environment the checker built (never one the caller passed in)."""
    if source.owned:
        with contextlib.suppress(Exception):
            env.close()


def probe(source: EnvSource, read: Callable[[Any], Any]) -> Any:
    """``read(env)`` on a freshly built environment (closed afterwards)."""
    env = source.make()
    try:
        return read(env)
    finally:
        close(env, source)


DETERMINISM = frozenset({"reset-determinism", "step-determinism", "global-rng"})
"""The properties of the replay of an example."""

def run_check(
    source: EnvSource,
    make_body: Callable[[EnvSource, dict[str, Any], Budget, Focus], Callable[[Any], None]],
    *,
    max_examples: int,
    random_seed: int | None,
    kind: EnvKind,
    properties: tuple[str, ...],
    budget: float | None = DEFAULT_BUDGET,
    database: Any = None,
    max_broken: int = MAX_BROKEN,
    probes: Callable[[EnvSource, Budget], list[Any]] | None = None,
    not_checked: Mapping[str, str] | None = None,
) -> EnvCheckReport:
    """Run the one-off probes, then search for violations; report (with the probes'
    warnings, also issued as EnvCheckWarning) or raise an EnvCheckError.

    ``properties``: those checked; ``not_checked``: the others, with why; ``budget``: the
    seconds of the searches, counted once the declaration is read and the probes have run
    (a JAX environment's compilation; the check's deadline, :func:`working_until`, counts
    from its start). The probes return
    findings (:func:`~spacealg.testing.engine.verdicts.partition`: warnings, properties they could
    not check, broken properties). Every broken property is reported: once a search finds a
    violation, it is refined (further searches look for the same property with fewer
    actions, over all seeds, until none is found within the budget) and the search goes on
    with that property passed over, until nothing more breaks or ``max_broken`` are (then the
    properties not found broken, the probes' aside, are not checked); where no example of
    the last search ran past the properties passed over, the others are not checked (never held).
    A property that no example took past its precondition (``kind.preconditions``) is not
    checked, with why: held means some example checked it.
    The error raised is the first broken property's; ``error.also`` holds the others, each
    with its own shortest reproduction; ``error.held`` and ``error.not_checked`` the rest."""
    stats: dict[str, Any] = {"steps": 0, "episodes": 0, "replayed": 0, "reached": set()}
    started = time.perf_counter()
    skipped: dict[str, str] = dict(not_checked or {})
    warned: list[str] = []
    broken: list[EnvCheckError] = []
    try:
        clock = Budget(budget)
        focus = Focus()
        body: Callable[[Any], None] | None = make_body(source, stats, clock, focus)  # declared-spaces
        if probes is not None:
            warned, left, found = partition(probes(source, clock))
            skipped.update(left)
            broken += [fail(violation, source, True, 0, kind) for violation in found]
            for error in broken:
                announce_broken(error)
            if broken:  # the first search passes over them too (a JAX probe's laws recur in examples)
                body = None
        searching = clock.started = time.perf_counter()  # the budget is the search's (a JAX compilation aside)
    except PropertyError as violation:
        error = fail(violation, source, True, 0, kind)
        why = (
            "the environment's spaces cannot be read"
            if error.property.startswith("declared")
            else f"the check stops at the broken {error.property}: no episode runs"
        )
        error.not_checked = {p: why for p in properties if p != error.property}
        raise error from None
    name = f"{kind.name}:{source.name}"
    examples, out_of_time = 0, False
    while len(broken) < max_broken:
        excluded = frozenset(e.property for e in broken)
        if body is None:
            focus = Focus(excluded=excluded)
            body = make_body(source, stats, clock, focus)
        # a key per search: a passing search deletes the failures it replays from its key
        key = name if not excluded else f"{name} past {', '.join(sorted(excluded))}"
        memory = Unshrunk(examples_database(database))  # where refine finds its failure again, to shrink it
        outcome = search(
            body, max_examples=max_examples, random_seed=random_seed, budget=clock, database=memory, name=key,
            shrink=False,
        )
        body = None
        examples += outcome.examples
        out_of_time = out_of_time or outcome.out_of_time
        if outcome.violation is None:
            break
        home = Found(Focus(excluded=excluded), memory, key)
        best = refine(outcome, home, source, make_body, stats, budget, max_examples, random_seed)
        broken.append(fail(best.violation, source, best.reproducible, examples, kind))  # type: ignore[arg-type]
        announce_broken(broken[-1])
        if clock.spent():
            out_of_time = True
            break
        clock = Budget(None if budget is None else max(budget - (time.perf_counter() - searching), 1.0))
    from spacealg.testing.engine.lints import warn_all

    warn_all(source.name, warned)
    names = {e.property for e in broken}
    if len(broken) >= max_broken:  # stopped at the cap: the search for the others was cut short
        why = f"the check stopped at {max_broken} broken propert{'y' if max_broken == 1 else 'ies'} (max_broken)"
        ran = (p for p in properties if p not in skipped and p not in names and p not in DECIDED_FIRST)
        skipped.update(dict.fromkeys(ran, why))
    if broken and not focus.completed and focus.stopped:  # nothing ran past the broken ones
        why = f"every example stopped at the broken {', '.join(sorted(focus.stopped))}"
        ran = (p for p in properties if p not in skipped and p not in names and p not in DECIDED_FIRST)
        skipped.update(dict.fromkeys(ran, why))
    replays = names & DETERMINISM
    if replays and not stats["replayed"]:  # no replay agreed up to the end: the others are not known
        why = f"no replay could be compared past the broken {', '.join(sorted(replays))}"
        skipped.update({p: why for p in DETERMINISM & set(properties) if p not in skipped and p not in names})
    for p in properties:
        unmet = [c for c in kind.preconditions.get(p, ()) if c.mark not in stats["reached"]]
        if unmet and p not in skipped and p not in names:
            skipped[p] = unmet[0].why
    held = tuple(p for p in properties if p not in skipped and all(p != e.property for e in broken))
    if broken:
        first, *others = broken
        first.also, first.held, first.not_checked = tuple(others), held, skipped
        first.warnings = tuple(warned)
        first.steps, first.episodes, first.examples = stats["steps"], stats["episodes"], examples
        raise first from None
    return EnvCheckReport(
        source.name,
        examples,
        stats["steps"],
        stats["episodes"],
        time.perf_counter() - started,
        held,
        tuple(warned),
        out_of_time,
        kind.name,
        skipped,
    )


@dataclass(frozen=True)
class Found:
    """Where a search's failure can be found again, to be shrunk: the search's ``focus``
    and the example ``database`` that keeps its failures under ``key``."""

    focus: Focus
    database: Unshrunk
    key: str


def refine(
    outcome: Outcome,
    found: Found,
    source: EnvSource,
    make_body: Callable[[EnvSource, dict[str, Any], Budget, Focus], Callable[[Any], None]],
    stats: dict[str, Any],
    budget: float | None,
    max_examples: int,
    random_seed: int | None,
) -> Outcome:
    """A violation found unshrunk (by the search ``found`` says) at the shortest action
    sequence further searches find. Length first: fresh searches over all seeds look for the
    same property in fewer actions, each taking its first failure unshrunk; then Hypothesis
    shrinks the shortest one (its search again, replaying it from its database); a shrink
    that shortens it starts the searches again. Laws: the result replays (it failed when
    Hypothesis last ran it) and is never longer than ``outcome``'s; shrinking a long example
    costs an episode per try, so it is left for the shortest one (OverfullWarehouse's check with
    ``max_broken=1``, loaded 2-core machine: 7.7 -> 3.1 s of CPU)."""
    best, home, shrunk_already = outcome, found, False
    clock = Budget(budget)
    while True:
        while best.reproducible and best.violation is not None and best.violation.actions and not clock.spent():
            focus = Focus(len(best.violation.actions) - 1, best.violation.property, found.focus.excluded)
            memory = Found(focus, Unshrunk(), home.key)
            shorter = search(
                make_body(source, stats, Budget(budget), focus), max_examples=max_examples, random_seed=random_seed,
                database=memory.database, name=memory.key, shrink=False,
            )
            worse = shorter.violation is None or not shorter.reproducible
            if worse or len(shorter.violation.actions) >= len(best.violation.actions):  # type: ignore[union-attr]
                break
            best, home = Outcome(shorter.violation, True, best.examples + shorter.examples), memory
            shrunk_already = False
        if shrunk_already or not best.reproducible or best.violation is None:
            return best
        # counters of its own; no failure longer than the best counts
        focus = Focus(home.focus.shorter, home.focus.only, home.focus.excluded, len(best.violation.actions))
        home.database.shrink_next()
        shrunk = search(
            make_body(source, stats, Budget(budget), focus), max_examples=max_examples, random_seed=random_seed,
            database=home.database, name=home.key, generate=False,
        )
        if shrunk.violation is None or not shrunk.reproducible:  # not found again: as it was found
            return best
        length = len(shrunk.violation.actions)
        if length > len(best.violation.actions):
            return best
        shortened = length < len(best.violation.actions)
        best, shrunk_already = Outcome(shrunk.violation, True, best.examples + shrunk.examples), True
        if not shortened or clock.spent():  # else: search below the shrunk length
            return best


def run_example(
    source: EnvSource,
    episode: Callable[..., Any],
    seed: int,
    n: int,
    draw: Callable[..., Any],
    taken: list[Any],
    *,
    determinism: bool,
    stats: dict[str, Any] | None = None,
    what: str = "(observation, reward, terminated, truncated, info)",
    replay: Callable[..., Any] | None = None,
) -> None:
    """One example: run ``n`` steps from ``seed`` on a fresh environment, drawing actions
    with ``draw`` (which records them in ``taken``), then replay ``taken`` on the same
    instance (with the episode ``replay`` builds; default ``episode``) and compare. The
    global ``random``/``numpy.random`` states are seeded differently for the two runs; a
    difference that goes away when they are seeded alike is reported as ``global-rng``. A
    PropertyError leaves with the seed and the actions up to the failure — all of them for a
    determinism failure, whose replay needs the whole first run on the same instance."""
    instance = source.make()
    try:
        with global_rng(1):
            first = episode(instance, seed, n, draw)
            trace = first.run()
        if stats is not None:
            stats["steps"] += first.steps
            stats["episodes"] += first.episodes
            stats.setdefault("reached", set()).update(reached(first))
        if determinism:
            tick()
            replay = replay or episode
            with global_rng(2):
                again = _replayed_against(replay(instance, seed, n, replayer(taken)), trace)
            try:
                compare(trace, again, what)
                if stats is not None:
                    stats["replayed"] = stats.get("replayed", 0) + 1
                    stats["reached"].add(REPLAYED.mark)
            except PropertyError as violation:
                found = violation
                if source.owned and _alike_with_same_globals(source, replay, seed, n, taken):
                    found = PropertyError(
                        "global-rng",
                        f"{violation.detail}\nwith the global random and numpy.random states seeded alike "
                        "before both runs, the runs agree: the environment draws from the global state",
                        violation.step,
                        violation.where,
                    )
                if passed_over(found.property):  # known broken: the first run's checks stand
                    return
                raise found from None
    except PropertyError as violation:
        violation.seed, violation.n = seed, n
        if violation.property in DETERMINISM:
            violation.actions = list(taken)
        else:
            violation.actions = taken[: violation.step] if violation.step is not None else []
        raise
    finally:
        close(instance, source)


class _Diverged(BaseException):
    """A replay's trace left the first run's (a BaseException: no episode takes it for the
    environment's own exception)."""


class _Against(list[Any]):
    """A replay's trace that compares each entry with the first run's as it is appended and
    stops the replay (:class:`_Diverged`) at the first difference."""

    def __init__(self, first: list[Any]) -> None:
        super().__init__()
        self.first = first

    def append(self, entry: Any) -> None:
        super().append(entry)
        i = len(self) - 1
        if i >= len(self.first) or not same(self.first[i], entry):
            raise _Diverged


def _replayed_against(again: Any, first: list[Any]) -> list[Any]:
    """The trace of the replay episode ``again``, run only up to its first difference from
    the ``first`` run's trace (so a replay that differs at step 1 of a long example ends
    there, well before the check's deadline); :func:`compare` then names the difference."""
    if not isinstance(getattr(again, "trace", None), list):
        return again.run()  # type: ignore[no-any-return]
    again.trace = _Against(first)
    try:
        return again.run()  # type: ignore[no-any-return]
    except _Diverged:
        return list(again.trace)


def replayer(taken: Sequence[Any]) -> Callable[..., Any]:
    """A draw function that gives the recorded actions again, in order."""
    replayed = iter(list(taken))
    return lambda *_: snapshot(next(replayed))


def replay_example(
    source: EnvSource,
    episode: Callable[..., Any],
    seed: int,
    actions: Sequence[Any],
    *,
    determinism: bool,
    kind: EnvKind,
    replay: Callable[..., Any] | None = None,
) -> None:
    """One recorded example again (an EnvCheckError's ``seed`` and ``actions``): the
    ``episode`` on a fresh environment with the ``actions`` given in order, then (with
    ``determinism``) its replay on the same instance; raises the EnvCheckError (of a check of
    ``kind``) of the first property that breaks, None if none does. The episode gets one step
    more than the actions, so that a failure due before the next action is drawn (a mask the
    last step published) is reached; running out of actions ends it without a failure."""
    pending = iter(actions)
    taken: list[Any] = []

    def draw(*_: Any) -> Any:
        try:
            action = next(pending)
        except StopIteration:  # the failure, if any, was due before this action
            raise _ExhaustedError from None
        taken.append(snapshot(action))
        return action

    try:
        with contextlib.suppress(_ExhaustedError):
            run_example(source, episode, seed, len(actions) + 1, draw, taken, determinism=False)
        if determinism:
            run_example(
                source, episode, seed, len(actions), replayer(actions), [*actions], determinism=True, replay=replay
            )
    except PropertyError as violation:
        raise fail(violation, source, True, 1, kind) from None


class _ExhaustedError(Exception):
    """The replayed actions ran out (no failure before the next action)."""


def _alike_with_same_globals(
    source: EnvSource, episode: Callable[..., Any], seed: int, n: int, taken: list[Any]
) -> bool:
    instance = source.make()
    try:
        with global_rng(1):
            first = episode(instance, seed, n, replayer(taken)).run()
        with global_rng(1):  # the second run stops at its first difference from the first
            second = _replayed_against(episode(instance, seed, n, replayer(taken)), first)
        return first_difference(first, second) is None
    except (Exception, OutOfTime):  # past the deadline: the difference is reported undiagnosed
        return False
    finally:
        close(instance, source)


HYGIENE = ("reset-seed", "reset-stream", "reset-options", "close-twice", "render-modes")
"""The properties of the one-off probes (checked with ``hygiene=True``)."""

DECIDED_FIRST = frozenset({*HYGIENE, "declared-spaces", "declared-specs", "spaces-match"})
"""The properties decided before the search, by the declaration and the one-off probes."""


def check_declared(space: Any, what: str) -> None:
    """``declared-spaces`` where the declared ``space`` (named ``what``) is not a well-formed
    set (:func:`~spacealg.testing.engine.lints.space_fault`: a malformed Box, a space whose own
    ``sample()`` is not a member)."""
    fault = space_fault(space, what)
    if fault is not None:
        raise PropertyError("declared-spaces", fault)


def agents_of(env: Any) -> list[Any]:
    """A PettingZoo environment's ``possible_agents``, else (spawned agents) its agents after
    ``reset(seed=0)``."""
    agents = getattr(env, "possible_agents", None)
    if agents is None:
        env.reset(seed=0)
        agents = env.agents
    return list(agents)


class Draws:
    """The actions of one example, as its episode asks for them: past ``max_steps`` actions
    from a numpy generator seeded by the example (one per agent, :func:`action_fallback`);
    else legal ones under a checked mask (some outside it with ``illegal``), else drawn by
    Hypothesis from the space's strategy. ``taken`` records every action of the episode."""

    def __init__(self, data: Any, max_steps: int, illegal: bool, tail_seed: int | None) -> None:
        self.data, self.max_steps, self.illegal, self.tail_seed = data, max_steps, illegal, tail_seed
        self.taken: list[Any] = []
        self.tails: dict[Any, Callable[..., Any]] = {}

    def action(
        self, agent: Any, factors: list[np.ndarray] | None, space: Callable[[], Any], strategy: Callable[[], Any]
    ) -> Any:
        """An action of ``agent`` (None for a single agent); ``space`` and ``strategy`` give
        its action space and strategy, read only where needed."""
        if self.tail_seed is not None and len(self.taken) >= self.max_steps:
            if agent not in self.tails:
                self.tails[agent] = action_fallback(space(), self.tail_seed)
            return self.tails[agent](factors)
        if factors is not None:
            return MaskedAction(space(), self.illegal).draw(self.data, factors, strategy())[0]
        return self.data.draw(strategy())


class AgentActions:
    """Each agent's action space and Hypothesis strategy, read once (from ``env`` for an
    agent not declared in ``spaces``); ``declared-spaces`` where no strategy can be built.
    The one driver of the multi-agent checkers: :meth:`read` reads a fresh environment's
    agents, :meth:`draw` draws an agent's action."""

    def __init__(self) -> None:
        self.spaces: dict[Any, Any] = {}
        self.strategies: dict[Any, Any] = {}

    @classmethod
    def read(cls, env: Any) -> AgentActions:
        """The action spaces and strategies of ``env``'s agents (:func:`agents_of`)."""
        agents = cls()
        try:
            agents.spaces.update({agent: env.action_space(agent) for agent in agents_of(env)})
        except Exception as error:
            raise PropertyError(
                "declared-spaces", f"cannot read the agents and action_space(agent): {describe_exception(error)}"
            ) from error
        for agent in agents.spaces:
            check_declared(agents.spaces[agent], f"action_space({agent!r})")
            try:
                observed = env.observation_space(agent)
            except Exception as error:
                raise PropertyError(
                    "declared-spaces", f"observation_space({agent!r}) raised {describe_exception(error)}"
                ) from error
            check_declared(observed, f"observation_space({agent!r})")
            agents.strategy(agent)
        return agents

    def draw(self, draws: Draws, agent: Any, env: Any, factors: list[np.ndarray] | None) -> Any:
        """``agent``'s action through :meth:`Draws.action` (its space read from ``env``
        for an agent that spawned after the declaration was read)."""
        return draws.action(
            agent, factors, lambda: self.spaces.get(agent) or env.action_space(agent), lambda: self.strategy(agent, env)
        )

    def strategy(self, agent: Any, env: Any = None) -> Any:
        if agent not in self.strategies:
            try:
                if agent not in self.spaces:
                    self.spaces[agent] = env.action_space(agent)
                self.strategies[agent] = members(self.spaces[agent])
                self.strategies[agent].validate()
            except Exception as error:
                raise PropertyError(
                    "declared-spaces",
                    f"cannot draw actions from action_space({agent!r}): {describe_exception(error)}",
                ) from error
        return self.strategies[agent]


Declared = tuple[Callable[..., Any], "int | None"]
"""What an :class:`EnvKind` reads from a fresh environment: ``draw(draws, *args)``, the
action for the episode's ``draw(*args)`` call, and the episode limit (None: none declared)."""


@dataclass
class Ran:
    """An example as :attr:`EnvKind.after` sees it: Hypothesis' ``data`` (to draw more), the
    reset ``seed``, the actions ``taken``, the ``episode`` of the first run (None where it
    could not be built) and the ``violation`` it raised (None: it passed)."""

    data: Any
    seed: int
    taken: list[Any]
    episode: Any
    violation: PropertyError | None


@dataclass(frozen=True)
class Precondition:
    """What an example must reach for a property to be checked by it: ``mark``, left by the
    engine (:data:`STEPPED`: a step was taken; :data:`ENDED`: an episode ended and the run
    went on; :data:`REPLAYED`: a replay was compared) or by the episode in its ``reached``
    set (:data:`MASKED`, :data:`ILLEGAL`, or a kind's own); ``why``: the reason given when
    no example of the check reached it."""

    mark: str
    why: str


STEPPED = Precondition("step", "no example took a step (every example stopped at step 0)")
ENDED = Precondition("end", "no episode ended within the steps drawn, so nothing after an end was checked")
REPLAYED = Precondition("replay", "no example was replayed to the end for comparison")
MASKED = Precondition("mask", "the environment published no action mask in any example")
ILLEGAL = Precondition("illegal", "no action outside a published mask was taken")
CYCLES = Precondition(
    "cycles",
    "no example ran an episode to max_cycles: every one ended sooner, or the bound lies beyond the steps drawn",
)


def reached(episode: Any) -> set[str]:
    """The precondition marks an episode reached: a step, an end after a step, and its own
    ``reached``."""
    marks = set(getattr(episode, "reached", ()))
    if episode.steps:
        marks.add(STEPPED.mark)
        if episode.episodes > 1:
            marks.add(ENDED.mark)
    return marks


def _runs_its_own_check(*_: Any, **__: Any) -> Any:
    """The episode and ``declared`` of a kind that :func:`check_kind` does not run."""
    raise TypeError("this kind runs a checker of its own: it has no episode for check_kind")


@dataclass(frozen=True)
class EnvKind:
    """What the checker states about one kind of environment: one entry of the registry
    (:mod:`spacealg.testing.registry`), read by everything that depends on a kind.

    ``name``: its name in reports, errors and JSON; ``properties``: ``{name: law}``;
    ``preconditions``: ``{property: (Precondition, ...)}``, what an example must reach for
    the property to count as checked (none: the reset checks it); ``recognises(instance)``:
    whether an environment instance is of this kind (None: never recognised; the registry
    asks in order, the most specific kind first); ``claims(argument)``: whether the argument
    given to ``check`` (an id, a tuple) is of this kind before anything is built;
    ``check(env, **options)``: its checker; ``spaces(env)``: its declared spaces as
    ``[(name, space)]`` for the command line; ``replays(source, seed, actions,
    determinism=, masks=)``: a recorded failure again (None: :func:`replay_kind`);
    ``snippet(error)``: the reproduction of its failures (None: the engine's); ``error``: the
    class of its failures (an :class:`EnvCheckError`, given ``context``: what the violation
    carried for the snippet).

    For :func:`check_kind`: ``episode(env, seed, n, draw, masks=...)``: an episode with
    ``run()``, ``steps`` and ``episodes``; ``declared(env)``: the draw function and the
    episode limit, read from a fresh environment (raising ``declared-spaces``); ``what``: the
    fields of a step in the trace, named by determinism failures; ``probes``: the one-off
    probes (None: none); ``unchecked(env)``: properties that a fresh environment shows not to
    apply, as ``{property: why}`` (or an iterable of names; None: all apply); ``replay``: the
    episode of the determinism replay (None: ``episode``); ``after(ran)``: the follow-up of
    every example (:class:`Ran`), raising PropertyError (None: none)."""

    name: str
    properties: Mapping[str, str]
    check: Callable[..., Any]
    preconditions: Mapping[str, tuple[Precondition, ...]] = field(default_factory=dict)
    recognises: Callable[[Any], bool] | None = None
    claims: Callable[[Any], bool] | None = None
    spaces: Callable[[Any], list[tuple[str, Any]]] | None = None
    replays: Callable[..., None] | None = None
    snippet: Callable[[Any], str] | None = None
    error: Callable[..., EnvCheckError] = EnvCheckError
    episode: Callable[..., Any] = _runs_its_own_check
    declared: Callable[[Any], Declared] = _runs_its_own_check
    what: str = ""
    probes: Callable[[EnvSource, Budget | None], list[Any]] | None = None
    unchecked: Callable[[Any], Iterable[str] | Mapping[str, str]] | None = None
    replay: Callable[..., Any] | None = None
    after: Callable[[Ran], None] | None = None


def named_spaces(env: Any) -> list[tuple[str, Any]]:
    """A Gymnasium-style environment's declared spaces, named (an :attr:`EnvKind.spaces`)."""
    return [("observation space", env.observation_space), ("action space", env.action_space)]


def episode_body(
    kind: EnvKind, source: EnvSource, options: CheckOptions, stats: dict[str, Any], clock: Budget, focus: Focus
) -> Callable[[Any], None]:
    """The one Hypothesis body of every checker, for ``kind``: draw the length
    (:meth:`Focus.length`) and the seed (:data:`SEEDS`), admit the example under the time
    budget, run it and its replay (:func:`run_example`, actions drawn through :class:`Draws`)
    and follow it up (``kind.after``), passing over the properties already found broken
    (counting, in ``focus``, the examples that ran to their end and the properties that
    stopped the others); attribute a violation: its seed and length, and the actions (all of
    them for a determinism failure, whose replay needs the whole run; else those up to the
    failing step); a violation ``focus`` ignores, or longer than it counts, passes. A search
    for one property (``focus.only``) that is not one of the replay's runs no replay: only
    that property counts, and the replay's laws are the determinism ones."""
    draw_action, limit = probe(source, kind.declared)
    max_steps, masks = options["max_steps"], options["masks"]
    # a search for one property that no replay decides (refining it) replays nothing
    replayed = options["determinism"] and (focus.only is None or focus.only in DETERMINISM)

    def body(data: Any) -> None:
        n = focus.length(data, max_steps, limit)
        seed = data.draw(SEEDS, label="seed")
        clock.admit(seed, n)
        tail_seed = data.draw(SEEDS, label="tail") if n > max_steps else None
        draws = Draws(data, max_steps, options["illegal_actions"], tail_seed)
        first: list[Any] = []

        def draw(*args: Any) -> Any:
            action = draw_action(draws, *args)
            draws.taken.append(snapshot(action))
            return action

        def episode(env: Any, seed: int, n: int, next_action: Callable[..., Any]) -> Any:
            first.append(kind.episode(env, seed, n, next_action, masks=masks))
            return first[-1]

        def replay(env: Any, seed: int, n: int, next_action: Callable[..., Any]) -> Any:
            return (kind.replay or kind.episode)(env, seed, n, next_action, masks=masks)

        def follow_up(violation: PropertyError | None) -> None:
            if kind.after is not None:
                kind.after(Ran(data, seed, draws.taken, first[0] if first else None, violation))

        try:
            with passing_over(focus.excluded):
                try:
                    run_example(
                        source,
                        episode,
                        seed,
                        n,
                        draw,
                        draws.taken,
                        determinism=replayed,
                        stats=stats,
                        what=kind.what,
                        replay=replay,
                    )
                except PropertyError as violation:
                    follow_up(violation)
                    raise
                follow_up(None)
            focus.completed += 1
        except PropertyError as violation:
            if focus.ignores(violation):
                focus.stopped.add(violation.property)
                return
            violation.seed, violation.n = seed, n
            if not violation.actions:
                whole = violation.property in DETERMINISM
                violation.actions = list(draws.taken) if whole else draws.taken[: violation.step or 0]
            if focus.longer(violation):
                return
            raise

    return body


def options_of(given: CheckOptions) -> CheckOptions:
    """``given`` completed by :data:`DEFAULT_OPTIONS`, the one place where a check's options
    are validated: a TypeError naming any unknown option, a ValueError naming a count
    (``max_examples``, ``max_steps``, ``max_broken``) or a ``budget`` out of its range."""
    unknown = sorted(set(given) - set(DEFAULT_OPTIONS))
    if unknown:
        raise TypeError(
            f"unexpected keyword argument(s) {', '.join(map(repr, unknown))}; the options are "
            f"{', '.join(DEFAULT_OPTIONS)}"
        )
    for name, least in (("max_examples", 1), ("max_steps", 0), ("max_broken", 1)):
        value = given.get(name)
        if name in given and (not isinstance(value, (int, np.integer)) or value < least):
            raise ValueError(f"{name} must be an int >= {least}, got {value!r}")
    budget = given.get("budget")
    if budget is not None and not (isinstance(budget, (int, float)) and budget > 0):
        raise ValueError(f"budget must be a positive number of seconds or None, got {budget!r}")
    return {**DEFAULT_OPTIONS, **given}


def not_checked_by_options(properties: Iterable[str], options: Mapping[str, Any]) -> dict[str, str]:
    """The properties that ``options`` switch off, each with why."""
    why: dict[str, str] = {}
    for p in properties:
        if not options.get("determinism", True) and (p.endswith("determinism") or p == "global-rng"):
            why[p] = "determinism=False (--no-determinism): episodes are not replayed"
        elif not options.get("illegal_actions", False) and p in OPTIONAL_PROPERTIES:
            why[p] = "illegal_actions=False: no action outside a mask is drawn (--illegal-actions draws some)"
        elif not options.get("masks", True) and p == "action-mask":
            why[p] = "masks=False (--no-masks): published masks are ignored"
        elif not options.get("hygiene", True) and p in HYGIENE:
            why[p] = "hygiene=False (--no-hygiene): the one-off probes did not run"
    return why


def _without_lints(probes: Callable[[EnvSource, Budget | None], list[Any]]) -> Callable[..., list[Any]]:
    def quiet(source: EnvSource, clock: Budget | None) -> list[Any]:
        from spacealg.testing.engine.lints import quiet_for

        return quiet_for(probes(source, clock))

    return quiet


@contextlib.contextmanager
def finalisers_caught() -> Iterator[list[str]]:
    """Inside, an exception that Python can only print ("Exception ignored in ...": an
    environment's ``__del__`` or a callback raising) is caught instead and yielded as a
    warning naming where it was raised; the check goes on (Python ignores it too)."""
    import sys

    caught: list[str] = []
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):  # the CLI's Ctrl-C handling has its own
            previous(unraisable)
            return
        where = getattr(unraisable.object, "__qualname__", None) or type(unraisable.object).__name__
        error = unraisable.exc_value
        caught.append(
            f"an exception was raised where Python ignores it, in {where}: {type(error).__name__}: {error} (a "
            "finaliser such as __del__ that raises: its cleanup did not finish)"
        )

    sys.unraisablehook = hook
    try:
        yield caught
    finally:
        sys.unraisablehook = previous


def check_kind(kind: EnvKind, env: Any, given: CheckOptions) -> EnvCheckReport:
    """Check ``env`` (see :func:`~spacealg.testing.engine.resolve.resolve`) as an environment of
    ``kind`` with the options ``given`` (the rest from :data:`DEFAULT_OPTIONS`); under a
    time budget the whole check works until :func:`~spacealg.testing.engine.driver.working_until`'s
    deadline, counted from here. An exception the environment raises where Python ignores
    it (a ``__del__``) is a warning of the report (:func:`finalisers_caught`), not a
    traceback printed in the middle of the check."""
    with finalisers_caught() as ignored:
        try:
            report = _check_kind(kind, env, given)
        except EnvCheckError as error:
            error.warnings = (*error.warnings, *dict.fromkeys(ignored))
            raise
    report.warnings = (*report.warnings, *dict.fromkeys(ignored))
    return report


def _check_kind(kind: EnvKind, env: Any, given: CheckOptions) -> EnvCheckReport:
    started = time.perf_counter()
    options = options_of(given)
    source = resolve(env)
    keys = info_keys(options["ignore_info_keys"])
    skipped = not_checked_by_options(kind.properties, options)
    if kind.unchecked is not None:
        unchecked = probe(source, kind.unchecked)
        reasons = unchecked if isinstance(unchecked, Mapping) else dict.fromkeys(unchecked, "does not apply")
        skipped.update({p: why for p, why in reasons.items() if p not in skipped})
    checked = tuple(p for p in kind.properties if p not in skipped)
    probes = kind.probes if options["hygiene"] else None
    if probes is not None and not options["lint"] and probe(source, own_gymnasium):
        probes = _without_lints(probes)
    with ignoring(keys), working_until(options["budget"], since=started):
        return run_check(
            source,
            lambda source, stats, clock, focus: episode_body(kind, source, options, stats, clock, focus),
            max_examples=options["max_examples"],
            random_seed=options["random_seed"],
            kind=kind,
            properties=checked,
            budget=options["budget"],
            database=options["database"],
            max_broken=options["max_broken"],
            probes=probes,
            not_checked=skipped,
        )


def replay_kind(
    kind: EnvKind, source: EnvSource, seed: int | None, actions: Sequence[Any], *, determinism: bool, masks: bool
) -> None:
    """A recorded failure of a check of ``kind`` again (the default :attr:`EnvKind.replays`):
    with a seed, the example (:func:`replay_example`) with the kind's episode; ``seed=None``
    (a failure of the one-off probes, which reports no seed), the probes. Raises the
    EnvCheckError of the first property that breaks, None if none does."""
    if seed is None:  # the declaration (declared-spaces), then the one-off probes
        try:
            probe(source, kind.declared)
            _, _, broken = partition(kind.probes(source, None) if kind.probes is not None else [])
        except PropertyError as violation:
            broken = [violation]
        if broken:
            error = fail(broken[0], source, True, 1, kind)
            error.also = tuple(fail(v, source, True, 1, kind) for v in broken[1:])
            raise error from None
        return
    episode = functools.partial(kind.episode, masks=masks)
    replay_example(source, episode, seed, actions, determinism=determinism, kind=kind)
