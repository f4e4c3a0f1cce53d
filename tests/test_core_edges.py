"""Edge values found in review: float precision at open ends and at integer dtype limits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spacealg import Box, Interval, clamp, clamp_, contains, isin

OPEN_ENDED = [Interval(0, 1, "left"), Interval(0, 1, "right"), Interval(0, 1, "neither"),
              Interval(-3.5, 2.25, "neither")]


@pytest.mark.parametrize("space", OPEN_ENDED, ids=repr)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@given(values=st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=5))
def test_clamp_lands_inside_open_ends_in_every_float_dtype(space, dtype, values):
    array = np.asarray(values, dtype=dtype)
    assert isin(clamp(array, space), space).all()
    assert all(contains(clamp(v, space), space) for v in array)  # numpy scalars
    assert isin(clamp_(array.copy(), space), space).all()


def test_interval_without_floats_is_rejected():
    with pytest.raises(ValueError, match="no floating-point number"):
        Interval(0, 5e-324, "neither")


@pytest.mark.parametrize(
    ("space", "outside"),
    [
        (Box(0, 2**64 - 1, shape=(), dtype=np.uint64), 2.0**64),
        (Box(-np.inf, np.inf, shape=(), dtype=np.int64), 2.0**63),
        (Box(-np.inf, np.inf, shape=(), dtype=np.int64), -(2.0**63) * (1 + 2**-52)),
    ],
    ids=repr,
)
def test_integer_box_limits_compare_floats_exactly(space, outside):
    assert not contains(np.array(outside), space)
    assert not contains(outside, space)
    assert not isin(np.array([outside]), space).any()
    clamped = clamp(np.array([outside, -outside]), space)
    assert isin(clamped, space).all()
    assert clamped[0] == (space.high if outside > 0 else space.low)
