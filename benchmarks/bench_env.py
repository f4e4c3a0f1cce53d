"""Step overhead of spacealg.emulation.GymnasiumPufferEnv over the raw environment's step.

Run in the dev environment, and in the PufferLib venv for the side-by-side with PufferLib
2.0.2's wrapper (``bash benchmarks/setup_pufferlib.sh`` builds it):

    PYTHONPATH=. python benchmarks/bench_env.py      # PYTHONPATH: this checkout's spacealg
    PYTHONPATH=. benchmarks/.puffer-venv/bin/python benchmarks/bench_env.py

For each environment, every contender replays the same seeded episodes with the same
actions; only ``step`` calls are timed (resets are not). Rounds are interleaved and the
fastest round per contender is kept. Printed: microseconds per step and the ratio to the
raw ``env.step`` (1.00 = no overhead). Goals: spacealg <= 1.3x raw on CartPole, and faster
than PufferLib's wrapper. ``no guard`` is spacealg with its observation check taken out
(what the wrapper did before the check existed): the difference is the check's cost.
PufferLib 2.0.2's GymnasiumPufferEnv takes no ``buf``: it is
timed as constructed (``puffer``: no buffer writes; a Box observation is returned as is)
and with a buffer injected the way its vectorisation does (``puffer+buf``), which is the
work spacealg always does.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from spacealg.emulation import GymnasiumPufferEnv
from spacealg.emulation.codec import codec_for

warnings.filterwarnings("ignore")

try:
    import pufferlib
    import pufferlib.emulation as puffer
except Exception as error:  # ImportError, or a numpy-1 extension under numpy 2
    puffer = None
    puffer_error = f"{type(error).__name__}: {error}"
else:
    puffer_error = ""


class DictObsEnv(gymnasium.Env):
    """A cheap env with a nested Dict observation of mixed dtypes (float32 Boxes, Discretes)."""

    def __init__(self, dict_actions: bool = False) -> None:
        self.observation_space = spaces.Dict({
            "position": spaces.Box(-10.0, 10.0, (2,), np.float32),
            "velocity": spaces.Box(-1.0, 1.0, (2,), np.float32),
            "goal": spaces.Dict({"cell": spaces.Discrete(25), "kind": spaces.Discrete(3)}),
            "view": spaces.Box(0.0, 1.0, (3, 3), np.float32),
        })
        self.dict_actions = dict_actions
        if dict_actions:
            self.action_space = spaces.Dict({"move": spaces.Discrete(4), "speed": spaces.Discrete(3)})
        else:
            self.action_space = spaces.Discrete(4)
        self._moves = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]], np.float32)

    def _obs(self) -> dict[str, Any]:
        return {"position": self.position, "velocity": self.velocity,
                "goal": {"cell": self.cell, "kind": self.kind}, "view": self.view}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        self.position = np.zeros(2, np.float32)
        self.velocity = np.zeros(2, np.float32)
        self.cell, self.kind = int(self.np_random.integers(25)), int(self.np_random.integers(3))
        self.view = np.zeros((3, 3), np.float32)
        return self._obs(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if self.dict_actions:
            move, speed = action["move"], action["speed"] + 1
        else:
            move, speed = action, 1
        self.velocity = self._moves[move] * (0.1 * speed)
        self.position = np.clip(self.position + self.velocity, -10, 10)
        self.t += 1
        self.cell = (self.cell + move) % 25
        return self._obs(), 0.1, False, self.t >= 200, {}


# -- contenders ---------------------------------------------------------------------------------


def _puffer_with_buf(env: Any) -> Any:
    """PufferLib 2.0.2's wrapper with the buffer its vectorisation injects."""
    obs_space, atn_space = env.single_observation_space, env.single_action_space
    env.buf = pufferlib.namespace(
        observations=np.zeros((1, *obs_space.shape), obs_space.dtype),
        rewards=np.zeros(1, np.float32),
        terminals=np.zeros(1, bool),
        truncations=np.zeros(1, bool),
        masks=np.ones(1, bool),
        actions=np.zeros((1, *atn_space.shape), np.int32),
    )
    return env


