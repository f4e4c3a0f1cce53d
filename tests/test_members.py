"""Laws of ``members(space)``: it always yields members, of spacealg spaces, plain objects
and Gymnasium spaces (in Gymnasium's dtypes), and it shrinks toward simple members."""

from __future__ import annotations

import importlib.util

import gymnasium.spaces as gs
import numpy as np
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.core.space import Space
from spacealg.strategies import gym_spaces, gymnasium_spaces, members, spaces

pytestmark = pytest.mark.filterwarnings("ignore:.*precision lowered.*", "ignore:.*Casting input x.*")

# -- members always yields members --------------------------------------------------------

VARIABLE_SIZE = [
    sa.Text(4),
    sa.Text(3, min_length=0, charset="xyz"),
    sa.Sequence(range(5)),
    sa.Sequence(sa.Box(-1.0, 1.0, shape=(2,)), stack=True),
    sa.Sequence(sa.FiniteSet("a", "b"), stack=True),
    sa.Sequence(sa.TupleProduct(range(3), sa.Interval(0, 1)), stack=True),
    sa.Graph(sa.Box(-1.0, 1.0, shape=(2,)), range(3)),
    sa.Graph(range(4)),
    sa.Categorical(3, start=-1, dtype=np.int8),
    sa.Categorical([2, 5], start=[1, -3], dtype=np.int16),
    sa.Categorical([3, 4]),
]


def leaves_and_variable() -> st.SearchStrategy:
    return st.one_of(spaces(), st.sampled_from(VARIABLE_SIZE))


@given(st.data())
def test_members_yields_members(data):
    space = data.draw(spaces(), label="space")
    x = data.draw(members(space), label="x")
    assert sa.contains(x, space)


@given(st.data())
def test_members_yields_members_of_variable_size_and_categorical_spaces(data):
    space = data.draw(
        st.recursive(
            st.sampled_from(VARIABLE_SIZE),
            lambda children: st.one_of(
                st.lists(children, min_size=1, max_size=2).map(lambda p: sa.TupleProduct(*p)),
                st.lists(children, min_size=1, max_size=2).map(lambda p: sa.OneOf(*p)),
                children.map(sa.Sequence),
            ),
            max_leaves=4,
        ),
        label="space",
    )
    x = data.draw(members(space), label="x")
    assert sa.contains(x, space)


PLAIN = [
    (1, 2, 3),
    ["up", "down"],
    {3, 1},
    frozenset("ab"),
    range(2, 9, 3),
    bool,
    float,
    np.int8,
    np.float32,
    {"a": bool, "b": range(3)},
]


@pytest.mark.parametrize("obj", PLAIN, ids=repr)
@given(data=st.data())
def test_members_of_plain_objects_are_members(obj, data):
    assert sa.contains(data.draw(members(obj)), obj)


# Gymnasium spaces of every class, with non-default dtypes and starts


def gymnasium_leaves() -> st.SearchStrategy[gs.Space]:
    dtypes = st.sampled_from([np.float16, np.float32, np.float64])
    ints = st.sampled_from([np.int8, np.int32, np.int64, np.uint8])
    return st.one_of(
        st.builds(lambda d: gs.Box(-2.0, 3.0, shape=(2,), dtype=d), dtypes),
        st.builds(lambda d: gs.Box(-np.inf, np.inf, shape=(3,), dtype=d), dtypes),
        st.just(gs.Box(np.array([0.0, -np.inf]), np.array([1.0, 0.5]), dtype=np.float32)),
        st.builds(lambda d: gs.Box(0, 9, shape=(2, 2), dtype=d), ints),
        st.builds(lambda n, s: gs.Discrete(n, start=s), st.integers(1, 5), st.integers(-3, 3)),
        st.builds(lambda d: gs.Discrete(4, start=1, dtype=d), ints),
        st.builds(lambda d: gs.MultiDiscrete([2, 3], dtype=d), ints),
        st.just(gs.MultiDiscrete([[2, 3], [4, 1]], start=[[0, 1], [-2, 5]])),
        st.just(gs.MultiBinary(3)),
        st.just(gs.MultiBinary([2, 2])),
        st.just(gs.Text(4)),
        st.just(gs.Text(3, min_length=0, charset="ab")),
    )


def gymnasium_spaces_for_test() -> st.SearchStrategy[gs.Space]:
    return st.recursive(
        gymnasium_leaves(),
        lambda children: st.one_of(
            st.lists(children, min_size=1, max_size=3).map(lambda p: gs.Tuple(p)),
            st.lists(children, min_size=1, max_size=3).map(
                lambda p: gs.Dict({f"k{i}": s for i, s in enumerate(p)})
            ),
            st.lists(children, min_size=1, max_size=2).map(lambda p: gs.OneOf(p)),
            st.builds(gs.Sequence, children),
            st.builds(lambda s: gs.Sequence(s, stack=True), gymnasium_leaves()),
        ),
        max_leaves=4,
    )


