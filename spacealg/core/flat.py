"""A leaf's segment of Gymnasium's flat vector, and its batched rules, written once over a kernel.

>>> import numpy as np
>>> from spacealg.core.flat import segment
>>> from spacealg.core.kernel import NUMPY
>>> from spacealg.core.leaf import leaf
>>> model = leaf(range(2, 5))
>>> s = segment(model)
>>> s.dim, s.dtype
(3, dtype('int64'))
>>> columns, bad = s.columns(NUMPY, model, np.array([[2], [4], [5]]))
>>> columns[:, 0].tolist(), bad[:, 0].tolist()
([0, 2, 3], [False, False, True])

A leaf (:mod:`spacealg.core.leaf`) flattens either to its raveled values in its dtype
(:class:`RavelSegment`: Box, MultiBinary, intervals) or to one one-hot vector per entry
(:class:`OneHotSegment`: Discrete, MultiDiscrete, labels and stepped ranges by position);
a leaf with no leaf model (OneOf, Text, a kind with an image, ...) is a :class:`Part`,
flattened by its own batched rules. A space's :class:`Layout` is its leaves' pieces, in its
plan's leaf order, and :func:`flatten_rows`/:func:`unflatten_rows` are the one flatten
driver: NumPy's flat codec (:mod:`spacealg.ops.flatten`) and the torch/JAX flattening
(:mod:`spacealg.backends.flatten`) both call them, over NumPy's kernel or the batch's.

Laws: ``segment(m).dim`` is the width of a member's flattening; ``columns`` then
``positions`` of the one-hot rows they mark give back ``x - low`` (``values``: ``x``) for
every entry inside the leaf, and ``bad`` marks exactly the entries outside it; on every
kernel, the answers are NumPy's moved to that backend. ``unflatten_rows`` of
``flatten_rows`` gives back the leaf batches; a leaf value that is no member (or a segment
with no hot entry) raises ValueError naming that leaf, where values can be read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import numpy as np

from spacealg.core.kernel import NUMPY, Kernel
from spacealg.core.leaf import LeafModel, plain, widths

__all__ = ["Layout", "OneHotSegment", "Part", "RavelSegment", "flatten_rows", "one_hot", "segment", "unflatten_rows"]


class RavelSegment:
    """Raveled values in the leaf's dtype: Box, MultiBinary (int8 0/1), intervals (float64)."""

    onehot = False

    def __init__(self, model: LeafModel) -> None:
        self.model = model
        self.scalar = model.scalar  # members are Python floats (an Interval), not arrays
        self.shape, self.element_shape = ((1,), ()) if model.scalar else (model.shape, model.shape)
        self.dim = math.prod(self.shape)
        self.dtype = model.dtype
        self.low, self.high = (np.full(self.shape, b, self.dtype).reshape(-1) for b in (model.low, model.high))

    def values(self, k: Kernel, model: LeafModel | None, rows: Any) -> Any:
        """The ``(n, dim)`` entries ``rows`` (a batch's raveled members, or a flat segment) in
        the leaf's native dtype (a member's own rounding; no copy where already in it). The
        flat rows are these cast to the flat dtype."""
        return k.xp.astype(rows, k.native(model, self.dtype), copy=False)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low, self.high


