"""Masks as blocks: parsing the mask forms users write, combining masks and weights, and
the vectorised chooser that draws from them (:mod:`spacealg.spaces.masked`), written once
over a kernel (:class:`~spacealg.core.kernel.Kernel`): NumPy, torch and JAX run the same
combining (``ns``: where the arrays live) and the same draws (``ns``: whose generator draws).

A block is ``(width, array)``: a bool (mask) or float (weights) array over a run of
``width`` consecutive factors, with optional leading batch dimensions (one row per draw);
``None`` allows every value. A mask is a list of blocks covering the factors in order; its
allowed set is the product of the blocks' sets.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from spacealg.core.arrays import backend_name
from spacealg.core.cache import IdentityCache
from spacealg.core.kernel import NUMPY, Kernel, kernel_for
from spacealg.spaces._batch import normalize_size
from spacealg.spaces.mask_factors import Factors, MaskError, MaskTypeError, Sizes

__all__ = ["NUMPY", "Block", "FreeBlocks", "blocks_batch_shape", "choose", "coarsen", "combine", "draw_digits",
           "draw_shape", "dtype_kind", "is_foreign_array", "merge_run", "outer", "parse_blocks", "placed"]


# -- parsing masks into blocks ---------------------------------------------------------------

# A block is (width, array or None): an array of shape (*batch, *sizes of `width` factors);
# None allows every value of those factors.
Block = tuple[int, Any]


_ARRAY_PACKAGES = frozenset({"torch", "jax", "jaxlib"})


def is_foreign_array(value: Any) -> bool:
    """Whether ``value`` is a torch tensor or a JAX array (kept on its device, not converted)."""
    return type(value).__module__.partition(".")[0] in _ARRAY_PACKAGES and hasattr(value, "shape")


def _as_array(value: Any) -> Any:
    """A joint mask candidate as an array (ndarrays, torch/JAX arrays as they are, lists of
    numbers and other array-likes as ndarrays), or None."""
    if isinstance(value, np.ndarray) or is_foreign_array(value):
        return value
    if isinstance(value, (bool, int, float, np.generic)):  # a 0-d mask (of a product of nothing)
        return np.asarray(value)
    if isinstance(value, (tuple, Mapping, str, bytes)) or value is None:
        return None
    if hasattr(value, "__array__") or isinstance(value, list):
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):
            return None
        return array if array.dtype.kind in "biuf" else None
    return None


def dtype_kind(dtype: Any) -> str:
    """NumPy's kind letter of a NumPy, JAX or torch dtype (``"b"``, ``"i"``, ``"u"``, ``"f"``)."""
    try:
        return np.dtype(dtype).kind
    except TypeError:
        name = str(dtype).rpartition(".")[2]
        if name == "bool":
            return "b"
        for prefix, kind in (("uint", "u"), ("int", "i"), ("float", "f"), ("bfloat", "f"), ("half", "f")):
            if name.startswith(prefix):
                return kind
        return "O"


