"""The ``spacealg`` command line: ``spacealg describe ENV_ID`` and ``spacealg check ENV_ID``.

Each subcommand lives in its own module and exposes ``add_parser(subparsers)``, which
registers its arguments and sets ``handler`` (a function of the parsed arguments that
returns the exit status). What they share (``--json``, ``--env-kwarg``, making the
environment, exit statuses) is in :mod:`spacealg.cli.common`; :func:`main` turns a
:class:`~spacealg.cli.common.CommandError`, a missing optional package and Ctrl-C into one
line on stderr and exit statuses 2, 2 and 130.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from spacealg.cli.common import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    CommandError,
    add_common_arguments,
    emit_json,
    interrupts,
    missing_extra,
)

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

SUBCOMMANDS = ("describe", "check")


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
        add_common_arguments(subparsers.choices[name])
    return parser


def _fail(arguments: argparse.Namespace, message: str, status: int) -> int:
    print(f"spacealg {arguments.command}: {message}", file=sys.stderr)
    if getattr(arguments, "json", False):
        emit_json({"command": arguments.command, "status": "error", "exit_status": status, "message": message})
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse's usage errors exit 2)."""
    arguments = build_parser().parse_args(argv)
    try:
        with interrupts(arguments.command):
            return int(arguments.handler(arguments))
    except CommandError as error:
        return _fail(arguments, str(error), EXIT_ERROR)
    except ModuleNotFoundError as error:
        message = missing_extra(error)
        if message is None:
            raise
        return _fail(arguments, message, EXIT_ERROR)
    except KeyboardInterrupt:
        sys.stdout.flush()
        return _fail(arguments, "interrupted (Ctrl-C)", EXIT_INTERRUPTED)
