"""The fuzz layer of the second hardening campaign (issue 25): Hypothesis over the surfaces
it attacked, so that the next campaign finds less. Bounded by the active Hypothesis profile
(tests/conftest.py: ``ci`` and ``dev`` run a few dozen examples per law); run deeper with
``SPACEALG_HYPOTHESIS_PROFILE=deep`` (300) or ``thorough`` (1000).

- masks of generated spaces, on big-integer and narrow-dtype bases too: every draw is an
  allowed member, ``isin``/``contains``/``index``/``element`` agree, an unmasked part equals an
  all-true mask, weights of any magnitude draw every positive entry;
- JSON documents of masked and big-integer spaces, mutated: a space or a ``DocumentError``,
  and a small document never allocates more than a small multiple of its size;
- adapter round trips: TorchRL specs (masked ones included) and back, membership agreeing
  with NaN and infinities; Gymnasium ``joint_space`` sampling as ``batch_space``;
- vector view writes: a batch is stored exactly when every row is a member, refused
  (``APIUsageError``, buffers untouched) otherwise.
"""

from __future__ import annotations

import contextlib
import math
import tracemalloc

import gymnasium.spaces as gs
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector.utils import batch_space
from hypothesis import assume, given
from hypothesis import strategies as st

import spacealg as sa
from spacealg import Masked
from spacealg.serialize import DocumentError
from spacealg.strategies.gymnasium import gymnasium_spaces
from spacealg.strategies.masks import mask_bases, masks
from tests.helpers import mutated_document

# -- masks ------------------------------------------------------------------------------------


@st.composite
def _big_bases(draw):
    """Finite spaces whose values need every bit: uint64 beyond 2**53, ranges across or
    beyond int64, narrow dtypes holding their whole range."""
    n = draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["uint64", "range", "narrow", "array"]))
    if kind == "uint64":
        start = draw(st.integers(2**53, 2**64 - n))
        return sa.Categorical(n, start=start, dtype=np.uint64)
    if kind == "range":
        start = draw(st.sampled_from([2**63 - 2, 2**64, -(2**63) - 2, 2**70]))
        step = draw(st.sampled_from([1, 3, -2]))
        return range(start, start + step * n, step)
    if kind == "narrow":
        dtype = draw(st.sampled_from([np.uint8, np.int8]))
        info = np.iinfo(dtype)
        return sa.Categorical(int(info.max) - int(info.min) + 1, start=int(info.min), dtype=dtype)
    return sa.ArraySpace(range(2**64, 2**64 + n), draw(st.integers(1, 2)))


_bases = st.one_of(mask_bases(), _big_bases())


@given(_bases, st.data())
def test_masked_draws_are_allowed_members(space, data):
    mask = data.draw(masks(space))
    masked = Masked(space, mask)
    assume(not masked.is_empty)
    drawn = sa.sample(masked, 5, rng=data.draw(st.integers(0, 2**32 - 1)))
    assert np.asarray(sa.isin(drawn, masked)).all()
    one = sa.sample(masked, rng=0)
    assert sa.contains(one, masked) and sa.contains(one, space)
    via_argument = sa.sample(space, 5, mask=mask, rng=1)
    assert np.asarray(sa.isin(via_argument, masked)).all()
    n = sa.cardinality(masked)
    for i in {0, n - 1, n // 2}:
        assert sa.index(sa.element(i, masked), masked) == i


@given(mask_bases())
def test_an_unmasked_part_is_an_all_true_mask(space):
    full = Masked(space, np.ones(Masked(space, None)._factors.sizes, dtype=bool))
    assert Masked(space, None) == full and hash(Masked(space, None)) == hash(full)
    assert sa.cardinality(full) == sa.cardinality(space)


@given(st.integers(1, 6), st.integers(-1074, 1023), st.data())
def test_weights_of_any_magnitude_draw_every_positive_entry(n, exponent, data):
    scale = math.ldexp(1.0, exponent) if exponent > -1074 else 5e-324
    weights = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)), dtype=np.float64)
    assume(weights.any())
    drawn = sa.sample(range(n), 400, probability=weights * scale, rng=0)
    counts = np.bincount(drawn, minlength=n)
    assert (counts[weights == 0] == 0).all()
    share = counts[weights > 0] / 400
    assert (np.abs(share - 1 / int(weights.sum())) < 0.2).all()


