"""The per-space plans of the backends (spacealg.core.plan) and the CPU sampler's stream.

Laws: ``split(join(parts)) == parts`` and ``join(split(b))`` has ``b``'s structure; a batch
of another structure splits to None (and the operations raise ValueError naming it); two
spaces never share a plan, also when one reuses a dead one's id; a product's plan dies with
it; the plan cache's byte bound counts the device constants plans keep; a plan keeps at
most ``MAX_VARIANTS`` compiled variants; interleaved CPU samplers keep their own streams.
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
from spacealg.backends.rng import TorchCpuRng
from spacealg.core import plan as plans
from spacealg.core.cache import IdentityCache
from spacealg.core.leaf import LeafModel
from spacealg.core.plan import tree_values
from spacealg.strategies import spaces
from tests.helpers import stacks

torch = pytest.importorskip("torch")

LAWS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SPACE = sa.DictProduct(pos=sa.Box(-1.0, 1.0, (16,), np.float32), d=range(4), md=sa.Categorical([3, 4]))


def structure(tree: Any, batch: Any) -> Any:
    """``batch``'s nesting (tuple/dict keys) with the leaf arrays replaced by their ids."""
    if isinstance(tree, LeafModel):
        return id(batch)
    if isinstance(tree, tuple):
        return tuple(structure(t, b) for t, b in zip(tree, batch))
    return {k: structure(t, batch[k]) for k, t in tree.items()}


@LAWS
@given(spaces(composites=("tuple", "dict", "product"), max_depth=2).filter(stacks), st.integers(0, 2**16))
def test_split_and_join_are_inverse(space: Any, seed: int) -> None:
    plan = plans.plan_for(space)
    batch = sa.sample(space, 3, rng=torch.Generator().manual_seed(seed))
    parts = plan.split(batch)
    assert parts is not None and len(parts) == len(plan.leaves) == len(tree_values(plan.tree))
    assert all(a is b for a, b in zip(parts, tree_values(batch)))
    joined = plan.join(parts)
    assert structure(plan.tree, joined) == structure(plan.tree, batch)
    assert all(a is b for a, b in zip(plan.split(joined), parts))


def test_a_batch_of_another_structure_splits_to_none_and_raises_by_name() -> None:
    plan = plans.plan_for(SPACE)
    batch = sa.sample(SPACE, 4, rng=torch.Generator().manual_seed(0))
    assert plan.split({"pos": batch["pos"], "d": batch["d"]}) is None
    assert plan.split((batch["pos"], batch["d"], batch["md"])) is None
    assert plan.split({**batch, "extra": batch["d"]}) is None
    reordered = {"md": batch["md"], "pos": batch["pos"], "d": batch["d"]}  # a dict's order is not its structure
    assert all(a is b for a, b in zip(plan.split(reordered), plan.split(batch)))
    for operation in (sa.isin, sa.clamp):
        with pytest.raises(ValueError, match="DictProduct is a dict with the keys"):
            operation({"pos": batch["pos"], "d": batch["d"]}, SPACE)
    pair = sa.TupleProduct(range(3), sa.Box(0.0, 1.0, (2,), np.float32))
    with pytest.raises(ValueError, match="tuple of 2 component batches"):
        sa.isin((torch.zeros(3, dtype=torch.int64),), pair)


def test_two_spaces_never_share_a_plan() -> None:
    """Equal spaces are distinct keys; a space reusing a dead space's id gets its own plan."""
    a, b = sa.Box(0.0, 1.0, (2,), np.float32), sa.Box(0.0, 1.0, (2,), np.float32)
    assert plans.plan_for(a) is not plans.plan_for(b)
    x = torch.tensor([[0.5, 1.5]], dtype=torch.float32)
    gc.collect()
    gc.freeze()  # what lives now is left out of the collections below: each looks at new objects only
    try:
        for shift in range(30):  # fresh spaces, many on the ids of collected ones
            space = sa.Box(float(shift), float(shift) + 1.0, (2,), np.float32)
            assert sa.isin(x + shift, space).tolist() == [False]
            assert sa.isin(x + shift - 0.5, space).tolist() == [True]
            assert sa.clamp(x + shift, space).tolist() == [[shift + 0.5, shift + 1.0]]
            drawn = sa.sample(space, 50, rng=torch.Generator().manual_seed(shift))
            assert bool(((drawn >= shift) & (drawn <= shift + 1)).all())
            assert plans.plan_for(space).leaves[0].space is space
            del space
            gc.collect()
    finally:
        gc.unfreeze()


def test_a_products_plan_dies_with_it() -> None:
    space = sa.DictProduct(a=sa.Box(-1.0, 1.0, (3,), np.float32), b=range(5))
    sa.isin(sa.sample(space, 4, rng=torch.Generator().manual_seed(0)), space)
    plan = weakref.ref(plans.plan_for(space))
    assert space in plans._PLANS
    del space
    gc.collect()
    assert plan() is None


