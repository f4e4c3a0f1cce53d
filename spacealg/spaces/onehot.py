"""OneHot: the set of one-hot vectors (``OneHot(n)``), or of concatenated one-hot blocks
(``OneHot(nvec)``), optionally stacked along leading batch axes: TorchRL's ``OneHot`` and
``MultiOneHot`` specs as a space.

>>> import numpy as np
>>> from spacealg import OneHot, cardinality, index, element, to_gymnasium, encode, flatten
>>> s = OneHot(4)
>>> x = np.array([False, False, True, False])
>>> x in s, index(x, s), cardinality(s), to_gymnasium(s), encode(x, s)
(True, 2, 4, Discrete(4), np.int64(2))
>>> m = OneHot([2, 3], shape=(2, 5), dtype=np.float32)     # two rows of blocks [2 | 3]
>>> m.sample(rng=0).shape, cardinality(m), to_gymnasium(m)
((2, 5), 36, MultiDiscrete([[2 3]
 [2 3]]))
>>> flatten(x, s)                                           # a one-hot vector flattens to itself
array([0, 0, 1, 0])

``nvec`` an int: one block (its image is Gymnasium's ``Discrete(n)``); a sequence of ints:
blocks of those sizes, concatenated along the last axis (its image ``MultiDiscrete(nvec)``).
``shape`` is ``(*batch, sum(nvec))`` (default ``(sum(nvec),)``): each leading index holds
its own blocks. ``dtype`` (bool by default; any bool, integer or floating dtype, in native
byte order: ``'>f4'`` is float32; None is refused) is the storage dtype of samples, clamps
and decodes. Every ``nvec`` entry is an int >= 1 (bools refused); ``sum(nvec)`` and
``prod(shape)`` at most ``2**63 - 1``. Construction costs O(len(nvec)); a batch operation
O(sum(nvec)) beyond its batch (no table of len(nvec) * max(nvec) entries).

Membership is by value (spacealg's dtype policy): an array of ``shape`` whose entries are all
0 or 1 with exactly one 1 in each block, whatever its real dtype (bool, any int or uint,
any float including bfloat16); complex arrays are never members. ``contains`` of a torch
tensor (on any device) or JAX array runs the same rule as ``isin``, so both answer as NumPy
does for the same values on every backend and dtype. Laws:

* ``cardinality(s) == prod(nvec) ** prod(batch)`` (an exact int); ``elements``/``index``/
  ``element`` are the image's: the bijection with ``range(cardinality)`` that reads the hot
  positions (batch entries in C order, then blocks) as a mixed-radix number, the last block
  fastest;
* ``bounds(s) == (zeros, ones)`` of ``shape`` and ``dtype``; the style is finite;
* ``clamp(x, s)`` is the member nearest to ``x`` in Euclidean distance: per block, the hot
  position is the argmax of ``x``'s entries, ties to the first (``x`` with NaN: ValueError);
  members are returned unchanged;
* the image (:mod:`spacealg.core.image`) is the space of hot positions, ``range(n)`` or a
  ``Categorical`` of shape ``(*batch, len(nvec))`` (``(*batch,)`` for an int ``n``):
  ``to_gymnasium``, ``encode``/``decode`` and flattening read it, so ``flatten(x, s)`` is
  ``x`` itself as int64 (Gymnasium's one-hot of each position), ``flatdim(s) == prod(shape)``
  and masks (``Masked(s, mask)``) are masks over the hot positions;
* ``OneHot(nvec, shape, dtype) ** k`` and ``joint_space(s, k)`` add a leading batch axis;
* ``isin``, ``sample``, ``clamp``, ``clamp_``, ``flatten_batch`` and ``unflatten_batch`` are
  one rule each over a kernel (:class:`~spacealg.core.kernel.Kernel`), for NumPy, torch (a ``torch.Generator`` for
  ``sample``) and JAX (a key) alike (:func:`spacealg.spaces._kind.register_batched`, with
  NumPy's entries, which make NumPy's arguments arrays first);
* ``==``/``hash`` compare ``nvec`` (an int and a one-entry list differ, as Discrete and
  MultiDiscrete do), ``shape`` and ``dtype``; ``issubspace`` compares the sets (by value):
  against another OneHot by blocks, a ``Box`` by bounds, an ``ArraySpace`` or ``Categorical``
  member by member (up to 4,096 members; TypeError beyond).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.core.arrays import backend_name
from spacealg.core.catalog import register_space_class
from spacealg.core.image import Image, image_of
from spacealg.core.kernel import NUMPY, Kernel, kernel_for, numpy_kernel
from spacealg.core.plan import variant_of
from spacealg.core.protocol import (
    cardinality,
    contains,
    element,
    elements,
    elsize,
    index,
    issubspace,
)
from spacealg.core.rng import RngLike, as_generator, no_extra
from spacealg.core.space import Space
from spacealg.core.styles import FiniteSpaceStyle
from spacealg.spaces._batch import as_real_array, dtype_arg, normalize_size
from spacealg.spaces._counting import power
from spacealg.spaces._kind import clamp_into, register, register_batched
from spacealg.spaces.array import ArraySpace, array_of
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical

__all__ = ["OneHot"]


_MAX_LENGTH = 2**63 - 1  # the most entries an array (numpy's, torch's) can have


def _is_count(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _blocks_arg(nvec: Any) -> tuple[bool, tuple[int, ...]]:
    if _is_count(nvec):
        values, scalar = [nvec], True
    else:
        try:
            array = None if isinstance(nvec, (str, bytes)) else np.asarray(nvec, dtype=object)
        except Exception:  # ragged, or a hostile __len__/__iter__
            array = None
        if array is None or array.ndim != 1 or not array.size or not all(_is_count(v) for v in array):
            raise TypeError(f"OneHot: nvec must be an int or a non-empty sequence of ints, got {nvec!r}")
        values, scalar = array.tolist(), False
    sizes = tuple(int(n) for n in values)
    if min(sizes) < 1:
        raise ValueError(f"OneHot: nvec must be positive, got {nvec!r}")
    if sum(sizes) > _MAX_LENGTH:
        raise ValueError(f"OneHot: nvec must sum to at most 2**63 - 1 (the length of an array), got {nvec!r}")
    return scalar, sizes


def _shape_arg(shape: Any, width: int) -> tuple[int, ...]:
    if shape is None:
        return (width,)
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"OneHot: shape must be a tuple of ints, got {shape!r}") from None
    if any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0 for d in dims):
        raise ValueError(f"OneHot: shape must hold non-negative ints, got {shape!r}")
    if not dims or dims[-1] != width:
        raise ValueError(f"OneHot: shape must end with sum(nvec) = {width}, got {shape!r}")
    if math.prod(dims) > _MAX_LENGTH:
        raise ValueError(f"OneHot: shape must have at most 2**63 - 1 entries (an array's), got {shape!r}")
    return tuple(int(d) for d in dims)


def _dtype_arg(dtype: Any) -> np.dtype:
    checked = dtype_arg("OneHot", dtype)
    return checked if checked.isnative else checked.newbyteorder("=")  # the byte order is no part of the set


class OneHot(Space):
    """One-hot vectors (blocks of sizes ``nvec``) stacked to ``shape``, stored as ``dtype``."""

    nvec: int | tuple[int, ...]
    sizes: tuple[int, ...]
    scalar: bool
    shape: tuple[int, ...]
    batch: tuple[int, ...]
    dtype: np.dtype

    def __init__(self, nvec: Any, shape: Any = None, dtype: Any = np.bool_) -> None:
        scalar, sizes = _blocks_arg(nvec)
        checked_shape = _shape_arg(shape, sum(sizes))
        # O(len(nvec)) here: the column tables (O(sum(nvec))) are built at the first batch operation
        self._set(nvec=sizes[0] if scalar else sizes, sizes=sizes, scalar=scalar, shape=checked_shape,
                  batch=checked_shape[:-1], dtype=_dtype_arg(dtype))

    def _key(self) -> tuple[Any, ...]:
        return (self.scalar, self.sizes, self.shape, self.dtype.str)

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs: dict[str, Any] = {}
        if self.batch:
            kwargs["shape"] = self.shape
        if self.dtype != np.bool_:
            kwargs["dtype"] = self.dtype
        return (self.nvec if self.scalar else list(self.sizes),), kwargs

    @property
    def positions_shape(self) -> tuple[int, ...]:
        """The shape of a member's hot positions: ``(*batch,)`` for an int ``n``, else
        ``(*batch, len(nvec))``."""
        return self.batch if self.scalar else (*self.batch, len(self.sizes))


# -- the rules, written once over a kernel (NumPy, torch, JAX) ----------------------------------


def _lead(x: Any, space: OneHot, what: str) -> tuple[int, ...]:
    """The batch's leading shape; ValueError naming ``what`` when its trailing shape is not ``shape``."""
    shape, k = tuple(x.shape), len(space.shape)
    if len(shape) < k or shape[len(shape) - k :] != space.shape:
        raise ValueError(f"{what}: a batch of {space!r} has shape (*batch, *{space.shape}), got {shape}")
    return shape[: len(shape) - k]


