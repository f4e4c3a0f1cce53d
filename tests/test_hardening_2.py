"""Issue 25: the second hardening campaign. One regression test per reported defect (the point
number in each test's name), each checking the general rule that fixed it; tests/test_fuzz_2.py
fuzzes the same surfaces. Points 11-23 (backends), 30-35 (CLI) and 40-41 (OneHot) live with
the engineers who own that code."""

from __future__ import annotations

import json
import pickle
import tracemalloc

import gymnasium.spaces as gs
import numpy as np
import pytest

import spacealg as sa
from spacealg import Masked
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
