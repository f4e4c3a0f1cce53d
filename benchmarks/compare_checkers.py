"""What each environment checker catches on the corpus of tests/envcorpus (measured).

For every environment of the corpus this runs the reference checker of its API —
``gymnasium.utils.env_checker.check_env`` (Gymnasium), ``pettingzoo.test.api_test`` (AEC)
or ``pettingzoo.test.parallel_api_test`` (PettingZoo parallel) — and, where they install,
SB3's ``stable_baselines3.common.env_checker.check_env`` (Gymnasium envs) and TorchRL's
``torchrl.envs.utils.check_env_specs`` (through ``GymWrapper``/``PettingZooWrapper``), and
spacealg's ``spacealg.testing.check`` with its defaults (``check_envs_match`` for the ports),
and records what each one reported: an error (the bug is caught), only warnings (the run
went on), or nothing. Vector environments and ports have no reference checker.

    python benchmarks/compare_checkers.py                       # print the table
    python benchmarks/compare_checkers.py --write docs/validation.md   # refresh the doc's table

``--write`` replaces the text between the ``compare-checkers`` markers of the file. The
reference checkers sample actions at random: the global generators and the action spaces
are seeded with 0 first, so the table is the same on every run.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import random
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from envcorpus import CORPUS, Case, run_case  # noqa: E402
from sections import write_section  # noqa: E402

from spacealg.testing import EnvCheckError  # noqa: E402

SECTION = "compare-checkers"  # the section of the page --write refreshes (sections.py)


def _short(text: str, width: int = 70) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(str(text).split()))
    text = text.replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def _run_quietly(run: Any) -> tuple[str, str]:
    """(verdict, what it said): "error" if ``run()`` raised, "warning" if it only warned."""
    with warnings.catch_warnings(record=True) as records, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                run()
        except Exception as error:
            return "error", f"{type(error).__name__}: {_short(error)}"
        caught_warnings = [str(r.message) for r in records if not _irrelevant(str(r.message))]
    if caught_warnings:
        return "warning", _short(caught_warnings[0])
    return "passed", ""


def reference(case: Case) -> tuple[str, str, str]:
    """(checker, verdict, what it said) from the API's own checker: Gymnasium's
    ``check_env``, PettingZoo's ``api_test`` (AEC) or ``parallel_api_test``; vector envs and
    ports have none ("-")."""
    if case.api in ("vector", "match"):
        return "none", "n/a", ""
    env = case.factory()
    _seed_everything(env, case)

    def run() -> None:
        if case.api == "gymnasium":
            from gymnasium.utils.env_checker import check_env as gymnasium_check_env

            gymnasium_check_env(env, skip_render_check=True)
        elif case.api == "aec":
            from pettingzoo.test import api_test

            api_test(env, num_cycles=1000)
        else:
            from pettingzoo.test import parallel_api_test

            parallel_api_test(env, num_cycles=1000)

    checker = {"gymnasium": "Gymnasium", "aec": "PettingZoo", "parallel": "PettingZoo"}[case.api]
    return (checker, *_run_quietly(run))


def sb3(case: Case) -> tuple[str, str]:
    """SB3's ``check_env`` (Gymnasium environments), where stable-baselines3 imports."""
    if case.api != "gymnasium":
        return "n/a", ""
    try:
        from stable_baselines3.common.env_checker import check_env as sb3_check_env
    except ImportError:
        return "not installed", ""
    env = case.factory()
    _seed_everything(env, case)
    return _run_quietly(lambda: sb3_check_env(env, warn=True))


def torchrl(case: Case) -> tuple[str, str]:
    """TorchRL's ``check_env_specs`` on the environment wrapped by ``GymWrapper``
    (Gymnasium environments) or ``PettingZooWrapper`` (PettingZoo ones)."""
    if case.api in ("vector", "match"):
        return "n/a", ""
    try:
        from torchrl.envs import GymWrapper, PettingZooWrapper
        from torchrl.envs.utils import check_env_specs
    except ImportError:
        return "not installed", ""

    def run() -> None:
        import logging

        import torch

        logging.getLogger("torchrl").setLevel(logging.WARNING)
        torch.manual_seed(0)
        env = case.factory()
        wrapped = GymWrapper(env) if case.api == "gymnasium" else PettingZooWrapper(env, use_mask=True)
        check_env_specs(wrapped, seed=0)

    return _run_quietly(run)


def _seed_everything(env: Any, case: Case) -> None:
    """Seed the global generators and the action spaces the reference checkers sample from,
    so that their column is the same on every run."""
    random.seed(0)
    np.random.seed(0)
    if case.api == "gymnasium":
        env.action_space.seed(0)
    else:
        for agent in env.possible_agents:
            env.action_space(agent).seed(0)


