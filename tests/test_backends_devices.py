"""Device correctness of the torch/JAX backends, checked without a GPU.

torch's ``meta`` device (tensors with shapes and dtypes, no data) stands in for CUDA: a
tensor made on the CPU and mixed with a meta tensor raises, as it would with a CUDA one,
and every result must come back on the batch's (or generator's) device. Meta tensors are
abstract, like JAX tracers, so the checks that read values (NaN, one-hot validity) are
skipped for them. The CPU-only shortcuts (the NumPy-stream sampler, the clip into
NumPy-allocated memory) are checked by their dispatch decisions. JAX: batches sharded over
several devices (two host devices in a subprocess) and jitted batches that close over
concrete leaves.

Laws: for every stacking space, ``sample`` with a generator on device D, and ``isin``,
``clamp``, ``clamp_``, ``flatten_batch``, ``unflatten_batch``, ``emulate_tensor``,
``nativize_tensor`` of batches on D give arrays on D (``isin``: bool).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.backends import sample as sampling
from spacealg.backends.arrays import backend_named
from spacealg.backends.kernel import BackendKernel, numpy_memory
from spacealg.backends.rng import TorchCpuRng, TorchRng, torch_adapter_class
from spacealg.core.plan import tree_values
from spacealg.ops import flatten_batch, unflatten_batch
from spacealg.strategies import spaces
from tests.helpers import stacks

torch = pytest.importorskip("torch")

META = torch.device("meta")
LAWS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class MetaRng(TorchRng):
    """torch's kernel sampler (what CUDA generators get) drawing on the meta device."""

    def __init__(self, generator: Any) -> None:
        super().__init__(generator)
        self.device = META

    def exponential(self, shape: tuple[int, ...], dtype: Any) -> Any:  # meta has no generator argument here
        return torch.empty(shape, device=self.device, dtype=dtype).exponential_()


def cast(batch: Any, dtype: Any) -> Any:
    if isinstance(batch, tuple):
        return tuple(cast(b, dtype) for b in batch)
    if isinstance(batch, dict):
        return {k: cast(b, dtype) for k, b in batch.items()}
    return batch.to(dtype)


def on_meta(batch: Any) -> bool:
    return all(x.device == META for x in tree_values(batch))


# -- the CPU-only shortcuts are taken for CPU data only ----------------------------------------


def test_cpu_only_shortcuts_are_decided_by_the_device() -> None:
    assert torch_adapter_class(torch.device("cpu")) is TorchCpuRng
    for device in ("cuda", "cuda:1", "meta", "mps"):
        assert torch_adapter_class(torch.device(device)) is TorchRng
    assert numpy_memory(torch.zeros(3))
    assert not numpy_memory(torch.zeros(3, device="meta"))
    assert not numpy_memory(torch.zeros(3, requires_grad=True))  # out= would drop the gradient
    with torch.no_grad():
        assert numpy_memory(torch.zeros(3, requires_grad=True))
    k = BackendKernel(backend_named("torch"), META)
    clipped = k.clipper(torch.float32, -1.0, 1.0)(torch.zeros(4, 3, device="meta"))
    assert clipped.device == META and clipped.dtype == torch.float32


def test_a_generator_without_an_index_draws_on_the_current_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """``torch.Generator(device="cuda")`` has no index: plans and constants are keyed by the
    current device, never shared between cuda:0 and cuda:1."""
    backend = backend_named("torch")
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    assert backend.resolve(torch.device("cuda")) == torch.device("cuda", 1)
    assert backend.resolve(torch.device("cuda", 0)) == torch.device("cuda", 0)
    assert backend.resolve(torch.device("cpu")) == torch.device("cpu")
    assert TorchRng(SimpleNamespace(device=torch.device("cuda"))).device == torch.device("cuda", 1)


def test_a_cpu_tensor_that_requires_grad_clamps_with_its_gradient() -> None:
    space = sa.Box(-1.0, 1.0, (3,), np.float32)
    x = torch.linspace(-3.0, 3.0, 12).reshape(4, 3).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "converting a tensor that requires grad to a scalar"
        clamped = sa.clamp(x, space)
    assert clamped.requires_grad and bool(sa.isin(clamped, space).all())
    clamped.sum().backward()
    inside = ((x >= -1.0) & (x <= 1.0)).float()
    assert x.grad is not None and torch.equal(x.grad, inside)


# -- every result on the data's device (meta stands in for CUDA) -----------------------------------


