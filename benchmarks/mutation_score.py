"""A mutation score for environment checkers: which injected defects each one kills (measured).

Every operator of ``benchmarks/mutants`` (one observable defect from step ``k`` of each
episode: an observation out of its space, a dtype or shape drift, a seed ignored, the
global RNG, a NaN reward, ...) is applied to every sound base it fits (Gymnasium classic
control and toy text, a Dict-observation env, PettingZoo AEC and parallel games,
``SyncVectorEnv``s of Box and of Discrete observations, gymnax, Jumanji), and each mutant
is given to every checker that takes its kind:
spacealg's ``check`` (the same ``max_examples``/``max_steps`` for all), Gymnasium's
``check_env``, PettingZoo's ``api_test``/``parallel_api_test``, Jumanji's smoke checks and
SB3's ``check_env`` (in its own venv, a subprocess; skipped with the reason where it is
missing). Operators no law
of one environment can see (an action ignored at one step, terminated/truncated swapped)
are scored by ``check_envs_match`` against the sound base. Every checker also runs on every
unmutated base: anything it raises there is a false alarm.

    python benchmarks/mutation_score.py --quick                          # a subset, a few minutes
    python benchmarks/mutation_score.py                                  # everything
    python benchmarks/mutation_score.py --write docs/validation.md       # refresh the doc's table

The SB3 venv (SB3 2.x; torch, gymnasium and numpy are taken from the project's venv):

    python3 -m venv /tmp/sb3-venv
    echo "$VIRTUAL_ENV/lib/python3.11/site-packages" > /tmp/sb3-venv/lib/python3.11/site-packages/main.pth
    /tmp/sb3-venv/bin/pip install --no-deps stable-baselines3

Everything is seeded (the global generators, the reference checkers' action spaces,
spacealg's search), so the same options print the same table; times go to stderr only.
``--write`` replaces the text between the ``mutation-score`` markers of the file.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutants import BASES, OPERATORS, Base, NotApplicable, Operator, mutant
from mutants.catalogue import MATCH, NotObservable, probe
from mutants.checkers import CHECKERS, SB3_PYTHON, Verdict, run_match, run_sb3
from sections import write_section

SECTION = "mutation-score"  # the section of the page --write refreshes (sections.py)
SB3, MATCHER = "SB3 check_env", "check_envs_match"
COLUMNS = (*CHECKERS, SB3, MATCHER)
OUTSIDE = ("Gymnasium check_env", "PettingZoo api_test", "Jumanji smoke checks", SB3)
QUICK_BASES = ("CartPole-v1", "Taxi-v4", "Beacon (Dict obs)", "tictactoe_v3 (AEC)", "rps_v2 (parallel)",
               "SyncVectorEnv(3 x CartPole-v1)", "gymnax CartPole-v1", "jumanji Snake-v1")


@dataclass
class Mutant:
    """One operator on one base: why it does not exist (``absent``, and whether the base
    hides it: ``hidden``), or each checker's verdict."""

    base: Base
    operator: Operator
    absent: str | None = None
    hidden: bool = False
    verdicts: dict[str, Verdict] = field(default_factory=dict)


@dataclass
class Run:
    mutants: list[Mutant]
    sound: dict[str, dict[str, Verdict]]  # base name -> checker -> verdict on the unmutated base
    sb3_skipped: str | None
    options: dict[str, Any]
    k: int


