"""Side-by-side timings of spacealg's flattening and emulation against Gymnasium and PufferLib.

Run in the dev environment (Gymnasium's utils only) and in the PufferLib venv:

    python benchmarks/bench_ops.py
    bash benchmarks/setup_pufferlib.sh && benchmarks/.puffer-venv/bin/python benchmarks/bench_ops.py

Each row prints the reference's time per call, spacealg's, and the ratio (reference /
spacealg; > 1 means spacealg is faster). Goals: one-hot flatten/unflatten >= 3x Gymnasium;
emulate/nativize >= 1.5x PufferLib 2.0.2; emulate <= 3x a bare ``np.copyto`` of the same
leaves into the same buffer. Outputs are checked equal before anything is timed.
"""

from __future__ import annotations

import argparse
import timeit
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium
import gymnasium.spaces as gs
import numpy as np
from gymnasium.spaces import utils as gym_utils

import spacealg
from spacealg.adapters.gymnasium import from_gymnasium
from spacealg.emulation import Codec, emulate, nativize
from spacealg.ops import flat_codec, flatten, flatten_batch, unflatten, unflatten_batch

warnings.filterwarnings("ignore")

try:
    import pufferlib
    import pufferlib.emulation as puffer
except Exception as error:  # ImportError, or numpy 2 against a numpy 1 extension
    puffer = None
    puffer_error = f"{type(error).__name__}: {error}"
else:
    puffer_error = ""


# -- spaces ----------------------------------------------------------------------------------


def image_dict() -> gs.Dict:
    """A nested Dict with an 84x84x3 image (Atari/Crafter-like observation)."""
    return gs.Dict({
        "image": gs.Box(0, 255, (84, 84, 3), np.uint8),
        "stats": gs.Dict({
            "health": gs.Box(0.0, 1.0, (1,), np.float32),
            "level": gs.Discrete(10),
            "inventory": gs.MultiBinary(8),
        }),
        "direction": gs.Discrete(4),
        "position": gs.MultiDiscrete([9, 9]),
    })


def small_dict() -> gs.Dict:
    return gs.Dict({
        "a": gs.Discrete(5),
        "b": gs.Box(-1.0, 1.0, (3,), np.float32),
        "c": gs.MultiBinary(4),
    })


def nethack_obs() -> gs.Dict:
    """NetHack-style observation (PufferLib's NLE binding): several dtypes, bytes layout."""
    return gs.Dict({
        "glyphs": gs.Box(0, 5976, (21, 79), np.int16),
        "chars": gs.Box(0, 255, (21, 79), np.uint8),
        "colors": gs.Box(0, 15, (21, 79), np.uint8),
        "specials": gs.Box(0, 255, (21, 79), np.uint8),
        "blstats": gs.Box(-(2**31), 2**31 - 1, (27,), np.int64),
        "message": gs.Box(0, 255, (256,), np.uint8),
    })


def nmmo_obs() -> gs.Dict:
    """Neural-MMO-style observation: nested Dicts of int16 tables and a Discrete."""
    return gs.Dict({
        "Entity": gs.Dict({"Continuous": gs.Box(-1e6, 1e6, (100, 23), np.float32),
                           "N": gs.Box(0, 100, (1,), np.float32)}),
        "Tile": gs.Dict({"Continuous": gs.Box(-1e6, 1e6, (225, 4), np.float32),
                         "N": gs.Box(0, 225, (1,), np.float32)}),
        "Inventory": gs.Box(0, 1e4, (12, 16), np.float32),
    })


def discrete_dict() -> gs.Dict:
    return gs.Dict({"move": gs.Discrete(5), "attack": gs.Discrete(3), "style": gs.Discrete(3),
                    "target": gs.Discrete(100)})


def nested_action() -> gs.Dict:
    """A nested action Dict of Discretes (Neural MMO's Attack/Move/Use style)."""
    return gs.Dict({
        "Move": gs.Dict({"Direction": gs.Discrete(5)}),
        "Attack": gs.Dict({"Style": gs.Discrete(3), "Target": gs.Discrete(100)}),
        "Use": gs.Dict({"Item": gs.Discrete(12)}),
    })


def to_spacealg(space: Any) -> Any:
    """The spacealg space of a Gymnasium space (through the adapters)."""
    return from_gymnasium(space)


# -- timing ------------------------------------------------------------------------------------


ROUNDS = 7


