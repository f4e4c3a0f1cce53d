"""Issue 25: the second hardening campaign. One regression test per reported defect (the point
number in each test's name), each checking the general rule that fixed it; tests/test_fuzz_2.py
fuzzes the same surfaces. Points 11-23 (backends), 30-35 (CLI) and 40-41 (OneHot) live with
the engineers who own that code."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import pickle
import re
import subprocess
import sys
import threading
import time
import tracemalloc

import gymnasium
import gymnasium.spaces as gs
import numpy as np
import pytest

import spacealg as sa
from spacealg import Masked
from spacealg.emulation import GymnasiumPufferEnv
from spacealg.spaces.masked import MaskError


def _doc(node):
    return {"format": "spacealg.space", "version": 1, "space": node}


# -- Masks ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "node",
    [
        {"kind": "range", "stop": 40_000_000},
        {"kind": "categorical", "nvec": 40_000_000, "dtype": "int32"},
        {"kind": "tuple", "spaces": [{"kind": "range", "stop": 40_000_000}, {"kind": "range", "stop": 3}]},
    ],
)
def test_1_an_unmasked_part_costs_constant_memory(node):
    """Point 1: ``{"kind": "masked", ..., "mask": null}`` of 119 bytes reached 3.5 GB."""
    text = json.dumps(_doc({"kind": "masked", "space": node, "mask": None}))
    # the same calls on a small space first: modules that load on first use (the NumPy rules)
    # are not what is measured
    small = json.loads(json.dumps(node).replace("40000000", "40"))
    warm = sa.from_json(json.dumps(_doc({"kind": "masked", "space": small, "mask": None})))
    sa.isin(sa.sample(warm, 5, rng=0), warm)
    tracemalloc.start()
    try:
        space = sa.from_json(text)
        n = sa.cardinality(space)
        drawn = sa.sample(space, 5, rng=0)
        inside = sa.isin(drawn, space)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak  # bytes, not gigabytes
    assert n == sa.cardinality(space.root) and inside.all()
    assert sa.index(sa.element(12345, space), space) == 12345
    assert space == Masked(space.root, None) and hash(space) == hash(Masked(space.root, None))


def test_1_an_unmasked_part_equals_an_all_true_mask():
    full = Masked(range(7), np.ones(7, dtype=bool))
    assert full == Masked(range(7), None) and hash(full) == hash(Masked(range(7), None))
    half = Masked(sa.ArraySpace(range(3), 2), (np.array([1, 1, 1], bool), np.array([1, 0, 1], bool)))
    assert half == Masked(sa.ArraySpace(range(3), 2), (None, np.array([1, 0, 1], bool)))
    assert pickle.loads(pickle.dumps(half)) == half
    assert [sa.index(x, half) for x in sa.elements(half)] == list(range(6))
    assert half.joint().shape == (3, 3) and half.joint().sum() == 6


UINT64_SPACES = [
    sa.Box(2**62, 2**62 + 3, (), np.uint64),
    sa.Categorical(4, start=2**62, dtype=np.uint64),
    sa.Categorical(4, start=2**64 - 4, dtype=np.uint64),
    gs.Discrete(4, start=2**62),
    range(2**62, 2**62 + 4),
    range(2**63 - 2, 2**63 + 2),  # crosses int64
    range(2**64, 2**64 + 4),  # beyond 64 bits
    range(-(2**63) - 2, -(2**63) + 6, 2),  # below int64, stepped
    range(2**63 + 4, 2**63 - 4, -2),  # descending across int64
]


@pytest.mark.parametrize("space", UINT64_SPACES, ids=repr)
def test_2_3_masked_draws_from_big_integers_are_the_allowed_values(space):
    """Points 2 and 3: uint64 + int64 went through float64 (2**62 every time); a range
    crossing int64 wrapped to negatives, one beyond 2**64 raised OverflowError."""
    mask = np.array([0, 1, 1, 0], dtype=np.int8 if isinstance(space, gs.Space) else bool)
    allowed = {int(x) for i, x in enumerate(sa.elements(sa.as_space(space))) if mask[i]}
    drawn = sa.sample(space, 200, mask=mask, rng=0)
    assert {int(x) for x in np.ravel(drawn)} == allowed
    assert int(sa.sample(space, mask=mask, rng=1)) in allowed
    masked = Masked(sa.as_space(space), mask.astype(bool))
    assert {int(x) for x in np.ravel(sa.sample(masked, 200, rng=2))} == allowed
    plain = np.asarray(sa.sample(sa.as_space(space), 3, rng=0))
    assert np.asarray(drawn).dtype == plain.dtype  # the dtype of plain sampling


def test_2_big_uint64_starts_written_as_a_list_stay_integers():
    """A list ``[2**62, 2**63]`` is float64 to numpy; Categorical must read it as integers."""
    c = sa.Categorical([4, 4], start=[2**62, 2**63], dtype=np.uint64)
    assert c.low.tolist() == [2**62, 2**63]
    drawn = sa.sample(c, 50, mask=(np.array([0, 1, 1, 0], bool), np.array([0, 0, 0, 1], bool)), rng=0)
    assert set(drawn[:, 0].tolist()) == {2**62 + 1, 2**62 + 2} and set(drawn[:, 1].tolist()) == {2**63 + 3}


@pytest.mark.parametrize("scale", [1e308, 1.5e300, 5e-324, 1e-310])
def test_4_probability_weights_are_rescaled(scale):
    """Point 4: ``[1e308, 1e308]`` summed to inf (always 1); ``[5e-324, 5e-324]`` split 25/75."""
    drawn = sa.sample(range(2), 4000, probability=np.array([scale, scale]), rng=0)
    assert 1800 < np.bincount(drawn, minlength=2)[0] < 2200
    batch = np.array([[scale, scale], [scale, 0.0]])
    rows = sa.sample(range(2), (2,), probability=batch, rng=0)
    assert rows[1] == 0
    masked = sa.sample(range(3), 4000, mask=np.array([0, 1, 1], bool), probability=np.array([1.0, scale, scale]),
                       rng=1)
    assert 1800 < np.bincount(masked, minlength=3)[1] < 2200


def test_4_probability_weights_are_rescaled_on_torch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("spacealg.backends.sample")
    g = torch.Generator().manual_seed(0)
    for weights in (np.array([1e308, 1e308]), torch.tensor([1e308, 1e308], dtype=torch.float64)):
        drawn = sa.sample(range(2), 4000, probability=weights, rng=g)
        assert 1800 < int((drawn == 0).sum()) < 2200


def test_5_a_mask_of_a_product_of_nothing_is_a_0d_bool():
    """Point 5: numpy's 'multiple indices are not supported for 0d arrays'."""
    assert sa.sample(sa.TupleProduct(), 3, mask=np.array(True)) == sa.sample(sa.TupleProduct(), 3, rng=0)
    with pytest.raises(MaskError):
        sa.sample(sa.TupleProduct(), 3, mask=np.array(False))
    full, empty = Masked(sa.DictProduct({}), True), Masked(sa.DictProduct({}), False)
    assert sa.cardinality(full) == 1 and list(sa.elements(full)) == [{}] and {} in full
    assert sa.cardinality(empty) == 0 and {} not in empty and empty.is_empty


