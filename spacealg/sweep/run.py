"""A sweep: many environments, each checked in a process of its own
(:mod:`spacealg.sweep.isolated`), on local worker threads or as Ray tasks, each finished
row appended to a results file (:mod:`spacealg.sweep.results`) the moment it ends.

Laws: a sweep started again with the same results file and options checks only the
environments without a row (a file of other options is refused, not mixed); the rows it
returns are in the order of the ids given, each id once, whatever order they were started
in (the longest first: :mod:`spacealg.sweep.schedule`) or finished; a row does not depend
on how the work was spread (each environment is one ``spacealg check`` process, seeded by
its options, whatever worker runs it or forks it: :mod:`spacealg.sweep.warm`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

from spacealg.sweep import results as results_file
from spacealg.sweep.isolated import Isolated, check_isolated
from spacealg.sweep.schedule import longest_first

__all__ = ["Progress", "finished_rows", "sweep", "versions"]


def sweep(
    ids: Sequence[str],
    argv: Sequence[str] = (),
    *,
    jobs: int | None = None,
    ray_address: str | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    results: str | None = None,
    estimates: Mapping[str, float] | None = None,
    progress: bool = True,
    warm: bool = True,
) -> list[dict[str, Any]]:
    """Check every id of ``ids`` with the ``spacealg check`` options ``argv`` (each in its
    own process, killed after ``timeout`` seconds; ``deadline``: the check's own limit, for
    the verdict's text) on ``jobs`` local workers (default: the CPUs) or as Ray tasks on
    ``ray_address``, the longest first by ``estimates`` (seconds by id, an earlier sweep's:
    :mod:`~spacealg.sweep.schedule`), each local process forked from a warm one (``warm``,
    where the platform forks: :mod:`~spacealg.sweep.warm`) or started afresh; append each
    row to ``results`` (skipping the ids it already holds) and return one row per id, in
    the order of ``ids``. ValueError when ``results`` holds rows of these ids checked with
    other options, or another sweep is writing it."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    with results_file.locked(results) if results else contextlib.nullcontext():
        return _sweep(ids, argv, jobs, ray_address, timeout, deadline, results, estimates or {}, progress, warm)


def _sweep(
    ids: Sequence[str], argv: Sequence[str], jobs: int | None, ray_address: str | None, timeout: float | None,
    deadline: float | None, results: str | None, estimates: Mapping[str, float], progress: bool, warm: bool,
) -> list[dict[str, Any]]:
    done = finished_rows(results, ids, argv) if results else {}
    order = list(dict.fromkeys(ids))
    todo = longest_first([env_id for env_id in order if env_id not in done], estimates)

    def record(row: dict[str, Any]) -> None:
        row.update(options=list(argv), versions=versions(row["env_id"]))
        if results:
            results_file.append(results, row)
        done[row["env_id"]] = row
        bar.update(row)

    with Progress(len(order), list(done.values()), progress and len(order) > 1) as bar:
        if todo and ray_address is not None:
            _on_ray(todo, argv, ray_address, timeout, deadline, record)
        elif todo:
            workers = jobs or min(os.cpu_count() or 1, len(todo))
            _locally(todo, Isolated(argv, timeout, deadline, warm=warm), workers, record)
    return [done[env_id] for env_id in order]


def finished_rows(path: str, ids: Sequence[str], argv: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The rows of ``path`` of the ids in ``ids`` (the last, where one is repeated);
    ValueError where such a row was checked with other options than ``argv``."""
    wanted = set(ids)
    rows = {row["env_id"]: row for row in results_file.read(path) if row["env_id"] in wanted}
    for row in rows.values():
        if row.get("options") != list(argv):
            raise ValueError(
                f"--results {path} holds {row['env_id']} checked with other options ({' '.join(row.get('options', []))}"
                f" instead of {' '.join(argv)}): use another results file, or the same options to resume"
            )
    return rows


def _locally(todo: list[str], isolated: Isolated, workers: int, record: Callable[[dict[str, Any]], None]) -> None:
    """Each id in a process of its own, ``workers`` at a time (threads wait on them), in
    the order of ``todo``."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="spacealg-sweep")
    try:
        pending = {pool.submit(isolated, env_id) for env_id in todo}
        while pending:
            ready, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in ready:
                record(future.result())
    finally:
        isolated.stop()  # interrupted: end the checks still running (nothing is written for them)
        pool.shutdown(wait=True, cancel_futures=True)
        isolated.close()


def _on_ray(
    todo: list[str], argv: Sequence[str], address: str, timeout: float | None, deadline: float | None,
    record: Callable[[dict[str, Any]], None],
) -> None:
    """Each id as a Ray task that runs its process on a node of the cluster, submitted in
    the order of ``todo``."""
    from spacealg.testing.fanout import connect_ray

    ray = connect_ray(address)
    remote = ray.remote(check_isolated)
    pending = [remote.remote(env_id, list(argv), timeout, deadline) for env_id in todo]
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                record(ray.get(ref))
    finally:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return dict(importlib.metadata.packages_distributions())


def _version(package: str) -> str | None:
    if package == "spacealg":
        from spacealg import __version__

        return __version__
    for name in _distributions().get(package, [package]):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            return importlib.metadata.version(name)
    return None


def versions(env_id: str) -> dict[str, str]:
    """The versions of the packages a row of ``env_id`` depends on: spacealg, Python,
    Hypothesis, the library that makes the environment (gymnasium for a registered id and
    the package of its entry point; the package of ``module:factory``; a JAX library with
    jax and jaxlib) — those installed, by their distributions' metadata (nothing imported)."""
    from spacealg.adapters.envs import is_jax_id

    head, colon, _ = env_id.partition(":")
    packages = ["spacealg", "hypothesis", "gymnasium"]
    if is_jax_id(env_id):
        from spacealg.adapters.envs import MAKERS

        packages += [MAKERS[head][0], "jax", "jaxlib"]
    elif colon:
        packages.append(head.partition(".")[0])
    else:
        packages.append(_entry_package(env_id))
    found = {name: _version(name) for name in dict.fromkeys(p for p in packages if p)}
    return {"python": sys.version.split()[0], **{name: v for name, v in found.items() if v}}


def _entry_package(env_id: str) -> str:
    with contextlib.suppress(Exception):
        import gymnasium

        entry = gymnasium.registry[env_id].entry_point
        if isinstance(entry, str):
            return entry.partition(":")[0].partition(".")[0]
    return ""


class Progress:
    """A tqdm bar over a sweep (where tqdm is installed and it is enabled): done (of them
    failed, not run), left, and tqdm's time to go; rows finished before (a resumed sweep)
    count as done from the start."""

    def __init__(self, total: int, finished: list[dict[str, Any]], enabled: bool) -> None:
        self.counts = {"done": 0, "failed": 0, "not run": 0}
        self.total = total
        self.bar: Any = None
        for row in finished:
            self._count(row)
        if enabled:
            with contextlib.suppress(ImportError):
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, initial=len(finished), unit="env", desc="sweep", file=sys.stderr)
                self._show()

    def _count(self, row: dict[str, Any]) -> None:
        self.counts["done"] += 1
        if row["status"] == "cannot make":
            self.counts["not run"] += 1
        elif row["status"] != "passed":
            self.counts["failed"] += 1

    def _show(self) -> None:
        c = self.counts
        self.bar.set_postfix_str(f"done {c['done']} (failed {c['failed']}, not run {c['not run']}), "
                                 f"left {self.total - c['done']}")

    def update(self, row: dict[str, Any]) -> None:
        self._count(row)
        if self.bar is not None:
            self._show()
            self.bar.update(1)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