def _check_values(array: Any, what: str, path: str, width: int) -> Any:
    """A mask as bools, or weights as floats rescaled per row, on the array's own backend;
    MaskTypeError for a dtype that is neither, MaskError for entries other than 0/1 (masks)
    or negative or non-finite weights, where the values can be read (not under ``jax.jit``,
    whose abstract arrays have none)."""
    kind = dtype_kind(array.dtype)
    if what == "mask" and kind not in "biu":
        raise MaskTypeError(f"mask{path}: expected bools or 0/1 integers, got dtype {array.dtype}")
    if what != "mask" and kind not in "biuf":
        raise MaskTypeError(f"probability{path}: expected real numbers, got dtype {array.dtype}")
    if kind == "b" and what == "mask":
        return array
    if what != "mask" and type(array) is np.ndarray:  # two reductions, no temporaries (NaN fails min >= 0)
        if array.size:
            top = array.max()
            if not (array.min() >= 0 and top < math.inf):
                raise MaskError(f"probability{path}: weights must be finite and non-negative")
            if width == array.ndim:  # one row: its largest (read above) rescales it, as _rescaled would
                return _by_largest(array if array.dtype == np.float64 else array.astype(np.float64), float(top))
        return _rescaled(array.astype(np.float64), width)
    try:
        if what == "mask":
            bad = bool(((array != 0) & (array != 1)).any())
        else:
            bad = bool(((array < 0) | (array != array) | (abs(array) == float("inf"))).any())
    except Exception:  # a traced JAX array: nothing to read
        bad = False
    if bad and what == "mask":
        raise MaskError(f"mask{path}: entries must be 0 or 1 (or bools), got {np.unique(_to_numpy(array))[:8]}")
    if bad:
        raise MaskError(f"probability{path}: weights must be finite and non-negative")
    if what == "mask":
        return array != 0
    name = backend_name(array)
    ns = NUMPY if name is None else kernel_for(name, array)
    return _rescaled(ns.xp.astype(array, ns.dtype(np.float64)), width)


def _rescaled(weights: Any, width: int) -> Any:
    """The weights divided by each row's largest (rows: the last ``width`` axes), so that
    their sums neither overflow (``[1e308, 1e308]``) nor round to a few subnormal steps
    (``[5e-324, 5e-324]``); a row of zeros stays zeros. Any backend's float arrays."""
    if width == 0 or not math.prod(weights.shape):
        return weights
    if type(weights) is np.ndarray:  # NumPy's own methods: 2 us of a masked draw's fixed cost
        if width == weights.ndim:  # one row: its largest as a scalar
            return _by_largest(weights, weights.max())
        top = weights.max(axis=tuple(range(weights.ndim - width, weights.ndim)), keepdims=True)
        top[top <= 0] = 1.0
        return weights / top
    name = backend_name(weights)
    xp = np if name is None else kernel_for(name, weights).xp
    top = xp.max(weights, axis=tuple(range(weights.ndim - width, weights.ndim)), keepdims=True)
    return weights / (top + xp.astype(top <= 0, top.dtype))


def _by_largest(row: np.ndarray, largest: Any) -> np.ndarray:
    """One NumPy row of weights divided by its ``largest``: itself where that is 1 (x / 1 == x,
    and a weighted draw's second rescale finds 1 wherever its largest weight is allowed: 1 us
    of its ~18) or not positive (a row of zeros)."""
    return row if largest == 1 or not largest > 0 else row / largest


def _to_numpy(array: Any) -> Any:
    if array is None or isinstance(array, np.ndarray):
        return array
    if hasattr(array, "detach"):  # torch, on any device
        array = array.detach().cpu()
    return np.asarray(array)


def _count(node: Any) -> int:
    """The number of factors under a Factors or a structure (tuple/dict) of them."""
    if isinstance(node, Factors):
        return len(node.sizes)
    return sum(_count(c) for c in (node.values() if isinstance(node, Mapping) else node))