class OneHotSegment:
    """One-hot of each entry's ``x - low`` (Discrete, MultiDiscrete, Categorical), or of its
    position among the leaf's labels (finite sets, stepped ranges, arrays of them: the leaf
    model stores positions, ``low == 0``)."""

    onehot = True

    def __init__(self, model: LeafModel) -> None:
        self.model = model
        self.dtype = model.dtype
        self.shape = self.element_shape = model.shape
        low = np.broadcast_to(np.asarray(model.low, dtype=object), model.shape)
        self.nvec = np.array(np.broadcast_to(widths(model.low, model.high), model.shape), np.int64).reshape(-1)
        self.low = low.astype(np.int64).reshape(-1)
        self.size = self.nvec.size
        self.dim = int(self.nvec.sum())
        self.offsets = np.concatenate([[0], np.cumsum(self.nvec)[:-1]]).astype(np.int64)
        self.unsigned_widths = self.nvec.astype(np.uint64)
        self.uniform = bool(self.size and (self.nvec == self.nvec[0]).all())

    def columns(self, k: Kernel, model: LeafModel, rows: Any) -> tuple[Any, Any]:
        """``(columns, bad)`` for the ``(n, size)`` integer entries ``rows`` (of a leaf without
        labels): each entry's column in the leaf's segment, ``offset + x - low``, and where the
        entry is no member (outside ``low..high``, or a float that is no integer)."""
        xp = k.xp
        fraction = None
        if k.kind(rows) == "f":  # a member is a whole number (not NaN, not infinite), cast only then
            whole = xp.round(rows)
            fraction = ~((whole == rows) & (xp.abs(whole) <= 2.0**62))
            rows = xp.where(fraction, 0.0, whole)
        x = xp.astype(rows, k.widest_int(), copy=False) - self._const(k, model, "flat_low", self.low)
        if k is NUMPY:  # one test: x < 0 read unsigned lies past every width (256 rows of a Discrete 6.6 -> 5.9 us)
            bad = x.view(np.uint64) >= self.unsigned_widths
        else:
            bad = (x < 0) | (x >= self._const(k, model, "flat_widths", self.nvec))
        if fraction is not None:
            bad = bad | fraction
        return x + self._const(k, model, "flat_starts", self.offsets), bad

    def positions(self, k: Kernel, model: LeafModel, segment: Any) -> tuple[Any, Any]:
        """``(positions, found)``: each entry's first nonzero column in the ``(n, dim)`` rows
        ``segment``, less its offset (``x - low``, or the label's position), and whether every
        entry has one (a 0-d bool array of ``k``'s backend, not read here)."""
        xp = k.xp
        hot = segment != 0
        n = segment.shape[0]
        if self.uniform:  # segments of one width: one argmax
            per_entry = xp.reshape(hot, (n, self.size, int(self.nvec[0])))
            index = _first(k, model, per_entry)
            # NumPy: argmax is 0 exactly where no column is hot, so an entry lacks one where its column 0
            # is zero too (unflatten_batch(256) of small_dict 11.6 us, 14.1 by any/all)
            found = ((per_entry[..., 0] | index.astype(bool)).all() if k is NUMPY
                     else xp.all(xp.any(per_entry, axis=-1)))
        elif k is NUMPY:  # a reduction per segment (no array-API form): 0.23 ms vs 0.79 ms by the loop below
            # (256 rows of Categorical([3, 4, 5, 6] * 4), NumPy; 0.05 vs 0.09 ms for [3, 4])
            index = np.minimum.reduceat(np.where(hot, np.arange(self.dim), self.dim), self.offsets, axis=1)
            index = index - self.offsets
            found = (index < self.nvec).all()
        else:
            columns, ok = [], []
            for start, width in zip(self.offsets.tolist(), self.nvec.tolist()):
                part = hot[:, start : start + width]
                ok.append(xp.all(xp.any(part, axis=-1)))
                columns.append(_first(k, model, part))
            found = xp.all(xp.stack(ok)) if ok else k.ones((), k.dtype(np.dtype(bool)))
            index = xp.stack(columns, axis=-1) if columns else xp.astype(segment[:, :0], k.widest_int())
        return index, found

    def values(self, k: Kernel, model: LeafModel, index: Any) -> Any:
        """The member entries (native dtype) at the ``positions`` ``index`` of a leaf without labels."""
        xp = k.xp
        wide = xp.astype(index, k.widest_int(), copy=False) + self._const(k, model, "flat_low", self.low)
        return xp.astype(wide, k.native(model, self.dtype), copy=False)

    @staticmethod
    def _const(k: Kernel, model: LeafModel, tag: str, array: np.ndarray) -> Any:
        """The segment's int64 ``array`` where ``k``'s arrays live (NumPy's: itself)."""
        return array if k is NUMPY else k.const(model, tag, lambda: array, k.widest_int())

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(self.dim, self.dtype), np.ones(self.dim, self.dtype)


def _first(k: Kernel, model: LeafModel, hot: Any) -> Any:
    """The first True along the last axis of the bool array ``hot`` (torch has no bool argmax)."""
    return hot.argmax(-1) if k is NUMPY else k.xp.argmax(k.xp.astype(hot, k.native(model, np.int8)), axis=-1)


def one_hot(model: LeafModel) -> bool:
    """Whether the leaf ``model`` flattens one-hot: Discrete/MultiDiscrete images and labels."""
    return model.items is not None or model.image in ("Discrete", "MultiDiscrete")


