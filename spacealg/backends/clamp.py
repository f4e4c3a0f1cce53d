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

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.isin import inner_float_bounds, lead_checker, leaf_dtypes
from spacealg.backends.kernel import Kernel
from spacealg.backends.plan import Plan, plan_for, variant
from spacealg.core.leaf import LeafModel, Members, common

__all__ = ["clamp_inplace_on", "clamp_on"]


def clamp_on(name: str, x: Any, space: Any) -> Any:
    """The nearest member of ``space`` to every row of the torch/JAX batch ``x``.

    The per-leaf decisions are made once per space, backend, device and leaf dtypes and kept
    in the space's plan (:mod:`spacealg.backends.plan`).
    """
    plan, parts, run = _planned(name, x, space, "clamp")
    return plan.join(run(parts))


def clamp_inplace_on(name: str, x: Any, space: Any) -> Any:
    """:func:`clamp_on` written into the torch tensor(s) ``x``; returns ``x``.

    Every leaf is clamped before any is written: an error (NaN, a dtype that cannot hold the
    clamp) leaves ``x`` unchanged.
    """
    if name != "torch":
        raise TypeError("clamp_: JAX arrays are immutable; use clamp (it returns the clamped batch)")
    _, parts, run = _planned(name, x, space, "clamp_")
    for b, clamped in zip(parts, run(parts)):
        b.copy_(clamped)
    return x


def _planned(name: str, x: Any, space: Any, what: str) -> tuple[Plan, tuple[Any, ...], Callable[[Any], list[Any]]]:
    plan = plan_for(space, name, what)
    parts = plan.check(x, what)
    dtypes = leaf_dtypes(plan, parts, what)
    run = variant(space, plan, (what, dtypes, *Kernel.key_of(name, parts)),
                  lambda: _build(Kernel.for_parts(name, parts), plan, dtypes, what))
    return plan, parts, run


def _build(k: Kernel, plan: Plan, dtypes: tuple[Any, ...], what: str) -> Callable[[Any], list[Any]]:
    if what == "clamp_":
        for leaf, dtype in zip(plan.leaves, dtypes):
            kind = k.kind_of(dtype)
            if leaf.members is Members.REAL and kind != "f":
                raise TypeError(f"clamp_: x of dtype {dtype} cannot hold the clamp of {leaf.space!r}")
            if kind not in "bif":
                raise TypeError(f"clamp_: x must be a real tensor, got {dtype}")
    clamps = [_clamp_leaf(k, leaf, dtype, what) for leaf, dtype in zip(plan.leaves, dtypes)]
    pairs = list(enumerate(clamps))
    return lambda parts: [clamp(parts[i]) for i, clamp in pairs]


def _nan_check(k: Kernel) -> Callable[[Any], None] | None:
    """``check(b)``: ValueError if ``b`` holds NaN (None inside ``jax.jit``, where values
    cannot be read). One sum first (a NaN entry makes it NaN; a vectorised pass, much cheaper
    than ``isnan(b).any()``), the exact test only when the sum is NaN (or inf - inf)."""
    if k.traced:
        return None
    xp = k.xp
    torch = k.name == "torch"

    def check(b: Any) -> None:
        if torch:
            b = b.detach()  # a value read, not a computation for autograd to record
        if math.isnan(float(b.sum())) and bool(xp.any(xp.isnan(b))):
            raise ValueError("clamp: x contains NaN, which has no nearest member")

    return check


def _clamp_leaf(k: Kernel, leaf: LeafModel, dtype: Any, what: str) -> Callable[[Any], Any]:
    """The clamp of batches of ``leaf`` of native ``dtype``, every decision made."""
    lead = lead_checker(leaf, what)
    kind = k.kind_of(dtype)
    if kind == "c":
        def complex_batch(b: Any) -> Any:
            lead(b)
            raise TypeError(f"clamp: x must be a real tensor, got {b.dtype}")

        return complex_batch
    nan = _nan_check(k) if kind == "f" else None
    if leaf.members is Members.REAL:
        clamp = _clamp_real(k, leaf, dtype, kind)
    elif leaf.members is Members.INTEGERS:
        clamp = _clamp_int(k, leaf, dtype, kind)
    else:
        clamp = _clamp_set(k, leaf, dtype)
    if nan is None:
        def plain(b: Any) -> Any:
            lead(b)
            return clamp(b)

        return plain

    def checked(b: Any) -> Any:
        lead(b)
        nan(b)
        return clamp(b)

    return checked


def _clamp_real(k: Kernel, leaf: LeafModel, dtype: Any, kind: str) -> Callable[[Any], Any]:
    xp = k.xp
    if kind == "f":
        low, high = inner_float_bounds(k, leaf, dtype)
        return k.clipper(dtype, low, high)
    work = k.native(leaf)
    low, high = inner_float_bounds(k, leaf, work)
    clip = k.clipper(work, low, high)
    return lambda b: clip(xp.astype(b, work, copy=False))


def _clamp_int(k: Kernel, leaf: LeafModel, dtype: Any, kind: str) -> Callable[[Any], Any]:
    xp = k.xp
    out = k.native(leaf)
    if kind == "f":
        low, high = inner_float_bounds(k, leaf, dtype)

        clip = k.clipper(dtype, low, high)

        def clipped(b: Any) -> Any:
            return clip(xp.round(b))
    else:
        wide = k.widest_int()
        lo: Any = common(leaf.value_low)
        hi: Any = common(leaf.value_high)
        lo = int(lo) if lo is not None else k.const(leaf, "low", lambda: leaf.value_low, wide)
        hi = int(hi) if hi is not None else k.const(leaf, "high", lambda: leaf.value_high, wide)

        clip_wide = k.clipper(wide, lo, hi)

        def clipped(b: Any) -> Any:
            return clip_wide(xp.astype(b, wide, copy=False))
    if leaf.step == 1 or not leaf.size:
        return lambda b: xp.astype(clipped(b), out, copy=False)
    first, step = int(leaf.value_low.reshape(-1)[0]), leaf.step
    work, wide_int = k.widest_float(), k.widest_int()

    def stepped(b: Any) -> Any:
        steps = xp.astype(xp.round((xp.astype(clipped(b), work, copy=False) - first) / step), wide_int, copy=False)
        return xp.astype(steps * step + first, out, copy=False)

    return stepped


def _clamp_set(k: Kernel, leaf: LeafModel, dtype: Any) -> Callable[[Any], Any]:
    xp = k.xp
    values = leaf.numbers
    assert values is not None
    result = np.result_type(values.dtype, k.backend.numpy_dtype(dtype))
    out = k.backend.dtype(result, leaf.value_low, leaf.value_high, leaf.space)
    work = k.widest_float()
    ordered = k.const(leaf, "sorted", lambda: np.sort(values.astype(np.float64)), work)
    n = int(ordered.shape[0])
    if n == 1:
        return lambda b: xp.astype(xp.zeros_like(xp.astype(b, work, copy=False)) + ordered[0], out, copy=False)

    def nearest(b: Any) -> Any:
        x = xp.astype(b, work, copy=False)
        right = xp.reshape(xp.clip(xp.searchsorted(ordered, xp.reshape(x, (-1,))), 1, n - 1), x.shape)
        lower, upper = ordered[right - 1], ordered[right]
        return xp.astype(xp.where(xp.abs(x - lower) <= xp.abs(upper - x), lower, upper), out, copy=False)

    return nearest
