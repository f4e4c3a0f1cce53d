"""The digits of a finite space's members, the basis of masks (:mod:`spacealg.spaces.masked`).

``factors(space)`` says how the members of a finite space factor into digits, one per
scalar factor in C order: a finite set or range is one factor (the digit is the item's
position), an array of them has one factor per entry (held as runs, :class:`Sizes`, and
its entries' structure built on demand beyond :data:`COMPACT` entries), a product concatenates its
components' factors. ``index``/``element`` of the space are the mixed-radix number of the
digits. A leaf's digits are read from its leaf model (:mod:`spacealg.core.leaf_index`), so
every kind with a finite leaf model is maskable, and a kind with an image
(:mod:`spacealg.core.image`) factors as its image, through its encoding; a space without one is not (TypeError).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from spacealg.core.generic import as_space
from spacealg.core.image import image_of
from spacealg.core.leaf import LeafModel, Members, leaf, widths
from spacealg.core.leaf_index import counts, finite, positions, values_at
from spacealg.core.plan import variant_of
from spacealg.spaces.product import DictProduct, TupleProduct, assemble, has_parts, parts_of

__all__ = ["Factors", "MaskError", "MaskTypeError", "Sizes", "factors"]

#: beyond this many factors, an array's sizes and entries are held as runs and built lazily
COMPACT = 1024


class MaskError(ValueError, AssertionError):
    """A malformed mask or probability (shape, values, dtype): a ValueError, and an
    AssertionError as Gymnasium raises for the same masks."""


class MaskTypeError(TypeError, AssertionError):
    """A mask or probability of the wrong type: a TypeError, and an AssertionError as
    Gymnasium raises for the same masks."""


# -- factors: how the members of a finite space factor into digits -------------------------


class Sizes(Sequence[int]):
    """The factors' sizes held as runs ``(size, count)``: behaves as the tuple of sizes
    (``len``, indexing, slicing, iteration, ``==`` with a tuple, ``+``) in memory of the
    number of runs, so that an array of ten million alike entries costs bytes."""

    __slots__ = ("_runs", "_starts")

    def __init__(self, runs: Sequence[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for size, count in runs:
            if count <= 0:
                continue
            if merged and merged[-1][0] == size:
                merged[-1] = (size, merged[-1][1] + count)
            else:
                merged.append((int(size), int(count)))
        self._runs = tuple(merged)
        self._starts = list(itertools.accumulate((c for _, c in merged), initial=0))

    @property
    def runs(self) -> tuple[tuple[int, int], ...]:
        return self._runs

    def __len__(self) -> int:
        return self._starts[-1]

    def __iter__(self) -> Iterator[int]:
        for size, count in self._runs:
            yield from itertools.repeat(size, count)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return tuple(self)[i]
            return sizes_of(self._slice_runs(start, max(start, stop)))
        n = len(self)
        j = int(i) + n if int(i) < 0 else int(i)
        if not 0 <= j < n:
            raise IndexError("Sizes index out of range")
        return self._runs[bisect.bisect_right(self._starts, j) - 1][0]

    def _slice_runs(self, start: int, stop: int) -> list[tuple[int, int]]:
        out = []
        for (size, _count), a, b in zip(self._runs, self._starts, self._starts[1:]):
            lo, hi = max(a, start), min(b, stop)
            if lo < hi:
                out.append((size, hi - lo))
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sizes):
            return self._runs == other._runs
        if isinstance(other, tuple):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._runs)

    def __add__(self, other: Any) -> Any:
        return sizes_of(runs_of(self) + runs_of(tuple(other) if not isinstance(other, Sizes) else other))

    def __radd__(self, other: Any) -> Any:
        return sizes_of(runs_of(tuple(other)) + runs_of(self))

    def __repr__(self) -> str:
        if len(self) <= 16:
            return repr(tuple(self))
        return " + ".join(f"({size},) * {count}" for size, count in self._runs)


def runs_of(sizes: Sequence[int]) -> list[tuple[int, int]]:
    """``sizes`` as runs ``(size, count)``."""
    if isinstance(sizes, Sizes):
        return list(sizes.runs)
    return [(int(size), len(list(group))) for size, group in itertools.groupby(sizes)]


def sizes_of(runs: Sequence[tuple[int, int]]) -> Any:
    """The sizes of these runs: a tuple up to :data:`COMPACT` factors, else :class:`Sizes`."""
    total = sum(c for _, c in runs)
    if total <= COMPACT:
        return tuple(size for size, count in runs for _ in range(count))
    return Sizes(runs)


class _Entries(Sequence[Any]):
    """The per-entry structure of a large array space (one :class:`Factors` per entry, nested
    like its shape), built on demand instead of held."""

    __slots__ = ("_offset", "_shape", "_sizes")

    def __init__(self, sizes: Any, shape: tuple[int, ...], offset: int = 0) -> None:
        self._sizes, self._shape, self._offset = sizes, shape, offset

    def __len__(self) -> int:
        return self._shape[0]

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        j = int(i) + len(self) if int(i) < 0 else int(i)
        if not 0 <= j < len(self):
            raise IndexError("entry index out of range")
        step = math.prod(self._shape[1:])
        if len(self._shape) == 1:
            return Factors((self._sizes[self._offset + j],), _unread, _unread)
        return _Entries(self._sizes, self._shape[1:], self._offset + j * step)


@dataclass(frozen=True)
class Factors:
    """The digits of a finite space's members.

    ``sizes``: the number of values of each factor, in C order (a tuple, or beyond
    :data:`COMPACT` factors a :class:`Sizes`, which behaves as one, held as runs). ``digits(batch)``: an int
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


