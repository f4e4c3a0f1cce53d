"""``clamp`` and ``clamp_`` on NumPy, torch and JAX: the nearest member of every entry.

======  ==============================================================================
kind    the clamp of an entry ``x`` (NumPy's rules)
======  ==============================================================================
real    ``x`` clipped to the nearest floats inside (open ends stepped in), in ``x``'s
        float dtype (integer batches: the space's float dtype)
int     ``x`` rounded half to even, clipped; a range's: the nearest item, ties to its
        even index (the same where its first item is even); the space's integer dtype
set     the nearest item (ties to the lower), in the promotion of the items' and
        ``x``'s dtypes
======  ==============================================================================

A Gymnasium (or Gym) space's clamp is in its own dtype, whatever the batch's (as on NumPy:
:mod:`spacealg.adapters.native`), through the backend's dtype policy.

Laws: every row of the result is a member; members are unchanged; ``clamp`` is
idempotent. NaN raises ValueError (as on NumPy) except inside ``jax.jit``, where values
cannot be inspected: there NaN entries stay NaN. ``clamp_`` writes into a torch tensor or a NumPy array
(or the arrays of a tuple/dict) and returns it; JAX arrays are immutable, so ``clamp_``
on them raises TypeError (use ``clamp``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.ends import inner_float_bounds
from spacealg.backends.integers import Ordered, bound_scalar, clip_bounds
from spacealg.backends.sets import held
from spacealg.backends.shapes import lead_checker, leaf_dtypes
from spacealg.core.kernel import Kernel, kernel_class
from spacealg.core.leaf import LeafModel, Members, common
from spacealg.core.leaf_index import clamp_holds
from spacealg.core.plan import Plan, plan_for

__all__ = ["clamp_inplace_on", "clamp_on"]


def clamp_on(name: str, x: Any, space: Any) -> Any:
    """The nearest member of ``space`` to every row of the NumPy/torch/JAX batch ``x``.

    The per-leaf decisions are made once per space, backend, device and leaf dtypes and kept
    in the space's plan (:mod:`spacealg.core.plan`).
    """
    plan, parts, run = _planned(name, x, space, "clamp")
    return plan.join(run(parts))


def clamp_inplace_on(name: str, x: Any, space: Any) -> Any:
    """:func:`clamp_on` written into the torch tensor(s) or NumPy array(s) ``x``; returns ``x``.

    Every leaf is clamped before any is written: an error (NaN, a dtype that cannot hold the
    clamp) leaves ``x`` unchanged.
    """
    if name == "jax":
        raise TypeError("clamp_: JAX arrays are immutable; use clamp (it returns the clamped batch)")
    _, parts, run = _planned(name, x, space, "clamp_")
    clamped = run(parts)
    for b, c in zip(parts, clamped):
        if name == "torch":
            b.copy_(c)
        else:
            b[...] = c
    return x


def _planned(name: str, x: Any, space: Any, what: str) -> tuple[Plan, tuple[Any, ...], Callable[[Any], list[Any]]]:
    plan = plan_for(space, name, what)
    parts = plan.check(x, what)
    dtypes = leaf_dtypes(plan, parts, what)
    kernels = kernel_class(name)
    run = plan.variant((what, dtypes, *kernels.key_of(name, parts)),
                       lambda: _build(kernels.for_program(name, parts), plan, dtypes, what))
    return plan, parts, run


def _build(k: Kernel, plan: Plan, dtypes: tuple[Any, ...], what: str) -> Callable[[Any], list[Any]]:
    if what == "clamp_":
        for leaf, dtype in zip(plan.leaves, dtypes):
            if k.kind_of(dtype) not in "bif":
                raise TypeError(f"clamp_: x must be a real tensor, got {dtype}")
            if not clamp_holds(leaf, k.numpy_dtype(dtype)):  # int8 into range(1000, 2000)
                raise TypeError(f"clamp_: x of dtype {dtype} cannot hold the clamp of {leaf.space!r}")
    clamps = [_clamp_leaf(k, leaf, dtype, what) for leaf, dtype in zip(plan.leaves, dtypes)]
    pairs = list(enumerate(clamps))
    floats = [i for i, dtype in enumerate(dtypes) if k.kind_of(dtype) == "f"]
    if k.program:
        return _as_program(k, pairs, floats)
    nan = _nan_check(k) if floats else None
    if nan is None:
        return lambda parts: [clamp(parts[i]) for i, clamp in pairs]
    # NumPy checks first (it warns when a clamp casts NaN to an integer); torch/JAX after queuing the clamps, so
    # that a GPU runs them while the host waits for the one read (bench_backends, N = 1,000,000 on an H200:
    # 134 -> 109 us a clamp, 1.89x -> 1.55x raw torch)
    first = not k.queued

    def checked(parts: Any) -> list[Any]:
        if first:
            nan([parts[i] for i in floats])
        clamped = [clamp(parts[i]) for i, clamp in pairs]
        if not first:
            nan([parts[i] for i in floats])
        return clamped

    return checked


def _as_program(
    k: Kernel, pairs: list[tuple[int, Callable[[Any], Any]]], floats: list[int]
) -> Callable[[Any], list[Any]]:
    """The clamps and the sum of the float leaves (NaN where one holds NaN, see
    :func:`_nan_check`) as one compiled program (eager JAX); the sum is read after it ran."""
    exact = _nan_check(type(k).on_device(k.name, k.device)) if floats else None

    def clamps_and_sum(parts: Any) -> tuple[list[Any], Any]:
        return [clamp(parts[i]) for i, clamp in pairs], (_total([parts[i] for i in floats]) if floats else None)

    program = k.compiled(clamps_and_sum)

    def run(parts: Any) -> list[Any]:
        clamped, total = program(parts)
        if exact is not None and math.isnan(float(total)):
            exact([parts[i] for i in floats])
        return clamped

    return run


def _nan_check(k: Kernel) -> Callable[[list[Any]], None] | None:
    """``check(arrays)``: ValueError if any of the float ``arrays`` holds NaN (None inside
    ``jax.jit``, where values cannot be read). One host read for them all: the sum of their
    sums (a NaN entry makes it NaN; a vectorised pass, much cheaper than ``isnan(b).any()``),
    the exact test only when that is NaN (or inf - inf)."""
    if k.traced:
        return None
    xp = k.xp
    torch = k.name == "torch"

    def check(arrays: list[Any]) -> None:
        if torch:
            arrays = [b.detach() for b in arrays]  # a value read, not a computation for autograd to record
        if math.isnan(float(_total(arrays))) and any(bool(xp.any(xp.isnan(b))) for b in arrays):
            raise ValueError("clamp: x contains NaN, which has no nearest member")

    return check


def _total(arrays: list[Any]) -> Any:
    """The sum of the arrays' sums: NaN where one holds NaN (or where inf - inf meets)."""
    total = arrays[0].sum()
    for b in arrays[1:]:
        total = total + b.sum()
    return total


