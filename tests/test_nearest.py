"""The three decisions written once (:mod:`spacealg.core.leaf_index`, :mod:`spacealg.core.arrays`),
checked against oracles written from their laws alone:

- ``nearest_step(x, first, step, n)``: the position ``k`` of the member ``first + step * k``
  of a stepped range nearest to ``x`` by exact distance, ties to the even ``k``; an infinity:
  the member at that end (the oracle: every position's distance, in Fractions);
- ``nearest_item(items, x)``: the item nearest to ``x`` by exact distance, ties to the lower;
  an infinity: the item at that end;
- ``inner_float(end, dtype, up, open_end)``: the float of ``dtype`` nearest to a real end
  on its inner side (strictly inside an open end), compared exactly: inside, and the next
  float outwards is not (an infinity where no float lies inside);
- ``first_leaf(batch)``: the first leaf of nested tuples, lists and dicts, depth first (None
  for an empty one on the way), and ``backend_name`` of a batch is its first leaf's.

Each is also checked where its callers read it: the exact clamp of a number into a range
and into a FiniteSet (``sa.clamp``), and ``clamp_holds`` (whether a dtype holds the clamps of
its own values) against the clamps of the dtype's ends.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.core.arrays import backend_name, first_leaf
from spacealg.core.leaf import inner_float, leaf
from spacealg.core.leaf_index import clamp_holds, exact_value, nearest_item, nearest_step

LAWS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ANCHORS = [0, 7, -1000, 2**53, -(2**53), 2**63, -(2**64), 2**70]

firsts = st.sampled_from(ANCHORS).flatmap(lambda a: st.integers(a - 20, a + 20))
steps = st.one_of(st.integers(1, 5), st.integers(1, 2**66))
counts = st.integers(1, 12)


def reals(around: int, step: int) -> st.SearchStrategy[Any]:
    """Numbers near the member ``around`` of a range of ``step``: a few steps off, half steps
    (ties) and thirds of steps (near ties), as ints, Fractions and floats; and any float."""
    offsets = st.builds(lambda a, b: Fraction(step * a, b), st.integers(-4, 4), st.sampled_from([1, 2, 3, 6]))
    exact = st.builds(lambda o, d: around + o + d, offsets, st.integers(-2, 2))
    return st.one_of(
        exact,
        exact.map(lambda v: int(v) if v.denominator == 1 else v),
        exact.map(float),
        st.floats(allow_nan=False, allow_infinity=True, width=64),
    )


def exact_distance(x: Any, v: Any) -> Fraction:
    return abs(Fraction(x) - Fraction(v))


def oracle_step(x: Any, first: int, step: int, n: int) -> int:
    """The nearest position by every position's exact distance, ties to the even one."""
    if isinstance(x, float) and math.isinf(x):
        return n - 1 if x > 0 else 0
    distances = [exact_distance(x, first + step * j) for j in range(n)]
    nearest = [j for j, d in enumerate(distances) if d == min(distances)]
    return nearest[0] if len(nearest) == 1 else next(j for j in nearest if j % 2 == 0)


# -- a stepped range's nearest member ---------------------------------------------------------------


@LAWS
@given(firsts, steps, counts, st.data())
def test_nearest_step_is_the_nearest_position_ties_to_even(first: int, step: int, n: int, data: Any) -> None:
    x = data.draw(reals(first + step * data.draw(st.integers(-1, n)), step))
    assert nearest_step(x, first, step, n) == oracle_step(x, first, step, n)


@LAWS
@given(st.integers(-50, 50), st.integers(1, 7), counts, st.data())
def test_clamp_of_a_number_into_a_range_is_its_nearest_step(first: int, step: int, n: int, data: Any) -> None:
    """The public clamp of one number (either direction of the range) is the nearest member."""
    near = reals(first + step * data.draw(st.integers(-1, n)), step)
    x = data.draw(near.filter(lambda v: not isinstance(v, Fraction)))  # a Python or NumPy number
    ascending = range(first, first + step * n, step)
    for r in (ascending, range(first + step * (n - 1), first - 1, -step)):
        assert sa.clamp(x, r) == first + step * oracle_step(x, first, step, n)


