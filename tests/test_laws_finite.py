"""Laws of cardinality, elements, index and element; the style follows the set."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import same
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.strategies import finite_spaces, spaces


@given(finite_spaces())
def test_elements_index_element_form_a_bijection(space):
    listed = list(sa.elements(space))
    assert len(listed) == sa.cardinality(space)
    for i, x in enumerate(listed):
        assert sa.contains(x, space)
        assert sa.index(x, space) == i
        assert same(sa.element(i, space), x)


@given(finite_spaces(), st.integers(0, 2**32))
def test_index_of_a_sample_is_in_range(space, seed):
    x = sa.sample(space, rng=seed)
    i = sa.index(x, space)
    assert 0 <= i < sa.cardinality(space)
    assert same(sa.element(i, space), x)


@given(finite_spaces(max_cardinality=30), finite_spaces(max_cardinality=30))
def test_cardinality_of_a_product_is_the_product(a, b):
    assert sa.cardinality(sa.product(a, b)) == sa.cardinality(a) * sa.cardinality(b)
    assert sa.cardinality(sa.TupleProduct(a, b)) == sa.cardinality(a) * sa.cardinality(b)
    assert sa.cardinality(sa.DictProduct(x=a, y=b)) == sa.cardinality(a) * sa.cardinality(b)


@given(finite_spaces(max_cardinality=30), finite_spaces(max_cardinality=30))
def test_cardinality_of_a_sum_is_the_sum(a, b):
    assert sa.cardinality(sa.OneOf(a, b)) == sa.cardinality(a) + sa.cardinality(b)


@given(finite_spaces(max_cardinality=8).filter(lambda s: "OneOf" not in repr(s)), st.integers(1, 2))
def test_cardinality_of_a_power(a, n):
    assert sa.cardinality(sa.ArraySpace(a, n)) == sa.cardinality(a) ** n


@given(spaces())
def test_finite_style_iff_finite_cardinality(space):
    finite = isinstance(sa.SpaceStyle(space), sa.FiniteSpaceStyle)
    assert finite == (sa.cardinality(space) < math.inf)


@given(finite_spaces())
def test_element_rejects_positions_out_of_range(space):
    n = sa.cardinality(space)
    for bad in (-1, n, 1.5, True):
        with pytest.raises(ValueError, match="element"):
            sa.element(bad, space)


@given(finite_spaces(), st.integers(0, 2**32))
def test_len_and_iter_on_spacealg_classes(space, seed):
    space = sa.as_space(space)
    if isinstance(space, sa.Space):
        assert len(space) == sa.cardinality(space)
        assert len(list(space)) == len(space)


def test_index_of_a_non_member_is_a_value_error():
    with pytest.raises(ValueError, match="not a member"):
        sa.index("cow", sa.FiniteSet("cat", "dog"))
    with pytest.raises(ValueError, match="not a member"):
        sa.index(np.array([3, 9]), sa.ArraySpace(range(5), 2))


def test_infinite_spaces_are_not_enumerable():
    for space in (sa.Interval(0, 1), sa.Box(0, 1, shape=(2,))):
        with pytest.raises(TypeError, match="not finite"):
            sa.elements(space)
        with pytest.raises(TypeError, match="infinite"):
            len(space)


def test_huge_ranges_have_exact_cardinality():
    assert sa.cardinality(np.int64) == 2**64
    assert sa.contains(2**63 - 1, np.int64) and not sa.contains(2**63, np.int64)
    x = sa.sample(np.uint64, 1000, rng=0)
    assert x.dtype == np.uint64 and sa.isin(x, np.uint64).all()


def test_cardinality_of_infinite_and_huge_parts_is_infinite():
    huge = sa.Box(0, np.inf, shape=(3,), dtype=np.int64)  # (2**63)**3 elements
    assert sa.cardinality(sa.TupleProduct(sa.Interval(0, 1), huge)) == math.inf
    assert sa.cardinality(sa.OneOf(sa.Interval(0, 1), huge)) == math.inf
    assert sa.cardinality(sa.TupleProduct(huge, sa.FiniteSet())) == 0
