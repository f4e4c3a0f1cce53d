"""``sample`` on NumPy, torch and JAX: the generator decides the backend and the device.

``sample(space, size, rng=torch.Generator(device))`` gives tensors on that device;
``rng=jax.random.key(k)`` (or ``PRNGKey(k)``) gives JAX arrays. A batch has NumPy's form:
``(*size, *elsize)`` arrays, tuples/dicts of them for products; ``size=None`` gives one
element as a 0-d or element-shaped array.

Rules per leaf kind (the distributions of NumPy sampling, Gymnasium's rule):

======  ============================================================================
kind    draw
======  ============================================================================
real    bounded entries uniform on ``[low, high]``; unbounded ``N(0, 1)``; bounded below
        only ``low + Exp(1)``; above only ``high - Exp(1)``; open ends are stepped inside
        (a draw exactly on an open end, of probability 2**-24 or less, becomes the nearest
        float inside)
int     bounded: uniform among the integers (``low + step * k``); an integer Box with an
        unbounded side follows the real rule, floored and clipped (as NumPy)
set     uniform among the items
======  ============================================================================

Laws: ``isin(sample(s, n, rng=g), s).all()``; the same generator state (torch) or key
(JAX) on the same device gives the same batch; a JAX key is split, never reused, and
``sample`` is traceable under ``jax.jit``/``jax.vmap`` with the space static.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from spacealg.backends.ends import inner_float_bounds
from spacealg.backends.rng import rng_adapter
from spacealg.core.kernel import Kernel, kernel_class
from spacealg.core.leaf import LeafModel, Members
from spacealg.core.leaf_index import held
from spacealg.core.plan import Plan, plan_for
from spacealg.spaces._batch import normalize_size

__all__ = ["draws_for", "sample_on", "sample_with"]


def sample_on(name: str, space: Any, size: Any, rng: Any, adapter: Any = None) -> Any:
    """The batch of ``size`` drawn from ``space`` with the NumPy or torch generator or JAX key ``rng``
    (through ``adapter``, its adapter, where the call made one: a CPU generator's advances it).

    The per-leaf decisions (dtypes, widths, bounds, constants, which draw) are made once per
    space, backend, device and generator kind, and kept in the space's plan
    (:mod:`spacealg.core.plan`); a call draws every leaf and joins the batch.
    """
    adapter = adapter if adapter is not None else rng_adapter(rng, name)
    if name == "jax" and not adapter.backend.is_traced(rng):
        plan = plan_for(space, name, "sample")
        program = plan.variant(("sample program", "jax"), lambda: _program(plan))
        return program(rng, () if size is None else normalize_size(size))
    return sample_with(adapter, space, size)


def _program(plan: Plan) -> Callable[[Any, tuple[int, ...]], Any]:
    """A JAX key's draws as one ``jax.jit`` program per batch shape, joined outside it (a
    program returns dicts with sorted keys). Eager JAX compiles each operation once per new
    shape: a three-leaf Dict's first sample at a new size took 410 ms eager, 260 ms as one
    program, and a warm call of 16 rows 383 -> 31 us (2-core CPU)."""
    import jax

    def leaves(key: Any, shape: tuple[int, ...]) -> list[Any]:
        adapter = rng_adapter(key, "jax")
        _, draws = draws_for(plan.space, adapter)
        return [draw(adapter, shape) for draw in draws]

    program = jax.jit(leaves, static_argnums=1)
    return lambda key, shape: _joined(plan, program(key, shape))


def sample_with(adapter: Any, space: Any, size: Any) -> Any:
    """:func:`sample_on` with the generator's adapter (:mod:`~spacealg.backends.rng`)."""
    shape = () if size is None else normalize_size(size)
    plan, draws = draws_for(space, adapter)
    return _joined(plan, [draw(adapter, shape) for draw in draws])


def _joined(plan: Plan, leaves: list[Any]) -> Any:
    if plan.leaves and plan.tree is plan.leaves[0]:  # a leaf space: its one draw is the batch (an empty
        # product has no leaf: its batch is () or {}, as on NumPy)
        return leaves[0]
    return plan.join(leaves)


def draws_for(space: Any, adapter: Any) -> tuple[Plan, list[Draw]]:
    """``space``'s plan and its leaves' draws for adapters like ``adapter``, built once (its
    ``plan_key``: the adapter's class, backend, device and dtype policy)."""
    plan = plan_for(space, adapter.name, "sample")
    draws = plan.variants.get(adapter.plan_key)
    if draws is None:
        kind: Any = type(adapter)
        k = kernel_class(adapter.name).on_device(adapter.name, adapter.device)
        draws = plan.variant(adapter.plan_key, lambda: [_sample_leaf(k, kind, leaf) for leaf in plan.leaves])
    return plan, draws


