"""``sample`` on torch and JAX: the generator decides the backend and the device.

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

from fractions import Fraction
from typing import Any

import numpy as np

from spacealg.backends.isin import inner_float_bounds
from spacealg.backends.kernel import Kernel
from spacealg.backends.leaves import ArrayLeaf, map_tree, tree_for
from spacealg.backends.rng import JaxRng, TorchRng, rng_adapter
from spacealg.spaces._batch import normalize_size

__all__ = ["sample_on"]


def sample_on(name: str, space: Any, size: Any, rng: Any) -> Any:
    """The batch of ``size`` drawn from ``space`` with the torch generator or JAX key ``rng``."""
    adapter = rng_adapter(rng, name)
    shape = normalize_size(size)
    tree = tree_for(space, name, "sample")
    kernel = Kernel(adapter.backend, adapter.device)
    return map_tree(lambda leaf: _sample_leaf(kernel, adapter, leaf, shape), tree)


def _sample_leaf(k: Kernel, rng: TorchRng | JaxRng, leaf: ArrayLeaf, size: tuple[int, ...]) -> Any:
    full = size + leaf.shape
    dtype = k.native(leaf)
    if leaf.kind == "set":
        assert leaf.values is not None
        values = k.const(leaf, "values", lambda: leaf.values, dtype)
        picks = rng.below(np.asarray(len(leaf.values)), full)
        return values[picks]
    if leaf.kind == "int" and bool(leaf.bounded_low.all() and leaf.bounded_high.all()):
        wide = k.widest_int()
        offsets = rng.below(leaf.widths(), full)
        if leaf.step != 1:
            offsets = offsets * leaf.step
        if leaf.uniform_bounds:
            drawn = offsets + int(leaf.low.reshape(-1)[0]) if leaf.size else offsets
        else:
            drawn = offsets + k.const(leaf, "low", lambda: leaf.low, wide)
        return k.xp.astype(drawn, dtype, copy=False)
    if leaf.kind == "int":  # an integer Box unbounded on some side: NumPy's real rule, floored
        work = k.widest_float()
        drawn = k.xp.floor(_draw_real(k, rng, leaf, full, work, integral=True))
        low, high = inner_float_bounds(k, leaf, work)
        return k.xp.astype(k.xp.clip(drawn, low, high), dtype, copy=False)
    drawn = _draw_real(k, rng, leaf, full, dtype, integral=False)
    if _needs_clip(leaf):
        low, high = inner_float_bounds(k, leaf, dtype)
        drawn = k.xp.clip(drawn, low, high)
    return drawn


def _draw_real(k: Kernel, rng: TorchRng | JaxRng, leaf: ArrayLeaf, full: tuple[int, ...], dtype: Any,
               integral: bool) -> Any:
    below, above = leaf.bounded_low, leaf.bounded_high
    top = leaf.high.astype(np.float64) + 1.0 if integral else leaf.high
    if bool((below & above).all()):
        if leaf.uniform_bounds and leaf.size:
            low, high = float(leaf.low.reshape(-1)[0]), float(top.reshape(-1)[0])
            return rng.between(full, dtype, low, high)
        low_c = k.const(leaf, ("low", integral), lambda: leaf.low, dtype)
        width = k.const(leaf, ("width", integral), lambda: top - leaf.low.astype(np.float64), dtype)
        return rng.uniform(full, dtype) * width + low_c
    xp = k.xp
    drawn = rng.normal(full, dtype)
    if bool((below ^ above).any()):
        exponential = rng.exponential(full, dtype)
        low_c = k.const(leaf, ("low0", integral), lambda: np.where(below, leaf.low, 0), dtype)
        high_c = k.const(leaf, ("high0", integral), lambda: np.where(above, top, 0), dtype)
        lower = k.const(leaf, "below_only", lambda: below & ~above, k.native(leaf, np.bool_))
        upper = k.const(leaf, "above_only", lambda: above & ~below, k.native(leaf, np.bool_))
        drawn = xp.where(lower, low_c + exponential, drawn)
        drawn = xp.where(upper, high_c - exponential, drawn)
    both = below & above
    if bool(both.any()):
        low_b = k.const(leaf, ("lowb", integral), lambda: np.where(both, leaf.low, 0), dtype)
        width = k.const(leaf, ("widthb", integral),
                        lambda: np.where(both, top - leaf.low.astype(np.float64), 1), dtype)
        mask = k.const(leaf, "both", lambda: both, k.native(leaf, np.bool_))
        drawn = xp.where(mask, rng.uniform(full, dtype) * width + low_b, drawn)
    return drawn


def _needs_clip(leaf: ArrayLeaf) -> bool:
    """Whether a real draw may land outside: open ends, or a width not exact in the dtype.

    ``low + u * (high - low)`` with ``u < 1`` never exceeds ``high`` when ``high - low``
    is exact in the dtype (rounding is monotone), so most boxes skip the clip.
    """
    key = "needs_clip"
    if key not in leaf.cache:
        both = leaf.bounded_low & leaf.bounded_high
        exact = True
        if both.any():
            lows = leaf.low[both].astype(leaf.dtype)
            highs = leaf.high[both].astype(leaf.dtype)
            with np.errstate(over="ignore"):
                widths = (highs - lows).astype(leaf.dtype)
            exact = bool(np.isfinite(widths).all()) and all(
                Fraction(float(h)) - Fraction(float(lo)) == Fraction(float(w))
                for lo, h, w in zip(lows.reshape(-1), highs.reshape(-1), widths.reshape(-1))
            )
        leaf.cache[key] = leaf.open_low or leaf.open_high or not exact or leaf.dtype.itemsize < 4
    return leaf.cache[key]  # type: ignore[no-any-return]

