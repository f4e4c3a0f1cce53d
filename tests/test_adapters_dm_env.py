"""dm_env adapters (issue 15): round trips, membership agreeing with ``spec.validate``,
samples passing it, conversions from spacealg, and the generic functions on specs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from tests.foreign_laws import (
    Kit,
    check_from_spacealg,
    check_membership,
    check_roundtrip,
    check_sample,
    convertible_spaces,
    from_gymnasium_spaces,
    gymnasium_leaves,
    nested_value,
)

ds = pytest.importorskip("dm_env.specs")
from spacealg.adapters.dm_env import from_dm_env, to_dm_env  # noqa: E402


def _valid(spec, value) -> bool:
    if isinstance(spec, dict):
        same_keys = isinstance(value, dict) and value.keys() == spec.keys()
        return same_keys and all(_valid(s, value[k]) for k, s in spec.items())
    if isinstance(spec, (tuple, list)):
        return len(value) == len(spec) and all(_valid(s, v) for s, v in zip(spec, value))
    try:
        spec.validate(value)
        return True
    except ValueError:
        return False


def _equal(a, b) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return type(a) is type(b) and list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


KIT = Kit("dm_env", from_dm_env, to_dm_env, nested_value(lambda x, s: np.asarray(x, dtype=s.dtype)), _valid, _equal)

SPECS = [
    ds.Array((2,), np.float32, name="obs"),
    ds.Array((), np.int32),
    ds.Array((2, 2), np.uint8),
    ds.Array((3,), bool),
    ds.BoundedArray((2,), np.float64, -1.0, [1.0, 2.0]),
    ds.BoundedArray((), np.float32, 0.0, np.inf),
    ds.BoundedArray((2, 2), np.int16, -3, 4),
    ds.BoundedArray((3,), np.int64, np.iinfo(np.int64).min, 5),
    ds.DiscreteArray(5),
    ds.DiscreteArray(3, dtype=np.int64),
    ds.DiscreteArray(1, dtype=np.uint8),
    {"position": ds.BoundedArray((2,), np.float32, -1, 1, "position"), "gear": ds.DiscreteArray(4, name="gear")},
    (ds.DiscreteArray(2), {"inner": ds.Array((1,), np.float64, "inner")}),
]
native_specs = st.one_of(
    st.sampled_from(SPECS),
    from_gymnasium_spaces(to_dm_env, (*gymnasium_leaves, "Dict", "Tuple")),
)


def test_importing_spacealg_imports_no_optional_package():
    import subprocess
    import sys

    optional = "('dm_env', 'torch', 'torchrl', 'jax', 'gymnax', 'jumanji')"
    code = f"import spacealg, sys; print(sorted(m for m in {optional} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_round_trip_of_each_class(spec):
    check_roundtrip(KIT, spec)


@given(native_specs)
def test_round_trip(spec):
    check_roundtrip(KIT, spec)


def test_infinite_bounded_array_comes_back_as_array_with_the_same_set():
    spec = ds.BoundedArray((2,), np.float32, -np.inf, np.inf)
    back = to_dm_env(from_dm_env(spec))
    assert type(back) is ds.Array and (back.shape, back.dtype) == (spec.shape, spec.dtype)
    x = np.array([np.inf, -3.0], dtype=np.float32)
    assert back.validate(x) is not None and spec.validate(x) is not None


@given(native_specs, st.data())
def test_contains_agrees_with_validate(spec, data):
    check_membership(KIT, spec, data)


@given(native_specs, st.integers(0, 2**32 - 1))
def test_samples_pass_validate(spec, seed):
    check_sample(KIT, spec, seed)


@given(convertible_spaces, st.data())
def test_to_dm_env_holds_the_encoded_members(space, data):
    check_from_spacealg(KIT, space, data)


def test_names_come_from_the_argument_and_the_keys():
    spec = to_dm_env(sa.DictProduct(speed=sa.Box(0.0, 1.0, shape=(1,)), gear=range(1, 6)), "observation")
    assert spec["speed"].name == "speed" and spec["gear"].name == "gear"
    assert to_dm_env(range(3), "action").name == "action"
    assert type(to_dm_env(range(1, 4))) is ds.BoundedArray  # dm_env has no start: the set is kept


def test_generic_functions_take_specs():
    spec = ds.BoundedArray((2,), np.float32, -1.0, 1.0)
    assert sa.SpaceStyle(spec) == sa.ContinuousSpaceStyle((2,))
    assert sa.cardinality(ds.DiscreteArray(7)) == 7
    low, high = sa.bounds(spec)
    assert (low == -1).all() and (high == 1).all()
    clamped = sa.clamp(np.array([3.0, -0.5], dtype=np.float32), spec)
    assert sa.contains(clamped, spec)
    assert list(sa.elements(ds.DiscreteArray(3))) == [0, 1, 2]
    assert not sa.contains(np.zeros(2), spec)  # dm_env is strict about dtype: float64 is not float32
    assert not sa.contains("not an array", spec)


def test_what_has_no_equivalent_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match=r"from_dm_env: StringArray"):
        from_dm_env(ds.StringArray((2,)))
    with pytest.raises(TypeError, match=r"to_dm_env: Interval\(0, 1, closed='left'\)"):
        to_dm_env(sa.Interval(0, 1, "left"))
    with pytest.raises(TypeError, match="to_dm_env: Text"):
        to_dm_env(sa.Text(3))
    with pytest.raises(TypeError, match="not a dm_env spec"):
        from_dm_env(3)
    assert sa.contains(np.array(["a", "b"], dtype=object), ds.StringArray((2,)))  # membership still works


def test_finite_sets_go_through_the_documented_encoding():
    space = sa.FiniteSet("up", "down")
    spec = to_dm_env(space)
    assert spec == ds.DiscreteArray(2, dtype=np.int64)
    spec.validate(np.asarray(sa.encode("down", space)))