Draw = Callable[[Any, tuple[int, ...]], Any]


def _sample_leaf(k: Kernel, kind: Any, leaf: LeafModel) -> Draw:
    """``draw(rng, size)``: a batch of ``size`` of ``leaf`` from an adapter of class ``kind``,
    every decision made."""
    element = leaf.shape
    dtype = k.native(leaf)
    xp = k.xp
    if leaf.members is Members.NUMBERS:
        assert leaf.numbers is not None
        exact, _ = held(leaf, k.numpy_dtype(dtype))
        if len(exact) != len(leaf.numbers):  # FiniteSet(0.5, 2**53 + 1): no dtype holds every item
            native = k.numpy_dtype(dtype)
            if native != leaf.value_dtype:  # narrowed by the policy (JAX without x64)
                raise ValueError(f"{k.name}: {leaf.space!r} has {leaf.value_dtype} items that {native} cannot "
                                 "hold; enable x64 with jax.config.update('jax_enable_x64', True)")
            raise TypeError(f"sample: no {native} array holds every item of {leaf.space!r}")
        values = k.const(leaf, "values", lambda: exact, dtype)
        count = kind.check_below(np.asarray(len(leaf.numbers), dtype=object))

        def pick(rng: Any, size: tuple[int, ...]) -> Any:
            return values[rng.below_checked(count, size + element)]

        return pick
    if leaf.members is Members.INTEGERS and bool(leaf.bounded_low.all() and leaf.bounded_high.all()):
        step = leaf.step
        if getattr(kind, "numpy_stream", False) and step == 1:  # NumPy draws the values themselves
            np_dtype = k.numpy_dtype(dtype)
            lo, hi = _end(leaf, leaf.value_low, np_dtype), _end(leaf, leaf.value_high, np_dtype)
            from_host = k.from_host

            def numpy_integers(rng: Any, size: tuple[int, ...]) -> Any:
                return from_host(rng.numpy.integers(lo, hi, size + element, dtype=np_dtype, endpoint=True))

            return numpy_integers
        widths = kind.check_below(leaf.widths())
        if leaf.uniform_bounds:
            low: Any = int(leaf.value_low.reshape(-1)[0]) if leaf.size else 0
        else:
            low = k.const(leaf, "low", lambda: leaf.value_low, k.widest_int())

        def integers(rng: Any, size: tuple[int, ...]) -> Any:
            offsets = rng.below_checked(widths, size + element)
            if step != 1:
                offsets = offsets * step
            if not isinstance(low, int) or low:
                offsets = offsets + low
            return xp.astype(offsets, dtype, copy=False)

        return integers
    if leaf.members is Members.INTEGERS:  # an integer Box unbounded on some side: NumPy's real rule, floored
        work = k.widest_float()
        low_f, high_f = inner_float_bounds(k, leaf, work)
        draw_real = _real_draw(k, leaf, work, integral=True)

        def floored(rng: Any, size: tuple[int, ...]) -> Any:
            drawn = xp.floor(draw_real(rng, size + element))
            return xp.astype(xp.clip(drawn, low_f, high_f), dtype, copy=False)

        return floored
    # draws in a narrower dtype than the leaf's (JAX without x64) have bounds rounded to nearest;
    # a longdouble's are drawn at float64's resolution, and its ends may hold no float64
    np_dtype = k.numpy_dtype(dtype)
    clip = _needs_clip(leaf) or np_dtype != leaf.value_dtype or np.finfo(np_dtype).nmant > 52
    draw = _real_draw(k, leaf, dtype, integral=False)
    if not clip:
        if not element:
            return draw
        return lambda rng, size: draw(rng, size + element)
    low_c, high_c = inner_float_bounds(k, leaf, dtype)
    return lambda rng, size: xp.clip(draw(rng, size + element), low_c, high_c)


def _end(leaf: LeafModel, bound: np.ndarray, dtype: np.dtype) -> Any:
    """A bound as a Python int where every entry has the same bounds, else an array of ``dtype``."""
    if not leaf.uniform_bounds:
        return bound.astype(dtype)
    return int(bound.reshape(-1)[0]) if leaf.size else 0


