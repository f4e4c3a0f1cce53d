"""``spacealg check ENV_ID``: property-test an environment and print a readable report.

ENV_ID is a registered Gymnasium id (``CartPole-v1``) or ``module:factory`` (a Gymnasium
environment or a PettingZoo parallel one; the module is imported from the working
directory too, as with ``python -m``). Exit status: 0 when every property held, 1
when one broke (the report names it, with the seed, the shortest action sequence and a
reproduction snippet), 2 when the environment cannot be made.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from spacealg.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    CommandError,
    emit_json,
    env_source,
    failed_document,
    making,
    passed_document,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="property-test an environment (Gymnasium or PettingZoo parallel) with Hypothesis",
        description="Drive Hypothesis-generated episodes through an environment and check, at "
        "every step, that observations are in the observation space, rewards are finite reals, "
        "flags are bools, infos are dicts, the API signatures hold, episodes replay "
        "deterministically and reset works after an episode ends (PettingZoo: the agents' life "
        "cycle too). ENV_ID: a registered id such as CartPole-v1, or module:factory.",
    )
    parser.add_argument("env_id", help="a registered Gymnasium id, or module:factory")
    parser.add_argument(
        "-n", "--examples", type=int, default=None, metavar="N", help="episodes to draw (default 100)"
    )
    parser.add_argument(
        "-s",
        "--max-steps",
        type=int,
        default=None,
        metavar="N",
        help="longest episode to draw, in steps (default 100)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the Hypothesis search (default 0: the same run every time)",
    )
    parser.add_argument("--random", action="store_true", help="a fresh random search (overrides --seed)")
    parser.add_argument(
        "--no-determinism", action="store_true", help="do not replay episodes to check determinism"
    )
    parser.set_defaults(handler=run)


def _options(arguments: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {
        "random_seed": None if arguments.random else arguments.seed,
        "determinism": not arguments.no_determinism,
    }
    if arguments.examples is not None:
        options["max_examples"] = arguments.examples
    if arguments.max_steps is not None:
        options["max_steps"] = arguments.max_steps
    return options


def _spaces(source: Any) -> list[tuple[str, str]]:
    from spacealg.testing.resolve import is_parallel_env

    env = source.make()
    try:
        if is_parallel_env(env):
            agents = getattr(env, "possible_agents", None)
            if agents is None:  # spawned agents (possible_agents is optional): those at reset
                env.reset(seed=0)
                agents = env.agents
            return [
                (f"{kind} space of {agent!r}", repr(getattr(env, f"{kind}_space")(agent)))
                for agent in agents
                for kind in ("observation", "action")
            ]
        return [("observation space", repr(env.observation_space)), ("action space", repr(env.action_space))]
    finally:
        if source.owned:
            env.close()


def run(arguments: argparse.Namespace) -> int:
    from spacealg.testing import EnvCheckError, check

    for name in ("examples", "max_steps"):
        value = getattr(arguments, name)
        if value is not None and value < (1 if name == "examples" else 0):
            raise CommandError(f"--{name.replace('_', '-')} must be positive, got {value}")
    source = env_source(arguments.env_id, arguments.env_kwarg)  # the same ENV_ID rules as describe
    with making(arguments.env_id):  # a constructor that raises: one line, exit status 2
        spaces = _spaces(source)
    if not arguments.json:
        print(f"spacealg check {arguments.env_id}")
        width = max(len(name) for name, _ in spaces)
        for name, text in spaces:
            print(f"  {name:<{width}}  {text}")
    try:
        report = check(source, **_options(arguments))
    except EnvCheckError as error:
        if arguments.json:
            emit_json(failed_document(arguments.env_id, spaces, error))
            return EXIT_FAILED
        print()
        print(f"FAILED: {error.property} {error._location()}")
        print(textwrap.indent(str(error), "  "))
        print()
        print("Reproduce with:")
        print(textwrap.indent(error.reproduction(), "    "))
        return EXIT_FAILED
    if arguments.json:
        emit_json(passed_document(arguments.env_id, spaces, report))
        return EXIT_OK
    print()
    print(
        f"passed: {len(report.properties)} properties held over {report.examples} examples "
        f"({report.steps:,} steps, {report.episodes:,} episodes) in {report.seconds:.1f} s"
    )
    for prop in report.properties:
        print(f"  ok  {prop}")
    return EXIT_OK