def segment(model: LeafModel) -> RavelSegment | OneHotSegment:
    """The flat segment of the leaf ``model`` (:func:`one_hot`, else raveled values)."""
    return OneHotSegment(model) if one_hot(model) else RavelSegment(model)


class Part:
    """A leaf with no leaf model (OneOf, Text, a kind with an image, ...): its rows are what its
    own batched ``flatten(batch) -> (*lead, dim)`` and ``unflatten(rows) -> batch`` give."""

    onehot = False

    def __init__(self, space: Any, dim: int, dtype: Any, flatten: Callable[[Any], Any],
                 unflatten: Callable[[Any], Any]) -> None:
        self.space, self.dim, self.dtype, self.flatten, self.unflatten = space, dim, dtype, flatten, unflatten


Piece = RavelSegment | OneHotSegment | Part


class Layout:
    """The flat vector of a space: its leaves' pieces (depth first), their starts, the width
    and ``dtype`` (the products' promotion, as the caller computed it)."""

    def __init__(self, pieces: list[Piece], dtype: Any) -> None:
        self.pieces = pieces
        self.starts = tuple(accumulate((p.dim for p in pieces[:-1]), initial=0))
        self.dim = sum(p.dim for p in pieces)
        self.dtype = dtype
        self.onehot = any(p.onehot for p in pieces)
        self.modelled = not any(isinstance(p, Part) for p in pieces)

    def space_of(self, i: int) -> Any:
        piece = self.pieces[i]
        return piece.space if isinstance(piece, Part) else piece.model.space


#: ``labels(k, model, rows) -> (positions, bad)``, ``k`` the kernel of the backend it is written for
LabelIndex = Callable[[Any, LeafModel, Any], tuple[Any, Any]]


def numpy_positions(k: Kernel, model: LeafModel, rows: Any) -> tuple[Any, Any]:
    """``(positions, bad)`` of the labels ``rows`` by the leaf model's lookup (NumPy's: labels
    may be any hashable objects); a label not in the leaf is bad, at position 0."""
    lookup = model.lookup
    flat = np.asarray(rows, dtype=object).reshape(-1)
    positions = np.empty(flat.size, np.int64)
    for i, x in enumerate(flat):
        try:
            positions[i] = lookup[plain(x)]
        except (KeyError, TypeError):
            positions[i] = -1
    bad = positions < 0
    positions[bad] = 0
    return positions.reshape(np.shape(rows)), bad.reshape(np.shape(rows))


def _lead(piece: Piece, b: Any) -> tuple[Any, Any]:
    """``(lead, b)``: the batch shape of the leaf batch ``b`` and ``b`` (a part's: its flat rows);
    ValueError naming the leaf unless ``b``'s shape ends in its element shape."""
    if isinstance(piece, Part):
        b = piece.flatten(b)
        return tuple(b.shape[:-1]), b
    shape = b.shape if type(b) is np.ndarray else tuple(np.shape(b))
    element = piece.element_shape
    if not element:
        return shape, b
    m = len(shape) - len(element)
    if m < 0 or shape[m:] != element:
        raise ValueError(f"{type(b).__qualname__} of shape {shape} is not a batch of {piece.model.space!r} "
                         f"(elements of shape {element})")
    return shape[:m], b


