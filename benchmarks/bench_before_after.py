"""The same timings in two checkouts of spacealg, row by row: did a change make anything slower?

    python benchmarks/bench_before_after.py --before /path/to/old/checkout [--after .] [--rounds 5]

One worker process per checkout (its ``PYTHONPATH`` that checkout) builds the public
operations issue 10 names once: flatten/unflatten single and batched, the emulation codec's
write and read, sample and contains/isin single and batched, on the spaces of bench_ops.py
and bench_core.py, ranges' batched isin/sample/clamp, the in-place clamp of a nested
product, masked draws (one mask, a batch of masks, weights), and the checker's member draws.
Then, for each of ``--rounds`` rounds, every row is timed in one checkout and at once in the
other (the order swapped every round: ABBA...), so a machine whose load drifts slows both
sides of a ratio alike. Printed per row: the median time per call in each checkout, the
median of the rounds' speed-ups (before / after; > 1 means the after checkout is faster),
their spread (lowest and highest), and the ratio of each side's best time over all rounds.
Only names both checkouts have are used (``spacealg.sample``, ``contains``, ``isin``,
``clamp_``, ``Masked``, ``spacealg.ops.flatten*``, ``spacealg.emulation.Codec``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

MEASURE = r"""
import functools, json, sys, timeit, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, BENCHMARKS)
import gymnasium.spaces as gs
import numpy as np
import spacealg as sa
from bench_ops import discrete_dict, image_dict, nethack_obs, small_dict, to_spacealg
from spacealg.emulation import Codec
from spacealg.ops import flatten, flatten_batch, unflatten, unflatten_batch

rows = {}  # name -> (the call, calls per timing, calls of the operation per call)

def row(name, number, function, *args, per=1, **kwargs):
    rows[name] = (functools.partial(function, *args, **kwargs), number, per)

for make, number in ((small_dict, 20000), (image_dict, 3000)):
    space = make(); space.seed(0); x = space.sample(); s = to_spacealg(space)
    flat = flatten(x, s); batch = sa.sample(s, 256, rng=0); flats = flatten_batch(batch, s)
    row(f"flatten, {make.__name__}", number, flatten, x, s)
    row(f"unflatten, {make.__name__}", number, unflatten, flat, s)
    row(f"flatten_batch(256), {make.__name__}", 200, flatten_batch, batch, s)
    row(f"unflatten_batch(256), {make.__name__}", 200, unflatten_batch, flats, s)
for make in (nethack_obs, discrete_dict, small_dict):
    space = make(); space.seed(0); x = space.sample()
    codec = Codec(space); buffer = codec.new_buffer(); codec.emulate_into(buffer, x)
    row(f"Codec.emulate_into, {make.__name__}", 20000, codec.emulate_into, buffer, x)
    row(f"Codec.nativize, {make.__name__}", 20000, codec.nativize, buffer)
box = sa.Box(-1.0, 1.0, shape=(16,), dtype=np.float32)
gym_box = gs.Box(-1.0, 1.0, (16,), np.float32)
digits = sa.ArraySpace(range(10), 8)
small = to_spacealg(small_dict())
boxes, digit_rows = sa.sample(box, 10000, rng=0), sa.sample(digits, 10000, rng=1)
smalls = sa.sample(small, 10000, rng=0)
x, member = boxes[0], sa.sample(small, rng=0)
row("sample(Box(16), 10000)", 50, sa.sample, box, 10000)
row("isin(10000 rows, Box(16))", 200, sa.isin, boxes, box)
row("sample(ArraySpace(range(10), 8), 10000)", 50, sa.sample, digits, 10000)
row("isin(10000 rows, ArraySpace(range(10), 8))", 200, sa.isin, digit_rows, digits)
row("sample(small Dict, 10000)", 50, sa.sample, small, 10000)
row("isin(10000 rows, small Dict)", 100, sa.isin, smalls, small)
row("contains(x, Box(16))", 20000, sa.contains, x, box)
row("sample(Box(16))", 20000, sa.sample, box)
row("contains(x, gymnasium Box(16))", 20000, sa.contains, x, gym_box)
row("sample(gymnasium Box(16))", 20000, sa.sample, gym_box)
row("contains(x, small Dict)", 20000, sa.contains, member, small)
row("sample(small Dict)", 20000, sa.sample, small)
steps, reals = np.random.default_rng(2).integers(-10, 1010, 10000), np.random.default_rng(3).uniform(-10, 110, 10000)
stepped, ten, hundred = range(0, 1000, 3), range(10), range(0, 100)
row("isin(10000 rows, range(0, 1000, 3))", 200, sa.isin, steps, stepped)
row("sample(range(10), 10000)", 100, sa.sample, ten, 10000)
row("clamp(10000 floats, range(0, 100))", 200, sa.clamp, reals, hundred)
board, boards = sa.Categorical([15, 15]), np.random.default_rng(1).random((1024, 15, 15)) < 0.5
legal = sa.Masked(sa.ArraySpace(range(15), 2), boards[0])
row("sample(Masked 15x15)", 5000, sa.sample, legal)
row("sample(Masked 15x15, 10000)", 100, sa.sample, legal, 10000)
fifteen, weights = sa.Masked(range(15), np.arange(15) % 3 != 0), np.linspace(0.0, 1.0, 15)
row("sample(Masked(range(15)), probability=p)", 5000, sa.sample, fifteen, probability=weights)
row("sample(Categorical([15, 15]), mask=1024 boards)", 100, sa.sample, board, mask=boards)
inner = sa.DictProduct(a=sa.Box(0, 1, (64,)), b=sa.Box(0, 1, (64,)))
nested = sa.DictProduct(x=inner, y=sa.DictProduct(p=inner, q=inner))
part = lambda: {"a": np.full((256, 64), 2.0), "b": np.zeros((256, 64))}
nested_rows = {"x": part(), "y": {"p": part(), "q": part()}}
row("clamp_(3-level DictProduct, 256 rows)", 20, sa.clamp_, nested_rows, nested)
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
    row(f"members draw, gymnasium {name}", 1, draws, members(space), per=2000)
