"""Every space is a value: repr evaluates back, pickles, hashes, and is immutable."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given

import spacealg as sa
from spacealg.strategies import spaces

NAMESPACE = {"np": np, **{name: getattr(sa, name) for name in sa.__all__}}


@given(spaces(leaves=("interval", "finite", "range", "box", "array")))
def test_repr_evaluates_back_to_an_equal_space(space):
    rebuilt = eval(repr(space), NAMESPACE)
    assert rebuilt == space
    assert hash(rebuilt) == hash(space)


@given(spaces())
def test_pickle_round_trip(space):
    assert pickle.loads(pickle.dumps(space)) == space


@given(spaces(leaves=("interval", "finite", "box", "array")))
def test_equal_spaces_hash_equal_and_rebuild_from_constructor_args(space):
    copy = pickle.loads(pickle.dumps(space))
    assert copy == space and hash(copy) == hash(space)
    assert len({copy, space}) == 1


@given(spaces(leaves=("interval", "finite", "box", "array")))
def test_spaces_are_immutable(space):
    if isinstance(space, sa.Space):
        with pytest.raises(AttributeError, match="immutable"):
            space.anything = 1
        for name in ("low", "high", "items", "spaces", "dims", "shape"):
            if hasattr(space, name):
                with pytest.raises(AttributeError):
                    setattr(space, name, None)


def test_box_bounds_are_read_only():
    box = sa.Box(0, 1, shape=(3,))
    with pytest.raises(ValueError):
        box.low[0] = -5


def test_dict_product_equality_ignores_key_order_but_keeps_it():
    a = sa.DictProduct([("b", range(2)), ("a", sa.BOOL)])
    b = sa.DictProduct(a=sa.BOOL, b=range(2))
    assert a == b and hash(a) == hash(b)
    assert list(a.keys()) == ["b", "a"]
    assert list(sa.sample(a, rng=0)) == ["b", "a"]


def test_finite_set_equality_ignores_order():
    assert sa.FiniteSet(1, 2, 3) == sa.FiniteSet(3, 2, 1)
    assert sa.FiniteSet("a", "a", "b").items == ("a", "b")


def test_signed_zero_bounds_are_the_same_box():
    a, b = sa.Box(-0.0, 0.0, shape=(2,)), sa.Box(0.0, 0.0, shape=(2,))
    assert a == b and hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(sa.Box(np.array([-0.0, 0.0]), np.array([0.0, 0.0])))) == b
