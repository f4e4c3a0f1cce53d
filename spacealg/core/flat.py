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
(:class:`OneHotSegment`: Discrete, MultiDiscrete, labels and stepped ranges by position).
NumPy's flat codec (:mod:`spacealg.ops.flatten`, whose leaf codecs are these segments with
NumPy's code generation) and the torch/JAX flattening (:mod:`spacealg.backends.flatten`)
read the same segment and run the same rules, over NumPy's kernel or the batch's.

Laws: ``segment(m).dim`` is the width of a member's flattening; ``columns`` then
``positions`` of the one-hot rows they mark give back ``x - low`` (``values``: ``x``) for
every entry inside the leaf, and ``bad`` marks exactly the entries outside it; on every
kernel, the answers are NumPy's moved to that backend.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from spacealg.core.kernel import NUMPY, Kernel
from spacealg.core.leaf import LeafModel, widths

__all__ = ["OneHotSegment", "RavelSegment", "one_hot", "segment"]


class RavelSegment:
    """Raveled values in the leaf's dtype: Box, MultiBinary (int8 0/1), intervals (float64)."""

    onehot = False

    def __init__(self, model: LeafModel) -> None:
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
            found = xp.all(xp.any(per_entry, axis=-1))
            index = _first(k, model, per_entry)
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
