"""The Hypothesis search behind the checkers: draw episodes, catch the first broken
property, let Hypothesis shrink it, and compare replayed trajectories.

An episode body is a function of ``hypothesis.strategies.data()`` that raises
:class:`~spacealg.testing.errors.PropertyError`. :func:`search` runs it under fixed settings
(quiet, no example database, no deadline) and returns the shrunk violation, or the last
one seen when the failure did not replay (a non-deterministic environment).
"""

from __future__ import annotations

import copy
import math
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from spacealg.testing.errors import PropertyError

__all__ = ["SEEDS", "Outcome", "describe_exception", "first_difference", "same", "search", "snapshot"]

SEEDS = st.integers(0, 2**32 - 1)
"""Reset seeds: any 32-bit seed, shrinking toward 0."""


@dataclass
class Outcome:
    """What a search found: the violation (None if none), whether it replayed, and how many
    examples (episodes with their replays) ran."""

    violation: PropertyError | None
    reproducible: bool
    examples: int


def search(body: Callable[[Any], None], *, max_examples: int, random_seed: int | None) -> Outcome:
    """Run ``body`` on up to ``max_examples`` Hypothesis examples; shrink the first failure."""
    seen: list[PropertyError] = []
    count = [0]

    def episode(data: Any) -> None:
        count[0] += 1
        try:
            body(data)
        except PropertyError as violation:
            seen[:] = [violation]
            raise

    test = given(st.data())(episode)
    test = settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        print_blob=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )(test)
    if random_seed is not None:
        test = hypothesis_seed(random_seed)(test)
    try:
        test()
    except PropertyError as violation:
        return Outcome(violation, True, count[0])
    except Flaky:
        if seen:
            return Outcome(seen[0], False, count[0])
        unexplained = PropertyError(
            "step-determinism",
            "Hypothesis could not replay an episode: the environment returned different "
            "agents or episode ends for the same seed and actions",
        )
        return Outcome(unexplained, False, count[0])
    return Outcome(None, True, count[0])


def describe_exception(error: BaseException) -> str:
    """``Type: message`` and the innermost frame (file, line, function) that raised it."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f"\n  raised at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


def snapshot(value: Any) -> Any:
    """A deep copy of an observation (environments may reuse their buffers)."""
    try:
        return copy.deepcopy(value)
    except Exception:  # an uncopyable observation: compare it as it is
        return value


def same(a: Any, b: Any) -> bool:
    """Structural equality of observations and rewards: arrays by dtype, shape and value
    (NaN equal to NaN), containers item by item. Never raises."""
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
                return False
            if a.shape != b.shape or a.dtype != b.dtype:
                return False
            if a.dtype.kind == "O":
                return all(same(x, y) for x, y in zip(a.ravel(), b.ravel()))
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if hasattr(a, "nodes") and hasattr(b, "nodes"):  # GraphInstance
            return all(same(getattr(a, f), getattr(b, f)) for f in ("nodes", "edges", "edge_links"))
        if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):
            return bool(a == b or (math.isnan(a) and math.isnan(b)))
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def first_difference(first: list[Any], second: list[Any]) -> int | None:
    """The index of the first entry where two traces differ (None if they agree)."""
    for i, (a, b) in enumerate(zip(first, second)):
        if not same(a, b):
            return i
    if len(first) != len(second):
        return min(len(first), len(second))
    return None
