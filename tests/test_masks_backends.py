"""Masked sampling on NumPy, torch and JAX (one definition over an array namespace,
spacealg.spaces.mask_blocks; spacealg.backends.masked turns digits into values): the draws
are legal, land on the generator's backend, and follow the seeding law of each backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg import Masked
from spacealg.strategies.masks import mask_bases, masks, probabilities

to_numpy = pytest.importorskip("spacealg.backends").to_numpy
torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
factors = sa.spaces.mask_factors.factors


def _numeric(space):
    """Whether every factor of ``space`` has numbers (torch/JAX hold no labels)."""
    return "'" not in repr(space)


def _row(mask, i, node):
    from spacealg.spaces.mask_factors import Factors

    if mask is None:
        return None
    if isinstance(node, Factors) and not isinstance(mask, (tuple, dict)):
        return mask[i] if np.ndim(mask) > len(node.sizes) else mask
    structure = node.children if isinstance(node, Factors) else node
    if isinstance(mask, dict):
        return {k: _row(v, i, structure[k]) for k, v in mask.items()}
    return tuple(_row(m, i, c) for m, c in zip(mask, structure))


def _at(batch, i):
    if isinstance(batch, tuple):
        return tuple(_at(b, i) for b in batch)
    if isinstance(batch, dict):
        return {k: _at(v, i) for k, v in batch.items()}
    return batch[i]


def _rng(name, seed):
    if name == "numpy":
        return np.random.default_rng(seed)
    return torch.Generator().manual_seed(seed) if name == "torch" else jax.random.key(seed)


def _on(name, mask):
    """``mask`` with its arrays moved to backend ``name`` (NumPy: as it is)."""
    if isinstance(mask, tuple):
        return tuple(_on(name, m) for m in mask)
    if isinstance(mask, dict):
        return {k: _on(name, v) for k, v in mask.items()}
    if mask is None or name == "numpy":
        return mask
    return torch.as_tensor(np.asarray(mask)) if name == "torch" else jax.numpy.asarray(np.asarray(mask))


BACKENDS = ["numpy", "torch", "jax"]


@pytest.mark.parametrize("name", BACKENDS)
@given(data=st.data(), n=st.integers(1, 5), seed=st.integers(0, 2**16))
@settings(max_examples=8)
def test_batched_masked_draws_are_legal_on_the_backend(name, data, n, seed):
    space = data.draw(mask_bases().filter(_numeric))
    batch = data.draw(masks(space, batch=(n,), density=0.7))
    rows = [_row(batch, i, factors(space)) for i in range(n)]
    if any(Masked(space, r).is_empty for r in rows):
        with pytest.raises(ValueError):
            sa.sample(space, n, mask=batch, rng=_rng(name, seed))
        return
    try:
        drawn = sa.sample(space, n, mask=batch, rng=_rng(name, seed))
    except TypeError as error:  # a dtype the backend lacks (documented in docs/backends.md)
        assert "dtype" in str(error) or "beyond" in str(error), error
        return
    again = sa.sample(space, n, mask=batch, rng=_rng(name, seed))
    host = to_numpy(drawn)
    assert repr(host) == repr(to_numpy(again))  # same seed, same draws
    for i, row in enumerate(rows):
        assert sa.contains(_at(host, i), Masked(space, row))


def test_board_masks_stay_on_the_device_and_draw_legal_moves():
    g = torch.Generator().manual_seed(0)
    free = torch.rand(64, 15, 15, generator=g) < 0.3
    moves = sa.sample(sa.Categorical([15, 15]), mask=free, rng=g)
    assert isinstance(moves, torch.Tensor) and moves.shape == (64, 2)
    assert bool(free[torch.arange(64), moves[:, 0], moves[:, 1]].all())


def test_probability_on_jax_under_jit():
    space = sa.ArraySpace(range(4), 2)
    weights = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])

    @jax.jit
    def draw(key, w):
        return sa.sample(space, 512, probability=w, rng=key)

    drawn = np.asarray(draw(jax.random.key(0), jax.numpy.asarray(weights)))
    cells = drawn[:, 0] * 4 + drawn[:, 1]
    assert set(np.unique(cells)) <= {1, 7, 8}
    assert abs(np.mean(cells == 7) - 0.6) < 0.08


def test_an_empty_row_is_a_value_error_on_torch():
    with pytest.raises(ValueError, match="allows no element"):
        sa.sample(range(3), mask=torch.zeros((2, 3), dtype=torch.bool), rng=torch.Generator())


def _legal_or_unheld(name, draw_it, legal):
    """Draws twice with the same generator state: the same draws, each a member of ``legal``
    (a TypeError is allowed only for a dtype the backend lacks, as docs/backends.md says)."""
    try:
        drawn = draw_it()
    except TypeError as error:
        assert name != "numpy" and ("dtype" in str(error) or "beyond" in str(error)), error
        return
    host = to_numpy(drawn)
    assert repr(host) == repr(to_numpy(draw_it()))  # same seed, same draws
    for i in range(len(legal)):
        assert sa.contains(_at(host, i), legal[i])


@pytest.mark.parametrize("name", BACKENDS)
@given(data=st.data(), n=st.integers(0, 4), seed=st.integers(0, 2**16))
@settings(max_examples=8)
def test_draws_of_a_masked_space_respect_its_mask_on_every_backend(name, data, n, seed):
    space = data.draw(mask_bases().filter(_numeric))
    legal = Masked(space, data.draw(masks(space)))
    if legal.is_empty:
        with pytest.raises(ValueError):
            sa.sample(legal, n, rng=_rng(name, seed))
        return
    _legal_or_unheld(name, lambda: sa.sample(legal, n, rng=_rng(name, seed)), [legal] * n)


@pytest.mark.parametrize("name", BACKENDS)
@given(data=st.data(), n=st.integers(1, 4), seed=st.integers(0, 2**16))
@settings(max_examples=8)
def test_backend_masks_and_weights_draw_members_their_rows_allow(name, data, n, seed):
    """Masks and weights given as arrays of the generator's backend, a batch of them, over
    a ``Masked`` space: every draw is allowed by the space, its row's mask and its weights."""
    space = data.draw(mask_bases().filter(_numeric))
    legal = Masked(space, data.draw(masks(space)))
    mask = data.draw(masks(space, batch=(n,), density=0.8))
    weights = data.draw(probabilities(space))
    rows = [Masked(Masked(legal, _row(mask, i, factors(space))), _support(weights)) for i in range(n)]

    def draw_it():
        return sa.sample(legal, n, mask=_on(name, mask), probability=_on(name, weights), rng=_rng(name, seed))

    if any(r.is_empty for r in rows):
        with pytest.raises(ValueError):
            draw_it()
        return
    _legal_or_unheld(name, draw_it, rows)