@LAWS
@given(firsts, st.integers(2, 2**66), st.integers(2, 12))
def test_clamp_holds_reads_the_clamps_of_the_dtypes_ends(first: int, step: int, n: int) -> None:
    """``clamp_holds``: an integer dtype holds every clamp of its values exactly when it holds
    the clamps of its least and greatest values (the clamp is monotone)."""
    space = range(first, first + step * n, step)
    model = leaf(space)
    assert model is not None
    for dtype in (np.int8, np.uint8, np.int32, np.int64, np.uint64):
        info = np.iinfo(dtype)
        clamps = [first + step * oracle_step(v, first, step, n) for v in (int(info.min), int(info.max))]
        assert clamp_holds(model, dtype) == all(int(info.min) <= c <= int(info.max) for c in clamps), dtype


# -- a finite set's nearest item --------------------------------------------------------------------


items_lists = st.lists(st.one_of(st.integers(-(2**70), 2**70), st.integers(-20, 20),
                                 st.floats(-1e6, 1e6, allow_nan=False)), min_size=1, max_size=8)


@LAWS
@given(items_lists, st.data())
def test_nearest_item_is_the_nearest_ties_to_the_lower(items: list[Any], data: Any) -> None:
    a, b = (exact_value(data.draw(st.sampled_from(items))) for _ in range(2))
    x = data.draw(st.one_of(st.just((a + b) / 2), st.integers(-30, 30), st.floats(allow_nan=False, width=64),
                            st.integers(-60, 60).map(lambda i: Fraction(i, 4))))  # (a + b) / 2: a tie
    got = nearest_item(items, x)
    values = [exact_value(v) for v in items]
    if isinstance(x, float) and math.isinf(x):
        assert exact_value(got) == (max(values) if x > 0 else min(values))
        return
    distances = [exact_distance(x, v) for v in values]
    best = min(distances)
    assert exact_distance(x, exact_value(got)) == best
    assert exact_value(got) == min(v for v, d in zip(values, distances) if d == best)  # ties: the lower


@LAWS
@given(st.lists(st.integers(-20, 20), min_size=1, max_size=6, unique=True), st.data())
def test_clamp_of_a_number_into_a_finite_set_is_its_nearest_item(items: list[int], data: Any) -> None:
    a, b = (data.draw(st.sampled_from(items)) for _ in range(2))
    x = data.draw(st.one_of(st.just((a + b) / 2), st.integers(-30, 30), st.floats(-30, 30),
                            st.sampled_from([math.inf, -math.inf])))  # (a + b) / 2: a tie where a != b
    space = sa.FiniteSet(*items)
    if isinstance(x, float) and math.isinf(x):
        assert sa.clamp(x, space) == (max(items) if x > 0 else min(items))
        return
    distances = [exact_distance(x, v) for v in items]
    assert sa.clamp(x, space) == min(v for v, d in zip(items, distances) if d == min(distances))


# -- a real end's nearest float inside ------------------------------------------------------------


WIDE = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant  # x86-64 Linux: 63 bits
LONG = np.longdouble


def _longdouble_near(value: float, ulps: int) -> Any:
    """A longdouble ``ulps`` of its own steps from ``value``: most hold no float64."""
    x = LONG(value)
    return x + LONG(ulps) * np.spacing(x)


ends = st.one_of(st.floats(allow_nan=False, width=64), st.integers(-(2**1030), 2**1030),
                 st.sampled_from([2**53 + 1, 1e308, 1.5e308, -1.2e308, 70000, 65504.5, 3.4e38, 5e-324, 2**1023]),
                 st.builds(_longdouble_near, st.floats(-1e300, 1e300), st.integers(-3, 3)),
                 st.sampled_from([np.nextafter(LONG(1), LONG(2)), LONG(1e308) * 100, np.finfo(LONG).max,
                                  np.finfo(LONG).smallest_subnormal, LONG(2**64 + 1), -LONG(2**70 + 3)]))
dtypes = [np.float16, np.float32, np.float64, *([np.longdouble] if WIDE else [])]


def _exact(v: Any) -> Fraction:
    return Fraction(*v.as_integer_ratio()) if isinstance(v, (float, np.floating)) else Fraction(v)


