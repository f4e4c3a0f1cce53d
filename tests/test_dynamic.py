"""Dynamic (issue 39 point 1): the laws of spacealg/spaces/dynamic.py's docstring, over
generated templates, axes and members, on NumPy, torch and JAX, and against Gymnasium's
``Sequence(stack=True)``."""

from __future__ import annotations

import itertools
import math
import pickle

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg import Box, Categorical, Dynamic, OneHot
from spacealg.emulation import emulate_observation_space

DTYPES = [np.float32, np.float64, np.int32, np.int64]


@st.composite
def templates(draw):
    """(template, axes): a Box, Categorical or OneHot with length 1 along the dynamic axes."""
    kind = draw(st.sampled_from(["box", "categorical", "onehot"]))
    ndim = draw(st.integers(1, 3))
    positions = range(ndim - 1) if kind == "onehot" else range(ndim)
    if not positions:
        kind, positions = "box", range(ndim)
    axes = tuple(sorted(draw(st.sets(st.sampled_from(list(positions)), min_size=1, max_size=2))))
    shape = [1 if a in axes else draw(st.integers(1, 3)) for a in range(ndim)]
    if kind == "onehot":
        n = draw(st.integers(1, 4))
        shape[-1] = n
        return OneHot(n, shape=tuple(shape), dtype=draw(st.sampled_from([np.bool_, np.float32]))), axes
    if kind == "categorical":
        nvec = np.array(draw(st.lists(st.integers(1, 5), min_size=math.prod(shape), max_size=math.prod(shape))))
        return Categorical(nvec.reshape(shape)), axes
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    low = draw(st.integers(-5, 0))
    return Box(low, low + draw(st.integers(0, 5)), shape=tuple(shape), dtype=dtype), axes


@st.composite
def dynamics(draw):
    template, axes = draw(templates())
    low = draw(st.integers(0, 2))
    return Dynamic(template, axes, lengths=(low, low + draw(st.integers(0, 2))))


def _slices(x: np.ndarray, s: Dynamic):
    """Every length-1 slice of ``x`` along the dynamic axes (the definition, by brute force)."""
    for position in itertools.product(*(range(x.shape[a]) for a in s.axes)):
        index = [slice(None)] * x.ndim
        for a, k in zip(s.axes, position):
            index[a] = slice(k, k + 1)
        yield x[tuple(index)]


@st.composite
def near_members(draw, s: Dynamic):
    """Arrays of the space's shape with drawn lengths: members, and ones with an entry moved out."""
    x = sa.sample(s, rng=draw(st.integers(0, 2**16)))
    if x.size and draw(st.booleans()):
        x = x.copy()
        flat = x.reshape(-1)
        flat[draw(st.integers(0, x.size - 1))] = draw(st.sampled_from([-7, 2, 9]))
    return x


# -- membership, sampling, clamping on NumPy -----------------------------------------------------


@given(dynamics(), st.data())
def test_contains_is_every_slice_in_the_template(s, data):
    x = data.draw(near_members(s))
    assert sa.contains(x, s) == all(sa.contains(piece, s.space) for piece in _slices(x, s))


@given(dynamics(), st.integers(0, 2**32 - 1))
def test_every_length_is_a_member_and_the_fixed_axes_are_not_free(s, seed):
    x = sa.sample(s, rng=seed)
    for a in s.axes:
        empty = np.take(x, np.arange(0), axis=a)
        assert sa.contains(empty, s)  # length 0 along a dynamic axis: no slice, a member
        assert sa.contains(np.concatenate([x, x], axis=a), s)
    for a in s.fixed:
        assert not sa.contains(np.concatenate([x, x], axis=a), s)
    assert not sa.contains(x[None], s) and not sa.contains("x", s) and not sa.contains(None, s)


