"""Checking many environments at once: worker processes on this machine, or a Ray cluster.

:func:`check_many` runs :func:`~spacealg.testing.check` on every target (ids,
``module:factory`` paths, and globs over Gymnasium's registry such as ``"CartPole-*"`` or
``"*NoFrameskip-v4"``) in parallel worker processes (``concurrent.futures``), with a
progress bar where ``tqdm`` is installed, and returns one :class:`Outcome` per target in
the order given. With ``ray_address`` (``"auto"``, ``"local"`` or ``"ray://host:10001"``)
the same work runs as Ray tasks on that cluster instead (Ray is an optional extra, imported
only then). Pass the same ``database`` directory (or a shared Hypothesis database) to every
machine and the failures found anywhere replay first everywhere.

Law: the outcome of a target does not depend on how the work is spread (each check is
seeded by ``random_seed``, independent of the worker that runs it).
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Outcome",
    "check_many",
    "check_one",
    "connect_ray",
    "deadline_of",
    "exit_status",
    "expand",
    "outcome_of",
    "summary_table",
    "within",
]


@dataclass
class Outcome:
    """The result of checking one target: ``status`` is "passed", "failed" (a property
    broke), "cannot make" (the environment could not be built) or "error"."""

    target: str
    status: str
    seconds: float
    examples: int = 0
    steps: int = 0
    episodes: int = 0
    property: str = ""
    message: str = ""
    reproduction: str = ""
    warnings: tuple[str, ...] = ()
    out_of_time: bool = False
    document: dict[str, Any] = field(default_factory=dict)  # verdicts, broken, not checked, warnings


def exit_status(outcome: Outcome) -> int:
    """0 passed, 1 a property broke, 2 cannot make, timeout (the environment hangs past the
    time budget) or an error of the checker itself."""
    return {"passed": 0, "failed": 1}.get(outcome.status, 2)


GLOB = frozenset("*?[")


def expand(patterns: Iterable[str]) -> list[str]:
    """Targets with globs (``*``, ``?``, ``[``) expanded, duplicates dropped, plain ids and
    ``module:factory`` paths kept:

    - over Gymnasium's registry (``"CartPole-*"``, ``"ALE/*"``), in registry order;
    - over a JAX library's registered names (``"gymnax:*"``, ``"jumanji:Snake*"``; the
      listing is :func:`spacealg.adapters.envs.jax_ids`), in the library's order;
      ModuleNotFoundError where the library is missing;
    - over module paths (``"pettingzoo.classic.*_v?:env"``, ``"my_pkg.envs.*:make"``): the
      modules and packages found under the literal head (``pkgutil``, importing only the
      packages the pattern descends into), sorted, each with the given attribute.

    A pattern that matches nothing is a ValueError naming it."""
    from spacealg.adapters.envs import JAX_PREFIXES

    out: list[str] = []
    for pattern in patterns:
        head, colon, tail = pattern.partition(":")
        if not GLOB & set(pattern):
            matched = [pattern]
        elif not colon:
            import gymnasium

            matched = [env_id for env_id in gymnasium.registry if fnmatch.fnmatchcase(env_id, pattern)]
        elif head in JAX_PREFIXES:
            from spacealg.adapters.envs import jax_ids

            matched = [env_id for env_id in jax_ids(head) if fnmatch.fnmatchcase(env_id, pattern)]
        elif GLOB & set(head):
            matched = [f"{module}:{tail}" for module in _modules(head)]
        else:
            matched = [pattern]  # a glob in the attribute only: Gymnasium's "module:EnvId" is literal
        if not matched:
            raise ValueError(f"the pattern {pattern!r} matches no registered environment id")
        out += matched
    return list(dict.fromkeys(out))


def _modules(pattern: str) -> list[str]:
    """The importable module paths matching ``pattern`` (dotted, a glob per part)."""
    import pkgutil

    parts = pattern.split(".")
    literal = 0
    while literal < len(parts) and not GLOB & set(parts[literal]):
        literal += 1
    found = [".".join(parts[:literal])] if literal else [""]
    for part in parts[literal:]:
        below: list[str] = []
        for parent in found:
            paths = _package_paths(parent) if parent else None
            if parent and not paths:
                continue
            below += [f"{parent}.{m.name}" if parent else m.name for m in pkgutil.iter_modules(paths)
                      if fnmatch.fnmatchcase(m.name, part)]
        found = sorted(below)
    return found


def _package_paths(name: str) -> list[str]:
    """Where the submodules of package ``name`` are (its parents imported, not itself);
    none for a plain module or a package whose parents cannot be imported."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except Exception:  # a parent package that raises on import (a missing dependency)
        return []
    return list(spec.submodule_search_locations or []) if spec is not None else []


