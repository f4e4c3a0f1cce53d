"""``spacealg check ENV_ID [ENV_ID ...]``: property-test environments and print a report.

ENV_ID is a registered Gymnasium id (``CartPole-v1``), ``module:factory`` (a Gymnasium
environment, a PettingZoo AEC or parallel one, a Gymnasium vector environment; the module is
imported from the working directory too, as with ``python -m``), ``LIBRARY:NAME`` of a JAX
library (``gymnax:CartPole-v1``; :func:`spacealg.cli.common.env_id_forms` lists every form with
its extra), or a glob over any of them (``"CartPole-*"``, ``"gymnax:*"``,
``"pettingzoo.classic.*_v?:env"``). One environment gets a detailed report. Several (or
``--results``, ``--report``, ``--timeout``, ``--ray-address``) are a sweep (:mod:`spacealg.sweep`): each
is checked by this command, ``spacealg check ID --json`` with the same checking options
(:func:`checking_argv`), in a process of its own, on local workers or Ray tasks, and
summarised in a table; ``--results FILE`` makes it resumable. ``--json`` prints one JSON
document for any number of them (each property held, broken with its reproduction, or not
checked with why; the warnings). Exit status: 0 when every property held, 1 when one broke
(the report names each, with the seed, the shortest action sequence and a reproduction
snippet), 2 when an environment cannot be made (its constructor raised or called
``sys.exit``), blocks past the time budget, crashes, or the checker itself failed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from spacealg.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    CommandError,
    emit_json,
    env_id_forms,
    env_source,
    making,
)

__all__ = ["add_checking_options", "add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="property-test environments (Gymnasium, PettingZoo AEC or parallel, vector, dm_env, TorchRL, "
        "JAX) with Hypothesis",
        description="Drive Hypothesis-generated episodes through an environment and check, at "
        "every step, that observations are in the observation space, rewards are finite reals, "
        "flags are bools, infos are dicts, the API signatures hold, episodes replay "
        "deterministically, reset works after an episode ends, published action masks are sound "
        "and the environment's randomness is its own (PettingZoo: the agents' life cycle and the "
        "AEC protocol too; a JAX env: its protocol under jit and vmap). ENV_ID: "
        + env_id_forms(globs=True) + ".",
    )
    parser.add_argument("env_id", nargs="+", help=env_id_forms(globs=True, short=True))
    add_checking_options(parser)
    add_sweep_options(parser)
    parser.set_defaults(handler=run)


def add_sweep_options(parser: argparse.ArgumentParser) -> None:
    """The options of a sweep (several environments, each checked in a process of its own:
    :mod:`spacealg.sweep`); they are not passed on to each environment's check."""
    fanout = parser.add_argument_group("several environments (a sweep: each in a process of its own)")
    fanout.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default: CPUs)")
    fanout.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="run the checks as Ray tasks on this cluster ('auto', 'local', ray://host:port)",
    )
    fanout.add_argument(
        "--results",
        default=None,
        metavar="FILE",
        help="append one JSON line per finished environment to FILE; run again with the same FILE and options "
        "to check only the environments it lacks (a killed sweep resumes)",
    )
    fanout.add_argument(
        "--estimates",
        default=None,
        metavar="RESULTS",
        help="an earlier sweep's results file (any options): start the environments that took longest there "
        "first (the others by the form of their id: JAX ones first), so that no long one starts last",
    )
    fanout.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="kill an environment's process after SECONDS (default: 3 x --budget + 70; none with --budget 0); "
        "one ENV_ID too is then checked in a process of its own",
    )
    fanout.add_argument(
        "--report", action="store_true", help="print the Markdown report (spacealg report) instead of the table"
    )
    fanout.add_argument("--no-progress", action="store_true", help="no progress bar")
    # how a sweep's process reports each broken property as it is found (read after a timeout)
    fanout.add_argument("--partial", default=None, help=argparse.SUPPRESS)


