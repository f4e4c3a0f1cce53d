"""The digits of a finite space's members, the basis of masks (:mod:`spacealg.spaces.masked`).

``factors(space)`` says how the members of a finite space factor into digits, one per
scalar factor in C order: a finite set or range is one factor (the digit is the item's
position), an array of them has one factor per entry, a product concatenates its
components' factors. ``index``/``element`` of the space are the mixed-radix number of the
digits. A leaf's digits are read from its leaf model (:mod:`spacealg.core.leaf_index`), so
every kind with a finite leaf model is maskable, and a kind with an image
(:mod:`spacealg.core.image`) factors as its image, through its encoding; a space without one is not (TypeError).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.core.generic import as_space
from spacealg.core.image import image_of
from spacealg.core.leaf import LeafModel, leaf
from spacealg.core.leaf_index import counts, finite, positions, values_at
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


def factors(space: Any) -> Factors:
    """The :class:`Factors` of a finite space: a leaf's from its leaf model
    (:mod:`spacealg.core.leaf_index`), a product's from its components'.

    Raises TypeError for a space whose members do not factor into finite digits.
    """
    converted = as_space(space)
    if isinstance(converted, TupleProduct):
        return _tuple_factors(converted)
    if isinstance(converted, DictProduct):
        return _dict_factors(converted)
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
    if not finite(model):
        raise TypeError(f"Masked: {space!r} is not finite; masks apply to finite spaces")
    return _leaf_factors(model)


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
    sizes = tuple(int(c) for c in counts(model).reshape(-1))
    k = len(sizes)

    def batch_digits(batch: Any) -> np.ndarray:
        d = digits(batch)
        return d.reshape((*d.shape[: d.ndim - len(shape)], k))

    def batch_values(d: np.ndarray) -> Any:
        d = np.asarray(d)
        return values_at(model, d.reshape((*d.shape[:-1], *shape)))

    entries = [Factors((n,), _no_digits, _no_values) for n in sizes]
    return Factors(sizes, batch_digits, batch_values, _nested(entries, shape) if shape else None)


def _nested(entries: list[Any], shape: tuple[int, ...]) -> Any:
    """``entries`` (C order) as tuples nested like ``shape`` (Gymnasium's MultiDiscrete form)."""
    if not shape:
        return entries[0]
    step = math.prod(shape[1:])
    return tuple(_nested(entries[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0]))


def _no_digits(batch: Any) -> np.ndarray:  # entries of an array space are read through the array's own digits
    raise NotImplementedError


def _no_values(d: np.ndarray) -> Any:
    raise NotImplementedError


def _concat_digits(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros((0,), dtype=np.int64)
    arrays = np.broadcast_arrays(*[p[..., 0:0] for p in parts])  # common batch shape
    lead = arrays[0].shape[:-1]
    return np.concatenate([np.broadcast_to(p, (*lead, p.shape[-1])) for p in parts], axis=-1)


def _splits(sizes: list[int]) -> list[int]:
    return list(itertools.accumulate(sizes, initial=0))


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
