"""``spacealg describe ENV_ID``: describe an environment's spaces algebraically.

ENV_ID is resolved as by every subcommand (:func:`spacealg.cli.common.resolve_target`):
a registered Gymnasium id or ``module:factory``, imported from the working directory too.
Exit status 0, or 2 when the environment cannot be made.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from spacealg.cli.common import EXIT_OK, CommandError, emit_json, making, one_line, resolve_target

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "describe",
        help="describe the observation and action spaces of an environment",
        description="Print the style, bounds, cardinality, eltype and elsize of an "
        "environment's observation and action spaces (ENV_ID: a registered id such as "
        "CartPole-v1, or module:factory, imported from the working directory too; a "
        "PettingZoo environment is described agent by agent).",
    )
    parser.add_argument("env_id", help="a registered Gymnasium id, or module:factory")
    parser.set_defaults(handler=run)


def run(arguments: argparse.Namespace) -> int:
    from spacealg.describe import describe, describe_fields

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
