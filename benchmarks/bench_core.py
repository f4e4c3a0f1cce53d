"""The core protocol against Gymnasium, side by side, in one run.

    python benchmarks/bench_core.py

Rows: batched sampling and membership (spacealg's vectorised ``sample(s, n)`` and
``isin``) against loops of Gymnasium's per-element calls, and single calls (dispatch
overhead on the common case). Ratios are speed-ups (> 1: spacealg faster) for batches and
cost ratios (spacealg / Gymnasium; < 1: spacealg cheaper) for single calls.
Goals (issue 2): batched >= 100x; single calls <= 1.5x.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

import gymnasium.spaces as gs
import numpy as np

import spacealg as sa

N = 10_000


def seconds(function: Callable[[], object], number: int, repeat: int = 5) -> float:
    """Best time of ``repeat`` runs of ``number`` calls, per call, in seconds."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number


def batch_row(name: str, looped: Callable[[], object], batched: Callable[[], object]) -> None:
    t_loop, t_batch = seconds(looped, 1, 3), seconds(batched, 5)
    print(f"{name:<52} {t_loop * 1e3:10.2f} ms {t_batch * 1e3:10.3f} ms {t_loop / t_batch:9.0f}x")


def single_row(name: str, reference: Callable[[], object], ours: Callable[[], object]) -> None:
    t_ref, t_ours = seconds(reference, 20_000), seconds(ours, 20_000)
    print(f"{name:<52} {t_ref * 1e6:10.2f} us {t_ours * 1e6:10.2f} us {t_ours / t_ref:9.2f}x")


def main() -> None:
    gym_box = gs.Box(-1.0, 1.0, shape=(16,), dtype=np.float32)
    box = sa.Box(-1.0, 1.0, shape=(16,), dtype=np.float32)
    gym_box.seed(0)
    batch = sa.sample(box, N, rng=0)
    rows = list(batch)
    gym_image = gs.Box(0, 255, shape=(84, 84, 3), dtype=np.uint8)
    image = sa.Box(0, 255, shape=(84, 84, 3), dtype=np.uint8)
    digits = sa.ArraySpace(range(10), 8)
    gym_digits = gs.MultiDiscrete([10] * 8)
    digit_batch = sa.sample(digits, N, rng=1)
    interval = sa.Interval(0, 1)
    scalars = sa.sample(interval, N, rng=2)

    print(f"{'batches of 10,000':<52} {'loop':>13} {'batched':>13} {'speed-up':>10}")
    batch_row(
        "sample: gymnasium Box(16).sample() x N | sample(box, N)",
        lambda: [gym_box.sample() for _ in range(N)],
        lambda: sa.sample(box, N),
    )
    batch_row(
        "contains: gymnasium loop | isin(batch, box)",
        lambda: [gym_box.contains(x) for x in rows],
        lambda: sa.isin(batch, box),
    )
    batch_row(
        "contains: spacealg loop | isin(batch, box)",
        lambda: [sa.contains(x, box) for x in rows],
        lambda: sa.isin(batch, box),
    )
    batch_row(
        "clamp: spacealg loop | clamp(batch, box)",
        lambda: [sa.clamp(x * 2, box) for x in rows],
        lambda: sa.clamp(batch * 2, box),
    )
    batch_row(
        "MultiDiscrete(8x10).sample() x N | sample(digits, N)",
        lambda: [gym_digits.sample() for _ in range(N)],
        lambda: sa.sample(digits, N),
    )
    batch_row(
        "MultiDiscrete contains loop | isin(batch, digits)",
        lambda: [gym_digits.contains(x) for x in digit_batch],
        lambda: sa.isin(digit_batch, digits),
    )
    batch_row(
        "Interval: contains loop | isin(batch, interval)",
        lambda: [sa.contains(float(x), interval) for x in scalars],
        lambda: sa.isin(scalars, interval),
    )

    generator = np.random.default_rng(0)
    t_numpy = seconds(lambda: generator.uniform(-1.0, 1.0, (N, 16)), 20)
    t_ours = seconds(lambda: sa.sample(box, N, rng=generator), 20)
    print(
        f"{'sample(Box(-1,1,(16,),float32), N) vs numpy uniform (N,16)':<52} {t_numpy * 1e3:10.3f} ms "
        f"{t_ours * 1e3:10.3f} ms {t_ours / t_numpy:8.2f}x (goal <= 1.5x, issue 16)"
    )

    x, img = batch[0], image.sample(rng=0)
    print()
    print(f"{'single calls':<52} {'gymnasium':>13} {'spacealg':>13} {'cost ratio':>10}")
    single_row(
        "contains(x, Box(16))  vs  gym_box.contains(x)", lambda: gym_box.contains(x), lambda: sa.contains(x, box)
    )
    single_row("x in box  vs  x in gym_box", lambda: x in gym_box, lambda: x in box)
    single_row("sample(Box(16))  vs  gym_box.sample()", gym_box.sample, lambda: sa.sample(box))
    single_row("contains(img, Box(84,84,3) uint8)", lambda: gym_image.contains(img), lambda: sa.contains(img, image))
    single_row("sample(Box(84,84,3) uint8)", gym_image.sample, lambda: sa.sample(image))
    single_row(
        "contains(x, gymnasium Box(16)) through spacealg",
        lambda: gym_box.contains(x),
        lambda: sa.contains(x, gym_box),
    )
    single_row("sample(gymnasium Box(16)) through spacealg", gym_box.sample, lambda: sa.sample(gym_box))


if __name__ == "__main__":
    main()
