"""The same timings in two checkouts of spacealg, side by side: did a change make anything slower?

    python benchmarks/bench_before_after.py --before /path/to/old/checkout [--after .] [--runs 4]

Each run measures, in a fresh interpreter whose ``PYTHONPATH`` is one checkout (the two
alternate, so a noisy machine hurts both alike), the public operations issue 10 names:
flatten/unflatten single and batched, the emulation codec's write and read, sample and
contains/isin single and batched, on the spaces of bench_ops.py and bench_core.py, ranges'
batched isin/sample/clamp, the in-place clamp of a nested product, and masked draws (one
mask, a batch of masks, weights). Printed: the best time per call in each checkout and the
speed-up (before / after; > 1 means the after checkout is faster). Only names both checkouts
have are used (``spacealg.sample``, ``contains``, ``isin``, ``clamp_``, ``Masked``,
``spacealg.ops.flatten*``, ``spacealg.emulation.Codec``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

MEASURE = r"""
import json, sys, timeit, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, BENCHMARKS)
import gymnasium.spaces as gs
import numpy as np
import spacealg as sa
from bench_ops import discrete_dict, image_dict, nethack_obs, small_dict, to_spacealg
from spacealg.emulation import Codec
from spacealg.ops import flatten, flatten_batch, unflatten, unflatten_batch

def best(function, number):
    return min(timeit.repeat(function, number=number, repeat=7)) / number * 1e6

out = {}
for make, number in ((small_dict, 20000), (image_dict, 3000)):
    space = make(); space.seed(0); x = space.sample(); s = to_spacealg(space)
    flat = flatten(x, s); batch = sa.sample(s, 256, rng=0); flats = flatten_batch(batch, s)
    out[f"flatten, {make.__name__}"] = best(lambda: flatten(x, s), number)
    out[f"unflatten, {make.__name__}"] = best(lambda: unflatten(flat, s), number)
    out[f"flatten_batch(256), {make.__name__}"] = best(lambda: flatten_batch(batch, s), 200)
    out[f"unflatten_batch(256), {make.__name__}"] = best(lambda: unflatten_batch(flats, s), 200)
for make in (nethack_obs, discrete_dict, small_dict):
    space = make(); space.seed(0); x = space.sample()
    codec = Codec(space); row = codec.new_buffer(); codec.emulate_into(row, x)
    out[f"Codec.emulate_into, {make.__name__}"] = best(lambda: codec.emulate_into(row, x), 20000)
    out[f"Codec.nativize, {make.__name__}"] = best(lambda: codec.nativize(row), 20000)
