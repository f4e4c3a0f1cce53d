"""Laws and error paths of spacealg.declarative: space(obj) and dataclass spaces."""

from __future__ import annotations

import dataclasses
import math
import pickle
from typing import Annotated, Any, Literal

import gymnasium.spaces as gs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.declarative import fields_of
from spacealg.strategies import finite_spaces, spaces

_names = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta"]), min_size=1, max_size=3, unique=True)


def make_dataclass(field_spaces: dict[str, Any], frozen: bool = False) -> type:
    """A dataclass whose fields are annotated ``Annotated[object, space]``."""
    fields = [(name, Annotated[object, s]) for name, s in field_spaces.items()]
    return dataclasses.make_dataclass("Generated", fields, frozen=frozen)


@st.composite
def dataclass_spaces(draw: Any, children: st.SearchStrategy[Any] | None = None) -> sa.DataclassSpace:
    children = children if children is not None else spaces(max_depth=1)
    names = draw(_names)
    return sa.space(make_dataclass({n: draw(children) for n in names}, frozen=draw(st.booleans())))


def _same(a: Any, b: Any) -> bool:
    """Equal values, whatever the container or array storage (0-d arrays equal scalars)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


# -- space(obj) --------------------------------------------------------------------------------


@given(spaces(leaves=("interval", "finite", "range", "box", "array")))
def test_space_of_a_space_is_itself(s: Any) -> None:
    assert sa.space(s) is s


@given(st.one_of(spaces(), st.lists(st.integers(-5, 5), max_size=4), st.sets(st.text("ab", max_size=2))))
def test_space_agrees_with_as_space(obj: Any) -> None:
    assert sa.space(obj) == sa.as_space(obj)


@given(st.dictionaries(st.sampled_from("abcdef"), spaces(max_depth=1), min_size=1, max_size=4))
def test_space_of_dict_is_the_named_product(d: dict[str, Any]) -> None:
    s = sa.space(d)
    assert isinstance(s, sa.DictProduct)
    assert list(s.keys()) == list(d)
    assert s == sa.DictProduct({k: sa.as_space(v) for k, v in d.items()})


def test_literal_forms() -> None:
    assert sa.space(("up", "down")) == sa.FiniteSet("up", "down")
    assert sa.space(["a", 1]) == sa.FiniteSet("a", 1)
    assert sa.space({2, 1}) == sa.FiniteSet(1, 2)
    assert sa.space(range(3)) == range(3)
    assert sa.space(bool) == sa.BOOL
    assert sa.space(float) == sa.REALS
    assert sa.space(np.int8) == range(-128, 128)
    assert sa.space(Literal["x", "y"]) == sa.FiniteSet("x", "y")
    assert sa.space(Annotated[float, sa.Interval(0, 1)]) == sa.Interval(0, 1)
    assert sa.space(Annotated[int, "a note for another library", range(4)]) == range(4)


def test_gymnasium_spaces_are_converted_anywhere() -> None:
    g = gs.Dict({"a": gs.Discrete(3), "b": gs.Box(0, 1, (2,))})
    assert sa.space(g) == sa.from_gymnasium(g)
    assert sa.space({"obs": g, "flag": bool}) == sa.DictProduct(obs=sa.from_gymnasium(g), flag=sa.BOOL)

    @sa.spaceclass
    class WithGym:
        move: Annotated[int, gs.Discrete(4, start=1)]

    assert sa.space(WithGym)["move"] == range(1, 5)


def test_nested_dicts_and_types_keep_their_shape() -> None:
    s = sa.space({"pos": sa.Box(-1.0, 1.0, shape=(2,)), "inner": {"flag": bool, "mode": Literal["a", "b"]}})
    assert s == sa.DictProduct(
        pos=sa.Box(-1.0, 1.0, shape=(2,)), inner=sa.DictProduct(flag=sa.BOOL, mode=sa.FiniteSet("a", "b"))
    )
    assert repr(s["inner"]) == "DictProduct({'flag': bool, 'mode': FiniteSet('a', 'b')})"


@pytest.mark.parametrize(
    ("obj", "where"),
    [
        (3, "3"),
        ("speed", "speed"),
        (int, "int is not a space"),
        ({"a": {"b": 3}}, "at ['a']['b']"),
        ({"a": [1, 2], "b": None}, "at ['b']"),
        (Annotated[float, "no space here"], "no space among its Annotated metadata"),
    ],
)
def test_space_of_a_non_space_raises_type_error_naming_it(obj: Any, where: str) -> None:
    with pytest.raises(TypeError) as info:
        sa.space(obj)
    assert where in str(info.value), str(info.value)


# -- dataclass declarations -----------------------------------------------------------------------


@sa.spaceclass
class Observation:
    position: Annotated[np.ndarray, sa.Box(-1.0, 1.0, shape=(2,))]
    colour: Literal["red", "green"]
    speed: Annotated[float, sa.Interval(0, 1)]
    lights: bool


@sa.spaceclass(frozen=True)
class Move:
    direction: Literal["left", "right"]
    steps: Annotated[int, range(1, 4)]


@sa.spaceclass
class Plan:
    first: Move
    second: Move
    note: str = dataclasses.field(default="", init=False)


def test_dataclass_declares_a_named_product() -> None:
    s = sa.space(Observation)
    assert isinstance(s, sa.DataclassSpace) and s.cls is Observation
    assert s.fields == sa.DictProduct(
        position=sa.Box(-1.0, 1.0, shape=(2,)), colour=("red", "green"), speed=sa.Interval(0, 1), lights=bool
    )
    assert sa.SpaceStyle(s) == sa.HybridSpaceStyle((3,), (2,))
    assert sa.eltype(s) is Observation
    assert sa.elsize(s) == {"position": (2,), "colour": (), "speed": (), "lights": ()}
    assert sa.space(Observation) == s and hash(sa.space(Observation)) == hash(s)
    assert repr(s) == f"DataclassSpace({Observation.__module__}.Observation)"


def test_spaceclass_returns_a_dataclass() -> None:
    assert dataclasses.is_dataclass(Observation)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Move("left", 1).steps = 2  # type: ignore[misc]


def test_nested_dataclasses_and_init_false_fields() -> None:
    s = sa.space(Plan)
    assert list(s.fields.keys()) == ["first", "second"]  # note has init=False: not a component
    assert s["first"] == sa.space(Move)
    assert sa.cardinality(s) == 36
    plans = list(sa.elements(s))
    assert len(plans) == 36 and all(isinstance(p, Plan) and p in s for p in plans)
    assert [sa.index(p, s) for p in plans] == list(range(36))
    assert sa.element(7, s) == plans[7]


def test_sample_gives_instances() -> None:
    s = sa.space(Observation)
    x = sa.sample(s, rng=1)
    assert isinstance(x, Observation) and x in s
    assert sa.sample(s, rng=1).speed == x.speed  # same seed, same member


def test_batches_are_structs_of_arrays() -> None:
    s = sa.space(Observation)
    batch = sa.sample(s, (5,), rng=0)
    assert isinstance(batch, Observation)
    assert batch.position.shape == (5, 2) and batch.speed.shape == (5,)
    assert sa.isin(batch, s).tolist() == [True] * 5
    objects = np.empty(3, dtype=object)
    objects[:] = [sa.sample(s, rng=i) for i in range(3)]
    objects[1].speed = 2.0
    assert sa.isin(objects, s).tolist() == [True, False, True]
    with pytest.raises(ValueError, match="a batch of"):
        sa.isin({"speed": np.zeros(2)}, s)


def test_contains_never_raises_and_checks_the_class() -> None:
    s = sa.space(Observation)
    x = sa.sample(s, rng=0)
    assert sa.contains(dataclasses.asdict(x), s) is False  # the dict is not an instance
    assert sa.contains(None, s) is False
    assert sa.contains(Move("left", 1), s) is False
    assert sa.contains(Observation(np.zeros(3), "red", 0.5, True), s) is False  # wrong shape
    assert sa.contains(Observation(np.zeros(2), "blue", 0.5, True), s) is False
    half_built = object.__new__(Observation)
    assert sa.contains(half_built, s) is False


def test_clamp_and_clamp_in_place() -> None:
    s = sa.space(Observation)
    x = Observation(np.array([3.0, -0.5]), "red", 7.0, True)
    y = sa.clamp(x, s)
    assert isinstance(y, Observation) and y in s and y is not x
    assert np.array_equal(y.position, [1.0, -0.5]) and y.speed == 1.0
    member = sa.sample(s, rng=0)
    assert sa.clamp(member, s) is member
    z = sa.clamp_(x, s)
    assert z is x and x in s and x.speed == 1.0
    spoiled = Observation(np.array([3.0, -0.5]), "red", float("nan"), True)  # position comes before speed
    with pytest.raises(ValueError, match="NaN"):
        sa.clamp_(spoiled, s)
    assert np.array_equal(spoiled.position, [3.0, -0.5])  # all or nothing: no field was written
    frozen = sa.DataclassSpace(Move, {"direction": ("left", "right"), "steps": range(1, 3)})
    with pytest.raises(TypeError, match="frozen"):
        sa.clamp_(Move("left", 3), frozen)
    with pytest.raises(TypeError, match="instance of Observation"):
        sa.clamp({"speed": 1.0}, s)


def test_bounds_are_by_field_name() -> None:
    low, high = sa.bounds(sa.space(Move).fields["steps"]), sa.bounds(sa.space(Move)["steps"])
    assert low == high == (1, 3)
    s = sa.DataclassSpace(
        Observation,
        {
            "position": sa.Box(0.0, 1.0, shape=(2,)),
            "colour": (1, 2),
            "speed": sa.Interval(0, 2),
            "lights": bool,
        },
    )
    lo, hi = sa.bounds(s)
    assert lo["speed"] == 0 and hi["speed"] == 2 and hi["colour"] == 2


def test_override_spaces_and_intersect_and_subspace() -> None:
    narrow = sa.DataclassSpace(Move, {"direction": ("left",), "steps": range(1, 3)})
    wide = sa.space(Move)
    assert narrow <= wide and not wide <= narrow
    assert (narrow & wide) == narrow
    assert (
        repr(narrow)
        == f"DataclassSpace({Move.__module__}.Move, {{'direction': FiniteSet('left'), 'steps': range(1, 3)}})"
    )
    disjoint = sa.DataclassSpace(Move, {"direction": ("up",), "steps": range(1, 3)})
    assert sa.cardinality(wide & disjoint) == 0
    with pytest.raises(TypeError, match="different dataclasses"):
        sa.intersect(wide, sa.space(Observation))


def test_pickle_round_trip() -> None:
    s = sa.space(Plan)
    assert pickle.loads(pickle.dumps(s)) == s


def test_declaration_errors_name_the_field() -> None:
    with pytest.raises(TypeError, match=r"Bad\.count.*Annotated"):

        @sa.spaceclass
        class Bad:
            count: int

    with pytest.raises(TypeError, match="must be a dataclass type"):
        sa.DataclassSpace(int)
    with pytest.raises(ValueError, match=r"missing \['steps'\], unexpected \['speed'\]"):
        sa.DataclassSpace(Move, {"direction": ("left",), "speed": range(2)})
    with pytest.raises(TypeError, match="already a dataclass"):
        sa.spaceclass(frozen=True)(Move)


def test_unresolvable_annotations_raise_type_error() -> None:
    ns: dict[str, Any] = {}
    exec("from __future__ import annotations\nclass Lost:\n    x: Missing\n", ns)  # a string annotation
    with pytest.raises(TypeError, match="cannot resolve the annotations of Lost"):
        sa.space(dataclasses.dataclass(ns["Lost"]))


# -- laws over generated dataclasses ---------------------------------------------------------------


@given(dataclass_spaces(), st.integers(0, 2**32 - 1))
def test_sample_is_an_instance_and_a_member(s: sa.DataclassSpace, seed: int) -> None:
    x = sa.sample(s, rng=seed)
    assert isinstance(x, s.cls) and isinstance(x, sa.eltype(s))
    assert sa.contains(x, s)
    assert sa.isin(sa.sample(s, 3, rng=seed), s).all()


@given(dataclass_spaces(), spaces(max_depth=1), st.integers(0, 2**32 - 1))
def test_contains_is_instance_and_fields_in_their_spaces(s: sa.DataclassSpace, other: Any, seed: int) -> None:
    """Instances built from another space's members are members exactly when their fields are."""
    values = {name: sa.sample(other, rng=seed) for name in s.fields.spaces}
    x = s.cls(**values)
    assert sa.contains(x, s) == sa.contains(fields_of(x, s), s.fields)
    assert sa.contains(values, s) is False


