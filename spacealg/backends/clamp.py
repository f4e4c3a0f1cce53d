"""``clamp`` and ``clamp_`` on torch and JAX: the nearest member of every entry.

======  ==============================================================================
kind    the clamp of an entry ``x`` (NumPy's rules)
======  ==============================================================================
real    ``x`` clipped to the nearest floats inside (open ends stepped in), in ``x``'s
        float dtype (integer batches: the space's float dtype)
int     ``x`` rounded half to even, clipped, onto the step; the space's integer dtype
set     the nearest item (ties to the lower), in the promotion of the items' and
        ``x``'s dtypes
======  ==============================================================================

Laws: every row of the result is a member; members are unchanged; ``clamp`` is
idempotent. NaN raises ValueError (as on NumPy) except inside ``jax.jit``, where values
cannot be inspected: there NaN entries stay NaN. ``clamp_`` writes into a torch tensor
(or the tensors of a tuple/dict) and returns it; JAX arrays are immutable, so ``clamp_``
on them raises TypeError (use ``clamp``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spacealg.backends.isin import _first, batch_lead, inner_float_bounds
from spacealg.backends.kernel import Kernel
from spacealg.backends.leaves import ArrayLeaf, map_tree, tree_for

__all__ = ["clamp_inplace_on", "clamp_on"]


def clamp_on(name: str, x: Any, space: Any) -> Any:
    """The nearest member of ``space`` to every row of the torch/JAX batch ``x``."""
    tree = tree_for(space, name, "clamp")
    k = Kernel.for_array(name, _first(x))
    return map_tree(lambda leaf, b: _clamp_leaf(k, leaf, b), tree, x, what="clamp")


def clamp_inplace_on(name: str, x: Any, space: Any) -> Any:
    """:func:`clamp_on` written into the torch tensor(s) ``x``; returns ``x``."""
    if name != "torch":
        raise TypeError("clamp_: JAX arrays are immutable; use clamp (it returns the clamped batch)")
    tree = tree_for(space, name, "clamp_")
    k = Kernel.for_array(name, _first(x))

    def write(leaf: ArrayLeaf, b: Any) -> None:
        if leaf.kind == "real" and k.kind(b) != "f":
            raise TypeError(f"clamp_: x of dtype {b.dtype} cannot hold the clamp of {leaf.space!r}")
        if k.kind(b) not in "bif":
            raise TypeError(f"clamp_: x must be a real tensor, got {b.dtype}")
        b.copy_(_clamp_leaf(k, leaf, b))

    map_tree(write, tree, x, what="clamp_")
    return x


def _check_nan(k: Kernel, b: Any) -> None:
    """ValueError if ``b`` holds NaN. One sum first (a NaN entry makes it NaN; a vectorised
    pass, much cheaper than ``isnan(b).any()``), the exact test only when the sum is NaN."""
    xp = k.xp
    if k.any_true(xp.isnan(xp.sum(b))) and k.any_true(xp.isnan(b)):
        raise ValueError("clamp: x contains NaN, which has no nearest member")


def _clamp_leaf(k: Kernel, leaf: ArrayLeaf, b: Any) -> Any:
    batch_lead(k, leaf, b, "clamp")
    xp = k.xp
    kind = k.kind(b)
    if kind == "c":
        raise TypeError(f"clamp: x must be a real tensor, got {b.dtype}")
    if kind == "f":
        _check_nan(k, b)
    if leaf.kind == "real":
        if kind != "f":
            b = xp.astype(b, k.native(leaf), copy=False)
        low, high = inner_float_bounds(k, leaf, b.dtype)
        return k.clip(b, low, high)
    if leaf.kind == "int":
        return _clamp_int(k, leaf, b, kind)
    return _clamp_set(k, leaf, b, kind)


def _clamp_int(k: Kernel, leaf: ArrayLeaf, b: Any, kind: str) -> Any:
    xp = k.xp
    dtype = k.native(leaf)
    if kind == "f":
        low, high = inner_float_bounds(k, leaf, b.dtype)
        clipped = xp.clip(xp.round(b), low, high)
    else:
        wide = k.widest_int()
        b = xp.astype(b, wide, copy=False)
        if leaf.uniform_bounds and leaf.size:
            low, high = int(leaf.low.reshape(-1)[0]), int(leaf.high.reshape(-1)[0])
        else:
            low = k.const(leaf, "low", lambda: leaf.low, wide)
            high = k.const(leaf, "high", lambda: leaf.high, wide)
        clipped = xp.clip(b, low, high)
    if leaf.step != 1:
        first = int(leaf.low.reshape(-1)[0])
        work = xp.astype(clipped, k.widest_float(), copy=False)
        steps = xp.astype(xp.round((work - first) / leaf.step), k.widest_int(), copy=False)
        return xp.astype(steps * leaf.step + first, dtype, copy=False)
    return xp.astype(clipped, dtype, copy=False)


def _clamp_set(k: Kernel, leaf: ArrayLeaf, b: Any, kind: str) -> Any:
    xp = k.xp
    values = leaf.values
    assert values is not None
    result = np.result_type(values.dtype, k.numpy_dtype(b))
    out = k.backend.dtype(result, leaf.low, leaf.high, leaf.space)
    work = k.widest_float()
    ordered = k.const(leaf, "sorted", lambda: np.sort(values.astype(np.float64)), work)
    x = xp.astype(b, work, copy=False)
    n = int(ordered.shape[0])
    if n == 1:
        return xp.astype(xp.zeros_like(x) + ordered[0], out, copy=False)
    right = xp.clip(xp.searchsorted(ordered, xp.reshape(x, (-1,))), 1, n - 1)
    right = xp.reshape(right, x.shape)
    lower, upper = ordered[right - 1], ordered[right]
    nearest = xp.where(xp.abs(x - lower) <= xp.abs(upper - x), lower, upper)
    return xp.astype(nearest, out, copy=False)