box = sa.Box(-1.0, 1.0, shape=(16,), dtype=np.float32)
gym_box = gs.Box(-1.0, 1.0, (16,), np.float32)
digits = sa.ArraySpace(range(10), 8)
small = to_spacealg(small_dict())
boxes, digit_rows = sa.sample(box, 10000, rng=0), sa.sample(digits, 10000, rng=1)
smalls = sa.sample(small, 10000, rng=0)
x, member = boxes[0], sa.sample(small, rng=0)
out["sample(Box(16), 10000)"] = best(lambda: sa.sample(box, 10000), 50)
out["isin(10000 rows, Box(16))"] = best(lambda: sa.isin(boxes, box), 200)
out["sample(ArraySpace(range(10), 8), 10000)"] = best(lambda: sa.sample(digits, 10000), 50)
out["isin(10000 rows, ArraySpace(range(10), 8))"] = best(lambda: sa.isin(digit_rows, digits), 200)
out["sample(small Dict, 10000)"] = best(lambda: sa.sample(small, 10000), 50)
out["isin(10000 rows, small Dict)"] = best(lambda: sa.isin(smalls, small), 100)
out["contains(x, Box(16))"] = best(lambda: sa.contains(x, box), 20000)
out["sample(Box(16))"] = best(lambda: sa.sample(box), 20000)
out["contains(x, gymnasium Box(16))"] = best(lambda: sa.contains(x, gym_box), 20000)
out["sample(gymnasium Box(16))"] = best(lambda: sa.sample(gym_box), 20000)
out["contains(x, small Dict)"] = best(lambda: sa.contains(member, small), 20000)
out["sample(small Dict)"] = best(lambda: sa.sample(small), 20000)
steps, reals = np.random.default_rng(2).integers(-10, 1010, 10000), np.random.default_rng(3).uniform(-10, 110, 10000)
stepped, ten, hundred = range(0, 1000, 3), range(10), range(0, 100)
out["isin(10000 rows, range(0, 1000, 3))"] = best(lambda: sa.isin(steps, stepped), 200)
out["sample(range(10), 10000)"] = best(lambda: sa.sample(ten, 10000), 100)
out["clamp(10000 floats, range(0, 100))"] = best(lambda: sa.clamp(reals, hundred), 200)
board, boards = sa.Categorical([15, 15]), np.random.default_rng(1).random((1024, 15, 15)) < 0.5
legal = sa.Masked(sa.ArraySpace(range(15), 2), boards[0])
out["sample(Masked 15x15)"] = best(lambda: sa.sample(legal), 5000)
out["sample(Masked 15x15, 10000)"] = best(lambda: sa.sample(legal, 10000), 100)
fifteen, weights = sa.Masked(range(15), np.arange(15) % 3 != 0), np.linspace(0.0, 1.0, 15)
out["sample(Masked(range(15)), probability=p)"] = best(lambda: sa.sample(fifteen, probability=weights), 5000)
out["sample(Categorical([15, 15]), mask=1024 boards)"] = best(lambda: sa.sample(board, mask=boards), 100)
inner = sa.DictProduct(a=sa.Box(0, 1, (64,)), b=sa.Box(0, 1, (64,)))
nested = sa.DictProduct(x=inner, y=sa.DictProduct(p=inner, q=inner))
part = lambda: {"a": np.full((256, 64), 2.0), "b": np.zeros((256, 64))}
rows = {"x": part(), "y": {"p": part(), "q": part()}}
out["clamp_(3-level DictProduct, 256 rows)"] = best(lambda: sa.clamp_(rows, nested), 20)
# the checker's action draws: members(space) through Hypothesis's ConjectureData, 100 draws per example
from random import Random
from hypothesis.control import BuildContext
from hypothesis.internal.conjecture.data import ConjectureData
from spacealg.strategies import members

def draws(strategy):
    for seed in range(20):
        data = ConjectureData(random=Random(seed))
        with BuildContext(data, wrapped_test=None):
            for _ in range(100):
                data.draw(strategy)

for name, space in (("Discrete(3)", gs.Discrete(3)),
                    ("Tuple(Discrete(3), Box(2,))", gs.Tuple((gs.Discrete(3), gs.Box(-1.0, 1.0, (2,), np.float32))))):
    strategy = members(space)
    out[f"members draw, gymnasium {name}"] = best(lambda: draws(strategy), 1) / 2000
print(json.dumps({"spacealg": sa.__file__, "timings": out}))
"""


def measure(checkout: Path) -> dict[str, float]:
    """One run of the timings (microseconds per call), importing spacealg from ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    code = f"BENCHMARKS = {str(HERE)!r}\n{MEASURE}"
    result = subprocess.run(  # run in the checkout: ``-c`` puts the working directory first on the path
        [sys.executable, "-c", code], env=env, cwd=checkout, capture_output=True, text=True, check=True
    )
    found = json.loads(result.stdout.strip().splitlines()[-1])
    if not Path(found["spacealg"]).resolve().is_relative_to(checkout):
        raise SystemExit(f"{checkout}: spacealg was imported from {found['spacealg']}, not from the checkout")
    return found["timings"]  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the old checkout (its root)")
    parser.add_argument("--after", type=Path, default=HERE.parent, help="the new checkout (default: this one)")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout, alternating (best kept)")
    args = parser.parse_args()
    before: dict[str, float] = {}
    after: dict[str, float] = {}
    for run in range(args.runs):
        for checkout, best in ((args.before, before), (args.after, after)):
            for name, micros in measure(checkout.resolve()).items():
                best[name] = min(micros, best.get(name, float("inf")))
        print(f"run {run + 1} of {args.runs} done", file=sys.stderr)
    print(f"{'operation':<44} {'before':>11} {'after':>11} {'speed-up':>9}")
    for name, old in before.items():
        new = after[name]
        print(f"{name:<44} {old:9.2f}us {new:9.2f}us {old / new:8.2f}x")


if __name__ == "__main__":
    main()