def flatten_rows(k: Kernel, layout: Layout, parts: Any, out: Any,
                 labels: LabelIndex = numpy_positions) -> tuple[Any, Any]:
    """``(flat, bad)``: the ``(*batch, dim)`` flat rows (backend dtype ``out``) of the leaf
    batches ``parts`` (the layout's order), and, for one program (``k.program``: eager JAX's
    ``jit``), per leaf whether a value is no member, read by the caller after it ran; ``bad``
    is None otherwise: a non-member raises ValueError naming its leaf before its scatter, and
    nothing is read where values cannot be (traced). ValueError where the leaf batches'
    batch shapes differ. ``labels`` finds the positions of a labels leaf's values."""
    xp, program, pieces = k.xp, k.program, layout.pieces
    lead, first = _lead(pieces[0], parts[0])
    rows = [first]
    if len(pieces) > 1:
        for piece, b in zip(pieces[1:], parts[1:]):
            shape, b = _lead(piece, b)
            if shape != lead:
                raise ValueError("the component batches have different batch shapes")
            rows.append(b)
    n = math.prod(lead)
    # NumPy fills one preallocated array: 256 rows of small_dict 14.1 us, 21.2 us as concatenated pieces (timeit)
    fill = (np.zeros if layout.onehot else np.empty)((n, layout.dim), out) if k is NUMPY else None
    flat, bads = [], []
    for piece, start, b in zip(pieces, layout.starts, rows):
        bad = None
        if piece.onehot:
            model = piece.model  # type: ignore[union-attr]
            b = (np.asarray(b, dtype=object if model.items is not None else None).reshape(n, piece.size)  # type: ignore[union-attr]
                 if fill is not None else xp.reshape(b, (n, piece.size)))  # type: ignore[union-attr]
            if model.items is None:
                columns, bad = piece.columns(k, model, b)  # type: ignore[union-attr]
            else:
                index, bad = labels(k, model, b)
                columns = index + piece._const(k, model, "flat_starts", piece.offsets)  # type: ignore[union-attr]
            if not program and (bad.any() if fill is not None else k.any_true(bad)):  # before the scatter
                raise ValueError(f"a value is not a member of {layout.space_of(pieces.index(piece))!r}")
            if fill is None:
                flat.append(k.onehot(columns, piece.dim, out))
            else:
                fill[:, start : start + piece.dim][np.arange(n)[:, None], columns] = 1
        else:
            b = np.asarray(b).reshape(n, piece.dim) if fill is not None else xp.reshape(b, (n, piece.dim))
            if isinstance(piece, RavelSegment):
                b = piece.values(k, piece.model, b)
            if fill is None:
                flat.append(xp.astype(b, out))
            else:
                fill[:, start : start + piece.dim] = b
        if program:
            bads.append(xp.any(bad) if bad is not None else k.zeros((), k.dtype(np.dtype(bool))))
    if fill is None:
        fill = flat[0] if len(flat) == 1 else xp.concat(flat, axis=-1)
    if len(lead) != 1:
        fill = xp.reshape(fill, (*lead, layout.dim))
    return fill, (xp.stack(bads) if bads else None)


def unflatten_rows(k: Kernel, layout: Layout, vs: Any) -> tuple[list[Any], Any]:
    """``(values, missing)``: the leaf batches whose flattenings are the rows of ``vs``
    (``(*batch, dim)``), and, for one program, per leaf whether a one-hot segment has no hot
    entry (read by the caller, as :func:`flatten_rows`' flags); else such a row raises
    ValueError naming the leaf, where values can be read."""
    xp, program, pieces = k.xp, k.program, layout.pieces
    lead = tuple(vs.shape[:-1])
    rows = vs if len(lead) == 1 else xp.reshape(vs, (math.prod(lead), layout.dim))
    values, missing = [], []
    for i, (piece, start) in enumerate(zip(pieces, layout.starts)):
        segment = rows if len(pieces) == 1 else rows[:, start : start + piece.dim]
        found = None
        if isinstance(piece, RavelSegment):
            value = piece.values(k, piece.model, segment)
            if piece.element_shape != (piece.dim,) or len(lead) != 1:
                value = xp.reshape(value, (*lead, *piece.element_shape))
        elif isinstance(piece, Part):
            value = piece.unflatten(xp.reshape(segment, (*lead, piece.dim)))
        else:
            model = piece.model
            index, found = piece.positions(k, model, segment)
            if model.items is None:
                value = piece.values(k, model, index)
            elif k is NUMPY:
                value = model.item_array[index]
            else:
                items = model.numbers if model.numbers is not None else np.asarray(model.items, dtype=np.int64)
                native = k.native(model, items.dtype)
                value = k.const(model, "item_values", functools.partial(np.asarray, items), native)[index]
            if piece.shape != (piece.size,) or len(lead) != 1:
                value = xp.reshape(value, (*lead, *piece.shape))
            if not program and (not found if k is NUMPY else k.any_true(~found)):
                raise ValueError(f"a row is not a concatenation of one-hot vectors ({layout.space_of(i)!r})")
        values.append(value)
        if program:
            missing.append(~found if found is not None else k.zeros((), k.dtype(np.dtype(bool))))
    return values, (xp.stack(missing) if missing else None)
