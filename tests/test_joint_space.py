"""Laws of spacealg.ops.joint_space: Gymnasium's batch_space on Gymnasium spaces, the n-fold
power (whose Gymnasium image is batch_space's) on spacealg spaces, PufferLib's joint spaces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium.spaces as gs
import numpy as np
import pytest
from gymnasium.vector.utils import batch_space
from hypothesis import assume, given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.adapters.gymnasium import to_gymnasium
from spacealg.ops import joint_space
from spacealg.strategies.gymnasium import gymnasium_spaces
from spacealg.strategies.spaces import spaces

agents = st.integers(1, 4)


@given(gymnasium_spaces(max_depth=2), agents)
def test_joint_space_equals_batch_space(space: gs.Space, n: int) -> None:
    joint = joint_space(space, n)
    expected = batch_space(space, n)
    assert type(joint) is type(expected)
    assert joint == expected
    if isinstance(expected, (gs.Box, gs.MultiDiscrete)):
        assert joint.dtype == expected.dtype


def _faithful(space: Any) -> bool:
    """Whether ``space``'s Gymnasium image holds its own values (not positions of labels)."""
    if isinstance(space, sa.ArraySpace):
        base = space.space
        return base == sa.BOOL or (isinstance(base, range) and base.step == 1)
    if isinstance(space, sa.TupleProduct):
        return all(_faithful(space[i]) for i in range(len(space.spaces)))
    if isinstance(space, sa.DictProduct):
        return all(_faithful(s) for s in space.spaces.values())
    return True


@given(spaces(), agents)
def test_joint_space_maps_to_batch_space_of_the_image(space: Any, n: int) -> None:
    assume(_faithful(space))
    try:
        image = to_gymnasium(space)
    except TypeError:  # open intervals have no Gymnasium image
        assume(False)
    assert to_gymnasium(joint_space(space, n)) == batch_space(image, n)


def _stack(batch: Any, joint: Any) -> Any:
    """A batch of ``n`` members as a member of the joint space (object arrays -> tuples)."""
    if isinstance(joint, sa.TupleProduct) and isinstance(batch, tuple):
        return tuple(_stack(b, j) for b, j in zip(batch, joint.spaces))
    if isinstance(joint, sa.DictProduct) and isinstance(batch, Mapping):
        return {k: _stack(batch[k], j) for k, j in joint.spaces.items()}
    if isinstance(joint, sa.TupleProduct):  # n copies of a space whose batch is an object array
        return tuple(batch)
    return batch


@given(spaces(), agents, st.integers(0, 2**32 - 1))
def test_joint_space_contains_stacked_members(space: Any, n: int, seed: int) -> None:
    joint = joint_space(space, n)
    stacked = _stack(sa.sample(space, n, rng=seed), joint)
    assert sa.contains(stacked, joint)


@given(spaces(), agents, st.integers(0, 2**32 - 1))
def test_joint_space_samples_are_stacks_of_members(space: Any, n: int, seed: int) -> None:
    joint = joint_space(space, n)
    x = sa.sample(joint, rng=seed)
    if isinstance(joint, sa.TupleProduct) and not isinstance(space, sa.TupleProduct):
        assert all(sa.contains(m, space) for m in x)
    elif isinstance(x, np.ndarray) and not isinstance(space, (sa.TupleProduct, sa.DictProduct)):
        assert x.shape[0] == n
        assert sa.isin(x, space).all()


# -- PufferLib's joint spaces -----------------------------------------------------------------


def test_pufferlib_discrete_becomes_multidiscrete() -> None:
    assert joint_space(gs.Discrete(4), 8) == gs.MultiDiscrete([4] * 8)


def test_pufferlib_multidiscrete_becomes_integer_box() -> None:
    joint = joint_space(gs.MultiDiscrete([3, 4, 5]), 8)
    assert isinstance(joint, gs.Box) and joint.shape == (8, 3) and joint.dtype == np.int64
    assert (joint.low == 0).all() and (joint.high == np.array([[2, 3, 4]] * 8)).all()


def test_pufferlib_box_gains_a_leading_axis() -> None:
    joint = joint_space(gs.Box(0, 255, (84, 84, 3), np.uint8), 8)
    assert joint == gs.Box(0, 255, (8, 84, 84, 3), np.uint8)


def test_discrete_start_and_dtype_are_kept() -> None:
    joint = joint_space(gs.Discrete(3, start=-1, dtype=np.int32), 2)
    assert joint == gs.MultiDiscrete([3, 3], start=[-1, -1], dtype=np.int32)
    assert joint.dtype == np.int32


def test_spacealg_rules() -> None:
    assert joint_space(range(4), 3) == sa.ArraySpace(range(4), 3)
    assert joint_space(sa.ArraySpace(range(1, 6), 2), 3) == sa.Box(1, 5, shape=(3, 2), dtype=np.int64)
    assert joint_space(sa.ArraySpace(bool, 2), 3) == sa.Box(0, 1, shape=(3, 2), dtype=np.int8)
    assert joint_space(bool, 2) == sa.ArraySpace(range(2), 2)
    assert joint_space(sa.Interval(0, 1), 2) == sa.Box(0.0, 1.0, shape=(2,), dtype=np.float64)
    labels = sa.FiniteSet("up", "down")
    assert joint_space(labels, 2) == sa.ArraySpace(labels, 2)
    assert joint_space(sa.ArraySpace(labels, 3), 2) == sa.ArraySpace(labels, 2, 3)
    oneof = sa.OneOf(range(2), sa.Interval(0, 1))
    assert joint_space(oneof, 2) == sa.TupleProduct(oneof, oneof)
    d = joint_space(sa.DictProduct(b=range(2), a=sa.Box(0, 1, (2,))), 3)
    assert list(d.spaces) == ["b", "a"]
    assert d["a"] == sa.Box(0, 1, (3, 2))


def test_plain_objects_are_spaces() -> None:
    assert joint_space({"a": range(2)}, 2) == sa.DictProduct(a=sa.ArraySpace(range(2), 2))
    assert joint_space(("x", "y"), 2) == sa.ArraySpace(sa.FiniteSet("x", "y"), 2)


@pytest.mark.parametrize("n", [0, -1, 1.5, True, "3", None])
def test_n_must_be_a_positive_int(n: Any) -> None:
    with pytest.raises(ValueError, match="n="):
        joint_space(range(3), n)
    with pytest.raises(ValueError, match="n="):
        joint_space(gs.Discrete(3), n)


def test_numpy_integer_n_is_accepted() -> None:
    assert joint_space(range(3), np.int64(2)) == sa.ArraySpace(range(3), 2)


def test_not_a_space_raises_type_error() -> None:
    with pytest.raises(TypeError):
        joint_space(object(), 2)