@given(dataclass_spaces())
def test_traits_are_those_of_the_fields(s: sa.DataclassSpace) -> None:
    for trait in (sa.SpaceStyle, sa.cardinality, sa.elsize):
        assert _outcome(trait, s) == _outcome(trait, s.fields), trait


def _outcome(function: Any, space: Any) -> Any:
    """The result, or the type of the TypeError (a trait some components lack)."""
    try:
        return function(space)
    except TypeError as error:
        return TypeError, str(error)


@given(dataclass_spaces(children=finite_spaces(max_cardinality=4, max_depth=1)))
def test_index_and_element_are_inverse(s: sa.DataclassSpace) -> None:
    n = sa.cardinality(s)
    if n > 64:
        return
    for i, x in enumerate(sa.elements(s)):
        assert isinstance(x, s.cls) and sa.contains(x, s)
        assert sa.index(x, s) == i
        assert sa.index(sa.element(i, s), s) == i


@given(dataclass_spaces(), st.integers(0, 2**32 - 1))
def test_clamp_returns_members_unchanged(s: sa.DataclassSpace, seed: int) -> None:
    x = sa.sample(s, rng=seed)
    assert sa.clamp(x, s) is x


@given(dataclass_spaces())
def test_dataclass_spaces_round_trip_through_json(s: sa.DataclassSpace) -> None:
    back = sa.from_json(sa.to_json(s))
    assert back == s and back.cls is s.cls


