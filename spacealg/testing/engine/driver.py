"""The Hypothesis search behind the checkers: draw episodes, catch the first broken
property, let Hypothesis shrink it, and compare replayed trajectories.

An episode body is a function of ``hypothesis.strategies.data()`` that raises
:class:`~spacealg.testing.engine.errors.PropertyError`. :func:`search` runs it under fixed settings
(quiet, no deadline, by default no example database) and returns the shrunk violation, or
the last one seen when the failure did not replay (a non-deterministic environment).

Laws of the search:

- the same ``random_seed`` gives the same run wherever spacealg is installed: Hypothesis'
  "local constants" (literals it collects from modules outside site-packages, so from a
  source checkout but not from an installed wheel, caching them in ``.hypothesis/``) are
  switched off while a check runs, and no example database is used unless one is given;
  so by default a check leaves no ``.hypothesis/`` folder in the working directory;
- a :class:`Budget` bounds the wall-clock time: once spent, the next example stops the
  search; a failure being shrunk is reported as shrunk so far (it failed when it ran);
- the whole check's work ends within :data:`WORK_FACTOR` x the budget
  (:func:`working_until`): past that deadline every episode stops between two steps or
  replays (:func:`tick`), and what broke before is reported; so the work itself is bounded,
  not only the number of examples, and only a call that never returns outlives it;
- a ``database`` (a directory or any Hypothesis ``ExampleDatabase``) stores failures under
  a key per environment and checker, so a failure found anywhere replays first elsewhere.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import hashlib
import math
import os
import random
import time
import traceback
import unittest
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.errors import Flaky, Unsatisfiable

from spacealg.testing.engine.errors import PropertyError

__all__ = [
    "CLI_BUDGET",
    "DEFAULT_BUDGET",
    "SEEDS",
    "WORK_FACTOR",
    "Budget",
    "Focus",
    "KeyedDatabase",
    "OutOfTime",
    "Outcome",
    "Unshrunk",
    "changed_in_place",
    "describe_exception",
    "draw_length",
    "first_difference",
    "global_rng",
    "passed_over",
    "passing_over",
    "same",
    "search",
    "snapshot",
    "tick",
    "working_until",
]

DEFAULT_BUDGET: float | None = None
"""Seconds one check may spend by default in Python (None: no limit, so that a seeded run is
the same on every machine); ``spacealg check`` defaults to :data:`CLI_BUDGET`."""

CLI_BUDGET = 30.0
"""The default time budget of ``spacealg check``, per environment, in seconds."""

SEEDS = st.integers(0, 2**32 - 1)
"""Reset seeds: any 32-bit seed, shrinking toward 0. Bodies draw the episode length first
and the seed second, so that Hypothesis, which shrinks earlier choices first, reports the
shortest action sequence (then the smallest seed for it)."""


@dataclass
class Outcome:
    """What a search found: the violation (None if none), whether it replayed, how many
    examples (episodes with their replays) ran, and whether the time budget ran out."""

    violation: PropertyError | None
    reproducible: bool
    examples: int
    out_of_time: bool = False


WORK_FACTOR = 3.0
"""A check with a time budget of ``b`` seconds ends its work (probes, search, shrinking,
refinement and the searches for further broken properties) within ``WORK_FACTOR * b``
seconds of its start (:func:`working_until`)."""

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


@contextlib.contextmanager
def working_until(budget: float | None, since: float | None = None) -> Iterator[None]:
    """Inside, the check's work ends :data:`WORK_FACTOR` x ``budget`` seconds after
    ``since`` (a ``time.perf_counter()``; default now); None: no deadline. An outer deadline
    that comes sooner stands."""
    deadline = _DEADLINE.get()
    if budget is not None:
        mine = (time.perf_counter() if since is None else since) + WORK_FACTOR * float(budget)
        deadline = mine if deadline is None else min(deadline, mine)
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def past_deadline() -> bool:
    """Whether the check's deadline (:func:`working_until`) has passed."""
    deadline = _DEADLINE.get()
    return deadline is not None and time.perf_counter() > deadline


