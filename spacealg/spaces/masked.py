"""Masks as algebra: ``Masked(space, mask)``, the subset of a finite space a mask allows.

>>> import numpy as np
>>> from spacealg import Masked, ArraySpace, cardinality, sample
>>> board = ArraySpace(range(15), 2)                     # a MultiDiscrete([15, 15]): (row, column)
>>> free = np.ones((15, 15), dtype=bool); free[7, 7] = False   # a joint mask: one bool per cell
>>> legal = Masked(board, free)
>>> cardinality(legal), np.array([7, 7]) in legal, sample(legal, rng=0) in legal
(224, False, True)

The members of a finite space factor into *digits*, one per scalar factor, in C order:
a finite set or range is one factor (the digit is the item's position); an array of them
(``ArraySpace``, ``Categorical``, an integer ``Box``, Gymnasium's MultiDiscrete and
MultiBinary) has one factor per entry; a product concatenates its components' factors.
``index``/``element`` of the base are the mixed-radix number of the digits.

A mask takes any of the shapes users have, recursively:

==================================  ====================================================
mask                                allows
==================================  ====================================================
``None``                            everything (of that part)
a bool (or 0/1 int) array of shape  the *joint* mask: exactly the digit tuples where it
the factors' sizes                  is true (``(15, 15)`` for ``ArraySpace(range(15), 2)``)
a tuple of masks, one per entry     per factor (Gymnasium's MultiDiscrete form; nested
of an array space                   like the array's shape)
a tuple (dict) of masks, one per    per component of a ``TupleProduct`` (``DictProduct``);
component of a product              each component's mask in any of these forms
==================================  ====================================================

``probability`` weights (non-negative, not all zero on the allowed set, normalised for
you) take the same shapes. A mask (or weights) with extra *leading* dimensions is a batch:
``sample(space, n, mask=masks)`` draws row ``i`` from ``masks[i]``, vectorised.

Internally a mask is a list of *blocks*, each a bool array over a run of consecutive
factors; the allowed set is the product of the blocks' sets. The canonical form splits
blocks wherever they factor, so two masks allowing the same set are ``==``.

Laws (tests/test_masks.py): ``Masked(s, m) <= s``; every sample is a member;
``cardinality`` is the number of true entries of the joint mask; ``elements`` enumerates
the allowed set in the base's order, ``index``/``element`` are its bijection with
``range(cardinality)``; sampling is uniform on the allowed set (or follows ``probability``);
an empty allowed set raises ValueError when sampled.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.core.generic import as_space, generic
from spacealg.core.protocol import (
    SpaceStyle,
    bounds,
    cardinality,
    check_position,
    clamp,
    contains,
    element,
    elements,
    elsize,
    eltype,
    index,
    intersect,
    isin,
    issubspace,
    sample,
)
from spacealg.core.rng import RngLike, as_generator
from spacealg.core.space import Space
from spacealg.core.styles import Style
from spacealg.spaces._batch import normalize_size
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet, range_length
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = [
    "Factors",
    "MaskError",
    "MaskTypeError",
    "Masked",
    "choose",
    "factors",
    "sample_masked",
]

_ENUMERATION_LIMIT = 1_000_000


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
    start, step = space.start, space.step
    return _leaf(
        range_length(space),
        lambda a: _int_digits(a, start, step),
        lambda d: start + step * d.astype(np.int64),
    )


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
        return _leaf(int(widths[0]), lambda a: _int_digits(a, lo[()]), lambda d: (lo + d).astype(dtype))
    return _array_factors(entries, shape, lambda a: _int_digits(a, low), lambda d: (low + d).astype(dtype))


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


# -- parsing masks into blocks ---------------------------------------------------------------

# A block is (width, array or None): an array of shape (*batch, *sizes of `width` factors);
# None allows every value of those factors.
Block = tuple[int, Any]


def _as_array(value: Any) -> np.ndarray | None:
    """A joint mask candidate as an ndarray (ndarrays, lists of numbers, array-likes)."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (tuple, Mapping, str, bytes)) or value is None:
        return None
    if hasattr(value, "__array__") or isinstance(value, list):
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):
            return None
        return array if array.dtype.kind in "biuf" else None
    return None


