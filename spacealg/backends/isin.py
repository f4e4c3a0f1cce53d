"""``isin`` on NumPy, torch and JAX: a bool array of the batch's shape, on the batch's device.

Rules per leaf kind, the same comparisons as NumPy's (spacealg's dtype policy: members by
value, whatever the storage dtype):

======  ==============================================================================
kind    an entry ``x`` is inside when
======  ==============================================================================
real    ``low <= x <= high`` (``<`` at an open end); NaN is outside; integer batches
        meet the integers inside the ends, exactly in their own dtype
int     ``x`` integral, within ``low..high`` and on the step (``(x - low) % step == 0``);
        float batches compare with the ends rounded inwards in their own dtype (exact)
set     ``x`` equals one of the items
======  ==============================================================================

A row is inside when every entry is; a product's row when every component's row is.
Law: ``isin(b, s)[i] == contains(b[i], s)`` for the row moved to NumPy.
Raises ValueError when the batch is not shaped as a batch of the space.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.ends import inner_float_bounds
from spacealg.backends.integers import Ordered, clip_bounds, integer_members
from spacealg.backends.sets import held_values, hits
from spacealg.backends.shapes import lead_checker, leaf_dtypes
from spacealg.core.kernel import Kernel, kernel_class
from spacealg.core.leaf import LeafModel, Members, common
from spacealg.core.plan import Plan, plan_for

__all__ = ["isin_on", "isin_variant"]


def isin_on(name: str, batch: Any, space: Any) -> Any:
    """The membership of every row of a NumPy/torch/JAX ``batch`` of ``space``.

    The per-leaf decisions (dtypes, bounds, constants, the row reduction) are made once per
    space, backend, device and leaf dtypes, and kept in the space's plan
    (:mod:`spacealg.core.plan`); a call splits the batch, runs the leaves' kernels and
    ands their rows.
    """
    plan = plan_for(space, name, "isin")
    parts = plan.check(batch, "isin")
    return isin_variant(name, space, plan, parts)(parts)


def isin_variant(name: str, space: Any, plan: Plan, parts: tuple[Any, ...]) -> Callable[[tuple[Any, ...]], Any]:
    """The compiled membership test of ``plan`` for leaf arrays like ``parts`` (their
    dtypes, backend, device), built once and kept in the plan."""
    dtypes = leaf_dtypes(plan, parts, "isin")
    kernels = kernel_class(name)

    def build() -> Callable[[tuple[Any, ...]], Any]:
        k = kernels.for_program(name, parts)
        return k.compiled(_build(k, plan, dtypes, space))

    return plan.variant(("isin", dtypes, *kernels.key_of(name, parts)), build)  # type: ignore[no-any-return]


def _build(k: Kernel, plan: Plan, dtypes: tuple[Any, ...], space: Any) -> Callable[[tuple[Any, ...]], Any]:
    tests = [_isin_leaf(k, leaf, dtype) for leaf, dtype in zip(plan.leaves, dtypes)]
    if len(tests) == 1:
        only = tests[0]
        return lambda parts: only(parts[0])
    described = repr(space)  # not the space: a plan never refers to its own key

    def run(parts: tuple[Any, ...]) -> Any:  # every leaf's answer is a fresh array
        return k.all_of([test(part) for test, part in zip(tests, parts)], described, fresh=True)

    return run


def _trailing(k: Kernel, leaf: LeafModel) -> Callable[[Any, Any], Any]:
    """``reduce(inside, lead)``: ``inside`` reduced over the element's trailing axes (every
    entry inside), by the kernel's row reduction (:meth:`~spacealg.core.kernel.Kernel.every`)."""
    n = len(leaf.shape)
    if not n:
        return lambda inside, lead: inside
    width = leaf.size
    every = k.every(width)
    if n == 1:
        return lambda inside, lead: every(inside)
    return lambda inside, lead: every(inside.reshape((*lead, width)))


def _converter(xp: Any, dtypes: list[Any]) -> Callable[[Any], Any] | None:
    """``b`` cast through ``dtypes`` in turn (None: no cast)."""
    if not dtypes:
        return None
    if len(dtypes) == 1:
        (one,) = dtypes
        return lambda b: xp.astype(b, one, copy=False)

    def cast(b: Any) -> Any:
        for dtype in dtypes:
            b = xp.astype(b, dtype, copy=False)
        return b

    return cast


def _isin_leaf(k: Kernel, leaf: LeafModel, dtype: Any) -> Callable[[Any], Any]:
    """The membership test of batches of ``leaf`` of native ``dtype``, every decision made."""
    lead = lead_checker(leaf, "isin")
    kind = k.kind_of(dtype)
    xp = k.xp
    if kind == "c":
        device = {"device": k.device} if k.name == "torch" else {}
        return lambda b: xp.zeros(lead(b), dtype=xp.bool, **device)
    casts: list[Any] = []
    if kind == "b" and leaf.members is not Members.NUMBERS:  # bools meet a set's items as they are
        dtype = k.native(leaf, np.uint8)
        casts.append(dtype)
        kind = "i"
    reduce = _trailing(k, leaf)
    if leaf.members is Members.REAL and kind == "i":  # integers meet its integers, exactly (no float cast)
        inside: Callable[[Any], Any] = _int_inside(k, integer_members(leaf), dtype, kind)
    elif leaf.members is Members.REAL:
        low, high = inner_float_bounds(k, leaf, dtype, "isin")  # exact in dtype: ends.py's law

        def within(b: Any) -> Any:
            result = b >= low
            result &= b <= high  # in place on torch (a fresh array), a new array on JAX
            return result

        inside = within
        if k.name == "jax":
            inside = _subnormals_apart(k, leaf, dtype, within)
    elif leaf.members is Members.INTEGERS:
        inside = _int_inside(k, leaf, dtype, kind)
    else:
        inside = _set_inside(k, leaf, dtype)
    cast = _converter(xp, casts)
    if cast is None:
        def plain(b: Any) -> Any:
            shape = lead(b)
            return reduce(inside(b), shape)

        return plain

    def test(b: Any) -> Any:
        shape = lead(b)
        return reduce(inside(cast(b)), shape)

    return test