def tick() -> None:
    """Called between two steps or replays of an episode: :class:`OutOfTime` once the
    check's deadline has passed, which ends the search (a failure found so far is reported,
    as shrunk so far). Law: without a deadline (no budget), never raises."""
    if past_deadline():
        raise OutOfTime


class OutOfTime(BaseException):
    """Raised by :meth:`Budget.admit` once the budget is spent: a BaseException, so that
    Hypothesis stops at once instead of taking it for a failure."""


@dataclass
class Budget:
    """Wall-clock seconds for a search (None: unbounded). ``admit(seed, n)`` is called by an
    episode body once it has drawn its seed and length: after the budget is spent it stops
    the search; while shrinking, it stops the shrinker, and only the failure shrunk so far
    (its seed and length) still runs, for Hypothesis' final replay. Shrinking gets a budget
    of its own, as long as the search's."""

    seconds: float | None = None
    started: float = field(default_factory=time.perf_counter)
    failing: tuple[int | None, int | None] | None = None
    failed_at: float | None = None
    rejected: int = 0

    def spent(self) -> bool:
        if past_deadline():
            return True
        if self.seconds is None:
            return False
        now = time.perf_counter()
        if self.failed_at is not None:
            return now - self.failed_at > self.seconds
        return now - self.started > self.seconds

    admitted: int = 0

    def admit(self, seed: int, n: int) -> None:
        # at least one example runs; the final replay of a failure always runs (both before
        # the check's deadline: past it, nothing does)
        if past_deadline() or (self.admitted and self.spent() and (seed, n) != self.failing):
            self.rejected += 1
            raise OutOfTime
        self.admitted += 1

    def failed(self, violation: PropertyError) -> None:
        self.failing = (violation.seed, violation.n)
        if self.failed_at is None:
            self.failed_at = time.perf_counter()


def draw_length(data: Any, max_steps: int, limit: int | None) -> int:
    """An episode length: up to ``max_steps`` mostly; one example in eight, when the
    environment declares an episode limit (``max_episode_steps``, ``max_cycles``) at or
    beyond ``max_steps``, the limit itself or just past it, so that time limits and the reset
    after a truncation are reached (a limit equal to ``max_steps`` too: the plain draw reaches
    it only by chance). Shrinks toward short episodes."""
    if limit is not None and limit >= max_steps and data.draw(st.integers(0, 7), label="long") == 7:
        return limit + int(data.draw(st.integers(0, 2), label="past"))
    return int(data.draw(st.integers(0, max_steps), label="steps"))


@dataclass
class Focus:
    """What an episode body searches for: by default any violation, with lengths from
    :func:`draw_length`; when refining a found violation, only the same property in episodes
    of at most ``shorter`` steps (Hypothesis shrinks within one seed's neighbourhood; a second
    search over all seeds finds shorter sequences that shrinking cannot reach); ``excluded``:
    properties already found broken, whose violations are passed over to find the others;
    ``most``: while shrinking a violation, the most actions a failure may take to count
    (:meth:`longer`: Hypothesis' simplest choices may take more actions than the ones found)."""

    shorter: int | None = None
    only: str | None = None
    excluded: frozenset[str] = frozenset()  # properties already found broken: look for others
    most: int | None = None
    completed: int = 0  # examples that ran to their end
    stopped: set[str] = field(default_factory=set)  # the passed-over properties that ended the others

    def length(self, data: Any, max_steps: int, limit: int | None) -> int:
        if self.shorter is None:
            return draw_length(data, max_steps, limit)
        return int(data.draw(st.integers(0, self.shorter), label="steps"))

    def ignores(self, violation: PropertyError) -> bool:
        return (self.only is not None and violation.property != self.only) or violation.property in self.excluded

    def longer(self, violation: PropertyError) -> bool:
        """Whether ``violation`` (its actions attributed) takes more than ``most`` actions:
        the example passes (a shrink never trades actions for simpler choices)."""
        return self.most is not None and len(violation.actions or ()) > self.most


_PASSED_OVER: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("passed_over", default=frozenset())


