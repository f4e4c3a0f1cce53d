"""Laws of the algebra: product associativity, styles, inclusion, intersection, operators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.strategies import spaces
from spacealg.strategies.spaces import arrays, boxes, finite_sets, intervals, ranges

F, C, H, U = sa.FiniteSpaceStyle, sa.ContinuousSpaceStyle, sa.HybridSpaceStyle, sa.UnknownSpaceStyle


@given(spaces(max_depth=1), spaces(max_depth=1), spaces(max_depth=1))
def test_product_is_associative(a, b, c):
    left = sa.product(sa.product(a, b), c)
    right = sa.product(a, sa.product(b, c))
    flat = sa.product(a, b, c)
    assert left == right == flat


@given(spaces(max_depth=1), spaces(max_depth=1))
def test_style_of_a_product_combines_the_styles(a, b):
    combined = sa.combine_styles([sa.SpaceStyle(a), sa.SpaceStyle(b)])
    assert sa.SpaceStyle(sa.TupleProduct(a, b)) == combined


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (F(()), F(()), F((2,))),
        (C(()), C((3,)), C((4,))),
        (F((2,)), C(()), H((), (2,))),  # a part one component makes keeps its shape (the seed's table)
        (H((1,), (1,)), F(()), H((1,), (2,))),
        (H((1,), (1,)), C((2, 2)), H((5,), (1,))),
        (C((2,)), F(()), H((2,), ())),  # CommonRLSpaces.jl: HybridSpaceStyle{(2,),()}
        (U(), F(()), U()),
        (C(()), U(), U()),
    ],
)
def test_style_promotion_table(left, right, expected):
    assert sa.combine_styles([left, right]) == expected


def test_styles_are_hashable_values():
    assert len({F((2,)), F((2,)), C((2,)), H((1,), (1,)), U(), U()}) == 4


@given(st.one_of(intervals(), ranges(), finite_sets(), boxes()))
def test_issubspace_is_reflexive(a):
    assert sa.issubspace(a, a)


@st.composite
def _box_and_array(draw):
    array = draw(arrays())
    low, high = sorted((draw(st.integers(-5, 5)), draw(st.integers(-5, 5))))
    dtype = draw(st.sampled_from([np.int64, np.float64]))
    box = sa.Box(low, high, shape=array.dims, dtype=dtype)
    return (box, array) if draw(st.booleans()) else (array, box)


def _pairs():
    return st.one_of(
        _box_and_array(),
        st.tuples(intervals(), intervals()),
        st.tuples(ranges(), ranges()),
        st.tuples(ranges(), intervals()),
        st.tuples(finite_sets(), finite_sets()),
        st.tuples(finite_sets(), intervals()),
        st.tuples(boxes(), boxes()),
    )


@given(_pairs(), st.integers(0, 2**32))
def test_subspace_agrees_with_membership_of_samples(pair, seed):
    a, b = pair
    if sa.issubspace(a, b):
        assert sa.isin(sa.sample(a, 50, rng=seed), b).all()


@given(_pairs(), st.integers(0, 2**32))
def test_intersection_is_the_members_of_both(pair, seed):
    a, b = pair
    both = sa.intersect(a, b)
    assert sa.issubspace(both, a) or sa.cardinality(both) == 0
    for x in _probe(a, b, seed):
        assert sa.contains(x, both) == (sa.contains(x, a) and sa.contains(x, b))


def _probe(a, b, seed):
    """Values that are members of a or of b (the interesting ones for intersections)."""
    values = []
    for space in (a, b):
        values += [sa.sample(space, rng=seed + i) for i in range(10)]
        if sa.cardinality(space) < 100:
            values += list(sa.elements(space))
    return values


def test_intersections_with_closed_forms():
    assert sa.Interval(0, 2) & sa.Interval(1, 3, closed="neither") == sa.Interval(1, 2, closed="right")
    assert sa.Interval(0, 1) & sa.Interval(2, 3) == sa.FiniteSet()
    assert sa.intersect(range(0, 10), range(5, 20)) == range(5, 10)
    assert sa.FiniteSet("a", "b", "c") & sa.FiniteSet("c", "a") == sa.FiniteSet("a", "c")
    box = sa.Box(0, 2, shape=(2,)) & sa.Box(np.array([1.0, -1.0]), np.array([3.0, 1.0]))
    assert box == sa.Box(np.array([1.0, 0.0]), np.array([2.0, 1.0]))
    assert sa.ArraySpace(range(5), 3) & sa.ArraySpace(range(3, 9), 3) == sa.ArraySpace(range(3, 5), 3)
    assert sa.intersect(range(0, 10), sa.Interval(2.5, 5, closed="left")) == range(3, 5)


def test_intersection_without_closed_form_is_a_type_error():
    with pytest.raises(TypeError, match="intersect"):
        sa.intersect(sa.OneOf(range(2)), sa.Interval(0, 1))
    with pytest.raises(TypeError, match="per-entry bounds"):
        sa.intersect(sa.Box(np.array([0, 1]), np.array([2, 3]), dtype=np.int64), sa.ArraySpace(range(3), 2))


def test_operators():
    a, b = sa.Interval(0, 1), sa.FiniteSet("x", "y")
    assert a * b == sa.product(a, b)
    assert b ** 3 == sa.ArraySpace(b, 3)
    assert a + b == sa.OneOf(a, b)
    assert (a <= sa.Interval(-1, 1)) and not (sa.Interval(-1, 1) <= a)
    assert sa.Interval(-1, 1) >= a and a < sa.Interval(-1, 1) and not a < a
    assert 0.5 in a and "x" in b and "z" not in b
    assert len(b) == 2 and list(b) == ["x", "y"]
    assert (b & sa.FiniteSet("y")) == sa.FiniteSet("y")


def test_products_of_intervals_and_boxes_combine_into_one_box():
    box = sa.product(sa.Interval(-1, 1), sa.Box(0, 1, shape=(2,)), sa.Interval(5, 6))
    assert box == sa.Box(np.array([-1.0, 0, 0, 5]), np.array([1.0, 1, 1, 6]), dtype=np.float64)
    assert isinstance(sa.product(sa.Interval(0, 1), range(3)), sa.TupleProduct)
    assert sa.product(a=range(2)) == sa.DictProduct(a=range(2))


def test_product_keeps_open_intervals_and_integer_boxes_apart():
    p = sa.product(sa.Interval(0, 1, closed="left"), sa.Interval(0, 1))
    assert isinstance(p, sa.TupleProduct) and len(p.spaces) == 2


def test_explicit_products_keep_nesting():
    inner = sa.TupleProduct(range(2), range(3))
    assert sa.TupleProduct(inner, range(4)).spaces[0] == inner
    assert len(sa.product(inner, range(4)).spaces) == 3


@given(st.lists(spaces(max_depth=1), min_size=2, max_size=3))
def test_cardinality_of_product_matches_factors(factors):
    counts = [sa.cardinality(f) for f in factors]
    assume(not (0 in counts and math.inf in counts))
    assert sa.cardinality(sa.product(*factors)) == math.prod(counts)


@given(ranges().filter(lambda r: r.step == 1), st.integers(1, 3))
def test_set_equality_across_representations_is_mutual_inclusion(r, n):
    first, last = sa.bounds(r)
    array = sa.ArraySpace(r, n)
    box = sa.Box(first, last, shape=(n,), dtype=np.int64)
    assert array <= box <= array
    assert array != box  # different canonical forms: == compares representations
    wider = sa.Box(first, last + 1, shape=(n,), dtype=np.int64)
    assert array <= wider and not wider <= array


def test_integer_box_intersections_are_exact():
    unbounded = sa.Box(0, np.inf, shape=(), dtype=np.float32) & sa.Box(0, np.inf, shape=(), dtype=np.int64)
    assert unbounded == sa.Box(0, np.iinfo(np.int64).max, shape=(), dtype=np.int64)
    assert sa.Box(0.5, 3.5, shape=(2,)) & sa.Box(-5, 5, shape=(2,), dtype=np.int8) == sa.Box(
        1, 3, shape=(2,), dtype=np.int8
    )
    assert sa.Box(0.5, 0.7, shape=(2,)) & sa.Box(-5, 5, shape=(2,), dtype=np.int8) == sa.FiniteSet()


def test_unbounded_bases_are_not_inside_integer_boxes():
    half_line = sa.ArraySpace(sa.Interval(0, np.inf, closed="left"), 1)
    assert not half_line <= sa.Box(0, 5, shape=(1,), dtype=np.int64)


@given(spaces())
def test_as_space_is_idempotent_and_keeps_membership(obj):
    space = sa.as_space(obj)
    assert sa.as_space(space) is space
    for seed in range(3):
        x = sa.sample(obj, rng=seed)
        assert sa.contains(x, obj) == sa.contains(x, space)


@given(st.tuples(intervals(), intervals(), intervals()))
def test_issubspace_is_transitive(triple):
    a, b, c = triple
    if sa.issubspace(a, b) and sa.issubspace(b, c):
        assert sa.issubspace(a, c)


@given(_pairs())
def test_intersection_is_commutative_as_a_set(pair):
    a, b = pair
    ab, ba = sa.intersect(a, b), sa.intersect(b, a)
    empty = [sa.cardinality(s) == 0 for s in (ab, ba)]
    assert empty[0] == empty[1]
    if not empty[0]:
        assert sa.issubspace(ab, ba) and sa.issubspace(ba, ab)
