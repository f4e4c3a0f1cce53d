"""``Record`` (issue 24, point 2): the space whose members are the records a constructor
builds, as Jumanji's NamedTuple observations; and ``from_jumanji`` giving it, so that every
Jumanji environment's observations are members of its converted spec."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.adapters.records import Record
from spacealg.spaces.product import DictProduct
from spacealg.strategies import members, spaces


@st.composite
def records(draw: Any) -> Record:
    keys = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3, unique=True))
    fields = {k: draw(spaces(max_depth=1)) for k in keys}
    return Record(namedtuple("Fields", keys), fields)


@settings(max_examples=40, deadline=None)
@given(records(), st.data())
def test_members_are_records_of_the_constructor(space, data):
    x = data.draw(members(space))
    assert isinstance(x, space.constructor) and sa.contains(x, space)
    assert sa.eltype(space) is space.constructor
    as_dict = x._asdict()
    assert not sa.contains(as_dict, space), "a dict of the fields is not a record"
    assert sa.contains(as_dict, DictProduct(dict(space._shown), sort_keys=False))
    other = namedtuple("Other", list(as_dict))(**as_dict)
    assert not sa.contains(other, space), "a record of another class is not a member"


@settings(max_examples=40, deadline=None)
@given(records(), st.integers(0, 2**32 - 1))
def test_sample_gives_members_and_is_seeded(space, seed):
    x = sa.sample(space, rng=seed)
    assert isinstance(x, space.constructor) and sa.contains(x, space)
    assert repr(sa.sample(space, rng=seed)) == repr(x)


@settings(max_examples=25, deadline=None)
@given(records(), st.integers(0, 2**32 - 1))
def test_isin_of_a_batch_agrees_with_contains(space, seed):
    batch = sa.sample(space, 3, rng=seed)
    assert isinstance(batch, space.constructor)
    assert np.asarray(sa.isin(batch, space)).all()


@settings(max_examples=25, deadline=None)
@given(records())
def test_equality_and_hashing(space):
    same = Record(space.constructor, dict(space._shown))
    assert same == space and hash(same) == hash(space)
    assert space != DictProduct(dict(space._shown), sort_keys=False)
    assert Record(namedtuple("Fields", list(space.keys())), dict(space._shown)) != space  # another class


Pair = namedtuple("Pair", "left right")


def test_a_record_of_a_module_level_class_pickles():
    import pickle

    space = Record(Pair, {"left": sa.Box(0.0, 1.0, shape=(2,)), "right": range(3)})
    assert pickle.loads(pickle.dumps(space)) == space


def test_finite_records_enumerate_as_records():
    Point = namedtuple("Point", "x y")
    space = Record(Point, {"x": range(2), "y": (False, True)})
    listed = list(sa.elements(space))
    assert listed == [Point(0, False), Point(0, True), Point(1, False), Point(1, True)]
    assert [sa.index(p, space) for p in listed] == [0, 1, 2, 3] and sa.element(3, space) == Point(1, True)
    assert sa.clamp(Point(7, True), space) == Point(1, True)


def test_bad_constructor_is_refused():
    with pytest.raises(TypeError, match="constructor"):
        Record(3, {"x": range(2)})


# -- Jumanji ---------------------------------------------------------------------------------


def _jumanji_envs() -> list[str]:
    jumanji = pytest.importorskip("jumanji")
    return sorted(jumanji.registered_environments())


@pytest.mark.parametrize("name", ["Snake-v1", "BinPack-v2"])
def test_a_jumanji_observation_is_a_member_of_its_converted_spec(name):
    """The regression of point 2: ``contains(spec.generate_value(), from_jumanji(spec))`` was
    False for every Jumanji environment (a DictProduct of dicts); nested records (BinPack's
    chex ``Space``, MultiCVRP's ``Node``) are records too."""
    jumanji = pytest.importorskip("jumanji")
    import jax

    from spacealg.adapters.jumanji import from_jumanji, to_jumanji

    env = jumanji.make(name)
    spec = env.observation_spec
    space = from_jumanji(spec)
    assert isinstance(space, Record) and space.constructor is spec._constructor
    assert sa.contains(spec.generate_value(), space)
    _, timestep = jax.jit(env.reset)(jax.random.key(0))  # one program (eagerly, every operation compiles alone)
    assert sa.contains(timestep.observation, space)
    spec.validate(sa.sample(space, rng=0))  # Jumanji's own validation takes spacealg's samples
    assert to_jumanji(space, spec.name)._constructor is spec._constructor