def _real_draw(k: Kernel, leaf: LeafModel, dtype: Any, integral: bool) -> Draw:
    """``draw(rng, full)``: real draws of shape ``full`` by Gymnasium's rule per entry
    (bounded: uniform; unbounded: normal; one side: exponential from it), constants built once."""
    below, above = leaf.bounded_low, leaf.bounded_high
    top = leaf.value_high.astype(np.float64) + 1.0 if integral else leaf.value_high
    # a width beyond the dtype's largest float (a float32 Box over the whole float32 range):
    # drawn at half scale and doubled (exact), as ``low + u * width`` would be inf
    half = 0.5 if _wide(leaf, top, k.numpy_dtype(dtype)) else 1.0
    if bool((below & above).all()):
        if leaf.uniform_bounds and leaf.size:
            low, high = float(leaf.value_low.reshape(-1)[0]), float(top.reshape(-1)[0])
            if half == 1.0:
                return lambda rng, full: rng.between(full, dtype, low, high)

            def doubled(rng: Any, full: tuple[int, ...]) -> Any:
                drawn = rng.between(full, dtype, low * half, high * half)
                drawn *= 2.0
                return drawn

            return doubled
        low_c = k.const(leaf, ("low", integral, half), lambda: leaf.value_low.astype(np.float64) * half, dtype)
        width = k.const(leaf, ("width", integral, half),
                        lambda: top * half - leaf.value_low.astype(np.float64) * half, dtype)

        def uniform(rng: Any, full: tuple[int, ...]) -> Any:
            drawn = rng.uniform(full, dtype)
            drawn *= width  # in place on torch (a fresh draw), a new array on JAX
            drawn += low_c
            if half != 1.0:
                drawn *= 2.0
            return drawn

        return uniform
    xp = k.xp
    one_side = bool((below ^ above).any())
    if one_side:
        low_0 = k.const(leaf, ("low0", integral), lambda: np.where(below, leaf.value_low, 0), dtype)
        high_0 = k.const(leaf, ("high0", integral), lambda: np.where(above, top, 0), dtype)
        lower = k.const(leaf, "below_only", lambda: below & ~above, k.native(leaf, np.bool_))
        upper = k.const(leaf, "above_only", lambda: above & ~below, k.native(leaf, np.bool_))
    both = below & above
    two_sides = bool(both.any())
    if two_sides:
        low_b = k.const(leaf, ("lowb", integral, half), lambda: np.where(both, leaf.value_low * half, 0), dtype)
        width_b = k.const(leaf, ("widthb", integral, half),
                          lambda: np.where(both, top * half - leaf.value_low.astype(np.float64) * half, 1), dtype)
        mask = k.const(leaf, "both", lambda: both, k.native(leaf, np.bool_))

    def mixed(rng: Any, full: tuple[int, ...]) -> Any:
        drawn = rng.normal(full, dtype)
        if one_side:
            exponential = rng.exponential(full, dtype)
            drawn = xp.where(lower, low_0 + exponential, drawn)
            drawn = xp.where(upper, high_0 - exponential, drawn)
        if two_sides:
            uniform = rng.uniform(full, dtype) * width_b + low_b
            drawn = xp.where(mask, uniform if half == 1.0 else uniform * 2.0, drawn)
        return drawn

    return mixed


def _wide(leaf: LeafModel, top: np.ndarray, dtype: np.dtype) -> bool:
    """Whether an entry bounded on both sides is wider than the largest float of ``dtype``."""
    both = leaf.bounded_low & leaf.bounded_high
    if not both.any():
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        widths = np.asarray(top, dtype=np.float64)[both] - np.asarray(leaf.value_low, dtype=np.float64)[both]
    return bool((widths > float(np.finfo(dtype).max)).any())


def _needs_clip(leaf: LeafModel) -> bool:
    """Whether a real draw may land outside: open ends, or a width not exact in the dtype.

    ``low + u * (high - low)`` with ``u < 1`` never exceeds ``high`` when ``high - low``
    is exact in the dtype (rounding is monotone), so most boxes skip the clip.
    """
    key = "needs_clip"
    if key not in leaf.cache:
        both = leaf.bounded_low & leaf.bounded_high
        exact = True
        if both.any():
            lows = leaf.value_low[both].astype(leaf.value_dtype)
            highs = leaf.value_high[both].astype(leaf.value_dtype)
            if lows.size > 1:  # exactness is a function of the pair (low, high): each distinct pair once
                pairs = np.unique(np.stack([lows.reshape(-1), highs.reshape(-1)], axis=1), axis=0)
                lows, highs = pairs[:, 0], pairs[:, 1]
            with np.errstate(over="ignore"):
                widths = (highs - lows).astype(leaf.value_dtype)
            exact = bool(np.isfinite(widths).all()) and all(
                Fraction(float(h)) - Fraction(float(lo)) == Fraction(float(w))
                for lo, h, w in zip(lows.reshape(-1), highs.reshape(-1), widths.reshape(-1))
            )
        leaf.cache[key] = leaf.open_low or leaf.open_high or not exact or np.dtype(leaf.value_dtype).itemsize < 4
    return leaf.cache[key]  # type: ignore[no-any-return]

