"""sample(g, mask=..., probability=...) on Gymnasium spaces against Gymnasium's own sample
(spacealg.adapters.masks), and sample(g) following g.seed() (issue 17, point 7)."""

from __future__ import annotations

import warnings

import gymnasium
import gymnasium.spaces as gs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.strategies.gymnasium import gymnasium_spaces
from spacealg.strategies.masks import gymnasium_masks

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
]

CLASSES = ("Discrete", "MultiDiscrete", "MultiBinary", "Text", "Box", "Tuple", "Dict", "OneOf", "Sequence", "Graph")


def _outcome(draw_it):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return draw_it(), None
        except Exception as error:
            return None, error


def _agree(g, what, mask, seed):
    g.seed(seed)
    _reference, expected = _outcome(lambda: g.sample(**{what: mask}))
    ours, error = _outcome(lambda: sa.sample(g, rng=seed, **{what: mask}))
    if expected is not None and "need at least one array" in str(expected):
        expected = None  # Gymnasium's bug: a masked stacked Sequence of length 0 (docs/masks.md)
    if expected is None:
        assert error is None, f"Gymnasium accepts this {what} but spacealg raised {error!r}"
        assert g.contains(ours), ours
    else:
        assert isinstance(error, type(expected)), (
            f"Gymnasium raised {type(expected).__name__}: {expected}; spacealg raised {error!r}"
        )
        if error is not None:
            assert "_sample" not in str(error)


@given(st.data(), st.integers(0, 2**16))
@settings(max_examples=30)
def test_well_formed_masks_agree_with_gymnasium(data, seed):
    g = data.draw(gymnasium_spaces(max_depth=2, classes=CLASSES))
    _agree(g, "mask", data.draw(gymnasium_masks(g, "mask")), seed)


@given(st.data(), st.integers(0, 2**16))
@settings(max_examples=30)
def test_probabilities_agree_with_gymnasium(data, seed):
    g = data.draw(gymnasium_spaces(max_depth=2, classes=CLASSES))
    _agree(g, "probability", data.draw(gymnasium_masks(g, "probability")), seed)


@given(st.data(), st.integers(0, 2**16))
@settings(max_examples=30)
def test_malformed_masks_raise_what_gymnasium_raises(data, seed):
    g = data.draw(gymnasium_spaces(max_depth=2, classes=CLASSES))
    _agree(g, "mask", data.draw(gymnasium_masks(g, "mask", malformed=True)), seed)


@given(st.data(), st.integers(0, 2**16))
@settings(max_examples=30)
def test_malformed_probabilities_raise_what_gymnasium_raises(data, seed):
    g = data.draw(gymnasium_spaces(max_depth=2, classes=CLASSES))
    _agree(g, "probability", data.draw(gymnasium_masks(g, "probability", malformed=True)), seed)


@given(st.data(), st.integers(1, 5), st.integers(0, 2**16))
def test_batched_gymnasium_masks_draw_one_legal_row_each(data, n, seed):
    g = data.draw(gymnasium_spaces(max_depth=1, classes=("Discrete", "MultiDiscrete", "MultiBinary")))
    rows = [data.draw(gymnasium_masks(g, "mask")) for _ in range(n)]
    stack = (lambda *a: np.stack(a)) if not isinstance(rows[0], tuple) else None
    if stack is None:

        def stack_tree(*trees):
            if isinstance(trees[0], tuple):
                return tuple(stack_tree(*parts) for parts in zip(*trees))
            return np.stack(trees)

        batch = stack_tree(*rows)
    else:
        batch = stack(*rows)
    drawn = sa.sample(g, (n,), mask=batch, rng=seed)
    for i in range(n):
        row = drawn[i]
        assert g.contains(row if not isinstance(g, gs.Discrete) else g.dtype.type(row))
        if isinstance(g, gs.Discrete) and rows[i].any():
            assert rows[i][int(row) - int(g.start)] == 1
        if isinstance(g, gs.MultiBinary):
            fixed = rows[i] != 2
            assert (row[fixed] == rows[i][fixed]).all()