@LAWS
@given(spaces(composites=("tuple", "dict", "product"), max_depth=2).filter(stacks), st.integers(0, 2**16))
def test_every_operation_stays_on_the_device(space: Any, seed: int) -> None:
    from spacealg.backends import kernel  # a kind rule's draws take their generator from the kernel
    from spacealg.backends.emulation import emulate_tensor, nativize_tensor
    from spacealg.emulation.codec import codec_for

    originals = sampling.rng_adapter, kernel.rng_adapter
    sampling.rng_adapter = kernel.rng_adapter = lambda rng, name: MetaRng(rng)
    try:
        batch = sa.sample(space, 3, rng=torch.Generator().manual_seed(seed))
    finally:
        sampling.rng_adapter, kernel.rng_adapter = originals
    assert on_meta(batch)
    for dtype in (None, torch.float64, torch.float32, torch.int32, torch.bool):
        b = batch if dtype is None else cast(batch, dtype)
        inside = sa.isin(b, space)
        assert inside.device == META and inside.dtype == torch.bool and tuple(inside.shape) == (3,)
        assert on_meta(sa.clamp(b, space))
    assert sa.clamp_(batch, space) is batch and on_meta(batch)
    flat = flatten_batch(batch, space)
    assert flat.device == META and on_meta(unflatten_batch(flat, space))
    for role in ("observation", "action"):
        try:
            codec_for(space, role)
        except (TypeError, ValueError):
            continue
        rows = emulate_tensor(batch, space, role)
        assert rows.device == META and on_meta(nativize_tensor(rows, space, role))


def test_an_empty_multidiscrete_unflattens_on_the_device() -> None:
    space = sa.TupleProduct(range(3), sa.ArraySpace(range(3), 0))
    batch = (torch.zeros(4, dtype=torch.int64, device="meta"), torch.zeros((4, 0), dtype=torch.int64, device="meta"))
    assert on_meta(unflatten_batch(flatten_batch(batch, space), space))


def test_masked_draws_stay_on_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mask per factor with a joint probability (factors without a mask filled with ones),
    and an empty leaf (no digits): both made on the generator's device."""
    from spacealg.backends import kernel  # masked draws take their generator from the kernel

    monkeypatch.setattr(kernel, "rng_adapter", lambda rng, name: MetaRng(rng))
    space = sa.TupleProduct(range(3), range(4))
    drawn = sa.sample(space, 2, mask=(np.array([1, 1, 0], bool), None), probability=np.ones((3, 4)),
                      rng=torch.Generator())
    assert on_meta(drawn)
    empty = sa.TupleProduct(range(3), sa.ArraySpace(range(3), 0))
    assert on_meta(sa.sample(empty, 2, mask=(np.array([1, 1, 0], bool), None), rng=torch.Generator()))


# -- draws wider than the dtype's range -----------------------------------------------------------------


def test_a_box_over_the_whole_float_range_samples_uniformly() -> None:
    """``high - low`` beyond the dtype's largest float (a float32 Box over all of float32):
    drawn at half scale and doubled; uniform on every sampler (it was all ``high`` on the CPU
    and JAX, and a RuntimeError from torch's kernels)."""
    top = float(np.finfo(np.float32).max)
    space = sa.Box(np.array([-top, 0.0]), np.array([top, 1.0]), dtype=np.float32)
    samplers: dict[str, Any] = {"cpu": lambda: sa.sample(space, 4000, rng=torch.Generator().manual_seed(1))}

    def kernels() -> Any:
        original = sampling.rng_adapter
        sampling.rng_adapter = lambda rng, name: TorchRng(rng)
        try:
            return sa.sample(space, 4000, rng=torch.Generator().manual_seed(1))
        finally:
            sampling.rng_adapter = original

    samplers["kernels"] = kernels
    jax = pytest.importorskip("jax")
    samplers["jax"] = lambda: sa.sample(space, 4000, rng=jax.random.key(1))
    for name, draw in samplers.items():
        drawn = draw()
        assert bool(sa.isin(drawn, space).all()), name
        values = np.asarray(drawn, dtype=np.float64) / np.array([top, 1.0])
        assert abs(values[:, 0].mean()) < 0.05 and values[:, 0].min() < -0.95 and values[:, 0].max() > 0.95, name
        assert abs(values[:, 1].mean() - 0.5) < 0.05, name


# -- emulation ---------------------------------------------------------------------------------------