def _subnormals_apart(
    k: Kernel, leaf: LeafModel, dtype: Any, within: Callable[[Any], Any]
) -> Callable[[Any], Any]:
    """JAX's XLA reads subnormal floats as zero, inputs and constants alike. Where an end
    is 0 or subnormal, entries are compared by their bits instead: IEEE floats ordered as
    integers (sign-magnitude turned two's complement, -0.0 read as 0.0), against the ends'
    bits worked out exactly in NumPy."""
    np_dtype = np.dtype(k.numpy_dtype(dtype))
    low, high = leaf.inner_ends(np_dtype)
    tiny = np.finfo(np_dtype).smallest_normal
    if not ((np.abs(low) < tiny).any() or (np.abs(high) < tiny).any()):
        return within
    bits = np.dtype(f"int{8 * np_dtype.itemsize}")
    magnitude = (1 << (8 * np_dtype.itemsize - 1)) - 1

    def order(raw: Any) -> Any:  # the float order of the bit patterns, -0.0 as 0.0
        key = raw ^ ((raw >> (8 * np_dtype.itemsize - 1)) & magnitude)
        return key + (key < 0)  # shifts negatives up by one, so that -0.0 lands on 0

    keys = [order(np.ascontiguousarray(end, np_dtype).view(bits)) for end in (low, high)]
    native = k.dtype(bits)
    first, last = (common(key) for key in keys)
    lo = bits.type(first) if first is not None else k.const(leaf, ("low_bits", np_dtype.str), lambda: keys[0], native)
    hi = bits.type(last) if last is not None else k.const(leaf, ("high_bits", np_dtype.str), lambda: keys[1], native)

    def exact(b: Any) -> Any:
        key = order(b.view(bits))
        return (key >= lo) & (key <= hi) & (b == b)  # NaN: outside

    return exact


def _int_inside(k: Kernel, leaf: LeafModel, dtype: Any, kind: str) -> Callable[[Any], Any]:
    xp = k.xp
    if kind == "f":
        low, high = inner_float_bounds(k, leaf, dtype, "isin")

        def bounded(b: Any) -> Any:
            result = b >= low
            result &= b <= high
            result &= xp.floor(b) == b
            return result
    else:  # in the batch's own dtype (an order-keeping int64 view where torch lacks kernels)
        view = Ordered(k, dtype)
        low, high, _ = clip_bounds(k, leaf, dtype, view)
        convert = view.convert

        def bounded(b: Any) -> Any:
            c = b if convert is None else convert(b)
            result = c >= low
            result &= c <= high
            return result
    if leaf.step == 1 or not leaf.size:
        return bounded
    return _on_the_step(k, leaf, kind, bounded)


def _on_the_step(k: Kernel, leaf: LeafModel, kind: str, bounded: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``bounded`` and on a stepped range's step, exactly: the entries inside the ends are
    integers the widest int holds (floats cast only there), compared by their remainder
    (``x % step == first % step``: no ``x - first`` to wrap); a step no int holds leaves two
    members, the ends."""
    xp = k.xp
    first, last, step = int(leaf.value_low.reshape(-1)[0]), int(leaf.value_high.reshape(-1)[0]), leaf.step
    wide = k.widest_int()
    fits = step <= int(np.iinfo(k.numpy_dtype(wide)).max)

    def stepped(b: Any) -> Any:
        result = bounded(b)
        ints = xp.astype(xp.where(result, b, 0) if kind == "f" else b, wide, copy=False)
        result &= (xp.remainder(ints, step) == first % step) if fits else ((ints == first) | (ints == last))
        return result

    return stepped


def _set_inside(k: Kernel, leaf: LeafModel, dtype: Any) -> Callable[[Any], Any]:
    """Equal to an item the batch's dtype holds (:mod:`~spacealg.backends.sets`): one
    comparison per item for a few items (a reduction over a short last axis is many times
    slower: 1.3 ms against 0.05 ms for 10,000 rows of 4 bools on NumPy), else all at once."""
    xp = k.xp
    values = held_values(k, leaf, dtype)
    n = len(values)
    if 0 < n <= 8:  # each item a constant of its own (concrete under jax.jit: built from NumPy)
        items = [k.const(leaf, ("held item", j, str(dtype)), functools.partial(np.asarray, v), dtype)
                 for j, v in enumerate(values)]
        first, rest = items[0], items[1:]

        def few(b: Any) -> Any:
            result = b == first
            for item in rest:
                result |= b == item  # in place on NumPy and torch (a fresh array), a new array on JAX
            return result

        return few
    match = hits(k, leaf, dtype)
    return lambda b: xp.any(match(b), axis=-1)