def add_checking_options(parser: argparse.ArgumentParser) -> None:
    """The options of the search and the checks (owned by spacealg.testing; kept together):
    those a sweep passes on to the check of each environment (:func:`checking_argv`)."""
    search = parser.add_argument_group("search")
    search.add_argument(
        "-n", "--examples", type=int, default=None, metavar="N", help="episodes to draw (default 100)"
    )
    search.add_argument(
        "-s",
        "--max-steps",
        type=int,
        default=None,
        metavar="N",
        help="longest episode to draw, in steps (default 100; some episodes run to the env's own time limit)",
    )
    search.add_argument(
        "--seed", type=int, default=0, help="seed of the Hypothesis search (default 0: the same run every time)"
    )
    search.add_argument("--random", action="store_true", help="a fresh random search (overrides --seed)")
    search.add_argument(
        "--max-broken",
        type=int,
        default=None,
        metavar="N",
        help="stop once N properties are found broken (default 8; 1: at the first, as pytest -x does)",
    )
    search.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help="run shard I of N independent searches (search seed = --seed + I), e.g. on N machines",
    )
    search.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="time per environment, spent adaptively (default 30; 0: no limit)",
    )
    search.add_argument(
        "--database",
        default=None,
        metavar="DIR",
        help="a Hypothesis example database directory: failures are saved there and replayed first "
        "(share it between machines); default: none, nothing written",
    )
    checks = parser.add_argument_group("checks")
    checks.add_argument(
        "--ignore-info",
        action="append",
        default=[],
        metavar="KEY",
        dest="ignore_info",
        help="leave the info entry KEY (a.b for info['a']['b']) out of the replay comparison, repeatable "
        "(volatile infos such as wall-clock time; Gymnasium's own timing entries are recognised anyway)",
    )
    checks.add_argument(
        "--lint", action="store_true", help="show the declaration lints of Gymnasium's own environments too"
    )
    checks.add_argument("--no-determinism", action="store_true", help="do not replay episodes to check determinism")
    checks.add_argument("--no-masks", action="store_true", help="ignore published action masks")
    checks.add_argument(
        "--illegal-actions", action="store_true", help="draw some actions outside the published mask too"
    )
    checks.add_argument(
        "--no-hygiene", action="store_true", help="skip the one-off RNG/API probes and declaration lints"
    )
    checks.add_argument(
        "--vector",
        action="store_true",
        help="check a registered id as a vector env (gymnasium.make_vec, sync against async)",
    )
    checks.add_argument("--num-envs", type=int, default=3, metavar="N", help="sub-envs of --vector (default 3)")
    checks.add_argument(
        "--match",
        default=None,
        metavar="OTHER",
        help="differential testing: drive ENV_ID and OTHER with the same seeds and actions",
    )
    checks.add_argument("--atol", type=float, default=0.0, help="absolute tolerance of --match (default 0)")
    checks.add_argument("--rtol", type=float, default=0.0, help="relative tolerance of --match (default 0)")


class UsageError(ValueError):
    """A bad option value (exit status 2)."""


def _shard(text: str | None) -> int:
    if text is None:
        return 0
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard must be I/N with integers, got {text!r}") from None
    if not (count >= 1 and 0 <= index < count):
        raise UsageError(f"--shard I/N needs 0 <= I < N, got {text!r}")
    return index


