"""The wall time of one sweep (``spacealg check IDS ...``: each environment in a process of
its own) on 1 and 2 local workers, and as Ray tasks on a local Ray instance of 2 CPUs, with
the speed-ups over one worker (issue 37's goal: 2 workers >= 1.8x one).

    python benchmarks/bench_sweep.py [--examples N] [--max-steps N] [--repeat R]

The work is fixed by the number of examples (``--budget 0``: no time budget, which would
make every run last as long), on a fixed list of Gymnasium ids; Ray's start is not
counted. On a machine with other work running the ratios fall short of what the cores
give: say the load (printed) with the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from spacealg.sweep import sweep

IDS = (
    "CartPole-v1", "MountainCar-v0", "Acrobot-v1", "Pendulum-v1", "FrozenLake-v1", "Taxi-v4", "CliffWalking-v1",
    "Blackjack-v1",
)


def one_sweep(argv: list[str], **how: object) -> float:
    """Seconds of one sweep of :data:`IDS` (every row checked, none read from a file)."""
    started = time.perf_counter()
    rows = sweep(IDS, argv, progress=False, **how)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    broken = [row["env_id"] for row in rows if row["status"] not in ("passed", "failed")]
    if broken:
        raise SystemExit(f"not a fair comparison: {broken} could not be checked")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=60, help="examples per environment (default 60)")
    parser.add_argument("--max-steps", type=int, default=100, help="longest episode (default 100)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, the median reported (default 1)")
    arguments = parser.parse_args()
    argv = ["-n", str(arguments.examples), "--max-steps", str(arguments.max_steps), "--budget", "0"]
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    runs = {"1 worker": {"jobs": 1}, "2 workers": {"jobs": 2}, "Ray local, 2 CPUs": {"ray_address": "local"}}
    load = os.getloadavg()[0]
    times = {name: statistics.median(one_sweep(argv, **how) for _ in range(arguments.repeat))  # type: ignore[arg-type]
             for name, how in runs.items()}
    ray.shutdown()
    print(f"sweep of {len(IDS)} Gymnasium ids, {' '.join(argv)}; load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs")
    one = times["1 worker"]
    for name, seconds in times.items():
        print(f"  {name:<18} {seconds:7.1f} s   {one / seconds:4.2f}x one worker")


if __name__ == "__main__":
    main()
