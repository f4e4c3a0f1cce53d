"""Run ``check_jax_env`` on every registered gymnax and Jumanji environment (and the pgx,
Craftax, JaxMARL, navix, XLand-MiniGrid, Brax and MuJoCo Playground ones that are installed,
by their ids: see ``spacealg.testing.jax_env.source``) and print a
Markdown table: env, result (every broken property: after a failure the check is rerun
without it), steps/s of the search, steps/s inside the compiled rollouts, seconds of
compilation and probes, seconds in all; then each failure's message.

    python benchmarks/sweep_jax_envs.py [--examples N] [--max-steps N] [--budget S] [--only PREFIX]
        [--json results.json] [--list] [ids...]

Each environment is checked in a fresh subprocess (a crash or a hang costs only that row;
``--timeout`` seconds each; the failures found before a timeout are kept; an environment
its library cannot make here, for a missing package or a required argument, is "not run"
with the reason). The figures
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import time

ONE = textwrap.dedent(
    """
    import json, sys, time
    from spacealg.testing.jax_env import check_jax_env, JaxEnvCheckError
    target, options = sys.argv[1], json.loads(sys.argv[2])
    from spacealg.testing.jax_env.source import jax_source
    started = time.perf_counter()
    try:  # an environment that cannot be made here (a missing package, a required argument) is not run
        jax_source(target).make()
    except Exception as error:
        why = f"not run: cannot make it: {type(error).__name__}: {error}".splitlines()[0][:300]
        print("RESULT " + json.dumps({"result": why, "failures": [], "total_seconds": time.perf_counter() - started}))
        sys.exit(0)
    failures, skip = [], []
    row = {}
    for _ in range(4):  # after a failure, check the other properties (skip the broken ones)
        try:
            report = check_jax_env(target, skip=skip, **options)
            row = {"steps": report.steps, "seconds": report.seconds, "setup_seconds": report.setup_seconds,
                   "rollout_seconds": report.rollout_seconds, "properties": list(report.properties),
                   "not_checked": report.not_checked}
            break
        except JaxEnvCheckError as error:
            if error.property in skip:  # not skippable (a probe reports it before any law)
                break
            failures.append({"property": error.property, "message": str(error),
                             "reproduction": error.reproduction(), "seconds": time.perf_counter() - started})
            skip.append(error.property)
            print("PARTIAL " + json.dumps({"failures": failures}, default=str), flush=True)
        except Exception as error:
            failures.append({"property": "error: " + type(error).__name__, "message": str(error)[:2000]})
            break
    row["failures"] = failures
    row["result"] = "passed" if not failures else "FAILED: " + ", ".join(f["property"] for f in failures)
    row["total_seconds"] = time.perf_counter() - started
    print("RESULT " + json.dumps(row, default=str))
    """
)


CRAFTAX = ("Craftax-Classic-Symbolic-v1", "Craftax-Symbolic-v1", "Craftax-Classic-Pixels-v1", "Craftax-Pixels-v1")


def _registered(prefix: str) -> list[str]:
    """The names ``prefix``'s library registers (empty if it is not installed)."""
    try:
        if prefix == "gymnax":
            import gymnax

            return list(gymnax.registered_envs)
        if prefix == "jumanji":
            import jumanji

            return sorted(jumanji.registered_environments())
        if prefix == "pgx":
            import pgx

            return list(pgx.available_envs())
        if prefix == "craftax":
            import craftax  # noqa: F401

            return list(CRAFTAX)
        if prefix == "jaxmarl":
            from jaxmarl.registration import registered_envs

            return list(registered_envs)
        if prefix == "navix":
            import navix

            return list(navix.registry())
        if prefix == "xminigrid":
            import xminigrid

            return list(xminigrid.registered_environments())
        if prefix == "brax":
            from brax import envs

            return sorted(envs._envs)  # brax has no public list of its registered names
        if prefix == "playground":
            from mujoco_playground import registry

            return list(registry.ALL_ENVS)
    except ImportError:
        pass
    return []


PREFIXES = ("gymnax", "jumanji", "pgx", "craftax", "jaxmarl", "navix", "xminigrid", "brax", "playground")


def targets(only: str | None) -> list[str]:
    found = [f"{prefix}:{name}" for prefix in PREFIXES for name in _registered(prefix)]
    return [t for t in found if only is None or t.startswith(only)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--max-steps", type=int, default=100)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--batch", type=int, default=None, help="rows per compiled batch (default: the checker's)")
    parser.add_argument("--no-determinism", action="store_true", help="skip the relational laws (faster)")
    parser.add_argument("--only", default=None, help="a prefix of the targets (gymnax:, jumanji:Snake)")
    parser.add_argument("--json", default=None, help="write the rows to this file")
    parser.add_argument("--list", action="store_true", help="print the ids that would be checked, and stop")
    parser.add_argument("targets", nargs="*", help="ids to check instead of every registered one")
    arguments = parser.parse_args()
    if arguments.list:
        print("\n".join(targets(arguments.only)))
        return
    options = {"max_examples": arguments.examples, "max_steps": arguments.max_steps, "budget": arguments.budget,
               "determinism": not arguments.no_determinism}
    if arguments.batch is not None:
        options["batch"] = arguments.batch
    rows = []
    for target in arguments.targets or targets(arguments.only):
        started = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, "-c", ONE, target, json.dumps(options)],
                capture_output=True, text=True, timeout=arguments.timeout,
            )
            line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
            row = json.loads(line[-1][7:]) if line else {"result": "crashed", "message": done.stderr[-2000:]}
        except subprocess.TimeoutExpired as expired:  # keep the failures found before the timeout
            out = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
            partial = [x for x in out.splitlines() if x.startswith("PARTIAL ")]
            failures = json.loads(partial[-1][8:])["failures"] if partial else []
            found = ", ".join(f["property"] for f in failures)
            after = f" (after finding: {found})" if found else ""
            row = {"result": f"timeout after {arguments.timeout:.0f} s{after}", "failures": failures}
        row["target"], row["wall"] = target, time.perf_counter() - started
        rows.append(row)
        searching = row.get("seconds", 0) - row.get("setup_seconds", 0)
        rate = f"{row['steps'] / searching:,.0f}" if row.get("steps") and searching > 0 else ""
        inside = f"{row['steps'] / row['rollout_seconds']:,.0f}" if row.get("rollout_seconds") else ""
        print(f"| {target} | {row['result']} | {rate} | {inside} | {row.get('setup_seconds', 0):.1f} | "
              f"{row['wall']:.1f} |", flush=True)
        if arguments.json:
            with open(arguments.json, "w") as handle:
                json.dump(rows, handle, indent=1, default=str)
    for row in rows:
        for failure in row.get("failures", []):
            print(f"\n### {row['target']}: {failure['property']}\n\n```\n{failure.get('message', '')}\n```")


if __name__ == "__main__":
    main()