def _options(arguments: argparse.Namespace) -> dict[str, Any]:
    from spacealg.testing.engine.driver import CLI_BUDGET

    for name in ("examples", "max_steps", "max_broken"):
        value = getattr(arguments, name)
        if value is not None and value < (0 if name == "max_steps" else 1):
            raise UsageError(f"--{name.replace('_', '-')} must be positive, got {value}")
    budget = CLI_BUDGET if arguments.budget is None else arguments.budget
    if budget < 0:
        raise UsageError(f"--budget must be >= 0 seconds, got {budget}")
    options: dict[str, Any] = {
        "random_seed": None if arguments.random else arguments.seed + _shard(arguments.shard),
        "budget": budget or None,
    }
    if arguments.no_determinism:
        options["determinism"] = False
    if arguments.examples is not None:
        options["max_examples"] = arguments.examples
    if arguments.max_steps is not None:
        options["max_steps"] = arguments.max_steps
    if arguments.max_broken is not None:
        options["max_broken"] = arguments.max_broken
    if arguments.database is not None:
        options["database"] = arguments.database
    if arguments.match is None and not arguments.vector:
        options["masks"] = not arguments.no_masks
        options["illegal_actions"] = arguments.illegal_actions
        options["hygiene"] = not arguments.no_hygiene
        if arguments.ignore_info:
            options["ignore_info_keys"] = tuple(arguments.ignore_info)
        if arguments.lint:
            options["lint"] = True
    return options


def _spaces(env: Any) -> list[tuple[str, str]]:
    """The declared spaces of ``env``, named, as its kind reads them (:mod:`spacealg.testing.registry`)."""
    from spacealg.testing.engine.runner import named_spaces
    from spacealg.testing.registry import kind_of

    spaces = kind_of(env).spaces or named_spaces
    return [(name, repr(space)) for name, space in spaces(env)]


def run(arguments: argparse.Namespace) -> int:
    try:
        options = _options(arguments)
        targets = _targets(arguments.env_id)
        if arguments.jobs is not None and arguments.jobs < 1:
            raise UsageError(f"--jobs must be >= 1, got {arguments.jobs}")
        if arguments.timeout is not None and arguments.timeout <= 0:
            raise UsageError(f"--timeout must be > 0 seconds, got {arguments.timeout}")
    except (UsageError, ValueError) as error:
        raise CommandError(str(error)) from error
    if os.getcwd() not in sys.path:  # module:factory paths resolve from the working directory
        sys.path.insert(0, os.getcwd())
    job = Job(tuple(arguments.env_kwarg), arguments.match, arguments.atol, arguments.rtol, arguments.vector,
              arguments.num_envs)
    sweep = any(getattr(arguments, name) not in (None, False) for name in ("ray_address", "results", "timeout",
                                                                            "report"))
    if len(targets) > 1 or sweep:
        return _many(targets, options, arguments)
    return _one(targets[0], options, arguments, job)


def _targets(patterns: list[str]) -> list[str]:
    """The ids the patterns name (:func:`spacealg.testing.fanout.expand`); a glob over a JAX
    library that is not installed stays as it is: its check says so, in its own row."""
    from spacealg.testing.fanout import expand

    out: list[str] = []
    for pattern in patterns:
        try:
            out += expand([pattern])
        except ModuleNotFoundError:
            out.append(pattern)
    return list(dict.fromkeys(out))


def checking_argv(arguments: argparse.Namespace) -> list[str]:
    """The options of :func:`add_checking_options` and ``--env-kwarg`` given in
    ``arguments`` (those not at their default), as command-line words: what a sweep passes
    to the ``spacealg check`` of each environment. Law: parsing ``ENV_ID`` plus these words
    gives the same checking options."""
    probe = argparse.ArgumentParser(add_help=False)
    add_checking_options(probe)
    words: list[str] = []
    for action in probe._actions:
        value = getattr(arguments, action.dest)
        if value == action.default:
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:  # a switch
            words.append(flag)
        else:
            for item in value if isinstance(value, list) else [value]:
                words += [flag, str(item)]
    for pair in arguments.env_kwarg:
        words += ["--env-kwarg", pair]
    return words