def without_guard(env: GymnasiumPufferEnv) -> GymnasiumPufferEnv:
    """The same wrapper with the observation guard taken out (the codec's plain writer, as
    before issue 16): not an option of the library, only here to show what the guard costs."""
    codec, row = codec_for(env.env.observation_space), env.obs
    if codec.layout.native:
        def write(x: Any) -> Any:
            row[...] = x
    else:
        def write(x: Any, emulate_into: Any = codec.emulate_into) -> Any:
            return emulate_into(row, x)
    env._write = write
    env._bound_step = env.step = env._bind_step()  # type: ignore[method-assign]
    return env


def contenders(make: Callable[[], Any]) -> dict[str, Any]:
    found = {"raw": make(), "spacealg": GymnasiumPufferEnv(make())}
    found["no guard"] = without_guard(GymnasiumPufferEnv(make()))
    if puffer is not None:
        found["puffer"] = puffer.GymnasiumPufferEnv(make())
        found["puffer+buf"] = _puffer_with_buf(puffer.GymnasiumPufferEnv(make()))
    return found


def episode_actions(make: Callable[[], Any], seeds: list[int], rng: np.random.Generator) -> list[list[Any]]:
    """Native actions for each seeded episode, played to its end on a raw env."""
    env = make()
    episodes = []
    for seed in seeds:
        env.reset(seed=seed)
        actions, done = [], False
        while not done:
            space = env.action_space
            if isinstance(space, spaces.Discrete):
                action: Any = int(rng.integers(space.n))
            else:  # Python ints, as the wrappers' nativized actions are
                action = {k: int(rng.integers(s.n)) for k, s in space.spaces.items()}
            actions.append(action)
            *_, term, trunc, _ = env.step(action)
            done = term or trunc
        episodes.append(actions)
    return episodes


def emulated(action: Any) -> Any:
    """The action as a wrapper receives it: Dict actions as int arrays (sorted keys)."""
    if isinstance(action, dict):
        return np.array([action[k] for k in sorted(action)], np.int64)
    return action


def time_steps(env: Any, seeds: list[int], episodes: list[list[Any]]) -> tuple[float, int]:
    """Seconds spent in ``step`` over all episodes, and the number of steps."""
    step = env.step
    total, count = 0.0, 0
    for seed, actions in zip(seeds, episodes):
        env.reset(seed=seed)
        start = time.perf_counter()
        for action in actions:
            step(action)
        total += time.perf_counter() - start
        count += len(actions)
    return total, count


def bench(name: str, make: Callable[[], Any], n_episodes: int, rounds: int) -> None:
    rng = np.random.default_rng(0)
    seeds = list(range(n_episodes))
    native = episode_actions(make, seeds, rng)
    wrapped = [[emulated(a) for a in actions] for actions in native]
    envs = contenders(make)
    best = dict.fromkeys(envs, float("inf"))
    steps = 0
    for _ in range(rounds):
        for label, env in envs.items():
            seconds, steps = time_steps(env, seeds, native if label == "raw" else wrapped)
            best[label] = min(best[label], seconds / steps)
    raw = best["raw"]
    print(f"\n{name}  ({steps} steps per round, best of {rounds} rounds)")
    for label, per_step in best.items():
        print(f"  {label:<11} {per_step * 1e6:8.2f} us/step   {per_step / raw:5.2f}x raw")
    if "puffer+buf" in best:
        print(f"  spacealg vs puffer+buf: {best['puffer+buf'] / best['spacealg']:.2f}x faster; "
              f"vs puffer: {best['puffer'] / best['spacealg']:.2f}x faster")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=150)
    args = parser.parse_args()
    print(f"gymnasium {gymnasium.__version__}, numpy {np.__version__}, "
          + (f"pufferlib {pufferlib.__version__}" if puffer else f"no pufferlib ({puffer_error})"))
    bench("CartPole-v1 (gymnasium.make)", lambda: gymnasium.make("CartPole-v1"), args.episodes, args.rounds)
    bench("Dict observation, Discrete action", lambda: DictObsEnv(), args.episodes // 4, args.rounds)
    bench("Dict observation, Dict action", lambda: DictObsEnv(dict_actions=True), args.episodes // 4,
          args.rounds)


if __name__ == "__main__":
    main()