def test_discrete_masks_mean_what_they_mean_in_gymnasium():
    g = gs.Discrete(5, start=10)
    assert set(int(v) for v in sa.sample(g, 200, mask=np.array([0, 1, 0, 1, 0], np.int8), rng=0)) == {11, 13}
    assert sa.sample(g, mask=np.zeros(5, np.int8), rng=0) == 10  # nothing allowed: start, as Gymnasium
    drawn = sa.sample(g, 4000, probability=np.array([0.1, 0, 0, 0.9, 0]), rng=0)
    assert set(np.unique(drawn)) == {10, 13}
    assert abs(np.mean(drawn == 13) - 0.9) < 0.03
    assert isinstance(sa.sample(g, mask=np.ones(5, np.int8), rng=0), np.int64)


def test_multibinary_probability_is_the_chance_of_a_one():
    g = gs.MultiBinary(3)
    drawn = sa.sample(g, 4000, probability=np.array([0.0, 1.0, 0.25]), rng=1)
    assert drawn.dtype == np.int8
    assert (drawn[:, 0] == 0).all() and (drawn[:, 1] == 1).all()
    assert abs(drawn[:, 2].mean() - 0.25) < 0.03


def test_mask_and_probability_together_are_a_value_error_as_in_gymnasium():
    g = gs.Discrete(3)
    with pytest.raises(ValueError):
        g.sample(mask=np.ones(3, np.int8), probability=np.ones(3) / 3)
    with pytest.raises(ValueError, match="not both"):
        sa.sample(g, mask=np.ones(3, np.int8), probability=np.ones(3) / 3)


def test_box_rejects_masks_with_gymnasiums_error_and_a_type_error():
    g = gs.Box(0, 1, (2,))
    with pytest.raises(gymnasium.error.Error):
        sa.sample(g, mask=np.ones(2, np.int8))
    with pytest.raises(TypeError, match="takes no mask"):
        sa.sample(g, probability=np.ones(2))


def test_unsupported_mask_names_no_private_function():
    for bad in ("bad", [1, 0, 1], np.ones(3, dtype=bool)):
        with pytest.raises((TypeError, ValueError)) as info:
            sa.sample(gs.Discrete(3), mask=bad)
        assert "_sample" not in str(info.value) and "mask" in str(info.value)
        assert isinstance(info.value, AssertionError)  # what Gymnasium raises for the same mask


def test_sample_follows_the_spaces_own_seed():
    for g in (
        gs.Discrete(7),
        gs.Box(-1, 1, (3,)),
        gs.MultiDiscrete([3, 4]),
        gs.Text(6),
        gs.Tuple((gs.Discrete(3), gs.MultiBinary(2))),
        gs.Dict(a=gs.Discrete(4)),
    ):
        g.seed(123)
        first = [sa.sample(g) for _ in range(3)] + [sa.sample(g, 4)]
        g.seed(123)
        again = [sa.sample(g) for _ in range(3)] + [sa.sample(g, 4)]
        assert repr(first) == repr(again), g
        g.seed(123)
        masked = sa.sample(g, mask=_full_mask(g)) if not isinstance(g, gs.Box) else None
        g.seed(123)
        assert repr(masked) == repr(sa.sample(g, mask=_full_mask(g)) if not isinstance(g, gs.Box) else None)


def _full_mask(g):
    if isinstance(g, gs.Discrete):
        return np.ones(g.n, np.int8)
    if isinstance(g, gs.MultiDiscrete):
        return tuple(np.ones(n, np.int8) for n in g.nvec)
    if isinstance(g, gs.MultiBinary):
        return np.full(g.shape, 2, np.int8)
    if isinstance(g, gs.Text):
        return (None, None)
    if isinstance(g, gs.Tuple):
        return tuple(_full_mask(s) for s in g.spaces)
    return {k: _full_mask(s) for k, s in g.spaces.items()}


def test_an_explicit_rng_still_wins_over_the_spaces_generator():
    g = gs.Discrete(1000)
    g.seed(0)
    a = sa.sample(g, 5, rng=7)
    g.seed(1)
    assert (sa.sample(g, 5, rng=7) == a).all()


def test_masked_gymnasium_space_accepts_gymnasiums_multibinary_convention():
    g = gs.MultiBinary(3)
    legal = sa.Masked(g, np.array([0, 2, 1], np.int8))
    assert sa.cardinality(legal) == 2
    assert {tuple(int(b) for b in x) for x in legal} == {(0, 0, 1), (0, 1, 1)}
    assert legal <= sa.from_gymnasium(g)
