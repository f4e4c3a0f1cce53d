"""gymnax and Jumanji adapters (issue 15): round trips, membership agreeing with gymnax's
``contains`` and Jumanji's ``validate``, samples passing them, conversions from spacealg."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from tests.foreign_laws import (
    Kit,
    check_from_spacealg,
    check_membership,
    check_sample,
    convertible_spaces,
    from_gymnasium_spaces,
    gymnasium_leaves,
)

jnp = pytest.importorskip("jax.numpy")
gx = pytest.importorskip("gymnax.environments.spaces")
from spacealg.adapters.gymnax import from_gymnax, to_gymnax, to_gymnax_value  # noqa: E402

# -- gymnax ----------------------------------------------------------------------------------


def _gymnax_valid(space, value) -> bool:
    if isinstance(space, gx.Dict):
        return all(_gymnax_valid(s, value[k]) for k, s in space.spaces.items())
    if isinstance(space, gx.Tuple):
        return all(_gymnax_valid(s, v) for s, v in zip(space.spaces, value))
    # gymnax checks bounds only: the law holds on values of the space's shape and dtype
    value = jnp.asarray(value)
    return value.shape == tuple(space.shape) and value.dtype == np.dtype(space.dtype) and bool(space.contains(value))


def _gymnax_equal(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, gx.Dict):
        return list(a.spaces) == list(b.spaces) and all(_gymnax_equal(a.spaces[k], b.spaces[k]) for k in a.spaces)
    if isinstance(a, gx.Tuple):
        return len(a.spaces) == len(b.spaces) and all(map(_gymnax_equal, a.spaces, b.spaces))
    if isinstance(a, gx.Discrete):
        return a.n == b.n and a.dtype == b.dtype
    shape = tuple(a.shape)
    return (shape == tuple(b.shape) and np.dtype(a.dtype) == np.dtype(b.dtype)
            and np.array_equal(np.broadcast_to(a.low, shape), np.broadcast_to(b.low, shape))
            and np.array_equal(np.broadcast_to(a.high, shape), np.broadcast_to(b.high, shape)))


GYMNAX = Kit("gymnax", from_gymnax, to_gymnax, to_gymnax_value, _gymnax_valid, _gymnax_equal)
GYMNAX_SPACES = [
    gx.Discrete(4),
    gx.Box(-1.0, 2.0, (3,)),
    gx.Box(jnp.array([0.0, 1.0]), jnp.array([1.0, 3.0]), (2,)),
    gx.Box(0, 5, (2,), jnp.int32),
    gx.Dict({"a": gx.Discrete(2), "b": gx.Box(0.0, 1.0, (2,))}),
    gx.Tuple([gx.Discrete(3), gx.Box(0.0, 1.0, ())]),
]
gymnax_spaces = st.one_of(st.sampled_from(GYMNAX_SPACES),
                          from_gymnasium_spaces(to_gymnax, (*gymnasium_leaves, "Dict", "Tuple")))


def test_gymnax_own_samples_are_members():
    import jax

    space = gx.Dict({"a": gx.Discrete(2), "b": gx.Box(0.0, 1.0, (2,))})
    value = space.sample(jax.random.PRNGKey(0))  # an OrderedDict, which gymnax's own contains rejects
    assert sa.contains(value, space) and sa.contains(dict(value), sa.from_gymnax(space))


def test_gymnax_64_bit_spaces_follow_jax_dtype_rule():
    assert to_gymnax(range(3)).dtype == np.dtype(np.int32)  # without x64, JAX has no int64
    with pytest.raises(TypeError, match="does not fit"):
        to_gymnax(sa.Box(0, 2**40, shape=(2,), dtype=np.int64))
    with pytest.raises(TypeError, match="to_gymnax: Text"):
        to_gymnax(sa.Text(2))


# -- Jumanji ---------------------------------------------------------------------------------

js = pytest.importorskip("jumanji.specs")
from spacealg.adapters.jumanji import from_jumanji, to_jumanji, to_jumanji_value  # noqa: E402


def _jumanji_valid(spec, value) -> bool:
    try:
        spec.validate(value)
        return True
    except (ValueError, TypeError):
        return False


def _jumanji_equal(a, b) -> bool:
    if not isinstance(a, js.Array) or not isinstance(b, js.Array):
        return (not isinstance(a, js.Array) and not isinstance(b, js.Array) and list(a._specs) == list(b._specs)
                and all(_jumanji_equal(a._specs[k], b._specs[k]) for k in a._specs))
    same = type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype and a.name == b.name
    if isinstance(a, js.BoundedArray):
        same = same and np.array_equal(np.broadcast_to(a.minimum, a.shape), np.broadcast_to(b.minimum, b.shape))
        same = same and np.array_equal(np.broadcast_to(a.maximum, a.shape), np.broadcast_to(b.maximum, b.shape))
    return same


def _jumanji_decode(value, spec):
    if isinstance(spec, js.Array):
        return value
    return {k: _jumanji_decode(getattr(value, k), s) for k, s in spec._specs.items()}


JUMANJI = Kit("jumanji", from_jumanji, to_jumanji, to_jumanji_value, _jumanji_valid, _jumanji_equal, _jumanji_decode)
JUMANJI_SPECS = [
    js.Array((2,), jnp.float32, "x"),
    js.BoundedArray((2,), jnp.int32, 0, 5, "y"),
    js.BoundedArray((3,), bool, False, True, "mask"),
    js.DiscreteArray(4, name="action"),
    js.MultiDiscreteArray(jnp.array([2, 3]), name="m"),
]
jumanji_specs = st.one_of(st.sampled_from(JUMANJI_SPECS),
                          from_gymnasium_spaces(to_jumanji, (*gymnasium_leaves, "Dict")))


# -- the laws, for both libraries ----------------------------------------------------------


@dataclass(frozen=True)
class Library:
    """One JAX ecosystem under the shared laws: its kit, its own spaces, and the round trip
    ``to(from_(spec))`` (Jumanji's keeps the spec's name)."""

    kit: Kit
    specs: st.SearchStrategy[Any]
    round_trip: Callable[[Any], Any]


LIBRARIES = [
    pytest.param(Library(GYMNAX, gymnax_spaces, lambda spec: to_gymnax(from_gymnax(spec))), id="gymnax"),
    pytest.param(Library(JUMANJI, jumanji_specs, lambda spec: to_jumanji(from_jumanji(spec), spec.name)), id="jumanji"),
]
laws = pytest.mark.parametrize("library", LIBRARIES)
short = settings(max_examples=12)  # JAX dispatches op by op: keep these short


@laws
@short
@given(st.data())
def test_round_trip(library, data):
    spec = data.draw(library.specs, label="spec")
    back = library.round_trip(spec)
    assert library.kit.equal(back, spec), f"{library.kit.name}: {spec!r} came back as {back!r}"


@laws
@short
@given(st.data())
def test_contains_agrees(library, data):
    check_membership(library.kit, data.draw(library.specs, label="spec"), data)


@laws
@short
@given(st.data(), st.integers(0, 2**32 - 1))
def test_samples_pass(library, data, seed):
    check_sample(library.kit, data.draw(library.specs, label="spec"), seed)


@laws
@short
@given(convertible_spaces, st.data())
def test_to_library_holds_the_encoded_members(library, space, data):
    check_from_spacealg(library.kit, space, data)


# -- Jumanji environments --------------------------------------------------------------------


def test_jumanji_environment_specs():
    import jumanji

    env = jumanji.make("Snake-v1")
    spec = env.observation_spec
    assert _jumanji_equal(to_jumanji(from_jumanji(spec), spec.name), spec)
    assert spec.validate(sa.sample(spec, rng=0)) is not None
    assert sa.cardinality(env.action_spec) == 4
    assert isinstance(sa.SpaceStyle(spec), sa.HybridSpaceStyle)
