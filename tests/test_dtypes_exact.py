"""Exact on every NumPy dtype (issue 38 point 5).

Law, for every space kind and every NumPy dtype a batch can have (bool, int8..uint64,
float16/32/64, longdouble, object arrays of Python ints of any size and floats):
``isin(batch, s)[i] == contains(batch[i], s)`` for every row, and every row of
``clamp(batch, s)`` is a member (open ends excluded). The kinds: every leaf kind, the
catalogued ones (OneHot), unions, differences and products of them. The values are drawn near the space's
ends and their neighbours in the batch's dtype, where rounding to float64 would decide.
longdouble is tested only where it is wider than float64 (x86-64 Linux); elsewhere it is
float64 under another name and its cases are skipped, saying so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.strategies import spaces
from spacealg.strategies.spaces import LEAF_KINDS

WIDE = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "object"]
NARROW = "longdouble is float64 on this platform: nothing rounds it, so its law is float64's"
LAWS = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
KINDS = spaces(leaves=(*LEAF_KINDS, "catalogued"), composites=("tuple", "union", "difference"), max_depth=1)
_NUMBERS = [0, 1, -1, 0.5, -3, 2**63, 2**64 - 1, -(2**64 - 1), 2**70 + 1, 1e30]


def _near(space: Any) -> list[Any]:
    """Exact numbers near the space's ends (its bounds, their neighbours) and a few others."""
    found = list(_NUMBERS)
    try:
        ends = sa.bounds(space)
    except TypeError:  # labels: members only
        ends = ()
    for end in ends:
        for v in np.ravel(np.asarray(end, dtype=object)).tolist():
            if np.isfinite(float(v)):
                found += [v, v + 1, v - 1]
    return found


def _in_dtype(values: list[Any], dtype: np.dtype) -> list[Any]:
    """The values ``dtype`` holds, and for floats their nearest neighbours in ``dtype``."""
    if dtype.kind == "O":
        return [*values, *(float(np.nextafter(float(v), d)) for v in values for d in (-np.inf, np.inf))]
    if dtype.kind == "b":
        return [np.True_, np.False_]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return [dtype.type(v) for v in values if isinstance(v, int) and info.min <= v <= info.max]
    out = []
    with np.errstate(over="ignore"):
        for v in values:
            x = np.array(v, dtype=object).astype(dtype)[()]
            out += [x, np.nextafter(x, dtype.type(np.inf)), np.nextafter(x, dtype.type(-np.inf))]
    return out


def _shaped(space: Any) -> bool:
    """Whether members of ``space`` are arrays of one shape, or tuples of them (a union of boxes
    and intervals has none; a union of products has object batches)."""
    if isinstance(space, sa.TupleProduct):
        return all(_shaped(s) for s in space.spaces)
    try:
        return all(isinstance(d, int) for d in sa.elsize(space))
    except TypeError:
        return False


def _empty(space: Any) -> bool:
    try:
        return bool(sa.cardinality(space) == 0)
    except TypeError:  # a difference too large to count
        return False


def _members(space: Any) -> list[Any]:
    try:
        drawn = sa.sample(space, rng=0)
        return [np.asarray(drawn)[()] if np.ndim(drawn) == 0 else drawn]
    except ValueError:  # a difference too thin to draw from
        return []


def _batch(space: Any, dtype: np.dtype, data: Any) -> Any:
    """A batch of ``space`` (a tuple of batches for a product) of ``dtype`` near its ends."""
    if isinstance(space, sa.TupleProduct):
        parts = [_batch(s, dtype, data) for s in space.spaces]
        n = min(_length(p) for p in parts)
        return tuple(_cut(p, n) for p in parts)
    values = _in_dtype(_near(space), dtype) + (_members(space) if dtype.kind == "O" else [])
    shape = tuple(sa.elsize(space))
    rows = data.draw(st.lists(st.integers(0, len(values) - 1), min_size=2, max_size=4))
    batch = np.empty((len(rows), *shape), dtype=dtype)
    for i, pick in enumerate(rows):
        value = values[pick]
        if np.shape(value) == shape or not shape:
            batch[i] = value
        else:
            batch[i] = np.full(shape, value, dtype=dtype)
    return batch


def _row(batch: Any, i: int) -> Any:
    return tuple(_row(b, i) for b in batch) if isinstance(batch, tuple) else batch[i]


def _cut(batch: Any, n: int) -> Any:
    return tuple(_cut(b, n) for b in batch) if isinstance(batch, tuple) else batch[:n]


def _length(batch: Any) -> int:
    return _length(batch[0]) if isinstance(batch, tuple) else len(batch)