# -- JSON documents ---------------------------------------------------------------------------




_hostile = st.one_of(
    st.none(), st.booleans(), st.sampled_from([0, -1, 2**63, 2**64 + 1, 10**9, 4 * 10**8, "inf", "nan", [], {}]),
    st.text(max_size=4), st.lists(st.booleans(), max_size=3),
)


@given(st.one_of(mask_bases(), _big_bases()), st.data())
def test_mutated_documents_of_masked_spaces(space, data):
    masked = Masked(space, data.draw(masks(space)))
    document = sa.to_json(masked)
    assert sa.from_json(document) == masked
    text = mutated_document(document, data, _hostile)
    if text is None:
        return
    tracemalloc.start()
    try:
        with contextlib.suppress(DocumentError):  # any other exception fails
            sa.from_json(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000 + 1000 * len(text)  # bytes: a small multiple of the document


# -- adapter round trips ----------------------------------------------------------------------


@st.composite
def _torchrl_specs(draw):
    torch = pytest.importorskip("torch")
    td = pytest.importorskip("torchrl.data")
    kind = draw(st.sampled_from(["categorical", "multi", "unbounded", "bounded"]))
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    if kind == "categorical":
        n = draw(st.integers(1, 5))
        bits = draw(st.lists(st.booleans(), min_size=n * math.prod(shape), max_size=n * math.prod(shape)))
        mask = torch.tensor(bits, dtype=torch.bool).reshape((*shape, n)) if draw(st.booleans()) else None
        return td.Categorical(n, shape=shape, mask=mask)
    if kind == "multi":
        nvec = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
        bits = draw(st.lists(st.booleans(), min_size=sum(nvec), max_size=sum(nvec)))
        mask = torch.tensor(bits, dtype=torch.bool) if draw(st.booleans()) else None
        return td.MultiCategorical(nvec, mask=mask)
    dtype = draw(st.sampled_from([torch.float16, torch.float32, torch.float64]))
    if kind == "unbounded":
        return td.Unbounded(shape, dtype=dtype)
    return td.Bounded(-1.0, 1.0, shape, dtype=dtype)


def _allows_something(spec):
    mask = getattr(spec, "mask", None)
    if mask is None:
        return True
    rows = mask.reshape(-1, mask.shape[-1])
    if type(spec).__name__ == "MultiCategorical":
        ends = np.cumsum([0, *[int(n) for n in spec.nvec]])
        return all(bool(row[ends[i]:ends[i + 1]].any()) for row in rows for i in range(len(ends) - 1))
    return bool(rows.any(-1).all())


@given(_torchrl_specs(), st.data())
def test_torchrl_round_trips_and_membership(spec, data):
    import torch

    from spacealg.adapters.torchrl import from_torchrl, to_torchrl

    assume(_allows_something(spec))
    space = from_torchrl(spec)
    back = to_torchrl(space, batch_shape=())
    assert from_torchrl(back) == space  # the same set (a uniform MultiCategorical comes back a Categorical)
    if type(back) is type(spec):
        assert bool(back == spec)
        if getattr(spec, "mask", None) is not None:
            assert torch.equal(back.mask, spec.mask)
    drawn = sa.sample(spec, 4, rng=data.draw(st.integers(0, 2**16)))
    assert sa.isin(drawn, spec).all()
    assert all(bool(spec.is_in(row)) for row in drawn)
    assert np.asarray(sa.isin(drawn.numpy(), space)).all()
    if spec.dtype.is_floating_point:
        special = data.draw(st.sampled_from([float("nan"), float("inf"), -float("inf"), 0.5]))
        x = torch.full(tuple(spec.shape), special, dtype=spec.dtype)
        assert sa.contains(x, spec) == sa.contains(x.numpy(), space)


@given(gymnasium_spaces(), st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_joint_space_samples_as_batch_space(space, seed, n):
    space.seed(seed)
    expected = batch_space(space, n)
    got = sa.joint_space(space, n)
    assert got == expected
    assert data_equivalence(got.sample(), expected.sample())


# -- vector view writes -----------------------------------------------------------------------


class _Vector:
    def __init__(self, space, batch, num_envs):
        self.num_envs, self.single_observation_space, self.single_action_space = num_envs, space, gs.Discrete(2)
        self.batch, self.metadata = batch, {}

    def reset(self, seed=None, options=None):
        return self.batch, {}

    def step(self, actions):
        return self.batch, np.zeros(self.num_envs), np.zeros(self.num_envs, bool), np.zeros(self.num_envs, bool), {}

    def close(self):
        pass


_observation_spaces = st.sampled_from([
    gs.Box(0, 255, (2,), np.uint8),
    gs.Box(-1.0, 1.0, (3,), np.float32),
    gs.Discrete(4),
    gs.MultiDiscrete([2, 3]),
    gs.Dict({"a": gs.Discrete(3), "b": gs.Box(-1.0, 1.0, (), np.float32)}),
    gs.Tuple((gs.Discrete(2), gs.Box(0, 10, (2,), np.int16))),
])


def _mutate(batch, data):
    """The batch with one leaf's entry replaced by a hostile value (or the batch as it is)."""
    if isinstance(batch, dict):
        key = data.draw(st.sampled_from(sorted(batch)))
        return {**batch, key: _mutate(batch[key], data)}
    if isinstance(batch, tuple):
        i = data.draw(st.integers(0, len(batch) - 1))
        return tuple(_mutate(b, data) if j == i else b for j, b in enumerate(batch))
    choice = data.draw(st.sampled_from(["same", "value", "row", "dtype"]))
    array = np.array(batch)
    if choice == "value" and array.size:
        flat = array.astype(np.float64).reshape(-1)
        flat[data.draw(st.integers(0, flat.size - 1))] = data.draw(st.sampled_from([300.7, -1.0, np.nan, 1e9, 0.5]))
        return flat.reshape(array.shape)
    if choice == "row":
        return array[:1]
    if choice == "dtype":
        return array.astype(np.float64)
    return array


@given(_observation_spaces, st.integers(1, 3), st.data())
def test_the_vector_view_stores_members_exactly_and_refuses_the_rest(space, n, data):
    from spacealg.emulation import codec_for
    from spacealg.env import APIUsageError
    from spacealg.vector import VectorPufferEnv

    good = sa.sample(space, n, rng=0)
    vector = _Vector(space, good, n)
    env = VectorPufferEnv(vector)
    env.reset(seed=0)
    before = env.observations.copy()
    vector.batch = _mutate(sa.sample(space, n, rng=1), data)
    members = False
    with contextlib.suppress(ValueError, TypeError):
        inside = np.asarray(sa.isin(vector.batch, space))
        members = inside.shape == (n,) and bool(inside.all()) and _rows(vector.batch, n)
    if not members:
        with pytest.raises(APIUsageError):
            env.step(np.zeros(n, np.int64))
        assert np.array_equal(env.observations, before, equal_nan=True)
        return
    env.step(np.zeros(n, np.int64))
    if env.is_obs_emulated:
        stored = codec_for(space, "observation").nativize_batch(env.observations, copy=True)
    else:
        stored = env.observations
    assert np.asarray(sa.isin(stored, space)).all()
    for i in range(n):
        row = (stored[i] if not isinstance(stored, (dict, tuple)) else
               {k: v[i] for k, v in stored.items()} if isinstance(stored, dict) else tuple(v[i] for v in stored))
        given_row = (vector.batch[i] if not isinstance(vector.batch, (dict, tuple)) else
                     {k: v[i] for k, v in vector.batch.items()} if isinstance(vector.batch, dict)
                     else tuple(v[i] for v in vector.batch))
        assert _same(row, given_row)


def _rows(batch, n):
    """Every leaf holds ``n`` rows (isin broadcasts a one-row component; a view must not)."""
    if isinstance(batch, dict):
        return all(_rows(v, n) for v in batch.values())
    if isinstance(batch, tuple):
        return all(_rows(v, n) for v in batch)
    return np.ndim(batch) >= 1 and len(batch) == n


def _same(a, b):
    if isinstance(a, dict):
        return all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
