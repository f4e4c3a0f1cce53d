"""Weighted masked draws on NumPy (``sample(s, rng=g, probability=w)``): the laws the host's
one-row path keeps (spacealg.spaces.mask_blocks ``_choose_weighted`` and the NumPy checks).

- weights with a negative, NaN or infinite entry raise MaskError naming ``probability``;
- weights are rescaled per row: ``w`` and ``w * 2**e`` draw the same elements from the same
  generator (no overflow near 1e308, no fading to subnormals);
- every draw is allowed by the mask and has a positive weight.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.spaces.mask_factors import MaskError

WEIGHTS = st.lists(st.sampled_from([0.0, 1.0, 0.5, 3.0, 1e-300, 7.25]), min_size=6, max_size=6)


@settings(max_examples=40, deadline=None)
@given(WEIGHTS, st.integers(-1000, 1000), st.integers(0, 2**32), st.lists(st.booleans(), min_size=6, max_size=6))
def test_scaled_weights_draw_the_same_allowed_elements(weights: list[float], exponent: int, seed: int,
                                                       mask: list[bool]) -> None:
    w = np.array(weights)
    allowed = np.array(mask)
    scaled = np.ldexp(w, exponent)
    if not (np.isfinite(scaled).all() and ((scaled > 0) == (w > 0)).all()):
        return  # the scaled weights are not the same distribution (overflow or underflow)
    space = sa.Masked(range(6), allowed)
    if not (w * allowed > 0).any():
        with pytest.raises(MaskError, match=r"sum to 0|allows no element"):
            sa.sample(space, 3, rng=seed, probability=w)
        return
    drawn = sa.sample(space, 5, rng=np.random.default_rng(seed), probability=w)
    assert drawn.tolist() == sa.sample(space, 5, rng=np.random.default_rng(seed), probability=scaled).tolist()
    assert all(allowed[d] and w[d] > 0 for d in drawn.tolist())
    one = sa.sample(space, rng=np.random.default_rng(seed), probability=w)
    assert type(one) is int and allowed[one] and w[one] > 0


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("at", [0, 3, 5])
def test_bad_weights_raise_naming_probability(bad: float, at: int) -> None:
    w = np.ones(6)
    w[at] = bad
    with pytest.raises(MaskError, match="probability"):
        sa.sample(sa.Masked(range(6), np.ones(6, dtype=bool)), rng=0, probability=w)
    with pytest.raises(MaskError, match="probability"):
        sa.sample(range(6), rng=0, probability=w.astype(np.float32))


@settings(max_examples=40, deadline=None)
@given(WEIGHTS, st.lists(st.booleans(), min_size=6, max_size=6), st.integers(0, 2**32),
       st.sampled_from([(), (1,), (4,), (2, 3)]))
def test_one_row_for_every_draw_draws_as_that_row_repeated(weights: list[float], mask: list[bool], seed: int,
                                                           shape: tuple[int, ...]) -> None:
    """``choose(w, shape)`` (one distribution: NumPy's one-row path) gives the indices that
    ``choose`` of ``w`` repeated once per draw gives (the general path, one row per draw),
    from the same generator: the fast path keeps the rule's draws."""
    from spacealg.core.kernel import numpy_kernel
    from spacealg.spaces.mask_blocks import choose

    for row in (np.array(weights) * np.array(mask), np.array(mask)):  # weights, then a bool mask
        if not row.any():
            continue
        repeated = np.broadcast_to(row, (*shape, row.size)).copy()
        one = choose(row, shape, numpy_kernel(np.random.default_rng(seed)))
        each = choose(repeated, shape, numpy_kernel(np.random.default_rng(seed)))
        assert one.shape == each.shape == shape
        if row.dtype == bool:  # the bool path draws positions among the allowed entries: the same law
            assert row[one].all() and row[each].all()
        else:
            assert one.tolist() == each.tolist()
