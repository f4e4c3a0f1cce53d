"""Issue 25, fourth pass: the gaps the third left.

Point 1: ``from_json`` costs at most a small multiple of the document's size for every kind:
a per-entry mask given compactly (``{"tuple": [null, null]}`` over a large array) and a
masked integer ``Box`` with many entries hold their factors as runs, not one block each.
Point 38 on ``OneHot``: a masked TorchRL ``OneHot``/``MultiOneHot`` is a ``Masked`` space.
"""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

import spacealg as sa
from spacealg import Masked


def _doc(node):
    return {"format": "spacealg.space", "version": 1, "space": node}


def _peak(fn):
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


RANGE3 = {"kind": "range", "start": 0, "stop": 3, "step": 1}
LARGE = [
    pytest.param({"kind": "array", "base": RANGE3, "dims": [2, 500_000]}, {"tuple": [None, None]},
                 id="per-factor-nulls"),
    pytest.param({"kind": "array", "base": RANGE3, "dims": [1_000_000]}, None, id="array-null"),
    pytest.param({"kind": "box", "dtype": "int64", "shape": [10_000_000], "low": 0, "high": 5}, None, id="int-box"),
    pytest.param({"kind": "box", "dtype": "int64", "shape": [1_000_000], "low": 0, "high": 5},
                 {"tuple": [None] * 4}, id="int-box-wrong-arity"),
]


@pytest.mark.parametrize(("node", "mask"), LARGE)
def test_1_from_json_of_large_masked_arrays_costs_the_documents_size(node, mask):
    """Law: peak memory of ``from_json`` (and of ``==``/``hash`` with the unmasked form) is at
    most a small multiple of the document's size (1 MB for documents of bytes), whatever
    the number of entries; a wrong structure is still a MaskError."""
    text = json.dumps(_doc({"kind": "masked", "space": node, "mask": mask}))
    if mask is not None and len(mask["tuple"]) != node.get("dims", node.get("shape"))[0]:
        with pytest.raises(ValueError, match="mask"):
            sa.from_json(text)
        return

    def build():
        space = sa.from_json(text)
        return space, space == Masked(space.root, None), hash(space) == hash(Masked(space.root, None))

    (_space, equal, same_hash), peak = _peak(build)
    assert peak < 1_000_000 + 200 * len(text), peak
    assert equal and same_hash


# -- Point 38 on OneHot: masked OneHot/MultiOneHot specs --------------------------------------------


def _onehot_specs():
    torch = pytest.importorskip("torch")
    td = pytest.importorskip("torchrl.data")
    g = torch.Generator().manual_seed(0)
    out = []
    for n, shape in [(4, (4,)), (5, (3, 5)), (3, (2, 2, 3))]:
        mask = torch.rand(shape, generator=g) > 0.4
        mask[..., 0] = True  # every entry allows a position
        out.append((td.OneHot(n, shape=shape, mask=mask), td.OneHot(n, shape=shape)))
    for nvec, batch in [([2, 3], ()), ([3, 1, 2], (2,))]:
        mask = torch.rand((*batch, sum(nvec)), generator=g) > 0.4
        for start in np.cumsum([0, *nvec[:-1]]):
            mask[..., int(start)] = True
        shape = (*batch, sum(nvec))
        out.append((td.MultiOneHot(nvec, shape=shape, mask=mask), td.MultiOneHot(nvec, shape=shape)))
    return out


def _onehot_candidates(spec, unmasked):
    """One-hot 0/1 values of the spec's shape, allowed by its mask or not (the unmasked
    spec's draws; TorchRL's ``is_in`` does not check one-hotness, so only these compare)."""
    return [unmasked.rand() for _ in range(60)]


def test_38_masked_onehot_specs_convert_to_masked_spaces():
    """Laws: ``from_torchrl`` of a masked ``OneHot``/``MultiOneHot`` is a ``Masked`` space;
    ``contains(x, from_torchrl(spec)) == spec.is_in(x)`` on 0/1 values; every draw of the
    converted space is in the spec; ``to_torchrl`` gives the masked spec back."""
    torch = pytest.importorskip("torch")
    for spec, unmasked in _onehot_specs():
        space = sa.from_torchrl(spec)
        assert isinstance(space, Masked), spec
        for x in _onehot_candidates(spec, unmasked):
            assert sa.contains(x.numpy(), space) == bool(spec.is_in(x)), (spec, x)
        for x in sa.sample(space, 30, rng=0):
            assert bool(spec.is_in(torch.as_tensor(x))), (spec, x)
        back = sa.to_torchrl(space)
        assert type(back) is type(spec) and bool(back == spec) and torch.equal(back.mask, spec.mask)
