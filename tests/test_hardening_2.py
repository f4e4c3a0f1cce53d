"""Issue 25: the second hardening campaign. One regression test per reported defect (the point
number in each test's name), each checking the general rule that fixed it; tests/test_fuzz_2.py
fuzzes the same surfaces. Points 11-23 (backends), 30-35 (CLI) and 40-41 (OneHot) live with
the engineers who own that code."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
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
