"""``spacealg describe ENV_ID``: describe a registered environment's spaces algebraically."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "describe",
        help="describe the observation and action spaces of a registered Gymnasium environment",
        description="Print the style, bounds, cardinality, eltype and elsize of an "
        "environment's observation and action spaces (ENV_ID: a registered id such as "
        "CartPole-v1, or module:factory).",
    )
    parser.add_argument("env_id", help="a registered Gymnasium id, or module:factory")
    parser.set_defaults(handler=run)


def make_env(env_id: str) -> Any:
    """An environment from a registered Gymnasium id or a ``module:factory`` path."""
    import gymnasium

    if ":" in env_id and not env_id.startswith(":"):
        module_name, _, attribute = env_id.partition(":")
        try:
            import importlib

            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError):
            return gymnasium.make(env_id)
        return factory()
    return gymnasium.make(env_id)


def run(arguments: argparse.Namespace) -> int:
    import gymnasium

    from spacealg.describe import describe

    try:
        env = make_env(arguments.env_id)
    except (gymnasium.error.Error, ImportError, ModuleNotFoundError) as error:
        print(f"spacealg describe: cannot make {arguments.env_id!r}: {error}")
        return 2
    try:
        spaces = _spaces_of(env)
        print(arguments.env_id)
        for name, space in spaces:
            print(describe(space, title=name))
    finally:
        close = getattr(env, "close", None)  # a gymnax (env, params) pair has none
        if callable(close):
            close()
    return 0


def _spaces_of(env: Any) -> list[tuple[str, Any]]:
    from spacealg.adapters.envs import foreign_spaces  # dm_env, TorchRL, gymnax, Jumanji (issue 15)

    named = foreign_spaces(env)
    if named is not None:
        return named
    if callable(getattr(env, "observation_space", None)):  # PettingZoo: one space per agent
        agents = list(getattr(env, "possible_agents", []))
        return [
            (f"{kind} space of {agent!r}", getattr(env, f"{kind}_space")(agent))
            for agent in agents
            for kind in ("observation", "action")
        ]
    return [("observation space", env.observation_space), ("action space", env.action_space)]