def loop_size(function: Callable[[], Any], budget: float) -> int:
    """How many calls fill ``budget / ROUNDS`` seconds."""
    return max(1, int(budget / ROUNDS / max(timeit.timeit(function, number=3) / 3, 1e-9)))


def interleaved(reference: Callable[[], Any], ours: Callable[[], Any], budget: float) -> tuple[float, float]:
    """Seconds per call of each: rounds alternate between the two; the best round counts."""
    n_ref, n_ours = loop_size(reference, budget), loop_size(ours, budget)
    best_ref = best_ours = float("inf")
    for _ in range(ROUNDS):
        best_ref = min(best_ref, timeit.timeit(reference, number=n_ref) / n_ref)
        best_ours = min(best_ours, timeit.timeit(ours, number=n_ours) / n_ours)
    return best_ref, best_ours


rows: list[tuple[str, str, float, float, float | None]] = []


def compare(group: str, name: str, reference: Callable[[], Any], ours: Callable[[], Any],
            budget: float, goal: float | None) -> None:
    ref_time, ours_time = interleaved(reference, ours, budget)
    rows.append((group, name, ref_time, ours_time, goal))
    ratio = ref_time / ours_time
    mark = "" if goal is None else ("  ok" if ratio >= goal else f"  below goal {goal}x")
    print(f"  {name:46s} {ref_time * 1e6:9.2f} us {ours_time * 1e6:9.2f} us {ratio:7.2f}x{mark}")


def header(title: str, reference: str) -> None:
    print(f"\n{title}")
    print(f"  {'':46s} {reference:>12s} {'spacealg':>12s} {'ratio':>8s}")


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


# -- one-hot flattening vs Gymnasium --------------------------------------------------------


def bench_flatten(budget: float) -> None:
    header(f"One-hot flatten/unflatten vs gymnasium.spaces.utils {gymnasium.__version__} (goal >= 3x)",
           "gymnasium")
    for label, space in (("nested Dict with 84x84x3 image", image_dict()), ("small Dict", small_dict())):
        space.seed(0)
        x = space.sample()
        ours_space = to_spacealg(space)
        codec = flat_codec(ours_space)
        reference_flat = gym_utils.flatten(space, x)
        flat = flatten(x, ours_space)
        assert flat.dtype == reference_flat.dtype and np.array_equal(flat, reference_flat), label
        assert same(unflatten(flat, ours_space), gym_utils.unflatten(space, reference_flat)), label
        compare("flatten", f"flatten, {label}", lambda s=space, x=x: gym_utils.flatten(s, x),
                lambda s=ours_space, x=x: flatten(x, s), budget, 3.0)
        compare("flatten", "  (precompiled codec.flatten)", lambda s=space, x=x: gym_utils.flatten(s, x),
                lambda c=codec, x=x: c.flatten(x), budget, None)
        compare("flatten", f"unflatten, {label}", lambda s=space, v=reference_flat: gym_utils.unflatten(s, v),
                lambda s=ours_space, v=flat: unflatten(v, s), budget, 3.0)
        compare("flatten", "  (precompiled codec.unflatten)",
                lambda s=space, v=reference_flat: gym_utils.unflatten(s, v),
                lambda c=codec, v=flat: c.unflatten(v), budget, None)
        members = [space.sample() for _ in range(256)]
        batch = spacealg.sample(ours_space, 256, rng=0)
        flats = flatten_batch(batch, ours_space)
        assert np.array_equal(flats[3], flatten(member_at(batch, 3), ours_space)), label
        compare("flatten", "  flatten_batch(256) vs a loop of flatten",
                lambda s=space, m=members: [gym_utils.flatten(s, x) for x in m],
                lambda s=ours_space, b=batch: flatten_batch(b, s), budget, None)
        compare("flatten", "  unflatten_batch(256) vs a loop of unflatten",
                lambda s=space, v=flats: [gym_utils.unflatten(s, row) for row in v],
                lambda s=ours_space, v=flats: unflatten_batch(v, s), budget, None)


# -- emulation vs PufferLib and vs bare copies -----------------------------------------------