@given(dynamics(), st.integers(0, 2**32 - 1), st.sampled_from([None, 3, (2, 1)]))
def test_samples_are_members_with_lengths_in_range_same_seed_same_result(s, seed, size):
    x = sa.sample(s, size, rng=seed)
    lead = () if size is None else np.atleast_1d(size).tolist()
    assert x.ndim == len(lead) + len(s.shape)
    lengths = [x.shape[len(lead) + a] for a in s.axes]
    assert all(s.lengths[0] <= n <= s.lengths[1] for n in lengths)
    assert np.asarray(sa.isin(x, s) if lead else sa.contains(x, s)).all()
    assert np.array_equal(sa.sample(s, size, rng=seed), x)


@given(dynamics(), st.data())
def test_isin_is_the_loop_of_contains(s, data):
    rows = [data.draw(near_members(Dynamic(s.space, s.axes, lengths=(2, 2)))) for _ in range(3)]
    batch = np.stack(rows)
    assert sa.isin(batch, s).tolist() == [sa.contains(r, s) for r in rows]


@given(dynamics(), st.data())
def test_clamp_clamps_every_slice_keeps_lengths_and_members(s, data):
    x = data.draw(near_members(s))
    y = sa.clamp(x, s)
    assert y.shape == x.shape and sa.contains(y, s)
    for piece, clamped in zip(_slices(x, s), _slices(np.asarray(y), s)):
        assert np.array_equal(np.asarray(sa.clamp(piece, s.space)), clamped)
    if sa.contains(x, s):
        assert y is x
    z = x.astype(y.dtype)
    assert sa.clamp_(z, s) is z and np.array_equal(z, y)


@given(dynamics())
def test_style_cardinality_bounds_eltype_elsize(s):
    assert sa.SpaceStyle(s) == sa.UnknownSpaceStyle() and sa.cardinality(s) == math.inf
    low, high = sa.bounds(s)
    template_low, template_high = sa.bounds(s.space)
    assert np.array_equal(low, template_low) and np.array_equal(high, template_high)
    assert sa.eltype(s) is np.ndarray
    with pytest.raises(TypeError, match="any length"):
        sa.elsize(s)
    with pytest.raises(TypeError, match="not finite"):
        next(iter(sa.elements(s)))


@given(dynamics())
def test_flattening_and_emulation_refuse_naming_the_axes(s):
    with pytest.raises(ValueError, match="no fixed width"):
        sa.flatdim(s)
    with pytest.raises(ValueError, match="no fixed width"):
        sa.flatten(sa.sample(s, rng=0), s)
    with pytest.raises(ValueError, match="no fixed-size"):
        emulate_observation_space(s)


@given(dynamics())
def test_repr_pickle_json_hash(s):
    assert eval(repr(s), {**vars(sa), "np": np}) == s
    assert pickle.loads(pickle.dumps(s)) == s and hash(pickle.loads(pickle.dumps(s))) == hash(s)
    assert sa.from_json(sa.to_json(s)) == s


def test_equality_and_inclusion():
    box = Box(0.0, 1.0, shape=(1, 2))
    assert Dynamic(box) == Dynamic(box, axes=(0,)) == Dynamic(box, axes=-2)
    assert Dynamic(box) != Dynamic(box, lengths=(0, 2)) and Dynamic(box) != Dynamic(Box(0.0, 1.0, shape=(1, 1)), 1)
    assert Dynamic(Box(0.2, 0.5, shape=(1, 2))) <= Dynamic(box) and not Dynamic(box) <= Dynamic(Box(0.2, 0.5, (1, 2)))


def test_constructor_errors_name_the_argument():
    box = Box(0.0, 1.0, shape=(1, 2))
    for bad, error, match in [((box, 1), ValueError, "length 1"), ((box, 2), ValueError, "axes"),
                              ((box, (0, 0)), ValueError, "distinct"), ((box, "0"), TypeError, "axes"),
                              ((box, ()), TypeError, "axes"), ((box, True), TypeError, "axes"),
                              ((sa.Text(3),), TypeError, "array space"),
                              ((Box(0.0, 1.0, shape=()),), ValueError, "0-d"),
                              ((Dynamic(box),), TypeError, "already Dynamic")]:
        with pytest.raises(error, match=match):
            Dynamic(*bad)
    for lengths, error in [((2, 1), ValueError), ((-1, 2), ValueError), ((1,), TypeError), ((1.0, 2), TypeError)]:
        with pytest.raises(error, match="lengths"):
            Dynamic(box, lengths=lengths)