def score(bases: tuple[Base, ...], operators: tuple[Operator, ...], options: dict[str, Any], k: int,
          sb3_python: Path | None) -> Run:
    """Run every checker on every base and every mutant (``sb3_python`` None: no SB3)."""
    mutants: list[Mutant] = []
    sound: dict[str, dict[str, Verdict]] = {}
    sb3_jobs: list[tuple[str, str | None, int]] = []
    sb3_targets: list[tuple[str, Mutant | None]] = []
    for base in bases:
        started = time.perf_counter()
        probed = probe(base)
        sound[base.name] = {}
        for name, run in CHECKERS.items():
            verdict = run(base.make, base.kind, options)
            if verdict is not None:
                sound[base.name][name] = verdict
        if base.kind == "gymnasium":
            sound[base.name][MATCHER] = run_match(base.make, base.make, options)
            sb3_jobs.append((base.name, None, k))
            sb3_targets.append((base.name, None))
        for operator in operators:
            one = Mutant(base, operator)
            mutants.append(one)
            try:
                make = mutant(base, operator, k, probed)
            except NotApplicable as why:
                one.absent, one.hidden = str(why), isinstance(why, NotObservable)
                continue
            if operator.scored_by == MATCH:
                one.verdicts[MATCHER] = run_match(make, base.make, options)
                continue
            for name, run in CHECKERS.items():
                verdict = run(make, base.kind, options)
                if verdict is not None:
                    one.verdicts[name] = verdict.beside(sound[base.name].get(name))
            if base.kind == "gymnasium":
                sb3_jobs.append((base.name, operator.name, k))
                sb3_targets.append((base.name, one))
        print(f"{base.name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    skipped = "not asked for (--no-sb3)" if sb3_python is None else None
    if sb3_python is not None:
        started = time.perf_counter()
        verdicts = run_sb3(sb3_jobs, sb3_python)
        print(f"SB3: {time.perf_counter() - started:.0f} s", file=sys.stderr)
        if isinstance(verdicts, str):
            skipped = verdicts
        else:
            for (base_name, target), verdict in zip(sb3_targets, verdicts):
                if target is None:
                    sound[base_name][SB3] = verdict
                else:
                    target.verdicts[SB3] = verdict.beside(sound[base_name].get(SB3))
    return Run(mutants, sound, skipped, options, k)


def _cell(killed: int, of: int) -> str:
    return f"{killed}/{of}" if of else "-"


def _observable_outside(one: Mutant) -> bool:
    return any(one.verdicts[c].kills for c in OUTSIDE if c in one.verdicts)


def table(run: Run) -> str:
    """The Markdown report of ``run``: kill rates per operator and per checker, false alarms,
    then every mutant some checker let live, with why."""
    live = [m for m in run.mutants if m.absent is None]
    lines = [
        f"Defects from step {run.k} of every episode (Blackjack: step 1); spacealg's `check` with "
        + ", ".join(f"`{k}={v}`" for k, v in run.options.items()) + " for every environment.",
        "",
        "| operator | defect | mutants | " + " | ".join(COLUMNS) + " |",
        "|---|---|---|" + "---|" * len(COLUMNS),
    ]
    for operator in {m.operator.name: m.operator for m in run.mutants}.values():
        mine = [m for m in live if m.operator is operator]
        cells = []
        for column in COLUMNS:
            ran = [m for m in mine if column in m.verdicts]
            cells.append(_cell(sum(m.verdicts[column].kills for m in ran), len(ran)))
        lines.append(f"| `{operator.name}` | {operator.defect_text} | {len(mine)} | " + " | ".join(cells) + " |")
    lines += ["", "| checker | mutants it runs on | killed | kill rate | warned only | false alarms on sound bases |",
              "|---|---|---|---|---|---|"]
    for column in COLUMNS:
        ran = [m for m in live if column in m.verdicts]
        killed = sum(m.verdicts[column].kills for m in ran)
        warned = sum(m.verdicts[column].status == "warned" for m in ran)
        sound = [v for verdicts in run.sound.values() for c, v in verdicts.items() if c == column]
        alarms = sum(v.kills for v in sound)
        rate = f"{100 * killed / len(ran):.0f}%" if ran else "-"
        lines.append(f"| {column} | {len(ran)} | {killed} | {rate} | {warned} | {alarms} of {len(sound)} |")
    lines += ["", "| sound base | kind | " + " | ".join(COLUMNS) + " |", "|---|---|" + "---|" * len(COLUMNS)]
    for base_name, verdicts in run.sound.items():
        kind = next(m.base.kind for m in run.mutants if m.base.name == base_name) if run.mutants else ""
        cells = []
        for column in COLUMNS:
            verdict = verdicts.get(column)
            if verdict is None:
                cells.append("-")
            elif verdict.kills:
                cells.append(f"**false alarm** — {verdict.said}")
            else:
                cells.append(verdict.status)
        lines.append(f"| `{base_name}` | {kind} | " + " | ".join(cells) + " |")
    lines += ["", *_summary(run, live), "", *_survivors(run, live)]
    if run.sb3_skipped:
        lines += ["", f"SB3's `check_env` did not run: {run.sb3_skipped}."]
    return "\n".join(lines)


def _summary(run: Run, live: list[Mutant]) -> list[str]:
    black = [m for m in live if m.operator.scored_by != MATCH]
    seen = [m for m in black if _observable_outside(m)]
    ours = sum(m.verdicts["spacealg"].kills for m in black)
    ours_seen = sum(m.verdicts["spacealg"].kills for m in seen)
    crashed = sum(m.verdicts["spacealg"].status == "crashed" for m in black)
    matched = [m for m in live if m.operator.scored_by == MATCH]
    alarms = sum(v.kills for verdicts in run.sound.values() for v in verdicts.values())
    operators = len({m.operator.name for m in run.mutants})
    return [
        f"{len(live)} mutants ({len(black)} for every checker, {len(matched)} for `check_envs_match`) of "
        f"{operators} operators over {len(run.sound)} sound bases. spacealg kills {ours} of the {len(black)} "
        f"({crashed} of them by a raw exception instead of a property), and {ours_seen} of the {len(seen)} that "
        f"an outside checker kills; `check_envs_match` kills "
        f"{sum(m.verdicts[MATCHER].kills for m in matched)} of {len(matched)}. False alarms on the sound bases, "
        f"all checkers together: {alarms}."
    ]


def _survivors(run: Run, live: list[Mutant]) -> list[str]:
    """Every mutant some checker let live, with why: spacealg's first (with the raw
    exceptions it raised instead of a property), then each other checker's."""
    lines = ["**Survivors of spacealg** (checker missed; the outside checkers' verdicts beside):", ""]
    for one in live:
        ours = one.verdicts.get("spacealg") or one.verdicts.get(MATCHER)
        if ours is not None and not ours.kills:
            others = "; ".join(f"{c}: {v.status}" for c, v in one.verdicts.items() if c not in ("spacealg", MATCHER))
            lines.append(f"- `{one.operator.name}` on `{one.base.name}`" + (f" ({others})" if others else ""))
    crashed = [m for m in live if m.verdicts.get("spacealg", Verdict("passed")).status == "crashed"]
    if crashed:
        lines += ["", "**Killed by spacealg with a raw exception instead of a property:**", ""]
        lines += [f"- `{m.operator.name}` on `{m.base.name}`: {m.verdicts['spacealg'].said}" for m in crashed]
    for column in COLUMNS[1:]:
        missed: dict[str, list[str]] = {}
        for m in live:
            verdict = m.verdicts.get(column)
            if column != MATCHER and verdict is not None and not verdict.kills:
                said = f" [{verdict.said}]" if verdict.said else ""
                missed.setdefault(m.operator.name, []).append(f"{m.base.name}{said}")
        if missed:
            lines += ["", f"**Survivors of {column}** (checker missed; a warning it gave instead in brackets):", ""]
            lines += [f"- `{name}`: " + ", ".join(bases) for name, bases in missed.items()]
    hidden = [m for m in run.mutants if m.hidden]
    if hidden:
        lines += ["", "**Not observable** (the base's API hides the defect from every caller): "
                  + "; ".join(f"`{m.operator.name}` on `{m.base.name}` ({m.absent})" for m in hidden) + "."]
    matched = list(dict.fromkeys(m.operator.name for m in run.mutants if m.operator.scored_by == MATCH))
    if matched:
        lines += ["", "**Not observable by a law of one environment**: "
                  + ", ".join(f"`{name}`" for name in matched)
                  + " (scored by `check_envs_match` against the sound base, and by no other checker)."]
    lines += ["", "**Not applicable** (no mutant):", ""]
    for operator in {m.operator.name: m.operator for m in run.mutants}.values():
        reasons: dict[str, list[str]] = {}
        for m in run.mutants:
            if m.operator is operator and m.absent is not None and not m.hidden:
                reasons.setdefault(m.absent, []).append(f"`{m.base.name}`")
        if reasons:
            lines.append(f"- `{operator.name}` (applies to {operator.where}): "
                         + "; ".join(f"{', '.join(names)} ({why})" for why, names in reasons.items()))
    return lines




def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"one or two bases per kind ({', '.join(QUICK_BASES)}) and 10 examples")
    parser.add_argument("--examples", type=int, default=None, help="spacealg's max_examples (default 20; quick 10)")
    parser.add_argument("--max-steps", type=int, default=50, help="spacealg's max_steps (default 50)")
    parser.add_argument("--step", type=int, default=2, help="the step of each episode the defects start at")
    parser.add_argument("--bases", nargs="*", metavar="NAME", help="only these bases")
    parser.add_argument("--operators", nargs="*", metavar="NAME", help="only these operators")
    parser.add_argument("--sb3-python", type=Path, default=SB3_PYTHON, help="a Python with stable-baselines3")
    parser.add_argument("--no-sb3", action="store_true", help="leave SB3's check_env out")
    parser.add_argument("--write", type=Path, help="replace the marked section of this Markdown file")
    arguments = parser.parse_args(argv)
    names = arguments.bases or (QUICK_BASES if arguments.quick else None)
    bases = tuple(b for b in BASES if names is None or b.name in names)
    operators = tuple(o for o in OPERATORS if not arguments.operators or o.name in arguments.operators)
    examples = arguments.examples or (10 if arguments.quick else 20)
    options = {"max_examples": examples, "max_steps": arguments.max_steps}
    started = time.perf_counter()
    run = score(bases, operators, options, arguments.step, None if arguments.no_sb3 else arguments.sb3_python)
    text = table(run)
    print(text)
    print(f"took {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if arguments.write:
        write_section(arguments.write, SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
