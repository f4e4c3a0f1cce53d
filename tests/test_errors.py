"""Bad input gets a clear error naming the argument; membership never raises."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.strategies import spaces


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: sa.Interval(2, 1), ValueError, "low .* must not exceed high"),
        (lambda: sa.Interval(math.nan, 1), ValueError, "low must not be NaN"),
        (lambda: sa.Interval(0, math.nan), ValueError, "high must not be NaN"),
        (lambda: sa.Interval(0, 1, closed="open"), ValueError, "closed must be one of"),
        (lambda: sa.Interval(1, 1, closed="left"), ValueError, "empty"),
        (lambda: sa.Interval("a", 1), TypeError, "low must be a real number"),
        (lambda: sa.Interval(math.inf, math.inf), ValueError, "low must not be \\+inf"),
        (lambda: sa.Interval(10**400, 10**401), ValueError, "low is an int beyond the float range"),
        (lambda: sa.Box(1, 0, shape=(2,)), ValueError, "low must not exceed high"),
        (lambda: sa.Box(np.nan, 1, shape=(2,)), ValueError, "low must not contain NaN"),
        (lambda: sa.Box(np.zeros(2), np.ones(3)), ValueError, "low.shape .* high.shape"),
        (lambda: sa.Box(np.zeros(2), 1, shape=(3,)), ValueError, "low.shape .* does not match shape"),
        (lambda: sa.Box(0, 1, shape=(2, -1)), ValueError, "shape must have non-negative"),
        (lambda: sa.Box(0, 1, shape="ab"), TypeError, "shape must be a tuple of ints"),
        (lambda: sa.Box(0, 1, dtype=np.complex64), ValueError, "dtype must be bool, integer or floating"),
        (lambda: sa.Box(0, 1, dtype=None), ValueError, "dtype must be given"),
        (lambda: sa.Box(-np.inf, 1, dtype=np.uint8), ValueError, "low may not be -inf"),
        (lambda: sa.Box(0, 300, dtype=np.uint8), ValueError, "high lies outside the range"),
        (lambda: sa.Box("a", 1), TypeError, "low must be a real number"),
        (lambda: sa.ArraySpace(range(3), -1), ValueError, "dims must be non-negative"),
        (lambda: sa.ArraySpace(range(3), 1.5), TypeError, "dims must be ints"),
        (lambda: sa.ArraySpace(sa.OneOf(range(2)), 2), TypeError, "does not have scalar elements"),
        (lambda: sa.ArraySpace(object(), 2), TypeError, "is not a space"),
        (lambda: sa.FiniteSet([1, 2]), TypeError, "items must be hashable"),
        (lambda: sa.OneOf(), ValueError, "at least one space"),
        (lambda: sa.DictProduct([("a", range(2)), ("a", range(3))]), ValueError, "duplicate keys"),
        (lambda: sa.DictProduct({"a": range(2)}, b=range(2)), TypeError, "either as one mapping"),
        (lambda: sa.product(range(2), b=range(2)), TypeError, "either positional spaces or keyword"),
        (lambda: sa.TupleProduct(object()), TypeError, "is not a space"),
    ],
)
def test_invalid_construction_names_the_argument(build, error, words):
    with pytest.raises(error, match=words):
        build()


WEIRD = [
    None,
    "text",
    b"bytes",
    object(),
    [1, [2, 3]],
    {"a": 1},
    (1, 2, 3),
    np.array(["a", "b"]),
    np.array([[1, 2], [3]], dtype=object),
    math.nan,
    math.inf,
    complex(1, 1),
    np.zeros((2, 2, 2)),
    lambda: 0,
    {1, 2},
    np.float32(0.5),
    np.array(0.5),
    np.array([0.5, np.nan]),
]


@given(spaces(), st.sampled_from(WEIRD))
def test_contains_never_raises(space, value):
    assert sa.contains(value, space) in (True, False)


@given(spaces(), st.sampled_from(WEIRD))
def test_in_operator_never_raises(space, value):
    space = sa.as_space(space)
    if isinstance(space, sa.Space):  # plain objects (range) keep Python's own `in`
        assert (value in space) in (True, False)


def test_unknown_objects_are_not_spaces():
    class Thing:
        pass

    with pytest.raises(TypeError, match="is not a space"):
        sa.sample(Thing())
    with pytest.raises(TypeError, match="not a space"):
        sa.contains(1, Thing())
    with pytest.raises(TypeError, match=r"int is not a space"):
        sa.sample(int)


def test_malformed_batches_raise_value_errors():
    with pytest.raises(ValueError, match="isin"):
        sa.isin(np.zeros((4, 3)), sa.Box(0, 1, shape=(2,)))
    with pytest.raises(ValueError, match="isin"):
        sa.isin([np.zeros(3)], sa.TupleProduct(range(2), range(2)))
    with pytest.raises(ValueError, match="isin"):
        sa.isin({"a": np.zeros(3)}, sa.DictProduct(b=range(2)))


def test_dispatched_arguments_must_be_positional():
    with pytest.raises(TypeError, match="positionally"):
        sa.sample(space=range(3))


@dataclass
class Reading:
    level: Annotated[float, sa.Interval(0, 1)]
    gear: Annotated[int, range(3)]


def test_a_dataclass_type_is_the_space_it_declares():
    x = sa.sample(Reading, rng=0)
    assert isinstance(x, Reading) and sa.contains(x, Reading)
    assert sa.cardinality(Reading) == math.inf
