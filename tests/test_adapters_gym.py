"""Laws of the legacy Gym (0.26) adapters and of spacealg.compat."""

from __future__ import annotations

import typing
from typing import Any

import gymnasium
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg import compat
from spacealg.adapters.gym import GYM_AVAILABLE
from spacealg.strategies.gymnasium import gym_spaces, gymnasium_spaces

if not GYM_AVAILABLE:  # at module level: the strategies below are built (with gym) at collection
    pytest.skip("gym is not installed", allow_module_level=True)

from spacealg.adapters.gym import gym_spaces as gym

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
]


def assert_identical(a: Any, b: Any) -> None:
    """``a == b`` plus what Gym's ``==`` ignores: Box dtypes, exact bounds, boundedness,
    MultiDiscrete dtype, Text character order, Dict key order."""
    assert a == b and type(a) is type(b)
    if isinstance(a, gym.Box):
        assert a.dtype == b.dtype and np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
        assert np.array_equal(a.bounded_below, b.bounded_below)
        assert np.array_equal(a.bounded_above, b.bounded_above)
    elif isinstance(a, gym.Discrete):
        assert (a.n, a.start) == (b.n, b.start)
    elif isinstance(a, gym.MultiDiscrete):
        assert a.dtype == b.dtype and np.array_equal(a.nvec, b.nvec) and a.nvec.shape == b.nvec.shape
    elif isinstance(a, gym.MultiBinary):
        assert a.n == b.n and type(a.n) is type(b.n)
    elif isinstance(a, gym.Text):
        assert (a.min_length, a.max_length, a.character_list) == (
            b.min_length,
            b.max_length,
            b.character_list,
        )
    elif isinstance(a, gym.Tuple):
        for x, y in zip(a.spaces, b.spaces, strict=True):
            assert_identical(x, y)
    elif isinstance(a, gym.Dict):
        assert list(a.spaces) == list(b.spaces)
        for k in a.spaces:
            assert_identical(a.spaces[k], b.spaces[k])
    elif isinstance(a, gym.Sequence):
        assert_identical(a.feature_space, b.feature_space)
    elif isinstance(a, gym.Graph):
        assert_identical(a.node_space, b.node_space)
        assert (a.edge_space is None) == (b.edge_space is None)
        if a.edge_space is not None:
            assert_identical(a.edge_space, b.edge_space)


def as_gym_value(x: Any) -> Any:
    """A spacealg/Gymnasium value with Gymnasium's GraphInstance replaced by Gym's."""
    if isinstance(x, gymnasium.spaces.GraphInstance):
        return gym.GraphInstance(*x)
    if isinstance(x, tuple):
        return tuple(as_gym_value(v) for v in x)
    if isinstance(x, dict):
        return {k: as_gym_value(v) for k, v in x.items()}
    return x


@given(gym_spaces())
def test_to_gym_from_gym_round_trip(g: Any) -> None:
    assert_identical(sa.to_gym(sa.from_gym(g)), g)


@given(gym_spaces(), st.integers(0, 2**32 - 1))
def test_membership_agrees_both_ways(g: Any, seed: int) -> None:
    s = sa.from_gym(g)
    g.seed(seed)
    assert all(sa.contains(g.sample(), s) for _ in range(3))
    assert all(g.contains(as_gym_value(sa.sample(s, rng=seed + i))) for i in range(3))


@given(gym_spaces(), st.integers(0, 2**32 - 1))
def test_protocol_on_gym_spaces(g: Any, seed: int) -> None:
    x = sa.sample(g, rng=seed)
    assert sa.contains(x, g) and g.contains(x)
    origin = typing.get_origin(sa.eltype(g)) or sa.eltype(g)
    assert isinstance(x, origin)
    assert sa.isin(sa.sample(g, 3, rng=seed), g).all()
    for miss in (None, "x", object(), [x, x]):
        assert sa.contains(miss, g) is False or g.contains(miss)
    assert sa.SpaceStyle(g) == sa.SpaceStyle(sa.from_gym(g))
    assert sa.cardinality(g) == sa.cardinality(sa.from_gym(g))