def factors(space: Any) -> Factors:
    """The :class:`Factors` of a finite space: a leaf's from its leaf model
    (:mod:`spacealg.core.leaf_index`), a product's from its components'.

    Decided once per space, as a variant of its plan (:mod:`spacealg.core.plan`): every masked
    draw asks (rebuilding them cost 40% of a ``sample(range(15), probability=p)``).
    Raises TypeError for a space whose members do not factor into finite digits.
    """
    return variant_of(space, _FACTORS, _factors)  # type: ignore[no-any-return]


_FACTORS = "mask factors"  # the key among the variants of a space's plan


def _factors(space: Any) -> Factors:
    converted = as_space(space)
    if isinstance(converted, (TupleProduct, DictProduct)):
        return _product_factors(converted)
    image = image_of(converted)
    if image is not None:  # masks over what the members stand for
        inner = factors(image.space)
        return Factors(inner.sizes, lambda batch: inner.digits(image.encode(batch)),
                       lambda d: image.decode(inner.values(d)), inner.children)
    model = leaf(converted)
    if model is None:
        raise TypeError(
            f"Masked: {space!r} is not a finite space that masks apply to (finite sets, ranges, "
            "Categorical, integer Box, ArraySpace of those, and products of them)"
        )
    if not _finite(model):
        raise TypeError(f"Masked: {space!r} is not finite; masks apply to finite spaces")
    return _leaf_factors(model)


def _alike_ends(model: LeafModel) -> tuple[Any, Any] | None:
    """An integer leaf's one pair of member bounds where every entry has the same (read from
    its scalar or broadcast ends, without the per-entry arrays); None otherwise."""
    if model.members is not Members.INTEGERS:
        return None
    if model.bounded is not None and not all(np.asarray(b).all() for b in model.bounded):
        return None
    ends = model.span if model.span is not None else (model.low, model.high)
    low, high = np.asarray(ends[0]), np.asarray(ends[1])
    if any(low.strides) or any(high.strides) or not low.size or not high.size:
        return None
    return low.reshape(-1)[0], high.reshape(-1)[0]


