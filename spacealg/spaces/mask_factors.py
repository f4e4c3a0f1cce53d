"""The digits of a finite space's members, the basis of masks (:mod:`spacealg.spaces.masked`).

``factors(space)`` says how the members of a finite space factor into digits, one per
scalar factor in C order: a finite set or range is one factor (the digit is the item's
position), an array of them has one factor per entry, a product concatenates its
components' factors. ``index``/``element`` of the space are the mixed-radix number of the
digits. One registration per kind, below; a kind with an image (:mod:`spacealg.core.image`)
factors as its image, through its encoding; any other space is not maskable (TypeError).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.core.generic import as_space, generic
from spacealg.core.image import image_of
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet, range_items, range_length
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = ["Factors", "MaskError", "MaskTypeError", "factors"]


class MaskError(ValueError, AssertionError):
    """A malformed mask or probability (shape, values, dtype): a ValueError, and an
    AssertionError as Gymnasium raises for the same masks."""


class MaskTypeError(TypeError, AssertionError):
    """A mask or probability of the wrong type: a TypeError, and an AssertionError as
    Gymnasium raises for the same masks."""


# -- factors: how the members of a finite space factor into digits -------------------------


@dataclass(frozen=True)
class Factors:
    """The digits of a finite space's members.

    ``sizes``: the number of values of each factor, in C order. ``digits(batch)``: an int
    array ``(*batch_shape, k)`` (meaningful where the batch's entries are members, in range
    elsewhere after clipping). ``values(digits)``: the batch (the base's batch form) of the
    members with these digits. ``children``: the shape of a structured mask, None for a
    leaf: a tuple (nested like an array's shape, for per-entry masks) or a dict of the
    parts' Factors, in factor order.
    """

    sizes: tuple[int, ...]
    digits: Callable[[Any], np.ndarray]
    values: Callable[[np.ndarray], Any]
    children: Any = None


@generic(0)
def factors(space: Any) -> Factors:
    """The :class:`Factors` of a finite space (one registration per kind, below).

    Raises TypeError for a space whose members do not factor into finite digits.
    """
    converted = as_space(space)
    if converted is space:
        image = image_of(space)
        if image is not None:  # masks over what the members stand for
            inner = factors(image.space)
            return Factors(inner.sizes, lambda batch: inner.digits(image.encode(batch)),
                           lambda d: image.decode(inner.values(d)), inner.children)
        raise TypeError(
            f"Masked: {space!r} is not a finite space that masks apply to (finite sets, ranges, "
            "Categorical, integer Box, ArraySpace of those, and products of them)"
        )
    return factors(converted)


def _leaf(n: int, digits: Callable[[np.ndarray], np.ndarray], values: Callable[[np.ndarray], Any]) -> Factors:
    """One factor: ``digits``/``values`` map arrays of entries to same-shaped digit arrays."""
    return Factors(
        (n,),
        lambda batch: _safe_digits(digits, batch)[..., None],
        lambda d: values(np.asarray(d)[..., 0]),
    )


def _safe_digits(digits: Callable[[np.ndarray], np.ndarray], batch: Any) -> np.ndarray:
    array = batch if isinstance(batch, np.ndarray) else np.asarray(batch)
    with np.errstate(all="ignore"):
        return np.asarray(digits(array))


def _int_digits(array: np.ndarray, low: Any, step: int = 1) -> np.ndarray:
    """``(array - low) // step`` as int64 for numeric arrays (junk, clipped later, elsewhere)."""
    if array.dtype.kind == "O":
        raise TypeError("an object batch is read element by element")  # isin falls back to contains
    if array.dtype.kind not in "biuf":
        return np.zeros(array.shape, dtype=np.int64)
    if array.dtype.kind == "f":
        values = np.where(np.isfinite(array), array, 0.0)
        offsets = np.floor((values - np.asarray(low, dtype=np.float64)) / step)
        return np.clip(offsets, -1, 2.0**62).astype(np.int64)
    if array.dtype == np.uint64 or np.asarray(low).dtype == np.uint64:  # exact beyond int64
        offsets = (array.astype(object) - np.asarray(low).astype(object)) // step
        return np.asarray(np.clip(offsets, -1, 2**62), dtype=np.int64)
    return np.asarray((array.astype(np.int64) - np.asarray(low, dtype=np.int64)) // step, dtype=np.int64)


@factors.register(range)
def _range_factors(space: range) -> Factors:
    start, step, n = space.start, space.step, range_length(space)
    return _leaf(n, lambda a: _int_digits(a, start, step), lambda d: range_items(start, step, n, d))


@factors.register(FiniteSet)
def _finite_factors(space: FiniteSet) -> Factors:
    items = space._array
    n = len(space.items)
    if items.dtype.kind != "O" and n:
        order = np.argsort(items, kind="stable")
        ordered = items[order]

        def digits(a: np.ndarray) -> np.ndarray:
            if not (a.dtype.kind == items.dtype.kind or (a.dtype.kind in "biuf" and items.dtype.kind in "biuf")):
                return np.zeros(a.shape, dtype=np.int64)
            at = np.clip(np.searchsorted(ordered, a), 0, n - 1)
            return order[at].astype(np.int64)  # type: ignore[no-any-return]

    else:

        def digits(a: np.ndarray) -> np.ndarray:
            lookup = np.frompyfunc(lambda x: space._positions.get(_hashable(x), 0), 1, 1)
            return np.asarray(lookup(a), dtype=np.int64).reshape(a.shape)

    return _leaf(n, digits, lambda d: items[d])


def _hashable(x: Any) -> Any:
    try:
        hash(x)
    except TypeError:
        return None
    return x.item() if isinstance(x, np.generic) else x


def _array_factors(
    entries: list[Factors],
    shape: tuple[int, ...],
    digits: Callable[[np.ndarray], np.ndarray],
    values: Callable[[np.ndarray], Any],
) -> Factors:
    """Factors of an array space: one leaf per entry, C order; per-factor masks are tuples
    nested like ``shape`` (Gymnasium's MultiDiscrete form)."""
    k = len(entries)

    def batch_digits(batch: Any) -> np.ndarray:
        array = batch if isinstance(batch, np.ndarray) else np.asarray(batch)
        lead = array.shape[: array.ndim - len(shape)]
        with np.errstate(all="ignore"):
            return np.asarray(digits(array)).reshape((*lead, k))

    def batch_values(d: np.ndarray) -> Any:
        d = np.asarray(d)
        return values(d.reshape((*d.shape[:-1], *shape)))

    children = _nested(entries, shape) if shape else None
    return Factors(tuple(f.sizes[0] for f in entries), batch_digits, batch_values, children)


def _nested(entries: list[Any], shape: tuple[int, ...]) -> Any:
    """``entries`` (C order) as tuples nested like ``shape``."""
    if not shape:
        return entries[0]
    step = math.prod(shape[1:])
    return tuple(_nested(entries[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0]))


@factors.register(ArraySpace)
def _arrayspace_factors(space: ArraySpace) -> Factors:
    base = factors(space.space)
    if len(base.sizes) != 1:
        raise TypeError(f"Masked: the entries of {space!r} are not scalar factors")
    dims = space.dims
    size = math.prod(dims)

    def digits(a: np.ndarray) -> np.ndarray:
        return base.digits(a)[..., 0]

    def values(d: np.ndarray) -> Any:
        return np.asarray(base.values(d[..., None]))

    return _array_factors([base] * size, dims, digits, values)


def _low_high_factors(space: Any, low: np.ndarray, high: np.ndarray, dtype: np.dtype, scalar: bool) -> Factors:
    widths = np.asarray(high.astype(object) - low.astype(object) + 1).reshape(-1)
    entries = [Factors((int(w),), _no_digits, _no_values) for w in widths]
    shape = low.shape
    if scalar:
        lo = low.reshape(())
        return _leaf(int(widths[0]), lambda a: _int_digits(a, lo[()]), lambda d: _offset(lo, d, dtype))
    return _array_factors(entries, shape, lambda a: _int_digits(a, low), lambda d: _offset(low, d, dtype))


def _offset(low: np.ndarray, d: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``low + d`` in ``dtype``, exactly: modular arithmetic in the dtype is exact because
    the result (a member) fits it (never through float64, which rounds beyond 2**53)."""
    with np.errstate(over="ignore"):
        return np.add(np.asarray(low).astype(dtype), np.asarray(d).astype(dtype), dtype=dtype)


def _no_digits(batch: Any) -> np.ndarray:  # entries of an array space are read through the array's own digits
    raise NotImplementedError


def _no_values(d: np.ndarray) -> Any:
    raise NotImplementedError


@factors.register(Categorical)
def _categorical_factors(space: Categorical) -> Factors:
    return _low_high_factors(space, np.asarray(space.low), np.asarray(space.high), space.dtype, space.scalar)


@factors.register(Box)
def _box_factors(space: Box) -> Factors:
    if not space.is_finite:
        raise TypeError(f"Masked: {space!r} is not finite; masks apply to finite spaces")
    if space.is_point and not space.integral:
        low = np.zeros(space.shape, dtype=np.int64)
        entries = [Factors((1,), _no_digits, _no_values)] * low.size
        point = space.low

        def values(d: np.ndarray) -> Any:
            return np.broadcast_to(point, d.shape).copy()

        return _array_factors(entries, space.shape, lambda a: np.zeros(a.shape, dtype=np.int64), values)
    low, high = np.asarray(space.low), np.asarray(space.high)
    return _low_high_factors(space, low, high, space.dtype, False)


def _concat_digits(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros((0,), dtype=np.int64)
    arrays = np.broadcast_arrays(*[p[..., 0:0] for p in parts])  # common batch shape
    lead = arrays[0].shape[:-1]
    return np.concatenate([np.broadcast_to(p, (*lead, p.shape[-1])) for p in parts], axis=-1)


def _splits(sizes: list[int]) -> list[int]:
    return list(itertools.accumulate(sizes, initial=0))


@factors.register(TupleProduct)
def _tuple_factors(space: TupleProduct) -> Factors:
    components = [factors(s) for s in space._spaces]
    cuts = _splits([len(c.sizes) for c in components])

    def digits(batch: Any) -> np.ndarray:
        if not isinstance(batch, (tuple, list)) or len(batch) != len(components):
            raise ValueError(f"not a batch of {space!r}")
        return _concat_digits([c.digits(b) for c, b in zip(components, batch)])

    def values(d: np.ndarray) -> Any:
        return tuple(c.values(d[..., cuts[i] : cuts[i + 1]]) for i, c in enumerate(components))

    return Factors(tuple(s for c in components for s in c.sizes), digits, values, tuple(components))


@factors.register(DictProduct)
def _dict_factors(space: DictProduct) -> Factors:
    keys = list(space._spaces)
    components = [factors(s) for s in space._spaces.values()]
    cuts = _splits([len(c.sizes) for c in components])

    def digits(batch: Any) -> np.ndarray:
        if not isinstance(batch, Mapping) or set(batch) != set(keys):
            raise ValueError(f"not a batch of {space!r}")
        return _concat_digits([c.digits(batch[k]) for k, c in zip(keys, components)])

    def values(d: np.ndarray) -> Any:
        return {k: c.values(d[..., cuts[i] : cuts[i + 1]]) for i, (k, c) in enumerate(zip(keys, components))}

    return Factors(tuple(s for c in components for s in c.sizes), digits, values, dict(zip(keys, components)))
