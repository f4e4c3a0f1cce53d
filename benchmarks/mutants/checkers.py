"""The checkers scored, each run on one environment factory of one base kind.

A run returns a :class:`Verdict`: ``"killed"`` (the checker raised: spacealg's
``EnvCheckError`` naming a property, or any exception of the others), ``"crashed"``
(spacealg raised something other than its ``EnvCheckError``: the verdict reaches the user
as a traceback, not as a property), ``"warned"`` (only warnings; scored against a mutant,
only warnings the sound base does not give too: :meth:`Verdict.beside`), ``"passed"``; None
where the checker does not apply to the kind. The global
generators and the action spaces the reference checkers sample from are seeded with 0
first, so every run gives the same verdicts.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["CHECKERS", "SB3_PYTHON", "Verdict", "run_match", "run_sb3"]

SB3_PYTHON = Path("/tmp/sb3-venv/bin/python")
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Verdict:
    status: str  # "killed", "crashed", "warned" or "passed"
    said: str = ""
    heard: tuple[str, ...] = ()  # every warning (but the noise), in order

    def beside(self, sound: Verdict | None) -> Verdict:
        """This verdict with the warnings the sound base gives too left out: "warned" only
        for a warning of the mutant's own."""
        if self.status != "warned" or sound is None:
            return self
        own = [w for w in self.heard if w not in sound.heard]
        return Verdict("warned", own[0], tuple(own)) if own else Verdict("passed", "", ())

    @property
    def kills(self) -> bool:
        return self.status in ("killed", "crashed")


def short(text: Any, width: int = 90) -> str:
    """``text`` on one line, without colour codes or memory addresses (the same on every run),
    its pipes escaped for a Markdown cell, cut at ``width``."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(str(text).split())).replace("|", "\\|")
    text = re.sub(r"0x[0-9a-fA-F]{6,}", "0x…", text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _seed(env: Any, kind: str) -> None:
    random.seed(0)
    np.random.seed(0)
    with contextlib.suppress(Exception):
        if kind in ("aec", "parallel"):
            for agent in env.possible_agents:
                env.action_space(agent).seed(0)
        else:
            env.action_space.seed(0)


def quietly(run: Callable[[], Any], raised: Callable[[BaseException], Verdict] | None = None) -> Verdict:
    """Run ``run()`` with its output and warnings captured and turn the outcome into a verdict."""
    with warnings.catch_warnings(record=True) as records, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                run()
        except Exception as error:
            if raised is not None:
                return raised(error)
            return Verdict("killed", f"{type(error).__name__}: {short(error)}")
        # an env's repr names its wrappers (the mutant's too): left out, so that the base's
        # warning and the mutant's compare equal
        heard = tuple(dict.fromkeys(short(re.sub(r"<\S*>", "<env>", str(r.message))) for r in records))
    return Verdict("warned", heard[0], heard) if heard else Verdict("passed")


def _spacealg_verdict(error: BaseException) -> Verdict:
    from spacealg.testing import EnvCheckError, JaxEnvCheckError

    if isinstance(error, (EnvCheckError, JaxEnvCheckError)):
        broken = [error, *getattr(error, "also", ())]
        names = ", ".join(dict.fromkeys(str(getattr(e, "property", "?")) for e in broken))
        return Verdict("killed", names)
    return Verdict("crashed", f"{type(error).__name__}: {short(error)}")


def run_spacealg(make: Callable[..., Any], kind: str, options: dict[str, Any]) -> Verdict:
    """``spacealg.testing.check`` with ``options`` (the same for every env)."""
    from spacealg.testing import check

    def run() -> None:
        random.seed(0)
        np.random.seed(0)
        check(make, **options)

    return quietly(run, _spacealg_verdict)


def run_gymnasium(make: Callable[..., Any], kind: str, options: dict[str, Any]) -> Verdict | None:
    """Gymnasium's ``check_env`` with its defaults (the render and close checks included)."""
    if kind != "gymnasium":
        return None
    from gymnasium.utils.env_checker import check_env

    def run() -> None:
        env = make()
        _seed(env, kind)
        check_env(env)

    return quietly(run)


