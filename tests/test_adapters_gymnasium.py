"""Laws of the Gymnasium adapters (spacealg.adapters.gymnasium, .native, .encoding)."""

from __future__ import annotations

import contextlib
import gc
import math
import typing
import warnings
from typing import Any

import gymnasium.spaces as gs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.core.styles import (
    ContinuousSpaceStyle,
    FiniteSpaceStyle,
    HybridSpaceStyle,
    UnknownSpaceStyle,
    combine_styles,
)
from spacealg.strategies.gymnasium import gymnasium_spaces
from spacealg.strategies.spaces import spaces

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::RuntimeWarning"),
]

# -- Gymnasium's own test spaces (the spaces listed in Gymnasium's tests/spaces/utils.py) ------

FUNDAMENTAL = [
    gs.Discrete(3),
    gs.Discrete(3, start=-1),
    gs.Discrete(n=4, dtype=np.int32, start=1),
    gs.Box(low=0.0, high=1.0),
    gs.Box(low=0.0, high=np.inf, shape=(2, 2)),
    gs.Box(low=np.array([-10.0, 0.0]), high=np.array([10.0, 10.0]), dtype=np.float64),
    gs.Box(low=-np.inf, high=0.0, shape=(2, 1)),
    gs.Box(low=0.0, high=np.inf, shape=(2, 1)),
    gs.Box(low=0, high=255, shape=(2, 2, 3), dtype=np.uint8),
    gs.Box(low=np.array([0, 0, 1]), high=np.array([1, 0, 1]), dtype=np.bool_),
    gs.Box(low=np.array([-np.inf, -np.inf, 0, -10]), high=np.array([np.inf, 0, np.inf, 10]), dtype=np.int32),
    gs.MultiDiscrete([2, 2]),
    gs.MultiDiscrete([[2, 3], [3, 2]]),
    gs.MultiDiscrete([2, 2], start=[10, 10]),
    gs.MultiDiscrete([[2, 3], [3, 2]], start=[[10, 20], [30, 40]]),
    gs.MultiDiscrete([2, 3], dtype=np.int8),
    gs.MultiDiscrete([2, 3], dtype=np.uint16),
    gs.MultiBinary(8),
    gs.MultiBinary([2, 3]),
    gs.Text(6),
    gs.Text(min_length=3, max_length=6),
    gs.Text(6, charset="abcdef"),
]
_PAIR = gs.Box(low=np.array([0.0, 0.0]), high=np.array([1.0, 5.0]), dtype=np.float64)
COMPOSITE = [
    gs.Tuple([gs.Discrete(5), gs.Discrete(4)]),
    gs.Tuple((gs.Discrete(5), _PAIR)),
    gs.Tuple((gs.Discrete(5), gs.Tuple((gs.Box(low=0.0, high=1.0, shape=(3,)), gs.Discrete(2))))),
    gs.Tuple((gs.Discrete(3), gs.Dict(position=gs.Box(low=0.0, high=1.0), velocity=gs.Discrete(2)))),
    gs.Tuple((gs.Graph(node_space=gs.Box(-1, 1, shape=(2, 1)), edge_space=None), gs.Discrete(2))),
    gs.Dict({"position": gs.Discrete(5), "velocity": _PAIR}),
    gs.Dict(position=gs.Discrete(6), velocity=_PAIR),
    gs.Dict(
        {
            "a": gs.Box(low=0, high=1, shape=(3, 3)),
            "b": gs.Dict(
                {"b_1": gs.Box(low=-100, high=100, shape=(2,)), "b_2": gs.Box(low=-1, high=1, shape=(2,))}
            ),
            "c": gs.Discrete(4),
        }
    ),
    gs.Dict(
        a=gs.Dict(
            a=gs.Graph(node_space=gs.Box(-100, 100, shape=(2, 2)), edge_space=None),
            b=gs.Box(-100, 100, shape=(2, 2)),
        ),
        b=gs.Tuple((gs.Box(-100, 100, shape=(2,)), gs.Box(-100, 100, shape=(2,)))),
    ),
    gs.Graph(node_space=gs.Box(-1, 1, shape=(2,)), edge_space=None),
    gs.Graph(node_space=gs.Box(low=-100, high=100, shape=(3, 4)), edge_space=gs.Discrete(5)),
    gs.Graph(node_space=gs.Discrete(5), edge_space=gs.Box(low=-100, high=100, shape=(3, 4))),
    gs.Graph(node_space=gs.Discrete(3), edge_space=gs.Discrete(4)),
    gs.Graph(
        node_space=gs.Dict({"node_feature_1": gs.Discrete(5), "node_feature_2": gs.MultiBinary(5)}),
        edge_space=gs.Box(low=1, high=4),
    ),
    gs.Graph(node_space=gs.MultiBinary(4), edge_space=None),
    gs.Graph(node_space=gs.MultiDiscrete([3, 4, 2]), edge_space=gs.Discrete(3)),
    gs.Graph(node_space=gs.Tuple((gs.Box(-1, 1, shape=(2,)), gs.Discrete(3))), edge_space=None),
    gs.Graph(node_space=gs.Discrete(4), edge_space=gs.Tuple((gs.Box(0, 1, shape=(2,)), gs.Discrete(3)))),
    gs.Graph(
        node_space=gs.Discrete(3),
        edge_space=gs.Dict({"weight": gs.Box(0, 1, shape=()), "type": gs.Discrete(4)}),
    ),
    gs.Graph(
        node_space=gs.Dict({"pos": gs.Box(-10, 10, shape=(3,)), "label": gs.Discrete(5)}),
        edge_space=gs.Dict({"weight": gs.Box(0, 1, shape=()), "type": gs.Discrete(3)}),
    ),
    gs.Graph(
        node_space=gs.Tuple((gs.Dict({"a": gs.Discrete(3)}), gs.MultiBinary(2))),
        edge_space=gs.Tuple((gs.Discrete(4), gs.Box(0, 1, shape=(2,)))),
    ),
    gs.Sequence(gs.Discrete(4)),
    gs.Sequence(gs.Dict({"feature": gs.Box(0, 1, (3,))})),
    gs.Sequence(gs.Graph(node_space=gs.Box(-100, 100, shape=(2, 2)), edge_space=gs.Discrete(4))),
    gs.Sequence(gs.Box(low=0.0, high=1.0), stack=True),
    gs.Sequence(gs.Dict({"a": gs.Box(0, 1, (3,)), "b": gs.Discrete(5)}), stack=True),
    gs.OneOf([gs.Discrete(3), gs.Box(low=0.0, high=1.0)]),
    gs.OneOf([gs.MultiBinary(2), gs.MultiDiscrete([2, 2])]),
]
GYMNASIUM_TEST_SPACES = FUNDAMENTAL + COMPOSITE