def test_the_byte_bound_counts_device_constants(monkeypatch: pytest.MonkeyPatch) -> None:
    """Per-entry bounds become device constants when a variant is built; the entry is weighed
    again then, and a cache whose bytes they exceed keeps no plan."""
    cache: IdentityCache[Any] = IdentityCache("test plans", max_bytes=1 << 20, weigh=plans._weigh)
    monkeypatch.setattr(plans, "_PLANS", cache)
    low = np.linspace(-1.0, 0.0, 100_000)
    space = sa.Box(low, low + 1.0, dtype=np.float64)  # 1.6 MB of bounds as NumPy arrays already
    batch = torch.zeros((2, 100_000), dtype=torch.float64)
    assert sa.isin(batch, space).tolist() == [True, True]
    assert space not in cache and cache.nbytes <= cache.max_bytes
    small = sa.Box(np.zeros(10_000), np.ones(10_000), dtype=np.float64)
    before = cache.nbytes
    assert sa.isin(torch.zeros((1, 10_000), dtype=torch.float32), small).tolist() == [True]
    assert small in cache
    assert cache.nbytes - before >= 2 * 10_000 * 8  # the float64 bounds on torch, counted
    assert cache.nbytes <= cache.max_bytes


def test_a_plan_keeps_at_most_max_variants(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plans, "MAX_VARIANTS", 2)
    space = sa.Box(0, 9, (3,), np.int64)
    for dtype in (torch.int64, torch.int32, torch.int16, torch.float32, torch.float64):
        x = torch.tensor([[0, 9, 10]], dtype=dtype)
        assert sa.isin(x, space).tolist() == [False]
        assert sa.clamp(x, space).tolist() == [[0, 9, 9]]
        assert len(plans.plan_for(space).variants) <= 2


def test_variants_follow_the_batch_dtype() -> None:
    """One space, batches of several dtypes: each gets its own decisions (bounds rounded in
    its dtype, casts), in any order."""
    space = sa.Box(0.1, 0.9, (2,), np.float64)
    for dtype in (torch.float64, torch.float32, torch.float16, torch.int64, torch.float64):
        x = torch.tensor([[0.1, 0.9], [0.0, 1.0]], dtype=torch.float64).to(dtype)
        clamped = sa.clamp(x, space)
        assert bool(sa.isin(clamped, space).all())
        expected = [bool(sa.contains(row.astype(np.float64), space)) for row in x.double().numpy()] if dtype in (
            torch.float64, torch.int64) else None
        if expected is not None:
            assert sa.isin(x, space).tolist() == expected


def test_interleaved_cpu_samplers_keep_their_streams() -> None:
    """One NumPy generator per thread serves every CPU sampler: one that draws puts its state
    in, and the state of a live one that drew last is saved first."""

    def draws(seed: int) -> TorchCpuRng:
        return TorchCpuRng(torch.Generator().manual_seed(seed))

    alone = [[], []]  # type: list[list[Any]]
    for i, seed in enumerate((1, 2)):
        rng = draws(seed)
        alone[i] = [rng.uniform((3,), torch.float64) for _ in range(3)]
    a, b = draws(1), draws(2)
    mixed = [[], []]  # type: list[list[Any]]
    for _ in range(3):
        mixed[0].append(a.uniform((3,), torch.float64))
        mixed[1].append(b.uniform((3,), torch.float64))
    for seq_alone, seq_mixed in zip(alone, mixed):
        assert all(torch.equal(x, y) for x, y in zip(seq_alone, seq_mixed))
    assert not torch.equal(alone[0][0], alone[1][0])


def test_sample_plans_follow_the_generator_kind_and_keep_determinism() -> None:
    space = sa.TupleProduct(sa.Box(-np.inf, np.inf, (2,), np.float32), sa.Box(0.0, np.inf, (2,), np.float64),
                            sa.Box(np.array([0, -5]), np.array([3, 5]), dtype=np.int16), range(2, 11, 3),
                            sa.FiniteSet(0.5, 2.5))
    first = sa.sample(space, 64, rng=torch.Generator().manual_seed(5))
    again = sa.sample(space, 64, rng=torch.Generator().manual_seed(5))
    assert all(torch.equal(x, y) for x, y in zip(first, again))
    assert bool(sa.isin(first, space).all())
    assert first[2].dtype == torch.int16 and first[3].dtype == torch.int64