def member_at(batch: Any, i: int) -> Any:
    """Member ``i`` of a spacealg batch (arrays, or tuples/dicts of component batches)."""
    if isinstance(batch, dict):
        return {k: member_at(v, i) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(member_at(v, i) for v in batch)
    return batch[i]


def leaves_of(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in leaves_of(v)]
    if isinstance(x, tuple):
        return [leaf for v in x for leaf in leaves_of(v)]
    return [x]


def bench_emulation(budget: float) -> None:
    observation_spaces = (("NetHack-style obs (bytes layout)", nethack_obs()),
                          ("Neural-MMO-style obs (float32)", nmmo_obs()),
                          ("nested Dict with image (bytes)", image_dict()),
                          ("small Dict (bytes)", small_dict()),
                          ("Dict of Discretes (int64)", discrete_dict()))
    if puffer is not None:
        header(f"emulate/nativize vs PufferLib {pufferlib.__version__} (goal >= 1.5x)", "pufferlib")
    else:
        print(f"\nPufferLib not importable here ({puffer_error}); run in benchmarks/.puffer-venv")
    for label, space in observation_spaces:
        space.seed(0)
        x = space.sample()
        ours_space = to_spacealg(space)
        codec = Codec(ours_space)
        row = codec.new_buffer()
        codec.emulate_into(row, x)
        struct = row.view(codec.struct_dtype)
        if puffer is not None:
            box, dtype = puffer.emulate_observation_space(space)
            assert dtype == codec.struct_dtype, (label, dtype, codec.struct_dtype)
            assert box.shape == codec.emulated_space.shape and box.dtype == codec.emulated_space.dtype, label
            puffer_row, puffer_struct = puffer.make_buffer(box.dtype, dtype)
            puffer.emulate(puffer_struct, x)
            assert np.array_equal(puffer_row, row), label
            compare("emulate", f"emulate, {label}", lambda p=puffer_struct, x=x: puffer.emulate(p, x),
                    lambda c=codec, r=row, x=x: c.emulate_into(r, x), budget, 1.5)
            compare("emulate", "  (PufferLib-signature emulate(struct, x))",
                    lambda p=puffer_struct, x=x: puffer.emulate(p, x),
                    lambda s=struct, x=x: emulate(s, x), budget, None)
            compare("nativize", f"nativize, {label}",
                    lambda r=puffer_row, s=space, d=dtype: puffer.nativize(r, s, d),
                    lambda c=codec, r=row: c.nativize(r), budget, 1.5)
            compare("nativize", "  (PufferLib-signature nativize(arr, space, dtype))",
                    lambda r=puffer_row, s=space, d=dtype: puffer.nativize(r, s, d),
                    lambda r=row, s=ours_space, d=codec.struct_dtype: nativize(r, s, d), budget, None)
    actions = (("nested action Dict of Discretes", nested_action()), ("Dict of Discretes", discrete_dict()))
    for label, space in actions:
        space.seed(0)
        x = space.sample()
        ours_space = to_spacealg(space)
        codec = Codec(ours_space, "action")
        row = codec.emulate(x)
        if puffer is not None:
            emulated, dtype = puffer.emulate_action_space(space)
            assert dtype == codec.struct_dtype and emulated == codec.emulated_space, label
            assert same(puffer.nativize(row, space, dtype), codec.nativize(row)), label
            compare("nativize", f"nativize action, {label}",
                    lambda r=row, s=space, d=dtype: puffer.nativize(r, s, d),
                    lambda c=codec, r=row: c.nativize(r), budget, 1.5)

    header("emulate vs a bare np.copyto of the same leaves into the same views (goal <= 3x)", "np.copyto")
    for label, space in observation_spaces:
        space.seed(0)
        x = space.sample()
        codec = Codec(to_spacealg(space))
        row = codec.new_buffer()
        views = codec._bind(row)
        values = leaves_of(x)

        def bare(views: Any = views, values: Any = values) -> None:
            for view, value in zip(views, values):
                np.copyto(view, value, casting="unsafe")

        compare("copy", f"emulate_into, {label}", bare, lambda c=codec, r=row, x=x: c.emulate_into(r, x),
                budget, 1 / 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per side per row (default 0.5)")
    args = parser.parse_args()
    print(f"numpy {np.__version__}, gymnasium {gymnasium.__version__}, spacealg {spacealg.__version__}"
          + (f", pufferlib {pufferlib.__version__}" if puffer is not None else ""))
    bench_flatten(args.budget)
    bench_emulation(args.budget)
    print("\nratio = reference time / spacealg time (copy rows: np.copyto time / emulate time)")


if __name__ == "__main__":
    main()