GRAPHS = [
    gs.Graph(gs.Box(-1.0, 1.0, shape=(2,)), gs.Discrete(3)),
    gs.Graph(gs.Discrete(4), None),
    gs.Graph(gs.Box(0, 5, shape=(), dtype=np.int32), gs.Box(-1.0, 1.0, shape=(1,))),
]


@given(st.data())
def test_members_of_gymnasium_spaces_satisfy_gymnasium_contains(data):
    space = data.draw(st.one_of(gymnasium_spaces_for_test(), st.sampled_from(GRAPHS)), label="space")
    x = data.draw(members(space), label="x")
    assert space.contains(x)
    assert sa.contains(x, space)


@given(st.data())
def test_members_of_generated_gymnasium_spaces_satisfy_gymnasium_contains(data):
    space = data.draw(gymnasium_spaces(), label="space")
    x = data.draw(members(space), label="x")
    assert space.contains(x)


# Regression: Gymnasium's Graph takes any node and edge space and reads the nodes/edges as
# its batch_space form (a tuple of members for Sequence, Text, OneOf; tuples of stacks for
# Tuple). members() stacked them as np.asarray(values, dtype=space.dtype), right only for
# Box and Discrete features: empty sequences failed to reshape, (0,) became array([0]).
GRAPHS_OF_ANY_FEATURES = [
    pytest.param(gs.Graph(gs.Sequence(gs.Discrete(1)), None), lambda x: True, id="sequence-nodes-simplest"),
    pytest.param(
        gs.Graph(gs.Sequence(gs.Discrete(1)), None),
        lambda x: len(x.nodes) >= 2 and any(len(n) for n in x.nodes),
        id="sequence-nodes",
    ),
    pytest.param(
        gs.Graph(gs.Sequence(gs.Discrete(2), stack=True), None),
        lambda x: any(len(n) for n in x.nodes),
        id="stacked-sequence-nodes",
    ),
    pytest.param(
        gs.Graph(gs.Text(3), gs.Tuple((gs.Discrete(2), gs.Box(0.0, 1.0, shape=(2,))))),
        lambda x: x.edges is not None and len(x.edge_links) >= 2,
        id="text-nodes-tuple-edges",
    ),
    pytest.param(
        gs.Graph(gs.OneOf([gs.Discrete(2), gs.Text(2)]), gs.Dict({"a": gs.Discrete(3)})),
        lambda x: x.edges is not None and len(x.edge_links) >= 2,
        id="oneof-nodes-dict-edges",
    ),
]


@pytest.mark.parametrize(("space", "condition"), GRAPHS_OF_ANY_FEATURES)
def test_members_of_gymnasium_graphs_stack_any_features_as_gymnasium_does(space, condition):
    # the first graph found is checked: shrinking it (find's default) asserted nothing and was
    # most of this test's time (about 10 s for the text-node graphs)
    x = find(members(space), condition, settings=settings(phases=[Phase.generate], database=None))
    assert space.contains(x)
    assert sa.contains(x, space)


@pytest.mark.skipif(importlib.util.find_spec("gym") is None, reason="gym is not installed")
@given(st.data())
def test_members_of_generated_gym_spaces_satisfy_gym_contains(data):
    space = data.draw(gym_spaces(), label="space")
    x = data.draw(members(space), label="x")
    assert space.contains(x)


def test_members_of_a_gymnasium_box_have_its_dtype():
    x = find(members(gs.Box(-1.0, 1.0, shape=(2,), dtype=np.float16)), lambda x: True)
    assert x.dtype == np.float16
    d = find(members(gs.Discrete(3, start=2, dtype=np.int8)), lambda x: True)
    assert type(d) is np.int8 and d == 2


@given(st.data())
def test_members_of_gym_spaces_satisfy_gym_contains(data):
    gym_spaces = pytest.importorskip("gym.spaces")
    space = data.draw(
        st.sampled_from(
            [
                gym_spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32),
                gym_spaces.Discrete(4, start=1),
                gym_spaces.MultiDiscrete([2, 3]),
                gym_spaces.MultiBinary(3),
                gym_spaces.Tuple((gym_spaces.Discrete(2), gym_spaces.Box(0, 1, shape=(1,)))),
                gym_spaces.Dict({"a": gym_spaces.Discrete(2)}),
            ]
        )
    )
    assert space.contains(data.draw(members(space)))


def test_members_of_an_empty_space_is_nothing():
    assert members(sa.FiniteSet()).is_empty
    assert members(range(3, 3)).is_empty
    assert members(sa.Text(2, charset="")).is_empty


# -- users register their own kinds -------------------------------------------------------


class Even(Space):
    """The even integers in [0, 2n) (a user's space with contains and sample only)."""

    _fields = ("n",)

    def __init__(self, n: int) -> None:
        self._set(n=n)