def _safe(g: Any, x: Any) -> bool:
    try:
        return bool(g.contains(x))
    except Exception:
        return False


@given(gym_spaces(classes=("Box", "Discrete", "MultiDiscrete", "MultiBinary")), st.integers(0, 1000))
def test_isin_agrees_with_gym_contains(g: Any, seed: int) -> None:
    batch = np.asarray(sa.sample(g, 4, rng=seed))
    variants = [batch, batch.astype(bool), batch.astype(np.float64) + 0.5, batch.astype(np.int64) - 300]
    variants += [batch.astype(np.int8), batch.astype(np.uint64), batch.astype(np.float32)]
    for variant in variants:
        expected = [_safe(g, variant[i]) for i in range(4)]
        assert sa.isin(variant, g).tolist() == expected
        assert [sa.contains(variant[i], g) for i in range(4)] == expected


def test_isin_follows_gym_not_gymnasium_where_they_differ() -> None:
    # regressions: Gym's MultiDiscrete.contains has no dtype check (floats in range are
    # members), and its Discrete.contains takes Python bools (ints) but not np.bool_, so a
    # bool batch is tested entry by entry as numpy scalars, not as Python bools
    g = gym.MultiDiscrete([3, 3])
    floats = np.array([[0.5, 2.0], [0.0, 3.0]])
    assert g.contains(floats[0]) and not g.contains(floats[1])
    assert sa.isin(floats, g).tolist() == [True, False]
    d = gym.Discrete(2)
    flags = np.array([False, True])
    assert not d.contains(flags[0]) and d.contains(True)
    assert sa.isin(flags, d).tolist() == [False, False]
    assert sa.isin(np.array([0, 1, 2], dtype=np.uint8), d).tolist() == [True, True, False]


@given(gym_spaces())
def test_gym_to_gymnasium_through_spacealg(g: Any) -> None:
    twin = sa.to_gymnasium(sa.from_gym(g))
    assert isinstance(twin, gymnasium.spaces.Space)
    assert type(twin).__name__ == type(g).__name__
    assert sa.from_gymnasium(twin) == sa.from_gym(g)
    assert_identical(sa.to_gym(sa.from_gymnasium(twin)), g)


GYM_EXPRESSIBLE = ("Box", "MultiBinary", "Text", "Tuple", "Dict")


@given(gymnasium_spaces(classes=GYM_EXPRESSIBLE))
def test_gymnasium_to_gym_through_spacealg(g: Any) -> None:
    legacy = sa.to_gym(sa.from_gymnasium(g))
    assert type(legacy).__name__ == type(g).__name__
    assert sa.to_gymnasium(sa.from_gym(legacy)) == g


def test_gym_discrete_and_multidiscrete_map_to_gymnasium_twins() -> None:
    assert sa.to_gymnasium(sa.from_gym(gym.Discrete(4, start=-2))) == gymnasium.spaces.Discrete(4, start=-2)
    assert sa.to_gymnasium(sa.from_gym(gym.MultiDiscrete([2, 3]))) == gymnasium.spaces.MultiDiscrete([2, 3])
    assert sa.to_gym(
        sa.from_gymnasium(gymnasium.spaces.MultiDiscrete([[2, 3]], dtype=np.int8))
    ) == gym.MultiDiscrete([[2, 3]], dtype=np.int8)


