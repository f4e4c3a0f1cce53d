"""``range`` leaves by the batched rules on NumPy, torch and JAX, against an oracle of the laws.

Python's ``range`` is a leaf like any other: its batched ``isin``/``sample``/``clamp``/
``clamp_`` are the per-leaf rules (:mod:`spacealg.backends`) on every backend. The oracle
below is written from the laws alone, in exact Python arithmetic (ints and Fractions):

- ``isin(b, r)[i]`` is whether ``b[i]``'s exact value is an integer of ``r``;
- every sampled row is a member of ``r``;
- ``clamp(x, r)[i]`` is the member nearest to ``x[i]`` by exact distance, ties to the
  even position ``k`` of ``first + step * k`` (``first`` the least member); a member is
  unchanged; NaN raises ValueError, as does an empty range;
- ``clamp_(x, r)`` writes ``clamp(x, r)`` into ``x`` (or raises TypeError, ``x`` unchanged,
  where ``x``'s dtype cannot hold it).

Ranges are generated with steps of either sign (1, small, huge), one item or many, starts
near 0, +-2**53, +-2**63, 2**64 and beyond; batches of every integer, float and bool dtype.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.backends import to_numpy

#: the profile's examples (tests/conftest.py: 40 under ``dev`` and ``ci``, more under ``deep`` and
#: ``thorough``); each JAX example compiles the drawn range's programs (its numbers are constants)
LAWS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "uint64", "float16", "float32", "float64"]
ANCHORS = [0, 1000, -(2**31), 2**53, -(2**53), 2**63, -(2**63), 2**64, -(2**64), 2**70]
NARROW = [0, 1000, -1000, 2**24, -(2**24), 2**31 - 200, -(2**31) + 200]  # JAX without x64: int32 holds them


# -- the oracle ---------------------------------------------------------------------------------------


def exact(v: Any) -> Fraction | None:
    """The exact value of a NumPy scalar or Python number (None: NaN or an infinity)."""
    if isinstance(v, (bool, np.bool_)):
        return Fraction(int(v))
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    f = float(v)
    return Fraction(f) if math.isfinite(f) else None


def member(v: Any, r: range) -> bool:
    value = exact(v)
    return value is not None and value.denominator == 1 and int(value) in r


def ascending(r: range) -> tuple[int, int, int]:
    """(first, step, n): the least member, the positive step and the number of members."""
    n = len(range(0, r.stop - r.start, r.step))  # len(r) overflows past sys.maxsize; this does not
    if r.step > 0:
        return r.start, r.step, n
    return r.start + (n - 1) * r.step, -r.step, n


def nearest(v: Any, r: range) -> int:
    """The member nearest to ``v`` exactly, ties to the even position from the least member."""
    first, step, n = ascending(r)
    last = first + step * (n - 1)
    value = exact(v)
    if value is None:  # an infinity
        return last if float(v) > 0 else first
    if value <= first:
        return first
    if value >= last:
        return last
    k = math.floor((value - first) / step)
    below, above = first + step * k, first + step * (k + 1)
    down, up = value - below, above - value
    if down < up or (down == up and k % 2 == 0):
        return below
    return above


# -- generated ranges and batches ---------------------------------------------------------------------


@st.composite
def ranges(draw: Any, narrow: bool = False) -> range:
    start = draw(st.sampled_from(NARROW if narrow else ANCHORS)) + draw(st.integers(-40, 40))
    steps = [3, 2**20] if narrow else [2**31, 2**40, 2**62, 2**63 + 1]
    step = draw(st.one_of(st.integers(1, 7), st.sampled_from(steps)))
    n = draw(st.integers(1, 40))
    if draw(st.booleans()):
        return range(start, start + step * n, step)
    return range(start, start - step * n, -step)


def candidates(r: range, dtype: np.dtype) -> list[Any]:
    """Values near the range's ends and members, the dtype's ends, halves and infinities."""
    first, step, n = ascending(r)
    last = first + step * (n - 1)
    ints = [first, last, first + step * (n // 2), 0, 1, -1]
    ints = [c + d for c in ints for d in (-2, -1, 0, 1, 2)] + [first + step // 2, last - step // 2]
    if dtype.kind == "b":
        return [False, True]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return [c for c in ints if info.min <= c <= info.max] + [int(info.min), int(info.max)]
    info_f = np.finfo(dtype)
    floats = [float(c) for c in ints] + [c + 0.5 for c in ints if abs(c) < 2**50]
    floats += [float(info_f.max), -float(info_f.max), math.inf, -math.inf]
    with np.errstate(over="ignore"):
        return [v for v in np.array(floats, dtype=np.float64).astype(dtype).tolist()]


def batch_of(r: range, dtype_name: str, data: Any) -> np.ndarray:
    dtype = np.dtype(dtype_name)
    pool = candidates(r, dtype)
    picks = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=12))
    return np.array(picks, dtype=object).astype(dtype)


# -- backends -----------------------------------------------------------------------------------------


def backend(name: str) -> Any:
    if name == "numpy":
        return np
    return pytest.importorskip(name)


def on(name: str, a: np.ndarray) -> Any:
    if name == "numpy":
        return a.copy()
    if name == "torch":
        torch = backend("torch")
        return torch.from_numpy(a.copy())
    return backend("jax").numpy.asarray(a)


def generator(name: str, seed: int) -> Any:
    if name == "numpy":
        return np.random.default_rng(seed)
    if name == "torch":
        return backend("torch").Generator().manual_seed(seed)
    return backend("jax").random.key(seed)


def serves(name: str, r: range, dtype: np.dtype | None = None) -> bool:
    """Whether the backend holds the range's members and the batch's dtype as they are: torch
    and JAX store integer leaves as int64 (JAX without x64: int32, and no 64-bit batches)."""
    if name == "numpy":
        return True
    first, step, n = ascending(r)
    last = first + step * (n - 1)
    if name == "torch":
        return first >= -(2**63) and last < 2**63 and (dtype is None or dtype.name not in ("uint32", "uint64"))
    jax = backend("jax")
    if jax.config.read("jax_enable_x64"):
        return first >= -(2**63) and last < 2**63
    return first >= -(2**31) and last < 2**31 and (dtype is None or dtype.itemsize < 8)


def host(x: Any) -> np.ndarray:
    return np.asarray(to_numpy(x))


BACKENDS = ["numpy", "torch", "jax"]


def a_range(name: str, data: Any) -> range:
    backend(name)
    return data.draw(ranges(narrow=name == "jax" and not backend("jax").config.read("jax_enable_x64")))


@pytest.mark.parametrize("name", BACKENDS)
@given(dtype_name=st.sampled_from(DTYPES), data=st.data())
@LAWS
def test_isin_is_membership_by_exact_value(name: str, dtype_name: str, data: Any) -> None:
    """``isin(b, r)[i] == contains(b[i], r)``: ``b[i]``'s exact value is an integer of ``r``."""
    r = a_range(name, data)
    batch = batch_of(r, dtype_name, data)
    assume(serves(name, r, batch.dtype))
    got = host(sa.isin(on(name, batch), r))
    assert got.dtype == np.bool_ and got.shape == batch.shape
    assert got.tolist() == [member(v, r) for v in batch.tolist()]
    assert got.tolist() == [sa.contains(v, r) for v in batch]


