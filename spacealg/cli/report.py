"""``spacealg report RESULTS``: a sweep's results file (``spacealg check ... --results
RESULTS``) as a Markdown table with the failures' messages below (:mod:`spacealg.sweep.report`),
or with ``--json`` the JSON summary; ``--write PAGE`` puts the Markdown into PAGE between
its markers (a docs page generated from committed results). Exit status: 0 when every
environment passed, 1 when one failed, 2 when one could not be checked or the file cannot
be read, as ``spacealg check`` over the same environments.
"""

from __future__ import annotations

import argparse
from typing import Any

from spacealg.cli.common import CommandError, emit_json

__all__ = ["MAKES_ENVIRONMENTS", "add_parser", "run"]

MAKES_ENVIRONMENTS = False
"""It reads a results file: no ``--env-kwarg``."""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="a sweep's results file (spacealg check --results FILE) as a Markdown table or a JSON summary",
        description="Read the results file a sweep wrote (spacealg check ... --results FILE) and print one "
        "Markdown table row per environment (verdict, broken properties, steps/s, seconds compiling and in "
        "all) with the failures' messages below; --json prints the JSON summary instead.",
    )
    parser.add_argument("results", metavar="RESULTS", help="a results file (one JSON line per environment)")
    parser.add_argument(
        "--write",
        default=None,
        metavar="PAGE",
        help="replace the section of PAGE between its markers ('<!-- spacealg report RESULTS: ... -->' and "
        "'<!-- end of spacealg report -->') with the Markdown report, instead of printing it",
    )
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    from spacealg.sweep import markdown, read, summary, write_between_markers

    try:
        rows = read(arguments.results)
    except (OSError, ValueError) as error:
        raise CommandError(f"cannot read {arguments.results}: {error}") from error
    if not rows:
        raise CommandError(f"{arguments.results} holds no results")
    status = max(int(row.get("exit_status", 2)) for row in rows)
    arguments.status_reached = status
    if arguments.write is not None:
        try:
            changed = write_between_markers(arguments.write, markdown(rows), arguments.results)
        except (OSError, ValueError) as error:
            raise CommandError(str(error)) from error
        print(f"{arguments.write}: {'written' if changed else 'already up to date'}")
        return status
    if arguments.json:
        emit_json({"command": "report", "results": arguments.results, "exit_status": status, **summary(rows)})
        return status
    print(markdown(rows), end="")
    return status