def _buildable(make: Callable[[], Any]) -> BaseException | None:
    try:
        env = make()
    except (Exception, SystemExit) as error:
        return error
    with contextlib.suppress(Exception):
        env.close()
    return None


def check_one(target: str, options: dict[str, Any]) -> Outcome:
    """Check one target with :func:`~spacealg.testing.check` (a top-level function, so that
    worker processes can run it)."""
    from spacealg.testing.engine.resolve import resolve
    from spacealg.testing.suite import check

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return outcome_of(target, lambda: resolve(target).make(), lambda: check(target, **options))


def outcome_of(target: str, make: Callable[[], Any], run: Callable[[], Any]) -> Outcome:
    """The :class:`Outcome` of ``run()`` (a check of ``target``), after making sure
    ``make()`` builds the environment: "cannot make" where it raises (``sys.exit()``
    included), "failed" with every broken property, "error" for any other exception."""
    from spacealg.testing.engine.errors import EnvCheckError
    from spacealg.testing.engine.verdicts import error_document, report_document

    started = time.perf_counter()
    problem = _buildable(make)
    if problem is not None:
        what = f"sys.exit({problem.code!r})" if isinstance(problem, SystemExit) else f"{type(problem).__name__}"
        return Outcome(target, "cannot make", time.perf_counter() - started, message=f"{what}: {problem}")
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            report = run()
    except EnvCheckError as error:
        return Outcome(
            target,
            "failed",
            time.perf_counter() - started,
            examples=error.examples,
            steps=error.steps,
            episodes=error.episodes,
            property=error.property,
            message=str(error),
            reproduction=error.reproduction(),
            warnings=tuple(error.warnings),
            document=error_document(error),
        )
    except (Exception, SystemExit) as error:
        return Outcome(target, "error", time.perf_counter() - started, message=f"{type(error).__name__}: {error}")
    return Outcome(
        target,
        "passed",
        time.perf_counter() - started,
        report.examples,
        report.steps,
        report.episodes,
        warnings=report.warnings,
        out_of_time=report.out_of_time,
        document=report_document(report),
    )


def timed_out(target: str, seconds: float) -> Outcome:
    """The outcome of a check that did not end within ``seconds`` (a step that blocks)."""
    return Outcome(
        target,
        "timeout",
        seconds,
        message=f"the check did not end within {seconds:.0f} s: the environment blocks (a reset or step that "
        "never returns?)",
    )


def within(seconds: float | None, run: Callable[[], Outcome], target: str) -> Outcome:
    """``run()`` in a daemon thread, given up after ``seconds`` (None: waited for)."""
    if seconds is None:
        return run()
    import threading

    box: list[Outcome] = []
    thread = threading.Thread(target=lambda: box.append(run()), daemon=True)
    thread.start()
    thread.join(seconds)
    return box[0] if box else timed_out(target, seconds)


MARGIN = 10.0
"""Seconds a check may outlive its work's deadline (building and closing environments, the
report) before it is given up as blocked."""


def deadline_of(options: dict[str, Any]) -> float | None:
    """The hard limit on one check under a time budget: the check's own work deadline
    (:data:`~spacealg.testing.engine.driver.WORK_FACTOR` x the budget: past it, episodes stop
    between steps and what broke is reported) and :data:`MARGIN`. A check that outlives it
    is in a call that does not return: "the environment blocks". None without a budget."""
    from spacealg.testing.engine.driver import WORK_FACTOR

    budget = options.get("budget")
    return None if not budget else WORK_FACTOR * float(budget) + MARGIN


def _progress(total: int, enabled: bool) -> Any:
    if enabled:
        try:
            from tqdm.auto import tqdm

            return tqdm(total=total, unit="env", file=sys.stderr)
        except ImportError:
            pass
    return None


Recorder = Callable[[str, Outcome], None]
"""How a fan-out hands on each target's outcome as it ends."""


def connect_ray(address: str) -> Any:
    """The ``ray`` module, connected to the cluster at ``address`` (``"local"``: a local
    instance) unless already connected, its workers importing ``module:factory`` targets as
    this process does (its working directory and ``sys.path`` on their ``PYTHONPATH``);
    ModuleNotFoundError naming the extra when Ray is missing."""
    try:
        import ray
    except ImportError as error:
        raise ModuleNotFoundError("--ray-address needs Ray: pip install 'spacealg[ray]'", name="ray") from error
    if not ray.is_initialized():
        # workers import module:factory targets as this process does: from its sys.path
        paths = [p for p in [os.getcwd(), *sys.path] if p and os.path.isdir(p)]
        ray.init(
            address=None if address == "local" else address,
            ignore_reinit_error=True,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}},
        )
    return ray