for function, number, per in rows.values():  # warm: first calls build plans and load backends
    function()
print(json.dumps({"spacealg": sa.__file__, "rows": list(rows)}), flush=True)
for line in sys.stdin:  # one row's name a line: its best time per call (microseconds), best of REPEAT
    function, number, per = rows[json.loads(line)]
    micros = min(timeit.repeat(function, number=number, repeat=REPEAT)) / number / per * 1e6
    print(json.dumps(micros), flush=True)
"""


class Worker:
    """A process that imports spacealg from ``checkout``, builds the rows, then times one row per request."""

    def __init__(self, checkout: Path, repeat: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        code = f"BENCHMARKS = {str(HERE)!r}\nREPEAT = {repeat}\n{MEASURE}"
        self.process = subprocess.Popen(  # run in the checkout: ``-c`` puts the working directory first on the path
            [sys.executable, "-c", code], env=env, cwd=checkout, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )
        ready = json.loads(self._line())
        if not Path(ready["spacealg"]).resolve().is_relative_to(checkout):
            self.close()
            raise SystemExit(f"{checkout}: spacealg was imported from {ready['spacealg']}, not from the checkout")
        self.rows: list[str] = ready["rows"]

    def _line(self) -> str:
        line = self.process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit(f"a worker exited (status {self.process.wait()})")
        return line

    def time(self, name: str) -> float:
        """Row ``name``'s best time per call, in microseconds."""
        self.process.stdin.write(json.dumps(name) + "\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        return float(json.loads(self._line()))

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the old checkout (its root)")
    parser.add_argument("--after", type=Path, default=HERE.parent, help="the new checkout (default: this one)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each times every row in both checkouts")
    parser.add_argument("--repeat", type=int, default=3, help="timings per row and round (the best is kept)")
    parser.add_argument("--only", default="", help="only the rows whose name contains this text")
    args = parser.parse_args()
    before, after = Worker(args.before.resolve(), args.repeat), Worker(args.after.resolve(), args.repeat)
    names = [name for name in before.rows if name in after.rows and args.only in name]
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in names}
    try:
        for round_ in range(args.rounds):
            for name in names:
                pair = (before, after) if (round_ + names.index(name)) % 2 == 0 else (after, before)
                for worker in pair:
                    times[name][worker is after].append(worker.time(name))
            print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr)
    finally:
        before.close()
        after.close()
    print(f"{'operation':<48} {'before':>11} {'after':>11} {'speed-up':>9}  {'spread':>11}  {'best/best':>9}")
    for name, (old, new) in times.items():
        ratios = [b / a for b, a in zip(old, new)]
        print(f"{name:<48} {statistics.median(old):9.2f}us {statistics.median(new):9.2f}us "
              f"{statistics.median(ratios):8.2f}x  {min(ratios):.2f}-{max(ratios):.2f}  {min(old) / min(new):8.2f}x")


if __name__ == "__main__":
    main()