# -- helpers -----------------------------------------------------------------------------------


def assert_identical(a: Any, b: Any) -> None:
    """``a == b`` and every attribute Gymnasium's ``==`` ignores: exact bounds, boundedness,
    dtypes, start, MultiBinary's ``n``, Text's character order, Dict key order, stack."""
    assert a == b
    assert type(a) is type(b)
    if isinstance(a, gs.Box):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.low.dtype == b.low.dtype and a.high.dtype == b.high.dtype
        assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
        assert np.array_equal(a.bounded_below, b.bounded_below)
        assert np.array_equal(a.bounded_above, b.bounded_above)
    elif isinstance(a, gs.Discrete):
        assert (a.n, a.start, a.dtype) == (b.n, b.start, b.dtype)
        assert type(a.n) is type(b.n) and type(a.start) is type(b.start)
    elif isinstance(a, gs.MultiDiscrete):
        assert a.dtype == b.dtype and a.nvec.dtype == b.nvec.dtype and a.start.dtype == b.start.dtype
        assert np.array_equal(a.nvec, b.nvec) and np.array_equal(a.start, b.start)
        assert a.nvec.shape == b.nvec.shape
    elif isinstance(a, gs.MultiBinary):
        assert a.n == b.n and type(a.n) is type(b.n) and a.shape == b.shape
    elif isinstance(a, gs.Text):
        assert (a.min_length, a.max_length, a.character_list) == (
            b.min_length,
            b.max_length,
            b.character_list,
        )
    elif isinstance(a, (gs.Tuple, gs.OneOf)):
        for x, y in zip(a.spaces, b.spaces, strict=True):
            assert_identical(x, y)
    elif isinstance(a, gs.Dict):
        assert list(a.spaces) == list(b.spaces)
        for k in a.spaces:
            assert_identical(a.spaces[k], b.spaces[k])
    elif isinstance(a, gs.Sequence):
        assert a.stack == b.stack
        assert_identical(a.feature_space, b.feature_space)
    elif isinstance(a, gs.Graph):
        assert_identical(a.node_space, b.node_space)
        assert (a.edge_space is None) == (b.edge_space is None)
        if a.edge_space is not None:
            assert_identical(a.edge_space, b.edge_space)


