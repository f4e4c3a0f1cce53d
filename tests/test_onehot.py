"""OneHot (issue 22 point 5; issue 25 points 40-41): the laws of spacealg/spaces/onehot.py's
docstring, over generated spaces and members, on NumPy, torch and JAX, and against
Gymnasium's and TorchRL's own output."""

from __future__ import annotations

import itertools
import math
import pickle

import gymnasium
import numpy as np
import pytest
from gymnasium.spaces import utils as gym_utils
from gymnasium.vector.utils import batch_space
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg import OneHot
from spacealg.core.image import image_of
from spacealg.ops import flatten_batch, unflatten_batch
from spacealg.strategies import members, spaces

DTYPES = [np.bool_, np.int8, np.int64, np.uint8, np.float16, np.float32, np.float64]


@st.composite
def onehots(draw, max_blocks: int = 3, max_batch: int = 2) -> OneHot:
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=max_blocks))
    nvec = sizes[0] if len(sizes) == 1 and draw(st.booleans()) else sizes
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=max_batch)))
    return OneHot(nvec, shape=(*batch, sum(sizes)) if batch or draw(st.booleans()) else None,
                  dtype=draw(st.sampled_from(DTYPES)))


small = onehots(max_blocks=2, max_batch=1).filter(lambda s: sa.cardinality(s) <= 64)


def _rows(s: OneHot) -> st.SearchStrategy[np.ndarray]:
    """Arrays of the space's shape with entries 0/1 (members and near misses)."""
    n = math.prod(s.shape)
    return st.lists(st.integers(0, 1), min_size=n, max_size=n).map(lambda v: np.array(v, s.dtype).reshape(s.shape))


def _brute_member(x: np.ndarray, s: OneHot) -> bool:
    rows = np.asarray(x, dtype=np.float64).reshape(-1, s.shape[-1])
    if not np.isin(rows, (0, 1)).all():
        return False
    ends = np.cumsum([0, *s.sizes])
    return all(rows[:, a:b].sum(axis=1).tolist() == [1] * len(rows) for a, b in itertools.pairwise(ends))


# -- membership, sampling ----------------------------------------------------------------------


@given(onehots(), st.integers(0, 2**32 - 1))
def test_samples_are_members_of_the_space_dtype(s, seed):
    x = sa.sample(s, rng=seed)
    assert x.shape == s.shape and x.dtype == s.dtype and x in s and _brute_member(x, s)
    batch = sa.sample(s, (2, 3), rng=seed)
    assert batch.shape == (2, 3, *s.shape) and sa.isin(batch, s).all()
    assert np.array_equal(sa.sample(s, (2, 3), rng=seed), batch)  # same seed, same draws


@given(onehots(), st.data())
def test_membership_by_value_agrees_with_the_definition(s, data):
    x = data.draw(_rows(s))
    assert sa.contains(x, s) == _brute_member(x, s)
    for dtype in (np.float32, np.int64, np.bool_):
        assert sa.contains(x.astype(dtype), s) == _brute_member(x, s)  # whatever the storage dtype


@given(onehots(), st.data())
def test_isin_is_the_loop_of_contains(s, data):
    rows = data.draw(st.lists(st.one_of(_rows(s), st.builds(lambda: sa.sample(s))), min_size=1, max_size=5))
    batch = np.stack(rows)
    assert sa.isin(batch, s).tolist() == [sa.contains(r, s) for r in rows]


def test_non_members_are_refused_without_raising():
    s = OneHot([2, 3])
    for x in [np.array([1, 0, 1, 0, 0]) * 2, np.array([1, 1, 0, 0, 1]), np.array([0.5, 0.5, 1, 0, 0]),
              np.array([np.nan, 1, 1, 0, 0]), np.zeros(4), "10100", None, [1, 0, 1, 0, 0, 0], object()]:
        assert not sa.contains(x, s)
    assert sa.contains([1, 0, 0, 0, 1], s)
    with pytest.raises(ValueError, match="isin"):
        sa.isin(np.zeros((3, 4)), s)


# -- the protocol's other functions ------------------------------------------------------------


@given(onehots())
def test_style_bounds_eltype_elsize(s):
    low, high = sa.bounds(s)
    x = sa.sample(s, rng=0)
    assert sa.SpaceStyle(s) == sa.FiniteSpaceStyle(s.shape) and sa.elsize(s) == s.shape
    assert isinstance(x, sa.eltype(s)) and (low <= x).all() and (x <= high).all() and low.dtype == s.dtype


@given(onehots())
def test_cardinality_is_the_product_of_nvec_per_batch_entry(s):
    assert sa.cardinality(s) == math.prod(s.sizes) ** math.prod(s.batch)


@given(small)
def test_elements_index_element_are_a_bijection(s):
    listed = list(sa.elements(s))
    assert len(listed) == sa.cardinality(s) == len({x.tobytes() for x in listed})
    for i, x in enumerate(listed):
        assert x in s and sa.index(x, s) == i and np.array_equal(sa.element(i, s), x)
    with pytest.raises(ValueError, match="element: i"):
        sa.element(len(listed), s)


def test_elements_order_reads_hot_positions_last_block_fastest():
    s = OneHot([2, 3])
    assert [sa.encode(x, s).tolist() for x in s] == [[a, b] for a in range(2) for b in range(3)]


