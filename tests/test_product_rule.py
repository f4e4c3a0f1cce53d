"""The products' one batched rule (spacealg/spaces/product.py), on NumPy, torch and JAX alike.

A product's batch is the tuple (dict) of its components' batches; ``isin`` broadcasts the
component batches as NumPy broadcasts (a component of one row, or of no row: one member, stands
for every row), on every backend: ``isin(batch)[i] == contains(row i of the broadcast batch)``,
and component batches that do not broadcast are a ValueError on every backend. The products are
drawn with leaves of every kind the backends take, OneHot among them (so some go part by part,
the others through their compiled plan).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.backends import to_numpy
from spacealg.strategies import spaces
from spacealg.strategies.spaces import LEAF_KINDS
from tests.helpers import map_leaves, stacks, to_backend
from tests.test_backend_agreement import jax_refuses, near_misses, on_jax

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

#: JAX compiles each generated space's programs: a few products keep the file short
RULE = settings(max_examples=10, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
ROWS = 5
components = spaces(leaves=(*LEAF_KINDS, "catalogued"), composites=("tuple", "dict", "product"),
                    max_depth=1).filter(stacks)
#: a component batch's rows: ROWS of them, one row, or none (one member, no batch axis)
LEADS = ("rows", "one row", "member")


def _rows(batch: Any, index: Any) -> Any:
    """``batch[index]`` for every leaf of a tuple/dict batch."""
    return map_leaves(batch, lambda a: a[index])


def _led(batch: Any, lead: str) -> Any:
    """The component batch of ``lead`` cut from a batch of ROWS rows."""
    return {"rows": batch, "one row": _rows(batch, slice(0, 1)), "member": _rows(batch, 0)}[lead]


def _row(batch: Any, lead: str, i: int) -> Any:
    """Row ``i`` of the broadcast batch, from a component batch of ``lead``."""
    return {"rows": lambda: _rows(batch, i), "one row": lambda: _rows(batch, 0), "member": lambda: batch}[lead]()


@st.composite
def broadcast_batches(draw: Any) -> tuple[Any, list[str], list[Any]]:
    """A product, the leads of its component batches, and its components' near-miss batches of ROWS rows."""
    parts = draw(st.lists(components, min_size=1, max_size=3))
    named = draw(st.booleans())
    space = sa.DictProduct({f"k{j}": p for j, p in enumerate(parts)}) if named else sa.TupleProduct(*parts)
    seed = draw(st.integers(0, 2**16))
    full = [near_misses(p, seed + j) for j, p in enumerate(parts)]
    return space, draw(st.lists(st.sampled_from(LEADS), min_size=len(parts), max_size=len(parts))), full


def _assemble(space: Any, values: list[Any]) -> Any:
    return dict(zip(space.keys(), values)) if isinstance(space, sa.DictProduct) else tuple(values)


@RULE
@given(drawn=broadcast_batches())
def test_isin_broadcasts_the_component_batches_alike_on_every_backend(drawn: Any) -> None:
    space, leads, full = drawn
    host = _assemble(space, [_led(b, lead) for b, lead in zip(full, leads)])
    expected = np.asarray(sa.isin(host, space))
    assert expected.shape == ((ROWS,) if "rows" in leads else (1,) if "one row" in leads else ())
    for i in range(expected.size):  # the law, row by row of the broadcast batch
        parts = host.values() if isinstance(host, dict) else host
        row = _assemble(space, [_row(b, lead, i) for b, lead in zip(parts, leads)])
        assert expected.reshape(-1)[i] == sa.contains(row, space)
    assert np.array_equal(to_numpy(sa.isin(to_backend("torch", host), space)), expected)
    if jax_refuses(space):
        return
    held, reference = on_jax(host)
    answer = np.asarray(sa.isin(reference, space))  # JAX's values (subnormals flushed), on NumPy
    assert np.array_equal(to_numpy(sa.isin(held, space)), answer)
    assert np.array_equal(to_numpy(jax.jit(lambda b: sa.isin(b, space))(held)), answer)


@RULE
@given(drawn=broadcast_batches())
def test_component_batches_that_do_not_broadcast_are_a_value_error_on_every_backend(drawn: Any) -> None:
    space, leads, full = drawn
    if len(full) < 2:
        return
    longer = _assemble(space, [_stacked(full[0]), full[1], *(_led(b, lead) for b, lead in zip(full[2:], leads[2:]))])
    for name in ("numpy", "torch", "jax"):
        if name == "jax" and jax_refuses(space):
            continue
        with pytest.raises(ValueError, match="different batch shapes"):
            sa.isin(to_backend(name, longer), space)


def _stacked(batch: Any) -> Any:
    """A batch of ROWS + 1 rows: ``batch`` and its first row again."""
    return map_leaves(batch, lambda a: np.concatenate([a, a[:1]]))