@sa.contains.register(Even)
def _even_contains(x, space):
    return isinstance(x, (int, np.integer)) and x % 2 == 0 and 0 <= x < 2 * space.n


@sa.sample.register(Even)
def _even_sample(space, size=None, *, rng=None):
    return 2 * int(sa.core.rng.as_generator(rng).integers(space.n))


@given(st.data())
def test_members_falls_back_on_sample_for_unregistered_kinds(data):
    assert sa.contains(data.draw(members(Even(5))), Even(5))


def test_members_accepts_registrations_for_new_kinds():
    class Odd(Even):
        pass

    members.register(Odd)(lambda space: st.integers(0, space.n - 1).map(lambda k: 2 * k + 1))
    assert find(members(Odd(4)), lambda x: x > 4) == 5


def test_members_of_an_unknown_object_raises_type_error():
    with pytest.raises(TypeError):
        members(object())


# -- shrinking toward simple members ------------------------------------------------------


def simplest(space):
    return find(members(space), lambda x: True)


@pytest.mark.parametrize(
    ("space", "expected"),
    [
        (sa.Interval(2, 5), 2.0),
        (sa.Interval(-5, -2), -2.0),
        (sa.Interval(-1, 1, closed="neither"), 0.0),
        (sa.REALS, 0.0),
        (sa.Interval(0, -0.0), 0.0),  # regression: Hypothesis rejects max_value=-0.0 below min_value=0.0
        (sa.FiniteSet("up", "down", "left"), "up"),
        (range(-10, 10, 3), -1),
        (range(5, 50), 5),
        (range(-3, 0), -1),
        (sa.TupleProduct(range(2, 4), sa.FiniteSet("b", "a")), (2, "b")),
        (sa.DictProduct(a=range(2), b=sa.Interval(1, 2)), {"a": 0, "b": 1.0}),
        (sa.OneOf(sa.FiniteSet("x"), range(3)), (0, "x")),
        (sa.Text(5, charset="qrs"), "q"),
        (sa.Text(5, min_length=0), ""),
        (sa.Sequence(range(3)), ()),
        (sa.Categorical(3, start=4, dtype=np.int8), 4),
        (gs.Discrete(5, start=-2), 0),
        (gs.Text(3, min_length=0), ""),
        (gs.Sequence(gs.Discrete(3)), ()),
    ],
    ids=repr,
)
def test_members_shrink_to_a_bound_zero_or_the_first_item(space, expected):
    found = simplest(space)
    assert found == expected
    assert (
        type(found) is type(expected) or (isinstance(expected, (int, float)) and isinstance(found, np.number))
    )


@pytest.mark.parametrize(
    ("space", "expected"),
    [
        (sa.Box(-1.0, 1.0, shape=(3,)), [0.0, 0.0, 0.0]),
        (sa.Box(2, 9, shape=(2, 2), dtype=np.uint8), [[2, 2], [2, 2]]),
        (sa.Box(np.array([1.0, -5.0, -np.inf]), np.array([3.0, 5.0, -2.0])), [1.0, 0.0, -2.0]),
        (sa.Box(np.array([1, -5]), np.array([3, -2]), dtype=np.int64), [1, -2]),
        (sa.Box(0.0, -0.0, shape=(2,), dtype=np.float16), [0.0, 0.0]),  # regression, as Interval(0, -0.0)
        (sa.ArraySpace(sa.FiniteSet("b", "a"), 2), ["b", "b"]),
        (sa.ArraySpace(bool, 3), [False, False, False]),
        (gs.MultiDiscrete([3, 3], start=[1, -1]), [1, 0]),
        (gs.MultiBinary(2), [0, 0]),
    ],
    ids=repr,
)
def test_members_of_array_spaces_shrink_entrywise(space, expected):
    found = simplest(space)
    assert np.array_equal(found, np.array(expected))


def test_members_shrink_sequences_and_graphs_to_the_smallest():
    graph = simplest(sa.Graph(sa.Box(0.0, 1.0, shape=(2,)), range(3)))
    assert graph.nodes.shape == (1, 2) and graph.edges is None
    stacked = simplest(sa.Sequence(sa.Box(0.0, 1.0, shape=(2,)), stack=True))
    assert stacked.shape == (0, 2)


def test_members_shrink_to_the_simplest_member_meeting_a_condition():
    assert find(members(range(-5, 100)), lambda x: x > 10) == 11
    assert find(members(sa.FiniteSet("a", "b", "c")), lambda x: x != "a") == "b"
    assert find(members(sa.Text(6, charset="ab")), lambda s: "b" in s) == "b"
    assert find(members(sa.Sequence(range(4))), lambda s: len(s) >= 2) == (0, 0)
    found = find(members(sa.Box(0, 10, shape=(4,), dtype=np.int64)), lambda x: x[1] >= 3)
    assert found[1] == 3 and set(found.tolist()) <= {0, 3}  # other entries at zero or filled alike