@given(onehots(), st.data())
def test_clamp_is_the_nearest_member_argmax_ties_to_first(s, data):
    n = math.prod(s.shape)
    x = np.array(data.draw(st.lists(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0, 2.0]), min_size=n, max_size=n)))
    x = x.reshape(s.shape)
    y = sa.clamp(x, s)
    assert y in s
    member = sa.sample(s, rng=0)
    assert sa.clamp(member, s) is member  # members unchanged
    blocks = np.split(x.reshape(-1, s.shape[-1]), np.cumsum(s.sizes)[:-1], axis=1)
    hot = np.stack([b.argmax(axis=1) for b in blocks], axis=-1)  # numpy's argmax: ties to the first
    assert np.array_equal(sa.encode(y, s), hot.reshape(np.shape(sa.encode(y, s))))
    if sa.cardinality(s) <= 64:  # nearest: no member is closer
        best = min(float(((np.asarray(e, np.float64) - x) ** 2).sum()) for e in s)
        assert float(((y.astype(np.float64) - x) ** 2).sum()) == best
    z = x.astype(np.float32).copy()
    assert sa.clamp_(z, s) is z and np.array_equal(z, y.astype(np.float32))


def test_clamp_refuses_nan_and_non_arrays():
    with pytest.raises(ValueError, match="NaN"):
        sa.clamp(np.array([np.nan, 0.0]), OneHot(2))
    with pytest.raises(TypeError, match="clamp"):
        sa.clamp("ab", OneHot(2))
    with pytest.raises(TypeError, match="clamp_"):
        sa.clamp_([0, 1], OneHot(2))


# -- value semantics ---------------------------------------------------------------------------


@given(onehots())
def test_repr_evaluates_back_pickle_hash_json(s):
    assert eval(repr(s), {**vars(sa), "np": np}) == s
    back = pickle.loads(pickle.dumps(s))
    assert back == s and hash(back) == hash(s)
    doc = sa.to_json(s)
    assert sa.from_json(__import__("json").dumps(doc, allow_nan=False)) == s and repr(sa.from_json(doc)) == repr(s)


@pytest.mark.parametrize("node", [{"kind": "onehot"}, {"kind": "onehot", "nvec": "4"}, {"kind": "onehot", "nvec": 0},
                                  {"kind": "onehot", "nvec": 4, "colour": 1}, {"kind": "onehot", "nvec": {"tuple": 4}},
                                  {"kind": "onehot", "nvec": 4, "dtype": {"dtype": "U3"}},
                                  {"kind": "onehot", "nvec": 2, "shape": {"tuple": [1, 3]}}])
def test_malformed_documents_raise_document_errors(node):
    with pytest.raises(sa.serialize.DocumentError, match="space"):
        sa.from_json({"format": "spacealg.space", "version": 1, "space": node})


def test_equality_compares_nvec_shape_dtype_inclusion_compares_sets():
    assert OneHot(4) != OneHot([4]) and OneHot(4) != OneHot(4, dtype=np.float32)
    assert OneHot(4) <= OneHot([4], dtype=np.float32) <= OneHot(4)
    assert not OneHot([2, 2]) <= OneHot([3, 1]) and not OneHot(4) <= OneHot(4, shape=(1, 4))
    assert OneHot([2, 1]) <= sa.Box(0, 1, shape=(3,), dtype=np.int8)
    assert OneHot([2, 1]) <= sa.Box(np.array([0, 0, 1]), 1, shape=(3,), dtype=np.int8)  # a block of one is always 1
    assert not OneHot([2, 1]) <= sa.Box(1, 1, shape=(3,), dtype=np.int8)
    assert OneHot([2, 1]) <= sa.ArraySpace(bool, 3) and OneHot(3) <= sa.ArraySpace(range(2), 3)
    assert not OneHot(3) <= sa.ArraySpace(range(1, 3), 3) and not OneHot(3) <= sa.ArraySpace(bool, 4)
    assert OneHot(3) <= sa.Categorical([2, 2, 2], dtype=np.int8)
    with pytest.raises(TypeError, match="not decided"):
        sa.issubspace(OneHot([8] * 5), sa.ArraySpace(bool, 40))


def test_constructor_errors_name_the_argument():
    for args, kwargs, error, word in [((0,), {}, ValueError, "nvec"), (([],), {}, TypeError, "nvec"),
                                      ((True,), {}, TypeError, "nvec"), ((3,), {"shape": (2, 4)}, ValueError, "shape"),
                                      ((3,), {"dtype": str}, ValueError, "dtype"), (("3",), {}, TypeError, "nvec")]:
        with pytest.raises(error, match=word):
            OneHot(*args, **kwargs)


# -- derived operations: flatten, Gymnasium, joint_space, masks, strategies ------------------------


@given(onehots(), st.integers(0, 2**32 - 1))
def test_flatten_is_the_vector_itself_as_gymnasium_flattens_its_positions(s, seed):
    x = sa.sample(s, rng=seed)
    flat = sa.flatten(x, s)
    g = sa.to_gymnasium(s)
    assert sa.flatdim(s) == math.prod(s.shape) == gym_utils.flatdim(g)
    assert np.array_equal(flat, x.reshape(-1)) and flat.dtype == np.int64
    expected = gym_utils.flatten(g, sa.encode(x, s))
    assert np.array_equal(flat, expected) and flat.dtype == expected.dtype
    back = sa.unflatten(flat, s)
    assert np.array_equal(back, x) and back.dtype == s.dtype
    batch = sa.sample(s, 3, rng=seed)
    assert np.array_equal(flatten_batch(batch, s), np.stack([sa.flatten(b, s) for b in batch]))
    assert np.array_equal(unflatten_batch(flatten_batch(batch, s), s), batch)
    assert flat in sa.ops.flattened_box(s)


