"""Check every registered environment of the JAX libraries (gymnax, Jumanji, pgx, Craftax,
JaxMARL, navix, XLand-MiniGrid, Brax, MuJoCo Playground): a thin call of the command line,

    python benchmarks/sweep_jax_envs.py [--only PREFIX] [--results FILE] [ids...] [spacealg check options]

runs ``spacealg check 'gymnax:*' 'jumanji:*' ... --report [--results FILE]`` (each
environment in a process of its own, a library that is not installed one "not run" row;
see docs/cli.md). ``--only gymnax:`` checks the ids starting so; ``--json FILE`` is the old
name of ``--results FILE``; every other option goes to ``spacealg check`` as it is
(``--examples``, ``--max-steps``, ``--budget``, ``--timeout``, ``-j``, ``--no-determinism``, ...).
The old ``--batch`` is gone: the command line checks with the JAX checker's own batch.
"""

from __future__ import annotations

import argparse
import sys

from spacealg.adapters.envs import JAX_PREFIXES
from spacealg.cli import main


def command(argv: list[str]) -> list[str]:
    """The ``spacealg`` arguments this script's ``argv`` stands for."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--only", default=None)
    parser.add_argument("--results", "--json", dest="results", default=None)
    parser.add_argument("--batch", default=None)
    known, rest = parser.parse_known_args(argv)
    if known.batch is not None:
        raise SystemExit("sweep_jax_envs.py: --batch is gone (spacealg check uses the JAX checker's own batch)")
    ids = [word for word in rest if word.partition(":")[0] in JAX_PREFIXES]
    rest = [word for word in rest if word not in ids]
    if not ids:
        ids = [f"{known.only}*"] if known.only else [f"{prefix}:*" for prefix in JAX_PREFIXES]
    return ["check", *ids, "--report", *(["--results", known.results] if known.results else []), *rest]


if __name__ == "__main__":
    sys.exit(main(command(sys.argv[1:])))