def test_an_empty_integer_field_in_float_actions_nativizes() -> None:
    from spacealg.backends.emulation import emulate_tensor, nativize_tensor
    from spacealg.emulation.codec import codec_for

    space = sa.TupleProduct(sa.Box(0.0, 1.0, (2,), np.float32), sa.Box(0, 3, (0, 2), np.int64))
    rows = emulate_tensor(sa.sample(space, 4, rng=torch.Generator().manual_seed(0)), space, "action")
    native = nativize_tensor(rows, space, "action")
    expected = codec_for(space, "action").nativize_batch(rows.numpy())
    assert all(np.array_equal(a.numpy(), b) and a.numpy().dtype == b.dtype for a, b in zip(native, expected))


# -- JAX -----------------------------------------------------------------------------------------------


def test_jax_jitted_batches_that_close_over_concrete_leaves() -> None:
    """A jitted call whose batch mixes closed-over concrete leaves with traced ones is traced
    as a whole: no value is read (NaN and membership checks stay out of the trace)."""
    jax = pytest.importorskip("jax")
    space = sa.DictProduct(d=sa.Categorical([3, 4]), pos=sa.Box(-1.0, 1.0, (2,), np.float32), s=sa.FiniteSet(0.5, 1.5))
    batch = sa.sample(space, 3, rng=jax.random.key(0))
    d = batch["d"]

    def whole(pos: Any, s: Any) -> Any:
        return {"d": d, "pos": pos, "s": s}

    clamped = jax.jit(lambda pos, s: sa.clamp(whole(pos, s), space))(batch["pos"] * 3, batch["s"])
    assert bool(sa.isin(clamped, space).all())
    flat = jax.jit(lambda pos, s: flatten_batch(whole(pos, s), space))(batch["pos"], batch["s"])
    assert np.array_equal(np.asarray(flat), np.asarray(flatten_batch(batch, space)))
    inside = jax.jit(lambda pos, s: sa.isin(whole(pos, s), space))(batch["pos"], batch["s"])
    assert bool(inside.all())


def test_jax_batches_sharded_over_devices() -> None:
    """Constants of a batch on several devices are left uncommitted (JAX places them), and a
    batch on one device that is not the default keeps them there."""
    pytest.importorskip("jax")
    script = textwrap.dedent("""
        import numpy as np, jax
        from jax.sharding import Mesh, NamedSharding, PartitionSpec
        import spacealg as sa
        from spacealg.ops import flatten_batch
        space = sa.TupleProduct(sa.Box(np.array([0.0, -1.0]), np.array([1.0, 2.0]), dtype=np.float32),
                                sa.Categorical([3, 4]), sa.FiniteSet(0.5, 1.5))
        batch = sa.sample(space, 8, rng=jax.random.key(0))
        sharded = NamedSharding(Mesh(np.array(jax.devices()), ("x",)), PartitionSpec("x"))
        for placed in (tuple(jax.device_put(x, sharded) for x in batch),
                       tuple(jax.device_put(x, jax.devices()[1]) for x in batch)):
            assert bool(sa.isin(placed, space).all())
            assert all(np.array_equal(a, b) for a, b in zip(sa.clamp(placed, space), batch))
            assert np.array_equal(flatten_batch(placed, space), flatten_batch(batch, space))
        on_one = tuple(jax.device_put(x, jax.devices()[1]) for x in batch)
        assert sa.isin(on_one, space).devices() == {jax.devices()[1]}
        print("ok")
    """)
    # two CPU devices, and the suite's own XLA flags kept (tests/conftest.py: its cheaper code generator)
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2".strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          cwd=root)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


def test_jax_without_x64_compares_a_float64_box_exactly() -> None:
    """Without x64 a float64 Box's batches are float32: its ends are rounded inwards into the
    batch's dtype, so ``isin`` agrees with ``contains`` of the row at the edges (float32(0.3)
    is above 0.3)."""
    jax = pytest.importorskip("jax")
    space = sa.Box(np.array([0.1, -np.inf]), np.array([0.3, 0.7]), dtype=np.float64)
    rows = np.array([[0.3, 0.2], [0.1, 0.7], [0.2, 0.2], [0.2, np.nan], [0.3, -1e4]], np.float32)
    for dtype in (jax.numpy.float32, jax.numpy.float16):
        batch = jax.numpy.asarray(rows, dtype)
        expected = [bool(sa.contains(row, space)) for row in np.asarray(batch)]
        assert np.asarray(sa.isin(batch, space)).tolist() == expected
        assert np.asarray(jax.jit(lambda b: sa.isin(b, space))(batch)).tolist() == expected
        assert all(sa.contains(row, space) for row in np.asarray(sa.clamp(batch[:3], space)))
