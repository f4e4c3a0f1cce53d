"""TorchRL adapters (issue 15): round trips (dtype, bounds, shape, device, key order),
membership agreeing with ``spec.is_in``, samples passing it, conversions from spacealg."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from tests.foreign_laws import (
    Kit,
    Shown,
    check_from_spacealg,
    check_membership,
    check_sample,
    convertible_spaces,
    from_gymnasium_spaces,
    gymnasium_leaves,
)

torch = pytest.importorskip("torch")
td = pytest.importorskip("torchrl.data")
from spacealg.adapters.torchrl import from_torchrl, from_torchrl_value, to_torchrl, to_torchrl_value  # noqa: E402


def _valid(spec, value) -> bool:
    try:
        shape = value.batch_size if isinstance(spec, td.Composite) else value.shape
        return tuple(shape) == tuple(spec.shape) and bool(spec.is_in(value))
    except Exception:
        return False


def _to(space):
    return to_torchrl(space)


def _roundtrip_to(space, like):
    one_hot = isinstance(like, (td.OneHot, td.MultiOneHot))
    shape = like.shape if isinstance(like, td.Composite) else ()
    return to_torchrl(space, like.device, batch_shape=shape, one_hot=one_hot)


def _equal(a, b) -> bool:
    if isinstance(a, td.Composite):
        return (type(a) is type(b) and list(a.keys()) == list(b.keys()) and a.shape == b.shape
                and a.device == b.device and all(_equal(a[k], b[k]) for k in a))
    return type(a) is type(b) and a == b and a.dtype == b.dtype and a.device == b.device


KIT = Kit("torchrl", from_torchrl, _to, to_torchrl_value, _valid, _equal, from_torchrl_value)

SPECS = [
    td.Bounded(-1.0, torch.tensor([1.0, 2.0]), shape=(2,), dtype=torch.float32),
    td.Bounded(3, 7, shape=(), dtype=torch.int64),
    td.Bounded(-np.inf, 1.0, shape=(2,), dtype=torch.float64),
    td.Bounded(-5, 5, shape=(2, 2), dtype=torch.int16),
    td.Unbounded(shape=(3,), dtype=torch.int32),
    td.Unbounded(shape=(3,)),
    td.Unbounded(shape=(2,), dtype=torch.uint8),
    td.Unbounded(shape=(), dtype=torch.float16),
    td.Categorical(5),
    td.Categorical(5, shape=(2,), dtype=torch.int32),
    td.OneHot(4),
    td.OneHot(3, shape=(2, 3)),
    td.MultiCategorical([2, 3]),
    td.MultiCategorical(torch.tensor([[2, 3], [4, 5]])),
    td.MultiOneHot([2, 3]),
    td.Binary(shape=(3,)),
    td.Binary(shape=(2, 2), dtype=torch.int64),
    td.Categorical(2, shape=(1,), dtype=torch.bool),
    td.Composite(a=td.Categorical(3), b=td.Composite(c=td.Bounded(0.0, 1.0, shape=(2,)))),
    td.Composite(z=td.Bounded(0.0, 1.0, shape=(4, 2)), a=td.Binary(shape=(4, 3)), shape=(4,)),
]
native_specs = st.one_of(
    st.sampled_from(SPECS),
    from_gymnasium_spaces(to_torchrl, (*gymnasium_leaves, "Dict")),
).map(Shown)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: type(s).__name__)
def test_round_trip_of_each_class(spec):
    back = _roundtrip_to(from_torchrl(spec), spec)
    assert _equal(back, spec), back


@given(native_specs)
def test_round_trip(shown):
    spec = shown.spec
    back = _roundtrip_to(from_torchrl(spec), spec)
    assert _equal(back, spec), back


def test_device_is_kept():
    spec = td.Bounded(-1.0, 1.0, shape=(2,), device="cpu")
    assert to_torchrl(from_torchrl(spec), spec.device).device == spec.device
    meta = to_torchrl(sa.Box(-1.0, 1.0, shape=(2,)), "meta")
    assert meta.device == torch.device("meta") and meta.dtype == torch.float32


def test_start_is_kept_as_a_bounded_integer_spec():
    # TorchRL's own Gym conversion drops Discrete.start; spacealg keeps the set
    spec = to_torchrl(sa.from_gymnasium(__import__("gymnasium").spaces.Discrete(3, start=-1)))
    assert isinstance(spec, td.Bounded) and spec.dtype == torch.int64
    assert bool(spec.is_in(torch.tensor(-1))) and not bool(spec.is_in(torch.tensor(2)))


@given(native_specs, st.data())
def test_contains_agrees_with_is_in(shown, data):
    check_membership(KIT, shown.spec, data)


@pytest.mark.parametrize("spec", [s for s in SPECS if isinstance(s, (td.OneHot, td.MultiOneHot))], ids=repr)
def test_one_hot_values_decode_to_members_exactly_when_is_in(spec):
    space = from_torchrl(spec)
    for value in [spec.rand(), torch.zeros(spec.shape, dtype=spec.dtype), torch.ones(spec.shape, dtype=spec.dtype)]:
        inside = bool(spec.is_in(value))
        assert sa.contains(from_torchrl_value(value, spec), space) == inside == sa.contains(value, spec)
    x = sa.sample(space, rng=0)
    assert np.array_equal(from_torchrl_value(to_torchrl_value(x, spec), spec), x)


@given(native_specs, st.integers(0, 2**32 - 1))
def test_samples_pass_is_in(shown, seed):
    check_sample(KIT, shown.spec, seed)


def test_samples_are_tensors_of_the_spec():
    spec = td.Composite(a=td.Bounded(0.0, 1.0, shape=(2,), dtype=torch.float64), b=td.OneHot(3))
    value = sa.sample(spec, rng=0)
    assert value["a"].dtype == torch.float64 and value["b"].dtype == torch.bool
    assert sa.isin(sa.sample(spec, (2, 3), rng=1), spec).shape == (2, 3)
    assert not sa.contains(value["a"][None], spec["a"])  # one element: is_in would take a batch


@given(convertible_spaces, st.data())
def test_to_torchrl_holds_the_encoded_members(space, data):
    check_from_spacealg(KIT, space, data)


def test_generic_functions_take_specs():
    assert sa.SpaceStyle(td.OneHot(4)) == sa.FiniteSpaceStyle((4,))  # the vectors (issue 22 point 5)
    assert sa.cardinality(td.MultiCategorical([2, 3])) == 6
    assert sa.bounds(td.Bounded(-2.0, 2.0, shape=(1,)))[0][0] == -2
    assert sa.contains(sa.clamp(np.array([5.0], dtype=np.float32), td.Bounded(-2.0, 2.0, shape=(1,))),
                       sa.from_torchrl(td.Bounded(-2.0, 2.0, shape=(1,))))
    assert not sa.contains(np.zeros(1, dtype=np.float32), td.Bounded(-2.0, 2.0, shape=(1,)))  # not a tensor


def test_what_has_no_equivalent_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="from_torchrl: NonTensor"):
        from_torchrl(td.NonTensor(shape=()))
    with pytest.raises(TypeError, match="bfloat16"):
        from_torchrl(td.Unbounded(shape=(2,), dtype=torch.bfloat16))
    with pytest.raises(TypeError, match="to_torchrl: Text"):
        to_torchrl(sa.Text(4))
    with pytest.raises(TypeError, match="not a TorchRL spec"):
        from_torchrl("Box")
    with pytest.raises(TypeError, match="no spacealg equal"):
        from_torchrl(td.OneHot(0, shape=(0,)))  # a block with no position
    hybrid = td.Bounded(0, 1, shape=(1,), dtype=torch.int8)
    hybrid.space = td.Binary(shape=(1,)).space  # as TorchRL's tests overwrite a spec's fields
    with pytest.raises(TypeError, match="without bounds"):
        from_torchrl(hybrid)


def test_tuples_are_composites_keyed_by_position():
    spec = to_torchrl(sa.TupleProduct(range(3), sa.Box(0.0, 1.0, shape=(2,))))
    assert list(spec.keys()) == ["0", "1"]
    assert spec.is_in(to_torchrl_value({"0": 2, "1": np.zeros(2, np.float32)}, spec))


# -- issue 39: dynamic (-1) dimensions, and strict shapes ------------------------------------------

DYNAMIC_SPECS = [
    td.Unbounded(shape=(-1, 1, 2)),
    td.Unbounded(shape=(-1, 3), dtype=torch.int64),
    td.Bounded(-1.0, 1.0, shape=(-1, 2)),
    td.Bounded(-3, 3, shape=(3, -1), dtype=torch.int32),
    td.Bounded(0.0, 1.0, shape=(-1, -1, 2), dtype=torch.float64),
    td.Categorical(4, shape=(-1,)),
    td.Categorical(4, shape=(2, -1), dtype=torch.int32),
    td.Categorical(2, shape=(-1, 1), dtype=torch.bool),
    td.MultiCategorical([2, 3], shape=(-1, 2)),
    td.Binary(shape=(-1, 3)),
    td.OneHot(3, shape=(-1, 3)),
    td.MultiOneHot([2, 3], shape=(-1, 5)),
    td.Composite(a=td.Unbounded(shape=(-1, 3)), b=td.Categorical(3)),
]


@pytest.mark.parametrize("spec", DYNAMIC_SPECS, ids=lambda s: f"{type(s).__name__}{tuple(s.shape)}")
def test_dynamic_specs_are_dynamic_spaces_and_round_trip(spec):
    space = from_torchrl(spec)
    leaf = space["a"] if isinstance(spec, td.Composite) else space
    assert isinstance(leaf, sa.Dynamic)
    assert leaf.axes == tuple(i for i, d in enumerate((spec["a"] if isinstance(spec, td.Composite) else spec).shape)
                              if d < 0)
    back = _roundtrip_to(space, spec)
    assert _equal(back, spec), back
    assert from_torchrl(back) == space


@pytest.mark.parametrize("spec", [s for s in DYNAMIC_SPECS if not isinstance(s, td.Composite)],
                         ids=lambda s: f"{type(s).__name__}{tuple(s.shape)}")
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 3), min_size=2, max_size=2))
def test_dynamic_membership_agrees_with_is_in_at_every_length(spec, seed, lengths):
    """TorchRL's own draws (where it can draw: not a -1 OneHot) are members; our draws pass
    ``is_in``; and on values of any lengths near the edges, contains on the spec and on the
    converted space agree with ``is_in`` (length 0 included)."""
    space = from_torchrl(spec)
    template = space.space
    try:
        drawn = spec.rand()
    except RuntimeError:  # TorchRL cannot draw a -1 OneHot/MultiOneHot
        assert isinstance(spec, (td.OneHot, td.MultiOneHot))
    else:
        assert bool(spec.is_in(drawn)) and sa.contains(drawn, spec)
        assert sa.contains(from_torchrl_value(drawn, spec), space)
    ours = sa.sample(spec, rng=seed)
    assert bool(spec.is_in(ours)) and sa.contains(ours, spec)
    assert bool(spec.is_in(to_torchrl_value(sa.sample(space, rng=seed), spec)))
    shape = list(space.shape)
    for a, n in zip(space.axes, lengths):
        shape[a] = n
    base = sa.sample(template, rng=seed)
    low, high = sa.bounds(template)
    candidates = [np.broadcast_to(base, shape), np.broadcast_to(low, shape), np.broadcast_to(high, shape),
                  np.zeros(shape), np.ones(shape), np.broadcast_to(high, shape) + 1, np.broadcast_to(low, shape) - 1]
    for value in candidates:
        tensor = torch.as_tensor(np.array(value)).to(spec.dtype)
        inside = bool(spec.is_in(tensor))
        assert sa.contains(tensor, spec) == inside == sa.contains(from_torchrl_value(tensor, spec), space), value


def test_a_wrong_fixed_length_is_in_no_dynamic_spec():
    spec = td.Bounded(-1.0, 1.0, shape=(-1, 2))
    assert not sa.contains(torch.zeros(3, 3), spec) and not _valid(spec, torch.zeros(3, 3))  # is_in raises
    assert sa.isin(torch.zeros(4, 3, 2), spec).tolist() == [True] * 4


def test_a_composite_with_a_dynamic_shape_has_no_equal():
    with pytest.raises(TypeError, match="ties its entries' lengths"):
        from_torchrl(td.Composite(a=td.Unbounded(shape=(-1, 3)), shape=(-1,)))


@pytest.mark.parametrize("spec, value", [
    (td.MultiCategorical([3], shape=(1,)), None),  # its own rand(): a 0-d tensor
    (td.Unbounded(shape=(1, 2)), torch.zeros(5, 2)),
    (td.Bounded(0.0, 1.0, shape=(1,)), torch.tensor(0.5)),
])
def test_shapes_are_strict_where_is_in_broadcasts(spec, value):
    """Issue 39 point 3: ``is_in`` accepts a tensor that broadcasts to the spec's shape;
    ``contains`` on the spec and on the converted space refuse it alike (the stated law), and
    accept it reshaped to the spec's shape."""
    value = spec.rand() if value is None else value
    assert tuple(value.shape) != tuple(spec.shape) and bool(spec.is_in(value))
    space = from_torchrl(spec)
    assert not sa.contains(value, spec) and not sa.contains(from_torchrl_value(value, spec), space)
    if value.numel() == math.prod(spec.shape):
        fitted = value.reshape(spec.shape)
        assert sa.contains(fitted, spec) and sa.contains(from_torchrl_value(fitted, spec), space)


