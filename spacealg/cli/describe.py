"""``spacealg describe ENV_ID``: describe an environment's spaces algebraically, or the
space of a JSON space document.

ENV_ID is resolved as by every subcommand (:func:`spacealg.cli.common.resolve_target`):
a registered Gymnasium id, ``module:factory`` (imported from the working directory too) or
``LIBRARY:NAME`` of a JAX library. A path ending in ``.json``, or ``-`` for standard
input, is a space document (:func:`spacealg.cli.common.read_space_document`), described as
``spacealg.from_json`` reads it. Exit status 0, or 2 when the environment cannot be made
or the document cannot be read (a malformed one: ``from_json``'s DocumentError, one line).
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from spacealg.cli.common import (
    EXIT_OK,
    CommandError,
    emit_json,
    env_id_forms,
    is_space_document,
    making,
    one_line,
    read_space_document,
    resolve_target,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "describe",
        help="describe the observation and action spaces of an environment",
        description="Print the style, bounds, cardinality, eltype and elsize of an "
        "environment's observation and action spaces (a PettingZoo environment's agent by "
        "agent), or of the space of a JSON space document (spacealg.to_json's): a path "
        "ending in .json, or - to read it from standard input. ENV_ID: " + env_id_forms() + ".",
    )
    parser.add_argument(
        "env_id",
        metavar="ENV_ID|SPACE.json|-",
        help=env_id_forms(short=True) + "; or a space document: a .json path or -",
    )
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    from spacealg.describe import describe, describe_fields

    if is_space_document(arguments.env_id):
        return _describe_document(arguments)
    target = resolve_target(arguments.env_id, arguments.env_kwarg, checker=True)
    with making(arguments.env_id):
        env = target.make()
    try:
        with making(arguments.env_id):
            spaces = _spaces_of(env)
        try:
            entries = [{"name": name, "given": repr(space), **describe_fields(space)} for name, space in spaces]
            texts = [describe(space, title=name) for name, space in spaces]
        except Exception as error:  # a space of a class spacealg does not know, a space that raises
            raise CommandError(f"cannot describe the spaces of {arguments.env_id!r}: {one_line(error)}") from error
        if arguments.json:
            emit_json({"command": "describe", "env_id": arguments.env_id, "spaces": entries})
        else:
            print(arguments.env_id)
            print("\n".join(texts))
    finally:
        close = getattr(env, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # an environment whose close() raises: described all the same
                close()
    return EXIT_OK


def _describe_document(arguments: argparse.Namespace) -> int:
    """``spacealg describe space.json`` (or ``-``): the document's space, titled ``space``."""
    from spacealg.describe import describe, describe_fields

    if arguments.env_kwarg:
        raise CommandError("--env-kwarg applies to an environment's constructor, not to a space document")
    name = arguments.env_id
    space = read_space_document(name)
    try:
        entry = {"name": "space", "given": repr(space), **describe_fields(space)}
        text = describe(space, title="space")
    except Exception as error:
        raise CommandError(f"cannot describe the space of {name!r}: {one_line(error)}") from error
    if arguments.json:
        emit_json({"command": "describe", "document": name, "spaces": [entry]})
    else:
        print("standard input" if name == "-" else name)
        print(text)
    return EXIT_OK


def _spaces_of(env: Any) -> list[tuple[str, Any]]:
    from spacealg.adapters.envs import foreign_spaces  # dm_env, TorchRL, gymnax, Jumanji (issue 15)

    named = foreign_spaces(env)
    if named is not None:
        return named
    if callable(getattr(env, "observation_space", None)):  # PettingZoo: one space per agent
        agents = getattr(env, "possible_agents", None)
        if agents is None:  # agents that spawn declare no possible_agents: those present at reset
            env.reset(seed=0)
            agents = env.agents
        return [
            (f"{kind} space of {agent!r}", getattr(env, f"{kind}_space")(agent))
            for agent in agents
            for kind in ("observation", "action")
        ]
    return [("observation space", env.observation_space), ("action space", env.action_space)]
