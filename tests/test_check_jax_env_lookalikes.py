"""Craftax's and JaxMARL's copies of gymnax's spaces (spacealg.adapters.lookalikes):
spacealg's membership on the converted space agrees with the library's own ``contains`` on
values of the space's shape and dtype, inside and outside the bounds."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

from spacealg import contains
from spacealg.adapters.lookalikes import from_lookalike, is_lookalike


def _agree(space, values):
    converted = from_lookalike(space)
    for value in values:
        assert contains(value, converted) == bool(space.contains(value)), (space, value)


def _values(shape, dtype, low, high):
    rng = np.random.default_rng(0)
    span = np.asarray(high, np.float64) - np.asarray(low, np.float64)
    inside = [np.asarray(low + rng.uniform(0, 1, shape) * span).astype(dtype) for _ in range(5)]
    outside = [np.asarray(np.broadcast_to(high, shape) + 1).astype(dtype), np.asarray(np.broadcast_to(low, shape) - 1)
               .astype(dtype)]
    return inside + outside


def test_jaxmarl_spaces_convert_to_the_sets_their_contains_decides():
    spaces = pytest.importorskip("jaxmarl.environments.spaces")
    box = spaces.Box(-1.0, 2.0, (3,), np.float32)
    _agree(box, _values((3,), np.float32, -1.0, 2.0))
    _agree(spaces.Discrete(5), [np.int32(v) for v in (-1, 0, 4, 5)])
    multi = spaces.MultiDiscrete([2, 3])
    _agree(multi, [np.asarray(v, np.int32) for v in ([0, 0], [1, 2], [2, 0], [0, 3], [-1, 1])])
    nested = spaces.Dict({"a": spaces.Discrete(2), "b": spaces.Tuple([box, spaces.Discrete(3)])})
    inside = {"a": np.int32(1), "b": (np.zeros(3, np.float32), np.int32(2))}
    outside = {"a": np.int32(1), "b": (np.full(3, 5, np.float32), np.int32(2))}
    _agree(nested, [inside, outside])
    assert is_lookalike(box) and not is_lookalike(object())


def test_craftax_spaces_convert_to_the_sets_their_contains_decides():
    spaces = pytest.importorskip("craftax.environment_base.spaces")
    _agree(spaces.Box(0.0, 1.0, (4,), np.float32), _values((4,), np.float32, 0.0, 1.0))
    _agree(spaces.Discrete(17), [np.int32(v) for v in (-1, 0, 16, 17)])


def test_anything_else_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="not a Craftax or JaxMARL space"):
        from_lookalike(object())
