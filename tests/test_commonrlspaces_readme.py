"""CommonRLSpaces.jl's README (shared/seeds) as tests: its examples and its table, and the
things the Julia package gets wrong or only planned, working here."""

from __future__ import annotations

import numpy as np
import pytest

import spacealg as sa
from spacealg import ContinuousSpaceStyle as Continuous
from spacealg import FiniteSpaceStyle as Finite
from spacealg import HybridSpaceStyle as Hybrid


@pytest.mark.parametrize(
    ("space", "style"),
    [
        # Enumerable discrete spaces
        (("cat", "dog"), Finite(())),
        (range(0, 2), Finite(())),
        (["a", "b", "c"], Finite(())),
        # One dimensional continuous spaces
        (sa.Interval(-1.2, 3.3), Continuous(())),
        (sa.Interval(1.0, 2.0), Continuous(())),
        # Multi-dimensional discrete
        (sa.ArraySpace(("cat", "dog"), 3, 4), Finite((3, 4))),
        (sa.ArraySpace(range(0, 2), 3, 4), Finite((3, 4))),
        (sa.ArraySpace(range(1, 3), 3, 4), Finite((3, 4))),
        (sa.ArraySpace(bool, 3, 4), Finite((3, 4))),
        # Multi-dimensional variable discrete
        (sa.product(("cat", "dog"), ("litchi", "longan", "mango")), Finite((2,))),
        (sa.product(range(-1, 2), (False, True)), Finite((2,))),
        # Multi-dimensional continuous
        (sa.Box(np.array([-1.0, -2.0]), np.array([2.0, 4.0])), Continuous((2,))),
        (sa.product(sa.Interval(-1.2, 3.3), sa.Interval(-4.6, 5.0)), Continuous((2,))),
        (sa.ArraySpace(sa.Interval(-1.2, 3.3), 3, 4), Continuous((3, 4))),
        (sa.ArraySpace(np.float32, 3, 4), Continuous((3, 4))),
        # Multi-dimensional hybrid: planned in Julia, here
        # as the seed prints them: HybridSpaceStyle{(2,),()}
        (sa.product(sa.Interval(-1.2, 3.3), sa.Interval(-4.6, 5.0), ("cat", "dog")), Hybrid((2,), ())),
        (sa.product(sa.Box(np.array([-1.0, -2.0]), np.array([2.0, 4.0])), [1, 2, 3]), Hybrid((2,), ())),
    ],
)
def test_the_style_table(space, style):
    assert sa.SpaceStyle(space) == style
    x = sa.sample(space, rng=0)
    assert sa.contains(x, space)


def test_readme_example_tuple_of_symbols():
    s = ("litchi", "longan", "mango")
    assert sa.sample(s) in s
    assert sa.cardinality(s) == 3
    assert len(sa.as_space(s)) == 3


def test_readme_example_array_space():
    s = sa.ArraySpace(range(1, 6), 2, 3)
    x = sa.sample(s)
    assert x.shape == (2, 3) and x in s
    assert sa.SpaceStyle(s) == Finite((2, 3))
    assert sa.elsize(s) == (2, 3)


def test_readme_example_product_of_intervals():
    s = sa.product(sa.Interval(-1, 1), sa.Interval(0, 1))
    assert isinstance(s, sa.Box)
    assert sa.sample(s) in s
    assert sa.SpaceStyle(s) == Continuous((2,))
    assert sa.elsize(s) == (2,)
    low, high = sa.bounds(s)
    assert np.array_equal(low, [-1.0, 0.0]) and np.array_equal(high, [1.0, 1.0])
    assert np.array_equal(sa.clamp(np.array([5, 5]), s), [1.0, 1.0])


def test_readme_example_elements_of_a_finite_space():
    assert list(sa.elements(("cat", "dog"))) == ["cat", "dog"]


# -- what CommonRLSpaces.jl gets wrong must work here ----------------------------------


def test_products_of_three_or_more_parts():
    p = sa.product(range(2), ("a", "b"), sa.Interval(0, 1), sa.BOOL)
    assert len(p.spaces) == 4 and sa.sample(p, rng=1) in p
    assert sa.SpaceStyle(p) == Hybrid((), (3,))  # one interval alone: its own shape


def test_clamp_on_open_intervals():
    s = sa.Interval(0, 1, closed="neither")
    assert sa.clamp(2.0, s) in s and sa.clamp(-2.0, s) in s
    assert sa.clamp(2.0, s) == np.nextafter(1.0, 0)


def test_bool_arrays_are_finite_and_float_arrays_continuous():
    assert isinstance(sa.SpaceStyle(sa.ArraySpace(bool, 3, 4)), sa.FiniteSpaceStyle)
    assert sa.cardinality(sa.ArraySpace(bool, 3, 4)) == 2**12
    assert isinstance(sa.SpaceStyle(sa.ArraySpace(np.float32, 3, 4)), sa.ContinuousSpaceStyle)
    assert sa.sample(sa.ArraySpace(np.float32, 3, 4)).dtype == np.float32


def test_enumerating_an_array_space():
    members = list(sa.elements(sa.ArraySpace(range(2), 2)))
    assert [m.tolist() for m in members] == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert [m.tolist() for m in sa.elements(sa.ArraySpace(("a", "b"), 2))][-1] == ["b", "b"]


def test_product_associativity():
    a, b, c = sa.Interval(0, 1), ("x", "y"), sa.Interval(2, 3)
    assert sa.product(sa.product(a, b), c) == sa.product(a, sa.product(b, c)) == sa.product(a, b, c)


def test_clamp_in_place():
    x = np.array([5.0, -5.0])
    assert sa.clamp_(x, sa.Box(-1, 1, shape=(2,))) is x
    assert x.tolist() == [1.0, -1.0]


@pytest.mark.parametrize("thing", [42, object(), "text", None, lambda: 0])
def test_space_style_of_anything_that_is_not_a_space_is_unknown(thing):
    # Julia's SpaceStyle(::Any) = UnknownSpaceStyle()
    assert sa.SpaceStyle(thing) == sa.UnknownSpaceStyle()
