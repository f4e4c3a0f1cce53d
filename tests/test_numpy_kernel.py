"""NumPy has one kernel, the core's :class:`~spacealg.core.kernel.Kernel`, and every kernel's
row reduction (:meth:`~spacealg.core.kernel.Kernel.every`) is ``all`` over the last axis.

Laws: ``kernel_class(None) is kernel_class("numpy") is Kernel``, whose classmethods give
:data:`NUMPY` for any NumPy batch; no backend object stands for NumPy
(``backend_named("numpy")`` raises ValueError); the compiled NumPy variants of the leaf
rules (``isin``, ``clamp``, ``sample``) are built over :data:`NUMPY`;
``k.every(w)(rows) == xp.all(rows, axis=-1)`` for bool rows of width ``w`` (contiguous or
not) on NumPy, torch and JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.backends.arrays import backend_named
from spacealg.core import kernel as kernels
from spacealg.core.kernel import NUMPY, Kernel, kernel_class, kernel_for
from spacealg.core.plan import plan_for

LAWS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_numpy_has_one_kernel() -> None:
    x = np.zeros((3, 2))
    assert kernel_class(None) is kernel_class("numpy") is Kernel
    assert kernel_for(None, x) is kernel_for("numpy", x) is NUMPY
    assert Kernel.for_parts("numpy", (x,)) is Kernel.for_program("numpy", (x,)) is NUMPY
    assert Kernel.on_device("numpy", None) is NUMPY
    with pytest.raises(ValueError, match="'torch' or 'jax'"):
        backend_named("numpy")


@pytest.mark.parametrize("space", [sa.Box(-1.0, 1.0, (3,)), range(0, 30, 3), sa.Categorical(4),
                                   sa.FiniteSet(0.5, 2.0, 7.0)], ids=repr)
def test_the_numpy_leaf_rules_are_built_over_the_core_kernel(space: Any, monkeypatch: Any) -> None:
    """Every kernel a NumPy call of ``isin``/``clamp``/``sample`` builds its plan with is :data:`NUMPY`."""
    built: list[Any] = []
    for name in ("for_program", "on_device"):
        original = getattr(Kernel, name).__func__

        def record(cls: Any, *args: Any, _original: Any = original) -> Any:
            k = _original(cls, *args)
            built.append(k)
            return k

        monkeypatch.setattr(Kernel, name, classmethod(record))
    plan_for(space).variants.clear()  # built again, through the recorders
    batch = sa.sample(space, 5, rng=0)
    sa.isin(batch, space)
    sa.clamp(np.asarray(batch, dtype=np.float64) + 0.25, space)
    assert built and all(k is NUMPY for k in built)


def _kernels() -> list[Any]:
    import torch

    from spacealg.backends.kernel import BackendKernel

    torch_k = BackendKernel(backend_named("torch"), torch.device("cpu"))
    jax_k = BackendKernel(backend_named("jax"), None)
    return [NUMPY, torch_k, jax_k]


@LAWS
@given(st.integers(0, 80), st.lists(st.integers(0, 3), max_size=2), st.booleans(), st.integers(0, 2**16))
def test_every_is_all_over_the_last_axis(width: int, lead: list[int], strided: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = rng.random((*lead, 2 * width if strided else width)) > rng.choice([0.0, 0.01, 0.2])
    if strided:
        rows = rows[..., ::2]  # not contiguous: no view of words
    expected = rows.all(axis=-1)
    for k in _kernels():
        on = rows if k is NUMPY else k.xp.asarray(rows) if k.name == "jax" else k.module.from_numpy(
            np.ascontiguousarray(rows)) if not strided else k.module.from_numpy(rows.base)[..., ::2]
        got = np.asarray(k.every(width)(on))
        assert got.shape == expected.shape and np.array_equal(got, expected), (k.name, width, strided)


def test_every_is_decided_once_per_backend_and_width() -> None:
    assert NUMPY.every(16) is Kernel().every(16) is kernels._EVERY["numpy", 16]


@LAWS
@given(st.sampled_from(["numpy", "torch", "jax"]), st.sampled_from(["int32", "float32", "bool"]),
       st.lists(st.integers(0, 4), max_size=2), st.integers(0, 2**16))
def test_to_host_undoes_from_host(name: str, dtype: str, shape: list[int], seed: int) -> None:
    """``k.to_host(k.from_host(a))`` equals ``a`` (values, dtype, shape) on every kernel."""
    if name != "numpy":
        pytest.importorskip(name)
    a = np.random.default_rng(seed).integers(0, 2, size=tuple(shape)).astype(dtype)
    k = NUMPY if name == "numpy" else kernel_class(name).for_call(name, _native(name, a))
    back = k.to_host(k.from_host(a))
    assert isinstance(back, np.ndarray) and back.dtype == a.dtype and np.array_equal(back, a)


def _native(name: str, a: np.ndarray) -> Any:
    if name == "torch":
        import torch

        return torch.as_tensor(a)
    import jax.numpy as jnp

    return jnp.asarray(a)