@pytest.mark.parametrize("name", BACKENDS)
@given(seed=st.integers(0, 2**32), size=st.sampled_from([1, 7, (2, 3)]), data=st.data())
@LAWS
def test_every_sampled_row_is_a_member(name: str, seed: int, size: Any, data: Any) -> None:
    r = a_range(name, data)
    assume(serves(name, r))
    drawn = host(sa.sample(r, size, rng=generator(name, seed)))
    assert drawn.shape == ((size,) if isinstance(size, int) else size)
    assert all(member(v, r) for v in drawn.reshape(-1).tolist())
    if name == "numpy":  # the same draw again from the same seed
        assert host(sa.sample(r, size, rng=generator(name, seed))).tolist() == drawn.tolist()


@pytest.mark.parametrize("name", BACKENDS)
@given(dtype_name=st.sampled_from(DTYPES), data=st.data())
@LAWS
def test_clamp_is_the_nearest_member(name: str, dtype_name: str, data: Any) -> None:
    """Every entry of ``clamp(x, r)`` is the member nearest to ``x``'s entry, ties to the
    even position; ``clamp_`` writes it (or raises TypeError leaving ``x`` unchanged)."""
    r = a_range(name, data)
    batch = batch_of(r, dtype_name, data)
    assume(serves(name, r, batch.dtype))
    expected = [nearest(v, r) for v in batch.tolist()]
    got = host(sa.clamp(on(name, batch), r))
    assert got.shape == batch.shape
    assert [int(v) for v in got.tolist()] == expected
    if name == "jax":
        return
    x = on(name, batch)
    try:
        assert sa.clamp_(x, r) is x
    except TypeError:  # its dtype cannot hold the clamp of some value it holds
        assert host(x).tolist() == batch.tolist()
        return
    assert [exact(v) for v in host(x).tolist()] == [Fraction(e) for e in expected]


