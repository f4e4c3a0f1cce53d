"""Batched masked sampling: one legal action per row of a batch of masks.

    python benchmarks/bench_masks.py

For N boards of a 15x15 game (a joint mask over MultiDiscrete([15, 15]), about half the
cells free) and N per-factor MultiDiscrete masks, each row prints the time per batch of
the anchors — a Python loop of Gymnasium's own ``sample(mask=...)`` per row, and the
NumPy loop users write (``rng.choice(np.flatnonzero(row))``) — beside spacealg's one
vectorised call ``sample(space, mask=masks)``, and the ratios (anchor / spacealg; > 1
means spacealg is faster).
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

import gymnasium.spaces as gs
import numpy as np

import spacealg as sa


def per_batch(function: Callable[[], object], repeat: int = 3) -> float:
    """Milliseconds per call, best of ``repeat`` runs."""
    number = 1
    while timeit.timeit(function, number=number) < 0.05 and number < 1000:
        number *= 4
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number * 1e3


HEADER = ("case", "N", "gymnasium loop", "numpy loop", "spacealg", "vs gym", "vs numpy")


def report(
    case: str, n: int, gym: Callable[[], object], numpy: Callable[[], object], ours: Callable[[], object]
) -> None:
    t_gym, t_np, t_ours = per_batch(gym), per_batch(numpy), per_batch(ours)
    print(
        f"{case:<40} {n:>6} {t_gym:>12.2f} ms {t_np:>9.2f} ms {t_ours:>7.2f} ms "
        f"{t_gym / t_ours:>7.1f}x {t_np / t_ours:>8.1f}x"
    )


def joint_case(n: int, rng: np.random.Generator) -> None:
    board, cells = sa.Categorical([15, 15]), gs.Discrete(225)
    joint = rng.random((n, 15, 15)) < 0.5
    flat, flat8 = joint.reshape(n, 225), joint.reshape(n, 225).astype(np.int8)
    report(
        "joint 15x15 board masks",
        n,
        lambda: [cells.sample(mask=row) for row in flat8],
        lambda: [rng.choice(np.flatnonzero(row)) for row in flat],
        lambda: sa.sample(board, mask=joint, rng=rng),
    )


def per_factor_case(n: int, rng: np.random.Generator) -> None:
    md = gs.MultiDiscrete([15, 15])
    rows, cols = (rng.random((n, 15)) < 0.5).astype(np.int8), (rng.random((n, 15)) < 0.5).astype(np.int8)
    rows[:, 0] = cols[:, 0] = 1
    report(
        "per-factor MultiDiscrete([15, 15]) masks",
        n,
        lambda: [md.sample(mask=(r, c)) for r, c in zip(rows, cols)],
        lambda: [(rng.choice(np.flatnonzero(r)), rng.choice(np.flatnonzero(c))) for r, c in zip(rows, cols)],
        lambda: sa.sample(md, n, mask=(rows, cols), rng=rng),
    )


def main() -> None:
    rng = np.random.default_rng(0)
    print("{:<40} {:>6} {:>15} {:>12} {:>10} {:>8} {:>9}".format(*HEADER))
    for n in (64, 1024, 16384):
        joint_case(n, rng)
        per_factor_case(n, rng)


if __name__ == "__main__":
    main()
