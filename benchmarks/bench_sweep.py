"""The wall time of one sweep (``spacealg check IDS ...``: each environment in a process of
its own) on 1 and 2 local workers, and as Ray tasks on a local Ray instance of 2 CPUs, with
the speed-ups over one worker (issue 37's goal: 2 workers >= 1.8x one).

    python benchmarks/bench_sweep.py [--examples N] [--max-steps N] [--repeat R]

The work is fixed by the number of examples (``--budget 0``: no time budget, which would
make every run last as long), on a fixed list of Gymnasium ids (the one that takes longest,
Blackjack, last); Ray's start is not counted. The 1-worker sweep's rows are the estimates
(``--estimates``) of the others, as an earlier sweep's are in a re-sweep: they start the
longest first (order cannot change one worker's time); "2 workers, order given" has none.
Each check is forked from a warm process (one per sweep, one per Ray worker); "fresh
processes" start each as a new ``python -m spacealg``, as before the warm process. The
"simulated" lines replay the 1-worker rows' seconds on 2 workers in either order, as if
the two ran side by side without slowing each other: what the order alone buys, whatever
the load. On a machine with
other work running the ratios fall short of what the cores give: say the load (printed)
with the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from spacealg.sweep import read, seconds_of, sweep

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


def makespan(seconds: list[float], workers: int) -> float:
    """When the last of ``seconds`` ends, each started in this order on the first free of
    ``workers`` (what a sweep's pool does), the seconds unchanged by running side by side."""
    free = [0.0] * workers
    for each in seconds:
        free[free.index(min(free))] += each
    return max(free)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=60, help="examples per environment (default 60)")
    parser.add_argument("--max-steps", type=int, default=100, help="longest episode (default 100)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, the median reported (default 1)")
    parser.add_argument("--no-ray", action="store_true", help="leave Ray out")
    arguments = parser.parse_args()
    argv = ["-n", str(arguments.examples), "--max-steps", str(arguments.max_steps), "--budget", "0"]
    load = os.getloadavg()[0]
    times: dict[str, list[float]] = {}
    simulated: dict[str, list[float]] = {}  # 2 workers, from the 1-worker rows' seconds: the order alone
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(arguments.repeat):
            earlier = os.path.join(scratch, f"{repeat}.jsonl")
            times.setdefault("1 worker", []).append(one_sweep(argv, jobs=1, results=earlier))
            estimates = seconds_of(read(earlier))
            given = [estimates[env_id] for env_id in IDS]
            simulated.setdefault("order given", []).append(makespan(given, 2))
            simulated.setdefault("longest first", []).append(makespan(sorted(given, reverse=True), 2))
            runs: dict[str, dict[str, object]] = {
                "2 workers": {"jobs": 2, "estimates": estimates},
                "2 workers, order given": {"jobs": 2},
                "1 worker, fresh processes": {"jobs": 1, "warm": False},
                "2 workers, fresh processes": {"jobs": 2, "warm": False, "estimates": estimates},
            }
            for name, how in runs.items():
                times.setdefault(name, []).append(one_sweep(argv, **how))
        if not arguments.no_ray:
            import ray

            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
            times["Ray local, 2 CPUs"] = [one_sweep(argv, ray_address="local", estimates=estimates)
                                          for _ in range(arguments.repeat)]
            ray.shutdown()
    print(f"sweep of {len(IDS)} Gymnasium ids, {' '.join(argv)}; load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} CPUs")
    medians = {name: statistics.median(runs) for name, runs in times.items()}
    for name, seconds in medians.items():
        one = medians["1 worker, fresh processes" if "fresh" in name else "1 worker"]
        base = "one fresh worker" if "fresh" in name else "one worker"
        print(f"  {name:<27} {seconds:7.1f} s   {one / seconds:4.2f}x {base}")
    total = medians["1 worker"]
    for order, replays in simulated.items():
        seconds = statistics.median(replays)
        print(f"  2 workers, {order}, simulated from the 1-worker rows (no contention): {seconds:.1f} s, "
              f"{total / seconds:.2f}x one worker")


if __name__ == "__main__":
    main()
