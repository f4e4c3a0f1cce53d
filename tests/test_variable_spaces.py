"""Laws of spacealg's Text, Sequence, Graph and Categorical spaces."""

from __future__ import annotations

import math
import pickle
import typing
from typing import Any

import numpy as np
import pytest
from gymnasium.spaces import GraphInstance
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.core.styles import FiniteSpaceStyle, UnknownSpaceStyle
from spacealg.spaces.text import ALPHANUMERIC
from spacealg.strategies.spaces import spaces

NAMESPACE = {**vars(sa), "np": np, "spacealg": sa}

texts = st.builds(
    lambda high, low, chars: sa.Text(high, min_length=min(low, high), charset=chars),
    st.integers(0, 5),
    st.integers(0, 3),
    st.one_of(
        st.just(ALPHANUMERIC),
        st.text(alphabet="abcxyz019 ", min_size=1, max_size=5),
        st.frozensets(st.sampled_from("pqrs"), min_size=1),
    ),
)


def _repr_round_trips(space: Any) -> bool:
    """Leaves out the few spaces whose own repr does not evaluate back (empty and bool Boxes)."""
    try:
        return bool(eval(repr(space), NAMESPACE) == space)
    except Exception:
        return False


features = spaces(max_depth=1).filter(_repr_round_trips)
sequences = st.builds(sa.Sequence, features, st.booleans())
graphs = st.builds(sa.Graph, features, st.one_of(st.none(), features))


@st.composite
def categoricals(draw: Any) -> Any:
    dtype = draw(st.sampled_from([np.int64, np.int32, np.int8, np.uint8, np.int16]))
    if draw(st.booleans()):
        start = draw(st.integers(0 if np.dtype(dtype).kind == "u" else -5, 5))
        return sa.Categorical(draw(st.integers(1, 6)), start=start, dtype=dtype)
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    size = math.prod(shape)
    nvec = np.array(draw(st.lists(st.integers(1, 4), min_size=size, max_size=size)), dtype=np.int64).reshape(
        shape
    )
    low = 0 if np.dtype(dtype).kind == "u" else -5
    start = np.array(draw(st.lists(st.integers(low, 5), min_size=size, max_size=size)), dtype=np.int64)
    return sa.Categorical(nvec, start=start.reshape(shape), dtype=dtype)


variable_spaces = st.one_of(texts, sequences, graphs, categoricals())

WEIRD = [
    None,
    object(),
    "abc",
    b"abc",
    3.5,
    float("nan"),
    -(10**40),
    [1, [2, 3]],
    (),
    {"a": 1},
    np.array(["a", 1], dtype=object),
    np.zeros((2, 0)),
    GraphInstance(None, None, None),
    GraphInstance(np.zeros(3), np.zeros(2), "links"),
    GraphInstance([1, 2], None, np.zeros((1, 2))),
]


# -- the protocol laws every variable space keeps -------------------------------------------------


@given(variable_spaces)
def test_contains_never_raises(s: Any) -> None:
    for x in WEIRD:
        assert sa.contains(x, s) in (True, False)


@given(variable_spaces, st.integers(0, 2**32 - 1))
def test_sample(s: Any, seed: int) -> None:
    x = sa.sample(s, rng=seed)
    assert sa.contains(x, s)
    assert repr(sa.sample(s, rng=seed)) == repr(x)  # same seed, same sample
    batch = sa.sample(s, (2, 3), rng=seed)
    assert np.shape(batch)[:2] == (2, 3) if not isinstance(batch, tuple) else True
    assert sa.isin(batch, s).all() and sa.isin(batch, s).shape == (2, 3)


@given(variable_spaces, st.integers(0, 2**32 - 1))
def test_eltype(s: Any, seed: int) -> None:
    origin = typing.get_origin(sa.eltype(s)) or sa.eltype(s)
    assert isinstance(sa.sample(s, rng=seed), origin)