def test_jax_plans_follow_tracing_and_the_x64_flag() -> None:
    """Eager and traced calls of one space get their own variants (NaN raises eagerly, stays
    NaN under jit); turning x64 on changes the dtype policy, and the plan follows."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    space = sa.TupleProduct(sa.Box(-1.0, 1.0, (2,), np.float32), range(3))
    batch = (jnp.array([[0.5, jnp.nan]], jnp.float32), jnp.array([7], jnp.int32))
    with pytest.raises(ValueError, match="NaN"):
        sa.clamp(batch, space)
    clamped = jax.jit(lambda b: sa.clamp(b, space))(batch)
    assert bool(jnp.isnan(clamped[0][0, 1])) and int(clamped[1][0]) == 2
    assert sa.sample(space, 2, rng=jax.random.key(0))[1].dtype == jnp.int32
    jax.config.update("jax_enable_x64", True)
    try:
        drawn = sa.sample(space, 2, rng=jax.random.key(0))
        assert drawn[1].dtype == jnp.int64 and bool(sa.isin(drawn, space).all())
    finally:
        jax.config.update("jax_enable_x64", False)
    assert sa.sample(space, 2, rng=jax.random.key(0))[1].dtype == jnp.int32


def test_the_torch_kernel_sampler_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sampler that CUDA generators get (torch's own kernels), run with a CPU generator:
    its plans (per-entry widths on the device, sets, stepped ranges) land inside, seeded."""
    from spacealg.backends import sample as sampling
    from spacealg.backends.rng import TorchRng

    monkeypatch.setattr(sampling, "rng_adapter", lambda rng, name: TorchRng(rng))
    space = sa.TupleProduct(SPACE, sa.Box(np.array([0, -5]), np.array([3, 5]), dtype=np.int16), range(2, 11, 3),
                            sa.FiniteSet(0.5, 2.5), sa.Box(0.0, np.inf, (2,), np.float64))
    first = sa.sample(space, 200, rng=torch.Generator().manual_seed(9))
    again = sa.sample(space, 200, rng=torch.Generator().manual_seed(9))
    assert bool(sa.isin(first, space).all())
    assert all(torch.equal(x, y) for x, y in zip(first[1:], again[1:]))
    assert set(first[0]["md"][:, 1].tolist()) == {0, 1, 2, 3} and set(first[2].tolist()) == {2, 5, 8}


def test_a_plain_dict_space_gets_a_fresh_walking_plan_each_call() -> None:
    space = {"a": sa.Box(0.0, 1.0, (2,), np.float32), "b": range(3)}
    plan = plans.plan_for(space)
    assert plans.plan_for(space) is not plan and space not in plans._PLANS
    batch = sa.sample(space, 5, rng=torch.Generator().manual_seed(0))
    assert set(batch) == {"a", "b"} and bool(sa.isin(batch, space).all())
    assert all(x is y for x, y in zip(plan.split(plan.join(plan.split(batch))), plan.split(batch)))
    assert plan.split({"a": batch["a"]}) is None


@pytest.mark.parametrize("name", ["torch", "jax"])
def test_eager_flatten_checks_every_value_and_one_program_serves_each_shape(name: str) -> None:
    """``flatten_batch``/``unflatten_batch`` of a concrete batch raise ValueError for a value
    outside a one-hot range and a row that is no one-hot concatenation, on torch (read
    before torch's scatter, which refuses the column) and on eager JAX (the program's flags,
    read after it ran); under ``jax.jit`` values cannot be read and nothing raises. A plan
    keeps one flatten variant per dtypes, whatever the batch shape."""
    from spacealg.ops import flatten_batch, unflatten_batch

    module = pytest.importorskip(name)
    space = sa.DictProduct(a=range(3), b=sa.Box(-1.0, 1.0, (2,)))
    as_array = module.as_tensor if name == "torch" else module.numpy.asarray
    bad = {"a": as_array(np.array([0, 1, 7])), "b": as_array(np.zeros((3, 2), np.float32))}
    with pytest.raises(ValueError, match="not a member of range"):
        flatten_batch(bad, space)
    with pytest.raises(ValueError, match="one-hot"):
        unflatten_batch(as_array(np.zeros((2, 5), np.float32)), space)
    for rows in (2, 5):
        good = {"a": as_array(np.arange(rows) % 3), "b": as_array(np.zeros((rows, 2), np.float32))}
        assert np.array_equal(np.asarray(unflatten_batch(flatten_batch(good, space), space)["a"]), np.arange(rows) % 3)
    two = sa.DictProduct(a=range(3), b=range(5))  # both leaves hold a non-member: the first is named
    with pytest.raises(ValueError, match=r"range\(0, 3\)"):
        flatten_batch({"a": as_array(np.array([0, 9])), "b": as_array(np.array([0, 9]))}, two)
    flattens = [key for key in plans.plan_for(space).variants if key[0] == "flatten_batch"]
    assert len(flattens) == 1  # one variant for these dtypes, whatever the rows and values
    if name == "jax":
        import jax

        jax.jit(lambda b: flatten_batch(b, space))(bad)  # traced: no value read, no error
