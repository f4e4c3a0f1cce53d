"""A user registers a new space type in a few lines (the README shows the same code)."""

from __future__ import annotations

import math

import numpy as np

import spacealg as sa
from spacealg.core.rng import as_generator


class Circle:
    """The unit circle's points, as (x, y) float arrays."""


@sa.contains.register(Circle)
def _(x, space):
    return isinstance(x, np.ndarray) and x.shape == (2,) and bool(np.isclose(np.hypot(*x), 1.0))


@sa.sample.register(Circle)
def _(space, size=None, *, rng=None):
    angle = as_generator(rng).uniform(0, 2 * math.pi, () if size is None else size)
    return np.stack([np.cos(angle), np.sin(angle)], axis=-1)


@sa.SpaceStyle.register(Circle)
def _(space):
    return sa.ContinuousSpaceStyle((2,))


def test_a_user_space_works_with_the_generic_functions():
    circle = Circle()
    x = sa.sample(circle, rng=0)
    assert sa.contains(x, circle)
    assert sa.SpaceStyle(circle) == sa.ContinuousSpaceStyle((2,))
    assert np.array_equal(sa.sample(circle, rng=3), sa.sample(circle, rng=3))
    assert not sa.contains(np.array([2.0, 0.0]), circle)


def test_a_user_space_composes_with_the_algebra():
    p = sa.TupleProduct(Circle(), range(3))
    x = sa.sample(p, rng=1)
    assert sa.contains(x, p)
    assert sa.SpaceStyle(p) == sa.HybridSpaceStyle((2,), ())


class Anything:
    """A space that registers membership only."""


@sa.contains.register(Anything)
def _(x, space):
    return True


def test_a_space_without_a_style_of_its_own_is_unknown():
    assert sa.SpaceStyle(Anything()) == sa.UnknownSpaceStyle()
    assert sa.SpaceStyle(sa.TupleProduct(Anything(), range(2))) == sa.UnknownSpaceStyle()
