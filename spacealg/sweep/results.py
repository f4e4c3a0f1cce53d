"""A sweep's results file: one JSON line per finished environment, appended as each ends.

Laws (what makes a sweep resumable after ``kill -9`` at any moment):

- :func:`append` writes a row as one ``write`` of one line ending in a newline, then
  ``fsync``: once it returns, the row survives the process and the machine;
- :func:`read` returns every complete row; a last line cut short (the process killed
  during the write) is removed from the file and not returned, so that row is checked
  again and its next line starts cleanly: no row is lost, duplicated or half-written;
- a row read back equals the row appended;
- while :func:`locked` holds a file, another sweep cannot (its rows would be checked twice).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["append", "locked", "read"]


def read(path: str) -> list[dict[str, Any]]:
    """The rows of ``path`` in file order ([] when it does not exist); a cut last line is
    removed from the file. ValueError naming the line for any other line that is not a
    JSON object (a file that is not a results file)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return []
    complete, _, cut = data.rpartition(b"\n")  # cut: what follows the last newline
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(complete.split(b"\n") if complete else [], 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or "env_id" not in row:
            raise ValueError(f"{path}, line {number}: not a row of a results file (a JSON object with env_id)")
        rows.append(row)
    if cut:  # the line a kill cut short: its environment is checked again
        with open(path, "r+b") as handle:
            handle.truncate(len(data) - len(cut))
            os.fsync(handle.fileno())
    return rows


def append(path: str, row: dict[str, Any]) -> None:
    """Append ``row`` to ``path`` as one line and ``fsync`` it (the file is created)."""
    line = (json.dumps(row, sort_keys=True, ensure_ascii=False, default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = 0
        while written < len(line):
            written += os.write(fd, line[written:])
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: str) -> Iterator[None]:
    """Hold ``path`` (created if missing) for one sweep: ValueError when another process
    holds it. The lock goes with the process, ``kill -9`` included (``flock``; where the
    platform has none, nothing is locked)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl
        except ImportError:  # not POSIX
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"{path} is being written by another sweep (wait for it, or use another file)") from None
        yield
    finally:
        os.close(fd)
