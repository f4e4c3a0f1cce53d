"""Laws of masked spaces and masked sampling (spacealg.spaces.masked), over generated
spaces and masks (spacealg.strategies.masks)."""

from __future__ import annotations

import itertools
import json
import math
import pickle

import numpy as np
import pytest
from helpers import member_at, same
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg import Masked
from spacealg.spaces.masked import Factors, MaskError, factors
from spacealg.strategies.masks import mask_bases, masked_spaces, masks, probabilities

small = settings(max_examples=25)


def positions(batch, space):
    """The base indices of a batch's members, vectorised through the space's digits."""
    f = factors(space)
    digits = f.digits(batch)
    return np.ravel_multi_index(tuple(np.moveaxis(digits, -1, 0)), f.sizes) if f.sizes else np.zeros(len(digits), int)


def ranks(batch, legal):
    """The positions of a batch of members of a masked space among its elements."""
    legal_positions = np.array([sa.index(x, legal.root) for x in sa.elements(legal)])
    found = positions(batch, legal.root)
    at = np.searchsorted(legal_positions, found)
    assert (legal_positions[np.minimum(at, len(legal_positions) - 1)] == found).all()
    return at


def allowed(space, mask):
    """The allowed set straight from the mask's definition: per form, not through Masked."""
    f = factors(space)
    sizes = f.sizes
    from spacealg.spaces.masked import parse_blocks

    blocks = parse_blocks(mask, f)
    result = []
    for i, x in enumerate(sa.elements(space)):
        digits = np.unravel_index(i, sizes) if sizes else ()
        ok, start = True, 0
        for width, array in blocks:
            if array is not None and not array[tuple(digits[start : start + width])]:
                ok = False
            start += width
        if ok:
            result.append(x)
    return result


@given(st.data())
@settings(max_examples=30)
def test_cardinality_elements_and_membership_follow_the_mask(data):
    space = data.draw(mask_bases())
    mask = data.draw(masks(space))
    legal = Masked(space, mask)
    expected = allowed(space, mask)
    listed = list(sa.elements(legal))
    assert sa.cardinality(legal) == len(expected) == len(listed) == int(legal.joint().sum())
    assert all(same(a, b) for a, b in zip(listed, expected))
    for i, x in enumerate(listed):
        assert sa.contains(x, legal) and sa.contains(x, space)
        assert sa.index(x, legal) == i
        assert same(sa.element(i, legal), x)
    assert legal <= space


@given(masked_spaces(), st.integers(0, 2**16))
def test_every_sample_is_legal(legal, seed):
    if legal.is_empty:
        with pytest.raises(ValueError, match="empty"):
            sa.sample(legal, rng=seed)
        return
    x = sa.sample(legal, rng=seed)
    assert sa.contains(x, legal)
    assert isinstance(x, __import__("typing").get_origin(sa.eltype(legal)) or sa.eltype(legal))
    batch = sa.sample(legal, 7, rng=seed)
    inside = sa.isin(batch, legal)
    assert inside.shape == (7,) and inside.all()
    assert all(sa.contains(member_at(batch, i), legal) for i in range(7))


@given(masked_spaces(), st.integers(0, 2**16))
def test_isin_is_contains_row_by_row(legal, seed):
    batch = sa.sample(legal.root, 12, rng=seed)
    inside = sa.isin(batch, legal)
    assert [bool(v) for v in inside] == [sa.contains(member_at(batch, i), legal) for i in range(12)]


@given(st.data(), st.integers(1, 6), st.integers(0, 2**16))
def test_batched_masks_draw_one_legal_action_per_row(data, n, seed):
    space = data.draw(mask_bases())
    batch = data.draw(masks(space, batch=(n,), density=0.7))
    rows = [_row(batch, i, factors(space)) for i in range(n)]
    if any(Masked(space, r).is_empty for r in rows):
        with pytest.raises(ValueError):
            sa.sample(space, n, mask=batch, rng=seed)
        return
    drawn = sa.sample(space, n, mask=batch, rng=seed)
    for i, row in enumerate(rows):
        assert sa.contains(member_at(drawn, i), Masked(space, row))


def _row(mask, i, node=None):
    """Row ``i`` of a batch of masks (arrays with one more dimension than their factors)."""
    node = factors(node) if node is not None and not isinstance(node, (Factors, tuple, dict)) else node
    if mask is None:
        return None
    if isinstance(node, Factors) and not isinstance(mask, (tuple, dict)):
        return mask[i] if np.ndim(mask) > len(node.sizes) else mask
    structure = node.children if isinstance(node, Factors) else node
    if isinstance(mask, dict):
        return {k: _row(v, i, structure[k]) for k, v in mask.items()}
    return tuple(_row(m, i, c) for m, c in zip(mask, structure))