class FreeBlocks(Sequence[Block]):
    """The blocks of a mask allowing everything of factors held as runs (:class:`Sizes`):
    behaves as the list ``[(1, None)] * len(sizes)`` in memory of the number of runs."""

    __slots__ = ("sizes",)

    def __init__(self, sizes: Sizes) -> None:
        self.sizes = sizes

    def __len__(self) -> int:
        return len(self.sizes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [(1, None)] * len(range(*i.indices(len(self))))
        if not -len(self) <= int(i) < len(self):
            raise IndexError("block index out of range")
        return (1, None)


def _free(value: Any, node: Any) -> bool:
    """Whether ``value`` is a mask of only ``None`` parts in ``node``'s structure (tuples and
    dicts of them), read in time of the mask's own size."""
    if value is None:
        return True
    children = node.children if isinstance(node, Factors) else node
    if isinstance(children, Mapping):
        return isinstance(value, Mapping) and set(value) == set(children) and all(
            _free(value[k], children[k]) for k in children
        )
    if isinstance(children, Sequence) and isinstance(value, tuple) and len(value) == len(children):
        return all(v is None or _free(v, children[i]) for i, v in enumerate(value))
    return False


def parse_blocks(value: Any, node: Any, what: str = "mask", path: str = "") -> Sequence[Block]:
    """The blocks of a mask (``what="mask"``) or of weights (``"probability"``) over ``node``
    (a :class:`Factors`, or a tuple/dict structure of them). A mask of only ``None`` parts
    over factors held as runs gives :class:`FreeBlocks` (memory: the runs, not the factors)."""
    if isinstance(node, Factors) and isinstance(node.sizes, Sizes) and _free(value, node):
        return FreeBlocks(node.sizes)
    if value is None:
        return [(1, None)] * _count(node)
    if not isinstance(node, Factors):
        return _parse_parts(value, node, what, path)
    k = len(node.sizes)
    if isinstance(value, list) and isinstance(node.children, tuple) and len(value) == len(node.children):
        return _parse_list(value, node, what, path)
    array = _as_array(value)
    if array is not None:
        if array.ndim >= k and array.shape[array.ndim - k :] == node.sizes:
            return [(k, _check_values(array, what, path, k))]
        tail = " (per-factor masks are a tuple)" if node.children is not None else ""
        raise MaskError(
            f"{what}{path}: expected an array whose last dimensions are {node.sizes} "
            f"(after any batch dimensions), got shape {array.shape}{tail}"
        )
    if node.children is None or not isinstance(value, (tuple, Mapping)):
        raise MaskTypeError(f"{what}{path}: expected {_expected(node)}, got {type(value).__qualname__}")
    return _parse_parts(value, node.children, what, path)


def _parse_list(value: list[Any], node: Factors, what: str, path: str) -> Sequence[Block]:
    """A list with one item per entry of an array space reads two ways: as one joint (or
    batched) array, and as per-factor masks (a tuple). The reading that parses is taken;
    when both do, the list is ambiguous and a MaskError names both readings."""
    readings: list[Sequence[Block]] = []
    errors: list[Exception] = []
    for reading in (lambda: parse_blocks(np.asarray(value), node, what, path),
                    lambda: _parse_parts(tuple(value), node.children, what, path)):
        try:
            readings.append(reading())
        except (ValueError, TypeError) as error:
            errors.append(error)
    if len(readings) == 2:
        raise MaskError(
            f"{what}{path}: a list of {len(value)} masks over {node.sizes} is ambiguous: pass "
            f"numpy.asarray(m) for one joint mask of shape {node.sizes} (with any batch dimensions), "
            f"or tuple(m) for per-factor masks (Gymnasium's MultiDiscrete form)"
        )
    if readings:
        return readings[0]
    raise errors[0]


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


def blocks_batch_shape(blocks: Sequence[Block], sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The common leading (batch) shape of the blocks; ValueError when they disagree."""
    if isinstance(blocks, FreeBlocks):
        return ()
    shapes = {array.shape[: array.ndim - width] for width, array in blocks if array is not None} - {()}
    if len(shapes) > 1:
        raise MaskError(f"mask: the parts have different batch shapes {sorted(shapes)}")
    return shapes.pop() if shapes else ()


def outer(a: Any, wa: int, b: Any, wb: int, conjoin: bool) -> Any:
    """The outer product of two blocks (batch dimensions broadcast), on any backend."""
    left, right = _outer_pair(a, wa, b, wb)
    return (left & right) if conjoin else (left * right)


def _outer_pair(a: Any, wa: int, b: Any, wb: int) -> tuple[Any, Any]:
    """``a`` and ``b`` reshaped so that their (broadcast) product is their outer product."""
    left = a.reshape(tuple(a.shape) + (1,) * wb)
    right = b.reshape(tuple(b.shape[: b.ndim - wb]) + (1,) * wa + tuple(b.shape[b.ndim - wb :]))
    return left, right


def _is_bool(array: Any) -> bool:
    return dtype_kind(array.dtype) == "b"


def _product(ns: Kernel, x: Any, y: Any, width: int) -> Any:
    """What both blocks allow: bools and-ed, weights multiplied (in the widest float) and
    each row rescaled, so that a product of small weights does not fade to subnormals."""
    if _is_bool(x) and _is_bool(y):
        return x & y
    if type(x) is np.ndarray and type(y) is np.ndarray:
        return _rescaled(x.astype(np.float64, copy=False) * y.astype(np.float64, copy=False), width)
    wide = ns.dtype(np.float64)
    return _rescaled(ns.xp.astype(x, wide) * ns.xp.astype(y, wide), width)


def coarsen(blocks: Sequence[Block], cuts: list[int], sizes: tuple[int, ...], ns: Kernel = NUMPY) -> list[Block]:
    """The blocks re-expressed over the coarser partition with boundaries ``cuts`` (arrays
    of ``ns``'s backend)."""
    if len(cuts) == len(blocks):  # every block ends at a cut: nothing to merge
        return list(blocks)
    result: list[Block] = []
    position = 0
    pending: list[Block] = []
    ends = set(cuts)
    for width, array in blocks:
        pending.append((width, array))
        position += width
        if position in ends:
            result.append(merge_run(pending, sizes[position - sum(w for w, _ in pending) : position], ns))
            pending = []
    return result


def merge_run(run: list[Block], sizes: tuple[int, ...], ns: Kernel = NUMPY) -> Block:
    """One block over the factors of a run of consecutive blocks: their outer product."""
    if len(run) == 1:
        return run[0]
    total = sum(w for w, _ in run)
    if all(a is None for _, a in run):
        return (total, None)
    start = 0
    acc: Any = None
    acc_width = 0
    for width, array in run:
        part = array if array is not None else ns.constant(np.ones(sizes[start : start + width], dtype=bool))
        if acc is None:
            acc, acc_width = part, width
        else:
            acc = _product(ns, *_outer_pair(acc, acc_width, part, width), acc_width + width)
            acc_width += width
        start += width
    return (total, acc)


def _cuts(blocks: Sequence[Block]) -> list[int]:
    return list(itertools.accumulate(w for w, _ in blocks))


def combine(a: Sequence[Block], b: Sequence[Block], sizes: tuple[int, ...], ns: Kernel = NUMPY) -> list[Block]:
    """Blocks allowing what both allow (bools: and; weights: product), over the common
    coarsening of the two partitions (arrays of ``ns``'s backend)."""
    if len(a) != len(b) or any(wa != wb for (wa, _), (wb, _) in zip(a, b)):  # partitions differ: coarsen
        cuts = sorted(set(_cuts(a)) & set(_cuts(b)))
        a, b = coarsen(a, cuts, sizes, ns), coarsen(b, cuts, sizes, ns)
    return [(width, y if x is None else x if y is None else _product(ns, x, y, width))
            for (width, x), (_, y) in zip(a, b)]


def placed(blocks: Sequence[Block], ns: Kernel) -> Sequence[Block]:
    """The blocks as arrays of ``ns``'s backend (NumPy: the host), on its device: arrays
    already there stay; others are copied (through the host)."""
    if isinstance(blocks, FreeBlocks):
        return blocks
    return [(w, a if a is None or (backend_name(a) or "numpy") == ns.name
             else _to_numpy(a) if ns.name == "numpy" else ns.constant(_to_numpy(a))) for w, a in blocks]


# -- drawing: the vectorised chooser, once for every backend ---------------------------------------


def draw_shape(blocks: Sequence[Block], sizes: tuple[int, ...], size: Any) -> tuple[Any, tuple[int, ...]]:
    """``(size, shape)`` of a draw: ``size`` defaults to the blocks' batch shape, which
    must be the draw's shape when there is one (MaskError otherwise)."""
    batch = blocks_batch_shape(blocks, sizes)
    if size is None and batch:
        size = batch
    shape = normalize_size(size)
    if batch and batch != shape:
        raise MaskError(f"sample: a batch of masks of shape {batch} needs size={batch}, got size={size!r}")
    return size, shape


def choose(weights: Any, shape: tuple[int, ...], ns: Kernel, what: str = "sample") -> Any:
    """Indices along the last axis of ``weights``, drawn with probability proportional to the
    weights (bools: uniform over the true entries) from ``ns``'s generator: an int64 array
    of ``shape`` on ``ns``'s backend.

    ``weights`` is ``(m,)`` (one distribution for every draw) or ``(*shape, m)`` (one row per
    draw). A cumulative sum, one uniform per draw and a search of the first cumulative
    weight above it: the same array operations on NumPy, torch and JAX. Raises ValueError
    naming the first row allowing nothing (not detectable under ``jax.jit``, where such a
    row draws its first entry).
    """
    xp, m, single = ns.xp, weights.shape[-1], weights.ndim == 1
    integral = _is_bool(weights)
    if single and integral and ns.name == "numpy":  # NumPy fast path: 4 us vs 43 us a draw of a 15x15 mask
        legal = np.flatnonzero(weights)
        if not legal.size:
            raise MaskError(f"{what}: the mask allows no element")
        return legal[ns.below(legal.size, shape)]
    if single and ns.name == "numpy":  # NumPy, one row of weights: the steps below as NumPy's own calls
        return _choose_weighted(weights, shape, ns, what)  # (a Masked range(15) draw: 23 us vs 31 us)
    rows = xp.reshape(weights, (math.prod(weights.shape[:-1]), m))
    wide = ns.dtype(np.float64)
    counts = ns.dtype(np.int32 if m < 2**31 else np.int64)
    scaled = rows if integral else _rescaled(xp.astype(rows, wide, copy=False), 1)
    cumulative = xp.cumulative_sum(scaled, axis=-1, dtype=counts if integral else wide)  # NumPy would widen
    total = cumulative[:, -1] if m else xp.sum(cumulative, axis=-1)
    _check_rows(~(total > 0), shape, single, integral, what)
    u = ns.uniform((math.prod(shape),) if single else (rows.shape[0],))
    if integral:  # the (k+1)-th allowed entry, k uniform in range(total)
        threshold = xp.minimum(xp.astype(xp.floor(u * xp.astype(total, wide)), counts), total - 1)
        if single:  # the allowed entries first, in order: take the k-th (no search per draw)
            order = xp.argsort(xp.astype(~rows[0], ns.dtype(np.int8)), stable=True)
            return xp.reshape(xp.astype(xp.take(order, threshold), ns.dtype(np.int64)), shape)
    else:  # the first entry whose cumulative weight exceeds u * total < total: a positive one
        threshold = xp.minimum(u * total, xp.nextafter(total, xp.zeros_like(total)))
    if single:
        drawn = xp.searchsorted(cumulative[0], threshold, side="right")
    else:
        hit = cumulative > threshold[:, None]
        ordered = getattr(ns, "ordered", None)  # a backend that cannot take the argmax of bools (torch)
        drawn = xp.argmax(hit if ordered is None else ordered(hit), axis=-1)
    return xp.reshape(xp.astype(drawn, ns.dtype(np.int64)), shape)


def _choose_weighted(weights: np.ndarray, shape: tuple[int, ...], ns: Kernel, what: str) -> Any:
    """:func:`choose` of one row of NumPy weights: the same rescaling, cumulative sum, uniforms
    and search, hence the same draws from the same generator."""
    cumulative = _rescaled(weights.astype(np.float64, copy=False), 1).cumsum()
    total = cumulative[-1] if cumulative.size else np.float64(0.0)
    if not total > 0:
        raise MaskError(f"{what}: the probability weights of the allowed elements sum to 0")
    threshold = np.minimum(ns.uniform((math.prod(shape),)) * total, np.nextafter(total, 0.0))
    return cumulative.searchsorted(threshold, side="right").astype(np.int64).reshape(shape)


def _check_rows(empty: Any, shape: tuple[int, ...], single: bool, integral: bool, what: str) -> None:
    """MaskError where a row allows nothing (``empty``: one flag per row), where the flags
    can be read (not under ``jax.jit``)."""
    try:
        found = bool(empty.any())
    except Exception:  # a traced JAX array: nothing to read
        return
    if found and single:
        raise MaskError(f"{what}: the mask allows no element" if integral
                        else f"{what}: the probability weights of the allowed elements sum to 0")
    if found:
        row = np.unravel_index(int(_to_numpy(empty).argmax()), shape)
        raise MaskError(f"{what}: the mask of row {tuple(int(i) for i in row)} allows no element")


def draw_digits(blocks: Sequence[Block], sizes: tuple[int, ...], shape: tuple[int, ...], ns: Kernel) -> Any:
    """Digits ``(*shape, k)`` (int64, ``ns``'s backend): each block drawn independently
    (uniform on its allowed set, or by its weights), so the whole is uniform on (weighted
    over) the product of the blocks. An unmasked block's digits are drawn each on its own
    (one call for all factors of :class:`FreeBlocks`); a masked block's flat index becomes
    its digits through a table of the block's entries (no integer division per draw)."""
    xp = ns.xp
    parts: list[Any] = []
    start = 0
    for width, array in [(len(sizes), None)] if isinstance(blocks, FreeBlocks) else blocks:
        block_sizes = sizes[start : start + width]
        start += width
        if array is None:
            unmasked = _as_ints(block_sizes)
            if not unmasked.all() and 0 not in shape:
                raise MaskError("sample: the space is empty")
            parts.append(ns.below(np.maximum(unmasked, 1), (*shape, width)))
            continue
        block_sizes = tuple(block_sizes)  # a masked block's sizes: as many as its array has axes
        flat = choose(xp.reshape(array, (*array.shape[: array.ndim - width], math.prod(block_sizes))), shape, ns)
        if width == 1:
            parts.append(flat[..., None])
        elif width > 1:  # (a block over no factor allows the one element or none: no digits)
            parts.append(xp.take(ns.constant(_unravelled(block_sizes)), flat, axis=0))
    if not parts:
        return ns.constant(np.zeros((*shape, 0), dtype=np.int64))
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=-1)


def _unravelled(sizes: tuple[int, ...]) -> np.ndarray:
    """The digits of each flat index of a block of ``sizes``: ``(prod(sizes), len(sizes))``."""
    return _UNRAVELLED.get_or_compute(sizes, _unravel)


def _unravel(sizes: tuple[int, ...]) -> np.ndarray:
    return np.stack(np.unravel_index(np.arange(math.prod(sizes)), sizes), axis=-1)


#: keyed by a block's sizes, not by a space (a draw does not know it): 0.07 us a hit against
#: 32 us to build for 15x15 (319 us for 2**10), and bounded in bytes as every cache
_UNRAVELLED: IdentityCache[np.ndarray] = IdentityCache("unravelled block digits", max_entries=64, by_value=True)


def _as_ints(sizes: Sequence[int]) -> np.ndarray:
    """Factor sizes as an int64 array (:class:`Sizes` expanded from its runs, in C)."""
    if isinstance(sizes, Sizes):
        return np.repeat(np.array([s for s, _ in sizes.runs], dtype=np.int64), [c for _, c in sizes.runs])
    return np.asarray(sizes, dtype=np.int64).reshape(-1)
