"""Batches meeting a finite set of numbers on NumPy, torch and JAX, by exact value.

An entry of dtype ``d`` equals an item exactly when ``d`` holds the item: ``float32(0.1)``
is no item of ``FiniteSet(0.1)``, and ``2**53`` no item of ``FiniteSet(2**53 + 1)``, though
rounding says otherwise. So a batch is compared in its own dtype with the items that
dtype holds (:func:`held`), never with items rounded into it (JAX without x64 rounds
float64 items to float32; a float64 constant rounds ints beyond 2**53), and a clamp picks
the nearest item that its result's dtype holds.

Laws, for a set leaf ``m`` and native dtype ``d``: ``held(m, d)``
(:func:`spacealg.core.leaf_index.held`) holds the positions of the items ``v`` with
``d(v) == v`` exactly, and their values in ``d``; ``hits(b)`` is True at ``[..., j]``
exactly when ``b[...]`` equals held item ``j``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spacealg.core.kernel import Kernel
from spacealg.core.leaf import LeafModel
from spacealg.core.leaf_index import held

__all__ = ["held", "held_values", "hits"]  # held: spacealg.core.leaf_index, the rule NumPy follows too


def hits(k: Kernel, leaf: LeafModel, dtype: Any) -> Any:
    """``match(b)``: for batches of native ``dtype``, a bool array ``(*b.shape, n)`` whose
    column ``j`` says where ``b`` equals held item ``j`` (:func:`held`)."""
    values = held_values(k, leaf, dtype)
    constant = k.const(leaf, ("held", str(dtype)), lambda: values, dtype)
    return lambda b: b[..., None] == constant


def held_values(k: Kernel, leaf: LeafModel, dtype: Any) -> np.ndarray:
    """The held items (:func:`held`) as a NumPy array of native ``dtype``'s NumPy dtype (on
    JAX, whose XLA flushes subnormals to zero, a subnormal item is NaN: it equals nothing)."""
    np_dtype = k.numpy_dtype(dtype)
    values, _ = held(leaf, np_dtype)
    if k.name == "jax" and np_dtype.kind == "f":  # XLA flushes subnormals to zero: no subnormal item compares
        tiny = np.finfo(np_dtype).smallest_normal
        values = np.where((values != 0) & (np.abs(values) < tiny), np.nan, values).astype(np_dtype)
    return values
