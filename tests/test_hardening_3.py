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


# -- C: products holding Masked parts, drawn on the backend ----------------------------------------


def _numeric(space):
    """Whether every factor of ``space`` has numbers (torch/JAX hold no labels)."""
    return "'" not in repr(space)


def _products():
    from hypothesis import strategies as st

    from spacealg.strategies.masks import mask_bases, masked_spaces

    masked = masked_spaces(mask_bases(1).filter(_numeric), nonempty=True)
    plain = mask_bases(1).filter(_numeric)
    part = st.one_of(masked, plain)
    tuples = st.tuples(masked, st.lists(part, max_size=2)).map(lambda t: sa.TupleProduct(t[0], *t[1]))
    dicts = st.tuples(masked, st.lists(part, max_size=2)).map(
        lambda t: sa.DictProduct({f"k{i}": s for i, s in enumerate([t[0], *t[1]])})
    )
    scalar = masked.filter(lambda m: sa.elsize(m) == ())
    arrays = st.tuples(scalar, st.integers(0, 3)).map(lambda t: ArraySpace(t[0], t[1]))
    nested = st.tuples(tuples, part).map(lambda t: sa.TupleProduct(*t))
    return st.one_of(tuples, dicts, arrays, nested)


def _leaves(batch):
    if isinstance(batch, tuple):
        return [x for b in batch for x in _leaves(b)]
    if isinstance(batch, dict):
        return [x for b in batch.values() for x in _leaves(b)]
    return [batch]


def _make_product_test():
    from hypothesis import given, settings
    from hypothesis import strategies as st


    @pytest.mark.parametrize("name", ["torch", "jax"])
    @given(space=_products(), size=st.sampled_from([None, 1, 4, (2, 3)]), seed=st.integers(0, 2**16))
    @settings(max_examples=25, deadline=None)
    def test_products_with_masked_parts_draw_on_the_backend(name, space, size, seed):
        """Laws: every draw is a member (NumPy's ``isin``/``contains`` after moving it to the
        host); its leaves are the backend's arrays; the same seed gives the same draws;
        NumPy draws the same space too (the same set of laws on every backend)."""
        rng = (lambda: torch.Generator().manual_seed(seed)) if name == "torch" else (lambda: jax.random.key(seed))
        drawn = sa.sample(space, size, rng=rng())
        host = to_numpy(drawn)
        if size is None:
            assert sa.contains(host, space)
            assert sa.contains(sa.sample(space, rng=seed), space)
        else:
            assert np.asarray(sa.isin(host, space)).all()
            assert np.asarray(sa.isin(sa.sample(space, size, rng=seed), space)).all()
        kind = torch.Tensor if name == "torch" else jax.Array
        assert all(isinstance(leaf, kind) for leaf in _leaves(drawn))
        assert repr(host) == repr(to_numpy(sa.sample(space, size, rng=rng())))

    return test_products_with_masked_parts_draw_on_the_backend


test_products_with_masked_parts_draw_on_the_backend = _make_product_test()


@pytest.mark.parametrize("name", ["torch", "jax"])
def test_a_product_with_a_masked_part_is_not_refused(name):
    """The regression of point 6: this raised TypeError ("drawn with a NumPy rng")."""
    space = sa.TupleProduct(Masked(range(3), np.array([0, 1, 1], bool)), range(4))
    rng = torch.Generator().manual_seed(0) if name == "torch" else jax.random.key(0)
    first, second = sa.sample(space, 64, rng=rng)
    assert set(np.unique(np.asarray(to_numpy(first)))) <= {1, 2}
    assert set(np.unique(np.asarray(to_numpy(second)))) <= {0, 1, 2, 3}


# -- A: from_json allocates at most a small multiple of the document, for every kind ---------------