def test_6_masked_spaces_on_torch_and_jax():
    """Point 6: sample/isin/clamp of a Masked on torch/JAX raised 'Masked batches are object arrays'."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("spacealg.backends.sample")
    space = Masked(range(5), np.array([1, 0, 1, 0, 1], bool))
    drawn = sa.sample(space, 50, rng=torch.Generator().manual_seed(0))
    assert isinstance(drawn, torch.Tensor) and set(drawn.tolist()) <= {0, 2, 4}
    batch = torch.tensor([0, 1, 2, 3, 4])
    inside = sa.isin(batch, space)
    assert isinstance(inside, torch.Tensor) and inside.tolist() == sa.isin(batch.numpy(), space).tolist()
    members = torch.tensor([0, 4])
    assert sa.clamp(members, space).tolist() == [0, 4] and sa.clamp_(members, space) is members
    with pytest.raises(TypeError, match="nearest-member"):
        sa.clamp(batch, space)
    product = sa.TupleProduct(space, sa.Interval(0, 1))
    assert sa.isin((torch.tensor([0, 1]), torch.tensor([0.5, 0.5])), product).tolist() == [True, False]
    jax = pytest.importorskip("jax")
    drawn = sa.sample(space, 20, rng=jax.random.key(0))
    assert set(np.asarray(drawn).tolist()) <= {0, 2, 4}
    assert np.asarray(sa.isin(jax.numpy.asarray([0, 1, 2]), space)).tolist() == [True, False, True]


def test_7_a_list_of_per_factor_masks_on_a_square_array_is_ambiguous():
    """Point 7: ``[a, b]`` was silently read as one joint mask."""
    a, b = np.array([1, 0], bool), np.array([1, 1], bool)
    space = sa.Categorical([2, 2])
    with pytest.raises(MaskError, match="ambiguous") as error:
        Masked(space, [a, b])
    assert "numpy.asarray" in str(error.value) and "tuple(m)" in str(error.value)
    with pytest.raises(MaskError, match="ambiguous"):
        sa.sample(space, 3, mask=[a, b])
    assert Masked(space, np.asarray([a, b])) != Masked(space, (a, b))  # the two readings differ
    # where only one reading parses, it is taken
    ragged = Masked(sa.Categorical([2, 3]), [[1, 0], [1, 1, 1]])
    assert ragged == Masked(sa.Categorical([2, 3]), (np.array([1, 0], bool), np.ones(3, bool)))
    assert sa.cardinality(Masked(sa.Categorical([3, 3]), [[1, 0, 1], [1, 1, 1], [0, 0, 1]])) == 6


# -- Core -------------------------------------------------------------------------------------


@pytest.mark.parametrize("base", [range(2**64, 2**64 + 3), sa.FiniteSet(2**64, 2**70, -(2**65)),
                                  range(-(2**70), -(2**70) + 9, 3)], ids=repr)
def test_8_arrays_of_integers_beyond_64_bits(base):
    """Point 8: ``contains(sample(s), s)`` was False; isin of an object batch all False."""
    space = sa.ArraySpace(base, 2)
    x = sa.sample(space, rng=0)
    assert sa.contains(x, space)
    items = list(sa.elements(base))
    batch = np.array([[items[0], items[-1]], [items[0], 5]], dtype=object)
    assert sa.isin(batch, space).tolist() == [True, False]
    assert sa.isin(np.array([*items, None, "a", 1.5], dtype=object), base).tolist() == [True] * len(items) + [False] * 3


def test_9_array_elements_keep_tuple_labels_whole():
    """Point 9: element()/elements() unpacked the tuples into the array."""
    space = sa.ArraySpace(sa.FiniteSet((1, "a"), (2, "b"), (3, "c")), 2)
    listed = list(sa.elements(space))
    assert len(listed) == 9
    for i, x in enumerate(listed):
        assert x.shape == (2,) and sa.contains(x, space)
        assert sa.index(x, space) == i and sa.index(sa.element(i, space), space) == i


@pytest.mark.parametrize(("dtype", "n"), [(np.uint8, 256), (np.int8, 256), (np.uint16, 65536), (np.uint64, 2**64)])
def test_10_a_count_beyond_the_dtype_of_its_values(dtype, n):
    """Point 10: ``Categorical(256, dtype=np.uint8)`` raised OverflowError."""
    start = 0 if np.dtype(dtype).kind == "u" else -(n // 2)
    space = sa.Categorical(n, start=start, dtype=dtype)
    assert sa.cardinality(space) == n and int(space.nvec) == n
    drawn = sa.sample(space, 100, rng=0)
    assert drawn.dtype == dtype and sa.isin(drawn, space).all()
    assert sa.from_json(sa.to_json(space)) == space
    assert eval(repr(space), {"Categorical": sa.Categorical, "np": np}) == space
    multi = sa.Categorical([n, 3], start=start, dtype=dtype)
    assert sa.isin(sa.sample(multi, 10, rng=0), multi).all() and sa.from_json(sa.to_json(multi)) == multi
    with pytest.raises(TypeError, match="gymnasium"):
        sa.to_gymnasium(space)


def test_10_foreign_256_value_uint8_specs_convert():
    dm = pytest.importorskip("dm_env.specs")
    from spacealg.adapters.dm_env import from_dm_env

    space = from_dm_env(dm.DiscreteArray(256, dtype=np.uint8))
    assert space == sa.Categorical(256, dtype=np.uint8) and sa.sample(space, rng=0).dtype == np.uint8
    torch = pytest.importorskip("torch")
    td = pytest.importorskip("torchrl.data")
    from spacealg.adapters.torchrl import from_torchrl

    assert from_torchrl(td.Categorical(256, dtype=torch.uint8)) == sa.Categorical(256, dtype=np.uint8)


# -- Environment layer and vector views -------------------------------------------------------


class _Lying(gymnasium.Env):
    """A one-step environment returning whatever it is told to."""

    def __init__(self, space=None, ob=None, reward=0.0, terminated=False, truncated=False):
        self.observation_space = space if space is not None else gs.Box(0, 1, (2,), np.float32)
        self.action_space = gs.Discrete(2)
        self.ob = ob if ob is not None else np.zeros(2, np.float32)
        self.reward, self.terminated, self.truncated = reward, terminated, truncated

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.ob, {}

    def step(self, action):
        return self.ob, self.reward, self.terminated, self.truncated, {}


class _LyingVector:
    """A VectorEnv-shaped object whose batches are whatever it is told."""

    def __init__(self, space, good, bad, num_envs=3, rewards=None, flags=None):
        self.num_envs = num_envs
        self.single_observation_space = space
        self.single_action_space = gs.Discrete(2)
        self.good, self.bad = good, bad
        self.rewards = np.zeros(num_envs) if rewards is None else rewards
        self.flags = np.zeros(num_envs, bool) if flags is None else flags
        self.metadata = {}

    def reset(self, seed=None, options=None):
        return self.good, {}

    def step(self, actions):
        return self.bad, self.rewards, self.flags, np.zeros(self.num_envs, bool), {}

    def close(self):
        pass


_BOX = gs.Box(0, 255, (2,), np.uint8)
_DICT = gs.Dict({"a": gs.Discrete(3), "b": gs.Box(-1.0, 1.0, (), np.float32)})


@pytest.mark.parametrize(
    ("space", "good", "bad"),
    [
        (_BOX, np.zeros((3, 2), np.uint8), np.zeros((1, 2), np.uint8)),  # a single row for every agent
        (_BOX, np.zeros((3, 2), np.uint8), np.full((3, 2), 300.7)),  # stored as 44
        (_BOX, np.zeros((3, 2), np.uint8), np.full((3, 2), -1)),  # stored as 255
        (gs.Box(0.0, 1.0, (2,), np.float32), np.zeros((3, 2), np.float32), np.full((3, 2), np.nan, np.float32)),
        (_DICT, {"a": np.zeros(3, np.int64), "b": np.zeros(3, np.float32)},
         {"a": np.array([0, 1, 7]), "b": np.zeros(3, np.float32)}),  # a Discrete entry outside it
        (_DICT, {"a": np.zeros(3, np.int64), "b": np.zeros(3, np.float32)},
         {"a": np.zeros(1, np.int64), "b": np.zeros(3, np.float32)}),  # one component of one row (fuzz)
    ],
)
def test_24_the_vector_view_refuses_non_members_before_writing(space, good, bad):
    from spacealg.env import APIUsageError
    from spacealg.vector import VectorPufferEnv

    env = VectorPufferEnv(_LyingVector(space, good, bad))
    env.reset(seed=0)
    before = env.observations.copy()
    with pytest.raises(APIUsageError, match="VectorPufferEnv"):
        env.step(np.zeros(3, np.int64))
    assert np.array_equal(env.observations, before)


@pytest.mark.parametrize(
    ("rewards", "flags"),
    [
        (np.array([0.0, np.nan, 1.0]), None),
        (np.zeros(1), None),
        (np.array(["a", "b", "c"]), None),
        (None, np.array(["no", "", "yes"])),
        (None, np.array([None, None, None])),
        (None, np.zeros(2, bool)),
    ],
)
def test_24_the_vector_view_refuses_malformed_rewards_and_flags(rewards, flags):
    from spacealg.env import APIUsageError
    from spacealg.vector import VectorPufferEnv

    zeros = np.zeros((3, 2), np.uint8)
    env = VectorPufferEnv(_LyingVector(_BOX, zeros, zeros, rewards=rewards, flags=flags))
    env.reset(seed=0)
    with pytest.raises(APIUsageError):
        env.step(np.zeros(3, np.int64))


@pytest.mark.parametrize(
    ("field", "value"),
    [("terminated", "no"), ("terminated", None), ("truncated", 1), ("truncated", np.array([True])),
     ("reward", float("nan")), ("reward", np.float32("nan")), ("reward", np.array([np.nan]))],
)
def test_25_gymnasium_puffer_env_refuses_non_bool_flags_and_nan_rewards(field, value):
    from spacealg.env import APIUsageError

    env = GymnasiumPufferEnv(_Lying(**{field: value}))
    env.reset(seed=0)
    with pytest.raises(APIUsageError, match=field if field != "reward" else "NaN"):
        env.step(0)
    ok = GymnasiumPufferEnv(_Lying(terminated=np.bool_(True), reward=np.float32(1.5)))
    ok.reset(seed=0)
    assert ok.step(0)[1:3] == (np.float32(1.5), True)


def test_25_pettingzoo_puffer_env_refuses_non_bool_flags_and_nan_rewards():
    pytest.importorskip("pettingzoo")
    from pettingzoo.utils.env import ParallelEnv

    from spacealg.emulation import PettingZooPufferEnv
    from spacealg.env import APIUsageError

    class Pz(ParallelEnv):
        def __init__(self, reward, flag):
            self.metadata, self.possible_agents = {}, ["a", "b"]
            self.agents, self.reward, self.flag = [], reward, flag

        def observation_space(self, agent):
            return gs.Discrete(2)

        def action_space(self, agent):
            return gs.Discrete(2)

        def reset(self, seed=None, options=None):
            self.agents = list(self.possible_agents)
            return {a: 0 for a in self.agents}, {a: {} for a in self.agents}

        def step(self, actions):
            return ({a: 0 for a in self.agents}, {a: self.reward for a in self.agents},
                    {a: self.flag for a in self.agents}, {a: False for a in self.agents}, {a: {} for a in self.agents})

    for reward, flag in ((float("nan"), False), (0.0, "no"), (0.0, None)):
        env = PettingZooPufferEnv(Pz(reward, flag))
        env.reset(seed=0)
        with pytest.raises(APIUsageError):
            env.step({"a": 0, "b": 1})


class _Sleepy(gymnasium.Env):
    """Action 1 blocks its step; action 2 kills its worker process."""

    observation_space = gs.Discrete(2)
    action_space = gs.Discrete(3)

    def reset(self, *, seed=None, options=None):
        return 0, {}

    def step(self, action):
        if action == 1:
            time.sleep(600)
        if action == 2:
            os._exit(1)
        return 0, 0.0, False, False, {}


def _in_thread(function):
    """Runs ``function`` in a daemon thread; whether it returned within 60 s (not a speed
    test: a call that blocks forever is the defect)."""
    done = threading.Event()

    def run():
        with contextlib.suppress(Exception):
            function()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(60)


def test_26_the_vector_view_over_async_envs_times_out_and_closes():
    import multiprocessing

    from spacealg.vector import VectorPufferEnv

    with pytest.raises(ValueError, match="timeout"):
        VectorPufferEnv(gymnasium.vector.SyncVectorEnv([_Sleepy]), timeout=-1)
    env = VectorPufferEnv(gymnasium.vector.AsyncVectorEnv([_Sleepy] * 2), timeout=2)
    env.reset(seed=0)
    env.step(np.array([0, 0]))
    with pytest.raises(multiprocessing.TimeoutError):
        env.step(np.array([0, 1]))  # one sub-environment blocks
    assert _in_thread(env.close)
    assert not any(p.is_alive() for p in env.vector_env.processes)


def test_26_the_vector_view_closes_after_a_worker_died():
    from spacealg.vector import VectorPufferEnv

    env = VectorPufferEnv(gymnasium.vector.AsyncVectorEnv([_Sleepy] * 2))
    env.reset(seed=0)
    with pytest.raises(EOFError):
        env.step(np.array([0, 2]))  # the worker dies in the middle of a step
    assert _in_thread(env.close)
    assert not any(p.is_alive() for p in env.vector_env.processes)


# -- Adapters ---------------------------------------------------------------------------------


def test_27_jax_narrows_float_bounds_inwards():
    """Point 27: to_jumanji rounded float64 bounds to the nearest float32, so float32(0.3)
    passed for Box(0.1, 0.3); every JAX adapter (gymnax, Jumanji) shares the rule."""
    jax = pytest.importorskip("jax")
    pytest.importorskip("jumanji")
    from spacealg.adapters.jumanji import to_jumanji

    if jax.config.jax_enable_x64:
        pytest.skip("with x64, float64 bounds are kept")
    space = sa.Box(np.array([0.1, -0.3]), np.array([0.3, -0.1]), dtype=np.float64)
    spec = to_jumanji(space)
    low, high = np.asarray(spec.minimum, np.float64), np.asarray(spec.maximum, np.float64)
    assert (low >= space.low).all() and (high <= space.high).all()  # inside the set
    # and the tightest: the next float32 outwards is outside
    assert (np.nextafter(low.astype(np.float32), np.float32(-np.inf)) < space.low).all()
    assert (np.nextafter(high.astype(np.float32), np.float32(np.inf)) > space.high).all()
    assert not sa.contains(np.array([np.float32(0.3), np.float32(-0.2)]), spec)
    assert not sa.contains(np.array([np.float32(0.2), np.float32(-0.3)]), spec)


def test_28_jumanji_entry_names_that_spec_keeps_for_itself():
    """Point 28: a DictProduct key "name" leaked "got multiple values for argument 'name'"."""
    pytest.importorskip("jumanji")
    from spacealg.adapters.jumanji import to_jumanji

    for key in ("name", "constructor", "validate", "generate_value"):
        with pytest.raises(TypeError, match=f"no jumanji equivalent.*{key}"):
            to_jumanji(sa.DictProduct({key: range(3), "other": range(2)}))
    assert to_jumanji(sa.DictProduct({"names": range(3)})).names.num_values == 3


BEYOND_INT64 = [range(2**64, 2**64 + 3), range(2**63 - 1, 2**63 + 1), range(-(2**63) - 1, -(2**63) + 1),
                sa.ArraySpace(range(2**64, 2**64 + 3), 2), sa.ArraySpace(range(2**63 - 1, 2**63 + 1), 2)]


@pytest.mark.parametrize("space", BEYOND_INT64, ids=repr)
def test_29_integers_beyond_int64_have_no_foreign_form(space):
    """Point 29: OverflowError / torch's TypeError instead of the TypeError naming the space."""
    converters = [sa.to_gymnasium]
    if pytest.importorskip("dm_env"):
        from spacealg.adapters.dm_env import to_dm_env

        converters.append(to_dm_env)
    try:
        from spacealg.adapters.torchrl import to_torchrl

        converters.append(to_torchrl)
    except ImportError:
        pass
    for convert in converters:
        with pytest.raises(TypeError, match=r"range\("):
            convert(space)