def _finite(model: LeafModel) -> bool:
    alike = _alike_ends(model) if math.prod(model.shape) > COMPACT else None
    if alike is None:
        return finite(model)
    return all(np.isfinite(float(e)) if isinstance(e, (float, np.floating)) else True for e in alike)


def _leaf_factors(model: LeafModel) -> Factors:
    """A leaf's factors: one per entry, its digit the entry's index among its values."""

    def digits(batch: Any) -> np.ndarray:
        array = batch if isinstance(batch, np.ndarray) else np.asarray(batch)
        with np.errstate(all="ignore"):
            return np.asarray(positions(model, array))

    if model.scalar:
        return Factors((int(counts(model)),), lambda batch: digits(batch)[..., None],
                       lambda d: values_at(model, np.asarray(d)[..., 0]))
    shape = model.shape
    sizes = _entry_sizes(model)
    k = len(sizes)

    def batch_digits(batch: Any) -> np.ndarray:
        d = digits(batch)
        return d.reshape((*d.shape[: d.ndim - len(shape)], k))

    def batch_values(d: np.ndarray) -> Any:
        d = np.asarray(d)
        return values_at(model, d.reshape((*d.shape[:-1], *shape)))

    if isinstance(sizes, Sizes):
        runs = cast(tuple[int, ...], sizes)  # Sizes behaves as the tuple of sizes
        return Factors(runs, batch_digits, batch_values, _Entries(sizes, shape))
    entries = [Factors((n,), _unread, _unread) for n in sizes]
    return Factors(sizes, batch_digits, batch_values, _nested(entries, shape) if shape else None)


def _entry_sizes(model: LeafModel) -> Any:
    """The number of values of each entry, in C order; as runs (:class:`Sizes`) when the
    entries are alike and many, without an array of one count per entry."""
    k = math.prod(model.shape)
    if k > COMPACT:
        alike = model.items if model.items is not None else model.numbers
        if alike is not None:
            return Sizes([(len(alike), k)])
        ends = _alike_ends(model)
        if ends is not None:
            one = np.asarray(widths(ends[0], ends[1]), dtype=object).reshape(-1)[0]
            return Sizes([(int(one), k)])
    return sizes_of(runs_of([int(c) for c in counts(model).reshape(-1)]))


def _nested(entries: list[Any], shape: tuple[int, ...]) -> Any:
    """``entries`` (C order) as tuples nested like ``shape`` (Gymnasium's MultiDiscrete form)."""
    if not shape:
        return entries[0]
    step = math.prod(shape[1:])
    return tuple(_nested(entries[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0]))


def _unread(batch_or_digits: Any) -> Any:  # an entry of an array space: read through the array's own digits
    raise NotImplementedError


def _concat_digits(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros((0,), dtype=np.int64)
    arrays = np.broadcast_arrays(*[p[..., 0:0] for p in parts])  # common batch shape
    lead = arrays[0].shape[:-1]
    return np.concatenate([np.broadcast_to(p, (*lead, p.shape[-1])) for p in parts], axis=-1)


def _product_factors(space: TupleProduct | DictProduct) -> Factors:
    """A product's factors: its components' in order; digits of a batch (a tuple, or a dict
    with the product's keys) concatenated, values split back into the product's form."""
    parts = parts_of(space)
    components = [factors(s) for s in parts.values()]
    cuts = list(itertools.accumulate((len(c.sizes) for c in components), initial=0))

    def digits(batch: Any) -> np.ndarray:
        if not has_parts(batch, space):
            raise ValueError(f"not a batch of {space!r}")
        return _concat_digits([c.digits(batch[k]) for c, k in zip(components, parts)])

    def values(d: np.ndarray) -> Any:
        return assemble(space, (c.values(d[..., cuts[i] : cuts[i + 1]]) for i, c in enumerate(components)))

    return Factors(sizes_of([r for c in components for r in runs_of(c.sizes)]), digits, values,
                   assemble(space, components))