@given(variable_spaces)
def test_repr_pickle_equality_and_hash(s: Any) -> None:
    rebuilt = eval(repr(s), NAMESPACE)
    assert rebuilt == s and hash(rebuilt) == hash(s)
    loaded = pickle.loads(pickle.dumps(s))
    assert loaded == s and hash(loaded) == hash(s) and repr(loaded) == repr(s)
    with pytest.raises(AttributeError):
        s.anything = 1


@given(variable_spaces)
def test_space_style(s: Any) -> None:
    style = sa.SpaceStyle(s)
    assert (sa.cardinality(s) < math.inf) == isinstance(style, FiniteSpaceStyle)
    if isinstance(s, (sa.Sequence, sa.Graph)):
        assert style == UnknownSpaceStyle()
        with pytest.raises(TypeError):
            sa.elements(s)
        with pytest.raises(TypeError):
            sa.bounds(s)


@given(st.one_of(texts, categoricals()).filter(lambda s: sa.cardinality(s) <= 400))
def test_cardinality_elements_index_element(s: Any) -> None:
    items = list(sa.elements(s))
    assert len(items) == sa.cardinality(s)
    assert len({repr(x) for x in items}) == len(items)
    for i, x in enumerate(items):
        assert sa.contains(x, s)
        assert sa.index(x, s) == i
        assert repr(sa.element(i, s)) == repr(x)
    with pytest.raises(ValueError, match="i"):
        sa.element(len(items), s)


# -- Text ------------------------------------------------------------------------------------------