def _on_ray(
    targets: Sequence[str], options: dict[str, Any], address: str, worker: Callable[..., Outcome], record: Recorder
) -> None:
    """Each target's check run by ``worker`` on Ray, its outcome given to ``record`` as it ends."""
    ray = connect_ray(address)
    remote = ray.remote(worker)
    pending = {remote.remote(t, options): t for t in targets}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            record(pending.pop(ref), ray.get(ref))


def check_many(
    targets: Iterable[str],
    *,
    jobs: int | None = None,
    ray_address: str | None = None,
    progress: bool = True,
    on_result: Callable[[Outcome], None] | None = None,
    worker: Callable[[str, dict[str, Any]], Outcome] = check_one,
    **options: Any,
) -> list[Outcome]:
    """Check every target (see the module docstring) with ``options`` of
    :func:`~spacealg.testing.check`; ``jobs``: worker processes (default: the CPU count,
    at most the number of targets; 1 runs in this process); ``worker(target, options)``:
    the check of one target (a picklable callable; default :func:`check_one`). Under a time
    budget a check that does not end (an environment that blocks) is given up after
    :func:`deadline_of` seconds as a "timeout" outcome, its worker process terminated."""
    names = expand(targets)
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    bar = _progress(len(names), progress and len(names) > 1)
    done: dict[str, Outcome] = {}
    limit = deadline_of(options)

    def record(name: str, outcome: Outcome) -> None:
        done[name] = outcome
        if on_result is not None:
            on_result(outcome)
        if bar is not None:
            bar.update(1)

    try:
        if ray_address is not None:
            _on_ray(names, options, ray_address, worker, record)
        elif (jobs or min(os.cpu_count() or 1, len(names))) <= 1 or len(names) == 1:
            for name in names:
                record(name, within(limit, lambda name=name: worker(name, options), name))  # type: ignore[misc]
        else:
            _in_processes(names, options, jobs or min(os.cpu_count() or 1, len(names)), limit, worker, record)
    finally:
        if bar is not None:
            bar.close()
    return [done[name] for name in names]


def _in_processes(
    names: list[str],
    options: dict[str, Any],
    workers: int,
    limit: float | None,
    worker: Callable[[str, dict[str, Any]], Outcome],
    record: Recorder,
) -> None:
    from concurrent.futures import FIRST_COMPLETED, wait

    pool = ProcessPoolExecutor(max_workers=workers)
    futures = {pool.submit(worker, name, options): name for name in names}
    started: dict[Any, float] = {}
    try:
        pending = set(futures)
        while pending:
            ready, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in ready:
                record(futures[future], future.result())
            now = time.perf_counter()
            for future in pending:
                if future.running():
                    started.setdefault(future, now)
            late = {f for f in pending if limit is not None and f in started and now - started[f] > limit}
            for future in late:
                record(futures[future], timed_out(futures[future], limit))  # type: ignore[arg-type]
            pending -= late
            if late:  # a blocked worker never returns: end the pool, start the rest anew
                _terminate(pool)
                rest = {futures[f] for f in pending}
                pool = ProcessPoolExecutor(max_workers=workers)
                futures = {pool.submit(worker, name, options): name for name in rest}
                pending, started = set(futures), {}
    finally:
        _terminate(pool)


def _terminate(pool: ProcessPoolExecutor) -> None:
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()


def summary_table(outcomes: Sequence[Outcome]) -> str:
    """A plain-text table: target, result, examples, steps, episodes, seconds, property."""
    header = ("environment", "result", "examples", "steps", "episodes", "seconds", "property / reason")
    rows = [
        (
            o.target,
            o.status + (" (budget)" if o.out_of_time else ""),
            str(o.examples),
            f"{o.steps:,}",
            f"{o.episodes:,}",
            f"{o.seconds:.1f}",
            o.property or (o.message.splitlines()[0][:60] if o.status != "passed" and o.message else ""),
        )
        for o in outcomes
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    statuses = ("passed", "failed", "cannot make", "timeout", "crashed", "error")  # crashed: a sweep's process
    counts = {s: sum(o.status == s for o in outcomes) for s in statuses}
    lines.append("")
    lines.append(", ".join(f"{v} {k}" for k, v in counts.items() if v) + f" of {len(outcomes)}")
    return "\n".join(lines)
