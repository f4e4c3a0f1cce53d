"""The one plan of a space (spacealg.core.plan), by Hypothesis over generated spaces.

Laws: a space has one plan, and its flat codec, its emulation layout and codec, the guard's
compiled writers and the torch/JAX kernels are all variants of that plan (the same objects
the operations use); ``split(join(parts)) == parts`` and ``join(split(b))`` has ``b``'s
structure, for batches and members alike, and a value of another structure splits to
None; a codec assembles members with the plan's join; ``flatten_batch``/``unflatten_batch``
round-trip and agree value for value on NumPy, torch and JAX; a plan holds its space
weakly (a plan of flat codecs dies with its space); the NumPy codecs outlive the bound on
compiled variants; an entry whose value outgrows the cache's byte bound is dropped.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.backends import to_numpy
from spacealg.core import plan as plans
from spacealg.core.cache import IdentityCache
from spacealg.core.plan import plan_for, tree_values
from spacealg.emulation import codec_for
from spacealg.emulation.guard import observation_guard
from spacealg.ops import flatten, flatten_batch, unflatten_batch
from spacealg.ops.flatten import _FLAT, _codec
from spacealg.strategies import spaces
from tests.helpers import same, stacks, to_backend

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = jax.numpy

LAWS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
kept_spaces = spaces(composites=("tuple", "dict", "product"), max_depth=2).filter(
    lambda s: stacks(s) and not isinstance(s, (dict, list, set)))


def emulated(space: Any) -> Any:
    """The observation codec of ``space``, or None where it has no emulation layout."""
    try:
        return codec_for(space, "observation")
    except ValueError:
        return None


@LAWS
@given(kept_spaces, st.integers(0, 2**16))
def test_one_plan_serves_flattening_emulation_the_guard_and_the_backends(space: Any, seed: int) -> None:
    batch = sa.sample(space, 4, rng=seed)
    flatten_batch(batch, space)
    sa.isin(to_backend("torch", batch), space)
    codec = emulated(space)
    if codec is not None:
        observation_guard(space, "env")
    plan = plan_for(space)
    assert plan_for(space) is plan
    assert plan.variants[_FLAT] is _codec(space)
    assert any(key[0] == "isin" for key in plan.variants)
    if codec is not None:
        assert plan.variants["emulation codec", "numpy", "observation"] is codec
        assert plan.variants["emulation layout", "numpy", "observation"] is codec.layout
        assert codec.assemble is plan.join and codec.parts.__self__ is plan  # type: ignore[attr-defined]
        assert any(key[0] == "emulation guard" for key in plan.variants)


@LAWS
@given(kept_spaces, st.integers(0, 2**16))
def test_split_and_join_are_inverse_on_batches_and_members(space: Any, seed: int) -> None:
    plan = plan_for(space)
    for value in (sa.sample(space, 3, rng=seed), sa.sample(space, rng=seed)):
        parts = plan.split(value)
        assert parts is not None and len(parts) == len(tree_values(plan.structure))
        assert all(a is b for a, b in zip(parts, tree_values(value))) or not isinstance(value, (tuple, dict))
        joined = plan.join(parts)
        assert same(joined, value)
        assert all(a is b for a, b in zip(plan.split(joined), parts))
        if isinstance(plan.structure, tuple) and plan.structure:
            assert plan.split(tuple(value)[:-1]) is None
        if isinstance(plan.structure, dict):
            assert plan.split({**value, object(): 0}) is None


@LAWS
@given(kept_spaces, st.integers(0, 2**16))
def test_flatten_batch_round_trips_alike_on_numpy_torch_and_jax(space: Any, seed: int) -> None:
    host = sa.sample(space, 5, rng=seed)
    for name in ("numpy", "torch", "jax"):
        batch = to_backend(name, host)
        held = to_numpy(batch)  # what the backend holds (JAX without x64: 64-bit values in 32 bits)
        if name == "jax" and _subnormal(held):
            continue  # XLA flushes subnormals to zero: on JAX such an item is no member (backends/sets.py)
        expected = flatten_batch(held, space)
        try:
            flat = to_numpy(flatten_batch(batch, space))
        except ValueError as refused:  # JAX without x64 refuses a leaf whose int64 values pass int32 (by its bounds)
            if name == "jax" and "jax_enable_x64" in str(refused):
                continue
            raise
        assert flat.shape == expected.shape
        assert np.array_equal(flat, expected.astype(flat.dtype))
        assert flat.dtype == expected.dtype or name == "jax"
        assert same(to_numpy(unflatten_batch(flatten_batch(batch, space), space)), held)


def _subnormal(value: Any) -> bool:
    """Whether a float entry of ``value`` (an array or a tree of them) is subnormal."""
    arrays = [np.asarray(v) for v in tree_values(value)] if isinstance(value, (tuple, dict)) else [np.asarray(value)]
    return any(a.dtype.kind == "f" and bool(np.any((a != 0) & (np.abs(a) < np.finfo(a.dtype).smallest_normal)))
               for a in arrays)


def test_a_plan_of_flat_codecs_dies_with_its_space() -> None:
    # its NumPy batch routes too: kept bound to the codec (core.plan.route's ``bind``), which names the space weakly
    space = sa.DictProduct(a=sa.Box(-1.0, 1.0, (3,), np.float32), b=range(5))
    flatten({"a": np.zeros(3, np.float32), "b": 2}, space)
    unflatten_batch(flatten_batch({"a": np.zeros((2, 3), np.float32), "b": np.arange(2)}, space), space)
    plan = weakref.ref(plan_for(space))
    assert _FLAT in plan().variants and (flatten_batch, "numpy") in plan().routes  # type: ignore[union-attr]
    del space
    gc.collect()
    assert plan() is None


def test_a_route_with_bind_is_kept_bound_to_its_space(monkeypatch: pytest.MonkeyPatch) -> None:
    """Law (core.plan.route): an implementation with ``bind`` is kept as ``bind(space)`` where
    that is not None, and gives what the implementation gives; the flat codec's NumPy batch
    route is its codec's method, which still names the argument for a non-member."""
    space = sa.DictProduct(a=sa.Box(-1.0, 1.0, (3,), np.float32), b=range(5))
    calls: list[Any] = []

    def run(value: Any, space: Any) -> Any:
        calls.append("run")
        return value + 1

    def bound(value: Any, space: Any) -> Any:
        calls.append("bound")
        return value + 1

    run.bind = lambda s: bound if s is space else None  # type: ignore[attr-defined]
    plan = plan_for(space)
    monkeypatch.setattr(plans, "_chosen", lambda *args: run)
    assert [plans.route("law", "numpy", space, (1, space), {}) for _ in range(2)] == [2, 2]
    monkeypatch.undo()
    assert calls == ["run", "bound"] and plan.routes["law", "numpy"] is bound
    batch = {"a": np.zeros((2, 3), np.float32), "b": np.array([1, 4])}
    assert same(unflatten_batch(flatten_batch(batch, space), space), batch)
    kept = plan.routes[flatten_batch, "numpy"]
    assert kept.args[0] == _codec(space).flatten_batch  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"(?s)flatten_batch: xs=.* is not valid for space=.*not a member of range"):
        flatten_batch({"a": np.zeros((2, 3), np.float32), "b": np.array([1, 5])}, space)


