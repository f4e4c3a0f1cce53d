"""Steps per second of raw vs spacealg-emulated environments inside the same vector engine.

    python benchmarks/bench_vector.py                       # Gymnasium's engines
    benchmarks/.puffer-venv/bin/python benchmarks/bench_vector.py   # + PufferLib 2.0.2's
    PYTHONPATH=. benchmarks/.puffer3-venv/bin/python benchmarks/bench_vector.py  # + PufferLib 3.0.0's

For CartPole and a Dict-observation env (bench_env.DictObsEnv) at 1, 8 and 64
sub-environments, each engine runs the raw environment and the same environment wrapped in
``spacealg.emulation.GymnasiumPufferEnv`` with the same seeded actions:

- ``Sync``: ``gymnasium.vector.SyncVectorEnv``;
- ``Async``: ``gymnasium.vector.AsyncVectorEnv(shared_memory=True)`` (one process per
  sub-environment: on a 2-core machine keep ``--async-steps`` small);
- ``Sync+VectorPufferEnv``: the Sync engine of raw envs seen as a PufferLib-style buffer env
  (``spacealg.vector.VectorPufferEnv``), compared with the Sync engine itself;
- ``puffer.Serial``/``puffer.Multiprocessing`` (where PufferLib is installed): PufferLib's own
  ``GymnasiumPufferEnv`` (the "raw" column) vs spacealg's through ``for_pufferlib``.

Only ``step`` is timed; rounds are interleaved and the fastest round is kept. Printed:
sub-environment steps per second and the ratio of times, emulated / raw (goal: <= 1.30).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from bench_env import DictObsEnv
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

from spacealg.emulation import GymnasiumPufferEnv
from spacealg.vector import VectorPufferEnv, for_pufferlib

warnings.filterwarnings("ignore")

try:
    import pufferlib
    import pufferlib.emulation
    import pufferlib.vector
except Exception as error:  # ImportError, or a numpy-1 extension under numpy 2
    pufferlib = None
    puffer_error = f"{type(error).__name__}: {error}"
else:
    puffer_error = ""

ENVS: dict[str, Callable[[], Any]] = {
    "CartPole-v1": lambda: gymnasium.make("CartPole-v1"),
    "Dict obs": DictObsEnv,
}


def _emulated(make: Callable[[], Any]) -> Callable[[], Any]:
    return lambda: GymnasiumPufferEnv(make())


def _puffer_emulated(make: Callable[[], Any]) -> Callable[..., Any]:
    """PufferLib's own emulation; PufferLib 3 passes buf= and seed= to the creator."""
    return lambda **kwargs: pufferlib.emulation.GymnasiumPufferEnv(make(), **kwargs)


def _time_gymnasium(envs: Any, actions: np.ndarray) -> float:
    step = envs.step
    start = time.perf_counter()
    for a in actions:
        step(a)
    return time.perf_counter() - start


def _time_puffer(envs: Any, actions: np.ndarray) -> float:
    send, recv = envs.send, envs.recv
    start = time.perf_counter()
    for a in actions:
        send(a)
        recv()
    return time.perf_counter() - start


def _engines(make: Callable[[], Any], n: int) -> dict[str, tuple[Callable[[], Any], Callable[[], Any], Any]]:
    """engine name -> (build raw, build emulated, timer)."""
    engines: dict[str, Any] = {
        "Sync": (lambda: SyncVectorEnv([make] * n), lambda: SyncVectorEnv([_emulated(make)] * n), _time_gymnasium),
        "Async": (
            lambda: AsyncVectorEnv([make] * n, shared_memory=True),
            lambda: AsyncVectorEnv([_emulated(make)] * n, shared_memory=True),
            _time_gymnasium,
        ),
        "Sync+VectorPufferEnv": (
            lambda: SyncVectorEnv([make] * n),
            lambda: VectorPufferEnv(SyncVectorEnv([make] * n)),
            _time_gymnasium,
        ),
    }
    if pufferlib is not None:
        pv = pufferlib.vector
        engines["puffer.Serial"] = (
            lambda: pv.make(_puffer_emulated(make), num_envs=n, backend=pv.Serial),
            lambda: pv.make(for_pufferlib(_emulated(make)), num_envs=n, backend=pv.Serial),
            _time_puffer,
        )
        workers = 2 if n % 2 == 0 else 1
        engines["puffer.Multiprocessing"] = (
            lambda: pv.make(_puffer_emulated(make), num_envs=n, num_workers=workers, backend=pv.Multiprocessing),
            lambda: pv.make(for_pufferlib(_emulated(make)), num_envs=n, num_workers=workers,
                            backend=pv.Multiprocessing),
            _time_puffer,
        )
    return engines


def bench(name: str, make: Callable[[], Any], n: int, engine: str, steps: int, rounds: int) -> None:
    build_raw, build_emulated, timer = _engines(make, n)[engine]
    contenders = {"raw": build_raw(), "emulated": build_emulated()}
    actions = np.random.default_rng(0).integers(0, 2 if name.startswith("Cart") else 4, size=(steps, n))
    best = {key: float("inf") for key in contenders}
    try:
        for envs in contenders.values():
            envs.reset(seed=0)
            timer(envs, actions[: min(steps, 20)])  # warm up
        for _ in range(rounds):
            for key, envs in contenders.items():
                best[key] = min(best[key], timer(envs, actions))
    finally:
        for envs in contenders.values():
            envs.close()
    raw_sps, emu_sps = (steps * n / best[k] for k in ("raw", "emulated"))
    ratio = best["emulated"] / best["raw"]
    flag = "" if ratio <= 1.3 else "  (> 1.30)"
    print(f"{name:<12} {engine:<22} {n:>3} {raw_sps:>12,.0f} {emu_sps:>12,.0f} {ratio:>7.2f}{flag}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--steps", type=int, default=4000, help="sub-environment steps per round and env (Sync)")
    parser.add_argument("--async-steps", type=int, default=200, help="the same for process-based engines")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--engines", nargs="+", default=None, help="a subset of the engine names")
    args = parser.parse_args()
    print(f"gymnasium {gymnasium.__version__}, numpy {np.__version__}, "
          + (f"pufferlib {pufferlib.__version__}" if pufferlib else f"no pufferlib ({puffer_error})"))
    print(f"{'env':<12} {'engine':<22} {'n':>3} {'raw steps/s':>12} {'emulated':>12} {'ratio':>7}")
    for name, make in ENVS.items():
        for n in args.sizes:
            for engine in _engines(make, n):
                if args.engines and engine not in args.engines:
                    continue
                process_based = engine in ("Async", "puffer.Multiprocessing")
                steps = max(args.async_steps if process_based else args.steps // n, 20)
                bench(name, make, n, engine, steps, args.rounds)


if __name__ == "__main__":
    main()