def _check_values(array: np.ndarray, what: str, path: str) -> np.ndarray:
    if what == "mask":
        if array.dtype.kind == "b":
            return array
        if array.dtype.kind in "iu":
            if array.size and not np.isin(array, (0, 1)).all():
                raise MaskError(f"mask{path}: entries must be 0 or 1 (or bools), got {np.unique(array)[:8]}")
            return array.astype(bool)
        raise MaskTypeError(f"mask{path}: expected bools or 0/1 integers, got dtype {array.dtype}")
    if array.dtype.kind not in "biuf":
        raise MaskTypeError(f"probability{path}: expected real numbers, got dtype {array.dtype}")
    weights = array.astype(np.float64)
    if weights.size and (not np.isfinite(weights).all() or (weights < 0).any()):
        raise MaskError(f"probability{path}: weights must be finite and non-negative")
    return weights


def _count(node: Any) -> int:
    """The number of factors under a Factors or a structure (tuple/dict) of them."""
    if isinstance(node, Factors):
        return len(node.sizes)
    return sum(_count(c) for c in (node.values() if isinstance(node, Mapping) else node))


def parse_blocks(value: Any, node: Any, what: str = "mask", path: str = "") -> list[Block]:
    """The blocks of a mask (``what="mask"``) or of weights (``"probability"``) over ``node``
    (a :class:`Factors`, or a tuple/dict structure of them)."""
    if value is None:
        return [(1, None)] * _count(node)
    if not isinstance(node, Factors):
        return _parse_parts(value, node, what, path)
    k = len(node.sizes)
    array = _as_array(value)
    if array is not None:
        if array.ndim >= k and array.shape[array.ndim - k :] == node.sizes:
            return [(k, _check_values(array, what, path))]
        tail = " (per-factor masks are a tuple)" if node.children is not None else ""
        raise MaskError(
            f"{what}{path}: expected an array whose last dimensions are {node.sizes} "
            f"(after any batch dimensions), got shape {array.shape}{tail}"
        )
    if node.children is None or not isinstance(value, (tuple, Mapping)):
        raise MaskTypeError(f"{what}{path}: expected {_expected(node)}, got {type(value).__qualname__}")
    return _parse_parts(value, node.children, what, path)


def _expected(node: Factors) -> str:
    joint = f"an array of shape {node.sizes}"
    if isinstance(node.children, Mapping):
        return f"{joint} or a dict with the keys {list(node.children)}"
    if isinstance(node.children, tuple):
        return f"{joint} or a tuple of {len(node.children)} masks"
    return joint


def _parse_parts(value: Any, structure: Any, what: str, path: str) -> list[Block]:
    blocks: list[Block] = []
    if isinstance(structure, Mapping):
        if not isinstance(value, Mapping):
            raise MaskTypeError(
                f"{what}{path}: expected a dict with the keys {list(structure)}, got {type(value).__qualname__}"
            )
        if set(value) != set(structure):
            raise MaskError(f"{what}{path}: expected the keys {list(structure)}, got {list(value)}")
        for key, child in structure.items():
            blocks.extend(parse_blocks(value[key], child, what, f"{path}[{key!r}]"))
        return blocks
    if not isinstance(value, tuple):
        raise MaskTypeError(f"{what}{path}: expected a tuple of {len(structure)} masks, got {type(value).__qualname__}")
    if len(value) != len(structure):
        raise MaskError(f"{what}{path}: expected a tuple of {len(structure)} masks, got {len(value)}")
    for i, (part, child) in enumerate(zip(value, structure)):
        blocks.extend(parse_blocks(part, child, what, f"{path}[{i}]"))
    return blocks