def _broken_in_gymnasium(g: Any) -> bool:
    """0-d MultiDiscrete: Gymnasium's own samples are not members of it."""
    if isinstance(g, gs.MultiDiscrete):
        return g.nvec.ndim == 0
    children = {
        gs.Tuple: lambda s: s.spaces,
        gs.OneOf: lambda s: s.spaces,
        gs.Dict: lambda s: list(s.spaces.values()),
        gs.Sequence: lambda s: [s.feature_space],
        gs.Graph: lambda s: [s.node_space] + ([s.edge_space] if s.edge_space is not None else []),
    }.get(type(g), lambda s: [])
    return any(_broken_in_gymnasium(c) for c in children(g))


def expected_style(g: Any) -> Any:
    """SpaceStyle computed from Gymnasium's attributes alone (independently of spacealg)."""
    if isinstance(g, gs.Box):
        point = bool(np.array_equal(g.low, g.high))
        finite = g.dtype.kind in "biu" or point
        return FiniteSpaceStyle(g.shape) if finite else ContinuousSpaceStyle(g.shape)
    if isinstance(g, (gs.Discrete, gs.Text)):
        return FiniteSpaceStyle(())
    if isinstance(g, (gs.MultiDiscrete, gs.MultiBinary)):
        return FiniteSpaceStyle(tuple(g.shape))
    if isinstance(g, gs.Tuple):
        return combine_styles(expected_style(s) for s in g.spaces)
    if isinstance(g, gs.Dict):
        return combine_styles(expected_style(s) for s in g.spaces.values())
    if isinstance(g, gs.OneOf):
        styles = [expected_style(s) for s in g.spaces]
        if all(isinstance(s, FiniteSpaceStyle) for s in styles):
            return FiniteSpaceStyle(())
        if any(isinstance(s, UnknownSpaceStyle) for s in styles):
            return UnknownSpaceStyle()
        return HybridSpaceStyle((), ())
    return UnknownSpaceStyle()


def expected_cardinality(g: Any) -> Any:
    """The number of members, from Gymnasium's attributes alone."""
    if isinstance(g, gs.Box):
        if g.dtype.kind in "biu":
            return math.prod(int(h) - int(lo) + 1 for lo, h in zip(g.low.flat, g.high.flat))
        return 1 if np.array_equal(g.low, g.high) else math.inf
    if isinstance(g, gs.Discrete):
        return int(g.n)
    if isinstance(g, gs.MultiDiscrete):
        return math.prod(int(n) for n in g.nvec.flat)
    if isinstance(g, gs.MultiBinary):
        return 2 ** math.prod(g.shape)
    if isinstance(g, gs.Text):
        k = len(g.character_set)
        return sum(k**n for n in range(g.min_length, g.max_length + 1))
    if isinstance(g, (gs.Tuple, gs.Dict)):
        parts = [expected_cardinality(s) for s in (g.spaces.values() if isinstance(g, gs.Dict) else g.spaces)]
        return 0 if 0 in parts else math.prod(parts)
    if isinstance(g, gs.OneOf):
        return sum(expected_cardinality(s) for s in g.spaces)
    return math.inf


def near_misses(x: Any) -> list[Any]:
    """Values close to the member ``x``: other dtypes, shapes, out of range, wrong types."""
    misses: list[Any] = [None, "x", 1.5, -(10**30), [x], (x, x), {"k": x}, object()]
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        misses += [a.astype(np.float64), a.astype(np.int8), a.astype(np.uint64), a[None]]
        misses += [a.astype(np.float64) + 1000, a.astype(np.int64) - 1000]
        misses += [a.tolist(), a.astype(np.float32) + 0.5]
        if a.ndim:
            misses += [a.reshape(-1)[:-1], np.concatenate([a.reshape(-1), a.reshape(-1)])]
    elif isinstance(x, tuple):
        misses += [tuple(reversed(x)), (*x, None), x[:-1], list(x)]
    elif isinstance(x, dict):
        misses += [dict(reversed(list(x.items()))), {**x, "extra": 0}, {k: None for k in x}]
    elif isinstance(x, str):
        misses += [x + "\u2603", x * 10, b"bytes"]
    return misses