def _clamp_leaf(k: Kernel, leaf: LeafModel, dtype: Any, what: str) -> Callable[[Any], Any]:
    """The clamp of batches of ``leaf`` of native ``dtype``, every decision made but the NaN
    check (:func:`_build` makes it, once for all leaves)."""
    lead = lead_checker(leaf, what)
    kind = k.kind_of(dtype)
    if kind == "c":
        def complex_batch(b: Any) -> Any:
            lead(b)
            raise TypeError(f"clamp: x must be a real tensor, got {b.dtype}")

        return complex_batch
    if leaf.members is Members.REAL:
        clamp = _clamp_real(k, leaf, dtype, kind)
    elif leaf.members is Members.INTEGERS:
        clamp = _clamp_int(k, leaf, dtype, kind)
    else:
        clamp = _clamp_set(k, leaf, dtype)
    if leaf.own_dtype and what == "clamp":  # a Gymnasium space's clamp is in its dtype, as on NumPy (adapters/native)
        clamp = _into(k, clamp, k.native(leaf))

    def checked(b: Any) -> Any:
        lead(b)
        return clamp(b)

    return checked


def _into(k: Kernel, clamp: Callable[[Any], Any], out: Any) -> Callable[[Any], Any]:
    return lambda b: k.xp.astype(clamp(b), out, copy=False)


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
    out = k.native(leaf)
    odd_ties = leaf.ties_by_position and leaf.size and int(leaf.value_low.reshape(-1)[0]) % 2
    if (leaf.step == 1 and not odd_ties) or not leaf.size:  # rounded half to even, clipped: NumPy's rint
        return _rounded_into(k, leaf, dtype, out) if kind == "f" else _clipped_int(k, leaf, dtype, out)
    return _snapped(k, leaf, dtype, kind, out)


