"""The order a sweep starts its environments in: the longest first.

On W workers a sweep ends when its last environment does; an environment started last
that runs long leaves the other workers idle while it ends. Started longest first (the
LPT rule), the sweep ends at most a third later than the best order could, and the long
ones overlap the many short ones. How long an environment takes is *estimated*: the seconds
of its row in an earlier sweep's results where one exists, else :func:`static_seconds` by
the form of its id (a JAX environment compiles before it runs).

Laws: :func:`longest_first` returns a permutation of its ids; an id estimated longer starts
no later than one estimated shorter; ids estimated alike keep the order given. The order
changes when rows are made, never what they hold, and a sweep's report is ordered by id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["JAX_SECONDS", "OTHER_SECONDS", "longest_first", "seconds_of", "static_seconds"]

JAX_SECONDS = 60.0
"""The estimate of a JAX environment without an earlier row (compiling takes most of it:
10-90 s on the development machine in docs/results/jax_sweep.jsonl)."""

OTHER_SECONDS = 5.0
"""The estimate of any other environment without an earlier row."""


def static_seconds(env_id: str) -> float:
    """The seconds an environment is estimated to take from the form of its id alone."""
    from spacealg.adapters.envs import is_jax_id

    return JAX_SECONDS if is_jax_id(env_id) else OTHER_SECONDS


def seconds_of(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The seconds of each id's last row that has them (an earlier sweep's results)."""
    known: dict[str, float] = {}
    for row in rows:
        seconds = row.get("seconds")
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
            known[row["env_id"]] = float(seconds)
    return known


def longest_first(ids: Sequence[str], known: Mapping[str, float]) -> list[str]:
    """``ids`` in the order to start them: by estimate (``known`` seconds, else
    :func:`static_seconds`), longest first, ties in the order given."""
    estimate = {env_id: known[env_id] if env_id in known else static_seconds(env_id) for env_id in ids}
    return sorted(ids, key=lambda env_id: -estimate[env_id])
