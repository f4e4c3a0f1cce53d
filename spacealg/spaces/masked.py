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

A list with one mask per entry is read as whichever of the joint and the per-factor form
fits; where both fit it is ambiguous (MaskError naming both). A product of nothing takes a
0-d bool. ``None`` parts cost O(1) memory (a canonical block is then just its size), and
``Masked(s, None)`` of an array of more than :data:`~.mask_factors.COMPACT` alike entries
holds its factors as runs (:class:`~.mask_factors.Sizes`): bytes, however many entries.

``probability`` weights (non-negative, not all zero on the allowed set, normalised for
you, each row rescaled by its largest weight so that neither ``1e308`` nor subnormals
distort the draws) take the same shapes. A mask (or weights) with extra *leading* dimensions is a batch:
``sample(space, n, mask=masks)`` draws row ``i`` from ``masks[i]``, vectorised.

Internally a mask is a list of *blocks*, each a bool array over a run of consecutive
factors; the allowed set is the product of the blocks' sets (:mod:`.mask_factors`: the
digits of each kind; :mod:`.mask_blocks`: parsing, combining and the vectorised chooser, written once over a
kernel, :class:`~spacealg.core.kernel.Kernel`, for NumPy, torch and JAX). The canonical form splits
blocks wherever they factor, so two masks allowing the same set are ``==``.

Laws (tests/test_masks.py): ``Masked(s, m) <= s``; every sample is a member;
``cardinality`` is the number of true entries of the joint mask; ``elements`` enumerates
the allowed set in the base's order, ``index``/``element`` are its bijection with
``range(cardinality)``; sampling is uniform on the allowed set (or follows ``probability``);
an empty allowed set raises ValueError when sampled.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from spacealg.core import hooks
from spacealg.core.generic import as_space, delegate, generic
from spacealg.core.kernel import Kernel, numpy_kernel
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
from spacealg.spaces._batch import items_array
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.mask_blocks import (
    NUMPY,
    Block,
    FreeBlocks,
    blocks_batch_shape,
    choose,
    coarsen,
    combine,
    draw_digits,
    draw_shape,
    is_foreign_array,
    merge_run,
    outer,
    parse_blocks,
    placed,
)
from spacealg.spaces.mask_factors import Factors, MaskError, MaskTypeError, Sizes, factors

__all__ = [
    "NUMPY",
    "Factors",
    "MaskError",
    "MaskTypeError",
    "Masked",
    "choose",
    "coarsen",
    "combine",
    "draw_digits",
    "factors",
    "from_native_mask",
    "parse_blocks",
    "placed",
    "restriction",
    "sample_blocks",
    "sample_masked",
]

_ENUMERATION_LIMIT = 1_000_000


# -- the masked space ------------------------------------------------------------------------------


# A canonical block is a bool array over a run of factors, or an int n: one factor whose n
# values are all allowed (an unmasked part costs O(1) memory, however many values it has).
Canon = np.ndarray | int


def _canonical(blocks: Sequence[Block], sizes: tuple[int, ...]) -> Sequence[Canon] | None:
    """The finest factorisation of the allowed set into blocks (bool arrays, one per run of
    factors, or ints for unmasked factors); None when the set is empty. Two masks allow the
    same set iff equal forms. :class:`FreeBlocks` stay runs: their form is the sizes."""
    if isinstance(blocks, FreeBlocks):
        return blocks.sizes
    out: list[Canon] = []
    start = 0
    for width, array in blocks:
        block_sizes = sizes[start : start + width]
        start += width
        if array is None:
            out.extend(block_sizes)
            continue
        if not array.any():
            return None
        out.extend(b.size if b.ndim == 1 and b.all() else b for b in _split(array))
    return out


def _size(block: Canon) -> int:
    return block if isinstance(block, int) else int(block.size)


def _as_block(block: Canon) -> Block:
    """A canonical block as a mask block (an unmasked factor as ``(1, None)``)."""
    return (1, None) if isinstance(block, int) else (block.ndim, block)