@given(st.integers(1, 3), st.data())
def test_axis_0_of_a_box_is_gymnasiums_stacked_sequence(width, data):
    feature = Box(-1.0, 1.0, shape=(width,), dtype=np.float32)
    s, sequence = Dynamic(feature ** 1), sa.Sequence(feature, stack=True)
    x = data.draw(near_members(Dynamic(feature ** 1, lengths=(0, 3))))
    g = gymnasium.spaces.Sequence(gymnasium.spaces.Box(-1.0, 1.0, shape=(width,), dtype=np.float32), stack=True)
    assert sa.contains(x, s) == sa.contains(x, sequence) == g.contains(x)


# -- torch and JAX: the same rules ---------------------------------------------------------------

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")


def _backend_arrays(name: str, x: np.ndarray):
    return torch.as_tensor(x) if name == "torch" else jax.numpy.asarray(x)


def _fits_jax(s: Dynamic) -> bool:  # without x64, JAX holds no 64-bit arrays
    return np.dtype(sa.sample(s.space, rng=0).dtype).itemsize < 8


@settings(deadline=None, max_examples=15)
@given(dynamics(), st.data(), st.sampled_from(["torch", "jax"]))
def test_torch_and_jax_isin_clamp_contains_agree_with_numpy(s, data, name):
    if name == "jax" and not _fits_jax(s):
        return
    rows = np.stack([data.draw(near_members(Dynamic(s.space, s.axes, lengths=(2, 2)))) for _ in range(3)])
    batch = _backend_arrays(name, rows)
    assert np.asarray(sa.isin(batch, s)).tolist() == sa.isin(rows, s).tolist()
    assert [sa.contains(row, s) for row in batch] == [sa.contains(row, s) for row in rows]
    clamped = sa.clamp(batch, s)
    assert type(clamped) is type(batch) and np.array_equal(np.asarray(clamped), np.asarray(sa.clamp(rows, s)))


@settings(deadline=None, max_examples=15)
@given(dynamics(), st.integers(0, 2**16), st.sampled_from(["torch", "jax"]))
def test_torch_and_jax_samples_are_members_same_seed_same_result(s, seed, name):
    if name == "jax" and not _fits_jax(s):
        return

    def rng():
        return torch.Generator().manual_seed(seed) if name == "torch" else jax.random.key(seed)

    x = sa.sample(s, (2,), rng=rng())
    assert type(x) is type(_backend_arrays(name, np.zeros(1)))
    assert np.asarray(sa.isin(x, s)).all() and np.asarray(sa.isin(np.asarray(x), s)).all()
    assert all(s.lengths[0] <= x.shape[1 + a] <= s.lengths[1] for a in s.axes)
    assert np.array_equal(np.asarray(sa.sample(s, (2,), rng=rng())), np.asarray(x))


def test_a_traced_key_cannot_draw_lengths_and_jax_clamp_in_place_is_refused():
    s = Dynamic(Box(0.0, 1.0, shape=(1, 2)))
    with pytest.raises(TypeError, match="traced"):
        jax.jit(lambda key: sa.sample(s, rng=key))(jax.random.key(0))
    with pytest.raises(TypeError, match="immutable"):
        sa.clamp_(jax.numpy.zeros((3, 2)), s)
    t = torch.full((3, 2), 4.0)
    assert sa.clamp_(t, s) is t and bool((t == 1.0).all())


def test_torch_flatten_batch_refuses():
    from spacealg.ops import flatten_batch

    with pytest.raises(ValueError, match="no fixed width"):
        flatten_batch(torch.zeros((3, 2, 2)), Dynamic(Box(0.0, 1.0, shape=(1, 2))))