@LAWS
@given(ends, st.sampled_from(dtypes), st.booleans(), st.booleans())
def test_inner_float_is_the_nearest_float_inside(end: Any, dtype: Any, up: bool, open_end: bool) -> None:
    """Over float16, float32, float64 and, where it is wider than float64 (here), longdouble,
    with ends that are ints, floats and longdoubles no float64 holds."""
    dtype = np.dtype(dtype)
    f = inner_float(end, dtype, up, open_end)
    assert isinstance(f, dtype.type)
    if isinstance(end, (float, np.floating)) and np.isinf(end):
        expected = dtype.type(end) if not open_end else np.nextafter(dtype.type(end), dtype.type(-end))
        assert f == expected
        return
    exact = _exact(end)

    def inside(v: Any) -> bool:
        if not np.isfinite(v):
            return False
        gap = _exact(v) - exact if up else exact - _exact(v)
        return gap > 0 if open_end else gap >= 0

    outward = dtype.type(-np.inf if up else np.inf)
    if np.isinf(f):  # no float of dtype inside: not even the largest on that side
        assert f == (np.inf if up else -np.inf) and not inside(np.finfo(dtype).max * (1 if up else -1))
        return
    with np.errstate(over="ignore"):
        assert inside(f) and not inside(np.nextafter(f, outward))


def test_interval_ends_beyond_2_1023_keep_their_floats() -> None:
    """Regression: ends above 2**1023 were read as beyond every float (so Interval(1e308, 1.5e308)
    and its Box had no float inside)."""
    x = np.array([1.2e308])
    assert sa.Interval(1e308, 1.5e308).inner_low == 1e308
    assert bool(sa.isin(x[None], sa.Box(1e308, 1.5e308, (1,), np.float64)).all())
    assert bool(sa.isin(x, sa.Interval(1e308, 1.5e308)).all())


# -- a batch's first leaf ---------------------------------------------------------------------------


leaves = st.one_of(st.integers(), st.just(np.zeros(2)), st.text(max_size=2))
batches = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(st.text(max_size=2), inner, max_size=3)),
    max_leaves=8,
)


def oracle_first(batch: Any) -> Any:
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (tuple, list)):
        return oracle_first(batch[0]) if batch else None
    return batch


@LAWS
@given(batches)
def test_first_leaf_is_the_first_leaf_depth_first(batch: Any) -> None:
    assert first_leaf(batch) is oracle_first(batch)
    assert backend_name(batch) is None  # no torch/JAX leaf anywhere


def test_backend_name_of_a_batch_is_its_first_leafs() -> None:
    import torch

    tensor = torch.zeros(2)
    for batch in (tensor, (tensor, np.zeros(2)), {"a": [tensor], "b": 1}, [[[tensor]]]):
        assert first_leaf(batch) is tensor and backend_name(batch) == "torch"
    assert backend_name((np.zeros(2), tensor)) is None  # the first leaf decides
    assert backend_name(()) is None and first_leaf({"a": ()}) is None


# -- a number's exact value ------------------------------------------------------------------------


floats_of_every_width = st.one_of(
    st.floats(allow_nan=False, width=16).map(np.float16), st.floats(allow_nan=False, width=32).map(np.float32),
    st.floats(allow_nan=False), st.builds(_longdouble_near, st.floats(-1e300, 1e300), st.integers(-3, 3)))


@LAWS
@given(floats_of_every_width)
def test_exact_value_is_exact_and_strictly_ordered_along_a_dtypes_floats(x: Any) -> None:
    """``exact_value`` (core.leaf): the next float of ``x``'s own dtype has a strictly greater
    exact value, an infinity is the float it is, and an integer is itself (a longdouble's
    63 bits kept: float64 would round ``2**64 + 1``)."""
    from spacealg.core.leaf import exact_value

    value = exact_value(x)
    if np.isinf(x):
        assert value == float(x) and isinstance(value, float)
        return
    assert isinstance(value, Fraction)
    with np.errstate(over="ignore"):
        up = np.nextafter(x, type(x)(np.inf))
    assert exact_value(up) > value
    whole = int(value) if value.denominator == 1 else None
    if whole is not None:
        assert exact_value(whole) == value


def test_exact_value_of_integers_beyond_float64() -> None:
    from spacealg.core.leaf import exact_value

    if WIDE:
        assert exact_value(LONG(2**64 + 2**11)) == 2**64 + 2**11  # float64 holds no 2**64 + 2**11
        assert exact_value(np.nextafter(LONG(1), LONG(2))) == 1 + Fraction(1, 2**63)
    assert exact_value(np.uint64(2**64 - 1)) == 2**64 - 1 and exact_value(True) == 1