# -- Concurrency ------------------------------------------------------------------------------


def test_36_a_full_cache_shared_by_threads():
    """Point 36: put evicted with next(iter(dict)) unlocked: 'dictionary changed size
    during iteration' under 8 threads (a stress test: before the fix it failed most runs)."""
    import sys

    from spacealg.core.cache import IdentityCache

    errors: list[BaseException] = []

    def hammer(cache, keys):
        try:
            for _ in range(100):
                for k in keys:
                    cache.put(k, 1)
                    cache.get(k)
        except BaseException as error:  # any error is the defect
            errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(4):
            cache = IdentityCache("stress", max_entries=8)
            keys = [(i,) for i in range(160)]
            threads = [threading.Thread(target=hammer, args=(cache, keys[i::8] * 2)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(cache) <= 8
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[:1]


def test_36_eviction_never_sees_another_thread_change_the_cache():
    """Point 36, deterministic: another thread changes the cache (here ``clear``; a weak key's
    death drops an entry the same way) exactly while ``put`` iterates to evict the oldest."""
    from spacealg.core.cache import IdentityCache

    cache = IdentityCache("race", max_entries=2)
    other_errors: list[BaseException] = []

    class Meddling(dict):
        meddle = True

        def __iter__(self):
            iterator = super().__iter__()
            if Meddling.meddle:
                Meddling.meddle = False

                def other():
                    try:
                        cache.clear()
                    except BaseException as error:  # any error is the defect
                        other_errors.append(error)

                thread = threading.Thread(target=other)
                thread.start()
                thread.join(0.5)  # with the lock, the other thread waits until this put is done
            return iterator

    cache.put((1,), 1)
    cache.put((2,), 1)
    cache._data = Meddling(cache._data)
    cache.put((3,), 1)  # full: evicts the oldest, while the other thread puts
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and thread.name.startswith("Thread"):
            thread.join(5)
    assert not other_errors and len(cache) <= 2


# -- Found by the peers' own test suites ------------------------------------------------------

from gymnasium.utils.env_checker import data_equivalence  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from spacealg.strategies.gymnasium import gymnasium_spaces  # noqa: E402

_CUSTOM = [
    gs.Graph(gs.Box(0, 1, (2,)), gs.Discrete(3)),
    gs.Sequence(gs.Discrete(4)),
    gs.Sequence(gs.Box(0, 1, (2,)), stack=True),
    gs.Text(5),
    gs.OneOf([gs.Discrete(2), gs.Box(0, 1)]),
    gs.Tuple((gs.Graph(gs.Discrete(3), None), gs.Dict(a=gs.Sequence(gs.Discrete(2)), b=gs.MultiBinary(3)))),
]


@pytest.mark.parametrize("space", _CUSTOM, ids=repr)
def test_37_joint_space_carries_the_generator_as_batch_space(space):
    """Point 37: joint_space(s, n).np_random was a fresh generator; batch_space gives the batched
    space (every level) the single space's state, so Graph/Sequence sample alike."""
    for seed in (0, 1, 12345):
        space.seed(seed)
        expected = batch_space(space, 3)
        space.seed(seed)
        got = sa.joint_space(space, 3)
        assert got == expected
        for _ in range(3):
            assert data_equivalence(got.sample(), expected.sample())


class _Custom(gs.Space):
    """A Gymnasium Space subclass spacealg has no adapter for."""

    def sample(self, mask=None, probability=None):
        return int(self.np_random.integers(10**6))

    def contains(self, x):
        return isinstance(x, int)

    def __eq__(self, other):
        return isinstance(other, _Custom)

    __hash__ = gs.Space.__hash__


def test_37_joint_space_of_an_unknown_gymnasium_space_is_batch_spaces_tuple():
    """batch_space's rule for any other Space: a Tuple of n copies, seeded as it seeds them
    (Gymnasium's test_custom_space; joint_space raised TypeError from from_gymnasium)."""
    space = _Custom()
    space.seed(7)
    expected = batch_space(space, 3)
    space.seed(7)
    got = sa.joint_space(space, 3)
    assert got == expected and isinstance(got, gs.Tuple)
    assert got.sample() == expected.sample()


@settings(max_examples=60, deadline=None)
@given(gymnasium_spaces(), st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_37_joint_space_samples_as_batch_space_for_every_gymnasium_space(space, seed, n):
    space.seed(seed)
    expected = batch_space(space, n)
    got = sa.joint_space(space, n)
    assert got == expected
    for _ in range(2):
        assert data_equivalence(got.sample(), expected.sample())


def _torchrl():
    torch = pytest.importorskip("torch")
    td = pytest.importorskip("torchrl.data")
    from spacealg.adapters import torchrl as adapter

    return torch, td, adapter


def test_38_torchrl_masks_are_masked_spaces():
    """Point 38: from_torchrl dropped the mask: spacealg.sample fell outside the spec."""
    torch, td, adapter = _torchrl()
    specs = [
        td.Categorical(5, mask=torch.tensor([1, 0, 1, 0, 1], dtype=torch.bool)),
        td.Categorical(4, shape=(2,), mask=torch.tensor([[1, 0, 1, 0], [0, 1, 1, 1]], dtype=torch.bool)),
        td.MultiCategorical([2, 3], mask=torch.tensor([1, 0, 1, 1, 0], dtype=torch.bool)),
        td.MultiCategorical([2, 3], shape=(2, 2), mask=torch.tensor([[1, 0, 1, 1, 0], [0, 1, 1, 0, 1]],
                                                                     dtype=torch.bool)),
    ]
    for spec in specs:
        space = adapter.from_torchrl(spec)
        assert isinstance(space, Masked)
        drawn = sa.sample(spec, 60, rng=0)
        assert all(spec.is_in(row) for row in drawn)
        assert sa.isin(drawn, spec).all()
        members = list(sa.elements(space))
        assert all(bool(spec.is_in(torch.as_tensor(x))) for x in members)
        assert len(members) == sa.cardinality(space) == int(_allowed(spec))
        back = adapter.to_torchrl(space)
        assert type(back) is type(spec) and back == spec and torch.equal(back.mask, spec.mask)
    with pytest.raises(TypeError, match="entry by entry"):
        adapter.to_torchrl(Masked(sa.ArraySpace(range(2), 2), np.array([[1, 0], [0, 1]], bool)))


def _allowed(spec):
    """The number of values a per-entry-masked spec allows (the product over its entries)."""
    torch = pytest.importorskip("torch")
    mask = spec.mask.reshape(-1, spec.mask.shape[-1])
    if type(spec).__name__ == "MultiCategorical":
        nvec = [int(n) for n in spec.nvec.reshape(-1, spec.nvec.shape[-1])[0]]
        ends = np.cumsum([0, *nvec])
        counts = [int(row[ends[i]:ends[i + 1]].sum()) for row in mask for i in range(len(nvec))]
    else:
        counts = [int(row.sum()) for row in mask]
    return torch.tensor(counts).prod()


def test_39_composite_none_entries_are_left_out():
    """Point 39: a Composite with None entries raised TypeError."""
    _, td, adapter = _torchrl()
    spec = td.Composite(a=td.Categorical(3), b=None, c=td.Unbounded((2,)))
    space = adapter.from_torchrl(spec)
    assert space == sa.DictProduct(a=range(3), c=adapter.from_torchrl(td.Unbounded((2,))))
    value = spec.rand()
    assert set(value.keys()) == {"a", "c"} and sa.contains(value, spec)
    assert sa.contains(sa.sample(spec, rng=0), spec)


def test_42_float_discrete_specs_are_a_type_error_naming_them():
    """Point 42: a float-dtype MultiCategorical raised ValueError (and a float Binary became
    the whole interval [0, 1])."""
    torch, td, adapter = _torchrl()
    for spec in (td.MultiCategorical([2, 3], dtype=torch.float32), td.Categorical(3, dtype=torch.float64),
                 td.Binary(3, dtype=torch.float32)):
        with pytest.raises(TypeError, match="stores its integers as float"):
            adapter.from_torchrl(spec)


def test_43_stacked_composites_that_differ_are_a_type_error():
    """Point 43: converted to the common keys, then sampling raised KeyError."""
    torch, td, adapter = _torchrl()
    stacked = torch.stack([td.Composite(a=td.Categorical(3)), td.Composite(a=td.Categorical(3), b=td.Unbounded(()))])
    with pytest.raises(TypeError, match="stacks Composites that differ"):
        adapter.from_torchrl(stacked)
    same = torch.stack([td.Composite(a=td.Categorical(3)), td.Composite(a=td.Categorical(3))])
    assert sa.contains(sa.sample(same, rng=0), same)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_44_nan_is_in_no_space_torchrl_specs_included(dtype):
    """Point 44: TorchRL's Unbounded is_in accepts NaN; the converted Box rejected it. The law
    (docs/adapters.md, the adapter's docstring): NaN is a member of no spacealg space."""
    torch, td, adapter = _torchrl()
    spec = td.Unbounded((2,), dtype=getattr(torch, dtype))
    box = adapter.from_torchrl(spec)
    for values in ([np.nan, 0.0], [np.inf, -np.inf], [1.0, 2.0]):
        x = torch.tensor(values, dtype=getattr(torch, dtype))
        member = not np.isnan(values).any()
        assert sa.contains(x, spec) is member and sa.contains(x.numpy(), box) is member
        assert sa.isin(x[None], spec).tolist() == [member] == sa.isin(x.numpy()[None], box).tolist()
    assert bool(spec.is_in(torch.tensor([np.nan, 0.0], dtype=getattr(torch, dtype))))  # TorchRL's own answer


# -- 45: each extra installs what its modules import --------------------------------------------

_SMOKE = {
    "dm_env": "from dm_env import specs\nspec = specs.DiscreteArray(3)\n"
              "assert sa.contains(sa.sample(spec, rng=0), spec)",
    "torchrl": "import torchrl.data as td\nspec = td.Categorical(3)\nassert sa.contains(spec.rand(), spec)\n"
               "assert sa.contains(sa.sample(spec, rng=0), spec)",
    "jumanji": "import jumanji.specs as js\nspec = js.DiscreteArray(3)\n"
               "assert sa.contains(sa.sample(spec, rng=0), spec)",
    "gymnax": "import gymnax.environments.spaces as gx\nspec = gx.Discrete(3)\n"
              "assert sa.contains(sa.sample(spec, rng=0), spec)",
    "torch": "import torch\nb = sa.Box(0, 1, (2,))\nassert sa.isin(sa.sample(b, 3, rng=torch.Generator()), b).all()",
    "jax": "import jax\nb = sa.Box(0, 1, (2,))\nassert bool(sa.isin(sa.sample(b, 3, rng=jax.random.key(0)), b).all())",
}

_ROOT = pathlib.Path(__file__).resolve().parent.parent


def _requirements():
    import tomllib

    project = tomllib.loads((_ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"], project["optional-dependencies"]


def _closure(requirements):
    """The installed distributions ``requirements`` pull in (their names, canonical)."""
    import importlib.metadata as md

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    stack = [Requirement(r) for r in requirements]
    while stack:
        requirement = stack.pop()
        name = canonicalize_name(requirement.name)
        if (requirement.marker and not requirement.marker.evaluate({"extra": ""})) or name in seen:
            continue
        seen.add(name)
        with contextlib.suppress(md.PackageNotFoundError):
            stack.extend(Requirement(r) for r in md.requires(name) or [])
    return seen


def _site_of(distributions: set[str], where: pathlib.Path) -> pathlib.Path:
    """A site-packages directory holding only ``distributions`` (links to the installed files):
    what a clean venv with just these would hold, without the network."""
    import importlib.metadata as md

    from packaging.utils import canonicalize_name

    site = where / "site-packages"
    site.mkdir()
    for dist in md.distributions():
        if canonicalize_name(dist.metadata["Name"]) not in distributions or not dist.files:
            continue
        for top in {f.parts[0] for f in dist.files if f.parts and f.parts[0] not in ("..", "__pycache__")}:
            source = pathlib.Path(dist.locate_file(top))
            if source.exists() and not (site / top).exists():
                (site / top).symlink_to(source)
    return site


def _isolated(code: str, site: pathlib.Path) -> subprocess.CompletedProcess:
    """``code`` run by this Python with only the stdlib, ``site`` and this checkout importable."""
    import sysconfig

    path = os.pathsep.join([str(_ROOT), str(site), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
                            str(pathlib.Path(sysconfig.get_paths()["stdlib"]) / "lib-dynload")])
    return subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path[:] = {path.split(os.pathsep)!r}\n"
                           + code], capture_output=True, text=True, timeout=300, cwd=site)


#: run before an extra's smoke, in the same fresh interpreter (one import of TorchRL, 5 s of CPU, for
#: both laws): with the adapter's own helper module made unimportable, every protocol function
#: raises AdapterUnavailableError naming the extra (it failed to import, and contains(x, spec)
#: silently answered False); then the module is importable again and the smoke loads the adapter
_UNLOADABLE = {
    "torchrl": """
from spacealg.core.generic import AdapterUnavailableError
assert issubclass(AdapterUnavailableError, ImportError)
sys.modules["spacealg.adapters.unbounded"] = None  # the adapter cannot load
import torchrl.data as td
spec = td.Categorical(3)
for call in (lambda: sa.contains(spec.rand(), spec), lambda: sa.sample(spec), lambda: sa.isin(spec.rand((2,)), spec)):
    try:
        call()
    except ImportError as error:
        assert type(error).__name__ == "AdapterUnavailableError", error
        assert "spacealg[torchrl]" in str(error), error
    else:
        raise AssertionError("no error")
del sys.modules["spacealg.adapters.unbounded"]  # it can load again: the smoke below loads it
""",
}


@pytest.mark.parametrize("extra", sorted(_SMOKE))
def test_45_each_extra_imports_only_what_it_installs(extra, tmp_path):
    """Point 45: the torchrl adapter imported the dm_env adapter, whose package the torchrl
    extra does not install. Here the extra's adapter runs with only the distributions the
    core and the extra pull in importable, and must load and answer. Point 45 too, for TorchRL
    (``_UNLOADABLE``): an adapter that cannot load says so, from every protocol function."""
    import importlib.metadata as md

    from packaging.utils import canonicalize_name

    core, extras = _requirements()
    installed = {canonicalize_name(d.metadata["Name"]) for d in md.distributions()}
    missing = [r for r in extras[extra] if canonicalize_name(re.split(r"[<>=\[ ;!~]", r)[0]) not in installed]
    if missing:
        pytest.skip(f"{missing} not installed here")
    site = _site_of(_closure(core + extras[extra]), tmp_path)
    result = _isolated("import spacealg as sa\n" + _UNLOADABLE.get(extra, "") + _SMOKE[extra], site)
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.skipif(not os.environ.get("SPACEALG_EXTRA_VENVS"), reason="set SPACEALG_EXTRA_VENVS=1 (minutes per extra)")
@pytest.mark.parametrize("extra", sorted(_SMOKE))
def test_45_each_extra_in_a_clean_venv(extra, tmp_path):
    """Point 45, the real thing: ``pip install '.[extra]'`` in a fresh venv, then the smoke."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "-q", f"{_ROOT}[{extra}]"], capture_output=True,
                             text=True, timeout=3000)
    assert install.returncode == 0, install.stderr[-3000:]
    result = subprocess.run([python, "-c", "import spacealg as sa\n" + _SMOKE[extra]], capture_output=True,
                            text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]


# -- 46, 47: Gymnasium's own answers ---------------------------------------------------------


@pytest.mark.parametrize(
    ("space", "batch"),
    [
        (gs.Tuple((gs.Discrete(3), gs.Discrete(3))), np.array([[1, 2], [0, 5], [2, 2]])),
        (gs.Tuple((gs.Discrete(3), gs.Discrete(3))), np.array([[[1, 2], [3, 0]]])),
        (gs.Tuple((gs.Box(0, 1), gs.Box(0, 1))), np.array([[0.5, 0.5], [0.5, 2.0]], dtype=np.float32)),
    ],
)
def test_46_gymnasium_tuple_takes_tuple_like_arrays(space, batch):
    """Point 46: Gymnasium's Tuple accepts a tuple-like ndarray; spacealg follows it on
    Gymnasium spaces (TupleProduct keeps tuples: docs/gymnasium.md, the dtype policy)."""
    expected = np.zeros(batch.shape[:-1], dtype=bool)
    for position in np.ndindex(expected.shape):
        expected[position] = space.contains(batch[position])
        assert sa.contains(batch[position], space) == expected[position]
    assert sa.isin(batch, space).tolist() == expected.tolist()
    assert not sa.contains(np.array([1, 2]), sa.TupleProduct(range(3), range(3)))


@pytest.mark.filterwarnings("ignore:.*Casting input x")
@pytest.mark.parametrize(
    "space", [gs.Box(0.0, 1.0, (), np.float32), gs.Box(0, 10, (), np.int64), gs.Box(0.0, 1.0, (2,), np.float32)]
)
def test_47_gymnasium_box_isin_of_an_object_array_is_contains_of_each(space):
    """Point 47: isin(np.array([0.5, 0.25], dtype=object), Box(0, 1)) was all False."""
    rows = [0.5, 0.25, 2.0, 3, np.float64(0.5), "a", None, [0.5, 0.5], np.array([0.5, 0.5])]
    batch = np.empty(len(rows), dtype=object)
    for i, row in enumerate(rows):
        batch[i] = row
    if space.shape:
        batch = np.empty((2, 2), dtype=object)
        batch[0, :] = [0.5, 0.25]
        batch[1, :] = [0.5, 2.0]
    expected = [space.contains(row) for row in batch] if not space.shape else [
        space.contains(batch[0]), space.contains(batch[1])]
    assert sa.isin(batch, space).tolist() == expected
