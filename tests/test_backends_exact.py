"""Exact arithmetic on every backend (issue 22 point 3, issue 25 points 11-23).

The law behind each regression below: NumPy, torch and JAX answer ``isin``/``clamp``/
``sample``/``flatten_batch`` as ``contains`` does (one rule per leaf kind, three backends),
by value, whatever the batch's dtype, the bounds' size (integers beyond 2**53, uint64 ends)
or a dtype narrowed by a backend (JAX without x64). The Hypothesis tests at the end check the class on generated
bounds and dtypes; the tests named ``test_point_NN_...`` are the campaign's cases.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.backends import to_numpy
from spacealg.ops import flatten_batch

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = jax.numpy

BACKENDS = ["numpy", "torch", "jax"]
LAWS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
I = sa.Interval  # noqa: E741


def on(name: str, array: Any, dtype: Any = None) -> Any:
    """A NumPy array (of ``dtype``) as a torch tensor or a JAX array."""
    a = np.asarray(array, dtype=dtype)
    if name == "numpy":
        return a.copy()
    return torch.from_numpy(a.copy()) if name == "torch" else jnp.asarray(a)


def generator(name: str, seed: int = 0) -> Any:
    """A NumPy generator, a torch generator or a JAX key seeded with ``seed``."""
    if name == "numpy":
        return np.random.default_rng(seed)
    return torch.Generator().manual_seed(seed) if name == "torch" else jax.random.key(seed)


def host(x: Any) -> np.ndarray:
    return np.asarray(to_numpy(x))


def rows_contained(batch: Any, space: Any) -> list[bool]:
    return [sa.contains(row, space) for row in host(batch)]


# -- issue 22, point 3 ----------------------------------------------------------------------


def test_22_3_interval_ends_beyond_2_53_are_compared_exactly() -> None:
    assert not sa.contains(np.float64(2.0**64), I(0, 2**64 - 2))
    assert sa.contains(np.float64(-(2.0**53)), I(-(2**53 + 1), 1, closed="right"))
    assert sa.contains(2**64 - 2, I(0, 2**64 - 2))
    assert not sa.contains(2**64 - 1, I(0, 2**64 - 2))


@given(st.integers(-(2**70), 2**70), st.integers(0, 2**70), st.sampled_from(["both", "left", "right", "neither"]),
       st.integers(-(2**72), 2**72), st.booleans())
@LAWS
def test_22_3_interval_membership_is_by_exact_value(low: int, span: int, closed: str, x: int, as_float: bool) -> None:
    """``contains(x, Interval(a, b))`` is ``a <= x <= b`` (strict at open ends) in exact
    arithmetic, for integer ends of any size and floats or ints ``x``."""
    high = low + span + 1
    try:
        space = I(low, high, closed)
    except ValueError:  # an open interval between two adjacent floats holds no float
        return
    value: Any = np.float64(x) if as_float else x
    exact = Fraction(float(value)) if as_float else Fraction(x)
    above = exact >= low if closed in ("both", "left") else exact > low
    below = exact <= high if closed in ("both", "right") else exact < high
    assert sa.contains(value, space) == (above and below)


def held_by(name: str, dtype: Any) -> bool:
    """Whether the backend holds arrays of ``dtype`` as they are (JAX without x64 narrows 64 bits)."""
    return name != "jax" or np.dtype(dtype).itemsize < 8 or bool(jax.config.read("jax_enable_x64"))


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize(("space", "values", "dtype"), [
    (I(0, 2**64 - 2), [2.0**64, 2.0**64 - 4096, 0.0], np.float64),
    (I(-(2**53 + 1), 1, closed="right"), [-(2.0**53), 1.0, 1.5], np.float64),
    (I(0, 2**53), [2**53 + 1, 2**53, -1], np.int64),
    (I(0.5, 2**31 - 1.5), [2**31 - 1, 2**31 - 2, 0, 1], np.int32),
    (I(0, 2**64 - 2, closed="left"), [2**64 - 1, 2**64 - 2, 2**64 - 3], np.uint64),
    (sa.Box(0, 2**53, (), np.float64), [2**53 + 1, 2**53], np.int64),
])
def test_22_3_isin_of_huge_ends_and_integer_batches_is_contains(name: str, space: Any, values: list[Any],
                                                                 dtype: Any) -> None:
    """Integer ends beyond 2**53 are compared exactly with float batches, and integer
    batches meet a real space's integers in their own dtype (no float rounding), on every
    backend (torch and JAX rounded both before)."""
    if not held_by(name, dtype):
        pytest.skip(f"{name} holds no {np.dtype(dtype)} array here")
    batch = np.array(values, dtype=dtype)
    assert host(sa.isin(on(name, batch), space)).tolist() == rows_contained(batch, space)


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("space", [gym.spaces.MultiBinary(3), gym.spaces.MultiBinary([2, 2]),
                                   gym.spaces.MultiDiscrete([3, 4], dtype=np.int32), gym.spaces.Discrete(5),
                                   gym.spaces.Box(-1, 1, (2,), np.float32)])
def test_22_3_a_gymnasium_space_keeps_its_dtype_on_backends(name: str, space: Any) -> None:
    drawn = sa.sample(space, 4, rng=generator(name))
    expected = sa.sample(space, 4).dtype
    if name == "jax" and expected.itemsize == 8:  # JAX without x64 holds 64-bit types as 32-bit
        expected = np.dtype(expected.kind + "4")
    assert host(drawn).dtype == expected
    assert all(space.contains(row.astype(space.dtype)) for row in host(drawn))


# -- issue 25, points 11-23 -----------------------------------------------------------------


@pytest.mark.parametrize("name", BACKENDS)
def test_point_11_float32_batches_meet_exact_interval_ends(name: str) -> None:
    assert host(sa.isin(on(name, [0.1], np.float32), I(0, 0.1))).tolist() == [False]
    assert host(sa.isin(on(name, [np.inf], np.float32), I(0, 1e300))).tolist() == [False]
    assert host(sa.isin(on(name, [0.0], np.float32), I(0, 1e-300, closed="left"))).tolist() == [True]
    assert host(sa.isin(on(name, [0.0], np.float16), I(0, 1e-300, closed="left"))).tolist() == [True]


def test_point_12_jax_clamp_into_an_open_end_at_zero_is_a_member() -> None:
    space = I(0, 1, closed="right")
    clamped = host(sa.clamp(jnp.asarray([-1.0, 0.5]), space))
    assert all(sa.contains(v, space) for v in clamped)
    assert host(sa.isin(jnp.asarray([0.0]), sa.FiniteSet(1e-320))).tolist() == [False]


def test_point_13_jax_without_x64_keeps_distinct_items_distinct() -> None:
    space = sa.FiniteSet(0.1, 0.7)
    assert host(sa.isin(jnp.asarray([np.float32(0.1)]), space)).tolist() == [False]
    collapsed = sa.FiniteSet(1.0, 1.0 + 2.0**-40)  # one float32 value for two items
    assert host(sa.isin(jnp.asarray([1.0], dtype=jnp.float32), collapsed)).tolist() == [True]
    assert host(flatten_batch(jnp.asarray([1.0], dtype=jnp.float32), collapsed)).tolist() == [[1, 0]]


@pytest.mark.parametrize("name", BACKENDS)
def test_point_14_a_set_of_floats_and_huge_ints_is_compared_by_value(name: str) -> None:
    space = sa.FiniteSet(0.5, 2**53 + 1)
    if name != "jax":
        assert host(sa.isin(on(name, [2**53, 2**53 + 1], np.int64), space)).tolist() == [False, True]
    assert host(sa.isin(on(name, [2.0**53], np.float32 if name == "jax" else np.float64), space)).tolist() == [False]
    batches = (np.array([2**53], dtype=np.int64), on("torch", [2**53], np.int64))
    for clamped in (sa.clamp(batch, space) for batch in batches):
        assert all(sa.contains(v, space) for v in host(clamped))


def test_point_15_torch_clamp_of_floats_into_a_range_near_int64_max() -> None:
    space = range(2**63 - 5, 2**63)
    for dtype in (torch.float32, torch.float64):
        clamped = sa.clamp(torch.tensor([1e30, -1e30, 9.3e18, 0.0], dtype=dtype), space)
        assert host(clamped).tolist() == [2**63 - 1, 2**63 - 5, 2**63 - 1, 2**63 - 5]


@pytest.mark.parametrize(("x", "space"), [
    (torch.tensor([5], dtype=torch.int8), range(1000, 2000)),
    (torch.tensor([5], dtype=torch.uint8), range(-5, -1)),
    (torch.tensor([5]), sa.FiniteSet(0.5, 1.5)),
    (torch.tensor([True]), sa.Box(2, 5, (), np.int64)),
    (torch.tensor([[True]]), sa.Box(2.0, 5.0, (1,))),
])
def test_point_16_clamp_inplace_into_a_dtype_that_cannot_hold_the_clamp_raises(x: Any, space: Any) -> None:
    before = x.clone()
    with pytest.raises(TypeError, match="clamp_"):
        sa.clamp_(x, space)
    assert torch.equal(x, before)


@pytest.mark.parametrize(("x", "space"), [
    (np.array([5], dtype=np.int8), range(1000, 2000)),
    (np.array([5], dtype=np.uint8), range(-5, -1)),
    (np.array([5]), sa.FiniteSet(0.5, 1.5)),
    (np.array([True]), sa.Box(2, 5, (), np.int64)),
    (np.array([5], dtype=np.int8), sa.Categorical(3, start=200)),
])
def test_point_16_numpy_clamp_inplace_follows_the_same_rule(x: Any, space: Any) -> None:
    before = x.copy()
    with pytest.raises(TypeError, match="clamp_"):
        sa.clamp_(x, space)
    assert np.array_equal(x, before)


def test_point_16_clamp_inplace_where_every_clamp_fits_still_writes() -> None:
    x = torch.tensor([200, 3], dtype=torch.uint8)
    assert sa.clamp_(x, range(-5, 5)) is x and x.tolist() == [4, 3]
    y = torch.tensor([100, -100], dtype=torch.int8)
    assert sa.clamp_(y, range(-1000, 10)).tolist() == [9, -100]


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_point_17_torch_isin_on_wide_unsigned_tensors(dtype: str) -> None:
    values = [0, 5, 9, 10, 2**15]
    x = torch.tensor(values, dtype=getattr(torch, dtype))
    assert host(sa.isin(x, range(10))).tolist() == [v < 10 for v in values]
    assert host(sa.isin(x, sa.Box(3, 2**15, (), np.int64))).tolist() == [v >= 3 for v in values]
    clamped = sa.clamp(x, range(2, 7))
    assert host(clamped).tolist() == [min(max(v, 2), 6) for v in values]


def test_point_17_torch_uint64_beyond_int64() -> None:
    space = sa.Box(2**63, 2**64 - 1, (), np.uint64)
    x = torch.tensor([2**63 - 1, 2**63, 2**64 - 1, 0], dtype=torch.uint64)
    assert host(sa.isin(x, space)).tolist() == [False, True, True, False]
    assert host(sa.isin(x, range(0, 2**63 - 1))).tolist() == [False, False, False, True]


def test_point_18_jax_without_x64_uint32_box() -> None:
    space = sa.Box(0, 2**32 - 1, (), np.uint32)
    x = jnp.asarray([0, 5, 2**32 - 1], dtype=jnp.uint32)
    assert host(sa.isin(x, space)).tolist() == [True, True, True]
    assert host(sa.clamp(x, space)).tolist() == [0, 5, 2**32 - 1]
    assert host(sa.isin(jnp.asarray([-1, 7], dtype=jnp.int32), space)).tolist() == [False, True]


def test_point_19_numpy_isin_of_an_empty_uint64_batch() -> None:
    for space in (sa.Categorical(3, dtype=np.uint64), sa.Categorical([3, 4], dtype=np.uint64)):
        shape = (0, *sa.elsize(space))
        assert sa.isin(np.zeros(shape, dtype=np.uint64), space).shape == (0,)


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("space", [sa.ArraySpace(I(0, 1), 0), sa.ArraySpace(I(0, 1, closed="neither"), 0),
                                   sa.ArraySpace(range(0, 9, 3), 0), sa.ArraySpace(range(3), 2, 0),
                                   sa.ArraySpace(sa.FiniteSet(0.5, 1.5), 0), sa.Box(0.0, 1.0, (0,))])
def test_point_20_leaves_with_no_entries(name: str, space: Any) -> None:
    """Arrays of no entries: every row is a member (isin all True), clamp and flatten keep
    the shape, sample gives rows of no entries, on every backend."""
    batch = np.zeros((2, *sa.elsize(space)), np.float32)
    assert host(sa.isin(on(name, batch), space)).tolist() == [True, True]
    assert host(sa.clamp(on(name, batch), space)).shape == batch.shape
    assert host(flatten_batch(on(name, batch), space)).shape == (2, 0)
    assert host(sa.sample(space, 2, rng=generator(name))).shape == batch.shape


def test_point_21_numpy_clamp_of_unsigned_into_a_range_with_negatives() -> None:
    clamped = sa.clamp(np.array([200, 3, 0], dtype=np.uint8), range(-5, 5))
    assert clamped.tolist() == [4, 3, 0]
    assert sa.clamp(np.array([7], dtype=np.uint8), sa.Box(-3, 2, (), np.int64)).tolist() == [2]


@pytest.mark.parametrize("name", BACKENDS)
def test_point_22_flatten_batch_of_a_set_with_infinities(name: str) -> None:
    space = sa.FiniteSet(-np.inf, 1e300, np.inf, 0.5)
    values = np.array([np.inf, -np.inf, 0.5] + ([1e300] if name != "jax" else []))
    expected = flatten_batch(values, space)
    assert host(flatten_batch(on(name, values), space)).tolist() == np.asarray(expected).tolist()


def test_point_23_a_torch_batch_with_a_numpy_leaf_is_a_type_error_naming_it() -> None:
    space = sa.TupleProduct(I(0, 1), I(0, 1))
    mixed = (on("torch", np.zeros(2)), np.zeros(2))
    for operation in (sa.isin, sa.clamp, sa.clamp_, flatten_batch):
        with pytest.raises(TypeError, match=r"numpy\.ndarray"):
            operation(mixed, space)


def test_point_23_a_jax_batch_takes_numpy_leaves() -> None:
    space = sa.TupleProduct(I(0, 1), I(0, 1))
    mixed = (jnp.asarray([0.5, 2.0]), np.array([0.5, 0.5]))
    assert host(sa.isin(mixed, space)).tolist() == [True, False]


# -- the class: bounds beyond 2**53, uint64 ends, narrowed dtypes ---------------------------

INTEGER_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]


def big_integer_spaces() -> st.SearchStrategy[Any]:
    """Integer leaves with ends near 2**53, 2**63 and 2**64 (ranges, boxes, sets)."""
    anchors = st.sampled_from([0, 2**53 - 2, -(2**53) - 2, 2**63 - 8, -(2**63), 2**64 - 8, 250, -130])
    ends = st.tuples(anchors, st.integers(0, 6), st.integers(0, 6)).map(lambda t: (t[0] + t[1], t[0] + t[1] + t[2]))
    fits = ends.filter(lambda e: e[0] >= -(2**63) and e[1] < 2**64 and not (e[0] < 0 and e[1] >= 2**63))

    def box(e: tuple[int, int]) -> Any:
        dtype = np.uint64 if e[1] >= 2**63 else np.int64
        return sa.Box(np.array(e[0], dtype), np.array(e[1], dtype), (2,), dtype)

    return st.one_of(
        fits.filter(lambda e: e[1] < 2**63).map(lambda e: range(e[0], e[1] + 1)),
        fits.map(box),
        fits.map(lambda e: sa.FiniteSet(e[0], e[1])),
        fits.map(lambda e: sa.FiniteSet(0.5, e[1])),
    )


def values_near(space: Any, dtype: np.dtype, data: Any) -> np.ndarray:
    """A batch of ``dtype`` near the space's ends (members, neighbours, the dtype's ends)."""
    low, high = sa.bounds(space)
    candidates = [int(np.min(low)), int(np.max(high))]
    candidates = [c + d for c in candidates for d in (-2, -1, 0, 1, 2)] + [0, 1]
    if dtype.kind == "f":
        info = np.finfo(dtype)
        pool = [float(c) for c in candidates] + [float(info.max), -float(info.max), 0.5]
        with np.errstate(over="ignore"):
            array = np.array(pool, dtype=np.float64).astype(dtype)
    else:
        info = np.iinfo(dtype)
        pool = [c for c in candidates if info.min <= c <= info.max] + [int(info.min), int(info.max)]
        array = np.array(pool, dtype=object).astype(dtype)
    picks = data.draw(st.lists(st.integers(0, len(array) - 1), min_size=1, max_size=8))
    shape = sa.elsize(space)
    return np.stack([np.full(shape, array[i], dtype=dtype) for i in picks])


def jax_holds(dtype: np.dtype) -> bool:
    return dtype.itemsize < 8 or bool(jax.config.read("jax_enable_x64"))


@given(big_integer_spaces(), st.sampled_from(INTEGER_DTYPES + FLOAT_DTYPES), st.data())
@LAWS
def test_isin_and_clamp_of_big_integers_equal_the_numpy_path(space: Any, dtype_name: str, data: Any) -> None:
    """``isin(b, s)[i] == contains(b[i], s)`` and ``clamp`` gives members (the NumPy
    path's values where NumPy answers), on torch and JAX, for integer ends beyond 2**53,
    uint64 ends and every batch dtype."""
    dtype = np.dtype(dtype_name)
    batch = values_near(space, dtype, data)
    expected = rows_contained(batch, space)
    assert sa.isin(batch, space).tolist() == expected
    for name in BACKENDS:
        if name == "jax" and not jax_holds(dtype):
            continue
        assert host(sa.isin(on(name, batch), space)).tolist() == expected, name
        try:
            clamped = host(sa.clamp(on(name, batch), space))
        except TypeError as error:  # no dtype of the backend holds a member: the message names the space
            assert type(space).__name__ in str(error)
            continue
        except ValueError as error:  # JAX without x64 holds no int64 member
            assert name == "jax" and "x64" in str(error)
            continue
        assert rows_contained(clamped, space) == [True] * len(batch), name
        assert [bool(m) for m in host(sa.isin(on(name, clamped), space))] == [True] * len(batch), name


@given(st.floats(-1e6, 1e6, allow_nan=False), st.floats(0, 1e6, allow_nan=False),
       st.sampled_from(["both", "left", "right", "neither"]), st.sampled_from(FLOAT_DTYPES), st.data())
@LAWS
def test_isin_and_clamp_of_narrow_floats_equal_contains(low: float, span: float, closed: str, dtype_name: str,
                                                        data: Any) -> None:
    """Interval ends that the batch's float dtype cannot hold: members by exact value on
    torch and JAX (JAX: float16/float32 only without x64), clamp lands inside."""
    high = low + span
    if low == high and closed != "both":
        return
    space = I(low, high, closed)
    dtype = np.dtype(dtype_name)
    with np.errstate(over="ignore"):
        near = [np.nextafter(dtype.type(v), dtype.type(d)) for v in (low, high) for d in (-np.inf, np.inf)]
        pool = np.array([dtype.type(low), dtype.type(high), *near, dtype.type(0)], dtype=dtype)
    picks = data.draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=6))
    batch = pool[picks]
    expected = rows_contained(batch, space)
    for name in BACKENDS:
        if name == "jax" and not jax_holds(dtype):
            continue
        assert host(sa.isin(on(name, batch), space)).tolist() == expected, name
        try:
            clamped = host(sa.clamp(on(name, batch), space))
        except ValueError:  # no float of this dtype lies inside
            continue
        assert rows_contained(clamped, space) == [True] * len(batch), name


@given(big_integer_spaces(), st.integers(0, 2**16))
@LAWS
def test_sample_and_flatten_batch_of_big_integers_equal_the_numpy_path(space: Any, seed: int) -> None:
    """Draws land in the space, keep NumPy's dtype (JAX: its 32-bit form without x64), and
    ``flatten_batch`` of a torch/JAX batch equals NumPy's of the same rows; a space a
    backend cannot hold is a TypeError/ValueError naming it, never a wrong value."""
    numpy_batch = sa.sample(space, 3, rng=seed)
    exact = bool(sa.isin(numpy_batch, space).all())  # False: NumPy rounds FiniteSet(0.5, 2**53 + 1) (reported)
    for name in BACKENDS:
        try:
            drawn = sa.sample(space, 3, rng=generator(name, seed))
        except (TypeError, ValueError) as error:
            assert type(space).__name__ in str(error), name
            continue
        assert exact, f"{name} drew from a set no dtype holds"
        rows = host(drawn)
        assert rows_contained(rows, space) == [True] * 3, name
        expected = np.asarray(numpy_batch).dtype
        if name == "jax" and not jax_holds(expected):
            expected = np.dtype(expected.kind + "4")
        assert rows.dtype == expected, name
        flat = host(flatten_batch(drawn, space))
        assert flat.tolist() == np.asarray(flatten_batch(rows.astype(np.asarray(numpy_batch).dtype), space)).tolist()


# -- what the laws found once NumPy ran them too (issue 22 point 3) --------------------------


def test_numpy_clamp_of_bools_into_a_set_of_bools() -> None:
    """The NumPy clamp subtracted bools (a TypeError) to find the nearest item."""
    assert sa.clamp(np.array([True, False]), sa.BOOL).tolist() == [True, False]
    assert sa.clamp(np.array([True]), sa.FiniteSet(False)).tolist() == [False]


def test_a_set_of_uint64_integers_is_held_exactly() -> None:
    """``FiniteSet(2**63 - 5, 2**63 + 9)`` was stored as float64 (both items rounded), so
    its NumPy samples were no members."""
    space = sa.FiniteSet(2**63 - 5, 2**63 + 9)
    drawn = sa.sample(space, 16, rng=0)
    assert drawn.dtype == np.uint64
    assert sa.isin(drawn, space).all()
    assert all(sa.contains(v, space) for v in drawn)


def test_numpy_samples_of_a_set_no_dtype_holds_are_its_items() -> None:
    """``FiniteSet(0.5, 2**53 + 1)`` was sampled from a float64 array (``2**53 + 1``
    rounded: no member); NumPy now draws the items themselves (an object array), as torch
    and JAX refuse the set (no tensor holds both)."""
    space = sa.FiniteSet(0.5, -(2**53 + 1))
    drawn = sa.sample(space, 16, rng=0)
    assert set(drawn.tolist()) <= {0.5, -(2**53 + 1)}
    assert sa.isin(drawn, space).all()


def test_a_categorical_of_more_than_2_64_values_per_entry_repr_and_samples() -> None:
    """``repr`` of ``Categorical([2**64, 3], dtype=np.uint64)`` (an object ``nvec``) raised
    AttributeError, so no per-space plan (named by the repr) could be built for it."""
    space = sa.Categorical([2**64, 3], dtype=np.uint64)
    assert eval(repr(space), {"Categorical": sa.Categorical, "np": np}) == space
    drawn = sa.sample(space, 10, rng=0)
    assert drawn.dtype == np.uint64 and sa.isin(drawn, space).all()