def _support(weights):
    """The mask of the entries with a positive weight (in the same form as ``weights``)."""
    if isinstance(weights, tuple):
        return tuple(_support(w) for w in weights)
    if isinstance(weights, dict):
        return {k: _support(w) for k, w in weights.items()}
    return None if weights is None else np.asarray(weights) > 0


def test_masked_onehot_draws_on_torch_and_under_jit():
    """A OneHot's masks are over its hot positions (its image): draws on torch and JAX, jitted
    too, are one-hot vectors of the space's dtype whose hot position the mask allows."""
    space = sa.OneHot([3, 2], dtype=np.float32)
    legal = Masked(space, (np.array([False, True, True]), np.array([True, False])))
    drawn = sa.sample(legal, 64, rng=torch.Generator().manual_seed(0))
    assert isinstance(drawn, torch.Tensor) and drawn.dtype == torch.float32 and drawn.shape == (64, 5)
    jitted = jax.jit(lambda key: sa.sample(legal, 64, rng=key))(jax.random.key(0))
    for host in (to_numpy(drawn), np.asarray(jitted)):
        assert bool(sa.isin(host, legal).all())
        assert set(np.argmax(host[:, :3], axis=1)) == {1, 2}


@pytest.mark.parametrize("name", ["torch", "jax"])
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=3), scalar=st.booleans(), n=st.integers(0, 4),
       dtype=st.sampled_from([np.bool_, np.float32, np.int64]), seed=st.integers(0, 2**16))
@settings(max_examples=10)
def test_an_image_decodes_on_the_backend_as_on_numpy(name, sizes, scalar, n, dtype, seed):
    """``core.image.Image.decode_on``'s law: ``to_numpy(decode_on(k, y)) == decode(to_numpy(y))``,
    value for value, in the dtype the backend holds NumPy's in (JAX without x64: int64 as int32),
    for batches of a OneHot's hot positions held by torch or JAX."""
    from spacealg.core.image import image_of
    from spacealg.core.kernel import kernel_for

    space = sa.OneHot(sizes[0] if scalar else sizes, dtype=dtype)
    image = image_of(space)
    positions = np.asarray(sa.sample(image.space, n, rng=seed), dtype=np.int64)
    k = kernel_for(name, _rng(name, seed), _rng(name, seed))
    on_backend = torch.as_tensor(positions) if name == "torch" else jax.numpy.asarray(positions)
    got, expected = to_numpy(image.decode_on(k, on_backend)), image.decode(positions)
    assert got.dtype == to_numpy(k.constant(expected)).dtype and np.array_equal(got, expected)