def _snapped(k: Kernel, leaf: LeafModel, dtype: Any, kind: str, out: Any) -> Callable[[Any], Any]:
    """The member ``first + step * j`` nearest to each entry, ties to the even ``j`` (a
    range's ends, the same for every entry), exactly: an entry is split into an integer
    ``i`` (clipped into the ends; floats floored, in the widest float) and its fraction, and
    ``i - base`` (``base`` the nearest of a few members below, so that it never wraps) into
    whole steps and a remainder compared with the half step."""
    xp = k.xp
    first, last, step = int(leaf.value_low.reshape(-1)[0]), int(leaf.value_high.reshape(-1)[0]), leaf.step
    wide = k.widest_int()
    snap = _snap(k, first, last, step, wide)
    if kind != "f":
        clipped = _clipped_int(k, leaf, dtype, wide)
        work = k.widest_float()
        if k.numpy_dtype(work) == np.float64 and last - first < 2**52:
            # (i - first) / step in float64 is exact to within less than half the gap 1/(2 step) between a
            # quotient and a half, so one rint (ties to even) gives the even index: 6 operations, not 15
            def by_rint(b: Any) -> Any:
                i = clipped(b)
                i -= first
                steps = xp.astype(xp.round(xp.astype(i, work) / step), wide, copy=False)
                steps *= step
                steps += first
                return xp.astype(steps, out, copy=False)

            return by_rint
        return lambda b: xp.astype(snap(clipped(b), None), out, copy=False)
    work = k.widest_float()
    lo, hi = (float(common(end)) for end in leaf.inner_ends(k.numpy_dtype(work)))  # may cross: no float inside
    below, above = lo != first, hi != last  # an end no float holds: entries beyond the float are beyond the end

    def rounded(b: Any) -> Any:
        x = xp.astype(b, work, copy=False)
        c = xp.clip(x, lo, hi)
        whole = xp.floor(c)
        c -= whole  # the fraction (exact), in place: few arrays alive at once (freed together, glibc hands
        whole = xp.astype(whole, wide, copy=False)  # their pages back and the next call faults them in: 10x)
        result = snap(whole, c)
        if below:
            result = xp.where(x < lo, first, result)
        if above:
            result = xp.where(x > hi, last, result)
        return xp.astype(result, out, copy=False)

    return rounded


