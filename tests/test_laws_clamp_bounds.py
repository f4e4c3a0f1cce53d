"""Laws of clamp, clamp_ and bounds."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from helpers import clampable_spaces, outsiders, same
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.strategies import spaces


@given(clampable_spaces(), st.data())
def test_clamp_lands_inside(space, data):
    x = data.draw(outsiders(space))
    assert sa.contains(sa.clamp(x, space), space)


@given(clampable_spaces(), st.data())
def test_clamp_is_idempotent(space, data):
    once = sa.clamp(data.draw(outsiders(space)), space)
    assert same(sa.clamp(once, space), once)


@given(spaces(), st.integers(0, 2**32))
def test_clamp_leaves_members_unchanged(space, seed):
    x = sa.sample(space, rng=seed)
    try:
        clamped = sa.clamp(x, space)
    except TypeError:  # spaces without an order (labels) only clamp members
        pytest.fail("clamp of a member must not raise")
    assert same(clamped, x)


@given(clampable_spaces(), st.integers(0, 2**32))
def test_batched_clamp_lands_inside(space, seed):
    wide = _widen(space)
    batch = sa.sample(wide, 6, rng=seed)
    assert sa.isin(sa.clamp(batch, space), space).all()


def _widen(space):
    """A space of the same structure as ``space`` whose members are mostly outside it."""
    if isinstance(space, sa.TupleProduct):
        return sa.TupleProduct(*(_widen(s) for s in space.spaces))
    if isinstance(space, sa.DictProduct):
        return sa.DictProduct({k: _widen(s) for k, s in space.spaces.items()})
    shape = sa.elsize(space)
    if shape == ():
        return sa.Interval(-1e4, 1e4)
    return sa.Box(-1e4, 1e4, shape=shape, dtype=np.float64)


@given(clampable_spaces(), st.data())
def test_clamp_in_place_equals_clamp(space, data):
    x = data.draw(outsiders(space))
    if not isinstance(x, (tuple, dict, np.ndarray)):
        x = np.array(x, dtype=np.float64)  # a scalar is clamped in place as a 0-d array
    mutable = _mutable(x)
    expected = sa.clamp(x, space)
    result = sa.clamp_(mutable, space)
    assert result is mutable
    assert same(_frozen(result), _frozen(expected)) or np.allclose(
        np.hstack([np.ravel(v) for v in _leaves(result)]).astype(float),
        np.hstack([np.ravel(v) for v in _leaves(expected)]).astype(float),
    )


def _mutable(x):
    if isinstance(x, tuple):
        return [_mutable(v) for v in x]
    if isinstance(x, dict):
        return {k: _mutable(v) for k, v in x.items()}
    return np.array(x, dtype=np.float64) if isinstance(x, np.ndarray) else x


def _frozen(x):
    if isinstance(x, list):
        return tuple(_frozen(v) for v in x)
    if isinstance(x, dict):
        return {k: _frozen(v) for k, v in x.items()}
    return x


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _leaves(v)]
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in _leaves(v)]
    return [x]


def test_clamp_in_place_rejects_immutable_values():
    with pytest.raises(TypeError, match="clamp_"):
        sa.clamp_(3.0, sa.Interval(0, 1))
    with pytest.raises(TypeError, match="clamp_"):
        sa.clamp_((1.0, 2.0), sa.TupleProduct(sa.Interval(0, 1), sa.Interval(0, 1)))


@pytest.mark.parametrize(
    ("space", "x", "expected"),
    [
        (sa.Interval(0, 1, closed="neither"), 5.0, np.nextafter(1.0, 0.0)),
        (sa.Interval(0, 1, closed="left"), -5.0, 0.0),
        (sa.Interval(0, 1, closed="right"), -5.0, np.nextafter(0.0, 1.0)),
        (range(0, 10, 3), 7.4, 6),
        (range(0, 10, 3), 100, 9),
        (sa.FiniteSet(1, 5, 10), 3.0, 1),
        (sa.FiniteSet(1, 5, 10), 8.0, 10),
    ],
)
def test_clamp_examples(space, x, expected):
    assert sa.clamp(x, space) == expected


def test_clamp_of_labels_is_a_type_error():
    with pytest.raises(TypeError, match="not a set of numbers"):
        sa.clamp("giraffe", sa.FiniteSet("cat", "dog"))


def test_clamp_of_nan_is_a_value_error():
    with pytest.raises(ValueError, match="NaN"):
        sa.clamp(math.nan, sa.Interval(0, 1))


# -- bounds ------------------------------------------------------------------------------


@given(clampable_spaces(), st.integers(0, 2**32))
def test_bounds_enclose_samples(space, seed):
    low, high = sa.bounds(space)
    _check_enclosed(sa.sample(space, 20, rng=seed), low, high)


def _check_enclosed(batch, low, high):
    if isinstance(batch, tuple):
        for b, lo, hi in zip(batch, low, high):
            _check_enclosed(b, lo, hi)
    elif isinstance(batch, dict):
        for k in batch:
            _check_enclosed(batch[k], low[k], high[k])
    else:
        assert (np.asarray(batch) >= low).all() and (np.asarray(batch) <= high).all()


def test_integer_interval_ends_stay_integers():
    low, high = sa.bounds(sa.Interval(1, 5))
    assert type(low) is int and type(high) is int


@pytest.mark.parametrize("space", [sa.FiniteSet("a", "b"), sa.OneOf(range(2), range(3))])
def test_spaces_without_bounds_raise_type_error(space):
    with pytest.raises(TypeError, match="bounds"):
        sa.bounds(space)


def test_clamp_does_not_modify_its_input():
    x = np.array([5.0, -5.0])
    before = copy.deepcopy(x)
    sa.clamp(x, sa.Box(-1, 1, shape=(2,)))
    assert same(x, before)


@given(clampable_spaces(), st.data())
def test_clamp_in_place_is_all_or_nothing(space, data):
    """An error in any part (NaN in one float array, one read-only array, or a dtype that
    cannot hold the clamp) leaves every part of ``x`` as it was, the parts before it included."""
    mutable = _mutable(_as_array(data.draw(outsiders(space))))
    arrays = [a for a in _leaves(mutable) if isinstance(a, np.ndarray) and a.size]
    if not arrays:
        return
    spoiled = data.draw(st.sampled_from(arrays))
    before = copy.deepcopy(mutable)
    if data.draw(st.booleans(), label="read-only"):
        spoiled.flags.writeable = False
    else:
        spoiled.reshape(-1)[data.draw(st.integers(0, spoiled.size - 1))] = np.nan
        before = copy.deepcopy(mutable)
    with pytest.raises((TypeError, ValueError)):  # read-only, NaN, or a dtype that cannot hold the clamp
        sa.clamp_(mutable, space)
    assert all(same(a, b) for a, b in zip(_leaves(mutable), _leaves(before), strict=True))


def _as_array(x):
    return x if isinstance(x, (tuple, dict, np.ndarray)) else np.array(x, dtype=np.float64)