@given(onehots(), st.integers(0, 2**32 - 1))
def test_gymnasium_image_is_the_hot_positions(s, seed):
    g = sa.to_gymnasium(s)
    expected = gymnasium.spaces.Discrete if s.scalar and not s.batch else gymnasium.spaces.MultiDiscrete
    assert isinstance(g, expected)
    x = sa.sample(s, rng=seed)
    assert g.contains(sa.encode(x, s)) and np.array_equal(sa.decode(sa.encode(x, s), s), x)
    g.seed(seed)
    y = g.sample()
    assert sa.decode(y, s) in s and np.array_equal(sa.encode(sa.decode(y, s), s), y)
    with pytest.raises(ValueError, match="encode"):
        sa.encode(np.zeros(s.shape), s)
    with pytest.raises(ValueError, match="decode"):  # a position beyond its block: no member, never a zero vector
        sa.decode(np.full(np.shape(y), max(s.sizes)), s)


@given(onehots(), st.integers(1, 3))
def test_joint_space_adds_a_batch_axis(s, n):
    joint = sa.joint_space(s, n)
    assert joint == OneHot(s.nvec if s.scalar else list(s.sizes), shape=(n, *s.shape), dtype=s.dtype) == s ** n
    assert np.stack([sa.sample(s, rng=i) for i in range(n)]) in joint
    if s.scalar and not s.batch:  # Discrete -> MultiDiscrete, as batch_space
        assert sa.to_gymnasium(joint) == batch_space(sa.to_gymnasium(s), n)


@given(st.integers(1, 6), st.data())
def test_masks_are_over_hot_positions(n, data):
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    m = sa.Masked(OneHot(n), mask)
    assert sa.cardinality(m) == mask.sum()
    for x in OneHot(n):
        assert sa.contains(x, m) == bool(mask[x.argmax()])
    if mask.any():
        draws = sa.sample(m, 20, rng=0)
        assert sa.isin(draws, m).all() and mask[draws.argmax(axis=1)].all()
        assert sa.sample(OneHot(n), 5, rng=1, mask=mask).argmax(axis=1).tolist() == \
            sa.sample(m, 5, rng=1).argmax(axis=1).tolist()
    assert sa.from_json(sa.to_json(m)) == m


def test_masks_per_block():
    m = sa.Masked(OneHot([2, 3]), (np.array([True, False]), np.array([False, True, True])))
    assert sa.cardinality(m) == 2 and all(x[0] == 1 and x[2] == 0 for x in m)


@given(onehots(), st.sampled_from(["alone", "dict", "tuple"]), st.sampled_from(["observation", "action"]),
       st.integers(0, 2**32 - 1))
def test_emulation_stores_the_vector_as_a_leaf(s, where, role, seed):
    from spacealg.emulation import emulate_action_space, emulate_observation_space
    from spacealg.emulation.buffers import emulate_copy, nativize

    space = {"alone": s, "dict": sa.DictProduct(v=s, b=sa.Box(0.0, 1.0, shape=(2,))),
             "tuple": sa.TupleProduct(s, range(3))}[where]
    emulated, struct = (emulate_observation_space if role == "observation" else emulate_action_space)(space)
    x = sa.sample(space, rng=seed)
    row = emulate_copy(x, emulated.dtype, struct)
    assert emulated.contains(row)
    back = nativize(row, space, struct)
    assert sa.contains(back, space)
    leaves = (back, x) if where == "alone" else ((back["v"], x["v"]) if where == "dict" else (back[0], x[0]))
    assert np.array_equal(*leaves)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(onehots(), st.data())
def test_members_draws_members(s, data):
    assert data.draw(members(s)) in s


@pytest.mark.parametrize("s", [OneHot(4), OneHot([2, 3], shape=(2, 5), dtype=np.float32)], ids=repr)
def test_members_shrinks_to_element_zero(s):
    assert np.array_equal(find(members(s), lambda x: True), sa.element(0, s))
    last = sa.element(sa.cardinality(s) - 1, s)
    assert np.array_equal(find(members(s), lambda x: np.array_equal(x, last)), last)


@given(spaces(leaves=("catalogued",), max_depth=0))
def test_spaces_draws_catalogued_kinds(s):
    assert isinstance(s, OneHot) and sa.sample(s, rng=0) in s


# -- torch and JAX: the same rules -------------------------------------------------------------


torch = pytest.importorskip("torch")


@given(onehots(), st.integers(0, 2**31 - 1))
def test_torch_sample_isin_clamp_flatten_agree_with_numpy(s, seed):
    g = torch.Generator().manual_seed(seed)
    t = sa.sample(s, (4,), rng=g)
    assert isinstance(t, torch.Tensor) and t.shape == (4, *s.shape)
    assert t.dtype == torch.from_numpy(np.empty(0, s.dtype)).dtype  # the space's dtype, kept
    assert sa.isin(t, s).all()
    assert torch.equal(sa.sample(s, (4,), rng=torch.Generator().manual_seed(seed)), t)
    raw = torch.rand((3, *s.shape), generator=g, dtype=torch.float64)
    assert sa.isin(raw, s).tolist() == sa.isin(raw.numpy(), s).tolist()
    clamped = sa.clamp(raw, s)
    assert np.array_equal(clamped.numpy(), sa.clamp(raw.numpy(), s)) and sa.isin(clamped, s).all()
    inplace = raw.clone()
    assert sa.clamp_(inplace, s) is inplace and np.array_equal(inplace.numpy(), clamped.numpy().astype(np.float64))
    flat = flatten_batch(t, s)
    assert np.array_equal(flat.numpy(), flatten_batch(t.numpy(), s)) and flat.dtype == torch.int64
    assert torch.equal(unflatten_batch(flat, s), t)


jax = pytest.importorskip("jax")