def _split(array: np.ndarray) -> list[np.ndarray]:
    """A nonempty bool block split at every axis where it is an outer product."""
    w = array.ndim
    for p in range(1, w):
        left = np.asarray(array.any(axis=tuple(range(p, w))))
        right = np.asarray(array.any(axis=tuple(range(p))))
        if np.array_equal(array, outer(left, p, right, w - p, True)):
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
    _blocks: list[Canon] | None
    _legal: list[Any]
    _ranks: list[np.ndarray | None]

    def __init__(self, space: Any, mask: Any) -> None:
        mask = from_native_mask(space, mask)
        base = as_space(space)
        if mask is None and not isinstance(base, Masked) and isinstance(factors(base).sizes, Sizes):
            self._unmasked(space, base, factors(base))
            return
        if isinstance(base, Masked):
            root, f = base.root, base._factors
            inherited = None if base._blocks is None else [_as_block(b) for b in base._blocks]
        else:
            root, f, inherited = base, factors(base), None
        blocks = placed(parse_blocks(mask, f), NUMPY)
        if blocks_batch_shape(blocks, f.sizes):
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
            _legal=_Mapped(canonical, range) if isinstance(canonical, Sizes)
            else [range(b) if isinstance(b, int) else np.flatnonzero(b) for b in canonical or []],
            _ranks=_Mapped(canonical, lambda _n: None) if isinstance(canonical, Sizes)
            else [None if isinstance(b, int) else np.cumsum(b.ravel()) - 1 for b in canonical or []],
        )

    def _unmasked(self, space: Any, base: Any, f: Factors) -> None:
        """Everything of a base with many factors held as runs: every factor an unmasked
        canonical block (its size), in memory of the number of runs."""
        shown = space if isinstance(space, Space) or not hasattr(space, "np_random") else base
        sizes: Any = f.sizes
        self._set(space=shown, mask=None, root=base, _factors=f, _blocks=sizes,
                  _legal=_Mapped(sizes, range), _ranks=_Mapped(sizes, lambda _n: None))

    def _key(self) -> tuple[Any, ...]:
        if self._blocks is None:
            return (self.root, None)
        return (self.root, _form(self._blocks))

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.space, self.mask), {}

    @property
    def blocks(self) -> list[np.ndarray]:
        """The canonical blocks: bool arrays over runs of consecutive factors whose product is
        the allowed set (``[]`` for an empty set: see :attr:`is_empty`). An unmasked factor
        is held as its size and materialised here (memory: its number of values)."""
        return [np.ones(b, dtype=bool) if isinstance(b, int) else b for b in self._blocks or []]

    @property
    def is_empty(self) -> bool:
        """Whether the mask allows no element."""
        return self._blocks is None

    def joint(self) -> np.ndarray:
        """The joint mask: a bool array of the factors' sizes (memory: their product)."""
        sizes = self._factors.sizes
        if self._blocks is None:
            return np.zeros(sizes, dtype=bool)
        _width, array = merge_run([_as_block(b) for b in self._blocks], sizes)
        if array is None:
            return np.ones(sizes, dtype=bool)
        return np.asarray(array, dtype=bool).reshape(sizes)


def _frozen(mask: Any) -> Any:
    """The mask as given, with arrays as read-only bool copies (for repr, pickle, JSON)."""
    if mask is None:
        return None
    if isinstance(mask, tuple):
        return tuple(_frozen(m) for m in mask)
    if isinstance(mask, Mapping):
        return {k: _frozen(v) for k, v in mask.items()}
    if isinstance(mask, list):  # a ragged list can only be per-factor masks (see parse_blocks)
        try:
            np.asarray(mask)
        except ValueError:
            return tuple(_frozen(m) for m in mask)
    array = np.array(placed([(1, mask)], NUMPY)[0][1], dtype=bool)
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
        position, flat = divmod(position, _size(block))
        if not isinstance(block, int) and not block.flat[flat]:
            return False
    return True


def _digits_to_index(digits: Any, sizes: tuple[int, ...]) -> int:
    position = 0
    for d, n in zip(digits, sizes):
        position = position * n + int(d)
    return position


def sample_blocks(root: Any, f: Factors, blocks: Sequence[Block], size: Any, ns: Kernel) -> Any:
    """Draws from ``root`` restricted (and weighted) by ``blocks`` with ``ns``'s generator
    (NumPy's); rows by the blocks' batch."""
    size, shape = draw_shape(blocks, f.sizes, size)
    digits = draw_digits(blocks, f.sizes, shape, ns)
    if size is None:
        return element(_digits_to_index(digits, f.sizes), root)
    return f.values(digits)


