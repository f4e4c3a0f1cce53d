"""Flattening: Gymnasium's one-hot vectors, precompiled.

>>> import numpy as np
>>> from spacealg import Box, DictProduct
>>> from spacealg.ops import flatdim, flatten, unflatten, flattened_box
>>> s = DictProduct(pos=Box(-1.0, 1.0, shape=(2,)), dir=range(4))
>>> flatdim(s), flatten({"pos": np.zeros(2, np.float32), "dir": 2}, s)
(6, array([0., 0., 0., 0., 1., 0.]))
>>> unflatten(flatten({"pos": np.ones(2), "dir": 3}, s), s)["dir"]
np.int64(3)

:func:`flattened_box` is Gymnasium's ``gymnasium.spaces.utils.flatten_space`` (the Box
that :func:`flatten` maps into); spacealg's ``flatten_space`` is PufferLib's leaf list
(:mod:`spacealg.ops.leaves`). Note the argument order: the value first, as everywhere in
spacealg (``flatten(x, space)``); a call with the two swapped is a TypeError saying so.

:func:`flatdim`, :func:`flatten`, :func:`unflatten` and :func:`flattened_box` equal
``gymnasium.spaces.utils``'s, value for value and dtype for dtype, on every Gymnasium
space (through :func:`~spacealg.adapters.gymnasium.from_gymnasium`), and on a spacealg
space they are Gymnasium's rules applied to its Gymnasium image. The rule table, one
registration of :func:`flat_codec` per kind of space:

===============================  =========  ==============================================
space (its leaf model's image)   flat dtype flat vector of a member ``x``
===============================  =========  ==============================================
``Box``                          its dtype  ``x`` raveled (C order)
``range(a, b)`` (Discrete)       int64      one-hot of ``x - a``, length ``b - a``
``ArraySpace(range(a, b), *d)``  int64      one-hot per entry, concatenated (MultiDiscrete)
``Categorical`` (other dtypes)   its dtype  one-hot as Discrete/MultiDiscrete
``ArraySpace(bool, *d)``         int8       ``x`` raveled as 0/1 (MultiBinary)
other finite scalar space        int64      one-hot of ``index(x, s)`` (labels as Discrete)
``ArraySpace(finite, *d)``       int64      one-hot of each entry's index, concatenated
``Interval``                     float64    ``[x]``; unflattens to a float
``ArraySpace(open interval)``    float64    ``x`` raveled
``TupleProduct``/``DictProduct`` promoted   the parts, concatenated (tuple/dict of parts
                                            when a part is a Sequence or Graph)
``OneOf``                        promoted   ``[i, *flatten(v)]`` padded with its first entry
===============================  =========  ==============================================

The batched forms :func:`flatten_batch`/:func:`unflatten_batch` take and give spacealg's
batches (arrays ``(*batch, *elsize)``, tuples/dicts of component batches, object arrays
for OneOf) and ``(*batch, flatdim)`` arrays, vectorised per leaf.

Speed: a space is compiled once into a :class:`FlatCodec` (cached by identity for spacealg
and Gymnasium spaces) whose ``flatten``/``unflatten`` are generated straight-line code with
the offsets inlined. Hold ``codec = flat_codec(space)`` to skip even the cache lookup.
Leaves compile from their leaf model (:func:`leaf_codec`, :mod:`spacealg.core.leaf`).

Laws (tests/test_flatten.py): ``unflatten(flatten(x, s), s) == x``;
``flatten(x, s) in flattened_box(s)``; ``flatdim(s) == flatten(x, s).size``;
``flatten_batch`` and ``unflatten_batch`` equal the loop of the single forms; on
Gymnasium spaces every function equals ``gymnasium.spaces.utils``'s, dtype included.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from spacealg.adapters.native import native_kind
from spacealg.core.cache import IdentityCache
from spacealg.core.codegen import Generator
from spacealg.core.generic import coerce, generic
from spacealg.core.leaf import LeafModel, leaf, plain
from spacealg.core.space import Space
from spacealg.spaces.box import Box
from spacealg.spaces.graph import Graph, GraphInstance
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import Sequence, stacked
from spacealg.spaces.text import Text

__all__ = [
    "FlatCodec",
    "flat_codec",
    "flatdim",
    "flatten",
    "flatten_batch",
    "flattened_box",
    "unflatten",
    "unflatten_batch",
]

_INT64 = np.dtype(np.int64)
_INT8 = np.dtype(np.int8)
_FLOAT64 = np.dtype(np.float64)


# =====================================================================================
# the compiled codecs: one class per rule of the table
# =====================================================================================


class FlatCodec:
    """The one-hot flattening of one space, compiled: ``dim``, ``dtype`` and the maps.

    ``flatten(x)`` is a fresh ``(dim,)`` array of ``dtype``; ``unflatten(v)`` the member
    (arrays may be views of ``v``, as in Gymnasium); ``flatten_batch(xs)`` a
    ``(*batch, dim)`` array; ``unflatten_batch(vs)`` the batch; ``box()`` the flattened
    space. ``fill(out, x)`` writes ``flatten(x)`` into the first ``dim`` entries of a
    zeroed ``out``; ``fill_batch(out, xs, n)`` the same for an ``(n, dim)`` ``out``.
    """

    dim: int
    dtype: Any  # a numpy dtype; None for spaces that do not flatten to one array
    flattenable: bool = True
    onehot: bool = False  # whether fill relies on a zeroed output
    flat_shape: tuple[int, ...] = ()  # (dim,), set when the public functions cache the codec

    # -- single members -------------------------------------------------------------
    def flatten(self, x: Any) -> Any:
        self._require_flattenable("flatten")
        out = np.zeros(self.dim, self.dtype) if self.onehot else np.empty(self.dim, self.dtype)
        self.fill(out, x)
        return out

    def fill(self, out: np.ndarray, x: Any) -> None:
        raise NotImplementedError

    def unflatten(self, v: Any) -> Any:
        raise NotImplementedError

    # -- batches --------------------------------------------------------------------
    def batch_shape(self, xs: Any) -> tuple[int, ...]:
        """The batch shape of a batch ``xs`` of members."""
        raise NotImplementedError

    def flatten_batch(self, xs: Any) -> np.ndarray:
        self._require_flattenable("flatten_batch")
        shape = self.batch_shape(xs)
        n = math.prod(shape)
        out = np.zeros((n, self.dim), self.dtype) if self.onehot else np.empty((n, self.dim), self.dtype)
        self.fill_batch(out, xs, n)
        return out.reshape((*shape, self.dim))

    def fill_batch(self, out: np.ndarray, xs: Any, n: int) -> None:
        raise NotImplementedError

    def unflatten_batch(self, vs: Any) -> Any:
        self._require_flattenable("unflatten_batch")
        vs = np.asarray(vs)
        if vs.ndim < 1 or vs.shape[-1] != self.dim:
            raise ValueError(f"unflatten_batch: expected an array (*batch, {self.dim}), got shape {vs.shape}")
        shape = vs.shape[:-1]
        return self.read_batch(vs.reshape(math.prod(shape), self.dim), shape)

    def read_batch(self, vs: np.ndarray, shape: tuple[int, ...]) -> Any:
        """The batch of shape ``shape`` from the rows of the 2-D ``vs`` (first ``dim`` columns)."""
        raise NotImplementedError

    # -- the flattened space ----------------------------------------------------------
    def box(self) -> Any:
        raise NotImplementedError

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The flattened Box's ``(low, high)`` arrays, in this space's flat dtype."""
        box = self.box()
        return box.low, box.high

    # -- code generation hooks (products inline their leaves) -------------------------
    def onehot_ranges(self, start: int) -> list[tuple[int, int]]:
        """The ranges of a flat vector (this space at ``start``) that ``fill`` leaves at zero."""
        return [(start, start + self.dim)] if self.onehot else []

    def emit_fill(self, gen: Generator, value: str, start: int) -> None:
        name = gen.bind(self.fill)
        gen.line(f"{name}(out[{start}:{start + self.dim}], {value})")

    def emit_read(self, gen: Generator, start: int) -> str:
        name = gen.bind(self.unflatten)
        return f"{name}(v[{start}:{start + self.dim}])"

    def _require_flattenable(self, what: str) -> None:
        if not self.flattenable:
            raise ValueError(
                f"{what}: {self!r} cannot be flattened to one array (it holds a Sequence or Graph)"
            )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} dim={self.dim} dtype={self.dtype}>"