@given(masked_spaces(nonempty=True))
@small
def test_a_masked_space_is_a_value(legal):
    assert pickle.loads(pickle.dumps(legal)) == legal
    assert hash(pickle.loads(pickle.dumps(legal))) == hash(legal)
    assert sa.from_json(json.dumps(sa.to_json(legal))) == legal
    rebuilt = eval(repr(legal), {**vars(sa), "np": np, "range": range})
    assert rebuilt == legal and repr(rebuilt) == repr(legal)
    assert sa.SpaceStyle(legal) == sa.SpaceStyle(legal.root)
    assert isinstance(sa.SpaceStyle(legal), sa.FiniteSpaceStyle)


@given(st.data())
@small
def test_equal_sets_are_equal_whatever_the_masks_form(data):
    space = data.draw(mask_bases())
    legal = Masked(space, data.draw(masks(space)))
    joint = Masked(space, legal.joint())
    assert joint == legal and hash(joint) == hash(legal)
    assert (legal <= joint) and (joint <= legal)


@given(st.data())
@small
def test_intersection_of_masks_is_the_conjunction(data):
    space = data.draw(mask_bases())
    a, b = Masked(space, data.draw(masks(space))), Masked(space, data.draw(masks(space)))
    both = a & b
    assert both <= a and both <= b
    assert {sa.index(x, space) for x in both} == {sa.index(x, space) for x in a} & {sa.index(x, space) for x in b}


def test_sampling_is_uniform_over_the_legal_set():
    space = sa.product(range(3), sa.Categorical([2, 3]))
    mask = np.zeros((3, 2, 3), dtype=bool)
    mask[0, 1, 2] = mask[2, 0, 0] = mask[2, 1, 1] = mask[1, 1, 0] = mask[0, 0, 1] = True
    legal = Masked(space, mask)
    n = 20_000
    drawn = sa.sample(legal, n, rng=1234)
    counts = np.bincount(ranks(drawn, legal), minlength=5)
    expected = n / 5
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 18.47  # the 0.999 quantile of chi-square with 4 degrees of freedom


def test_batched_sampling_is_uniform_per_row():
    masks_ = np.zeros((2000, 4, 4), dtype=bool)
    masks_[:, 0, 1] = masks_[:, 3, 3] = masks_[:, 2, 0] = True
    drawn = sa.sample(sa.ArraySpace(range(4), 2), mask=masks_, rng=7)
    assert drawn.shape == (2000, 2)
    cells = drawn[:, 0] * 4 + drawn[:, 1]
    counts = np.array([np.sum(cells == c) for c in (1, 8, 15)])
    assert counts.sum() == 2000
    assert float(((counts - 2000 / 3) ** 2 / (2000 / 3)).sum()) < 13.82  # chi-square(2), 0.999


@given(st.data(), st.integers(0, 2**16))
@small
def test_probability_gives_zero_weight_elements_no_draws(data, seed):
    space = data.draw(mask_bases())
    weights = data.draw(probabilities(space))
    try:
        drawn = sa.sample(space, 30, probability=weights, rng=seed)
    except ValueError:
        return  # all weight zero
    support = Masked(space, _positive(weights))
    assert sa.isin(drawn, support).all()


def _positive(weights):
    if isinstance(weights, tuple):
        return tuple(_positive(w) for w in weights)
    if isinstance(weights, dict):
        return {k: _positive(v) for k, v in weights.items()}
    return np.asarray(weights) > 0


def test_probability_frequencies_follow_the_weights():
    weights = np.array([[0.0, 1.0], [3.0, 0.0], [4.0, 2.0]])  # joint, over (3, 2)
    space = sa.ArraySpace(range(3), 1) * range(2)
    space = sa.product(range(3), range(2))
    drawn = sa.sample(space, 30_000, probability=weights, rng=5)
    cells = drawn[0] * 2 + drawn[1]
    freq = np.bincount(cells, minlength=6) / 30_000
    assert np.allclose(freq, weights.ravel() / weights.sum(), atol=0.012)
    masked = Masked(space, weights > 1)  # the mask restricts, the weights weigh what is left
    drawn = sa.sample(masked, 30_000, probability=weights, rng=5)
    cells = drawn[0] * 2 + drawn[1]
    assert np.allclose(np.bincount(cells, minlength=6) / 30_000, [0, 0, 3 / 9, 0, 4 / 9, 2 / 9], atol=0.012)


