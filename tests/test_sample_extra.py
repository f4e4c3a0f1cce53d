"""The one check of a ``sample`` call's extra keywords (``spacealg.core.rng.no_extra``), and the rules using it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.core.kernel import NUMPY
from spacealg.core.rng import no_extra

_EXTRA = st.dictionaries(st.sampled_from(["mask", "probability", "p", "weights"]), st.none() | st.integers(0, 3))


@given(_EXTRA, st.sampled_from([None, "torch", "jax"]))
def test_no_extra_raises_exactly_when_a_keyword_is_given_naming_those(extra: dict[str, Any], backend: Any) -> None:
    given_keys = sorted(k for k, v in extra.items() if v is not None)
    if not given_keys:
        assert no_extra(extra, backend) is None
        return
    with pytest.raises(TypeError, match="not supported with") as error:
        no_extra(extra, backend)
    assert str(given_keys) in str(error.value)
    assert (backend or "this") in str(error.value)


def test_every_batched_sample_rule_refuses_extra_keywords() -> None:
    from spacealg.backends import masked, operations
    from spacealg.spaces import array, onehot, product

    calls = [
        lambda: operations._sample("torch", sa.Box(0, 1), 2, rng=None, mask=1),
        lambda: masked._sample_rule(NUMPY, sa.Masked(sa.Categorical(3), np.ones(3, bool)), 2, rng=None, mask=1),
        lambda: product.RULES["sample"](NUMPY, sa.TupleProduct(sa.Box(0, 1)), 2, rng=None, mask=1),
        lambda: array.RULES["sample"](NUMPY, sa.ArraySpace(range(3), 2), 2, rng=None, mask=1),
        lambda: onehot._sample_rule(NUMPY, onehot.OneHot(3), 2, mask=1),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=r"\['mask'\] are not supported with"):
            call()