def test_the_numpy_codecs_outlive_the_bound_on_compiled_variants(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plans, "MAX_VARIANTS", 2)
    space = sa.Box(0, 9, (3,), np.int64)
    flat, codec = _codec(space), codec_for(space)
    for dtype in (torch.int64, torch.int32, torch.int16, torch.float32, torch.float64):
        x = torch.tensor([[0, 9, 10]], dtype=dtype)
        assert sa.isin(x, space).tolist() == [False]
    plan = plan_for(space)
    assert sum((key if isinstance(key, str) else key[0]) not in plans.KEPT for key in plan.variants) <= 2
    assert _codec(space) is flat and codec_for(space) is codec


def test_an_entry_that_outgrows_the_byte_bound_is_dropped() -> None:
    cache: IdentityCache[Any] = IdentityCache("test", max_bytes=10_000)
    key = sa.Box(0.0, 1.0)
    cache.put(key, np.zeros(10))
    assert key in cache
    cache.put(key, np.zeros(10_000))  # weighed again, now too heavy: the stale entry goes
    assert key not in cache and cache.nbytes == 0


def test_an_object_that_is_no_space_leaves_no_plan() -> None:
    before = len(plans._PLANS)
    with pytest.raises(TypeError, match="not a flattenable space"):
        flatten(1, object())
    assert len(plans._PLANS) == before


def test_emulate_batch_splits_by_the_plan_and_names_a_batch_of_another_structure() -> None:
    """Regression: a batch missing a key raised a bare KeyError from the field walk; the
    plan's split refuses it (and extra keys) with a ValueError naming the operation."""
    space = sa.DictProduct(a=range(3), b=sa.Box(-1.0, 1.0, (2,), np.float32))
    codec = codec_for(space)
    batch = sa.sample(space, 4, rng=0)
    buf = codec.new_buffer(4)
    assert same(codec.nativize_batch(codec.emulate_batch(buf, batch)), batch)
    for bad in ({"a": batch["a"]}, {**batch, "c": batch["a"]}):
        with pytest.raises(ValueError, match="emulate_batch: a batch of a DictProduct is a dict with the keys"):
            codec.emulate_batch(buf, bad)
    with pytest.raises(ValueError, match="emulate_batch"):
        codec.emulate_batch(torch.zeros((4, codec.width), dtype=torch.uint8), {"a": torch.zeros(4)})


@LAWS
@given(space=st.sampled_from([sa.Box(-1.0, 1.0, (3,)), sa.Interval(0, 1), sa.Categorical([3, 4]),
                              sa.FiniteSet(1, 2, 5)]),
       seed=st.integers(0, 2**16))
def test_numpy_draws_and_tests_are_variants_of_the_one_plan(space: Any, seed: int) -> None:
    """NumPy's kept draw and membership tests of a leaf space live in its one plan (no
    cache of their own): after a sample and an isin, the plan holds both, and the kept draw
    gives what a fresh generator with the same seed gives."""
    batch = sa.sample(space, 4, rng=np.random.default_rng(seed))
    assert bool(np.all(sa.isin(batch, space)))
    plan = plan_for(space)
    assert plan.numpy_draw is not None and plan.variants["numpy_draw"] is plan.numpy_draw
    assert np.asarray(batch).dtype in plan.numpy_isin
    assert same(sa.sample(space, 4, rng=np.random.default_rng(seed)), batch)