def safe(g: Any, x: Any) -> bool:
    try:
        return bool(g.contains(x))
    except Exception:
        return False


# -- round trip ------------------------------------------------------------------------------


@given(gymnasium_spaces())
def test_to_gymnasium_from_gymnasium_round_trip(g: Any) -> None:
    assert_identical(sa.to_gymnasium(sa.from_gymnasium(g)), g)


@pytest.mark.parametrize("g", GYMNASIUM_TEST_SPACES, ids=[str(g) for g in GYMNASIUM_TEST_SPACES])
def test_gymnasium_test_spaces_round_trip(g: Any) -> None:
    assert_identical(sa.to_gymnasium(sa.from_gymnasium(g)), g)
    assert sa.from_gymnasium(g) == sa.from_gymnasium(sa.to_gymnasium(sa.from_gymnasium(g)))


@pytest.mark.parametrize(
    ("g", "expected"),
    [
        (gs.Discrete(3), range(3)),
        (gs.Discrete(3, start=-1), range(-1, 2)),
        (gs.Discrete(4, start=1, dtype=np.int32), sa.Categorical(4, start=1, dtype=np.int32)),
        (gs.MultiDiscrete([3, 3]), sa.ArraySpace(range(3), 2)),
        (gs.MultiDiscrete([2, 2], start=[10, 10]), sa.ArraySpace(range(10, 12), 2)),
        (gs.MultiDiscrete([2, 3], dtype=np.int8), sa.Categorical([2, 3], dtype=np.int8)),
        (gs.MultiBinary([2, 3]), sa.ArraySpace(bool, 2, 3)),
        (gs.Box(0, 1, shape=(2,)), sa.Box(0, 1, shape=(2,))),
        (gs.Text(4, charset="ab"), sa.Text(4, charset="ab")),
        (gs.Dict([("b", gs.Discrete(2)), ("a", gs.Text(2))]), sa.DictProduct(b=range(2), a=sa.Text(2))),
        (gs.Sequence(gs.Discrete(2), stack=True), sa.Sequence(range(2), stack=True)),
        (gs.Graph(gs.Discrete(2), None), sa.Graph(range(2), None)),
        (gs.OneOf([gs.Discrete(2), gs.Text(2)]), sa.OneOf(range(2), sa.Text(2))),
    ],
)
def test_from_gymnasium_table(g: Any, expected: Any) -> None:
    assert sa.from_gymnasium(g) == expected


def test_dict_key_order_is_kept() -> None:
    g = gs.Dict([("z", gs.Discrete(2)), ("a", gs.Discrete(3)), ("m", gs.Box(0, 1))])
    assert list(sa.from_gymnasium(g).keys()) == ["z", "a", "m"]
    assert list(sa.to_gymnasium(sa.from_gymnasium(g)).spaces) == ["z", "a", "m"]
    assert list(sa.sample(g, rng=0)) == ["z", "a", "m"]


def test_multibinary_of_a_one_element_list_comes_back_as_an_int() -> None:
    # Gymnasium's own quirk: MultiBinary([3]) != MultiBinary(3), though they are the same space
    g = gs.MultiBinary([3])
    back = sa.to_gymnasium(sa.from_gymnasium(g))
    assert back == gs.MultiBinary(3) and back.shape == g.shape


def test_int64_box_with_infinite_ends_round_trips() -> None:
    for g in (gs.Box(-np.inf, 5, shape=(2,), dtype=np.int64), gs.Box(0, np.inf, shape=(), dtype=np.int64)):
        assert_identical(sa.to_gymnasium(sa.from_gymnasium(g)), g)
        assert all(g.contains(sa.sample(g, rng=i)) for i in range(5))


def test_zero_dimensional_multidiscrete_round_trips() -> None:
    for dtype in (np.int64, np.int32):
        g = gs.MultiDiscrete(np.array(3), dtype=dtype, start=np.array(2))
        assert_identical(sa.to_gymnasium(sa.from_gymnasium(g)), g)
        assert g.contains(sa.sample(g, rng=0))  # unlike g.sample(), a 0-d array


# -- membership both ways ----------------------------------------------------------------------