@dataclass(frozen=True)
class _Tables:
    """Where each block's columns are, with no padding (O(sum(nvec)) entries in all): the
    blocks grouped by size, ``groups[g]`` the columns of one group, of shape
    ``(count, size)``; ``order`` takes the groups' concatenated per-block results back to
    block order (None when already in order); ``block_of``/``local_of`` per column."""

    groups: tuple[np.ndarray, ...]
    order: np.ndarray | None
    block_of: np.ndarray
    local_of: np.ndarray


def _tables(space: OneHot) -> _Tables:
    """The space's tables, a variant of its plan (kept under the one cache policy)."""
    return variant_of(space, "onehot_tables", _build_tables)  # type: ignore[no-any-return]


def _build_tables(space: OneHot) -> _Tables:
    sizes = space.sizes
    widths = np.array(sizes, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    groups, members = [], []
    for size in dict.fromkeys(sizes):  # distinct sizes, in order of first appearance
        blocks = np.flatnonzero(widths == size)
        groups.append(offsets[blocks, None] + np.arange(size, dtype=np.int64))
        members.append(blocks)
    permutation = np.concatenate(members)
    order = None if (permutation == np.arange(len(sizes))).all() else np.argsort(permutation)
    block_of = np.repeat(np.arange(len(sizes), dtype=np.int64), widths)
    local_of = np.arange(int(widths.sum()), dtype=np.int64) - offsets[block_of]
    for array in (order, block_of, local_of, *groups):
        if array is not None:
            array.flags.writeable = False
    return _Tables(tuple(groups), order, block_of, local_of)


def _grouped(ns: Kernel, x: Any, space: OneHot) -> Iterator[Any]:
    """``x`` (``(..., width)``) as ``(..., count, size)`` blocks, one array per group of
    blocks of one size (see :class:`_Tables`)."""
    for columns in _tables(space).groups:
        taken = ns.xp.take(x, ns.constant(columns.reshape(-1)), axis=-1)
        yield ns.xp.reshape(taken, (*x.shape[:-1], *columns.shape))


def _in_block_order(ns: Kernel, per_group: list[Any], space: OneHot) -> Any:
    """Per-block results (``(..., count)`` per group) as one ``(..., len(nvec))`` array."""
    joined = per_group[0] if len(per_group) == 1 else ns.xp.concat(per_group, axis=-1)
    order = _tables(space).order
    return joined if order is None else ns.xp.take(joined, ns.constant(order), axis=-1)


#: the dtypes whose arrays can be members (array API kinds; bfloat16 is a real floating dtype)
_REAL = ("bool", "integral", "real floating")


def _flat_all(ns: Kernel, inside: Any, lead: tuple[int, ...]) -> Any:
    return ns.xp.all(ns.xp.reshape(inside, (*lead, math.prod(inside.shape[len(lead):]))), axis=-1)


def _isin_rule(ns: Kernel, batch: Any, space: OneHot) -> Any:
    """Per row: entries all 0 or 1, one 1 per block."""
    xp = ns.xp
    lead = _lead(batch, space, "isin")
    if not xp.isdtype(batch.dtype, _REAL):  # complex, strings: no member, as on NumPy
        return ns.constant(np.zeros(lead, dtype=bool))
    inside = _flat_all(ns, (batch == 0) | (batch == 1), lead)
    for blocks in _grouped(ns, xp.astype(batch == 1, xp.int32), space):
        inside = inside & _flat_all(ns, xp.sum(blocks, axis=-1) == 1, lead)
    return inside


def _positions(ns: Kernel, x: Any, space: OneHot) -> Any:
    """The hot positions (``(..., len(nvec))``): per block, the argmax, ties to the first."""
    xp = ns.xp
    if x.dtype == xp.bool:
        x = xp.astype(x, xp.int8)
    ordered = getattr(ns, "ordered", None)  # a backend that cannot compare some dtypes (torch's uint64)
    if ordered is not None:
        x = ordered(x)
    return _in_block_order(ns, [xp.argmax(blocks, axis=-1) for blocks in _grouped(ns, x, space)], space)


def _one_hot(ns: Kernel, positions: Any, space: OneHot) -> Any:
    """The members (``(..., width)``, the space's dtype) with these hot positions."""
    xp = ns.xp
    tables = _tables(space)
    per_column = xp.take(positions, ns.constant(tables.block_of), axis=-1)
    return xp.astype(per_column == ns.constant(tables.local_of), ns.dtype(space.dtype))


def _sample_rule(ns: Kernel, space: OneHot, size: Any = None, *, rng: Any = None, **extra: Any) -> Any:
    no_extra(extra)
    shape = (*normalize_size(size), *space.batch, len(space.sizes))
    return _one_hot(ns, ns.below(np.broadcast_to(np.array(space.sizes), shape[-1:]), shape), space)


def _read(flag: Any) -> bool | None:
    """The value of a 0-d bool array; None where values cannot be read (a JAX array traced
    under ``jit``: TypeError; a torch ``meta`` tensor: RuntimeError). The rules' checks raise
    only on a flag read as False or True, and take the rows as they come otherwise."""
    try:
        return bool(flag)
    except (TypeError, RuntimeError):
        return None


def _check_finite(ns: Kernel, x: Any) -> None:
    xp = ns.xp
    if xp.isdtype(x.dtype, "real floating") and _read(xp.any(xp.isnan(x))):
        raise ValueError("clamp: x contains NaN, which has no nearest member")


def _clamp_rule(ns: Kernel, x: Any, space: OneHot) -> Any:
    _lead(x, space, "clamp")
    if not ns.xp.isdtype(x.dtype, _REAL):
        raise TypeError(f"clamp: x must be a real numeric array, got dtype {x.dtype}")
    _check_finite(ns, x)
    return _one_hot(ns, _positions(ns, x, space), space)


def _flatten_batch_rule(ns: Kernel, xs: Any, space: OneHot) -> Any:
    """Gymnasium's flattening of the hot positions: the vectors themselves, as int64 rows; a
    row that is no member is a ValueError (where values can be read), as on NumPy."""
    lead = _lead(xs, space, "flatten_batch")
    if _read(ns.xp.all(_isin_rule(ns, xs, space))) is False:
        raise ValueError(f"flatten_batch: a row is not a member of {space!r}")
    return ns.xp.astype(ns.xp.reshape(xs, (*lead, math.prod(space.shape))), ns.dtype(np.int64))


def _unflatten_batch_rule(ns: Kernel, vs: Any, space: OneHot) -> Any:
    """Rows back to members: per block the first nonzero entry (as Gymnasium reads a one-hot)."""
    xp, dim = ns.xp, math.prod(space.shape)
    if vs.ndim < 1 or vs.shape[-1] != dim:
        raise ValueError(f"unflatten_batch: expected an array (*batch, {dim}), got shape {tuple(vs.shape)}")
    rows = xp.reshape(vs != 0, (*vs.shape[:-1], *space.shape))
    groups = list(_grouped(ns, xp.astype(rows, xp.int8), space))
    if any(_read(xp.all(xp.any(blocks != 0, axis=-1))) is False for blocks in groups):
        raise ValueError("unflatten_batch: a row is not a concatenation of one-hot vectors")
    return _one_hot(ns, _in_block_order(ns, [xp.argmax(blocks, axis=-1) for blocks in groups], space), space)


# -- the protocol on NumPy: the same rules, after NumPy's arguments are arrays -------------------


def _real(x: Any) -> np.ndarray | None:
    """``x`` as a real ndarray (:func:`as_real_array`), or, for an ndarray of a numeric
    extension dtype (ml_dtypes' bfloat16, float8, int4: JAX's dtypes as NumPy sees them), its
    values as float64, which holds each exactly; an object array of Python numbers as float64
    (0 and 1 stay exact, nothing else becomes them); None for anything else."""
    a = as_real_array(x)
    if a is None and isinstance(x, np.ndarray) and x.dtype.kind == "V" and x.dtype.names is None \
            and np.can_cast(x.dtype, np.float64, "safe"):
        return x.astype(np.float64)
    if a is None and isinstance(x, np.ndarray) and x.dtype.kind == "O" and all(
            isinstance(v, numbers.Real) for v in x.reshape(-1).tolist()):
        return x.astype(np.float64)  # Python ints beyond 64 bits: a float64 is 0 or 1 only where they are
    return a


@contains.register(OneHot)
def _contains(x: Any, space: OneHot) -> bool:
    name = backend_name(x)
    if name is not None and hasattr(x, "dtype"):  # a tensor (on any device) or JAX array: the same rule
        if tuple(x.shape) != space.shape:
            return False
        return bool(_isin_rule(kernel_for(name, x), x[None], space)[0])
    a = _real(x)
    if a is None or a.shape != space.shape:
        return False
    return bool(_isin_rule(NUMPY, a, space))


def _isin(batch: Any, space: OneHot) -> np.ndarray:
    a = _real(batch)
    if a is None:
        if isinstance(batch, np.ndarray) and batch.ndim >= len(space.shape):
            return np.zeros(batch.shape[: batch.ndim - len(space.shape)], dtype=bool)
        raise ValueError(f"isin: {type(batch).__qualname__} is not a batch of {space!r}")
    return np.asarray(_isin_rule(NUMPY, a, space))


def _sample(space: OneHot, size: Any = None, *, rng: RngLike = None) -> np.ndarray:
    return np.asarray(_sample_rule(numpy_kernel(as_generator(rng)), space, size))


def _numeric(x: Any, what: str) -> np.ndarray:
    a = _real(x)
    if a is None or isinstance(x, (str, bytes)):
        raise TypeError(f"{what}: x must be a numeric array, got {type(x).__qualname__}")
    return a


def _clamp(x: Any, space: OneHot) -> Any:
    if contains(x, space):
        return x
    return np.asarray(_clamp_rule(NUMPY, _numeric(x, "clamp"), space))


register(OneHot, eltype=lambda space: np.ndarray, elsize=lambda space: space.shape,
         SpaceStyle=lambda space: FiniteSpaceStyle(space.shape),
         bounds=lambda space: (np.zeros(space.shape, space.dtype), np.ones(space.shape, space.dtype)))
register_batched(OneHot, {"isin": _isin, "sample": _sample, "clamp": _clamp}, isin=_isin_rule, sample=_sample_rule,
                 clamp=_clamp_rule, clamp_=clamp_into, flatten_batch=_flatten_batch_rule,
                 unflatten_batch=_unflatten_batch_rule)


# -- counting: the image's (the hot positions, a Categorical or a range) ---------------------------


@cardinality.register(OneHot)
def _cardinality(space: OneHot) -> int | float:
    return power(math.prod(space.sizes), math.prod(space.batch))  # O(1): the image's count, unbuilt


@elements.register(OneHot)
def _elements(space: OneHot) -> Iterator[np.ndarray]:
    image = _image(space)
    return (image.decode(y) for y in elements(image.space))


@index.register(OneHot)
def _index(x: Any, space: OneHot) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    image = _image(space)
    return index(image.encode(x), image.space)  # type: ignore[no-any-return]


@element.register(OneHot)
def _element(i: Any, space: OneHot) -> np.ndarray:
    image = _image(space)
    return image.decode(element(i, image.space))  # type: ignore[no-any-return]


# -- inclusion: by value ------------------------------------------------------------------------


@issubspace.register(OneHot, OneHot)
def _onehot_subset(a: OneHot, b: OneHot) -> bool:
    return a.shape == b.shape and a.sizes == b.sizes


@issubspace.register(OneHot, Box)
def _onehot_in_box(a: OneHot, b: Box) -> bool:
    if b.shape != a.shape:
        return False
    # an entry of a block wider than one is 0 in some member
    takes_zero = np.broadcast_to((np.array(a.sizes) > 1)[_tables(a).block_of], a.shape)
    ones = (b.low <= 1) & (b.high >= 1)
    zeros = (b.low <= 0) & (b.high >= 0)
    return bool((ones & (zeros | ~takes_zero)).all())


_ENUMERATED = 4096  # inclusion in an array space is decided member by member up to this many


def _onehot_in_arrays(a: OneHot, b: Any) -> bool:
    if tuple(elsize(b)) != a.shape:
        return False
    if _cardinality(a) > _ENUMERATED:
        raise TypeError(f"issubspace: not decided for {a!r} and {b!r} (more than {_ENUMERATED} members)")
    return all(contains(x, b) for x in _elements(a))


issubspace.register(OneHot, ArraySpace)(_onehot_in_arrays)
issubspace.register(OneHot, Categorical)(_onehot_in_arrays)


# -- arrays of one-hot vectors, the image, the catalogue --------------------------------------------


@array_of.register(OneHot)
def _onehot_array(space: OneHot, dims: tuple[int, ...], base: Any) -> OneHot:
    return OneHot(space.nvec if space.scalar else list(space.sizes), shape=(*dims, *space.shape), dtype=space.dtype)


def _image_space(space: OneHot) -> Any:
    if space.scalar and not space.batch:
        return range(space.sizes[0])
    return Categorical(np.broadcast_to(np.array(space.sizes, dtype=np.int64), (*space.batch, len(space.sizes)))
                       .reshape(space.positions_shape).copy())


def _encode(x: Any, space: OneHot) -> Any:
    """The hot positions of a member or batch of members; ValueError for anything else (a row
    with no or two hot entries has no position)."""
    x = _numeric(x, "encode")
    if not np.all(_isin_rule(NUMPY, x, space)):
        raise ValueError(f"encode: {x!r} holds a value that is not a member of {space!r}")
    positions = np.asarray(_positions(NUMPY, x, space), dtype=np.int64)
    if space.scalar:
        positions = positions[..., 0]
    return positions[()] if positions.ndim == 0 else positions


def _decode(y: Any, space: OneHot) -> np.ndarray:
    return np.asarray(_decode_on(NUMPY, np.asarray(y, dtype=np.int64), space))


def _decode_on(ns: Kernel, positions: Any, space: OneHot) -> Any:
    """The members with these hot positions (int arrays of ``ns``'s backend)."""
    if space.scalar:
        positions = positions[..., None]
    return _one_hot(ns, positions, space)


@image_of.register(OneHot)
def _image(space: OneHot) -> Image:
    return Image(_image_space(space), lambda x: _encode(x, space), lambda y: _decode(y, space),
                 lambda ns, y: _decode_on(ns, y, space))


def _example(ints: Sequence[int]) -> OneHot:
    """A small OneHot from small ints: one block or two or three, maybe a batch axis, a dtype."""
    count = 1 + ints[0] % 3
    sizes = [1 + v % 4 for v in ints[1 : 1 + count]] or [2]
    batch = (1 + ints[-1] % 2,) if ints[-2] % 3 == 0 else ()
    dtype = (np.bool_, np.float32, np.int64, np.float16)[ints[-1] % 4]
    nvec: Any = sizes[0] if count == 1 and ints[0] % 2 == 0 else sizes
    return OneHot(nvec, shape=(*batch, sum(sizes)), dtype=dtype)


register_space_class(OneHot, "onehot", _example)
