"""The cost of calling spacealg's generic functions on Gymnasium spaces directly.

    python benchmarks/bench_adapters.py

Each row prints Gymnasium's own method per call, spacealg's generic function on the same
Gymnasium space, and the ratio (spacealg / Gymnasium; < 1 means spacealg is faster).
Goal: ``contains(x, box)`` and ``sample(box)`` at most ~1.5x ``box.contains(x)`` and
``box.sample()`` (the conversion to a spacealg space is cached per instance, so a call
costs one dispatch plus the work).
"""

from __future__ import annotations

import timeit
import warnings
from collections.abc import Callable

import gymnasium.spaces as gs
import numpy as np

import spacealg

warnings.filterwarnings("ignore")


def per_call(function: Callable[[], object], number: int = 20000) -> float:
    """Microseconds per call, best of five runs."""
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6


def row(name: str, reference: Callable[[], object], ours: Callable[[], object]) -> None:
    ours()  # the first call converts the space (cached afterwards)
    t_ref, t_ours = per_call(reference), per_call(ours)
    print(f"{name:<34} {t_ref:8.2f} us {t_ours:8.2f} us {t_ours / t_ref:7.2f}x")


def main() -> None:
    box = gs.Box(-1.0, 1.0, shape=(8,), dtype=np.float32)
    image = gs.Box(0, 255, shape=(84, 84, 3), dtype=np.uint8)
    discrete = gs.Discrete(5)
    nested = gs.Dict({"pos": box, "kind": discrete, "bits": gs.MultiBinary(4)})
    x, y, z = box.sample(), image.sample(), nested.sample()
    print(f"{'call':<34} {'gymnasium':>11} {'spacealg':>11} {'ratio':>8}")
    row("contains(x, Box(8,))", lambda: box.contains(x), lambda: spacealg.contains(x, box))
    row("sample(Box(8,))", box.sample, lambda: spacealg.sample(box))
    row("contains(x, Box(84,84,3) uint8)", lambda: image.contains(y), lambda: spacealg.contains(y, image))
    row("sample(Box(84,84,3) uint8)", image.sample, lambda: spacealg.sample(image))
    row("contains(3, Discrete(5))", lambda: discrete.contains(3), lambda: spacealg.contains(3, discrete))
    row("sample(Discrete(5))", discrete.sample, lambda: spacealg.sample(discrete))
    row("contains(x, Dict)", lambda: nested.contains(z), lambda: spacealg.contains(z, nested))
    row("sample(Dict)", nested.sample, lambda: spacealg.sample(nested))


if __name__ == "__main__":
    main()