@contextlib.contextmanager
def passing_over(properties: frozenset[str]) -> Iterator[None]:
    """Inside, :func:`passed_over` is True for ``properties`` (already found broken), so that
    the checks of a value (membership, types) let the episode go on to find other broken
    properties instead of stopping at the known one."""
    token = _PASSED_OVER.set(properties)
    try:
        yield
    finally:
        _PASSED_OVER.reset(token)


def passed_over(prop: str) -> bool:
    """Whether a violation of ``prop`` is to be passed over (see :func:`passing_over`)."""
    return prop in _PASSED_OVER.get()


class KeyedDatabase(ExampleDatabase):
    """A view of a Hypothesis example database whose keys are prefixed by a name (the
    environment and the checker), so that the checks of different environments, which
    share one test function, do not replay each other's examples."""

    def __init__(self, inner: ExampleDatabase, name: str) -> None:
        super().__init__()
        self.inner = inner
        self.prefix = hashlib.sha256(name.encode()).digest()[:8]

    def _key(self, key: bytes) -> bytes:
        return self.prefix + key

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(self._key(key), value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self.inner.fetch(self._key(key))

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(self._key(key), value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(self._key(src), self._key(dest), value)


def examples_database(database: Any) -> ExampleDatabase | None:
    """None (no database), a directory path, or an ``ExampleDatabase``, as a database."""
    if database is None:
        return None
    if isinstance(database, (str, os.PathLike)):
        database = DirectoryBasedExampleDatabase(os.fspath(database))
    if not isinstance(database, ExampleDatabase):
        raise TypeError(
            f"database must be None, a directory or a hypothesis ExampleDatabase, got {type(database).__name__}"
        )
    return database


def as_database(database: Any, name: str) -> ExampleDatabase | None:
    """:func:`examples_database`, keyed by ``name``."""
    database = examples_database(database)
    return None if database is None else KeyedDatabase(database, name)


_SECONDARY = b".secondary"  # the suffix of Hypothesis' key of its secondary corpus


class Unshrunk(ExampleDatabase):
    """The failures that a search run without shrinking saves (passed on to ``inner``,
    the caller's database, if any), kept so that a later search shrinks them
    (``search(..., generate=False)``) once :meth:`shrink_next` is called: from then on they
    are served as Hypothesis' secondary corpus, since a failure that replays from the
    primary one is taken for shrunk already (and not shrunk again)."""

    def __init__(self, inner: ExampleDatabase | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.saved: dict[bytes, list[bytes]] = {}
        self.serving = False

    def shrink_next(self) -> None:
        self.serving = True

    def save(self, key: bytes, value: bytes) -> None:
        if not self.serving and value not in self.saved.setdefault(key, []):
            self.saved[key].append(value)
        if self.inner is not None:
            self.inner.save(key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        if self.serving:
            return list(self.saved.get(key[: -len(_SECONDARY)], ())) if key.endswith(_SECONDARY) else []
        return self.inner.fetch(key) if self.inner is not None else []

    def delete(self, key: bytes, value: bytes) -> None:
        if self.inner is not None:
            self.inner.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        if self.inner is not None:
            self.inner.move(src, dest, value)


@contextlib.contextmanager
def no_local_constants() -> Iterator[None]:
    """Switch off Hypothesis' local constants (see the module docstring) for a search: they
    make a seeded run depend on where the package is installed and write ``.hypothesis/``."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the feature
        yield
        return
    getter = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if getter is None or not hasattr(providers, "Constants"):  # pragma: no cover
        yield
        return
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    if cache is not None:
        cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = getter
        if cache is not None:
            cache.clear()


_STEP_SPAN = 0x5A7E_5735  # the label of SilentDraws.span's spans (any int unlike Hypothesis's own)


class SilentDraws:
    """``data`` whose draws are not noted: Hypothesis pretty-prints every draw of the final
    (replaying) run for a report this package never prints (12 of ActionLeakBatch's 45 s).
    Laws: the same choices, hence the same examples, as ``data.draw``; a failure shrinks to
    the same minimal example (by a path that may differ: ``data.draw`` also opens a span per
    draw, which the shrinker reads)."""

    __slots__ = ("_draw", "data")

    def __init__(self, data: Any) -> None:
        self.data = data
        conjecture = getattr(data, "conjecture_data", None)  # read once, not per draw
        self._draw = data.draw if conjecture is None else conjecture.draw

    def draw(self, strategy: Any, label: Any = None) -> Any:
        return self._draw(strategy)

    @contextlib.contextmanager
    def span(self) -> Iterator[None]:
        """The draws inside as one span (a vector step's actions): the shrinker reorders
        the steps, and each step's actions, instead of every action of the episode at once."""
        conjecture = getattr(self.data, "conjecture_data", None)
        if conjecture is None:
            yield
            return
        conjecture.start_span(_STEP_SPAN)
        try:
            yield
        finally:
            conjecture.stop_span()


def search(
    body: Callable[[Any], None],
    *,
    max_examples: int,
    random_seed: int | None,
    budget: Budget | None = None,
    database: Any = None,
    name: str = "env",
    shrink: bool = True,
    generate: bool = True,
) -> Outcome:
    """Run ``body`` on up to ``max_examples`` Hypothesis examples; shrink the first failure
    (``shrink=False``: report it as found). ``generate=False``: only the failures stored in
    ``database`` are run (and shrunk): how a failure found unshrunk is shrunk later."""
    seen: list[PropertyError] = []
    count = [0]
    budget = budget or Budget(None)

    def episode(data: Any) -> None:
        count[0] += 1
        try:
            body(SilentDraws(data))
        except PropertyError as violation:
            seen[:] = [violation]
            budget.failed(violation)
            raise

    db = as_database(database, name)
    wanted = (Phase.explicit, Phase.reuse, Phase.generate if generate else None, Phase.shrink if shrink else None)
    phases = tuple(phase for phase in wanted if phase is not None and (db is not None or phase is not Phase.reuse))
    test = given(st.data())(episode)
    # the key of its failures in the database, also where a global seed (pytest --hypothesis-seed) would
    # switch the database off: refine shrinks a failure by finding it there again
    test._hypothesis_internal_database_key = b"spacealg.testing.search"  # type: ignore[attr-defined]
    if random_seed is not None:  # before settings: @seed alone would switch the database off
        test = hypothesis_seed(random_seed)(test)
    test = settings(
        max_examples=max_examples,
        deadline=None,
        database=db,
        derandomize=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        print_blob=False,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )(test)
    try:
        with no_local_constants(), global_rng(None):
            test()
    except OutOfTime:
        return Outcome(seen[0] if seen else None, True, count[0] - 1, True)
    except PropertyError as violation:
        return Outcome(violation, True, count[0] - budget.rejected, budget.rejected > 0)
    except Flaky:
        if not seen and budget.rejected:  # a replay rejected for lack of time: nothing failed
            return Outcome(None, True, count[0] - budget.rejected, True)
        if seen:
            return Outcome(seen[0], False, count[0] - budget.rejected, budget.rejected > 0)
        unexplained = PropertyError(
            "step-determinism",
            "Hypothesis could not replay an episode: the environment returned different "
            "agents or episode ends for the same seed and actions",
        )
        return Outcome(unexplained, False, count[0] - budget.rejected, budget.rejected > 0)
    except Unsatisfiable:  # the budget ran out before a single example completed
        pass
    except unittest.SkipTest:  # nothing ran: generate=False, and no failure was saved
        pass
    return Outcome(None, True, count[0] - budget.rejected, budget.rejected > 0)


@contextlib.contextmanager
def global_rng(seed: int | None) -> Iterator[None]:
    """Save the global ``random`` and ``numpy.random`` states, seed both with ``seed``
    (None: leave them as they are), and restore them afterwards."""
    saved = random.getstate(), np.random.get_state()
    if seed is not None:
        random.seed(seed)
        np.random.seed(seed)
    try:
        yield
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])


def describe_exception(error: BaseException) -> str:
    """``Type: message`` and the innermost frame (file, line, function) that raised it."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f"\n  raised at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


def snapshot(value: Any) -> Any:
    """A deep copy of an observation (environments may reuse their buffers): equal to
    ``copy.deepcopy(value)`` (the value itself where that fails). Arrays, dicts, lists and
    tuples are copied here, scalars kept (a float32 (2,) array 0.79 -> 0.24 us; with
    :func:`same`'s fast path, tests/test_check_env.py serially 87 -> 79 s)."""
    kind = type(value)
    if kind is np.ndarray and value.dtype.kind != "O":
        return value.copy(order="K")
    if kind in _SCALARS or isinstance(value, np.generic):
        return value
    if kind is dict:
        return {key: snapshot(item) for key, item in value.items()}
    if kind is tuple or kind is list:
        return kind(snapshot(item) for item in value)
    try:
        return copy.deepcopy(value)
    except Exception:  # an uncopyable observation: compare it as it is
        return value


_SCALARS = frozenset({bool, int, float, complex, str, bytes, type(None)})


def same(a: Any, b: Any) -> bool:
    """Structural equality of observations and rewards: arrays by dtype, shape and value
    (NaN equal to NaN), containers item by item; other array types (JAX, torch) as the
    numpy arrays they convert to. Never raises."""
    try:
        return _same(a, b)
    except Exception:
        return False


def _same(a: Any, b: Any) -> bool:
    if type(a) is not np.ndarray:
        a = _as_numpy(a)
    if type(b) is not np.ndarray:
        b = _as_numpy(b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind == "O":
            return all(_same(x, y) for x, y in zip(a.ravel(), b.ravel()))
        # equal entries first, NaN only where they differ: np.array_equal's NaN pass on every
        # array cost about a third of same()'s time in tests/test_check_env.py
        return bool((a == b).all()) or (a.dtype.kind in "fc" and bool(np.array_equal(a, b, equal_nan=True)))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "nodes") and hasattr(b, "nodes"):  # GraphInstance
        return all(_same(getattr(a, f), getattr(b, f)) for f in ("nodes", "edges", "edge_links"))
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):
        return bool(a == b or (math.isnan(a) and math.isnan(b)))
    return bool(type(a) is type(b) and a == b)


def changed_in_place(returned: Any, copied: Any) -> tuple[Any, ...] | None:
    """Where an observation handed out earlier (``returned``, the object itself) no longer
    equals the copy taken when it was handed out (``copied``, a :func:`snapshot`): the keys
    leading to the first part changed in place (``()``: the observation itself;
    ``("position",)``, ``(1,)``, ...), None where nothing changed. Laws: None when
    ``returned`` is a fresh value nobody touched; an array changed in place is found at any
    depth of dicts, tuples and lists (Gymnasium's Dict and Tuple observations), as is a key
    or item added to, removed from or replaced in a returned dict or list (a number or
    string entry by value); other objects are not compared. Never raises."""
    if isinstance(returned, np.ndarray):
        return None if same(returned, copied) else ()
    if isinstance(returned, Mapping):
        if not isinstance(copied, Mapping) or list(returned) != list(copied):
            return ()
        pairs: Iterable[tuple[Any, Any, Any]] = ((key, returned[key], copied[key]) for key in returned)
    elif isinstance(returned, (tuple, list)):
        if type(copied) is not type(returned) or len(copied) != len(returned):
            return ()
        pairs = ((i, a, b) for i, (a, b) in enumerate(zip(returned, copied)))
    elif type(returned) in _SCALARS or isinstance(returned, np.generic):
        return None if same(returned, copied) else ()
    else:
        return None
    for key, a, b in pairs:
        inner = changed_in_place(a, b)
        if inner is not None:
            return (key, *inner)
    return None


def _as_numpy(value: Any) -> Any:
    """A JAX or torch array (anything with ``__array__`` and a shape, not numpy's) as numpy."""
    if not isinstance(value, (np.ndarray, np.generic)) and hasattr(value, "__array__") and hasattr(value, "shape"):
        try:
            return np.asarray(value)
        except Exception:
            return value
    return value


def first_difference(first: list[Any], second: list[Any]) -> int | None:
    """The index of the first entry where two traces differ (None if they agree)."""
    for i, (a, b) in enumerate(zip(first, second)):
        if not same(a, b):
            return i
    if len(first) != len(second):
        return min(len(first), len(second))
    return None
