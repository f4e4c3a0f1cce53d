"""The ``spacealg`` command line: ``spacealg describe ENV_ID`` and friends.

Each subcommand lives in its own module and exposes ``add_parser(subparsers)``, which
registers its arguments and sets ``handler`` (a function of the parsed arguments that
returns the exit status).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

__all__ = ["SUBCOMMANDS", "main"]

SUBCOMMANDS = ("describe", "check")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spacealg", description="Reinforcement-learning spaces as sets."
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"spacealg.cli.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"spacealg.cli.{name}":
                raise
            continue
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    arguments = build_parser().parse_args(argv)
    return int(arguments.handler(arguments))