# a few spaces (every kind of nvec, batch and dtype): JAX compiles each op once per shape
JAX_SPACES = [OneHot(4), OneHot([2, 3], shape=(2, 5), dtype=np.float32), OneHot(3, shape=(2, 3), dtype=np.int8)]


@settings(deadline=None, max_examples=15)
@given(st.sampled_from(JAX_SPACES), st.integers(0, 2**31 - 1))
def test_jax_sample_isin_clamp_flatten_agree_with_numpy(s, seed):
    key = jax.random.key(seed)
    j = sa.sample(s, (4,), rng=key)
    assert isinstance(j, jax.Array) and j.shape == (4, *s.shape) and sa.isin(j, s).all()
    assert np.array_equal(np.asarray(sa.sample(s, (4,), rng=jax.random.key(seed))), np.asarray(j))
    raw = jax.random.uniform(jax.random.key(seed + 1), (4, *s.shape))  # the draws' rows: one shape to compile
    assert np.asarray(sa.isin(raw, s)).tolist() == sa.isin(np.asarray(raw), s).tolist()
    assert np.array_equal(np.asarray(sa.clamp(raw, s)), sa.clamp(np.asarray(raw), s))
    assert np.array_equal(np.asarray(flatten_batch(j, s)), flatten_batch(np.asarray(j), s))
    assert np.array_equal(np.asarray(unflatten_batch(flatten_batch(j, s), s)), np.asarray(j))
    with pytest.raises(TypeError, match="immutable"):
        sa.clamp_(raw, s)


from spacealg.backends import to_numpy  # noqa: E402
from tests.helpers import same, stacks, to_backend  # noqa: E402
from tests.test_backends import canon, perturbed, rng  # noqa: E402

# -- products holding a OneHot: served leaf by leaf on torch and JAX (spacealg/backends/parts.py) ---------


@st.composite
def products_holding_onehot(draw):
    """A Tuple or Dict product (nested or not) of a OneHot and up to two other stacking leaves."""
    others = draw(st.lists(spaces(max_depth=0).filter(stacks), max_size=2))
    hot = draw(onehots(max_blocks=2, max_batch=1))
    parts = others[:]
    parts.insert(draw(st.integers(0, len(others))), hot)
    if draw(st.booleans()):
        inner = sa.TupleProduct(*parts) if draw(st.booleans()) else sa.DictProduct({"h": hot})
        parts = [inner, *others]
    if draw(st.booleans()):
        return sa.DictProduct({f"k{i}": p for i, p in enumerate(parts)})
    return sa.TupleProduct(*parts)


def _on(name, batch):
    return to_backend(name, batch)


def _host(batch):
    return to_numpy(batch)