def run_pettingzoo(make: Callable[..., Any], kind: str, options: dict[str, Any]) -> Verdict | None:
    """PettingZoo's ``api_test`` (AEC) or ``parallel_api_test``, 1000 cycles."""
    if kind not in ("aec", "parallel"):
        return None
    from pettingzoo.test import api_test, parallel_api_test

    def run() -> None:
        env = make()
        _seed(env, kind)
        (api_test if kind == "aec" else parallel_api_test)(env, num_cycles=1000)

    return quietly(run)


def run_jumanji(make: Callable[..., Any], kind: str, options: dict[str, Any]) -> Verdict | None:
    """Jumanji's smoke checks: ``check_env_does_not_smoke`` (one episode of random actions
    under ``jit``, each observation validated against the spec, all values finite) and
    ``check_env_specs_does_not_smoke``."""
    if kind != "jumanji":
        return None
    from jumanji.testing.env_not_smoke import check_env_does_not_smoke, check_env_specs_does_not_smoke

    def run() -> None:
        env = make()
        check_env_does_not_smoke(env)
        check_env_specs_does_not_smoke(env)

    return quietly(run)


def run_match(make: Callable[..., Any], reference: Callable[..., Any], options: dict[str, Any]) -> Verdict:
    """``check_envs_match(make, reference)`` with ``options``."""
    from spacealg.testing import check_envs_match

    def run() -> None:
        random.seed(0)
        np.random.seed(0)
        check_envs_match(make, reference, **options)

    return quietly(run, _spacealg_verdict)


def run_sb3(jobs: list[tuple[str, str | None, int]], python: Path = SB3_PYTHON) -> list[Verdict] | str:
    """SB3's ``check_env`` on each ``(base, operator or None, k)`` of ``jobs`` (Gymnasium
    bases), in one subprocess of ``python`` (a venv with stable-baselines3); the reason as a
    string where it cannot run."""
    if not jobs:
        return []
    if not python.exists():
        return f"{python} does not exist (make it: see benchmarks/mutation_score.py)"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE.parents[1])])}
    done = subprocess.run(
        [str(python), "-m", "mutants.checkers"], input=json.dumps(jobs), capture_output=True, text=True,
        env=environment, check=False,
    )
    if done.returncode != 0:
        return f"the SB3 subprocess failed: {short(done.stderr.strip().splitlines()[-1:] or done.returncode)}"
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    return [Verdict(status, said, tuple(heard)) for status, said, heard in rows]


def _sb3_main() -> None:
    """In the SB3 venv: read the jobs from stdin, print one JSON list of verdicts."""
    from stable_baselines3.common.env_checker import check_env

    from mutants.catalogue import BASES, OPERATORS, mutant

    bases = {b.name: b for b in BASES}
    operators = {o.name: o for o in OPERATORS}
    verdicts = []
    for base_name, operator_name, k in json.load(sys.stdin):
        base = bases[base_name]
        make = base.make if operator_name is None else mutant(base, operators[operator_name], k)

        def run(make: Callable[..., Any] = make) -> None:
            env = make()
            _seed(env, "gymnasium")
            check_env(env, warn=True)

        verdict = quietly(run)
        verdicts.append([verdict.status, verdict.said, list(verdict.heard)])
    print(json.dumps(verdicts))


# the checkers of one env, by column: spacealg first
CHECKERS: dict[str, Callable[[Callable[..., Any], str, dict[str, Any]], Verdict | None]] = {
    "spacealg": run_spacealg,
    "Gymnasium check_env": run_gymnasium,
    "PettingZoo api_test": run_pettingzoo,
    "Jumanji smoke checks": run_jumanji,
}

if __name__ == "__main__":
    _sb3_main()