@dataclass(frozen=True)
class Job:
    """How the command checks one ENV_ID (the same in a sweep's processes, which run this
    command): ``--env-kwarg``, ``--match``, ``--vector``."""

    env_kwargs: tuple[str, ...] = ()
    match: str | None = None
    atol: float = 0.0
    rtol: float = 0.0
    vector: bool = False
    num_envs: int = 3

    def source(self, target: str) -> Any:
        return env_source(target, list(self.env_kwargs))

    def __call__(self, target: str, options: dict[str, Any]) -> Any:
        from spacealg.testing.fanout import outcome_of

        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            source = self.source(target)
        except CommandError as error:
            from spacealg.testing.fanout import Outcome

            return Outcome(target, "cannot make", 0.0, message=str(error))
        return outcome_of(target, source.make, lambda: self.check(source, target, options))

    def check(self, source: Any, target: str, options: dict[str, Any]) -> Any:
        from spacealg.testing import check, check_envs_match, check_vector_env

        if self.match is not None:
            return check_envs_match(source, self.match, atol=self.atol, rtol=self.rtol, **options)
        if self.vector:
            return check_vector_env(target, num_envs=self.num_envs, **options)
        return check(source, **options)


#: Seconds a sweep's process gets beyond its check's own limit (starting Python, imports).
STARTUP_SECONDS = 60.0


def _many(targets: list[str], options: dict[str, Any], arguments: argparse.Namespace) -> int:
    """A sweep (:mod:`spacealg.sweep`): every target in a process of its own."""
    from spacealg.sweep import markdown, read, seconds_of, sweep
    from spacealg.testing.fanout import deadline_of, summary_table

    try:
        if arguments.estimates and not os.path.isfile(arguments.estimates):
            raise OSError("no such file")
        estimates = seconds_of(read(arguments.estimates)) if arguments.estimates else {}
    except (OSError, ValueError) as error:
        raise CommandError(f"--estimates: cannot read {arguments.estimates}: {error}") from error
    deadline = deadline_of(options)
    timeout = arguments.timeout if arguments.timeout is not None else (
        None if deadline is None else deadline + STARTUP_SECONDS)
    if not arguments.json:
        print(f"spacealg check: {len(targets)} environment(s)", flush=True)
    try:
        rows = sweep(
            targets,
            checking_argv(arguments),
            jobs=arguments.jobs,
            ray_address=arguments.ray_address,
            timeout=timeout,
            deadline=deadline,
            results=arguments.results,
            estimates=estimates,
            progress=not arguments.no_progress and not arguments.json,
        )
    except ValueError as error:
        raise CommandError(str(error)) from error
    status = max(row["exit_status"] for row in rows)
    arguments.status_reached = status
    if arguments.json:
        emit_json(
            {
                "command": "check",
                "status": "passed" if status == EXIT_OK else ("failed" if status == EXIT_FAILED else "error"),
                "exit_status": status,
                "environments": rows,
            }
        )
        return status
    if arguments.report:
        print(markdown(rows), end="")
        return status
    outcomes = [_outcome(row) for row in rows]
    print(summary_table(outcomes))
    for outcome, row in zip(outcomes, rows):
        not_checked = row.get("not_checked") or {}
        if outcome.status != "passed":
            print()
            print(f"{outcome.target}: {outcome.status.upper()}")
            print(textwrap.indent(outcome.message, "  "))
            for entry in row.get("broken", []):
                if entry.get("reproduction"):
                    print(f"  Reproduce {entry['property']} with:")
                    print(textwrap.indent(entry["reproduction"], "    "))
        elif not_checked:  # a passed env's block is named too, and only where something went unchecked
            print()
            print(f"{outcome.target}: passed, {len(not_checked)} not checked")
        _print_not_checked(not_checked)
    return status


def _outcome(row: dict[str, Any]) -> Any:
    """A sweep's row as the :class:`~spacealg.testing.fanout.Outcome` the table shows."""
    from spacealg.testing.fanout import Outcome

    message = row.get("message", "")
    if row["status"] in ("timeout", "crashed"):
        message = f"{row['verdict']}\n{message}"
    return Outcome(row["env_id"], row["status"], row["seconds"], row.get("examples", 0), row.get("steps", 0),
                   row.get("episodes", 0), row.get("property", ""), message, out_of_time=row.get("out_of_time", False))


