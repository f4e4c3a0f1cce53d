"""One environment checked in a process of its own: ``spacealg check ENV_ID --json``.

:class:`Isolated` runs the command as a person would (``python -m spacealg check ENV_ID
--json`` with the same options; forked from a warm process that has imported what it
needs: :mod:`~spacealg.sweep.warm`), so a sweep's verdict of an environment is the one
``spacealg check ENV_ID`` gives alone, and reads its JSON document into a *row*
(one line of a results file). What goes wrong outside the check costs that row only:

============  ====================================================================
status        verdict (the row's text for a person)
============  ====================================================================
passed        ``passed``
failed        ``failed`` (the broken properties are in ``broken``)
cannot make   ``not run: <why>`` (its constructor raised, a missing package, ...)
timeout       ``timed out after N s[, properties broken before it: a, b]``
crashed       ``crashed: SIGSEGV`` (a signal), ``crashed: exit status 3`` (no JSON)
error         ``error: <message>`` (the checker itself failed)
============  ====================================================================

A process that runs past ``timeout`` seconds is killed with its process group; the
properties it had found broken by then (reported by the check as it finds them, through
``--partial``) stay in the row. Law: the row's ``verdicts`` and ``status`` of a check
that ended are those of the JSON document of ``spacealg check ENV_ID --json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

from spacealg.sweep.warm import Forks, WarmProcessGoneError, kill_group

__all__ = ["EXIT_STATUS", "Isolated", "check_isolated", "shared_forks", "verdict_of", "words"]

EXIT_STATUS = {"passed": 0, "failed": 1}
"""A row's exit status by its status; 2 for every other (as ``spacealg check``'s)."""

#: Of a crashed process's stderr, the last characters kept in the row's message.
STDERR_TAIL = 2000


def words(env_id: str, argv: Sequence[str], partial: str) -> list[str]:
    """The words of the ``spacealg`` command that checks ``env_id`` with the options ``argv``."""
    return ["check", env_id, "--json", "--no-progress", "--partial", partial, *argv]


class Isolated:
    """Checks environments one process each (see the module docstring); ``timeout``: the
    seconds a process may run (None: no limit); ``deadline``: the limit the check sets
    itself (``spacealg check``'s 3 x budget + 10 s), named in a timeout's verdict. Each
    process is forked from a warm process that has imported what a check needs
    (:mod:`~spacealg.sweep.warm`): ``forks``, else one of its own where ``warm`` and the
    platform forks; else (and where the warm process is gone) it is a fresh ``python -m
    spacealg``. :meth:`stop` kills the processes still running (the
    sweep was interrupted), :meth:`close` also removes the scratch files. Safe to call from
    several threads at once."""

    def __init__(
        self, argv: Sequence[str], timeout: float | None, deadline: float | None, *, warm: bool = True,
        forks: Forks | None = None,
    ) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self.deadline = deadline
        self.scratch = tempfile.mkdtemp(prefix="spacealg-sweep-")
        self.running: set[subprocess.Popen[bytes]] = set()
        self.lock = threading.Lock()
        self.stopped = False
        self.own = forks is None and warm and hasattr(os, "fork")
        self.forks = Forks(_environment()) if self.own else forks

    def __call__(self, env_id: str) -> dict[str, Any]:
        started = time.perf_counter()
        with self.lock:
            if self.stopped:
                raise KeyboardInterrupt
            fd, partial = tempfile.mkstemp(suffix=".jsonl", dir=self.scratch)
            os.close(fd)
        out, err = partial[: -len(".jsonl")] + ".out", partial[: -len(".jsonl")] + ".err"
        command = words(env_id, self.argv, partial)
        try:
            returncode, killed = self._forked(command, out, err)
        except WarmProcessGoneError:
            if self.stopped:
                raise KeyboardInterrupt from None
            returncode, killed = self._spawned(command, out, err)
        seconds = time.perf_counter() - started
        found = _read_partial(partial)
        stdout, stderr = _read_text(out), _read_text(err)
        for path in (partial, out, err):
            with contextlib.suppress(OSError):
                os.remove(path)
        return row_of(env_id, returncode, stdout, stderr, seconds, found, timed_out=self.timeout if killed else None,
                      deadline=self.deadline)

    def _forked(self, command: list[str], out: str, err: str) -> tuple[int, bool]:
        if self.forks is None:
            raise WarmProcessGoneError("no warm process")
        return self.forks.run(command, out, err, self.timeout)

    def _spawned(self, command: list[str], out: str, err: str) -> tuple[int, bool]:
        """``python -m spacealg COMMAND`` as a fresh process (stdout, stderr into files)."""
        with self.lock, open(out, "wb") as stdout, open(err, "wb") as stderr:
            if self.stopped:
                raise KeyboardInterrupt
            process = subprocess.Popen(
                [sys.executable, "-m", "spacealg", *command], stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                env=_environment(), start_new_session=True,  # its own process group: a timeout kills it all
            )
            self.running.add(process)
        try:
            process.wait(timeout=self.timeout)
            killed = False
        except subprocess.TimeoutExpired:
            kill_group(process.pid)
            process.wait()
            killed = True
        finally:
            with self.lock:
                self.running.discard(process)
        return process.returncode, killed

    def stop(self) -> None:
        """Kill every process still running; later calls raise KeyboardInterrupt."""
        with self.lock:
            self.stopped = True
            for process in self.running:
                kill_group(process.pid)
        if self.own and self.forks is not None:
            self.forks.close()

    def close(self) -> None:
        """:meth:`stop`, and remove the scratch directory (once no call is running)."""
        self.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)


def check_isolated(env_id: str, argv: Sequence[str], timeout: float | None, deadline: float | None) -> dict[str, Any]:
    """The row of ``env_id`` checked in a process of its own (a top-level function: a Ray
    task runs it on a node of the cluster), forked from this process's warm process
    (:func:`shared_forks`: a Ray worker runs many tasks)."""
    isolated = Isolated(argv, timeout, deadline, forks=shared_forks())
    try:
        return isolated(env_id)
    finally:
        isolated.close()


_SHARED: dict[str, Forks] = {}
_SHARED_LOCK = threading.Lock()


def shared_forks() -> Forks | None:
    """This process's warm process for its working directory and ``sys.path``, started on the
    first call (None where the platform does not fork); it ends with this process."""
    if not hasattr(os, "fork"):
        return None
    environment = _environment()
    key = json.dumps([os.getcwd(), environment["PYTHONPATH"]])
    with _SHARED_LOCK:
        forks = _SHARED.get(key)
        if forks is None or forks.gone:
            forks = _SHARED[key] = Forks(environment)
        return forks


def _environment() -> dict[str, str]:
    """This process's environment, with ``PYTHONPATH`` its working directory and
    ``sys.path``: the check imports ``module:factory`` targets as this process would."""
    paths = [p for p in [os.getcwd(), *sys.path] if p and os.path.isdir(p)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def _read_text(path: str) -> str:
    with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()
    return ""


def _read_partial(path: str) -> list[dict[str, Any]]:
    """The broken properties the check reported as it found them (complete lines only)."""
    entries = []
    with contextlib.suppress(OSError), open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.endswith("\n"):
                with contextlib.suppress(ValueError):
                    entries.append(json.loads(line))
    return entries


def _document(out: str) -> dict[str, Any] | None:
    try:
        document = json.loads(out)
    except ValueError:
        return None
    return document if isinstance(document, dict) and "status" in document else None


def row_of(
    env_id: str,
    returncode: int,
    out: str,
    err: str,
    seconds: float,
    found: list[dict[str, Any]],
    *,
    timed_out: float | None,
    deadline: float | None,
) -> dict[str, Any]:
    """The row of a finished process (see the module docstring): ``found``, the broken
    properties it reported before it ended; ``timed_out``: the seconds after which it was
    killed (None: it ended by itself)."""
    document = None if timed_out is not None else _document(out)
    row: dict[str, Any] = {"env_id": env_id}
    if document is not None and document["status"] in ("passed", "failed"):
        row.update({k: v for k, v in document.items() if k not in ("command", "env_id", "exit_status")})
    elif timed_out is not None or (document is not None and document.get("reason") == "timeout"):
        limit = timed_out if timed_out is not None else deadline
        row.update(status="timeout", broken=found, verdicts={entry["property"]: "broken" for entry in found},
                   message=f"the process did not end within {limit:.0f} s" if timed_out is not None
                   else document["message"] if document else "")
        row["limit_seconds"] = limit
    elif document is not None:
        reason = document.get("reason", "error")
        row.update(status="cannot make" if reason == "cannot make" else "error", message=document["message"])
    else:
        how = f"exit status {returncode}" if returncode >= 0 else f"signal {-returncode}"
        with contextlib.suppress(ValueError):
            how = signal.Signals(-returncode).name if returncode < 0 else how
        row.update(status="crashed", message=f"crashed: {how}\n{err[-STDERR_TAIL:]}".rstrip(), crash=how,
                   broken=found, verdicts={entry["property"]: "broken" for entry in found})
    row["exit_status"] = EXIT_STATUS.get(row["status"], 2)
    # seconds: the process's, from its fork (imports done before) or start; check_seconds: the check's own (a passed one
    # reports it); compile_seconds: a JAX check's compilation and probes; steps/s: of the
    # search after compiling, over the check's own time, or the process's where it gives none
    row["check_seconds"] = row.pop("seconds", None)
    row["seconds"] = round(seconds, 3)
    row["compile_seconds"] = row.pop("setup_seconds", None)
    spent = (row["check_seconds"] or seconds) - (row["compile_seconds"] or 0.0)
    row["steps_per_second"] = round(row["steps"] / spent, 1) if row.get("steps") and spent > 0 else None
    row["verdict"] = verdict_of(row)
    return row


def verdict_of(row: dict[str, Any]) -> str:
    """The row's verdict for a person (see the module docstring)."""
    status = row["status"]
    before = ", ".join(entry["property"] for entry in row.get("broken", []))
    if status == "timeout":
        limit = row.get("limit_seconds")
        after = f" after {limit:.0f} s" if limit else ""
        return f"timed out{after}" + (f", properties broken before it: {before}" if before else "")
    if status == "crashed":
        return f"crashed: {row.get('crash', '')}" + (f", properties broken before it: {before}" if before else "")
    if status == "cannot make":
        return "not run: " + _first_line(row.get("message", ""))
    if status == "error":
        return "error: " + _first_line(row.get("message", ""))
    return status


def _first_line(text: str, width: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"