def _peak(text):
    """The peak bytes traced while reading ``text`` (a DocumentError is an answer too)."""
    import contextlib
    import tracemalloc

    from spacealg.serialize import DocumentError

    tracemalloc.start()
    try:
        with contextlib.suppress(DocumentError):  # any other exception fails
            sa.from_json(text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _bound(text):
    return 4_000_000 + 1000 * len(text)  # bytes: a small multiple of the document


_HUGE = 10_000_000
_ALIKE_BASES = [
    {"kind": "range", "stop": 2},
    {"kind": "range", "start": -(2**70), "stop": 2**70, "step": 3},
    {"kind": "finite", "items": [0.5, 1.5, 2.5]},
]


@pytest.mark.parametrize("base", _ALIKE_BASES, ids=["range", "stepped-bigint-range", "finite"])
@pytest.mark.parametrize("dims", [[_HUGE], [2, _HUGE // 2]])
def test_a_masked_array_of_alike_entries_costs_bytes(base, dims):
    """Regression (point 1, general form): an unmasked array of ten million alike entries
    held one factor per entry (over 300 bytes each); now its factors are runs, O(1)."""
    space = {"kind": "masked", "space": {"kind": "array", "base": base, "dims": dims}, "mask": None}
    import json

    text = json.dumps({"format": "spacealg.space", "version": 1, "space": space})
    assert _peak(text) < _bound(text)


def test_a_compact_masked_array_keeps_the_laws():
    """The runs form answers as the per-entry form: equal spaces, equal hashes, same
    members, cardinality, index and element, and the JSON round trip."""
    k = 3000  # beyond the runs threshold
    base = ArraySpace(range(3), k)
    compact = Masked(base, None)
    spelled = Masked(base, tuple([None] * k))
    assert compact == spelled and hash(compact) == hash(spelled)
    assert sa.cardinality(compact) == 3**k
    x = sa.sample(compact, rng=0)
    assert sa.contains(x, compact) and sa.index(x, compact) == sa.index(x, base)
    assert np.array_equal(sa.element(12345, compact), sa.element(12345, base))
    assert np.asarray(sa.isin(sa.sample(compact, 5, rng=1), compact)).all()
    assert sa.from_json(sa.to_json(compact)) == compact
    one = np.ones(3, bool)
    one[0] = False
    partly = Masked(compact, tuple([one] + [None] * (k - 1)))
    assert sa.cardinality(partly) == 2 * 3 ** (k - 1) and partly <= compact


def _documents():
    from hypothesis import strategies as st

    from spacealg.strategies.masks import mask_bases, masked_spaces
    from spacealg.strategies.spaces import catalogued_spaces, spaces

    return st.one_of(spaces(), masked_spaces(mask_bases()), catalogued_spaces(), st.just(sa.Categorical([2, 3])))




def _make_document_fuzz():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tests.helpers import mutated_document

    hostile = st.one_of(
        st.none(), st.booleans(), st.sampled_from([0, -1, 2**63, _HUGE, 4 * 10**8, [_HUGE], [2, _HUGE], "inf", [], {}]),
        st.text(max_size=4),
    )

    @given(space=_documents(), data=st.data())
    @settings(max_examples=60, deadline=None)
    def test_mutated_documents_of_every_kind_cost_a_small_multiple(space, data):
        """Law: reading any document (a mutation of a valid one: a field replaced by a hostile
        value, huge sizes included) peaks below 4 MB + 1000 bytes per character."""
        try:
            document = sa.to_json(space)
        except TypeError:  # a space without a JSON form (documented)
            return
        text = mutated_document(document, data, hostile, st.integers(0, 2))
        assert text is not None
        assert _peak(text) < _bound(text), text[:300]

    return test_mutated_documents_of_every_kind_cost_a_small_multiple


test_mutated_documents_of_every_kind_cost_a_small_multiple = _make_document_fuzz()


def test_spaces_with_a_masked_part_take_their_kinds_rules_on_torch():
    """Law: a space holding a ``Masked`` part (itself, a product's component, an array's entry)
    answers on torch through its kinds' rules as on NumPy: ``isin`` of NumPy's draws (and of
    a draw with an entry moved off the mask) equals NumPy's, and torch's draws are members."""
    torch = pytest.importorskip("torch")
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from spacealg.backends import to_numpy
    from spacealg.strategies.masks import mask_bases, masked_spaces
    from spacealg.strategies.spaces import spaces

    wrapped = st.one_of(
        masked_spaces(mask_bases()),
        st.builds(lambda m: sa.ArraySpace(m, 2), masked_spaces(mask_bases()).filter(lambda m: _scalar(m))),
        st.builds(lambda m, s: sa.TupleProduct(s, m), masked_spaces(mask_bases()),
                  spaces(leaves=["box", "range"], composites=(), max_depth=1)),
    )

    @given(wrapped, st.integers(0, 2**16))
    @settings(max_examples=25, deadline=None)
    def law(space, seed):
        assert any(isinstance(part, sa.Masked) for part in _parts(space))
        if any(isinstance(part, sa.Masked) and part.is_empty for part in _parts(space)):
            return
        try:
            drawn = sa.sample(space, 3, rng=torch.Generator().manual_seed(seed))
        except TypeError as error:  # labels (object batches): no tensor holds them, on any route
            assert "cannot hold" in str(error)
            return
        assert sa.isin(to_numpy(drawn), space).all()
        host = sa.sample(space, 3, rng=seed)
        on_torch = _to_torch(host)
        if on_torch is not None:
            assert np.asarray(to_numpy(sa.isin(on_torch, space))).tolist() == sa.isin(host, space).tolist()

    law()


def test_clamp_in_place_of_a_masked_space_keeps_members_and_refuses_the_rest_on_numpy():
    """``clamp_`` of a ``Masked`` space on NumPy is its kind's rule, as on torch: a batch of
    members is returned itself, unchanged; one holding a non-member is a TypeError that writes
    nothing (a mask has no nearest-member rule)."""
    space = Masked(range(4), [True, False, True, True])
    x = np.array([0, 2, 3])
    assert sa.clamp_(x, space) is x and x.tolist() == [0, 2, 3]
    y = np.array([0, 1, 3])
    with pytest.raises(TypeError, match="no nearest-member rule"):
        sa.clamp_(y, space)
    assert y.tolist() == [0, 1, 3]


def _scalar(space):
    try:
        return sa.elsize(space) == ()
    except TypeError:
        return False


def _to_torch(batch):
    """The batch with its arrays as tensors (None where one is not numeric)."""
    import torch

    if isinstance(batch, tuple):
        parts = [_to_torch(b) for b in batch]
        return None if any(p is None for p in parts) else tuple(parts)
    batch = np.asarray(batch)
    return torch.as_tensor(batch) if batch.dtype.kind in "biuf" else None


def _parts(space):
    """``space`` and every part of it, depth first (products' components, arrays' base)."""
    yield space
    parts = getattr(space, "_spaces", ())
    for part in parts.values() if isinstance(parts, dict) else parts:
        yield from _parts(part)
    if isinstance(space, sa.ArraySpace):
        yield from _parts(space.space)
