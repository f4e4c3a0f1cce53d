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
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

__all__ = ["Outcome", "check_many", "check_one", "exit_status", "expand", "summary_table"]


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


def exit_status(outcome: Outcome) -> int:
    """0 passed, 1 a property broke, 2 cannot make (or an error of the checker itself)."""
    return {"passed": 0, "failed": 1}.get(outcome.status, 2)


def expand(patterns: Iterable[str]) -> list[str]:
    """Targets with globs (``*``, ``?``, ``[``) over Gymnasium's registry expanded, in
    registry order, duplicates dropped; ``module:factory`` paths and plain ids kept."""
    out: list[str] = []
    for pattern in patterns:
        if ":" not in pattern and any(c in pattern for c in "*?["):
            import gymnasium

            matched = [env_id for env_id in gymnasium.registry if fnmatch.fnmatchcase(env_id, pattern)]
            if not matched:
                raise ValueError(f"the pattern {pattern!r} matches no registered environment id")
            out += matched
        else:
            out.append(pattern)
    return list(dict.fromkeys(out))


def _buildable(target: str) -> BaseException | None:
    from spacealg.testing.resolve import resolve

    try:
        env = resolve(target).make()
    except Exception as error:
        return error
    with contextlib.suppress(Exception):
        env.close()
    return None


def check_one(target: str, options: dict[str, Any]) -> Outcome:
    """Check one target (a top-level function, so that worker processes can run it)."""
    from spacealg.testing import EnvCheckError, check

    started = time.perf_counter()
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    problem = _buildable(target)
    if problem is not None:
        return Outcome(
            target, "cannot make", time.perf_counter() - started, message=f"{type(problem).__name__}: {problem}"
        )
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            report = check(target, **options)
    except EnvCheckError as error:
        return Outcome(
            target,
            "failed",
            time.perf_counter() - started,
            examples=error.examples,
            property=error.property,
            message=str(error),
            reproduction=error.reproduction(),
        )
    except Exception as error:
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
    )


def _progress(total: int, enabled: bool) -> Any:
    if enabled:
        try:
            from tqdm.auto import tqdm

            return tqdm(total=total, unit="env", file=sys.stderr)
        except ImportError:
            pass
    return None


def _on_ray(targets: Sequence[str], options: dict[str, Any], address: str, bar: Any) -> dict[str, Outcome]:
    try:
        import ray
    except ImportError as error:  # pragma: no cover - depends on the extra
        raise ImportError("--ray-address needs Ray: pip install 'spacealg[ray]'") from error
    if not ray.is_initialized():
        # workers import module:factory targets as this process does: from its sys.path
        paths = [p for p in [os.getcwd(), *sys.path] if p and os.path.isdir(p)]
        ray.init(
            address=None if address == "local" else address,
            ignore_reinit_error=True,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}},
        )
    remote = ray.remote(check_one)
    pending = {remote.remote(t, options): t for t in targets}
    done: dict[str, Outcome] = {}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            outcome = ray.get(ref)
            done[pending.pop(ref)] = outcome
            if bar is not None:
                bar.update(1)
    return done


def check_many(
    targets: Iterable[str],
    *,
    jobs: int | None = None,
    ray_address: str | None = None,
    progress: bool = True,
    on_result: Callable[[Outcome], None] | None = None,
    **options: Any,
) -> list[Outcome]:
    """Check every target (see the module docstring) with ``options`` of
    :func:`~spacealg.testing.check`; ``jobs``: worker processes (default: the CPU count,
    at most the number of targets; 1 runs in this process)."""
    names = expand(targets)
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    bar = _progress(len(names), progress and len(names) > 1)
    done: dict[str, Outcome] = {}
    try:
        if ray_address is not None:
            done = _on_ray(names, options, ray_address, bar)
        elif (jobs or min(os.cpu_count() or 1, len(names))) <= 1 or len(names) == 1:
            for name in names:
                done[name] = check_one(name, options)
                if on_result is not None:
                    on_result(done[name])
                if bar is not None:
                    bar.update(1)
        else:
            workers = jobs or min(os.cpu_count() or 1, len(names))
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(check_one, name, options): name for name in names}
                for future in as_completed(futures):
                    outcome = future.result()
                    done[futures[future]] = outcome
                    if on_result is not None:
                        on_result(outcome)
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return [done[name] for name in names]


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
    counts = {s: sum(o.status == s for o in outcomes) for s in ("passed", "failed", "cannot make", "error")}
    lines.append("")
    lines.append(", ".join(f"{v} {k}" for k, v in counts.items() if v) + f" of {len(outcomes)}")
    return "\n".join(lines)
