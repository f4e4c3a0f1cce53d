"""Masks as blocks: parsing the mask forms users write, combining masks and weights, and
the vectorised chooser that draws from them (:mod:`spacealg.spaces.masked`).

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

from spacealg.spaces.mask_factors import Factors, MaskError, MaskTypeError, Sizes

__all__ = [
    "Block",
    "FreeBlocks",
    "blocks_batch_shape",
    "choose",
    "coarsen",
    "combine",
    "draw_digits",
    "dtype_kind",
    "host_blocks",
    "is_foreign_array",
    "merge_run",
    "outer",
    "parse_blocks",
]


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
    if not isinstance(array, np.ndarray):
        return _check_foreign(array, what, path, width)
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
    return _rescaled(weights, width)


def _rescaled(weights: Any, width: int) -> Any:
    """The weights divided by each row's largest (rows: the last ``width`` axes), so that
    their sums neither overflow (``[1e308, 1e308]``) nor round to a few subnormal steps
    (``[5e-324, 5e-324]``); a row of zeros stays zeros. Any float backend's arrays."""
    if width == 0 or not math.prod(weights.shape):
        return weights
    axes = tuple(range(weights.ndim - width, weights.ndim))
    if isinstance(weights, np.ndarray):
        top = weights.max(axis=axes, keepdims=True)
        return weights / np.where(top > 0, top, 1.0)
    torch = hasattr(weights, "amax")
    top = weights.amax(dim=axes, keepdim=True) if torch else weights.max(axis=axes, keepdims=True)
    return weights / (top + (top <= 0))


def _check_foreign(array: Any, what: str, path: str, width: int) -> Any:
    """The checks of :func:`_check_values` on a torch/JAX array, where its values can be read
    (not under ``jax.jit``, whose abstract arrays have none)."""
    kind = dtype_kind(array.dtype)
    if what == "mask" and kind not in "biu":
        raise MaskTypeError(f"mask{path}: expected bools or 0/1 integers, got dtype {array.dtype}")
    if what != "mask" and kind not in "biuf":
        raise MaskTypeError(f"probability{path}: expected real numbers, got dtype {array.dtype}")
    if kind == "b" and what == "mask":
        return array
    try:
        if what == "mask":
            bad = bool(((array != 0) & (array != 1)).any())
        else:
            bad = bool(((array < 0) | (array != array) | (abs(array) == float("inf"))).any())
    except Exception:
        bad = False
    if bad:
        raise MaskError(
            f"mask{path}: entries must be 0 or 1 (or bools)"
            if what == "mask"
            else f"probability{path}: weights must be finite and non-negative"
        )
    if what == "mask":
        return array != 0
    return _rescaled(array if kind == "f" else array * 1.0, width)


def host_blocks(blocks: Sequence[Block]) -> Sequence[Block]:
    """The blocks with torch/JAX arrays copied to NumPy (for the NumPy draws and spaces)."""
    if isinstance(blocks, FreeBlocks):
        return blocks
    return [(width, _to_numpy(array)) for width, array in blocks]


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


def outer(a: np.ndarray, wa: int, b: np.ndarray, wb: int, conjoin: bool) -> np.ndarray:
    """The outer product of two blocks (batch dimensions broadcast)."""
    left = a.reshape(a.shape + (1,) * wb)
    right = b.reshape(b.shape[: b.ndim - wb] + (1,) * wa + b.shape[b.ndim - wb :])
    return (left & right) if conjoin else (left * right)


def _full(sizes: tuple[int, ...], like: Any) -> np.ndarray:
    return np.ones(sizes, dtype=bool if like is None or like.dtype == bool else np.float64)


def coarsen(blocks: Sequence[Block], cuts: list[int], sizes: tuple[int, ...]) -> list[Block]:
    """The blocks re-expressed over the coarser partition with boundaries ``cuts``."""
    result: list[Block] = []
    position = 0
    pending: list[Block] = []
    ends = set(cuts)
    for width, array in blocks:
        pending.append((width, array))
        position += width
        if position in ends:
            result.append(merge_run(pending, sizes[position - sum(w for w, _ in pending) : position]))
            pending = []
    return result


def merge_run(run: list[Block], sizes: tuple[int, ...]) -> Block:
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
            acc = outer(acc, acc_width, part, width, acc.dtype == bool and part.dtype == bool)
            acc_width += width
        start += width
    return (total, acc)


def _cuts(blocks: Sequence[Block]) -> list[int]:
    return list(itertools.accumulate(w for w, _ in blocks))


def combine(a: Sequence[Block], b: Sequence[Block], sizes: tuple[int, ...]) -> list[Block]:
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
    if not integral:  # a product of rescaled weights may be tiny again
        weights = _rescaled(weights, 1)
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
    blocks: Sequence[Block], sizes: tuple[int, ...], shape: tuple[int, ...], generator: np.random.Generator
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
        if width == 0:  # a mask over no factor (a product of nothing): it allows the one element or none
            pass
        elif width == 1:
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