@given(gymnasium_spaces(), st.integers(0, 2**32 - 1))
def test_membership_agrees_both_ways(g: Any, seed: int) -> None:
    s = sa.from_gymnasium(g)
    if not _broken_in_gymnasium(g):
        g.seed(seed)
        for _ in range(3):
            assert sa.contains(g.sample(), s)
    for i in range(3):
        assert g.contains(sa.sample(s, rng=seed + i))
    assert sa.isin(sa.sample(s, 4, rng=seed), s).all()


@pytest.mark.parametrize("g", GYMNASIUM_TEST_SPACES, ids=[str(g) for g in GYMNASIUM_TEST_SPACES])
def test_membership_agrees_on_gymnasium_test_spaces(g: Any) -> None:
    s = sa.from_gymnasium(g)
    g.seed(0)
    assert all(sa.contains(g.sample(), s) for _ in range(10))
    assert all(g.contains(sa.sample(s, rng=i)) for i in range(10))


# -- the protocol on Gymnasium instances ------------------------------------------------------


@given(gymnasium_spaces(), st.integers(0, 2**32 - 1))
def test_contains_agrees_with_gymnasium(g: Any, seed: int) -> None:
    x = sa.sample(g, rng=seed)
    assert sa.contains(x, g)
    for miss in near_misses(x):
        assert sa.contains(miss, g) == safe(g, miss)


@given(
    gymnasium_spaces(classes=("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Text")),
    st.integers(0, 1000),
)
def test_isin_agrees_with_contains(g: Any, seed: int) -> None:
    batch = sa.sample(g, 5, rng=seed)
    assert sa.isin(batch, g).all()
    variants = [batch]
    if isinstance(batch, np.ndarray) and batch.dtype.kind != "U":
        variants += [batch.astype(np.float64), batch.astype(np.int8), batch.astype(np.uint64), batch.astype(bool)]
        variants += [batch.astype(np.int64) + 300, -batch.astype(np.int64) - 1]
    for variant in variants:
        expected = [safe(g, variant[i]) for i in range(5)]
        assert sa.isin(variant, g).tolist() == expected


def test_isin_takes_bool_multidiscrete_batches_as_gymnasium_does() -> None:
    # regression: bool casts safely to MultiDiscrete's integer dtypes, so MultiDiscrete.contains
    # accepts bool arrays in range; the vectorised isin rejected every bool batch
    g = gs.MultiDiscrete([2, 3], dtype=np.int32)
    batch = np.array([[True, False], [False, True]])
    assert g.contains(batch[0]) and g.contains(batch[1])
    assert sa.isin(batch, g).tolist() == [True, True]
    assert sa.isin(batch, gs.MultiDiscrete([2, 3], start=[2, 0])).tolist() == [False, False]


@given(gymnasium_spaces(), st.integers(0, 2**32 - 1))
def test_sample_returns_gymnasium_value_types(g: Any, seed: int) -> None:
    ours = sa.sample(g, rng=seed)
    assert has_gymnasium_types(ours, g)
    assert g.contains(ours)
    origin = typing.get_origin(sa.eltype(g)) or sa.eltype(g)
    assert isinstance(ours, origin)
    assert sa.isin(sa.sample(g, 3, rng=seed), g).all()


def has_gymnasium_types(x: Any, g: Any) -> bool:
    """Whether ``x`` has the value types of ``g.sample()``, recursively through the space."""
    if isinstance(g, gs.Tuple):
        return isinstance(x, tuple) and all(
            has_gymnasium_types(v, s) for v, s in zip(x, g.spaces, strict=True)
        )
    if isinstance(g, gs.Dict):
        return list(x) == list(g.spaces) and all(has_gymnasium_types(x[k], s) for k, s in g.spaces.items())
    if isinstance(g, gs.OneOf):
        return type(x[0]) is np.int64 and has_gymnasium_types(x[1], g.spaces[int(x[0])])
    if isinstance(g, gs.Sequence):
        if g.stack:
            return has_stacked_types(x, g.feature_space)
        return isinstance(x, tuple) and all(has_gymnasium_types(v, g.feature_space) for v in x)
    if isinstance(g, gs.Graph):
        ok = isinstance(x, gs.GraphInstance) and has_stacked_types(x.nodes, g.node_space)
        return ok and (x.edges is None or has_stacked_types(x.edges, g.edge_space))
    reference = g.sample()
    if isinstance(reference, np.ndarray):
        return isinstance(x, np.ndarray) and x.dtype == reference.dtype and x.shape == reference.shape
    return type(x) is type(reference)


