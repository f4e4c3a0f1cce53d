"""Laws of sample and isin: samples are members, batches are stacked members, seeds determine."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import same
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.strategies import spaces
from spacealg.strategies.spaces import COMPOSITE_KINDS, EXTRA_COMPOSITE_KINDS, LEAF_KINDS

sizes = st.one_of(st.integers(0, 4), st.tuples(st.integers(1, 3), st.integers(0, 2)))


def _draws(space):
    """Whether ``space`` has members to draw (an empty union or difference, or one too thin to
    draw from, raises ValueError saying so: tests/test_union.py)."""
    try:
        sa.sample(space, rng=0)
    except ValueError:
        return False
    return True


#: the laws of sample and isin hold for every kind: Dynamic, Union and Difference too
every_kind = spaces(leaves=(*LEAF_KINDS, "dynamic"), composites=(*COMPOSITE_KINDS, *EXTRA_COMPOSITE_KINDS)).filter(
    _draws)


@given(every_kind, st.integers(0, 2**32))
def test_sample_is_member(space, seed):
    assert sa.contains(sa.sample(space, rng=seed), space)


@given(every_kind, sizes, st.integers(0, 2**32))
def test_batched_sample_isin_all_true(space, size, seed):
    batch = sa.sample(space, size, rng=seed)
    inside = sa.isin(batch, space)
    shape = (size,) if isinstance(size, int) else size
    assert inside.shape == shape
    assert inside.all()


@given(every_kind, sizes, st.integers(0, 2**32))
def test_isin_agrees_with_contains_elementwise(space, size, seed):
    batch = sa.sample(space, size, rng=seed)
    inside = sa.isin(batch, space)
    shape = (size,) if isinstance(size, int) else size
    for position in np.ndindex(shape):
        assert inside[position] == sa.contains(_item(batch, position), space)


def _item(batch, position):
    if isinstance(batch, tuple):
        return tuple(_item(b, position) for b in batch)
    if isinstance(batch, dict):
        return {k: _item(b, position) for k, b in batch.items()}
    return batch[position]


@given(every_kind, st.integers(0, 2**32), st.one_of(st.none(), sizes))
def test_seeded_sampling_is_deterministic(space, seed, size):
    assert same(sa.sample(space, size, rng=seed), sa.sample(space, size, rng=seed))


@given(every_kind, st.integers(0, 2**32))
def test_generator_rng_advances(space, seed):
    generator = np.random.default_rng(seed)
    first = sa.sample(space, 5, rng=generator)
    replay = np.random.default_rng(seed)
    assert same(first, sa.sample(space, 5, rng=replay))


@given(every_kind, st.integers(0, 2**32))
def test_sample_is_instance_of_eltype(space, seed):
    t = sa.eltype(space)
    origin = getattr(t, "__origin__", None) or t
    assert isinstance(sa.sample(space, rng=seed), origin)


@given(spaces(), st.integers(0, 2**32))
def test_elsize_is_shape_of_array_members(space, seed):
    _check_elsize(sa.sample(space, rng=seed), sa.as_space(space))


def _check_elsize(x, space):
    if isinstance(space, sa.OneOf):  # members are tagged pairs: no elsize of their own
        with pytest.raises(TypeError):
            sa.elsize(space)
        _check_elsize(x[1], space.spaces[x[0]])
    elif isinstance(space, sa.TupleProduct):
        for xi, si in zip(x, space.spaces):
            _check_elsize(xi, si)
    elif isinstance(space, sa.DictProduct):
        for k, si in space.spaces.items():
            _check_elsize(x[k], si)
    else:
        assert np.shape(x) == sa.elsize(space)


def test_sampling_an_empty_space_is_a_value_error():
    for empty in (sa.FiniteSet(), range(0)):
        with pytest.raises(ValueError, match="empty"):
            sa.sample(empty)


@pytest.mark.parametrize("size", [-1, (2, -3), 1.5, "3"])
def test_invalid_size_is_rejected(size):
    with pytest.raises((ValueError, TypeError), match="size"):
        sa.sample(sa.Interval(0, 1), size)


@pytest.mark.parametrize("rng", [-1, 1.5, "seed", object()])
def test_invalid_rng_is_rejected(rng):
    with pytest.raises((ValueError, TypeError), match="rng"):
        sa.sample(sa.Interval(0, 1), rng=rng)


def _accepted_rngs() -> list[tuple[object, str]]:
    """Every form an ``rng`` may take, with the words the rejection message names it by."""
    forms: list[tuple[object, str]] = [
        (None, "None"),
        (3, "a non-negative int seed"),
        (np.uint8(3), "a non-negative int seed"),
        (np.random.default_rng(3), "a numpy.random.Generator"),
        (np.random.SeedSequence(3), "a numpy.random.SeedSequence"),
    ]
    try:
        import torch
    except ImportError:
        pass
    else:
        forms.append((torch.Generator().manual_seed(3), "a torch.Generator"))
    try:
        import jax
    except ImportError:
        pass
    else:
        forms += [(jax.random.key(3), "a JAX PRNG key"), (jax.random.PRNGKey(3), "a JAX PRNG key")]
    return forms


def test_the_rng_message_names_every_accepted_form():
    """Each accepted form draws a member; the message of a rejected ``rng`` names each one,
    and no form it names is one that is rejected."""
    space = sa.Interval(0, 1)
    with pytest.raises(TypeError) as rejected:
        sa.sample(space, rng=np.random.RandomState(3))  # NumPy's legacy generator is not accepted
    message = str(rejected.value)
    for rng, words in _accepted_rngs():
        assert sa.contains(float(sa.sample(space, rng=rng)), space), words
        assert words in message, f"the message does not name {words!r}: {message}"
    from spacealg.core.rng import _FORMS

    named = set(_FORMS.values())
    for words in named:
        assert any(accepted.startswith(words.split(" (")[0]) for _, accepted in _accepted_rngs()), words


# -- distributions (the documented sampling rules) ------------------------------------

N = 40_000


def test_bounded_interval_is_uniform():
    x = sa.sample(sa.Interval(2, 6), N, rng=1)
    assert abs(x.mean() - 4) < 0.05
    assert abs(x.var() - 16 / 12) < 0.05
    counts = np.histogram(x, bins=8, range=(2, 6))[0]
    assert counts.min() > 0.9 * N / 8


def test_unbounded_interval_is_standard_normal():
    x = sa.sample(sa.REALS, N, rng=2)
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03


def test_half_bounded_intervals_are_shifted_exponentials():
    below = sa.sample(sa.Interval(3, math.inf), N, rng=3)
    assert below.min() > 3 and abs((below - 3).mean() - 1) < 0.03
    above = sa.sample(sa.Interval(-math.inf, -1, closed="left"), N, rng=4)
    assert above.max() < -1 and abs((-1 - above).mean() - 1) < 0.03


@pytest.mark.parametrize("space", [sa.FiniteSet("a", "b", "c", "d"), range(-3, 9, 3), sa.BOOL])
def test_finite_sets_are_uniform(space):
    draws = sa.sample(space, N, rng=5)
    values, counts = np.unique(draws, return_counts=True)
    assert len(values) == sa.cardinality(space)
    assert counts.min() > 0.9 * N / len(values)


def test_integer_box_is_uniform_over_its_integers():
    box = sa.Box(0, 4, shape=(2,), dtype=np.int16)
    draws = sa.sample(box, N, rng=6)
    assert draws.dtype == np.int16
    counts = np.bincount(draws.ravel(), minlength=5)
    assert counts.min() > 0.9 * 2 * N / 5


def test_box_follows_gymnasiums_rule_per_entry():
    box = sa.Box(np.array([0.0, 0.0, -np.inf, -np.inf]), np.array([1.0, np.inf, 0.0, np.inf]), dtype=np.float64)
    draws = sa.sample(box, N, rng=7)
    assert abs(draws[:, 0].mean() - 0.5) < 0.01
    assert abs(draws[:, 1].mean() - 1) < 0.03 and draws[:, 1].min() >= 0
    assert abs(draws[:, 2].mean() + 1) < 0.03 and draws[:, 2].max() <= 0
    assert abs(draws[:, 3].mean()) < 0.03 and abs(draws[:, 3].std() - 1) < 0.03


def test_open_ends_are_never_drawn():
    tiny = sa.Interval(0, 5e-324, closed="right")  # (0, 5e-324]: a single float
    assert set(sa.sample(tiny, 100, rng=8).tolist()) == {5e-324}


def test_points_with_signed_zero_ends_sample():
    assert sa.sample(sa.Interval(0.0, -0.0)) == 0.0
    box = sa.Box(np.array([0.0, 1.0]), np.array([-0.0, 2.0]))
    assert sa.isin(sa.sample(box, 10, rng=0), box).all()


@given(spaces(flavour="any"), st.integers(0, 2**32))
def test_samples_of_any_flavour_are_members(space, seed):
    assert sa.contains(sa.sample(space, rng=seed), space)
    assert sa.isin(sa.sample(space, 3, rng=seed), space).all()


def test_unknown_flavour_is_a_value_error():
    with pytest.raises(ValueError, match="flavour"):
        spaces(flavour="torch")


@given(
    st.lists(st.integers(0, 3), min_size=0, max_size=2).map(tuple),
    st.lists(st.sampled_from([1, 2, 8, 16, 24, 3]), min_size=1, max_size=2).map(tuple),
    st.integers(0, 2**32),
)
def test_all_trailing_equals_numpys_all(lead, element, seed):
    from spacealg.spaces._batch import all_trailing

    inside = np.random.default_rng(seed).random(lead + element) < 0.97
    axes = tuple(range(len(lead), len(lead) + len(element)))
    assert np.array_equal(all_trailing(inside, len(element)), inside.all(axis=axes))
    assert np.array_equal(all_trailing(inside[..., ::-1], len(element)), inside[..., ::-1].all(axis=axes))


def test_zero_dimensional_integer_boxes_sample_arrays():
    for box in (sa.Box(0, np.inf, shape=(), dtype=np.int8), sa.Box(0, 5, shape=(), dtype=np.int8)):
        x = sa.sample(box, rng=0)
        assert isinstance(x, np.ndarray) and x.shape == () and x in box


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), order=st.lists(st.booleans(), min_size=1, max_size=8))
def test_interleaved_generators_each_draw_their_own_stream(seed: int, order: list[bool]) -> None:
    """NumPy draws keep the last generator's adapter: draws interleaved from two generators
    equal each generator's draws alone (the kept adapter never draws from the other one)."""
    box = sa.Box(-1.0, 1.0, (4,), dtype=np.float32)
    a, b = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    drawn = {True: [], False: []}
    for first in order:
        drawn[first].append(sa.sample(box, rng=a if first else b))
    alone_a, alone_b = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    for first, rows in drawn.items():
        generator = alone_a if first else alone_b
        for row in rows:
            np.testing.assert_array_equal(row, sa.sample(box, rng=generator))


@given(st.data())
def test_isin_of_a_list_of_tagged_pairs_is_contains_of_each(data):
    """A OneOf's batch may be a plain list of (index, value) pairs (equal-length tuples too,
    which NumPy would stack into a 2-D array): ``isin`` is ``contains`` of each entry."""
    from spacealg.strategies import members

    space = sa.OneOf(*data.draw(st.lists(spaces(max_depth=1), min_size=1, max_size=3)))
    other = data.draw(spaces(max_depth=1))
    entries = data.draw(st.lists(st.one_of(members(space), st.tuples(st.integers(0, 3), members(other))), max_size=4))
    inside = sa.isin(entries, space)
    assert inside.shape == (len(entries),)
    assert inside.tolist() == [sa.contains(x, space) for x in entries]
