"""Laws and error paths of spacealg.serialize (to_json / from_json)."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import math
import pkgutil
from typing import Annotated, Any, Literal

import gymnasium.spaces as gs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg import serialize
from spacealg.serialize import DocumentError, from_json, to_json
from spacealg.strategies import gymnasium_spaces, spaces


def round_trip(space: Any) -> Any:
    """Through JSON text, as a config file would carry it."""
    return from_json(json.dumps(to_json(space), allow_nan=False))


# -- laws -----------------------------------------------------------------------------------


@given(spaces())
def test_from_json_inverts_to_json(space: Any) -> None:
    back = round_trip(space)
    assert sa.as_space(back) == sa.as_space(space)
    assert type(back) is type(space)
    assert repr(back) == repr(space)


@given(spaces())
def test_to_json_is_strict_json(space: Any) -> None:
    doc = to_json(space)
    text = json.dumps(doc, allow_nan=False)  # raises on inf/nan floats
    assert json.loads(text) == doc
    assert doc["version"] == serialize.VERSION


@given(spaces(), st.integers(0, 2**32 - 1))
def test_round_trip_keeps_samples(space: Any, seed: int) -> None:
    """Equal spaces sample alike: the decoded space draws the same members."""
    back = round_trip(space)
    a, b = sa.sample(space, rng=seed), sa.sample(back, rng=seed)
    assert repr(a) == repr(b)


# -- each kind ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "space",
    [
        sa.Interval(0, 1),
        sa.Interval(-math.inf, 2.5, closed="right"),
        sa.Interval(-math.inf, math.inf, closed="neither"),
        sa.REALS,
        sa.BOOL,
        sa.FiniteSet("up", 3, 2.5, True, None, ("a", 1), (("nested",), 2), math.inf, -math.inf),
        sa.FiniteSet(),
        range(3, -9, -3),
        range(0),
        sa.ArraySpace(bool, 3, 4),
        sa.ArraySpace(range(1, 6), 2, 3),
        sa.ArraySpace(("cat", "dog"), 2),
        sa.ArraySpace(sa.Interval(0, 1, closed="left"), 2),
        sa.ArraySpace(np.float32, 3),
        sa.ArraySpace(np.int8, 2, 2),
        sa.TupleProduct(bool, float, np.uint8),
        sa.OneOf(("left", "right"), sa.Interval(0, 1), sa.TupleProduct(range(2), bool)),
        sa.DictProduct({3: sa.BOOL, ("a", 1): range(2), None: float}),
        sa.DictProduct(zeta=bool, alpha=range(2), mid=sa.DictProduct(y=float, x=bool)),
        sa.Text(3, charset="ba"),
        sa.Text(0, min_length=0, charset=""),
        sa.Sequence(bool),
        sa.Sequence(sa.TupleProduct(range(3), sa.Interval(0, 1)), stack=True),
        sa.Graph(sa.Box(0.0, 1.0, shape=(2,)), ("near", "far")),
        sa.Graph(range(5)),
    ],
    ids=repr,
)
def test_round_trip_of_each_kind(space: Any) -> None:
    back = round_trip(space)
    assert back == space and type(back) is type(space) and repr(back) == repr(space)


def test_finite_set_keeps_item_order_and_types() -> None:
    space = sa.FiniteSet("b", 1.0, 2, False, (1, "x"))
    back = round_trip(space)
    assert back.items == space.items
    assert [type(i) for i in back.items] == [type(i) for i in space.items]


def test_non_finite_labels_are_tagged() -> None:
    doc = to_json(sa.FiniteSet("inf", math.inf))
    assert doc["space"]["items"] == ["inf", {"float": "inf"}]
    assert round_trip(sa.FiniteSet("inf", math.inf)).items == ("inf", math.inf)


def test_dict_keeps_key_order() -> None:
    space = sa.DictProduct([("z", bool), ("a", range(3)), ("m", float)])
    assert list(round_trip(space).keys()) == ["z", "a", "m"]
    assert list(to_json(space)["space"]["spaces"]) == ["z", "a", "m"]


def test_dict_with_label_keys_uses_pairs() -> None:
    space = sa.DictProduct([(2, bool), ((1, "a"), range(3))])
    pairs = to_json(space)["space"]["spaces"]
    assert pairs[0][0] == 2 and pairs[1][0] == [1, "a"]
    assert list(round_trip(space).keys()) == [2, (1, "a")]


def _extreme_bounds(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.array([[False, True], [False, False]]), np.array([[True, True], [False, True]])
    lo, hi = (-3, 7) if kind == "f" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    return np.array([[0, 1], [lo, 0]], dtype=dtype), np.array([[1, 1], [1, hi]], dtype=dtype)


@pytest.mark.parametrize(
    "dtype", [np.float16, np.float32, np.float64, np.int8, np.int64, np.uint8, np.uint64, np.bool_]
)
def test_box_keeps_dtype_and_per_entry_bounds(dtype: Any) -> None:
    low, high = _extreme_bounds(dtype)
    space = sa.Box(low, high, dtype=dtype)
    back = round_trip(space)
    assert back == space and back.dtype == space.dtype and back.shape == (2, 2)
    assert np.array_equal(back.low, space.low) and np.array_equal(back.high, space.high)


def test_box_keeps_unbounded_masks() -> None:
    low = np.array([-np.inf, 0.0, -np.inf])
    high = np.array([np.inf, np.inf, 4.0])
    for dtype in (np.float32, np.int32, np.int64):
        space = sa.Box(low, high, dtype=dtype)
        back = round_trip(space)
        assert back == space
        assert np.array_equal(back.bounded_below, space.bounded_below)
        assert np.array_equal(back.bounded_above, space.bounded_above)
    doc = to_json(sa.Box(low, high, dtype=np.int64))["space"]
    assert doc["low"] == ["-inf", 0, "-inf"] and doc["high"] == ["inf", "inf", 4]


def test_box_with_huge_integer_bounds_stays_equal() -> None:
    """Ints beyond 2**53 beside an unbounded entry: exact ints win over the "inf" repr."""
    space = sa.Box(np.array([-np.inf, 0]), np.array([2**62 + 1, 5]), dtype=np.int64)
    space = sa.Box(np.array([space.low[0], 0]), np.array([2**62 + 1, 5], dtype=np.int64), dtype=np.int64)
    back = round_trip(space)
    assert back == space and int(back.high[0]) == 2**62 + 1


def test_box_of_empty_shape() -> None:
    for shape in [(0,), (2, 0), (0, 3)]:
        space = sa.Box(0.0, 1.0, shape=shape)
        assert round_trip(space) == space


@pytest.mark.parametrize("t", [bool, float, int, str, np.float32, np.int8, np.uint16, np.bool_])
def test_types_round_trip_as_themselves(t: type) -> None:
    assert round_trip(t) is t


@sa.spaceclass
class Pose:
    position: Annotated[np.ndarray, sa.Box(-1.0, 1.0, shape=(2,))]
    mode: Literal["walk", "run"]
    moving: bool


@sa.spaceclass(frozen=True)
class Scene:
    pose: Pose
    light: Annotated[float, sa.Interval(0, 1)]


def test_dataclass_spaces_round_trip() -> None:
    for space in [
        sa.space(Pose),
        sa.space(Scene),
        sa.DataclassSpace(
            Pose, {"position": sa.Box(0.0, 1.0, shape=(2,)), "mode": ("walk",), "moving": bool}
        ),
    ]:
        back = round_trip(space)
        assert back == space and repr(back) == repr(space)
    assert to_json(Scene) == to_json(sa.space(Scene))


def test_dataclasses_sharing_a_name_round_trip_to_their_own_class() -> None:
    """Regression: the registry kept only the latest class per ``module.QualName``, so a
    space of an earlier class of that name (a class redefined in a notebook, classes made by
    ``make_dataclass``) came back as the later class with explicit fields, unequal."""
    import dataclasses
    from typing import Annotated

    first = dataclasses.make_dataclass("Twin", [("a", Annotated[object, range(2)])])
    second = dataclasses.make_dataclass("Twin", [("a", Annotated[object, range(3)])])
    s1, s2 = sa.space(first), sa.space(second)
    assert round_trip(s1).cls is first and round_trip(s1) == s1
    assert round_trip(s2).cls is second and round_trip(s2) == s2
    sa.DataclassSpace(first)  # declaring the first again makes it the latest
    assert round_trip(s2).cls is second
    override = sa.DataclassSpace(first, {"a": range(5)})  # fields no class declares: the latest
    assert round_trip(override) == override


def test_gymnasium_style_leaves_are_encoded_through_as_space() -> None:
    """Plain objects are converted with as_space; the decoded space equals the conversion."""
    for obj in [("a", "b"), ["x", 1], {3, 1, 2}, {"a": (1, 2)}]:
        assert round_trip(obj) == sa.as_space(obj)


# -- error paths ------------------------------------------------------------------------------


def _doc(node: Any) -> dict[str, Any]:
    return {"format": serialize.FORMAT, "version": 1, "space": node}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("{not json", "not valid JSON"),
        ([], "the document: expected an object"),
        ({"space": {"kind": "range", "stop": 3}}, "missing field 'version'"),
        ({"version": 2, "space": {"kind": "range", "stop": 3}}, "unsupported version 2"),
        ({"version": True, "space": {"kind": "range", "stop": 3}}, "at version: expected an int"),
        ({"version": 1}, "missing field 'space'"),
        ({"format": "other", "version": 1, "space": {}}, "at format"),
        ({"version": 1, "space": {"kind": "range", "stop": 3}, "extra": 1}, "unexpected field(s) 'extra'"),
        (_doc({"kind": "klein-bottle"}), "unknown kind 'klein-bottle'"),
        (_doc({"low": 0}), "missing field 'kind'"),
        (_doc("interval"), "at space: expected an object"),
        (_doc({"kind": "interval", "low": 0}), "missing field 'high'"),
        (_doc({"kind": "interval", "low": 0, "high": "1"}), "space.high: expected a number"),
        (_doc({"kind": "interval", "low": 0, "high": True}), "space.high: expected a number"),
        (_doc({"kind": "interval", "low": 2, "high": 1}), "must not exceed high"),
        (_doc({"kind": "interval", "low": 0, "high": 1, "closed": "sideways"}), "closed must be one of"),
        (_doc({"kind": "interval", "low": 0, "high": 1, "lo": 0}), "unexpected field(s) 'lo'"),
        (_doc({"kind": "finite", "items": "abc"}), "space.items: expected a list"),
        (_doc({"kind": "finite", "items": ["a", {"b": 1}]}), "space.items[1]: expected a label"),
        (_doc({"kind": "range", "start": 0, "stop": 2.5}), "space.stop: expected an int"),
        (_doc({"kind": "range", "stop": 3, "step": 0}), "space"),
        (_doc({"kind": "box", "dtype": "complex64", "shape": [1], "low": 0, "high": 1}), "space.dtype"),
        (_doc({"kind": "box", "dtype": "float32x", "shape": [1], "low": 0, "high": 1}), "unknown dtype"),
        (
            _doc({"kind": "box", "dtype": "float32", "shape": [2], "low": [0], "high": 1}),
            "space.low: expected a list of length 2",
        ),
        (
            _doc({"kind": "box", "dtype": "float32", "shape": [2], "low": [0, "x"], "high": 1}),
            "space.low[1]: expected a number",
        ),
        (_doc({"kind": "box", "dtype": "float32", "shape": [-1], "low": 0, "high": 1}), "space.shape"),
        (_doc({"kind": "box", "dtype": "uint8", "shape": [1], "low": 0, "high": 300}), "space"),
        (
            _doc({"kind": "array", "base": {"kind": "type", "name": "object"}, "dims": [2]}),
            "space.base.name: unknown type",
        ),
        (
            _doc({"kind": "array", "base": {"kind": "type", "name": "numpy.object"}, "dims": [2]}),
            "unknown type",
        ),
        (
            _doc({"kind": "tuple", "spaces": [{"kind": "range", "stop": 2}, {"kind": "nope"}]}),
            "space.spaces[1].kind",
        ),
        (
            _doc({"kind": "dict", "spaces": {"a": {"kind": "interval", "low": 0}}}),
            "at space.spaces.a: missing field 'high'",
        ),
        (_doc({"kind": "dict", "spaces": [["a"]]}), "space.spaces[0]: expected a [key, space] pair"),
        (_doc({"kind": "dict", "spaces": 3}), "expected an object or a list"),
        (_doc({"kind": "oneof", "spaces": []}), "OneOf"),
        (
            _doc({"kind": "sequence", "space": {"kind": "range", "stop": 2}, "stack": 1}),
            "space.stack: expected true",
        ),
        (_doc({"kind": "text", "max_length": 3, "charset": ["a"]}), "space.charset: expected a string"),
        (
            _doc({"kind": "graph", "node_space": {"kind": "graph"}}),
            "space.node_space: missing field 'node_space'",
        ),
        (
            _doc({"kind": "dataclass", "class": "nowhere.Missing", "fields": {}}),
            "not declared in this process",
        ),
        (
            _doc(
                {
                    "kind": "dataclass",
                    "class": f"{Pose.__module__}.Pose",
                    "fields": {"mode": {"kind": "finite", "items": ["walk"]}},
                }
            ),
            "missing ['position', 'moving']",
        ),
    ],
)
def test_malformed_documents_raise_value_error_naming_the_problem(doc: Any, message: str) -> None:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    with pytest.raises(ValueError) as info:
        from_json(text)
    assert isinstance(info.value, DocumentError)
    assert message in str(info.value), str(info.value)


def test_from_json_accepts_documents_without_format() -> None:
    assert from_json({"version": 1, "space": {"kind": "range", "stop": 3}}) == range(3)


def test_unknown_space_class_cannot_be_encoded() -> None:
    class Circle(sa.Space):
        pass

    with pytest.raises(TypeError, match=r"no JSON form for .*Circle"):
        to_json(Circle())


def test_labels_without_json_form_raise_type_error() -> None:
    with pytest.raises(TypeError, match="label b'x'"):
        to_json(sa.FiniteSet(b"x"))
    with pytest.raises(TypeError, match="frozenset"):
        to_json(sa.FiniteSet(frozenset({1})))


def test_non_spaces_raise_type_error() -> None:
    with pytest.raises(TypeError):
        to_json(3)


_SERIALIZE_MODULES = [serialize] + [
    importlib.import_module(f"{serialize.__name__}.{m.name}") for m in pkgutil.iter_modules(serialize.__path__)
]


@pytest.mark.parametrize("module", _SERIALIZE_MODULES, ids=lambda m: m.__name__)
def test_serialize_never_evaluates_or_imports_code(module: Any) -> None:
    """Every module of the package: the document reader and the rule table alike."""
    tree = ast.parse(inspect.getsource(module))
    forbidden = {"eval", "exec", "compile", "__import__", "import_module", "getattr", "locate"}
    called = {
        node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not called & forbidden, called & forbidden


# -- Gymnasium spaces ---------------------------------------------------------------------------

GYMNASIUM_SPACES = [
    gs.Discrete(5),
    gs.Discrete(5, start=-2),
    gs.Discrete(3, dtype=np.int32),
    gs.MultiDiscrete([[2, 3], [4, 5]], start=[[1, 0], [0, -1]], dtype=np.int16),
    gs.MultiDiscrete([3, 3, 3]),
    gs.MultiDiscrete(np.zeros((0, 2), dtype=np.int64)),
    gs.MultiBinary(4),
    gs.MultiBinary([2, 3]),
    gs.Box(-1, 1, (2,)),
    gs.Box(0, 255, (2, 2), dtype=np.uint8),
    gs.Box(np.array([-np.inf, 0.5]), np.array([3.0, np.inf]), dtype=np.float64),
    gs.Box(np.array([-np.inf, 0]), np.array([3, np.inf]), dtype=np.int32),
    gs.Box(0, 1, (), dtype=np.float16),
    gs.Tuple([gs.Discrete(2), gs.Box(0, 1, ())]),
    gs.Dict({"b": gs.Discrete(2), "a": gs.Tuple([gs.Discrete(2), gs.MultiBinary(2)])}),
    gs.OneOf([gs.Discrete(2), gs.MultiBinary(3)]),
    gs.Text(5),
    gs.Text(4, min_length=0, charset="zyxa"),
    gs.Sequence(gs.Discrete(3)),
    gs.Sequence(gs.Box(0, 1, (2,)), stack=True),
    gs.Graph(gs.Box(0, 1, (3,)), None),
    gs.Graph(gs.Box(0, 1, (3,)), gs.Discrete(4)),
    gs.Dict({"t": gs.Text(3), "s": gs.Sequence(gs.Tuple([gs.Discrete(2), gs.Text(2)]))}),
]


@given(gymnasium_spaces())
def test_gymnasium_spaces_survive_the_json_round_trip(g: gs.Space) -> None:
    back = round_trip(g)
    assert back == sa.from_gymnasium(g) and repr(back) == repr(sa.from_gymnasium(g))
    assert sa.to_gymnasium(back) == g


def test_gym_spaces_survive_the_json_round_trip() -> None:
    gym_spaces = pytest.importorskip("gym.spaces")
    from spacealg.strategies import gym_spaces as gym_strategy

    @given(gym_strategy())
    def law(g: Any) -> None:
        assert sa.to_gym(round_trip(g)) == g

    law()
    assert sa.to_gym(round_trip(gym_spaces.MultiDiscrete([2, 3]))) == gym_spaces.MultiDiscrete([2, 3])


@pytest.mark.parametrize("g", GYMNASIUM_SPACES, ids=repr)
def test_gymnasium_spaces_round_trip(g: gs.Space) -> None:
    back = round_trip(g)
    assert back == sa.from_gymnasium(g) and repr(back) == repr(sa.from_gymnasium(g))
    assert sa.to_gymnasium(back) == g
    if isinstance(g, gs.Box):
        native = sa.to_gymnasium(back)
        assert native.dtype == g.dtype
        assert np.array_equal(native.bounded_below, g.bounded_below)
        assert np.array_equal(native.bounded_above, g.bounded_above)


@pytest.mark.parametrize(
    "space",
    [
        sa.Categorical(3, start=2, dtype=np.int8),
        sa.Categorical([[2, 3], [3, 2]], start=[[10, 20], [30, 40]], dtype=np.int8),
        sa.Categorical(np.array(4), dtype=np.uint16),  # a 0-d array kind
        sa.Categorical([2**40, 5], start=[-(2**62), 0], dtype=np.int64),
    ],
    ids=repr,
)
def test_categorical_round_trip(space: Any) -> None:
    back = round_trip(space)
    assert back == space and repr(back) == repr(space) and back.dtype == space.dtype


def test_categorical_errors_name_the_field() -> None:
    node = {"kind": "categorical", "dtype": "int8", "shape": [2], "nvec": [2, 2.5]}
    with pytest.raises(DocumentError, match=r"at space.nvec: expected ints"):
        from_json(_doc(node))
    node = {"kind": "categorical", "dtype": "int8", "nvec": 300}
    with pytest.raises(DocumentError, match="do not fit the dtype"):
        from_json(_doc(node))
