"""Processes forked from one warm process: the start-up of a sweep's checks paid once.

A fresh ``python -m spacealg check ENV_ID`` spends most of a short check importing
spacealg, Hypothesis, Gymnasium and NumPy. :class:`Forks` starts one *warm* process that
imports them (:data:`PRELOAD`; never JAX or torch, :data:`THREADED`: a process that forks
must not have started their threads) and then, for each command it is given, forks a child that runs
``spacealg`` exactly as ``python -m spacealg`` does (``runpy``), in a session of its own
(its process group is what a timeout kills), its stdout and stderr in files. Every child is
forked from the same warm state, never from an earlier check, so one check cannot leak into
the next; a child that crashes, hangs or lacks a package costs that child only. The warm
process ends, killing the children still running, when the sweep closes it or its stdin
ends (the sweep itself was killed).

Laws: a command's exit status, stdout and stderr are those of ``python -m spacealg`` with
the same words, working directory and environment; the warm process holds no state of
one command when it forks the next.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import TextIO

__all__ = ["PRELOAD", "THREADED", "Forks", "WarmProcessGoneError", "kill_group", "serve"]

PRELOAD = ("numpy", "hypothesis", "gymnasium", "spacealg.testing", "spacealg.cli.check")
"""What the warm process imports before it forks (what every ``spacealg check`` imports)."""

THREADED = ("jax", "torch", "tensorflow")
"""Libraries whose import starts threads that a fork would copy mid-work (JAX warns, and a
child can deadlock): a warm process that finds one imported forks nothing and ends, and
the sweep starts each check afresh."""

#: The warm process's own command: it serves requests on stdin, answers on stdout.
SERVE = "from spacealg.sweep.warm import serve; serve()"


class WarmProcessGoneError(RuntimeError):
    """The warm process ended before a command it was given did (it was killed)."""


class Forks:
    """One warm process (see the module docstring), started at once so that its imports
    overlap the sweep's own start; :meth:`run` is safe to call from several threads."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, start_new_session=True,
        )
        self.keys = itertools.count()
        self.pids: dict[int, int] = {}
        self.ended: dict[int, int] = {}
        self.gone = False
        self.changed = threading.Condition()
        threading.Thread(target=self._listen, name="spacealg-sweep-warm", daemon=True).start()

    def _listen(self) -> None:
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                key, what, number = line.decode().split()
                with self.changed:
                    (self.pids if what == "started" else self.ended)[int(key)] = int(number)
                    self.changed.notify_all()
        finally:  # the warm process ended (or said what it cannot say): no answer will come
            with self.changed:
                self.gone = True
                self.changed.notify_all()

    def run(self, words: Sequence[str], out: str, err: str, timeout: float | None) -> tuple[int, bool]:
        """Run ``spacealg WORDS`` in a child (stdout to the file ``out``, stderr to ``err``),
        killed with its process group after ``timeout`` seconds from its fork: its exit status
        (minus the number of the signal that ended it, as ``subprocess``'s), and whether the
        timeout killed it. WarmProcessGoneError when the
        warm process ended first."""
        request = json.dumps({"words": list(words), "out": out, "err": err}) + "\n"
        with self.changed:
            key = next(self.keys)
            if self.gone or self.process.stdin is None:
                raise WarmProcessGoneError("the warm process has ended")
            try:
                self.process.stdin.write(f"{key} {request}".encode())
                self.process.stdin.flush()
            except (BrokenPipeError, ValueError):
                raise WarmProcessGoneError("the warm process has ended") from None
            self.changed.wait_for(lambda: key in self.pids or self.gone)
            if key not in self.pids:
                raise WarmProcessGoneError("the warm process has ended")
            pid = self.pids.pop(key)
            killed = not self.changed.wait_for(lambda: key in self.ended or self.gone, timeout)
        if killed:
            kill_group(pid)
        with self.changed:
            self.changed.wait_for(lambda: key in self.ended or self.gone)
            if key not in self.ended:
                raise WarmProcessGoneError("the warm process ended while it ran a command")
            return self.ended.pop(key), killed

    def close(self) -> None:
        """End the warm process, and with it the children still running."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def kill_group(pid: int) -> None:
    """SIGKILL the process group of ``pid`` (a session leader), or ``pid`` alone while it has
    not yet made its own."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)
            return


# --- the warm process ------------------------------------------------------------------------


def serve() -> None:
    """The warm process: import :data:`PRELOAD`, then fork one child per request line
    (``KEY {"words": [...], "out": PATH, "err": PATH}``) and answer ``KEY started PID`` and
    ``KEY ended STATUS``; at the end of stdin, kill the children still running and exit."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # what the imports print does not mix with the answers
    for name in PRELOAD:
        with contextlib.suppress(Exception):  # a child imports what failed here, and says so
            __import__(name)
    if any(name in sys.modules for name in THREADED):  # imported by a plugin or sitecustomize
        return
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    children: dict[int, int] = {}
    with contextlib.suppress(BrokenPipeError):  # the sweep is gone
        _serve(answers, wake_r, wake_w, devnull, children)
    for pid in children:
        kill_group(pid)


def _serve(answers: TextIO, wake_r: int, wake_w: int, devnull: int, children: dict[int, int]) -> None:
    """Fork and answer until stdin ends (``children``: the pids still running, by key)."""
    pending = b""
    while True:
        ready, _, _ = select.select([0, wake_r], [], [], 1.0)
        if wake_r in ready:
            os.read(wake_r, 4096)
        for pid, status in _reaped():
            if pid in children:
                answers.write(f"{children.pop(pid)} ended {os.waitstatus_to_exitcode(status)}\n")
        if 0 not in ready:
            continue
        data = os.read(0, 65536)
        if not data:
            break
        *lines, pending = (pending + data).split(b"\n")
        for line in lines:
            key, _, request = line.decode().partition(" ")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(json.loads(request), closing=(0, answers.fileno(), wake_r, wake_w, devnull))
            children[pid] = int(key)
            answers.write(f"{key} started {pid}\n")


def _reaped() -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return out
        if pid == 0:
            return out
        out.append((pid, status))


def _child(request: dict[str, object], closing: tuple[int, ...]) -> None:
    """In the forked child: run ``python -m spacealg WORDS`` as that command would, then exit."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd, path, flags in ((1, request["out"], os.O_WRONLY), (2, request["err"], os.O_WRONLY)):
            target = os.open(str(path), flags | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        for fd in closing:
            os.close(fd)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        import runpy

        sys.argv = ["spacealg", *request["words"]]  # type: ignore[misc]
        try:
            runpy.run_module("spacealg", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exit:
            code = _exit_code(exit.code)
    except BaseException:  # what an uncaught exception does to the command: a traceback, status 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _exit_code(code: object) -> int:
    """The exit status of ``sys.exit(code)``, as the interpreter computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