@given(KINDS, st.sampled_from(DTYPES), st.data())
@LAWS
def test_isin_is_contains_and_clamp_lands_inside_on_every_numpy_dtype(space: Any, dtype: str, data: Any) -> None:
    _law(space, dtype, data)


@pytest.mark.skipif(not WIDE, reason=NARROW)
@given(KINDS, st.data())
@LAWS
def test_isin_is_contains_and_clamp_lands_inside_on_longdouble(space: Any, data: Any) -> None:
    _law(space, "longdouble", data)


def _law(space: Any, dtype: str, data: Any) -> None:
    assume(_shaped(space) and not _empty(space))
    batch = _batch(space, np.dtype(dtype), data)
    n = _length(batch)
    assert np.asarray(sa.isin(batch, space)).tolist() == [sa.contains(_row(batch, i), space) for i in range(n)]
    try:
        clamped = sa.clamp(batch, space)
    except TypeError as error:  # no nearest member of labels; a difference's, not decided
        if "not decided" not in str(error):
            with pytest.raises(TypeError):
                sa.bounds(space)
        return
    except ValueError as error:  # no number of the batch's dtype lies inside (a float16 batch, [512.75, 512.75])
        assert "lies in" in str(error)
        return
    assert all(sa.contains(_row(clamped, i), space) for i in range(n))


@pytest.mark.skipif(not WIDE, reason=NARROW)
def test_the_issues_longdouble_and_wide_int_cases() -> None:
    one_up = np.nextafter(np.longdouble(1), np.longdouble(2))
    assert one_up not in sa.Interval(0, 1) and sa.clamp(one_up, sa.Interval(0, 1)) == 1
    opened = sa.Interval(0, 1, closed="neither")
    assert sa.isin(np.array([0.0, 0.5, 1.0], dtype=np.longdouble), opened).tolist() == [False, True, False]
    assert sa.clamp(np.longdouble(2), opened) in opened
    assert sa.isin(np.array([-(2**64 - 1)]), sa.Interval(-(2**64 - 1), 0)).tolist() == [True]


def test_object_batches_of_ints_beyond_64_bits_are_compared_exactly() -> None:
    space = sa.Interval(-(2**64 - 1), 0)
    batch = np.array([-(2**64 - 1), -(2**64), 2**70], dtype=object)
    assert sa.isin(batch, space).tolist() == [True, False, False]
    assert [x in space for x in sa.clamp(batch, space)] == [True] * 3
    assert sa.clamp(batch, space)[0] == -(2**64 - 1)  # a member is kept, not rounded


LONG = np.longdouble


@pytest.mark.skipif(not WIDE, reason=NARROW)
@LAWS
@given(st.floats(-1e30, 1e30), st.integers(-3, 3), st.integers(0, 4), st.integers(0, 2**16))
def test_a_longdouble_box_whose_ends_no_float64_holds_is_read_exactly(start: float, ulps: int, span: int,
                                                                       seed: int) -> None:
    """A Box of dtype longdouble keeps its ends exactly: ``contains``, ``isin``, ``clamp`` and
    ``sample`` answer by the ends themselves, not by the float64s nearest to them (the leaf
    model's inner ends rounded them to float64, so an entry one longdouble step below ``low``
    was a member, and clamp kept it)."""
    low = LONG(start) + LONG(ulps) * abs(np.spacing(LONG(start)))
    high = low + LONG(span) * abs(np.spacing(low))
    box = sa.Box(np.array([low]), np.array([high]), dtype=np.longdouble)
    below, above = np.nextafter(low, LONG(-np.inf)), np.nextafter(high, LONG(np.inf))
    candidates = np.array([[below], [low], [np.nextafter(low, LONG(np.inf))], [high], [above]], dtype=LONG)
    inside = [bool(low <= x[0] <= high) for x in candidates]
    assert [sa.contains(x, box) for x in candidates] == inside
    assert sa.isin(candidates, box).tolist() == inside
    clamped = sa.clamp(candidates, box)
    assert clamped.dtype == LONG and all(low <= c[0] <= high for c in clamped)
    assert all(c[0] == x[0] for c, x, kept in zip(clamped, candidates, inside) if kept)
    drawn = sa.sample(box, rng=seed, size=8)
    assert drawn.dtype == LONG and bool(((drawn >= low) & (drawn <= high)).all())


def test_an_interval_end_no_float64_holds_is_a_value_error_naming_it() -> None:
    """An Interval's ends are ints or floats, read exactly: a longdouble end that no float64
    holds is refused (rounding it would change the set), one that a float64 holds is that float."""
    if WIDE:
        with pytest.raises(ValueError, match=r"Interval: low = .* holds no float64"):
            sa.Interval(np.nextafter(LONG(1), LONG(2)), 2)
    assert sa.Interval(LONG(0.5), LONG(2)) == sa.Interval(0.5, 2.0)