# -- the harness that runs TorchRL's own test_specs.py through these laws -------------------------


def _suite():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[1] / "benchmarks" / "torchrl_spec_suite.py"
    spec = importlib.util.spec_from_file_location("torchrl_spec_suite", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("spec", [*SPECS, *DYNAMIC_SPECS, td.MultiCategorical([3], shape=(1,))],
                         ids=lambda s: f"{type(s).__name__}{tuple(s.shape)}")
def test_the_spec_suite_laws_hold_on_the_adapter_specs(spec):
    assert _suite().laws(spec) == []


def test_the_spec_suite_laws_fail_when_spacealg_disagrees():
    """A conversion that widens a Bounded spec's set (a mutation of the adapter) is caught at
    its edges; one that drops a -1 is caught by the round trip; a spec with no equal is named."""
    laws = _suite().laws
    original = from_torchrl.implementation_for(td.Bounded)
    try:
        from_torchrl.register(td.Bounded)(lambda s: sa.Box(-2.0, 2.0, shape=tuple(s.shape), dtype=np.float32))
        assert any(p.startswith("[edges]") for p in laws(td.Bounded(-1.0, 1.0, shape=(2,))))
        from_torchrl.register(td.Bounded)(lambda s: sa.Box(-1.0, 1.0, shape=(1, 2), dtype=np.float32))
        assert any(p.startswith("[round-trip]") for p in laws(td.Bounded(-1.0, 1.0, shape=(-1, 2))))
    finally:
        from_torchrl.register(td.Bounded)(original)
    assert laws(td.Bounded(-1.0, 1.0, shape=(2,))) == []
    assert laws(td.NonTensor(shape=()))[0].startswith("[no-equal]")


@pytest.mark.parametrize("spec, value", [
    (td.OneHot(4, mask=torch.tensor([True, False, True, True])), torch.ones(4, dtype=torch.bool)),
    (td.MultiOneHot([2, 3], mask=torch.tensor([True, True, False, True, True])), torch.ones(5, dtype=torch.bool)),
    (td.OneHot(3, dtype=torch.float16), torch.tensor([-6e-08, 0.0, 1.0], dtype=torch.float16)),
    (td.Unbounded(shape=(2,)), torch.tensor([float("nan"), 0.0])),
])
def test_contains_on_a_spec_follows_the_set_where_is_in_accepts_more(spec, value):
    """``contains(x, spec)`` is ``is_in(x)`` and membership of ``from_torchrl(spec)``: a vector
    that is not one-hot (TorchRL's masked is_in checks only that an allowed position is set, its
    float is_in a rounded sum) and NaN are refused on both sides, as stated."""
    assert bool(spec.is_in(value))
    assert not sa.contains(value, spec) and not sa.contains(from_torchrl_value(value, spec), from_torchrl(spec))
    assert not sa.isin(value[None], spec)[0]
    member = to_torchrl_value(sa.sample(from_torchrl(spec), rng=0), spec)
    assert sa.contains(member, spec) and bool(spec.is_in(member))