def has_stacked_types(x: Any, g: Any) -> bool:
    """Whether ``x`` has the types of Gymnasium's stacked samples of ``g``."""
    if isinstance(g, (gs.Box, gs.Discrete, gs.MultiDiscrete, gs.MultiBinary)):
        return isinstance(x, np.ndarray) and x.dtype == g.dtype
    if isinstance(g, gs.Tuple):
        return isinstance(x, tuple) and all(has_stacked_types(v, s) for v, s in zip(x, g.spaces, strict=True))
    if isinstance(g, gs.Dict):
        return list(x) == list(g.spaces) and all(has_stacked_types(x[k], s) for k, s in g.spaces.items())
    return isinstance(x, tuple) and all(has_gymnasium_types(v, g) for v in x)


@given(gymnasium_spaces())
def test_style_and_cardinality_follow_the_set(g: Any) -> None:
    s = sa.from_gymnasium(g)
    assert sa.SpaceStyle(g) == sa.SpaceStyle(s) == expected_style(g)
    assert sa.cardinality(g) == sa.cardinality(s) == expected_cardinality(g)


@pytest.mark.parametrize("g", FUNDAMENTAL, ids=[str(g) for g in FUNDAMENTAL])
def test_generic_functions_take_gymnasium_spaces(g: Any) -> None:
    s = sa.from_gymnasium(g)
    assert sa.elsize(g) == sa.elsize(s)
    if isinstance(g, gs.Text):
        with pytest.raises(TypeError):
            sa.bounds(g)
    else:
        low, high = sa.bounds(g)
        assert np.all(np.asarray(low) <= np.asarray(high))
    x = sa.sample(g, rng=1)
    if not isinstance(g, gs.Text):
        assert sa.contains(sa.clamp(x, g), g)
    if sa.cardinality(g) < 10**6:
        i = sa.index(x, g)
        assert np.array_equal(np.asarray(sa.element(i, g)), np.asarray(x))


@given(
    gymnasium_spaces(classes=("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Tuple", "Dict")), st.data()
)
def test_clamp_on_gymnasium_spaces(g: Any, data: st.DataObject) -> None:
    x = sa.sample(g, rng=data.draw(st.integers(0, 1000)))
    assert sa.contains(sa.clamp(x, g), g)
    far = perturb(x)
    assert sa.contains(sa.clamp(far, g), g)


def perturb(x: Any) -> Any:
    if isinstance(x, tuple):
        return tuple(perturb(v) for v in x)
    if isinstance(x, dict):
        return {k: perturb(v) for k, v in x.items()}
    return np.asarray(x, dtype=np.float64) * 3 + 7


def test_conversions_are_cached_per_instance() -> None:
    """A conversion is a variant of the instance's plan, and dies with the instance."""
    from spacealg.core import plan

    g = gs.Box(0, 1, shape=(3,))
    assert sa.as_space(g) is sa.as_space(g)
    cache = plan._PLANS
    assert g in cache and plan.kept_plan(g).as_space is sa.as_space(g)  # type: ignore[union-attr]
    gc.collect()  # entries of instances that earlier tests left in reference cycles go first
    held = len(cache)
    del g
    gc.collect()
    assert len(cache) == held - 1  # the entry died with the instance


# -- distributions: sample(g) against g.sample() ------------------------------------------------

N = 4000


def _gymnasium_draws(g: Any, n: int = N) -> list[Any]:
    g.seed(123)
    return [g.sample() for _ in range(n)]


@pytest.mark.parametrize(
    "g",
    [
        gs.Box(-2.0, 3.0, shape=(3,)),
        gs.Box(1.0, np.inf, shape=(2,)),
        gs.Box(-np.inf, -1.0, shape=(2,)),
        gs.Box(-np.inf, np.inf, shape=(2,), dtype=np.float64),
        gs.Box(0, 9, shape=(2,), dtype=np.int16),
        gs.Box(np.array([-np.inf, 0]), np.array([0, np.inf]), dtype=np.int32),
        gs.MultiDiscrete([[2, 3], [4, 5]], start=[[0, -1], [2, 3]], dtype=np.int32),
        gs.MultiBinary([2, 2]),
    ],
    ids=str,
)
def test_sample_distribution_matches_gymnasium_arrays(g: Any) -> None:
    ours = sa.sample(g, N, rng=7).astype(np.float64)
    theirs = np.array(_gymnasium_draws(g), dtype=np.float64)
    assert ours.shape == theirs.shape
    spread = np.maximum(theirs.std(axis=0), 1e-9)
    assert np.all(np.abs(ours.mean(axis=0) - theirs.mean(axis=0)) < 0.15 * spread + 0.05)
    assert np.allclose(ours.std(axis=0), theirs.std(axis=0), rtol=0.12, atol=0.05)
    if g.dtype.kind in "iu" and (not isinstance(g, gs.Box) or g.is_bounded()):
        assert np.array_equal(np.unique(ours), np.unique(theirs))