def test_board_game_joint_mask():
    board = sa.Categorical([15, 15])
    occupied = np.zeros((15, 15), dtype=bool)
    occupied[7, 7] = occupied[7, 8] = True
    legal = Masked(board, ~occupied)
    assert sa.cardinality(legal) == 223
    assert np.array([7, 7]) not in legal and np.array([0, 0]) in legal
    moves = sa.sample(board, 64, mask=~occupied, rng=0)
    assert not ((moves[:, 0] == 7) & (moves[:, 1] >= 7) & (moves[:, 1] <= 8)).any()
    assert legal <= board and not board <= legal


def test_per_factor_and_joint_masks_agree():
    md = sa.Categorical([3, 4])
    rows, cols = np.array([1, 0, 1], dtype=np.int8), np.array([0, 1, 1, 0], dtype=np.int8)
    assert Masked(md, (rows, cols)) == Masked(md, np.outer(rows, cols).astype(bool))
    assert sa.cardinality(Masked(md, (rows, cols))) == 4


def test_masks_per_component_of_products():
    space = sa.DictProduct(piece=("pawn", "rook"), to=sa.ArraySpace(range(8), 2))
    mask = {"piece": np.array([True, False]), "to": None}
    legal = Masked(space, mask)
    assert sa.cardinality(legal) == 64
    assert all(x["piece"] == "pawn" for x in itertools.islice(legal, 10))
    assert {"piece": "rook", "to": np.array([0, 0])} not in legal


def test_empty_legal_set_is_a_clear_error_when_sampled():
    legal = Masked(range(3), np.zeros(3, dtype=bool))
    assert sa.cardinality(legal) == 0 and list(legal) == []
    with pytest.raises(ValueError, match="empty"):
        sa.sample(legal)
    with pytest.raises(ValueError, match=r"row \(1,\)"):
        sa.sample(range(3), mask=np.array([[1, 0, 0], [0, 0, 0]], dtype=bool))


@pytest.mark.parametrize(
    ("space", "mask", "error"),
    [
        (range(3), np.ones(4, dtype=bool), MaskError),
        (range(3), np.array([0, 2, 1]), MaskError),
        (range(3), np.array([0.5, 1, 1]), TypeError),
        (range(3), "abc", TypeError),
        (sa.Categorical([2, 3]), (np.ones(2, dtype=bool),), MaskError),
        (sa.Categorical([2, 3]), np.ones((3, 2), dtype=bool), ValueError),
        (sa.product(a=range(2)), {"b": None}, ValueError),
        (sa.product(a=range(2)), (None,), TypeError),
    ],
)
def test_malformed_masks_are_named_errors(space, mask, error):
    with pytest.raises(error, match="mask"):
        Masked(space, mask)
    with pytest.raises(error, match="mask"):
        sa.sample(space, mask=mask)


def test_masks_apply_only_to_finite_spaces():
    with pytest.raises(TypeError, match="finite"):
        Masked(sa.Box(0.0, 1.0, (2,)), np.ones(2, dtype=bool))
    with pytest.raises(TypeError, match="finite"):
        sa.sample(sa.Interval(0, 1), mask=np.ones(2, dtype=bool))


def test_batch_must_match_size():
    with pytest.raises(ValueError, match="size"):
        sa.sample(range(3), 5, mask=np.ones((4, 3), dtype=bool))
    assert sa.sample(range(3), mask=np.ones((4, 3), dtype=bool), rng=0).shape == (4,)


def test_space_and_mask_operator():
    board = sa.ArraySpace(range(3), 2)
    mask = np.eye(3, dtype=bool)
    assert board & mask == Masked(board, mask)
    assert sa.cardinality(board & mask) == 3


def test_nested_masked_is_the_intersection():
    inner = Masked(range(5), np.array([1, 1, 1, 0, 0], dtype=bool))
    outer = Masked(inner, np.array([0, 1, 1, 1, 0], dtype=bool))
    assert list(outer) == [1, 2]
    assert outer == Masked(range(5), np.array([0, 1, 1, 0, 0], dtype=bool))
    assert outer <= inner and not inner <= outer