def test_text_follows_gymnasium_defaults_and_keeps_character_order() -> None:
    s = sa.Text(3, charset="ba")
    assert (s.min_length, s.max_length, s.charset) == (1, 3, "ba")
    assert s == sa.Text(3, charset="ab") and hash(s) == hash(sa.Text(3, charset="ab"))
    assert list(sa.elements(s))[:4] == ["b", "a", "bb", "ba"]
    assert sa.Text(5).charset == ALPHANUMERIC
    assert sa.Text(2, charset={"z", "a"}).charset == "az"
    assert sa.Text(2, charset="aab").charset == "ab"
    assert sa.cardinality(sa.Text(3, charset="ab")) == 2 + 4 + 8
    assert sa.cardinality(sa.Text(2, min_length=0, charset="")) == 1
    assert "" not in sa.Text(2) and "" in sa.Text(2, min_length=0)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"max_length": -1}, ValueError, "max_length"),
        ({"max_length": 2, "min_length": 3}, ValueError, "min_length"),
        ({"max_length": 2.5}, TypeError, "max_length"),
        ({"max_length": 2, "charset": ["ab"]}, ValueError, "charset"),
        ({"max_length": 2, "charset": 5}, TypeError, "charset"),
    ],
)
def test_text_constructor_errors_name_the_argument(kwargs: dict[str, Any], error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        sa.Text(**kwargs)


def test_text_has_no_bounds_or_clamp() -> None:
    with pytest.raises(TypeError, match="clamp"):
        sa.clamp("zz", sa.Text(2))
    with pytest.raises(TypeError, match="bounds"):
        sa.bounds(sa.Text(2))


def test_text_sampling_is_uniform_in_length_and_characters() -> None:
    batch = sa.sample(sa.Text(4, min_length=1, charset="xyz"), 6000, rng=0)
    lengths = np.char.str_len(batch)
    assert set(lengths.tolist()) == {1, 2, 3, 4}
    assert np.abs(np.bincount(lengths)[1:] / 6000 - 0.25).max() < 0.03
    chars = np.array(list("".join(batch.tolist())))
    assert np.abs(np.array([(chars == c).mean() for c in "xyz"]) - 1 / 3).max() < 0.03


# -- Sequence --------------------------------------------------------------------------------------


def test_sequence_members_and_stacked_forms() -> None:
    s = sa.Sequence(range(4))
    assert (0, 3, 3) in s and () in s and [1, 2] in s and (4,) not in s and np.array([1]) not in s
    stacked = sa.Sequence(sa.Box(0.0, 1.0, shape=(2,)), stack=True)
    x = stacked.sample(rng=1)
    assert isinstance(x, np.ndarray) and x.shape[1:] == (2,) and x.dtype == np.float32
    assert np.zeros((0, 2)) in stacked and np.zeros((3, 2)) in stacked and np.zeros(2) not in stacked
    assert np.full((3, 2), 2.0) not in stacked
    text = sa.Sequence(sa.Text(2), stack=True)
    assert isinstance(text.sample(rng=1), tuple) and ("ab", "c") in text and np.array(["ab"]) not in text
    named = sa.Sequence(sa.DictProduct(a=range(2), b=sa.Box(0, 1, shape=(3,))), stack=True)
    y = named.sample(rng=2)
    assert set(y) == {"a", "b"} and len(y["a"]) == len(y["b"])
    assert {"a": np.zeros(2, int), "b": np.zeros((3, 3))} not in named  # lengths differ
    assert sa.Sequence(range(2)) != sa.Sequence(range(2), stack=True)


def test_sequence_length_is_geometric_as_gymnasium() -> None:
    lengths = np.array([len(x) for x in sa.sample(sa.Sequence(range(2)), 4000, rng=0)])
    assert lengths.min() == 1
    assert abs(lengths.mean() - 4.0) < 0.25  # mean of the geometric distribution with p=0.25
    assert abs((lengths == 1).mean() - 0.25) < 0.03


@given(sequences, st.integers(0, 1000))
def test_clamp(s: Any, seed: int) -> None:
    x = sa.sample(s, rng=seed)
    assert repr(sa.clamp(x, s)) == repr(x)  # members are returned unchanged
    boxed = sa.Sequence(sa.Box(-1.0, 1.0, shape=(2,)), stack=s.stack)
    far = np.full((3, 2), 5.0) if s.stack else (np.full(2, 5.0), np.full(2, -7.0))
    assert sa.contains(sa.clamp(far, boxed), boxed)


def test_sequence_clamp_rejects_non_sequences() -> None:
    with pytest.raises(TypeError, match="tuple"):
        sa.clamp(3, sa.Sequence(range(2)))


# -- Graph -----------------------------------------------------------------------------------------


def test_graph_members() -> None:
    g = sa.Graph(sa.Box(-1.0, 1.0, shape=(2,)), range(3))
    links = np.array([[0, 1], [3, 2]])
    assert GraphInstance(np.zeros((4, 2)), np.array([0, 2]), links) in g
    assert GraphInstance(np.zeros((4, 2)), None, None) in g
    assert GraphInstance(np.zeros((4, 2)), np.array([0, 2]), np.array([[0, 1], [4, 2]])) not in g  # no node 4
    assert GraphInstance(np.zeros((4, 2)), np.array([0, 2]), links[:1]) not in g  # one link per edge
    assert GraphInstance(np.zeros((4, 2)), np.array([0, 5]), links) not in g
    assert GraphInstance(np.zeros((4, 2)), np.array([0, 2]), links.astype(float)) not in g
    assert GraphInstance(np.zeros((4, 2)), np.array([0, 2]), None) not in g
    assert GraphInstance(np.zeros((4, 2)), np.array([0]), np.array([[0, 1]])) not in sa.Graph(
        g.node_space, None
    )
    assert (np.zeros((4, 2)), None, None) not in g  # a plain tuple is not a graph


def test_graph_sampling_follows_gymnasium() -> None:
    g = sa.Graph(sa.Box(0.0, 1.0, shape=(3,)), sa.Text(2))
    graphs = list(sa.sample(g, 300, rng=0))
    assert {len(x.nodes) for x in graphs} == {10}
    edges = [0 if x.edges is None else len(x.edges) for x in graphs]
    assert max(edges) < 90 and abs(np.mean(edges) - 44.5) < 4
    with_edges = next(x for x in graphs if x.edges is not None)
    assert isinstance(with_edges.edges, tuple) and with_edges.edge_links.dtype == np.int32
    assert all(x.edges is None and x.edge_links is None for x in sa.sample(sa.Graph(range(2)), 5, rng=1))


@given(graphs, st.integers(0, 1000))
def test_graph_clamp(g: Any, seed: int) -> None:
    x = sa.sample(g, rng=seed)
    assert sa.clamp(x, g) is x
    boxed = sa.Graph(sa.Box(-1.0, 1.0, shape=(2,)), None if g.edge_space is None else range(3))
    far = GraphInstance(np.full((2, 2), 4.0), np.array([7, -1]), np.array([[0, 5], [1, 1]]))
    assert sa.contains(sa.clamp(far, boxed), boxed)


# -- Categorical -----------------------------------------------------------------------------------


def test_categorical_canonical_forms() -> None:
    assert sa.Categorical(3, start=1) == range(1, 4)
    assert sa.Categorical([4, 4, 4]) == sa.ArraySpace(range(4), 3)
    assert sa.Categorical([[2, 2]], start=[[5, 5]]) == sa.ArraySpace(range(5, 7), 1, 2)
    assert sa.Categorical(np.array(3)) == sa.ArraySpace(range(3))
    assert isinstance(sa.Categorical(3, dtype=np.int32), sa.Categorical)
    assert isinstance(sa.Categorical([2, 3]), sa.Categorical)
    assert sa.Categorical(3, dtype=np.int32) != sa.Categorical(np.array(3), dtype=np.int32)  # scalar vs 0-d
    assert sa.Categorical([2, 3], start=[1, 1], dtype=np.int8) == sa.Categorical(
        np.array([2, 3]), start=np.array([1, 1]), dtype=np.int8
    )
    assert sa.ArraySpace(sa.Categorical(2, dtype=np.int8), 3) == sa.Categorical([2, 2, 2], dtype=np.int8)


def test_categorical_membership_is_by_value() -> None:
    s = sa.Categorical(3, start=1, dtype=np.int32)
    assert 1 in s and np.int64(3) in s and 2.0 in s and np.array(2) in s
    assert 0 not in s and 2.5 not in s and "1" not in s and np.array([1]) not in s
    assert type(s.sample(rng=0)) is np.int32 and s.sample(4, rng=0).dtype == np.int32
    a = sa.Categorical([[2, 3], [3, 2]], start=[[10, 20], [30, 40]], dtype=np.int8)
    assert np.array([[11, 22], [32, 41]]) in a and np.array([[12, 22], [32, 41]]) not in a
    assert sa.bounds(s) == (1, 3) and sa.clamp(7, s) == 3 and type(sa.clamp(7, s)) is np.int32
    assert np.array_equal(sa.clamp(np.array([[0.0, 99], [31.4, 41]]), a), [[10, 22], [31, 41]])


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "name"),
    [
        ((0,), {}, ValueError, "nvec"),
        (([1, -1],), {}, ValueError, "nvec"),
        ((3,), {"dtype": np.float32}, ValueError, "dtype"),
        ((300,), {"dtype": np.int8}, ValueError, "dtype"),
        (([2, 2],), {"start": [1, 2, 3]}, ValueError, "start"),
        (("ab",), {}, TypeError, "nvec"),
        ((3,), {"start": [1, 2]}, ValueError, "start"),
    ],
)
def test_categorical_constructor_errors_name_the_argument(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type, name: str
) -> None:
    with pytest.raises(error, match=name):
        sa.Categorical(*args, **kwargs)


@given(categoricals(), st.integers(0, 1000))
def test_categorical_issubspace(s: Any, seed: int) -> None:
    assert sa.issubspace(s, s)
    if isinstance(s, sa.Categorical) and not s.scalar:
        low, high = np.asarray(s.low.astype(np.int64) - 1), np.asarray(s.high.astype(np.int64) + 1)
        wider = sa.Box(low, high, shape=s.shape, dtype=np.int64)
        assert sa.issubspace(s, wider)
        assert sa.contains(sa.sample(s, rng=seed), wider)