def _generator(what: Any, dtype: Any = None) -> Generator:
    gen = Generator(f"flattening {what!r}")
    gen.namespace.update(asarray=np.asarray, zeros=np.zeros, empty=np.empty, ravel=np.ravel, _dtype=dtype,
                         _MismatchError=_MismatchError)
    return gen


class _MismatchError(ValueError):
    """A value whose structure differs from the space's (raised inside generated code)."""

    def __init__(self, expected: str, value: Any) -> None:
        super().__init__(f"expected {expected}, got {value!r}")


# -- Box, MultiBinary, Interval, open-interval arrays: raveled values -----------------


class RavelCodec(FlatCodec):
    """Raveled values of one dtype: Box, MultiBinary (int8 0/1), intervals (float64)."""

    def __init__(self, shape: tuple[int, ...], dtype: Any, low: Any, high: Any, scalar: bool = False) -> None:
        self.shape = shape
        self.dim = math.prod(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.broadcast_to(np.asarray(low), shape)
        self.high = np.broadcast_to(np.asarray(high), shape)
        self.scalar = scalar  # members are Python floats (an Interval), not arrays
        self.element_shape = () if scalar else shape

    def flatten(self, x: Any) -> np.ndarray:
        if self.scalar:
            return np.array([x], self.dtype)
        return np.asarray(x, self.dtype).flatten()

    def fill(self, out: np.ndarray, x: Any) -> None:
        out[: self.dim] = np.asarray(x, self.dtype).reshape(-1)

    def unflatten(self, v: Any) -> Any:
        if self.scalar:
            return float(v[0])
        return np.asarray(v, self.dtype).reshape(self.shape)

    def batch_shape(self, xs: Any) -> tuple[int, ...]:
        shape = np.shape(xs)
        return shape[: len(shape) - len(self.element_shape)]

    def fill_batch(self, out: np.ndarray, xs: Any, n: int) -> None:
        out[:, : self.dim] = np.asarray(xs, self.dtype).reshape(n, self.dim)

    def read_batch(self, vs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return np.asarray(vs[:, : self.dim], self.dtype).reshape(shape + self.element_shape)

    def box(self) -> Box:
        return Box(self.low.reshape(-1), self.high.reshape(-1), dtype=self.dtype)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low.reshape(-1).astype(self.dtype), self.high.reshape(-1).astype(self.dtype)

    def emit_fill(self, gen: Generator, value: str, start: int) -> None:
        stop = start + self.dim
        if self.scalar:
            gen.line(f"out[{start}] = {value}")
        elif gen.namespace["_dtype"] == self.dtype:  # one cast, straight into the output
            gen.line(f"out[{start}:{stop}] = {value}" if len(self.shape) == 1 else
                     f"out[{start}:{stop}] = ravel({value})")
        else:  # first into the Box's own dtype (as Gymnasium), then promoted
            cast = f"asarray({value}, {gen.bind(self.dtype)})"
            gen.line(f"out[{start}:{stop}] = {cast}" if len(self.shape) == 1 else
                     f"out[{start}:{stop}] = {cast}.reshape(-1)")

    def emit_read(self, gen: Generator, start: int) -> str:
        if self.scalar:
            return f"float(v[{start}])"
        return f"asarray(v[{start}:{start + self.dim}], {gen.bind(self.dtype)}).reshape({self.shape!r})"


# -- Discrete and MultiDiscrete: one-hot of value - start --------------------------------


def _first_nonzero(segment: np.ndarray, what: str) -> Any:
    found = segment.nonzero()[0]
    if not len(found):
        raise ValueError(
            f"unflatten: {segment} is not a one-hot vector; it cannot be unflattened to {what}"
        )
    return found[0]


class OneHotCodec(FlatCodec):
    """One-hot of ``x - start`` for each entry of ``shape`` with ``nvec`` choices.

    ``shape == ()`` is Gymnasium's Discrete (members are numpy scalars of ``dtype``);
    otherwise MultiDiscrete (members are arrays of ``dtype``).
    """

    onehot = True

    def __init__(self, nvec: Any, start: Any, dtype: Any = np.int64) -> None:
        self.dtype = np.dtype(dtype)
        self.nvec = np.asarray(nvec, dtype=np.int64)
        self.shape = self.nvec.shape
        self.start = np.broadcast_to(np.asarray(start, dtype=self.dtype), self.shape)
        flat_nvec = self.nvec.reshape(-1)
        self.dim = int(flat_nvec.sum())
        self.offsets = np.concatenate([[0], np.cumsum(flat_nvec)[:-1]]).astype(np.int64)
        self.size = flat_nvec.size
        self.flat_start = self.start.reshape(-1).astype(np.int64)
        self.flat_nvec = flat_nvec
        self.uniform = bool(self.size and (flat_nvec == flat_nvec[0]).all())
        self.scalar_start = self.dtype.type(self.start.reshape(-1)[0]) if self.shape == () else None
        self._delta = self.offsets - self.flat_start  # position - delta = value

    def _positions(self, x: Any) -> np.ndarray:
        k = np.asarray(x).reshape(-1).astype(np.int64) - self.flat_start
        if k.shape != self.flat_nvec.shape or (k < 0).any() or (k >= self.flat_nvec).any():
            raise ValueError(f"flatten: {x!r} is not a member (one-hot over nvec={self.nvec.tolist()})")
        return self.offsets + k

    def fill(self, out: np.ndarray, x: Any) -> None:
        out[self._positions(x)] = 1

    def unflatten(self, v: Any) -> Any:
        v = np.asarray(v)
        if self.shape == ():
            return self.scalar_start + self.dtype.type(_first_nonzero(v[: self.dim], repr(self)))
        return self._read_entries(v[: self.dim])

    def batch_shape(self, xs: Any) -> tuple[int, ...]:
        shape = np.shape(xs)
        return shape[: len(shape) - len(self.shape)]

    def fill_batch(self, out: np.ndarray, xs: Any, n: int) -> None:
        k = np.asarray(xs).reshape(n, self.size).astype(np.int64) - self.flat_start
        if (k < 0).any() or (k >= self.flat_nvec).any():
            raise ValueError(f"flatten_batch: a value lies outside nvec={self.nvec.tolist()}")
        out[np.arange(n)[:, None], self.offsets + k] = 1

    def read_batch(self, vs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        n = vs.shape[0]
        hot = vs[:, : self.dim] != 0
        if self.uniform:
            per_entry = hot.reshape(n, self.size, int(self.flat_nvec[0]))
            k = per_entry.argmax(axis=2)
            ok = per_entry.any(axis=2).all()
        else:
            k = np.empty((n, self.size), dtype=np.int64)
            ok = True
            for j, (offset, width) in enumerate(zip(self.offsets, self.flat_nvec)):
                segment = hot[:, offset : offset + width]
                k[:, j] = segment.argmax(axis=1)
                ok = ok and bool(segment.any(axis=1).all())
        if not ok:
            raise ValueError("unflatten_batch: a row is not a concatenation of one-hot vectors")
        values = (k + self.flat_start).astype(self.dtype)
        return values.reshape(shape + self.shape)

    def box(self) -> Box:
        return Box(0, 1, shape=(self.dim,), dtype=self.dtype)

    _UNROLL = 16  # MultiDiscretes up to this many entries get one inlined line per entry

    def emit_fill(self, gen: Generator, value: str, start: int) -> None:
        if self.shape != () and self.size > self._UNROLL:
            return super().emit_fill(gen, value, start)
        if self.shape == ():
            entries = [value]
        else:
            gen.line(f"_m = asarray({value}).ravel().tolist()")
            entries = [f"_m[{j}]" for j in range(self.size)]
        for entry, first, count, offset in zip(entries, self.flat_start, self.flat_nvec, self.offsets):
            low, n, at = int(first), int(count), start + int(offset)
            gen.line(f"_k = {entry} - {low}" if low else f"_k = {entry}")
            message = gen.bind(f"flatten: a Discrete value must lie in {low}..{low + n - 1}, got ")
            gen.line(f"if not 0 <= _k < {n}: raise ValueError({message} + repr(_k + {low}))")
            gen.line(f"out[{at} + _k] = 1" if at else "out[_k] = 1")
        return None

    def emit_read(self, gen: Generator, start: int) -> str:
        segment = f"v[{start}:{start + self.dim}]"
        if self.shape != ():
            reader = gen.bind(self._read_entries)
            return f"{reader}({segment})"
        first = gen.bind(_first_nonzero)
        kind = gen.bind(self.dtype.type)
        return f"{gen.bind(self.scalar_start)} + {kind}({first}({segment}, 'Discrete'))"

    def _read_entries(self, segment: np.ndarray) -> np.ndarray:
        found = segment.nonzero()[0]
        if found.size != self.size:
            raise ValueError(f"unflatten: {segment} is not a concatenation of {self.size} one-hot vectors")
        return (found - self._delta).reshape(self.shape).astype(self.dtype, copy=False)

    def onehot_ranges(self, start: int) -> list[tuple[int, int]]:
        return [(start, start + self.dim)]


# -- labels (finite sets, stepped ranges): one-hot of each entry's position -----------------


class IndexCodec(OneHotCodec):
    """One-hot of each entry's position in the leaf's ``items`` (labels as Gymnasium Discretes)."""

    def __init__(self, model: LeafModel) -> None:
        super().__init__(np.full(model.shape, len(model.items or ())), 0)
        self.model = model

    def _position(self, x: Any) -> int:
        try:
            return self.model.lookup[plain(x)]
        except (KeyError, TypeError):
            raise ValueError(f"flatten: {x!r} is not one of {self.model.items!r}") from None

    def fill(self, out: np.ndarray, x: Any) -> None:
        if self.shape == ():
            return super().fill(out, self._position(x))
        return super().fill(out, [self._position(e) for e in np.asarray(x, dtype=object).reshape(-1)])

    def unflatten(self, v: Any) -> Any:
        position = super().unflatten(v)
        items = self.model.items or ()
        return items[int(position)] if self.shape == () else self.model.item_array[position]

    def batch_shape(self, xs: Any) -> tuple[int, ...]:
        return () if isinstance(xs, str) else super().batch_shape(xs)

    def fill_batch(self, out: np.ndarray, xs: Any, n: int) -> None:
        entries = np.asarray(xs, dtype=object).reshape(-1)
        super().fill_batch(out, np.array([self._position(e) for e in entries], np.int64), n)

    def read_batch(self, vs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return self.model.item_array[super().read_batch(vs, shape)]  # type: ignore[no-any-return]

    emit_fill = FlatCodec.emit_fill
    emit_read = FlatCodec.emit_read


# -- products ----------------------------------------------------------------------------


class ProductCodec(FlatCodec):
    """Tuple and Dict products: the parts concatenated in order, dtype promoted.

    The parts of nested products are inlined into one generated function, so a nested
    Dict costs what its leaves cost.
    """

    def __init__(self, keys: tuple[Any, ...], parts: tuple[FlatCodec, ...], named: bool) -> None:
        self.keys = keys
        self.parts = parts
        self.named = named
        self.flattenable = all(p.flattenable for p in parts)
        self.dim = sum(p.dim for p in parts) if self.flattenable else 0
        self.onehot = any(p.onehot for p in parts)
        self.dtype = np.result_type(*[p.dtype for p in parts]) if parts and self.flattenable else None
        self.starts = tuple(int(s) for s in np.cumsum([0] + [p.dim for p in parts])[:-1])
        if self.flattenable and parts:
            self._compile()

    def _compile(self) -> None:
        gen = _generator(self, self.dtype)
        self.emit_fill(gen, "x", 0)
        body = [line[4:] for line in gen.lines]
        self.fill = gen.function("def fill(out, x):")  # type: ignore[method-assign]
        ranges: list[tuple[int, int]] = []
        for a, b in self.onehot_ranges(0):  # one write for one-hot segments close together
            if ranges and a - ranges[-1][1] <= 64:
                ranges[-1] = (ranges[-1][0], b)
            else:
                ranges.append((a, b))
        zeroed = sum(b - a for a, b in ranges)
        if not ranges:
            allocate = [f"out = empty({self.dim}, _dtype)"]
        elif self.dim >= 512 and len(ranges) <= 8 and zeroed * 4 < self.dim:
            # a large vector of mostly raveled values: zero only the one-hot segments
            allocate = [f"out = empty({self.dim}, _dtype)"] + [f"out[{a}:{b}] = 0" for a, b in ranges]
        else:
            allocate = [f"out = zeros({self.dim}, _dtype)"]
        self.flatten = gen.function("def flatten(x):", [*allocate, *body, "return out"])  # type: ignore[method-assign]
        reader = _generator(self, self.dtype)
        expression = self.emit_read(reader, 0)
        self.unflatten = reader.function("def unflatten(v):", [f"return {expression}"])  # type: ignore[method-assign]

    # structural forms for products holding Sequences/Graphs (Gymnasium's tuple/dict)
    def flatten(self, x: Any) -> Any:  # type: ignore[override]
        if not self.parts:
            raise ValueError("flatten: an empty product has no flat dtype (as in Gymnasium)")
        if len(x) != len(self.parts):
            raise _MismatchError(f"{len(self.parts)} parts", x)
        parts = [p.flatten(x[k]) for k, p in zip(self.keys, self.parts)]
        return dict(zip(self.keys, parts)) if self.named else tuple(parts)

    def unflatten(self, v: Any) -> Any:
        if not self.parts:
            raise ValueError("unflatten: an empty product has no flat dtype (as in Gymnasium)")
        parts = [p.unflatten(v[k]) for k, p in zip(self.keys, self.parts)]
        return dict(zip(self.keys, parts)) if self.named else tuple(parts)

    def onehot_ranges(self, start: int) -> list[tuple[int, int]]:
        ranges: list[tuple[int, int]] = []
        for part, offset in zip(self.parts, self.starts):
            for a, b in part.onehot_ranges(start + offset):
                if ranges and ranges[-1][1] == a:
                    ranges[-1] = (ranges[-1][0], b)
                else:
                    ranges.append((a, b))
        return ranges

    def emit_fill(self, gen: Generator, value: str, start: int) -> None:
        n = len(self.parts)  # a value with other parts is no member: never a silent partial read
        message = gen.bind(f"a {'dict with keys ' + repr(list(self.keys)) if self.named else f'tuple of {n}'}")
        gen.line(f"if len({value}) != {n}: raise _MismatchError({message}, {value})")
        for key, part, offset in zip(self.keys, self.parts, self.starts):
            part.emit_fill(gen, f"{value}[{gen.key(key)}]", start + offset)

    def emit_read(self, gen: Generator, start: int) -> str:
        items = [part.emit_read(gen, start + offset) for part, offset in zip(self.parts, self.starts)]
        if self.named:
            return "{" + ", ".join(f"{gen.key(k)}: {e}" for k, e in zip(self.keys, items)) + "}"
        return "(" + "".join(f"{e}, " for e in items) + ")"

    def batch_shape(self, xs: Any) -> tuple[int, ...]:
        if not self.parts:
            raise ValueError("flatten_batch: an empty product has no batch shape")
        return self.parts[0].batch_shape(xs[self.keys[0]])

    def fill_batch(self, out: np.ndarray, xs: Any, n: int) -> None:
        for key, part, offset in zip(self.keys, self.parts, self.starts):
            part.fill_batch(out[:, offset : offset + part.dim], xs[key], n)

    def read_batch(self, vs: np.ndarray, shape: tuple[int, ...]) -> Any:
        parts = [p.read_batch(vs[:, s : s + p.dim], shape) for p, s in zip(self.parts, self.starts)]
        return dict(zip(self.keys, parts)) if self.named else tuple(parts)

    def box(self) -> Any:
        if not self.flattenable:
            boxes = [p.box() for p in self.parts]
            return DictProduct(list(zip(self.keys, boxes))) if self.named else TupleProduct(*boxes)
        if not self.parts:
            raise ValueError("flattened_box: an empty product has no flat dtype (as in Gymnasium)")
        pairs = [p.bounds() for p in self.parts]
        low = np.concatenate([lo for lo, _ in pairs])
        high = np.concatenate([hi for _, hi in pairs])
        return Box(low, high, dtype=self.dtype)


# -- OneOf ------------------------------------------------------------------------------------


class OneOfCodec(FlatCodec):
    """``[i, *flatten(v)]`` padded to ``1 + max(dims)`` with its first entry (Gymnasium).

    The dtype promotes the branches' flat dtypes and is widened until it holds the
    largest branch index.
    """

    def __init__(self, parts: tuple[FlatCodec, ...]) -> None:
        self.parts = parts
        self.flattenable = all(p.flattenable for p in parts)
        if not self.flattenable:
            self.dim, self.dtype = 0, None
            return
        self.dim = 1 + max(p.dim for p in parts)
        dtype = np.result_type(*[p.dtype for p in parts])
        last = len(parts) - 1
        if (dtype.kind == "b" and last > 1) or (dtype.kind in "iu" and last > np.iinfo(dtype).max):
            dtype = np.result_type(dtype, np.min_scalar_type(last))
        self.dtype = dtype
        sized = [p for p in parts if p.dim]
        self._lows = np.array([np.min(p.bounds()[0]) for p in sized]) if sized else np.zeros(1)
        self._highs = np.array([np.max(p.bounds()[1]) for p in sized]) if sized else np.zeros(1)
        self._padding = np.min(self._lows)

    def flatten(self, x: Any) -> np.ndarray:
        self._require_flattenable("flatten")
        i, value = x
        flat = np.asarray(self.parts[i].flatten(value))
        out = np.empty(self.dim, self.dtype)
        out[0] = i
        out[1 : 1 + flat.size] = flat
        if flat.size < self.dim - 1:  # Gymnasium pads with the first entry (fails when there is none)
            out[1 + flat.size :] = flat[0] if flat.size else self._padding
        return out

    def fill(self, out: np.ndarray, x: Any) -> None:
        out[: self.dim] = self.flatten(x)

    def unflatten(self, v: Any) -> Any:
        self._require_flattenable("unflatten")
        i = np.int64(v[0])
        part = self.parts[i]
        return i, part.unflatten(np.asarray(v[1 : 1 + part.dim]).astype(part.dtype))

    def batch_shape(self, xs: Any) -> tuple[int, ...]:
        return np.shape(_object_array(xs))

    def fill_batch(self, out: np.ndarray, xs: Any, n: int) -> None:
        for row, x in zip(out, _object_array(xs).reshape(n)):
            row[:] = self.flatten(x)

    def read_batch(self, vs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        result = np.empty(vs.shape[0], dtype=object)
        for j, row in enumerate(vs):
            result[j] = self.unflatten(row[: self.dim])
        return result.reshape(shape)

    def box(self) -> Box:
        self._require_flattenable("flattened_box")
        low = np.concatenate([[0], np.full(self.dim - 1, np.min(self._lows))])
        high = np.concatenate([[len(self.parts) - 1], np.full(self.dim - 1, np.max(self._highs))])
        return Box(low, high, shape=(self.dim,), dtype=self.dtype)


# -- Text: character indices, padded ------------------------------------------------------


class TextCodec(FlatCodec):
    """``max_length`` int32 character indices (charset order), padded with ``len(charset)``."""

    dtype = np.dtype(np.int32)

    def __init__(self, space: Text) -> None:
        self.charset = space.charset
        self.dim = space.max_length
        self.pad = len(space.charset)
        self.positions = {c: i for i, c in enumerate(space.charset)}

    def _codes(self, x: str) -> list[int]:
        try:
            return [self.positions[c] for c in x]
        except (KeyError, TypeError):
            raise ValueError(f"flatten: {x!r} is not a string over {self.charset!r}") from None

    def fill(self, out: np.ndarray, x: Any) -> None:
        codes = self._codes(x)
        if len(codes) > self.dim:
            raise ValueError(f"flatten: {x!r} is longer than max_length={self.dim}")
        out[: len(codes)] = codes
        out[len(codes) : self.dim] = self.pad

    def unflatten(self, v: Any) -> str:
        return "".join(self.charset[int(c)] for c in np.asarray(v[: self.dim]) if c < self.pad)

    def batch_shape(self, xs: Any) -> tuple[int, ...]:
        return (len(xs),) if isinstance(xs, (tuple, list)) else np.shape(xs)

    def fill_batch(self, out: np.ndarray, xs: Any, n: int) -> None:
        for row, x in zip(out, np.asarray(xs, dtype=object).reshape(n)):
            self.fill(row, str(x))

    def read_batch(self, vs: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return np.array([self.unflatten(row) for row in vs], dtype=str).reshape(shape)

    def box(self) -> Box:
        return Box(0, self.pad, shape=(self.dim,), dtype=np.int32)


# -- Sequence and Graph: flattened parts, not one vector --------------------------------------


def _flatten_stacked(codec: FlatCodec, x: Any) -> Any:
    """The stacked form of members, flattened: a ``(length, dim)`` array (a tuple of the
    members' flattenings when they do not flatten to arrays), as Gymnasium's Sequence/Graph."""
    if codec.flattenable:
        return codec.flatten_batch(x)
    return tuple(codec.flatten(item) for item in x)


def _unflatten_stacked(codec: FlatCodec, v: Any) -> Any:
    if codec.flattenable:
        v = np.asarray(v)
        length = v.size // codec.dim if codec.dim else len(v)
        return stacked(codec.unflatten_batch(v.reshape(length, codec.dim)))
    return tuple(codec.unflatten(item) for item in v)


class SequenceCodec(FlatCodec):
    """A tuple of flattened members, or (``stack``) the ``(length, flatdim)`` array."""

    flattenable = False
    dim = 0
    dtype = None  # type: ignore[assignment]

    def __init__(self, space: Sequence, feature: FlatCodec) -> None:
        self.space = space
        self.feature = feature

    def flatten(self, x: Any) -> Any:
        if self.space.stack:
            return _flatten_stacked(self.feature, x)
        return tuple(self.feature.flatten(item) for item in x)

    def unflatten(self, v: Any) -> Any:
        if self.space.stack:
            return _unflatten_stacked(self.feature, v)
        return tuple(self.feature.unflatten(item) for item in v)

    def box(self) -> Sequence:
        return Sequence(self.feature.box(), stack=self.space.stack)


class GraphCodec(FlatCodec):
    """``GraphInstance`` of the flattened node (and edge) features; links unchanged."""

    flattenable = False
    dim = 0
    dtype = None  # type: ignore[assignment]

    def __init__(self, node: FlatCodec, edge: FlatCodec | None) -> None:
        self.node = node
        self.edge = edge

    def flatten(self, x: Any) -> GraphInstance:
        edges = None if x.edges is None or self.edge is None else _flatten_stacked(self.edge, x.edges)
        return GraphInstance(_flatten_stacked(self.node, x.nodes), edges, x.edge_links)

    def unflatten(self, v: Any) -> GraphInstance:
        edges = None
        if v.edges is not None and self.edge is not None:
            edges = _unflatten_stacked(self.edge, v.edges)
        return GraphInstance(_unflatten_stacked(self.node, v.nodes), edges, v.edge_links)

    def box(self) -> Graph:
        return Graph(self.node.box(), None if self.edge is None else self.edge.box())


def _object_array(xs: Any) -> np.ndarray:
    if isinstance(xs, np.ndarray) and xs.dtype.kind == "O":
        return xs
    items = list(xs)
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item
    return array


# =====================================================================================
# the rule table: flat_codec, one registration per kind
# =====================================================================================


@generic(0)
def flat_codec(space: Any) -> FlatCodec:
    """The compiled one-hot flattening of ``space`` (cached by identity; see the module table).

    Register ``flat_codec.register(MyKind)`` returning a :class:`FlatCodec` to make a new
    kind of space flattenable. Raises TypeError for a space with no rule.
    """
    model = leaf(space)
    if model is None:
        return coerce(flat_codec, (space,), {})  # type: ignore[no-any-return]
    return leaf_codec(model)


def leaf_codec(model: LeafModel) -> FlatCodec:
    """The codec of a leaf (:mod:`spacealg.core.leaf`): one-hot for Discrete/MultiDiscrete
    images (of positions for labels), raveled values for Box, MultiBinary and intervals."""
    if model.items is not None:
        return IndexCodec(model)
    if model.image in ("Discrete", "MultiDiscrete"):
        low = np.asarray(model.low, dtype=object)
        nvec = np.broadcast_to(np.asarray(model.high, dtype=object) - low + 1, model.shape)
        return OneHotCodec(nvec, model.low, model.dtype)
    shape = (1,) if model.scalar else model.shape
    return RavelCodec(shape, model.dtype, model.low, model.high, scalar=model.scalar)


@flat_codec.register(TupleProduct)
def _tuple_codec(space: TupleProduct) -> FlatCodec:
    n = len(space.spaces)
    return ProductCodec(tuple(range(n)), tuple(_codec(space[i]) for i in range(n)), named=False)


@flat_codec.register(DictProduct)
def _dict_codec(space: DictProduct) -> FlatCodec:
    parts = space.spaces
    return ProductCodec(tuple(parts), tuple(_codec(p) for p in parts.values()), named=True)


@flat_codec.register(Text)
def _text_codec(space: Text) -> FlatCodec:
    return TextCodec(space)


@flat_codec.register(Sequence)
def _sequence_codec(space: Sequence) -> FlatCodec:
    return SequenceCodec(space, _codec(space._space))


@flat_codec.register(Graph)
def _graph_codec(space: Graph) -> FlatCodec:
    return GraphCodec(_codec(space._node), None if space._edge is None else _codec(space._edge))


@flat_codec.register(OneOf)
def _oneof_codec(space: OneOf) -> FlatCodec:
    return OneOfCodec(tuple(_codec(space[i]) for i in range(len(space.spaces))))


# =====================================================================================
# the public functions: a cached codec, then its method
# =====================================================================================

_CODECS: IdentityCache[FlatCodec] = IdentityCache("flat codecs")
_lookup = _CODECS.get
_ndarray = np.ndarray


def _codec(space: Any) -> FlatCodec:
    """The codec of ``space``, kept under :mod:`spacealg.core.cache`'s rule."""
    codec = _CODECS.get(space)
    if codec is None:
        codec = flat_codec(space)
        codec.flat_shape = (codec.dim,)
        _CODECS.put(space, codec)
    return codec


def _is_foreign_space(space: Any) -> bool:
    return native_kind(space) is not None


def flatdim(space: Any) -> int:
    """The length of flattened members (``gymnasium.spaces.utils.flatdim``).

    Raises ValueError for spaces holding a Sequence or Graph (their flattenings vary in size).
    """
    codec = _codec_of(space, "flatdim")
    codec._require_flattenable("flatdim")
    return codec.dim


_BAD_VALUE = (KeyError, IndexError, AttributeError, TypeError, ValueError)


def _codec_of(space: Any, function: str, value: Any = None, has_value: bool = False) -> FlatCodec:
    """The codec of ``space``; a TypeError naming ``space`` (and saying so when the value and
    the space look swapped, as in Gymnasium's ``flatten(space, x)`` order) if it is none."""
    try:
        return _codec(space)
    except TypeError as error:
        if has_value and _looks_like_space(value):
            raise TypeError(
                f"{function}: the arguments look swapped: spacealg's {function} takes the value "
                f"first and the space second ({function}(x, space)), where Gymnasium's utils take "
                f"the space first; got x={value!r}, space={space!r}"
            ) from None
        raise TypeError(f"{function}: space={space!r} is not a flattenable space ({error})") from None


def _looks_like_space(x: Any) -> bool:
    return isinstance(x, (Space, range)) or _is_foreign_space(x)


def _bad(function: str, argument: str, value: Any, space: Any, error: Exception) -> ValueError:
    detail = str(error) if isinstance(error, ValueError) else f"{type(error).__name__}: {error}"
    return ValueError(f"{function}: {argument}={value!r} is not valid for space={space!r} ({detail})")


def flatten(x: Any, space: Any) -> Any:
    """``x`` as a flat vector (``gymnasium.spaces.utils.flatten(space, x)``; note the order).

    Law: ``unflatten(flatten(x, s), s) == x`` and ``flatten(x, s) in flattened_box(s)``.
    A value that is not shaped like a member (missing or extra parts, wrong keys, a label
    not in the space) raises ValueError naming ``x`` and the space; swapped arguments a
    TypeError that says so.
    """
    codec = _lookup(space) or _codec_of(space, "flatten", x, True)
    try:
        return codec.flatten(x)
    except _BAD_VALUE as error:
        raise _bad("flatten", "x", x, space, error) from None


def unflatten(v: Any, space: Any) -> Any:
    """The member whose flattening is ``v`` (``gymnasium.spaces.utils.unflatten(space, v)``).

    Raises ValueError naming ``v`` where it is not a flat vector of ``flatdim(space)``
    entries, or a one-hot segment has no nonzero entry.
    """
    codec = _lookup(space) or _codec_of(space, "unflatten", v, True)
    if codec.flattenable and (v.shape if type(v) is _ndarray else np.shape(v)) != codec.flat_shape:
        raise ValueError(f"unflatten: v must be a vector of flatdim={codec.dim} entries for "
                         f"space={space!r}; got {v!r}")
    try:
        return codec.unflatten(v)
    except _BAD_VALUE as error:
        raise _bad("unflatten", "v", v, space, error) from None


def flatten_batch(xs: Any, space: Any) -> np.ndarray:
    """A batch of members flattened at once: an array ``(*batch, flatdim(space))``.

    Law: ``flatten_batch(xs, s)[i] == flatten(xs_i, s)`` for every member ``xs_i``.
    """
    codec = _lookup(space) or _codec_of(space, "flatten_batch", xs, True)
    try:
        return codec.flatten_batch(xs)
    except _BAD_VALUE as error:
        raise _bad("flatten_batch", "xs", xs, space, error) from None


def unflatten_batch(vs: Any, space: Any) -> Any:
    """The batch whose flattenings are the rows of ``vs`` (``(*batch, flatdim)``).

    Law: ``unflatten_batch(flatten_batch(xs, s), s) == xs``.
    """
    codec = _lookup(space) or _codec_of(space, "unflatten_batch", vs, True)
    try:
        return codec.unflatten_batch(vs)
    except _BAD_VALUE as error:
        raise _bad("unflatten_batch", "vs", vs, space, error) from None


def flattened_box(space: Any) -> Any:
    """Gymnasium's ``flatten_space``: the Box that :func:`flatten` maps members into.

    A spacealg space gives a spacealg ``Box``; a Gymnasium space gives a Gymnasium space
    equal to ``gymnasium.spaces.utils.flatten_space(space)`` (a Sequence, Graph, Tuple or
    Dict of flattened parts where the space holds a Sequence or Graph).
    Law: ``flatten(x, s) in flattened_box(s)`` for every member ``x``.
    """
    box = _codec(space).box()
    if _is_foreign_space(space):
        from spacealg.adapters.gymnasium import to_gymnasium

        return to_gymnasium(box)
    return box