def _batch_shape(blocks: list[Block], sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The common leading (batch) shape of the blocks; ValueError when they disagree."""
    shapes = set()
    start = 0
    for width, array in blocks:
        if array is not None:
            shapes.add(array.shape[: array.ndim - width])
        start += width
    shapes.discard(())
    if len(shapes) > 1:
        raise MaskError(f"mask: the parts have different batch shapes {sorted(shapes)}")
    return shapes.pop() if shapes else ()


def _outer(a: np.ndarray, wa: int, b: np.ndarray, wb: int, conjoin: bool) -> np.ndarray:
    """The outer product of two blocks (batch dimensions broadcast)."""
    left = a.reshape(a.shape + (1,) * wb)
    right = b.reshape(b.shape[: b.ndim - wb] + (1,) * wa + b.shape[b.ndim - wb :])
    return (left & right) if conjoin else (left * right)


def _full(sizes: tuple[int, ...], like: Any) -> np.ndarray:
    return np.ones(sizes, dtype=bool if like is None or like.dtype == bool else np.float64)


def coarsen(blocks: list[Block], cuts: list[int], sizes: tuple[int, ...]) -> list[Block]:
    """The blocks re-expressed over the coarser partition with boundaries ``cuts``."""
    result: list[Block] = []
    position = 0
    pending: list[Block] = []
    ends = set(cuts)
    for width, array in blocks:
        pending.append((width, array))
        position += width
        if position in ends:
            result.append(_merge(pending, sizes[position - sum(w for w, _ in pending) : position]))
            pending = []
    return result


def _merge(run: list[Block], sizes: tuple[int, ...]) -> Block:
    if len(run) == 1:
        return run[0]
    total = sum(w for w, _ in run)
    if all(a is None for _, a in run):
        return (total, None)
    like = next(a for _, a in run if a is not None)
    start = 0
    acc: np.ndarray | None = None
    acc_width = 0
    for width, array in run:
        part = array if array is not None else _full(sizes[start : start + width], like)
        if acc is None:
            acc, acc_width = part, width
        else:
            acc = _outer(acc, acc_width, part, width, acc.dtype == bool and part.dtype == bool)
            acc_width += width
        start += width
    return (total, acc)


def _cuts(blocks: list[Block]) -> list[int]:
    return list(itertools.accumulate(w for w, _ in blocks))


def combine(a: list[Block], b: list[Block], sizes: tuple[int, ...]) -> list[Block]:
    """Blocks allowing what both allow (bools: and; weights: product), over the common
    coarsening of the two partitions."""
    cuts = sorted(set(_cuts(a)) & set(_cuts(b)))
    a, b = coarsen(a, cuts, sizes), coarsen(b, cuts, sizes)
    merged: list[Block] = []
    for (width, x), (_, y) in zip(a, b):
        if x is None or y is None:
            merged.append((width, y if x is None else x))
        elif x.dtype == bool and y.dtype == bool:
            merged.append((width, x & y))
        else:
            merged.append((width, x * y))
    return merged


# -- drawing: the vectorised chooser -------------------------------------------------------------


def choose(
    weights: np.ndarray, shape: tuple[int, ...], generator: np.random.Generator, what: str = "sample"
) -> np.ndarray:
    """Indices along the last axis of ``weights``, drawn with probability proportional to the
    weights (bools: uniform over the true entries): an int64 array of ``shape``.

    ``weights`` is ``(m,)`` (one distribution for every draw) or ``(*shape, m)`` (one row per
    draw). A cumulative sum, one uniform per draw and a comparison: the same few array
    operations on every backend. Raises ValueError naming the first row allowing nothing.
    """
    m = weights.shape[-1]
    integral = weights.dtype == bool
    if weights.ndim == 1:
        if integral:
            legal = np.flatnonzero(weights)
            if not legal.size:
                raise MaskError(f"{what}: the mask allows no element")
            return legal[generator.integers(legal.size, size=shape)]  # type: ignore[no-any-return]
        cumulative = np.cumsum(weights)
        total = cumulative[-1] if m else 0.0
        if not total > 0:
            raise MaskError(f"{what}: the probability weights of the allowed elements sum to 0")
        drawn = np.searchsorted(cumulative, generator.random(shape) * total, side="right")
        return np.minimum(drawn, int(np.flatnonzero(weights)[-1])).astype(np.int64)  # type: ignore[no-any-return]
    rows = weights.reshape((-1, m))
    counts = np.int32 if m < 2**31 else np.int64
    cumulative = np.cumsum(rows, axis=-1, dtype=counts if integral else np.float64)
    total = cumulative[:, -1] if m else np.zeros(rows.shape[0], dtype=cumulative.dtype)
    empty = ~(total > 0)
    if empty.any():
        row = np.unravel_index(int(np.argmax(empty)), shape)
        raise MaskError(f"{what}: the mask of row {tuple(int(i) for i in row)} allows no element")
    u = generator.random(rows.shape[0])
    if integral:  # the (k+1)-th allowed entry, k uniform in range(total)
        threshold = np.minimum((u * total).astype(counts), total - 1)
        drawn = np.argmax(cumulative > threshold[:, None], axis=-1)
    else:  # the first entry whose cumulative weight exceeds u * total (the last positive on round-off)
        hit = cumulative > (u * total)[:, None]
        last = m - 1 - np.argmax(rows[:, ::-1] > 0, axis=-1)
        drawn = np.where(hit[:, -1], np.argmax(hit, axis=-1), last)
    return drawn.astype(np.int64).reshape(shape)  # type: ignore[no-any-return]


def draw_digits(
    blocks: list[Block], sizes: tuple[int, ...], shape: tuple[int, ...], generator: np.random.Generator
) -> np.ndarray:
    """Digits ``(*shape, k)``: each block drawn independently (uniform on its allowed set, or
    by its weights), so the whole is uniform on (weighted over) the product of the blocks."""
    columns: list[np.ndarray] = []
    start = 0
    for width, array in blocks:
        block_sizes = sizes[start : start + width]
        m = math.prod(block_sizes)
        if array is None:
            flat = generator.integers(m, size=shape) if m else _nothing(shape)
        else:
            lead = array.shape[: array.ndim - width]
            flat = choose(array.reshape((*lead, m)), shape, generator)
        if width == 1:
            columns.append(np.asarray(flat, dtype=np.int64)[..., None])
        else:
            unravelled = np.unravel_index(np.asarray(flat, dtype=np.intp), block_sizes)
            columns.append(np.stack(unravelled, axis=-1).astype(np.int64))
        start += width
    if not columns:
        return np.zeros((*shape, 0), dtype=np.int64)
    return np.concatenate(columns, axis=-1)


def _nothing(shape: tuple[int, ...]) -> np.ndarray:
    if math.prod(shape):
        raise MaskError("sample: the space is empty")
    return np.zeros(shape, dtype=np.int64)


def _digits_to_index(digits: Any, sizes: tuple[int, ...]) -> int:
    position = 0
    for d, n in zip(digits, sizes):
        position = position * n + int(d)
    return position


def _index_to_digits(i: int, sizes: tuple[int, ...]) -> list[int]:
    out = []
    for n in reversed(sizes):
        i, d = divmod(i, n)
        out.append(d)
    return out[::-1]


# -- the masked space ------------------------------------------------------------------------------


def _canonical(blocks: list[Block], sizes: tuple[int, ...]) -> list[np.ndarray] | None:
    """The finest factorisation of the allowed set into blocks (bool arrays, one per run of
    factors); None when the set is empty. Two masks allow the same set iff equal forms."""
    out: list[np.ndarray] = []
    start = 0
    for width, array in blocks:
        block_sizes = sizes[start : start + width]
        start += width
        if array is None:
            out.extend(np.ones((n,), dtype=bool) for n in block_sizes)
            continue
        if not array.any():
            return None
        out.extend(_split(array))
    return out


def _split(array: np.ndarray) -> list[np.ndarray]:
    """A nonempty bool block split at every axis where it is an outer product."""
    w = array.ndim
    for p in range(1, w):
        left = np.asarray(array.any(axis=tuple(range(p, w))))
        right = np.asarray(array.any(axis=tuple(range(p))))
        if np.array_equal(array, _outer(left, p, right, w - p, True)):
            return _split(left) + _split(right)
    return [array]


class Masked(Space):
    """The subset of the finite space ``space`` that ``mask`` allows (see the module docstring).

    ``space`` may itself be ``Masked`` (the intersection of the masks) or a Gymnasium space
    (Gymnasium's MultiBinary masks, 0 = must be 0, 1 = must be 1, 2 = either, are accepted).
    Raises TypeError for a space masks do not apply to and MaskError (ValueError) for a
    mask of the wrong shape or values.
    """

    _fields = ("space", "mask")
    space: Any
    mask: Any
    root: Any
    _factors: Factors
    _blocks: list[np.ndarray] | None
    _legal: list[np.ndarray]
    _ranks: list[np.ndarray]

    def __init__(self, space: Any, mask: Any) -> None:
        mask = from_native_mask(space, mask)
        base = as_space(space)
        if isinstance(base, Masked):
            root, f = base.root, base._factors
            inherited = None if base._blocks is None else [(b.ndim, b) for b in base._blocks]
        else:
            root, f, inherited = base, factors(base), None
        blocks = parse_blocks(mask, f)
        if _batch_shape(blocks, f.sizes):
            raise MaskError("Masked: the mask has batch dimensions; a Masked space takes one mask")
        if isinstance(base, Masked):
            canonical = None if inherited is None else _canonical(combine(inherited, blocks, f.sizes), f.sizes)
        else:
            canonical = _canonical(blocks, f.sizes)
        shown = space if isinstance(space, Space) or not hasattr(space, "np_random") else base
        self._set(
            space=shown,
            mask=_frozen(mask),
            root=root,
            _factors=f,
            _blocks=canonical,
            _legal=[np.flatnonzero(b) for b in canonical or []],
            _ranks=[np.cumsum(b.ravel()) - 1 for b in canonical or []],
        )

    def _key(self) -> tuple[Any, ...]:
        if self._blocks is None:
            return (self.root, None)
        return (self.root, _form(self._blocks))

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.space, self.mask), {}

    @property
    def blocks(self) -> list[np.ndarray]:
        """The canonical blocks: bool arrays over runs of consecutive factors whose product is
        the allowed set (``[]`` for an empty set: see :attr:`is_empty`)."""
        return list(self._blocks or [])

    @property
    def is_empty(self) -> bool:
        """Whether the mask allows no element."""
        return self._blocks is None

    def joint(self) -> np.ndarray:
        """The joint mask: a bool array of the factors' sizes (memory: their product)."""
        sizes = self._factors.sizes
        if self._blocks is None:
            return np.zeros(sizes, dtype=bool)
        _width, array = _merge([(b.ndim, b) for b in self._blocks], sizes)
        return np.asarray(array, dtype=bool).reshape(sizes)


def _frozen(mask: Any) -> Any:
    """The mask as given, with arrays as read-only bool copies (for repr, pickle, JSON)."""
    if mask is None:
        return None
    if isinstance(mask, tuple):
        return tuple(_frozen(m) for m in mask)
    if isinstance(mask, Mapping):
        return {k: _frozen(v) for k, v in mask.items()}
    array = np.array(mask, dtype=bool)
    array.flags.writeable = False
    return array


@generic(0)
def from_native_mask(space: Any, mask: Any) -> Any:
    """A Gymnasium-convention mask of ``space`` in spacealg's form (identity by default;
    Gymnasium's MultiBinary and composites containing it register conversions)."""
    return mask


@contains.register(Masked)
def _contains(x: Any, space: Masked) -> bool:
    if space._blocks is None or not contains(x, space.root):
        return False
    try:
        position = index(x, space.root)
    except (ValueError, TypeError):
        return False
    for block in reversed(space._blocks):
        position, flat = divmod(position, block.size)
        if not block.flat[flat]:
            return False
    return True


def sample_blocks(root: Any, f: Factors, blocks: list[Block], size: Any, generator: np.random.Generator) -> Any:
    """Draws from ``root`` restricted (and weighted) by ``blocks``; rows by the blocks' batch."""
    batch = _batch_shape(blocks, f.sizes)
    if size is None and batch:
        size = batch
    shape = normalize_size(size)
    if batch and batch != shape:
        raise MaskError(f"sample: a batch of masks of shape {batch} needs size={batch}, got size={size!r}")
    digits = draw_digits(blocks, f.sizes, shape, generator)
    if size is None:
        return element(_digits_to_index(digits, f.sizes), root)
    return f.values(digits)


@sample.register(Masked)
def _sample(space: Masked, size: Any = None, *, rng: RngLike = None) -> Any:
    if space._blocks is None:
        raise MaskError(f"sample: {space!r} is empty (the mask allows no element)")
    return sample_blocks(space.root, space._factors, [(b.ndim, b) for b in space._blocks], size, as_generator(rng))


@isin.register(Masked)
def _isin(batch: Any, space: Masked) -> np.ndarray:
    inside = np.asarray(isin(batch, space.root))
    if space._blocks is None:
        return np.zeros(inside.shape, dtype=bool)
    try:
        digits = space._factors.digits(batch)
    except (ValueError, TypeError, IndexError):
        return _isin_items(batch, space, inside)
    sizes = np.asarray(space._factors.sizes, dtype=np.int64)
    digits = np.clip(np.broadcast_to(digits, (*inside.shape, len(sizes))), 0, np.maximum(sizes - 1, 0))
    start = 0
    for block in space._blocks:
        w = block.ndim
        columns = tuple(np.moveaxis(digits[..., start : start + w], -1, 0))
        inside = inside & block[columns]
        start += w
    return inside


def _isin_items(batch: Any, space: Masked, inside: np.ndarray) -> np.ndarray:
    from spacealg.adapters.native import items_array

    array = items_array(batch)
    result = np.zeros(inside.shape, dtype=bool)
    for position in np.ndindex(inside.shape):
        result[position] = bool(inside[position]) and contains(array[position], space)
    return result


@eltype.register(Masked)
def _eltype(space: Masked) -> Any:
    return eltype(space.root)


@elsize.register(Masked)
def _elsize(space: Masked) -> Any:
    return elsize(space.root)


@SpaceStyle.register(Masked)
def _style(space: Masked) -> Style:
    return SpaceStyle(space.root)


@bounds.register(Masked)
def _bounds(space: Masked) -> tuple[Any, Any]:
    """The base's bounds: a box enclosing the allowed set (not always the smallest)."""
    return bounds(space.root)  # type: ignore[no-any-return]


@clamp.register(Masked)
def _clamp(x: Any, space: Masked) -> Any:
    if contains(x, space):
        return x
    raise TypeError(
        f"clamp: a masked space has no nearest-member rule ({space!r}); sample a legal action "
        "with sample(space) or test membership with contains"
    )


@cardinality.register(Masked)
def _cardinality(space: Masked) -> int:
    if space._blocks is None:
        return 0
    return math.prod(len(legal) for legal in space._legal)


def _base_position(flats: Any, space: Masked) -> int:
    position = 0
    for flat, block in zip(flats, space._blocks or []):
        position = position * block.size + int(flat)
    return position


@elements.register(Masked)
def _elements(space: Masked) -> Iterator[Any]:
    if space._blocks is None:
        return iter(())
    return (element(_base_position(flats, space), space.root) for flats in itertools.product(*space._legal))


@index.register(Masked)
def _index(x: Any, space: Masked) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    position = index(x, space.root)
    ranks = []
    for block, rank in zip(reversed(space._blocks or []), reversed(space._ranks)):
        position, flat = divmod(position, block.size)
        ranks.append(int(rank[flat]))
    result = 0
    for r, legal in zip(reversed(ranks), space._legal):
        result = result * len(legal) + r
    return result


@element.register(Masked)
def _element(i: Any, space: Masked) -> Any:
    i = check_position(i, _cardinality(space))
    flats = []
    for legal in reversed(space._legal):
        i, r = divmod(i, len(legal))
        flats.append(legal[r])
    return element(_base_position(flats[::-1], space), space.root)


def _by_enumeration(a: Any, b: Any) -> bool:
    n = cardinality(a)
    if n > _ENUMERATION_LIMIT:
        raise TypeError(f"issubspace: {a!r} is too large to check against {b!r} element by element")
    return all(contains(x, b) for x in elements(a))


@issubspace.register(Masked, object)
def _masked_subset(a: Masked, b: Any) -> bool:
    if a._blocks is None:
        return True
    try:
        if issubspace(a.root, b):
            return True
    except TypeError:
        pass
    return _by_enumeration(a, b)


@issubspace.register(Masked, Masked)
def _masked_masked_subset(a: Masked, b: Masked) -> bool:
    if a._blocks is None:
        return True
    if a.root != b.root:
        return _by_enumeration(a, b)
    if b._blocks is None:
        return False
    sizes = a._factors.sizes
    mine = [(x.ndim, x) for x in a._blocks]
    both = _canonical(combine(mine, [(x.ndim, x) for x in b._blocks], sizes), sizes)
    return both is not None and _form(both) == _form(a._blocks)


def _form(blocks: list[np.ndarray]) -> tuple[Any, ...]:
    return tuple((b.shape, np.packbits(b).tobytes()) for b in blocks)


def _subset_of_masked(a: Any, b: Masked) -> bool:
    if not issubspace(a, b.root):
        return False
    try:
        n = cardinality(a)
    except TypeError:
        return False
    if n == math.inf:
        return False
    return _by_enumeration(a, b)


issubspace.register(object, Masked)(_subset_of_masked)
issubspace.register(FiniteSet, Masked)(_subset_of_masked)
issubspace.register(range, Masked)(_subset_of_masked)
issubspace.register(Categorical, Masked)(_subset_of_masked)


@intersect.register(Masked, Masked)
def _masked_intersect(a: Masked, b: Masked) -> Any:
    if a.root != b.root:
        raise TypeError(f"intersect: masks over different spaces ({a.root!r}, {b.root!r}) have no closed form")
    chain = []
    node: Any = b
    while isinstance(node, Masked):
        chain.append(node.mask)
        node = node.space
    result = a
    for mask in reversed(chain):
        result = Masked(result, mask)
    return result


@intersect.register(FiniteSet, np.ndarray)
@intersect.register(Space, np.ndarray)
def _space_and_mask(a: Any, mask: np.ndarray) -> Masked:
    """``space & mask``: the masked space (a joint bool array, or a leaf's mask)."""
    return Masked(a, mask)


# -- sample(space, size, mask=..., probability=...) ------------------------------------------------


@generic(0)
def sample_masked(space: Any, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    """``sample(space, size, mask=mask, probability=probability, rng=rng)``, dispatched on
    the space (see :func:`spacealg.sample`). For finite spacealg spaces: draws from the
    allowed set, uniformly or by the weights; ``mask``/``probability`` may carry leading
    batch dimensions (one row per draw; ``size`` defaults to them). Gymnasium spaces
    register their own rules (Gymnasium's conventions).
    """
    converted = as_space(space)
    if converted is not space:
        return sample_masked(converted, size, mask, probability, rng=rng)
    try:
        f = factors(space)
    except TypeError:
        raise TypeError(
            f"sample: mask=/probability= apply to finite spaces (finite sets, ranges, Categorical, "
            f"integer Box, ArraySpace of those, products of them) and to Gymnasium spaces; "
            f"{space!r} is not one"
        ) from None
    blocks = parse_blocks(mask, f, "mask")
    if probability is not None:
        blocks = combine(blocks, parse_blocks(probability, f, "probability"), f.sizes)
    return sample_blocks(space, f, blocks, size, as_generator(rng))


@sample_masked.register(Masked)
def _sample_masked_masked(space: Masked, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    if space._blocks is None:
        raise MaskError(f"sample: {space!r} is empty (the mask allows no element)")
    f = space._factors
    blocks: list[Block] = [(b.ndim, b) for b in space._blocks]
    if mask is not None:
        blocks = combine(blocks, parse_blocks(mask, f, "mask"), f.sizes)
    if probability is not None:
        blocks = combine(blocks, parse_blocks(probability, f, "probability"), f.sizes)
    return sample_blocks(space.root, f, blocks, size, as_generator(rng))