@pytest.mark.parametrize(
    ("space", "reason"),
    [
        (sa.OneOf(range(2), range(3)), "OneOf"),
        (sa.Sequence(range(2), stack=True), "stack"),
        (sa.Categorical(3, dtype=np.int32), "int64"),
        (sa.Categorical([2, 3], start=[1, 0]), "start"),
        (sa.ArraySpace(range(1, 3), 2), "start"),
        (sa.Graph(sa.Text(2), None), "Box or Discrete"),
        (sa.Interval(0, 1, closed="left"), "open"),
    ],
    ids=repr,
)
def test_no_gym_equivalent_raises_type_error_naming_the_space(space: Any, reason: str) -> None:
    with pytest.raises(TypeError) as info:
        sa.to_gym(space)
    assert reason in str(info.value) and type(space).__name__ in str(info.value)


def test_unknown_gym_subclass_names_the_class_and_how_to_register() -> None:
    class Custom(gym.Space):
        def contains(self, x: Any) -> bool:
            return x == 1

    with pytest.raises(TypeError, match=r"Custom.*register"):
        sa.from_gym(Custom())
    assert sa.contains(1, Custom()) and not sa.contains(2, Custom())
    with pytest.raises(TypeError, match="not a Gym space"):
        sa.from_gym(gymnasium.spaces.Discrete(2))


def test_compat_tuples_cover_both_packages() -> None:
    for name in ("Discrete", "Box", "MultiDiscrete", "MultiBinary", "Tuple", "Dict"):
        pair = getattr(compat, name)
        assert pair == (getattr(gym, name), getattr(gymnasium.spaces, name))
    assert isinstance(gym.Discrete(3), compat.Discrete)
    assert isinstance(gymnasium.spaces.Box(0, 1), compat.Box)
    assert not isinstance(gymnasium.spaces.Discrete(3), compat.Box)


def test_gym_integer_box_limits_survive() -> None:
    # Gym stores an unbounded integer entry as the dtype's limit moved in by 2
    g = gym.Box(np.array([-np.inf, 0]), np.array([5, np.inf]), dtype=np.int8)
    assert_identical(sa.to_gym(sa.from_gym(g)), g)
    twin = sa.to_gymnasium(sa.from_gym(g))
    assert twin.low.tolist() == [-128, 0] and twin.high.tolist() == [5, 127]
    assert twin.bounded_below.tolist() == [False, True]


def test_gym_integer_box_with_an_infinite_end_follows_the_flags() -> None:
    # Gym's bug (documented in spacealg.adapters.gym; gym_spaces avoids it): the stored end
    # is the limit moved in by 2 and contains() compares with it, while sample() goes past it
    # and wraps around; from_gym reads the flags, as Gymnasium 1.x does
    g = gym.Box(-np.inf, -123, shape=(), dtype=np.int8)
    assert g.low == -126 and not g.bounded_below
    s = sa.from_gym(g)
    assert sa.contains(np.array(-128, dtype=np.int8), s) and not g.contains(np.array(-128, dtype=np.int8))
    assert sa.to_gymnasium(s).contains(np.array(-128, dtype=np.int8))
    g.seed(0)
    assert any(not g.contains(g.sample()) for _ in range(2000))  # Gym's own samples leave it


def test_a_gym_products_first_batch_op_walks_its_own_parts() -> None:
    """The first spacealg call on a Gym Dict loads the Gym rules (lazily); the plan of that
    very call walks the Dict's own parts, so torch's clamp keeps each leaf's Gym dtype (int8,
    float16) as NumPy's does. In a fresh interpreter: the rules must not be loaded before."""
    import subprocess
    import sys

    pytest.importorskip("torch")
    program = (
        "import warnings; warnings.filterwarnings('ignore')\n"
        "import numpy as np, torch, gym, spacealg as sa\n"
        "s = gym.spaces.Dict({'a': gym.spaces.MultiBinary(3), 'b': gym.spaces.Box(0, 1, (2,), np.float16)})\n"
        "c = sa.clamp({'a': torch.tensor([[2, 0, 1]]), 'b': torch.tensor([[3.0, 0.5]], dtype=torch.float64)}, s)\n"
        "print(c['a'].dtype, c['b'].dtype)\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["torch.int8", "torch.float16"]
