"""The ``spacealg`` command line: ``spacealg describe ENV_ID``, ``spacealg check ENV_ID`` and
``spacealg report RESULTS``.

Each subcommand lives in its own module and exposes ``add_parser(subparsers)``, which
registers its arguments and sets ``handler`` (a function of the parsed arguments that
returns the exit status). What they share (``--json``, ``--env-kwarg``, making the
environment, exit statuses) is in :mod:`spacealg.cli.common`; :func:`main` turns a
:class:`~spacealg.cli.common.CommandError`, a missing optional package and Ctrl-C into one
line on stderr and exit statuses 2, 2 and 130.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from spacealg.cli.common import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandError,
    add_common_arguments,
    emit_json,
    interrupts,
    json_stdout,
    missing_extra,
    one_line,
)

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

SUBCOMMANDS = ("describe", "check", "report")


def _version() -> str:
    from spacealg import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spacealg",
        description="Reinforcement-learning spaces as sets. Exit status: 0 success, 1 a checked "
        "property broke, 2 the command could not run (bad arguments, an environment that cannot "
        "be made, a missing optional package), 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"spacealg {_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        module = importlib.import_module(f"spacealg.cli.{name}")
        module.add_parser(subparsers)
        add_common_arguments(subparsers.choices[name], environments=getattr(module, "MAKES_ENVIRONMENTS", True))
    return parser


def _fail(arguments: argparse.Namespace, message: str, status: int, reason: str = "error") -> int:
    """One line on stderr; with ``--json`` the document ``status: "error"`` with the
    ``reason`` (:attr:`CommandError.reason`) and the message."""
    message = " ".join(message.split("\n"))
    print(f"spacealg {arguments.command}: {message}", file=sys.stderr)
    if getattr(arguments, "json", False):
        emit_json({"command": arguments.command, "status": "error", "reason": reason, "exit_status": status,
                   "message": message})
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse's usage errors exit 2).

    With ``--json`` stdout holds one JSON document and nothing else (what environments print
    goes to stderr); an unexpected exception (an environment's, or the command's own) is one
    line on stderr and exit status 2, never a traceback; a closed pipe (``| head``) ends the
    command quietly with the status it had reached."""
    arguments = build_parser().parse_args(argv)
    try:
        with interrupts(arguments.command), json_stdout(getattr(arguments, "json", False)):
            try:
                return int(arguments.handler(arguments))
            except CommandError as error:
                return _fail(arguments, str(error), EXIT_ERROR, error.reason)
            except ModuleNotFoundError as error:
                message = missing_extra(error)
                if message is not None:  # an optional package: what it makes cannot be made here
                    return _fail(arguments, message, EXIT_ERROR, "cannot make")
                return _fail(arguments, f"unexpected error: {one_line(error)}", EXIT_ERROR)
            except SystemExit as error:  # sys.exit() inside an environment: not ours to obey
                return _fail(arguments, f"the environment called sys.exit({error.code!r})", EXIT_ERROR)
            except BrokenPipeError:
                raise
            except Exception as error:
                return _fail(arguments, f"unexpected error: {one_line(error)}", EXIT_ERROR)
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        return _fail(arguments, "interrupted (Ctrl-C)", EXIT_INTERRUPTED)
    except BrokenPipeError:
        return _closed_pipe(arguments)


def _closed_pipe(arguments: argparse.Namespace) -> int:
    """The reader of stdout went away: point stdout at /dev/null (so that the interpreter's
    final flush does not complain) and return the status reached."""
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return int(getattr(arguments, "status_reached", EXIT_OK))