def _print_not_checked(not_checked: dict[str, str]) -> None:
    for prop, why in not_checked.items():
        print(f"  --  {prop} not checked: {why}")


def _one(target: str, options: dict[str, Any], arguments: argparse.Namespace, job: Job) -> int:
    from spacealg.testing.fanout import deadline_of, exit_status, within

    source = job.source(target)  # the same ENV_ID rules as describe
    with making(target):  # a constructor that raises (any exception, sys.exit): one line, exit status 2
        env = source.make()
    try:
        with making(target):
            spaces = _spaces(env)
    finally:
        if source.owned:
            with contextlib.suppress(Exception):
                env.close()
    if not arguments.json:
        print(f"spacealg check {target}" + (f" against {arguments.match}" if arguments.match else ""))
        width = max(len(name) for name, _ in spaces)
        for name, text in spaces:
            print(f"  {name:<{width}}  {text}")
    shown = sys.stderr.isatty() and not arguments.json and not arguments.no_progress
    with time_bar(options.get("budget"), shown, sys.stderr), partial(arguments.partial):
        outcome = within(deadline_of(options), lambda: job(target, options), target)
    status = exit_status(outcome)
    arguments.status_reached = status
    if outcome.status in ("cannot make", "error", "timeout"):
        reason = "error" if outcome.status == "error" else outcome.status
        raise CommandError(f"{target}: {outcome.status}: {outcome.message}", reason)
    document = {"command": "check", "env_id": target, "spaces": dict(spaces), "exit_status": status,
                **outcome.document}
    if arguments.json:
        emit_json(document)
        return status
    if outcome.status == "failed":
        for i, entry in enumerate(document["broken"]):
            print()
            print(f"FAILED: {entry['property']} {entry['where']}")
            print(textwrap.indent(outcome.message if i == 0 else entry["message"], "  "))
            print()
            print("Reproduce with:")
            print(textwrap.indent(entry["reproduction"], "    "))
        held = document["properties"]
        print()
        print(f"{len(document['broken'])} broken, {len(held)} held over {document['examples']} examples")
    else:
        budget = "; the time budget ended the search" if document["out_of_time"] else ""
        print()
        print(
            f"passed: {len(document['properties'])} properties held over {document['examples']} examples "
            f"({document['steps']:,} steps, {document['episodes']:,} episodes) in {document['seconds']:.1f} s, "
            f"{document['speed']}{budget}"
        )
    for prop in document["properties"]:
        print(f"  ok  {prop}")
    _print_not_checked(document["not_checked"])
    if document["warnings"]:
        print("warnings (not failures):")
        for remark in document["warnings"]:
            print(f"  !   {remark}")
    return status


@contextlib.contextmanager
def partial(path: str | None) -> Iterator[None]:
    """With a path (a sweep's ``--partial``): each broken property, the moment the check
    has found it, appended to ``path`` as a JSON line (its entry of ``--json``'s
    ``broken``), so what a killed check had found is not lost."""
    if path is None:
        yield
        return
    import json

    from spacealg.testing.engine.errors import on_broken
    from spacealg.testing.engine.verdicts import broken_entry, jsonable

    def write(error: Any) -> None:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(jsonable(broken_entry(error)), default=str) + "\n")

    with on_broken(write):
        yield


@contextlib.contextmanager
def time_bar(seconds: float | None, enabled: bool, stream: Any) -> Iterator[None]:
    """A progress bar (tqdm, where installed) over a single check's time budget, ticking once
    a second while the check runs, so a long check is never silent; nothing when disabled,
    without a budget, or without tqdm."""
    if not enabled or not seconds:
        yield
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield
        return
    bar = tqdm(total=int(seconds), unit="s", desc="checking (time budget)", file=stream, leave=False)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(1.0):
            if bar.n < bar.total:
                bar.update(1)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        bar.close()