def _frequencies(values: list[Any], categories: list[Any]) -> np.ndarray:
    counts = np.array([sum(1 for v in values if v == c) for c in categories], dtype=float)
    return counts / len(values)


@pytest.mark.parametrize("g", [gs.Discrete(5, start=-2), gs.Discrete(3, dtype=np.uint8)], ids=str)
def test_sample_distribution_matches_gymnasium_discrete(g: Any) -> None:
    categories = list(range(int(g.start), int(g.start) + int(g.n)))
    ours = sa.sample(g, N, rng=3)
    assert ours.dtype == g.dtype
    theirs = _gymnasium_draws(g)
    assert np.abs(_frequencies(list(ours), categories) - _frequencies(theirs, categories)).max() < 0.04


def test_sample_distribution_matches_gymnasium_text() -> None:
    g = gs.Text(5, min_length=2, charset="abc")
    ours = [str(s) for s in sa.sample(g, N, rng=5)]
    theirs = _gymnasium_draws(g)
    lengths = list(range(2, 6))
    assert (
        np.abs(
            _frequencies([len(s) for s in ours], lengths) - _frequencies([len(s) for s in theirs], lengths)
        ).max()
        < 0.04
    )
    chars = list("abc")
    assert (
        np.abs(_frequencies(list("".join(ours)), chars) - _frequencies(list("".join(theirs)), chars)).max()
        < 0.03
    )


def test_sample_distribution_matches_gymnasium_sequence_oneof_graph() -> None:
    seq = gs.Sequence(gs.Discrete(3))
    ours = [len(s) for s in sa.sample(seq, 2000, rng=1)]
    theirs = [len(s) for s in _gymnasium_draws(seq, 2000)]
    assert abs(np.mean(ours) - np.mean(theirs)) < 0.4 and min(ours) == min(theirs) == 1

    oneof = gs.OneOf([gs.Discrete(2), gs.Box(0, 1), gs.Text(2)])
    tags = [0, 1, 2]
    ours_tags = [int(x[0]) for x in sa.sample(oneof, 3000, rng=2)]
    theirs_tags = [int(x[0]) for x in _gymnasium_draws(oneof, 3000)]
    assert np.abs(_frequencies(ours_tags, tags) - _frequencies(theirs_tags, tags)).max() < 0.04

    graph = gs.Graph(gs.Box(0, 1, shape=(2,)), gs.Discrete(3))
    ours_edges = [0 if x.edges is None else len(x.edges) for x in sa.sample(graph, 600, rng=4)]
    theirs_edges = [0 if x.edges is None else len(x.edges) for x in _gymnasium_draws(graph, 600)]
    assert abs(np.mean(ours_edges) - np.mean(theirs_edges)) < 4.0
    assert {len(x.nodes) for x in sa.sample(graph, 5, rng=4)} == {10}


def test_same_seed_same_sample() -> None:
    for g in GYMNASIUM_TEST_SPACES:
        a, b = sa.sample(g, rng=11), sa.sample(g, rng=11)
        assert sa.to_json(sa.from_gymnasium(g)) is not None
        assert repr(a) == repr(b)


# -- spacealg spaces with no single Gymnasium class: encode / decode ----------------------------


def _convertible(s: Any) -> bool:
    try:
        sa.to_gymnasium(s)
    except TypeError:
        return False
    return True


@given(spaces().filter(_convertible), st.integers(0, 2**32 - 1))
def test_encode(s: Any, seed: int) -> None:
    g = sa.to_gymnasium(s)
    x = sa.sample(s, rng=seed)
    y = sa.encode(x, s)
    assert g.contains(y)
    back = sa.decode(y, s)
    assert sa.contains(back, s)
    assert repr(sa.encode(back, s)) == repr(y)