def _snap(k: Kernel, first: int, last: int, step: int, wide: Any) -> Callable[[Any, Any], Any]:
    """``snap(i, fraction)``: the member nearest to ``i + fraction`` (``i`` integers of native
    ``wide`` within ``first..last``, ``fraction`` floats in [0, 1) or None for 0), exactly."""
    xp = k.xp
    bits = 8 * k.numpy_dtype(wide).itemsize
    n = (last - first) // step + 1
    if n == 2 and last - first >= 2 ** (bits - 1):  # two members a step apart that no int holds: the midpoint
        mid, odd = first + (last - first) // 2, (last - first) % 2  # the midpoint: mid, or mid + 1/2 if odd

        def two(i: Any, fraction: Any) -> Any:
            up = i > mid
            if fraction is not None:
                up |= (i == mid) & (fraction > (0.5 if odd else 0.0))
            return xp.where(up, last, first)

        return two
    every = max(1, 2 ** (bits - 2) // step)  # bases every `every` steps: i - base fits wide
    bases = [(first + step * j, j % 2) for j in range(every, n - 1, every)]
    doubles = step <= 2 ** (bits - 2)  # 2 * (a remainder below step) fits wide

    def snap(i: Any, fraction: Any) -> Any:
        # ``i`` and ``fraction`` are the caller's own: worked in place where a backend allows it (few arrays
        # alive at once: see ``rounded``)
        base: Any = first
        parity: Any = 0
        for value, odd in bases:
            beyond = i >= value
            base, parity = xp.where(beyond, value, base), xp.where(beyond, odd, parity)
        i -= base
        q = i // step
        i -= q * step  # the remainder r
        if doubles:
            i += i
            i -= step
        else:
            r, i = i, i - step
            i += r
            del r
        # i is 2 r - step: twice the distance to the step below less twice to the one above
        if fraction is None:
            up, tie = i > 0, i == 0
        else:  # up where 2 r - step + 2 fraction > 0, ties at 0: the float sum keeps that sign and that zero
            fraction += fraction  # (exact near 0, where i is -1 or 0; beyond, i alone decides: |i| >= 2 > 2 f)
            fraction += xp.astype(i, fraction.dtype)
            up, tie = fraction > 0, fraction == 0
        del i, fraction
        odd_q = q + parity if bases else q
        tie &= (odd_q & 1) == 1
        up |= tie
        q += xp.astype(up, wide)
        q *= step
        q += base
        return q

    return snap


def _rounded_into(k: Kernel, leaf: LeafModel, dtype: Any, out: Any) -> Callable[[Any], Any]:
    """Float batches of native ``dtype`` rounded (half to even) and clipped into the leaf's
    integers, in native ``out``: in the float dtype where it holds every bound, else clipped
    into ``out``'s range, cast, and clipped again there, values beyond ``out``'s range going
    to the nearest end (a float32 batch into ``range(2**63 - 5, 2**63)``, which no float32
    lies in)."""
    xp = k.xp
    if not leaf.size:  # no entries: nothing to round (and no bounds: a bool Box of shape (0,))
        return lambda b: xp.astype(b, out, copy=False)
    np_dtype = np.dtype(k.numpy_dtype(dtype))
    low, high = leaf.inner_ends(np_dtype)
    exact = bool((low == leaf.value_low).all() and (high == leaf.value_high).all())
    if exact:
        lo, hi = inner_float_bounds(k, leaf, dtype)
        clip = k.clipper(dtype, lo, hi)
        return lambda b: xp.astype(clip(xp.round(b)), out, copy=False)
    info = np.iinfo(k.numpy_dtype(out))
    span = LeafModel("Box", np.dtype(np.int64), (), info.min, info.max, space=leaf.space)  # out's range
    f_lo, f_hi = (float(v) for v in span.inner_ends(np_dtype))
    into_out = k.clipper(dtype, f_lo, f_hi)
    lo_i, hi_i = _int_scalars(k, leaf, out)
    clip_out = k.clipper(out, lo_i, hi_i)

    def two_stages(b: Any) -> Any:
        r = xp.round(b)
        c = clip_out(xp.astype(into_out(r), out, copy=False))
        c = xp.where(r > f_hi, hi_i, c)  # beyond out's range: beyond every member
        return xp.where(r < f_lo, lo_i, c)

    return two_stages


def _int_scalars(k: Kernel, leaf: LeafModel, native: Any) -> tuple[Any, Any]:
    """The leaf's integer bounds for native ``native`` (which holds them): scalars or constants."""
    np_native = k.numpy_dtype(native)
    low = bound_scalar(k, leaf, np.asarray(leaf.value_low, dtype=np_native), ("low", str(native)), native)
    high = bound_scalar(k, leaf, np.asarray(leaf.value_high, dtype=np_native), ("high", str(native)), native)
    return low, high


def _clipped_int(k: Kernel, leaf: LeafModel, dtype: Any, out: Any) -> Callable[[Any], Any]:
    """Integer batches of native ``dtype`` clipped into the leaf's integers, in native ``out``:
    in the batch's own dtype (:mod:`~spacealg.backends.integers`) where it holds an integer
    of every entry, else in ``out`` (a constant clamp: the nearest end)."""
    xp = k.xp
    view = Ordered(k, dtype)
    lo, hi, disjoint = clip_bounds(k, leaf, dtype, view)
    if not disjoint:
        clip = k.clipper(view.work, lo, hi)
        if view.convert is None:
            return lambda b: xp.astype(clip(b), out, copy=False)
        return lambda b: view.restore(clip(view(b)), out)
    if view.convert is None:
        wide = k.widest_int()
        clip_wide = k.clipper(wide, *_int_scalars(k, leaf, wide))
        return lambda b: xp.astype(clip_wide(xp.astype(b, wide, copy=False)), out, copy=False)
    clip_view = k.clipper(view.work, lo, hi)
    clip_out = k.clipper(out, *_int_scalars(k, leaf, out))
    return lambda b: clip_out(view.restore(clip_view(view(b)), out))


def _clamp_set(k: Kernel, leaf: LeafModel, dtype: Any) -> Callable[[Any], Any]:
    """The nearest item that the result's dtype (the promotion of the items' and the
    batch's) holds exactly (:mod:`~spacealg.backends.sets`), ties to the lower."""
    xp = k.xp
    numbers = leaf.numbers
    assert numbers is not None
    result = np.result_type(numbers.dtype, k.numpy_dtype(dtype))
    out = k.dtype(result, leaf.value_low, leaf.value_high, leaf.space)
    values, _ = held(leaf, k.numpy_dtype(out))
    if not values.size:
        raise TypeError(f"clamp: no item of {leaf.space!r} is a {k.numpy_dtype(out)} number")
    candidates = np.sort(values)
    work = k.widest_float()
    ordered = k.const(leaf, ("sorted", str(out)), lambda: candidates.astype(np.float64), work)
    exact = k.const(leaf, ("sorted_exact", str(out)), lambda: candidates, out)
    n = len(candidates)
    if n == 1:
        return lambda b: xp.astype(xp.zeros_like(xp.astype(b, work, copy=False)), out, copy=False) + exact[0]

    def nearest(b: Any) -> Any:
        x = xp.astype(b, work, copy=False)
        right = xp.reshape(xp.clip(xp.searchsorted(ordered, xp.reshape(x, (-1,))), 1, n - 1), x.shape)
        lower, upper = ordered[right - 1], ordered[right]
        return exact[xp.where(xp.abs(x - lower) <= xp.abs(upper - x), right - 1, right)]

    return nearest
