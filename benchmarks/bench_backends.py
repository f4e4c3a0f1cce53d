"""spacealg on torch and JAX against raw kernels, TorchRL, gymnax and spacealg on NumPy.

    python benchmarks/bench_backends.py                      # N in 4096, 65536, 1000000
    python benchmarks/bench_backends.py --sizes 4096 --plot docs/backends_time_vs_n.png

The space (issue 11): ``{pos: Box(-1, 1, (16,), float32), d: Discrete(4), md:
MultiDiscrete([3, 4])}``, N agents. torch runs on ``cuda`` when ``torch.cuda.is_available()``,
else on the CPU; JAX on its default device. For each N and operation (sample, isin,
clamp) the rows are: spacealg on NumPy, on torch and on JAX (under ``jax.jit``), the raw
torch and raw JAX kernels drawing the same distributions, TorchRL's ``Composite`` spec
and gymnax's spaces (``vmap`` + ``jit``; gymnax has no MultiDiscrete, so its row covers
pos and d) where installed. Ratios: ``spacealg/raw`` (goal <= 1.5) per backend, and the
speed-up of spacealg on torch over NumPy and over TorchRL. ``--plot`` writes time vs N
per backend (a PNG).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's spacealg, not an installed one
import spacealg as sa

SPACE = sa.DictProduct(pos=sa.Box(-1.0, 1.0, (16,), np.float32), d=range(4), md=sa.Categorical([3, 4]))
TORCHRL_LIMIT = 70_000  # TorchRL's MultiCategorical.rand is a Python loop: 1,000,000 takes minutes on a CPU


def best(function: Callable[[], Any], sync: Callable[[Any], Any], budget: float = 1.0) -> float:
    """Best seconds per call: warm up, then repeat until ``budget`` seconds or 500 runs (a
    call of tens of microseconds needs hundreds of runs for its best time to settle on a
    shared machine)."""
    sync(function())
    sync(function())
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 500):
        t = time.perf_counter()
        sync(function())
        times.append(time.perf_counter() - t)
    return min(times)


def numpy_rows(n: int) -> dict[str, dict[str, float]]:
    generator = np.random.default_rng(0)
    batch = sa.sample(SPACE, n, rng=generator)
    return {"spacealg numpy": {
        "sample": best(lambda: sa.sample(SPACE, n, rng=generator), lambda x: x),
        "isin": best(lambda: sa.isin(batch, SPACE), lambda x: x),
        "clamp": best(lambda: sa.clamp(batch, SPACE), lambda x: x),
    }}


def torch_rows(n: int, device: str, torchrl_limit: int) -> dict[str, dict[str, float]]:
    import torch

    g = torch.Generator(device=device).manual_seed(0)
    sync = (lambda x: torch.cuda.synchronize()) if device == "cuda" else (lambda x: x)
    batch = sa.sample(SPACE, n, rng=g)
    nvec = torch.tensor([3, 4], device=device)

    def raw_sample() -> Any:
        pos = torch.empty((n, 16), device=device).uniform_(-1.0, 1.0, generator=g)
        d = torch.randint(0, 4, (n,), generator=g, device=device)
        md = torch.randint(0, 2**62, (n, 2), generator=g, device=device) % nvec
        return pos, d, md

    def raw_isin() -> Any:
        pos, d, md = batch["pos"], batch["d"], batch["md"]
        return ((pos >= -1) & (pos <= 1)).all(-1) & (d >= 0) & (d <= 3) & ((md >= 0) & (md < nvec)).all(-1)

    def raw_clamp() -> Any:
        return batch["pos"].clamp(-1.0, 1.0), batch["d"].clamp(0, 3), torch.minimum(batch["md"].clamp(min=0), nvec - 1)

    rows = {
        "spacealg torch": {
            "sample": best(lambda: sa.sample(SPACE, n, rng=g), sync),
            "isin": best(lambda: sa.isin(batch, SPACE), sync),
            "clamp": best(lambda: sa.clamp(batch, SPACE), sync),
        },
        "raw torch": {"sample": best(raw_sample, sync), "isin": best(raw_isin, sync), "clamp": best(raw_clamp, sync)},
    }
    try:
        from torchrl.data import Bounded, Categorical, Composite, MultiCategorical
    except ImportError:
        return rows
    spec = Composite(
        pos=Bounded(-1.0, 1.0, shape=(n, 16), dtype=torch.float32, device=device),
        d=Categorical(4, shape=(n,), device=device),
        md=MultiCategorical([3, 4], shape=(n, 2), device=device),
        shape=(n,), device=device,
    )
    td = spec.rand()
    rows["torchrl Composite"] = {
        "sample": best(spec.rand, sync, budget=0.1) if n <= torchrl_limit else float("nan"),
        "isin": best(lambda: spec.is_in(td), sync),  # one bool for the whole batch
        "clamp": best(lambda: spec.project(td), sync) if n <= TORCHRL_LIMIT else float("nan"),
    }
    return rows


def jax_rows(n: int) -> dict[str, dict[str, float]]:
    import jax
    import jax.numpy as jnp

    key = jax.random.key(0)
    sync = jax.block_until_ready
    batch = sa.sample(SPACE, n, rng=key)
    nvec = jnp.array([3, 4])
    sample = jax.jit(lambda k: sa.sample(SPACE, n, rng=k))
    isin = jax.jit(lambda b: sa.isin(b, SPACE))
    clamp = jax.jit(lambda b: sa.clamp(b, SPACE))

    @jax.jit
    def raw_sample(k: Any) -> Any:
        a, b, c = jax.random.split(k, 3)
        return (jax.random.uniform(a, (n, 16), jnp.float32, -1.0, 1.0), jax.random.randint(b, (n,), 0, 4),
                jax.random.randint(c, (n, 2), 0, nvec))

    @jax.jit
    def raw_isin(b: Any) -> Any:
        pos, d, md = b["pos"], b["d"], b["md"]
        return ((pos >= -1) & (pos <= 1)).all(-1) & (d >= 0) & (d <= 3) & ((md >= 0) & (md < nvec)).all(-1)

    @jax.jit
    def raw_clamp(b: Any) -> Any:
        return jnp.clip(b["pos"], -1.0, 1.0), jnp.clip(b["d"], 0, 3), jnp.clip(b["md"], 0, nvec - 1)

    rows = {
        "spacealg jax (jit)": {"sample": best(lambda: sample(key), sync), "isin": best(lambda: isin(batch), sync),
                               "clamp": best(lambda: clamp(batch), sync)},
        "raw jax (jit)": {"sample": best(lambda: raw_sample(key), sync), "isin": best(lambda: raw_isin(batch), sync),
                          "clamp": best(lambda: raw_clamp(batch), sync)},
        # called eagerly, as a script does: spacealg runs each call as one compiled program
        "spacealg jax (eager)": {"sample": best(lambda: sa.sample(SPACE, n, rng=key), sync),
                                 "isin": best(lambda: sa.isin(batch, SPACE), sync),
                                 "clamp": best(lambda: sa.clamp(batch, SPACE), sync)},
    }
    try:
        from gymnax.environments import spaces as gx
    except ImportError:
        return rows
    box, discrete = gx.Box(-1.0, 1.0, (16,), jnp.float32), gx.Discrete(4)
    keys = jax.random.split(key, n)
    gym_sample = jax.jit(jax.vmap(lambda k: (box.sample(k), discrete.sample(k))))
    gym_contains = jax.jit(jax.vmap(lambda p, d: box.contains(p) & discrete.contains(d)))
    rows["gymnax (vmap+jit; pos, d)"] = {
        "sample": best(lambda: gym_sample(keys), sync),
        "isin": best(lambda: gym_contains(batch["pos"], batch["d"]), sync),
        "clamp": float("nan"),
    }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[4096, 65536, 1_000_000])
    parser.add_argument("--plot", help="write a PNG of time vs N per backend here")
    parser.add_argument("--torchrl-limit", type=int,
                        help=f"largest N of TorchRL's sample row (default: {TORCHRL_LIMIT:,} on the CPU, every N on "
                        "CUDA, where N = 1,000,000 took 24 s a call on an H200)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (1 on a shared machine: NumPy uses one)")
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    import jax

    print(f"torch {torch.__version__} on {device} ({torch.get_num_threads()} CPU threads); "
          f"jax {jax.__version__} on {jax.devices()[0].platform}")
    results: dict[int, dict[str, dict[str, float]]] = {}
    for n in args.sizes:
        limit = args.torchrl_limit or (TORCHRL_LIMIT if device == "cpu" else n)
        rows = numpy_rows(n) | torch_rows(n, device, limit) | jax_rows(n)
        results[n] = rows
        print(f"\nN = {n:,}  (best time per call)")
        print(f"{'':<28}{'sample':>12}{'isin':>12}{'clamp':>12}")
        for name, times in rows.items():
            print(f"{name:<28}" + "".join(f"{_fmt(times[op]):>12}" for op in ("sample", "isin", "clamp")))
        print("ratios")
        _ratio(rows, "spacealg torch / raw torch", "spacealg torch", "raw torch")
        _ratio(rows, "spacealg jax / raw jax", "spacealg jax (jit)", "raw jax (jit)")
        _ratio(rows, "spacealg jax eager / raw jax", "spacealg jax (eager)", "raw jax (jit)")
        _ratio(rows, "numpy / spacealg torch (speed-up)", "spacealg numpy", "spacealg torch")
        _ratio(rows, "torchrl / spacealg torch (speed-up)", "torchrl Composite", "spacealg torch")
    if args.plot:
        plot(results, args.plot, device)


def _fmt(seconds: float) -> str:
    if seconds != seconds:
        return "-"
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def _ratio(rows: dict[str, dict[str, float]], label: str, a: str, b: str) -> None:
    if a in rows and b in rows:
        cells = [rows[a][op] / rows[b][op] for op in ("sample", "isin", "clamp")]
        print(f"  {label:<40}" + "".join("           -" if c != c else f"{c:11.2f}x" for c in cells))


def plot(results: dict[int, dict[str, dict[str, float]]], path: str, device: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(results)
    names = list(results[sizes[0]])
    figure, axes = plt.subplots(1, 3, figsize=(14, 4), sharey=True)
    for ax, op in zip(axes, ("sample", "isin", "clamp")):
        for name in names:
            ys = [results[n].get(name, {}).get(op, float("nan")) * 1e3 for n in sizes]
            if any(y == y for y in ys):
                ax.plot(sizes, ys, marker="o", label=name)
        ax.set(xscale="log", yscale="log", title=f"{op} ({device})", xlabel="N")
    axes[0].set_ylabel("ms per call")
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