@given(spaces().filter(_convertible), st.integers(0, 2**32 - 1))
def test_decode(s: Any, seed: int) -> None:
    g = sa.to_gymnasium(s)
    g.seed(seed)
    y = g.sample()
    x = sa.decode(y, s)
    assert sa.contains(x, s)
    assert g.contains(sa.encode(x, s))


def test_encode_labels_by_position() -> None:
    s = sa.FiniteSet("up", "down", "left")
    assert sa.to_gymnasium(s) == gs.Discrete(3)
    assert sa.encode("left", s) == 2 and sa.decode(np.int64(0), s) == "up"
    r = range(10, 0, -3)
    assert sa.to_gymnasium(r) == gs.Discrete(4)
    assert [int(sa.encode(v, r)) for v in r] == [0, 1, 2, 3]
    assert sa.to_gymnasium(sa.Interval(0, 1)) == gs.Box(0.0, 1.0, shape=(), dtype=np.float64)
    assert sa.to_gymnasium(sa.REALS) == gs.Box(-np.inf, np.inf, shape=(), dtype=np.float64)
    assert sa.to_gymnasium(sa.ArraySpace(("a", "b", "c"), 2)) == gs.MultiDiscrete([3, 3])
    assert sa.to_gymnasium(sa.ArraySpace(bool, 2, 2)) == gs.MultiBinary([2, 2])
    assert sa.to_gymnasium(sa.product(("a", "b"), range(3))) == gs.Tuple((gs.Discrete(2), gs.Discrete(3)))
    hybrid = sa.product(("a", "b"), sa.Interval(0, 1))
    assert sa.to_gymnasium(hybrid) == gs.Tuple((gs.Discrete(2), gs.Box(0.0, 1.0, shape=(), dtype=np.float64)))
    assert sa.to_gymnasium(("a", "b")) == gs.Discrete(2)  # plain objects through as_space


# -- error paths -------------------------------------------------------------------------------


class CustomSpace(gs.Space):
    def contains(self, x: Any) -> bool:
        return x == "custom"


def test_unknown_gymnasium_subclass_names_the_class_and_how_to_register() -> None:
    custom = CustomSpace()
    with pytest.raises(TypeError, match=r"CustomSpace.*register"):
        sa.from_gymnasium(custom)
    with pytest.raises(TypeError, match="CustomSpace"):
        sa.SpaceStyle(custom)
    assert sa.contains("custom", custom) and not sa.contains("other", custom)


def test_registering_an_adapter_makes_every_generic_function_accept_the_class() -> None:
    class Dice(gs.Space):
        def contains(self, x: Any) -> bool:
            return x in range(1, 7)

    sa.from_gymnasium.register(Dice)(lambda space: range(1, 7))
    dice = Dice()
    assert sa.cardinality(dice) == 6 and sa.SpaceStyle(dice) == FiniteSpaceStyle(())
    assert sa.to_gymnasium(sa.from_gymnasium(dice)) == gs.Discrete(6, start=1)


@pytest.mark.parametrize(
    "s",
    [
        sa.Interval(0, 1, closed="left"),
        sa.Interval(0, 1, closed="neither"),
        sa.ArraySpace(sa.Interval(0, 1, closed="right"), 2),
        sa.FiniteSet(),
        range(0),
        sa.product(range(2), sa.Interval(0, 1, closed="left")),
    ],
    ids=repr,
)
def test_no_gymnasium_equivalent_raises_type_error_naming_the_space(s: Any) -> None:
    with pytest.raises(TypeError) as info:
        sa.to_gymnasium(s)
    assert "Interval" in str(info.value) or "empty" in str(info.value)


def test_not_a_space_raises_type_error() -> None:
    with pytest.raises(TypeError, match="not a Gymnasium space"):
        sa.from_gymnasium(42)
    with pytest.raises(TypeError):
        sa.to_gymnasium(object())


def test_contains_never_raises_where_gymnasium_does() -> None:
    g = gs.Graph(gs.Box(0, 1, shape=(2,)), gs.Discrete(2))
    bad = gs.GraphInstance(np.zeros((3, 2)), np.array([0, 1]), "links")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(Exception):
            g.contains(bad)
    assert sa.contains(bad, g) is False
    assert sa.contains(object(), gs.Sequence(gs.Box(0, 1), stack=True)) is False
