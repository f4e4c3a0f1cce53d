"""Issue 25, third pass: the points the second campaign's fixes left open.

B (point 4 on torch/JAX): weights combined from several sets (a mask with ``probability=``,
per-factor weights multiplied into joint ones) are rescaled per row before the draw, as on
NumPy, so that ``1e308`` and subnormal weights give NumPy's distribution.
C (point 6): ``sample`` of a product holding a ``Masked`` part draws on the generator's
backend and device, each part by its own rule.
"""

from __future__ import annotations

import numpy as np
import pytest

import spacealg as sa
from spacealg import ArraySpace, Masked

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
to_numpy = pytest.importorskip("spacealg.backends").to_numpy

N = 4000


def _rngs():
    return {"numpy": 0, "torch": torch.Generator().manual_seed(0), "jax": jax.random.key(0)}


def _frequencies(space, mask, probability, rng, joint_sizes):
    drawn = np.asarray(to_numpy(sa.sample(space, N, mask=mask, probability=probability, rng=rng)))
    flat = np.ravel_multi_index(tuple(np.moveaxis(drawn.reshape(N, -1), -1, 0)), joint_sizes)
    return np.bincount(flat, minlength=int(np.prod(joint_sizes))) / N


# (space, mask, probability, joint sizes, NumPy's law as exact probabilities)
EXTREME = [
    pytest.param(range(3), np.array([1, 1, 0], bool), np.array([1e308, 1e308, 1e308]), (3,), [0.5, 0.5, 0], id="huge"),
    pytest.param(range(3), np.array([0, 1, 1], bool), np.array([1.0, 5e-324, 5e-324]), (3,), [0, 0.5, 0.5],
                 id="subnormal-after-mask"),
    pytest.param(range(3), None, np.array([5e-324, 5e-324, 0.0]), (3,), [0.5, 0.5, 0], id="subnormal"),
    pytest.param(ArraySpace(range(2), 2), (np.array([1, 0], bool), np.array([1, 1], bool)),
                 (np.array([1e-200, 1.0]), np.array([1e-200, 1e-200])), (2, 2), [0.5, 0.5, 0, 0],
                 id="per-factor-product"),
    pytest.param(ArraySpace(range(2), 2), np.array([[1, 1], [0, 0]], bool),
                 (np.array([1e-300, 1.0]), np.array([1e-300, 1e-300])), (2, 2), [0.5, 0.5, 0, 0],
                 id="joint-mask-with-per-factor-weights"),
]


@pytest.mark.parametrize(("space", "mask", "probability", "sizes", "law"), EXTREME)
@pytest.mark.parametrize("backend", ["numpy", "torch", "jax"])
def test_extreme_weights_follow_numpys_law(space, mask, probability, sizes, law, backend):
    """Law: the draws' frequencies are within 0.05 (over 6 standard deviations for N=4000)
    of NumPy's distribution, with weights at the ends of float64, on every backend."""
    freq = _frequencies(space, mask, probability, _rngs()[backend], sizes)
    assert np.abs(freq - np.asarray(law)).max() < 0.05, (backend, freq)


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_device_weights_are_rescaled_too(backend):
    """Weights given as the backend's own arrays are combined on the device, rescaled per row
    (1e-30: normal in float32, as JAX holds them without x64)."""
    weights = np.array([1.0, 1e-30, 1e-30])
    mask = np.array([0, 1, 1], bool)
    native = torch.tensor(weights) if backend == "torch" else jax.numpy.asarray(weights)
    drawn = sa.sample(range(3), N, mask=mask, probability=native, rng=_rngs()[backend])
    freq = np.bincount(np.asarray(to_numpy(drawn)), minlength=3) / N
    assert np.abs(freq - [0, 0.5, 0.5]).max() < 0.05
    both = sa.sample(Masked(range(3), mask), N, probability=native, rng=_rngs()[backend])
    freq = np.bincount(np.asarray(to_numpy(both)), minlength=3) / N
    assert np.abs(freq - [0, 0.5, 0.5]).max() < 0.05