def restriction(space: Any, mask: Any, probability: Any, ns: Kernel = NUMPY) -> tuple[Any, Factors, Sequence[Block]]:
    """``(root, factors, blocks)``: the unmasked space under ``space`` (a spacealg space), its
    factors, and the blocks allowing what ``space`` (if ``Masked``), ``mask`` and
    ``probability`` all allow, as arrays of ``ns``'s backend. Parts all on the host are
    combined there (float64 weights, rescaled per row) before they move to the device.

    Raises MaskError for an empty ``Masked`` space and TypeError for a space masks do not
    apply to."""
    parts: list[Sequence[Block]]
    if isinstance(space, Masked):
        if space._blocks is None:
            raise MaskError(f"sample: {space!r} is empty (the mask allows no element)")
        root, f, parts = space.root, space._factors, [[_as_block(b) for b in space._blocks]]
    else:
        try:
            root, f, parts = space, factors(space), []
        except TypeError:
            raise TypeError(
                "sample: mask=/probability= apply to finite spaces (finite sets, ranges, Categorical, "
                "integer Box, ArraySpace of those, products of them) and to Gymnasium spaces; "
                f"{space!r} is not one"
            ) from None
    for what, value in (("mask", mask), ("probability", probability)):
        if value is not None:
            parts.append(parse_blocks(value, f, what))
    if len(parts) < 2:  # nothing to combine: the space's own blocks (on the host), a mask, or none
        return root, f, placed(parts[0], ns) if parts else parse_blocks(None, f)
    foreign = any(is_foreign_array(a) for p in parts if not isinstance(p, FreeBlocks) for _, a in p
                  if a is not None and type(a) is not np.ndarray)  # (parsed blocks: ndarrays or torch/JAX arrays)
    if ns.name == "numpy" and not foreign:  # all on the host, drawn there: nothing to place
        return root, f, functools.reduce(lambda x, y: combine(x, y, f.sizes), parts)
    on = ns if foreign else NUMPY
    blocks = functools.reduce(lambda x, y: combine(x, y, f.sizes, on), [placed(p, on) for p in parts])
    return root, f, placed(blocks, ns)


def _sample_restricted(space: Any, size: Any, mask: Any, probability: Any, rng: RngLike) -> Any:
    ns = numpy_kernel(as_generator(rng))
    root, f, blocks = restriction(space, mask, probability, ns)
    return sample_blocks(root, f, blocks, size, ns)


@sample.register(Masked)
def _sample(space: Masked, size: Any = None, *, rng: RngLike = None) -> Any:
    return _sample_restricted(space, size, None, None, rng)


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
        w = _as_block(block)[0]
        if not isinstance(block, int):
            columns = tuple(np.moveaxis(digits[..., start : start + w], -1, 0))
            inside = inside & block[columns]
        start += w
    return inside


def _isin_items(batch: Any, space: Masked, inside: np.ndarray) -> np.ndarray:
    array = items_array(batch)
    result = np.zeros(inside.shape, dtype=bool)
    for position in np.ndindex(inside.shape):
        result[position] = bool(inside[position]) and contains(array[position], space)
    return result


# the base's element type, size, style and bounds (a box enclosing the allowed set, not always the smallest)
delegate(Masked, lambda space: space.root, eltype, elsize, SpaceStyle, bounds)


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
        position = position * _size(block) + int(flat)
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
        position, flat = divmod(position, _size(block))
        ranks.append(flat if rank is None else int(rank[flat]))
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
    mine = [_as_block(x) for x in a._blocks]
    both = _canonical(combine(mine, [_as_block(x) for x in b._blocks], sizes), sizes)
    return both is not None and _form(both) == _form(a._blocks)


def _form(blocks: Any) -> tuple[Any, ...]:
    """The canonical blocks as a hashable value, unmasked factors as runs ``("run", size,
    count)`` (so a form held as :class:`Sizes` equals the same blocks held as a list)."""
    if isinstance(blocks, Sizes):
        return tuple(("run", size, count) for size, count in blocks.runs)
    out: list[Any] = []
    for b in blocks:
        if isinstance(b, (int, np.integer)):
            if out and isinstance(out[-1], tuple) and out[-1][:2] == ("run", int(b)):
                out[-1] = ("run", int(b), out[-1][2] + 1)
            else:
                out.append(("run", int(b), 1))
        else:
            out.append((b.shape, np.packbits(b).tobytes()))
    return tuple(out)


class _Mapped(Sequence[Any]):
    """``[fn(x) for x in items]``, computed on access (for blocks held as runs)."""

    def __init__(self, items: Sequence[Any], fn: Any) -> None:
        self._items, self._fn = items, fn

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._fn(x) for x in self._items[i]]
        return self._fn(self._items[i])

    def __iter__(self) -> Iterator[Any]:
        return (self._fn(x) for x in self._items)


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
    return _sample_restricted(space, size, mask, probability, rng)


hooks.sample_with_mask.define(sample_masked)  # ``sample(..., mask=...)``