def _irrelevant(message: str) -> bool:
    """Warnings every environment gets (metadata, render modes, deprecations), not about its bug."""
    noise = ("render", "metadata", "deprecat", "Deprecat", "tested using version")
    return any(s in message for s in noise)


def spacealg(case: Case) -> tuple[str, str, float]:
    started = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = run_case(case)
    except EnvCheckError as error:
        found = f"{error.property}, seed {error.seed}, {len(error.actions)} action(s)"
        return "error", found, time.perf_counter() - started
    return "passed", f"{report.examples} examples", time.perf_counter() - started


def _verdict(kind: str, expected: str | None) -> str:
    if kind in ("n/a", "not installed"):
        return "-" if kind == "n/a" else "not installed"
    if expected is None:
        return {"passed": "passes", "warning": "passes (warnings)", "error": "**false alarm**"}[kind]
    return {"passed": "missed", "warning": "warning only", "error": "caught"}[kind]


def table(cases: Any = CORPUS) -> str:
    missing = [c for c in cases if c.needs is not None and importlib.util.find_spec(c.needs) is None]
    cases = [c for c in cases if c not in missing]  # their environments cannot be made here
    rows = [
        "| environment | bug (reached by) | API's own checker | SB3 `check_env` | TorchRL `check_env_specs` "
        "| spacealg |",
        "|---|---|---|---|---|---|",
    ]
    columns = ("reference", "sb3", "torchrl")
    totals = {c: {"caught": 0, "warning only": 0, "missed": 0, "false alarm": 0, "checked": 0} for c in columns}
    ours_totals = {"caught": 0, "missed": 0, "false alarm": 0}
    right_property = 0
    seconds = 0.0
    for case in cases:
        checker, kind, said = reference(case)
        others = {"reference": (kind, said), "sb3": sb3(case), "torchrl": torchrl(case)}
        ours, found, took = spacealg(case)
        seconds += took
        cells = {}
        for column, (their_kind, their_said) in others.items():
            verdict = _verdict(their_kind, case.expected)
            if verdict not in ("-", "not installed"):
                totals[column]["checked"] += case.expected is not None
                key = "false alarm" if verdict == "**false alarm**" else verdict
                if key in totals[column]:
                    totals[column][key] += 1
            shown = their_said and verdict != "passes"
            cells[column] = verdict + (f" — {_short(their_said, 60)}" if shown else "")
        if checker != "none":
            cells["reference"] = f"{checker}: {cells['reference']}"
        mine = _verdict(ours, case.expected)
        if case.expected is not None:
            ours_totals["caught" if ours == "error" else "missed"] += 1
            right_property += ours == "error" and found.split(",")[0] == case.expected
        elif ours == "error":
            ours_totals["false alarm"] += 1
        bug = "sound" if case.expected is None else f"{case.description} ({case.reach})"
        spacealg_cell = mine + (f" — {found}" if ours == "error" else "")
        rows.append(
            f"| `{case.name}` | {_short(bug, 100)} | {cells['reference']} | {cells['sb3']} | {cells['torchrl']} "
            f"| {spacealg_cell} |"
        )
    buggy = sum(1 for c in cases if c.expected is not None)
    sound = len(cases) - buggy

    def summary(name: str, column: str) -> str:
        t = totals[column]
        if not t["checked"]:
            return f"{name} did not run"
        return (
            f"{name} raises on {t['caught']} of the {t['checked']} bugs it can be run on (warns only on "
            f"{t['warning only']}), with {t['false alarm']} false alarm(s)"
        )

    rows += [
        "",
        f"{buggy} bugs and {sound} sound environments. "
        + "; ".join(
            [
                summary("the API's own checkers (Gymnasium, PettingZoo)", "reference"),
                summary("SB3's check_env", "sb3"),
                summary("TorchRL's check_env_specs", "torchrl"),
            ]
        )
        + f". spacealg raises on {ours_totals['caught']} of {buggy} (naming the broken property in "
        f"{right_property}), misses {ours_totals['missed']} and raises {ours_totals['false alarm']} false "
        f"alarm(s); its checks of the whole corpus took {seconds:.0f} s.",
    ]
    if missing:
        rows.append("Left out (their package is not installed): "
                    + ", ".join(f"`{c.name}` ({c.needs})" for c in missing) + ".")
    return "\n".join(rows)




def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="replace the marked table in this Markdown file")
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME", help="only these corpus cases")
    arguments = parser.parse_args(argv)
    cases = CORPUS if not arguments.only else tuple(c for c in CORPUS if c.name in arguments.only)
    text = table(cases)
    print(text)
    if arguments.write:
        write_section(arguments.write, SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