def test_infinite_cardinality() -> None:
    assert sa.cardinality(sa.space(Observation)) == math.inf


def test_to_gymnasium_gives_a_dict_of_the_fields() -> None:
    g = sa.to_gymnasium(sa.space(Observation))
    assert isinstance(g, gs.Dict) and list(g.spaces) == ["position", "colour", "speed", "lights"]
    assert g == sa.to_gymnasium(sa.space(Observation).fields)
    x = sa.sample(sa.space(Move), rng=0)
    assert sa.to_gymnasium(sa.space(Move)).contains(
        {"direction": sa.index(x.direction, ("left", "right")), "steps": np.int64(x.steps)}
    )


@given(
    dataclass_spaces(children=spaces(leaves=("finite", "range", "box"), max_depth=1)),
    st.integers(0, 2**32 - 1),
)
def test_encode_maps_instances_into_the_gymnasium_dict_and_back(s: sa.DataclassSpace, seed: int) -> None:
    x = sa.sample(s, rng=seed)
    y = sa.encode(x, s)
    assert sa.to_gymnasium(s).contains(y)
    back = sa.decode(y, s)
    assert isinstance(back, s.cls) and back in s
    assert _same(fields_of(back, s), fields_of(x, s))
    assert sa.to_gymnasium(s) == sa.to_gymnasium(s.fields)


def test_to_gym_gives_a_dict_of_the_fields() -> None:
    gym_spaces = pytest.importorskip("gym.spaces")
    g = sa.to_gym(sa.space(Move))
    assert isinstance(g, gym_spaces.Dict) and list(g.spaces) == ["direction", "steps"]