@pytest.mark.parametrize("name", BACKENDS)
@given(data=st.data())
@LAWS
def test_clamp_of_members_gives_them_back(name: str, data: Any) -> None:
    r = a_range(name, data)
    assume(serves(name, r))
    first, step, n = ascending(r)
    ks = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6))
    values = [first + step * k for k in ks]
    if name == "numpy":
        assert sa.clamp(values[0], r) is values[0]
        held = values[0] >= -(2**63) and values[-1] < 2**63 and all(-(2**63) <= v < 2**63 for v in values)
        one = np.array(values, dtype=np.int64 if held else object)
        assert sa.clamp(one, r).tolist() == values
        return
    dtype = np.int64 if name == "torch" or backend("jax").config.read("jax_enable_x64") else np.int32
    batch = np.array(values, dtype=dtype)
    assert host(sa.clamp(on(name, batch), r)).tolist() == values


# -- NumPy's own cases: Python numbers, object arrays, errors --------------------------------------------


@given(data=st.data())
@LAWS
def test_numpy_scalars_and_python_ints(data: Any) -> None:
    """A Python number is clamped to a Python int; objects arrays of Python ints (beyond
    every dtype) are read entry by entry; ``sample(r)`` is one Python int."""
    r = data.draw(ranges())
    first, step, n = ascending(r)
    values = data.draw(st.lists(st.sampled_from([*candidates(r, np.dtype(np.float64)), first - 3, first + step * n]),
                                min_size=1, max_size=6))
    for v in values:
        clamped = sa.clamp(v, r)
        assert type(clamped) is int or (member(v, r) and clamped is v)
        assert clamped == nearest(v, r)
    objects = np.array([int(v) if math.isfinite(v) and float(v).is_integer() else 0 for v in values] + [first, 2**80],
                       dtype=object)
    assert sa.isin(objects, r).tolist() == [member(v, r) for v in objects]
    one = sa.sample(r, rng=data.draw(st.integers(0, 2**32)))
    assert type(one) is int and one in r


@pytest.mark.parametrize("name", BACKENDS)
def test_nan_and_empty_ranges_raise(name: str) -> None:
    if name != "numpy":
        backend(name)
    with pytest.raises(ValueError, match="NaN"):
        sa.clamp(on(name, np.array([1.0, np.nan], dtype=np.float32)), range(0, 10, 3))
    if name == "numpy":
        with pytest.raises(ValueError, match="empty"):
            sa.sample(range(3, 3), 4, rng=generator(name, 0))
        with pytest.raises(ValueError, match="empty"):
            sa.sample(range(3, 3), rng=0)
        with pytest.raises(ValueError, match="empty"):
            sa.clamp(np.array([1.0]), range(5, 0))
        assert sa.isin(np.array([0, 1]), range(0)).tolist() == [False, False]