def test_clamp_and_bounds():
    legal = Masked(range(5), np.array([0, 1, 0, 1, 0], dtype=bool))
    assert sa.clamp(3, legal) == 3
    with pytest.raises(TypeError, match="nearest"):
        sa.clamp(2, legal)
    low, high = sa.bounds(legal)
    assert low <= min(legal) and max(legal) <= high


def test_masked_space_as_a_subspace_and_superspace():
    legal = Masked(range(5), np.array([0, 1, 1, 0, 0], dtype=bool))
    assert range(1, 3) <= legal if isinstance(range(1, 3), sa.Space) else sa.issubspace(range(1, 3), legal)
    assert not sa.issubspace(range(0, 3), legal)
    assert sa.issubspace(legal, range(1, 3))
    assert sa.issubspace(legal, (1, 2, 9))
    assert math.isclose(sa.cardinality(legal), 2)


def test_docs_masks_examples_run():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "masks.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 5
    for number, block in enumerate(blocks):
        if "pettingzoo" in block and not _importable("pettingzoo", "pygame"):  # classic games import pygame
            continue
        exec(compile(block, f"docs/masks.md example {number}", "exec"), {"__name__": "docs_example"})


def _importable(*names):
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in names)


def _chi_square_ok(counts, expected, p=1e-5):
    """Whether counts fit the expected frequencies (chi-square test at level p)."""
    from math import erfc, sqrt

    keep = expected > 0
    assert counts[~keep].sum() == 0  # nothing drawn where nothing is expected
    k = int(keep.sum())
    if k < 2:
        return True
    chi2 = float((((counts - expected) ** 2)[keep] / expected[keep]).sum())
    # Wilson-Hilferty: chi-square(k - 1) as a normal
    df = k - 1
    z = ((chi2 / df) ** (1 / 3) - (1 - 2 / (9 * df))) / sqrt(2 / (9 * df))
    return 0.5 * erfc(z / sqrt(2)) > p


@given(masked_spaces(nonempty=True).filter(lambda m: 2 <= sa.cardinality(m) <= 24), st.integers(0, 2**16))
@settings(max_examples=12)
def test_sampling_is_uniform_over_generated_legal_sets(legal, seed):
    n = 300 * sa.cardinality(legal)
    drawn = sa.sample(legal, n, rng=seed)
    counts = np.bincount(ranks(drawn, legal), minlength=sa.cardinality(legal)).astype(float)
    assert _chi_square_ok(counts, np.full(len(counts), n / len(counts)))


@given(st.data(), st.integers(0, 2**16))
@settings(max_examples=12)
def test_sampling_follows_generated_probabilities(data, seed):
    from spacealg.spaces.masked import coarsen, parse_blocks

    space = data.draw(mask_bases().filter(lambda s: 2 <= sa.cardinality(s) <= 24))
    weights = data.draw(probabilities(space))
    f = factors(space)
    blocks = parse_blocks(weights, f, "probability")
    joint = coarsen(blocks, [len(f.sizes)], f.sizes)[0][1]
    joint = np.ones(f.sizes) if joint is None else np.asarray(joint, dtype=float)
    if not joint.sum():
        with pytest.raises(ValueError):
            sa.sample(space, probability=weights, rng=seed)
        return
    n = 300 * sa.cardinality(space)
    drawn = sa.sample(space, n, probability=weights, rng=seed)
    counts = np.bincount(positions(drawn, space), minlength=joint.size)
    assert _chi_square_ok(counts.astype(float), joint.reshape(-1) / joint.sum() * n)


@given(st.data())
@small
def test_members_of_a_masked_space_are_legal(data):
    from spacealg.strategies import members

    legal = data.draw(masked_spaces(nonempty=True))
    assert sa.contains(data.draw(members(legal)), legal)


def test_members_of_a_masked_space_shrink_toward_the_first_legal_element():
    from hypothesis import find

    from spacealg.strategies import members

    legal = Masked(sa.Categorical([3, 3]), ~np.eye(3, dtype=bool))
    assert same(find(members(legal), lambda x: True), np.array([0, 1]))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_factors_are_decided_once_per_space_and_equal_a_fresh_build(data: st.DataObject) -> None:
    """``factors`` is kept as a variant of the space's plan: the same object on every call,
    with the sizes and digits of a fresh build (``_factors``)."""
    from spacealg.spaces.mask_factors import _factors

    base = data.draw(mask_bases())
    kept = factors(base)
    assert factors(base) is kept
    fresh = _factors(base)
    assert tuple(kept.sizes) == tuple(fresh.sizes)
    batch = sa.sample(base, 4, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(kept.digits(batch), fresh.digits(batch))