@settings(deadline=None, max_examples=12, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(products_holding_onehot(), st.integers(0, 2**16), st.sampled_from(["torch", "jax"]))
def test_products_holding_a_onehot_agree_with_numpy_on_torch_and_jax(space, seed, name):
    """Every batched operation of a product with a OneHot leaf works on torch and JAX and
    equals the NumPy path: sample (members, the same generator state gives the same draws),
    isin of members and near misses, clamp, flatten_batch (values) and unflatten_batch."""
    # JAX without x64 holds no 64-bit leaf values: their values are left to tests/test_backends.py
    space_ok = name != "jax" or all(np.dtype(d).itemsize < 8 for d in _leaf_dtypes(space))
    drawn = sa.sample(space, 4, rng=rng(name, seed))
    assert sa.isin(_host(drawn), space).all()
    assert same(canon(sa.sample(space, 4, rng=rng(name, seed))), canon(drawn))
    host = sa.sample(space, 4, rng=seed)
    near = perturbed(host, seed)
    for batch in (host, near):
        assert np.asarray(_host(sa.isin(_on(name, batch), space))).tolist() == sa.isin(batch, space).tolist()
    if space_ok:
        from spacealg.backends.arrays import backend_named

        flat, expected_flat = flatten_batch(_on(name, host), space), flatten_batch(host, space)
        backend = backend_named(name)  # the NumPy flattening's dtype, through the backend's policy
        assert backend.numpy_dtype(flat.dtype) == backend.numpy_dtype(backend.dtype(expected_flat.dtype))
        assert same(np.asarray(_host(flat)), expected_flat)
        assert same(canon(unflatten_batch(flat, space)), canon(host))
    try:
        expected = sa.clamp(near, space)
    except ValueError:  # NaN in a float leaf: raised on every backend
        with pytest.raises(ValueError):
            sa.clamp(_on(name, near), space)
    else:
        if space_ok:
            assert same(canon(sa.clamp(_on(name, near), space)), canon(expected))


def test_a_product_holding_a_onehot_takes_numpy_leaves_as_each_backend_does():
    """A torch batch with a NumPy leaf is a TypeError naming the stray (as for every torch
    batch); JAX takes NumPy leaves as arrays (as its per-leaf plans do)."""
    space = sa.TupleProduct(sa.Box(0, 1, (2,)), OneHot(3))
    host = sa.sample(space, 3, rng=0)
    with pytest.raises(TypeError, match=r"numpy\.ndarray"):
        sa.isin((torch.as_tensor(host[0]), host[1]), space)
    assert np.asarray(sa.isin((jax.numpy.asarray(host[0]), host[1]), space)).all()
    assert same(canon(sa.clamp((host[0], jax.numpy.asarray(host[1])), space)), canon(host))


@settings(deadline=None, max_examples=20)
@given(onehots(max_blocks=2, max_batch=1), st.data())
def test_a_row_that_is_no_member_does_not_flatten_on_any_backend(s, data):
    """``flatten``/``encode`` of a non-member and ``flatten_batch`` of a batch holding one raise
    ValueError on NumPy, torch and eager JAX alike (NumPy read the argmax, torch and JAX the raw
    entries); under ``jax.jit`` nothing can be read and nothing raises."""
    row = data.draw(_rows(s).filter(lambda r: not sa.contains(r, s)))
    batch = np.stack([sa.sample(s, rng=0), row])
    with pytest.raises(ValueError):
        sa.flatten(row, s)
    with pytest.raises(ValueError):
        sa.encode(row, s)
    for on_backend in (lambda b: b, torch.as_tensor, jax.numpy.asarray):
        with pytest.raises(ValueError):
            flatten_batch(on_backend(batch), s)
    jax.jit(lambda b: flatten_batch(b, s))(jax.numpy.asarray(batch))


def _leaf_dtypes(space):
    from spacealg.core.plan import plan_for

    leaves = plan_for(space).leaf_spaces()
    return [np.asarray(sa.sample(leaf, 1, rng=0)).dtype for leaf in leaves]


@settings(deadline=None, max_examples=12, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(products_holding_onehot(), st.integers(0, 2**16))
def test_clamp_in_place_of_a_product_holding_a_onehot_is_all_or_nothing_on_torch(space, seed):
    """``clamp_`` of a torch batch writes what ``clamp`` gives, or raises having written nothing."""
    near = perturbed(sa.sample(space, 4, rng=seed), seed)
    x = _on("torch", near)
    before = canon(x)
    try:
        expected = canon(sa.clamp(_on("torch", near), space))
    except ValueError:  # NaN in a float leaf
        with pytest.raises(ValueError):
            sa.clamp_(x, space)
        assert same(canon(x), before)
        return
    try:
        assert sa.clamp_(x, space) is x
    except TypeError as error:  # a leaf's dtype cannot hold its clamp: nothing written
        assert "cannot hold" in str(error)
        assert same(canon(x), before)
        return
    assert same(canon(x), expected)


# -- TorchRL: round trips without options, membership as is_in --------------------------------------


td = pytest.importorskip("torchrl.data")
from spacealg.adapters.torchrl import from_torchrl, to_torchrl  # noqa: E402

TORCH_DTYPES = [torch.bool, torch.float16, torch.float32, torch.int64, torch.uint8]


@st.composite
def onehot_specs(draw):
    sizes = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    dtype = draw(st.sampled_from(TORCH_DTYPES))
    if len(sizes) == 1 and draw(st.booleans()):
        return td.OneHot(sizes[0], shape=(*batch, sizes[0]), dtype=dtype)
    return td.MultiOneHot(sizes, shape=(*batch, sum(sizes)), dtype=dtype)


@given(onehot_specs(), st.data())
def test_torchrl_round_trip_and_membership(spec, data):
    space = from_torchrl(spec)
    back = to_torchrl(space, spec.device)
    assert type(back) is type(spec) and back == spec and back.dtype == spec.dtype and back.shape == spec.shape
    n = math.prod(spec.shape)
    bits = data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    for value in [spec.rand(), torch.zeros(spec.shape, dtype=spec.dtype), torch.ones(spec.shape, dtype=spec.dtype),
                  torch.tensor(bits).reshape(spec.shape).to(spec.dtype)]:
        assert sa.contains(value, space) == bool(spec.is_in(value))
    assert bool(spec.is_in(torch.as_tensor(sa.sample(space, rng=0))))


def test_torchrl_issue_25_points_40_and_41():
    multi = td.MultiOneHot([5, 2, 3], shape=(3, 10))
    assert from_torchrl(multi) == OneHot([5, 2, 3], shape=(3, 10)) and to_torchrl(from_torchrl(multi)) == multi
    half = td.OneHot(5, dtype=torch.float16)
    back = to_torchrl(from_torchrl(half))
    assert back == half and back.dtype == torch.float16


def test_one_hot_flag_keeps_encoding_categorical_spaces():
    spec = to_torchrl(sa.Categorical([2, 3]), one_hot=True)
    assert isinstance(spec, td.MultiOneHot)
    assert image_of(from_torchrl(spec)).space == sa.Categorical([2, 3])
    assert isinstance(to_torchrl(range(4), one_hot=True), td.OneHot)
    x = np.array([1, 2])
    assert bool(spec.is_in(torch.as_tensor(sa.decode(x, from_torchrl(spec)))))


# -- the extension story: a kind of a test's own, served by the same mechanisms -------------------


class Signs(sa.Space):
    """Arrays of n entries in {-1, +1} (int8): a kind defined here, registered only here."""

    _fields = ("n",)

    def __init__(self, n: int) -> None:
        self._set(n=n)


def _register_signs() -> None:
    from spacealg.core.catalog import register_space_class
    from spacealg.core.image import Image

    def member(x, s):
        a = np.asarray(x) if not isinstance(x, str) else np.zeros(0)
        return a.shape == (s.n,) and bool(np.isin(a, (-1, 1)).all())

    sa.contains.register(Signs)(member)
    sa.cardinality.register(Signs)(lambda s: 2**s.n)
    sa.element.register(Signs)(lambda i, s: np.array([1 if (i >> (s.n - 1 - k)) & 1 else -1 for k in range(s.n)],
                                                    np.int8))
    sa.SpaceStyle.register(Signs)(lambda s: sa.FiniteSpaceStyle((s.n,)))
    sa.elsize.register(Signs)(lambda s: (s.n,))
    sa.bounds.register(Signs)(lambda s: (np.full(s.n, -1, np.int8), np.ones(s.n, np.int8)))
    image_of.register(Signs)(lambda s: Image(sa.ArraySpace(range(2), s.n),
                                             lambda x: (np.asarray(x) > 0).astype(np.int64),
                                             lambda y: np.where(np.asarray(y) > 0, 1, -1).astype(np.int8)))
    register_space_class(Signs, "signs-in-tests")


_register_signs()


def test_a_new_kind_gets_json_members_gymnasium_flattening_masks_joint_and_emulation_from_its_registrations():
    from spacealg.emulation import emulate_observation_space
    from spacealg.emulation.buffers import emulate_copy, nativize

    s = Signs(3)
    x = np.array([1, -1, 1], np.int8)
    assert sa.from_json(sa.to_json(s)) == s                                  # core.catalog
    assert np.array_equal(find(members(s), lambda v: True), sa.element(0, s))  # members by element(i)
    assert sa.to_gymnasium(s) == gymnasium.spaces.MultiDiscrete([2, 2, 2])   # core.image
    assert sa.decode(sa.encode(x, s), s).tolist() == x.tolist()
    assert sa.flatten(x, s).tolist() == [0, 1, 1, 0, 0, 1] and np.array_equal(sa.unflatten(sa.flatten(x, s), s), x)
    m = sa.Masked(s, (np.array([False, True]), None, None))                   # masks over the image
    assert sa.cardinality(m) == 4 and all(v[0] == 1 for v in m)
    box, struct = emulate_observation_space(s)                               # emulation: its arrays
    assert np.array_equal(nativize(emulate_copy(x, box.dtype, struct), s, struct), x)


# -- review: regressions ------------------------------------------------------------------------


def _peak_bytes(f) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        f()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_construction_costs_o_len_nvec_and_batch_ops_o_width_never_len_times_max():
    """A 6 kB document of 2,001 blocks, one of 2,000 columns: the constructor held a padded
    (len(nvec), max(nvec)) table (36 MB); OneHot(10**6) from a 40-byte document 33 MB."""
    nvec = [1] * 2000 + [2000]
    doc = {"format": "spacealg.space", "version": 1, "space": {"kind": "onehot", "nvec": nvec}}
    assert _peak_bytes(lambda: sa.from_json(doc)) < 64 * len(str(doc))
    assert _peak_bytes(lambda: OneHot(10**6)) < 100_000
    s = OneHot(nvec)
    x = sa.element(1234, s)
    assert _peak_bytes(lambda: sa.contains(x, s)) < 64 * 8 * s.shape[-1]  # O(width), not 4M table entries
    assert sa.index(sa.clamp(x.astype(np.float32), s), s) == 1234


@given(st.lists(st.integers(1, 4), min_size=2, max_size=6), st.integers(0, 2**32 - 1))
def test_blocks_of_mixed_sizes_in_any_order(sizes, seed):
    """Blocks grouped by size internally: positions come back in block order."""
    s = OneHot(sizes)
    x = sa.sample(s, rng=seed)
    assert _brute_member(x, s)
    ends = np.cumsum([0, *sizes])
    assert sa.encode(x, s).tolist() == [int(x[a:b].argmax()) for a, b in itertools.pairwise(ends)]
    assert np.array_equal(sa.decode(sa.encode(x, s), s), x)


@pytest.mark.parametrize(("nvec", "shape", "error", "word"), [
    ([True, 2], None, TypeError, "nvec"), ([np.True_, 2], None, TypeError, "nvec"),
    ([2, 3.0], None, TypeError, "nvec"), ([[2], [3, 4]], None, TypeError, "nvec"), ({"a": 2}, None, TypeError, "nvec"),
    (2**70, None, ValueError, "nvec"), ([2**62, 2**62], None, ValueError, "nvec"), ([2**70], None, ValueError, "nvec"),
    (3, (2**40, 2**30, 3), ValueError, "shape")])
def test_constructor_refuses_bools_non_ints_and_widths_no_array_has(nvec, shape, error, word):
    """[True, 2] was OneHot([1, 2]); 2**70 raised numpy's 'Maximum allowed size exceeded'."""
    with pytest.raises(error, match=word):
        OneHot(nvec, shape=shape)
    node = {"kind": "onehot", "nvec": nvec, **({"shape": {"tuple": list(shape)}} if shape else {})}
    if not isinstance(nvec, dict) and not any(isinstance(v, np.bool_) for v in np.ravel(np.asarray(nvec, object))):
        with pytest.raises(sa.serialize.DocumentError, match=word):
            sa.from_json({"format": "spacealg.space", "version": 1, "space": node})


def test_huge_counts_are_exact_ints():
    """cardinality beyond int64 is an exact int; element/index beyond 2**63 round-trip."""
    s = OneHot([2] * 100)
    assert sa.cardinality(s) == 2**100 and isinstance(sa.cardinality(s), int)
    for i in (2**63 - 1, 2**63, 2**63 + 5, 2**99 + 12345, 2**100 - 1):
        assert sa.index(sa.element(i, s), s) == i
    assert sa.cardinality(OneHot([2**40] * 3)) == 2**120
    assert sa.cardinality(OneHot(3, shape=(0, 3))) == 1 and len(list(OneHot(3, shape=(0, 3)))) == 1


@pytest.mark.parametrize("dtype", [">f4", ">i8", ">u2", "<f2"])
def test_byte_order_is_no_part_of_the_space(dtype):
    """'>f4' gave a space unequal to float32's whose repr said float32, and to_torchrl raised."""
    native = np.dtype(dtype).newbyteorder("=")
    s = OneHot([2, 3], dtype=dtype)
    assert s == OneHot([2, 3], dtype=native) and hash(s) == hash(OneHot([2, 3], dtype=native))
    assert eval(repr(s), {**vars(sa), "np": np}) == s and sa.from_json(sa.to_json(s)) == s
    assert sa.sample(s, rng=0).dtype == native and sa.bounds(s)[0].dtype == native
    assert sa.contains(np.array([1, 0, 0, 1, 0], dtype=dtype), s)
    if native.kind != "u":  # torch cannot compare uint16
        assert to_torchrl(s) == to_torchrl(OneHot([2, 3], dtype=native))


TORCH_ALL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16,
                    torch.uint32, torch.uint64, torch.float16, torch.bfloat16, torch.float32, torch.float64,
                    torch.complex64]


@settings(max_examples=30)
@given(onehots(max_batch=1), st.data())
def test_torch_membership_is_numpys_for_every_dtype(s, data):
    """torch isin said complex vectors were members (NumPy: not), contains of a bfloat16
    tensor was False while isin said True: now contains, isin and NumPy agree on every dtype."""
    rows = np.stack(data.draw(st.lists(_rows(s), min_size=1, max_size=3)))
    expected = sa.isin(rows.astype(np.float64), s).tolist()
    for dtype in TORCH_ALL_DTYPES:
        t = torch.from_numpy(rows.astype(np.int64)).to(dtype)
        want = [False] * len(rows) if dtype.is_complex else expected
        assert sa.isin(t, s).tolist() == want, dtype
        assert [sa.contains(r, s) for r in t] == want, dtype


@pytest.mark.parametrize("dtype", ["bfloat16", "uint16", "uint32", "float16", "int16", "complex64"])
def test_jax_membership_is_numpys_for_every_dtype(dtype):
    s = OneHot([2, 3])
    rows = np.array([[1, 0, 0, 0, 1], [1, 1, 0, 0, 1], [0, 1, 0, 1, 0]])
    j = jax.numpy.asarray(rows).astype(dtype)
    want = [False] * 3 if dtype.startswith("complex") else [True, False, True]
    assert np.asarray(sa.isin(j, s)).tolist() == want
    assert [sa.contains(r, s) for r in j] == want
    assert sa.isin(np.asarray(j), s).tolist() == want  # NumPy's view of a JAX bfloat16 array too
    assert [sa.contains(r, s) for r in np.asarray(j)] == want


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_torch_clamp_of_wide_unsigned_tensors_is_numpys(dtype):
    """torch's argmax leaked NotImplementedError ("argmax_cpu" not implemented for 'UInt64')."""
    s = OneHot([2, 3], shape=(2, 5))
    top = np.iinfo(dtype).max
    values = np.array([[[3, 5, 0, top - 1, top], [0, 0, 0, 0, 0]], [[top, top, 7, 2**15, 1], [1, 0, 0, 1, 0]]],
                      dtype=dtype)
    expected = sa.clamp(values, s)
    t = torch.from_numpy(values)
    assert t.dtype == getattr(torch, dtype)
    assert np.array_equal(sa.clamp(t, s).numpy(), expected)
    inplace = t.clone()
    assert sa.clamp_(inplace, s) is inplace and inplace.to(torch.int64).tolist() == expected.astype(np.int64).tolist()


class _OneHotSubclass(OneHot):
    """A subclass that does not catalogue itself."""


def test_a_subclass_of_a_catalogued_class_is_not_written_as_its_base():
    """to_json(_OneHotSubclass(3)) was {"kind": "onehot", ...}, which read back as OneHot(3): a
    different space, silently. A subclass must catalogue itself (or to_json says it cannot)."""
    from spacealg.core.catalog import catalogued, name_of, register_space_class

    assert name_of(OneHot) == "onehot" and catalogued("onehot") is OneHot and name_of(_OneHotSubclass) is None
    with pytest.raises(TypeError, match="to_json: no JSON form for _OneHotSubclass"):
        sa.to_json(_OneHotSubclass(3))
    with pytest.raises(ValueError, match="taken"):
        register_space_class(_OneHotSubclass, "onehot")


@given(small, st.data())
def test_index_and_encode_take_every_form_of_member_contains_takes(s, data):
    """index/elements/element are the image's (one mixed-radix definition, Categorical's)."""
    i = data.draw(st.integers(0, sa.cardinality(s) - 1))
    x = sa.element(i, s)
    for form in (x, x.tolist(), x.astype(np.float16), torch.from_numpy(x.astype(np.float32)),
                 np.asarray(jax.numpy.asarray(x, dtype=jax.numpy.bfloat16))):
        assert sa.contains(form, s) and sa.index(form, s) == i
        assert np.array_equal(np.asarray(sa.encode(form, s)), np.asarray(sa.encode(x, s)))


def test_dtype_none_is_refused_as_box_refuses_it():
    """OneHot(3, dtype=None) was a float64 space (numpy's reading of None), and so was the
    document {"kind": "onehot", "nvec": 3, "dtype": null}."""
    with pytest.raises(ValueError, match="dtype"):
        OneHot(3, dtype=None)
    with pytest.raises(sa.serialize.DocumentError, match="dtype"):
        sa.from_json({"format": "spacealg.space", "version": 1, "space": {"kind": "onehot", "nvec": 3, "dtype": None}})


@given(onehot_specs(), st.data())
def test_torchrl_is_in_agrees_on_binary_values_and_membership_is_by_value_beyond(spec, data):
    """The law's domain, as docs/onehot.md states it: values of the spec's shape and dtype
    whose entries are 0 or 1. Beyond it membership is by value: TorchRL's is_in only checks
    that each block sums to 1, so it takes [1, -1, 1, 0] (float) where no one-hot vector is."""
    space = from_torchrl(spec)
    n = math.prod(spec.shape)
    entries = data.draw(st.lists(st.sampled_from([-1, 0, 1, 2]), min_size=n, max_size=n))
    values = np.array(entries).reshape(spec.shape)
    binary = bool(np.isin(values, (0, 1)).all())
    assert sa.contains(values, space) == (binary and _brute_member(values, space))
    if binary or spec.dtype not in (torch.bool, torch.uint8):  # -1 and 2 kept as values
        tensor = torch.as_tensor(values).to(spec.dtype)
        if binary:
            assert sa.contains(tensor, space) == bool(spec.is_in(tensor))
        else:
            assert not sa.contains(tensor, space)


def test_torchrl_is_in_takes_a_vector_summing_to_one_that_is_not_one_hot():
    spec = td.OneHot(4, dtype=torch.float32)
    x = torch.tensor([1.0, -1.0, 1.0, 0.0])
    assert bool(spec.is_in(x)) and not sa.contains(x, from_torchrl(spec))


@settings(max_examples=60)
@given(small, st.data())
def test_issubspace_is_inclusion_of_the_member_sets(s, data):
    """issubspace(s, b) == all members of s are in b, for Boxes, ArraySpaces, Categoricals, OneHots."""
    n = math.prod(s.shape)
    ends = st.lists(st.sampled_from([-1, 0, 1, 2]), min_size=n, max_size=n).map(lambda v: np.array(v).reshape(s.shape))
    low, high = data.draw(ends), data.draw(ends)
    dtype = data.draw(st.sampled_from([np.int8, np.float32, np.uint8, np.bool_]))
    low, high = np.minimum(low, high), np.maximum(low, high)
    if np.dtype(dtype).kind in "ub":
        low, high = np.clip(low, 0, 1), np.clip(high, 0, 1)
    others = [sa.Box(low.astype(dtype), high.astype(dtype), shape=s.shape, dtype=dtype),
              sa.ArraySpace(range(data.draw(st.integers(0, 1)), 2), *s.shape),
              sa.Categorical(np.full(s.shape, data.draw(st.integers(1, 3)))),
              OneHot(s.nvec if s.scalar else list(s.sizes), shape=s.shape, dtype=np.float32),
              OneHot([1] * s.shape[-1], shape=s.shape)]
    for b in others:
        assert sa.issubspace(s, b) == all(sa.contains(x, b) for x in s), b


@given(onehots(), st.integers(0, 2**32 - 1), st.data())
def test_image_laws_and_clamp_idempotence(s, seed, data):
    """core.image's laws for OneHot's image (members and batches), and clamp(clamp(x)) == clamp(x)."""
    m = image_of(s)
    x = sa.sample(s, rng=seed)
    assert sa.contains(m.encode(x), m.space) and np.array_equal(m.decode(m.encode(x)), x)
    y = sa.sample(m.space, rng=seed)
    assert sa.contains(m.decode(y), s) and np.array_equal(np.asarray(m.encode(m.decode(y))), np.asarray(y))
    batch = sa.sample(s, 3, rng=seed)
    assert np.array_equal(m.decode(m.encode(batch)), batch)
    n = math.prod(s.shape)
    raw = np.array(data.draw(st.lists(st.floats(-2, 2), min_size=n, max_size=n))).reshape(s.shape)
    once = sa.clamp(raw, s)
    assert np.array_equal(sa.clamp(once, s), once) and sa.clamp(once, s) is once


def test_torch_clamp_inplace_of_a_tensor_it_cannot_write_is_a_type_error():
    """An expanded view or a leaf requiring grad leaked torch's RuntimeError; the law says TypeError."""
    s = OneHot([2, 3])
    expanded = torch.zeros(1, 5).expand(3, 5)
    leaf = torch.rand(2, 5, requires_grad=True)
    before = leaf.detach().clone()
    for x in (expanded, leaf):
        with pytest.raises(TypeError, match="clamp_: x must be a writable array"):
            sa.clamp_(x, s)
    assert torch.equal(leaf.detach(), before) and torch.equal(expanded, torch.zeros(3, 5))  # nothing written


@settings(deadline=None, max_examples=10)
@given(onehots(max_blocks=2, max_batch=1))
def test_the_checks_of_a_onehot_rule_read_only_values_that_can_be_read(s):
    """Rows that are no members (an all-zero row, a NaN) raise ValueError where values can be
    read, and go through where they cannot: torch ``meta`` tensors and JAX under ``jit`` give
    arrays of the right shapes, never an error."""
    zeros = np.zeros((2, *s.shape), np.float32)
    nan = np.full((2, *s.shape), np.nan, np.float32)
    dim = math.prod(s.shape)
    for on_backend in (torch.as_tensor, jax.numpy.asarray):
        with pytest.raises(ValueError):
            flatten_batch(on_backend(zeros), s)
        with pytest.raises(ValueError):
            unflatten_batch(on_backend(np.zeros((2, dim), np.float32)), s)
        with pytest.raises(ValueError):
            sa.clamp(on_backend(nan), s)
    meta = torch.zeros((2, *s.shape), device="meta")
    assert tuple(flatten_batch(meta, s).shape) == (2, dim)
    assert tuple(unflatten_batch(torch.zeros((2, dim), device="meta"), s).shape) == (2, *s.shape)
    assert tuple(sa.clamp(meta, s).shape) == (2, *s.shape)
    traced = jax.jit(lambda z, v, x: (flatten_batch(z, s), unflatten_batch(v, s), sa.clamp(x, s)))
    flat, back, clamped = traced(jax.numpy.asarray(zeros), jax.numpy.zeros((2, dim)), jax.numpy.asarray(nan))
    assert (flat.shape, back.shape, clamped.shape) == ((2, dim), (2, *s.shape), (2, *s.shape))