def test_clamp_into_a_dtype_that_cannot_hold_it_leaves_x_unchanged() -> None:
    x = np.array([5, -7], dtype=np.int8)
    with pytest.raises(TypeError, match="cannot hold"):
        sa.clamp_(x, range(1000, 2000))
    assert x.tolist() == [5, -7]
    assert sa.clamp(x, range(1000, 2000)).tolist() == [1000, 1000]
    assert sa.clamp(np.array([True, False]), range(3, 9, 2)).tolist() == [3, 3]
    assert sa.isin(np.array([True, False]), range(0, 2)).tolist() == [True, True]


# -- regressions ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BACKENDS)
def test_a_huge_stepped_range_is_never_enumerated(name: str) -> None:
    """The leaf of ``range(0, 2**40, 3)`` held a tuple of its items (torch: MemoryError)."""
    r = range(0, 2**40, 3)
    if name == "jax" and not backend("jax").config.read("jax_enable_x64"):
        r = range(0, 2**30, 3)
    last = r[-1]
    batch = np.array([0, 3, 4, last, last + 3], dtype=np.int64 if name != "jax" else np.int32)
    assert host(sa.isin(on(name, batch), r)).tolist() == [True, True, False, True, False]
    assert all(member(v, r) for v in host(sa.sample(r, 5, rng=generator(name, 1))).tolist())


@given(start=st.sampled_from(ANCHORS), step=st.sampled_from([1, 3, 2**40, 2**64 + 1]),
       n=st.integers(2**64 + 1, 2**90), descending=st.booleans(), seed=st.integers(0, 2**32),
       size=st.sampled_from([None, 1, 7, (2, 3)]))
@LAWS
def test_a_range_of_more_items_than_uint64_holds_is_sampled(start: int, step: int, n: int, descending: bool,
                                                            seed: int, size: Any) -> None:
    """Positions beyond uint64 are drawn exactly (numpy's uint64 draw refused them: ValueError):
    every draw is a member, the same seed gives the same draw, and the draws reach past 2**64."""
    r = range(start, start - step * n, -step) if descending else range(start, start + step * n, step)
    drawn = sa.sample(r, size, rng=np.random.default_rng(seed))
    values = [drawn] if size is None else np.asarray(drawn).reshape(-1).tolist()
    assert all(member(v, r) for v in values)
    again = sa.sample(r, size, rng=np.random.default_rng(seed))
    assert (again == drawn) if size is None else np.asarray(again).tolist() == np.asarray(drawn).tolist()
    first = start - step * (n - 1) if descending else start
    far = [(v - first) // step for v in sa.sample(r, 64, rng=np.random.default_rng(seed)).tolist()]
    assert max(far) >= 2**64 or n < 2**66  # 64 uniform positions below n >= 2**66 all under 2**64: p < 4**-64


@pytest.mark.parametrize("name", BACKENDS)
def test_ties_go_to_the_even_position_on_every_backend(name: str) -> None:
    """torch and JAX rounded ``x`` first, then onto the step (a double rounding): 4.5 into
    range(0, 10, 3) gave 3, and 2.5 into range(1, 10) gave 2; NumPy's 6 and 3 are the laws'."""
    x = np.array([2.5, 1.5, 4.5, 7.5, 5.5], dtype=np.float32)
    assert host(sa.clamp(on(name, x), range(0, 10, 3))).tolist() == [3, 0, 6, 6, 6]
    assert host(sa.clamp(on(name, x), range(1, 10))).tolist() == [3, 1, 5, 7, 5]
    assert host(sa.clamp(on(name, x), range(10, 0, -3))).tolist() == [1, 1, 4, 7, 7]


def test_clamp_inplace_of_bools_into_a_range_whose_clamp_is_no_bool() -> None:
    """False into {-1, 1} is -1 (a tie, to the even position): clamp_ wrote True before."""
    x = np.array([False, True])
    with pytest.raises(TypeError, match="cannot hold"):
        sa.clamp_(x, range(1, -3, -2))
    assert x.tolist() == [False, True]
