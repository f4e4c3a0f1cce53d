"""What each environment checker catches on the corpus of tests/envcorpus (measured).

For every environment of the corpus this runs the reference checker of its API —
``gymnasium.utils.env_checker.check_env`` (Gymnasium) or
``pettingzoo.test.parallel_api_test`` (PettingZoo parallel) — and spacealg's
``spacealg.testing.check`` with its defaults, and records what each one reported: an error
(the bug is caught), only warnings (the run went on), or nothing.

    python benchmarks/compare_checkers.py                       # print the table
    python benchmarks/compare_checkers.py --write docs/validation.md   # refresh the doc's table

``--write`` replaces the text between the ``compare-checkers`` markers of the file. The
reference checkers sample actions at random: the global generators and the action spaces
are seeded with 0 first, so the table is the same on every run.
"""

from __future__ import annotations

import argparse
import contextlib
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
sys.path.insert(0, str(ROOT / "tests"))

from envcorpus import CORPUS, Case  # noqa: E402

from spacealg.testing import EnvCheckError, check  # noqa: E402

BEGIN, END = "<!-- compare-checkers:begin -->", "<!-- compare-checkers:end -->"


def _short(text: str, width: int = 70) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(str(text).split()))
    text = text.replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def reference(case: Case) -> tuple[str, str]:
    """(verdict, what it said) from the reference checker of the case's API."""
    env = case.factory()
    _seed_everything(env, case)
    caught_warnings: list[str] = []
    with warnings.catch_warnings(record=True) as records, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        try:
            if case.api == "gymnasium":
                from gymnasium.utils.env_checker import check_env as gymnasium_check_env

                gymnasium_check_env(env, skip_render_check=True)
            else:
                from pettingzoo.test import parallel_api_test

                parallel_api_test(env, num_cycles=1000)
        except Exception as error:
            return "error", f"{type(error).__name__}: {_short(error)}"
        finally:
            caught_warnings = [str(r.message) for r in records if not _irrelevant(str(r.message))]
    if caught_warnings:
        return "warning", _short(caught_warnings[0])
    return "passed", ""


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
    """Warnings every environment gets (metadata, render modes), not about its bug."""
    return any(s in message for s in ("render", "metadata"))


def spacealg(case: Case) -> tuple[str, str, float]:
    started = time.perf_counter()
    try:
        report = check(case.factory)
    except EnvCheckError as error:
        found = f"{error.property}, seed {error.seed}, {len(error.actions)} action(s)"
        return "error", found, time.perf_counter() - started
    return "passed", f"{report.examples} examples", time.perf_counter() - started


def _verdict(kind: str, expected: str | None) -> str:
    if expected is None:
        return {"passed": "passes", "warning": "passes (warnings)", "error": "**false alarm**"}[kind]
    return {"passed": "missed", "warning": "warning only", "error": "caught"}[kind]


def table() -> str:
    rows = [
        "| environment | bug (reached by) | reference checker | spacealg |",
        "|---|---|---|---|",
    ]
    totals = {
        "reference": {"caught": 0, "warning only": 0, "missed": 0},
        "spacealg": {"caught": 0, "missed": 0},
    }
    right_property = 0
    seconds = 0.0
    for case in CORPUS:
        kind, said = reference(case)
        ours, found, took = spacealg(case)
        seconds += took
        theirs = _verdict(kind, case.expected)
        mine = _verdict(ours, case.expected)
        if case.expected is not None:
            totals["reference"][theirs] += 1
            totals["spacealg"]["caught" if ours == "error" else "missed"] += 1
            right_property += ours == "error" and found.split(",")[0] == case.expected
        bug = "sound" if case.expected is None else f"{case.description} ({case.reach})"
        checker = "Gymnasium" if case.api == "gymnasium" else "PettingZoo"
        reference_cell = f"{checker}: {theirs}" + (f" — {said}" if said else "")
        spacealg_cell = mine + (f" — {found}" if ours == "error" else "")
        rows.append(f"| `{case.name}` | {_short(bug, 110)} | {reference_cell} | {spacealg_cell} |")
    buggy = sum(1 for c in CORPUS if c.expected is not None)
    reference_totals = totals["reference"]
    rows += [
        "",
        f"Of {buggy} bugs, the reference checkers raise on {reference_totals['caught']}, only warn on "
        f"{reference_totals['warning only']} and miss {reference_totals['missed']}; spacealg raises on "
        f"{totals['spacealg']['caught']} (naming the broken property in {right_property}) and misses "
        f"{totals['spacealg']['missed']}. spacealg's checks of the whole corpus took {seconds:.0f} s.",
    ]
    return "\n".join(rows)


def write(path: Path, text: str) -> None:
    document = path.read_text()
    if BEGIN not in document or END not in document:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} markers")
    head, rest = document.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="replace the marked table in this Markdown file")
    arguments = parser.parse_args(argv)
    text = table()
    print(text)
    if arguments.write:
        write(arguments.write, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
