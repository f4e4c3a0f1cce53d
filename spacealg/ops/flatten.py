"""Flattening: Gymnasium's one-hot vectors, precompiled.

>>> import numpy as np
>>> from spacealg import Box, DictProduct
>>> from spacealg.ops import flatdim, flatten, unflatten, flattened_box
>>> s = DictProduct(pos=Box(-1.0, 1.0, shape=(2,)), dir=range(4))
>>> flatdim(s), flatten({"pos": np.zeros(2, np.float32), "dir": 2}, s)
(6, array([0., 0., 0., 0., 1., 0.]))
>>> unflatten(flatten({"pos": np.ones(2), "dir": 3}, s), s)["dir"]
np.int64(3)

:func:`flattened_box` is Gymnasium's ``flatten_space`` (the Box that :func:`flatten` maps into); spacealg's
``flatten_space`` is PufferLib's leaf list (:mod:`spacealg.ops.leaves`). The value comes first: ``flatten(x, s)``.

:func:`flatdim`, :func:`flatten`, :func:`unflatten` and :func:`flattened_box` equal
``gymnasium.spaces.utils``'s, value for value and dtype for dtype, on every Gymnasium
space, and on a spacealg space they are Gymnasium's rules applied to its Gymnasium image.
A leaf flattens by its leaf model (:mod:`spacealg.core.leaf`), another kind by the codec
class registered for it with :func:`flat_codec`:

===============================  =========  ==============================================
space (its leaf model's image)   flat dtype flat vector of a member ``x``
===============================  =========  ==============================================
Box, MultiBinary (``bool``),     its dtype  ``x`` raveled (C order)
Interval, open-interval arrays
Discrete, MultiDiscrete          its dtype  one-hot of each entry's ``x - low``, concatenated
labels (finite sets, stepped     int64      one-hot of each entry's position in the labels
ranges, arrays of them)
``TupleProduct``/``DictProduct`` promoted   the parts, concatenated (tuple/dict of parts
                                            when a part is a Sequence or Graph)
``OneOf``                        promoted   ``[i, *flatten(v)]`` padded with its first entry
``Text``                         int32      character indices, padded with ``len(charset)``
``Sequence``/``Graph``           (none)     the stacked members' flattenings, not one vector
``Dynamic``                      (none)     ValueError: any length along an axis, no fixed width
a kind with an image            the        the image's flattening of the encoded member
(:mod:`spacealg.core.image`)    image's    (a one-hot vector: itself, as its position's)
===============================  =========  ==============================================

The batched forms :func:`flatten_batch`/:func:`unflatten_batch` take and give spacealg's
batches (arrays ``(*batch, *elsize)``, tuples/dicts of component batches, object arrays for
OneOf) and ``(*batch, flatdim)`` arrays, vectorised per leaf (torch/JAX: :mod:`spacealg.backends`).

Speed: a space compiles once (a variant of its plan, :mod:`spacealg.core.plan`) into straight-line
code with offsets and checks inlined; ``codec = flat_codec(space)`` skips even the cache lookup.

Laws (tests/test_flatten.py): ``unflatten(flatten(x, s), s) == x``; ``flatten(x, s) in flattened_box(s)``;
``flatdim(s) == flatten(x, s).size``; ``flatten_batch``/``unflatten_batch`` equal the loop of the single
forms; on Gymnasium spaces every function equals ``gymnasium.spaces.utils``'s, dtype included. A
value that is no member raises ValueError naming the argument and the space.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import weakref
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import numpy as np

from spacealg.adapters.gymnasium import to_gymnasium
from spacealg.adapters.native import gym_class_of
from spacealg.core.arrays import backend_name, register_backend
from spacealg.core.codegen import Generator
from spacealg.core.flat import Layout, OneHotSegment, Part, RavelSegment, flattener, one_hot, unflattener
from spacealg.core.generic import coerce, generic
from spacealg.core.image import Image, image_of
from spacealg.core.kernel import NUMPY
from spacealg.core.leaf import leaf, plain
from spacealg.core.plan import kept_plan, route, variant_of
from spacealg.core.space import Space
from spacealg.spaces.box import Box
from spacealg.spaces.dynamic import Dynamic, no_fixed_width
from spacealg.spaces.graph import Graph, GraphInstance
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import Sequence, stacked
from spacealg.spaces.text import Text

__all__ = ["FlatCodec", "flat_codec", "flatdim", "flatten", "flatten_batch", "flattened_box", "unflatten",
           "unflatten_batch"]


# -- the compiled codec, one subclass per rule of the table -----------------------------------


class FlatCodec:
    """The one-hot flattening of one space, compiled: ``dim``, ``dtype`` and the maps.

    ``flatten(x)`` is a fresh ``(dim,)`` array of ``dtype``; ``unflatten(v)`` the member
    (arrays may be views of ``v``, as in Gymnasium); ``flatten_batch(xs)`` a
    ``(*batch, dim)`` array and ``unflatten_batch(vs)`` the batch, by the one flatten driver
    over the codec's :attr:`layout` (:mod:`spacealg.core.flat`); ``box()`` the flattened
    space. ``flatten``/``unflatten`` are generated on first use from :meth:`emit_fill` and
    :meth:`emit_read` (by default, calls of ``write``/``read``). Where ``dtype`` is None
    (no flat array) they are ``flatten_parts``/``unflatten_parts``: Gymnasium's structural
    forms where a Sequence or Graph is inside, else a ValueError.
    """

    dim: int = 0
    dtype: Any = None  # a numpy dtype; None where the space does not flatten to one array
    flattenable: bool = True  # False where a Sequence or Graph is inside
    onehot: bool = False  # whether the flat vector holds one-hot segments (written on zeros)
    # what a subclass provides: write/read (or emit_fill/emit_read, and then its layout)
    write: Callable[[np.ndarray, Any], None]  # member -> out, a (dim,) array
    read: Callable[[np.ndarray], Any]  # a (dim,) array -> member
    bounds: Callable[[], tuple[np.ndarray, np.ndarray]]  # the flattened Box's low and high

    @functools.cached_property
    def flatten(self) -> Callable[[Any], Any]:
        """``x`` -> its flat vector: generated code, zeroing only what one-hot parts need."""
        if self.dtype is None:
            return self.flatten_parts
        gen = self._generator()
        ranges: list[tuple[int, int]] = []
        for a, b in self.onehot_ranges(0):  # one write for one-hot segments close together
            if ranges and a - ranges[-1][1] <= 64:
                ranges[-1] = (ranges[-1][0], b)
            else:
                ranges.append((a, b))
        if ranges and not (self.dim >= 512 and len(ranges) <= 8 and 4 * sum(b - a for a, b in ranges) < self.dim):
            gen.line(f"out = zeros({self.dim})" if self.dtype == np.float64 else f"out = zeros({self.dim}, _dtype)")
        else:  # no one-hot part, or a large vector of mostly raveled values: zero only those
            gen.line(f"out = empty({self.dim}, _dtype)")
            for a, b in ranges:
                gen.line(f"out[{a}:{b}] = 0")
        self.emit_fill(gen, "x", 0)
        gen.line("return out")
        return gen.function("def flatten(x):")

    @functools.cached_property
    def unflatten(self) -> Callable[[Any], Any]:
        """The flat vector ``v`` (``dim`` numbers) -> its member: generated code."""
        if self.dtype is None:
            return self.unflatten_parts
        gen = self._generator()
        message = gen.bind(f"expected a flat vector of shape ({self.dim},), got shape ")
        gen.line("v = asarray(v)")  # a list or tuple of numbers reads as its array
        gen.line(f"if v.shape != ({self.dim},): raise ValueError({message} + repr(v.shape))")
        gen.line(f"return {self.emit_read(gen, 0)}")
        return gen.function("def unflatten(v):")

    def _generator(self) -> Generator:
        gen = Generator(f"flattening {self!r}")
        gen.namespace.update(asarray=np.asarray, zeros=np.zeros, empty=np.empty, _dtype=self.dtype,
                             _plain=plain)
        return gen

    # -- code generation hooks (products inline their parts) --------------------------
    def onehot_ranges(self, start: int) -> list[tuple[int, int]]:
        """The ranges of a flat vector (this space at ``start``) that ``fill`` leaves at zero."""
        return [(start, start + self.dim)] if self.onehot else []

    def emit_fill(self, gen: Generator, value: str, start: int) -> None:
        """Lines writing the member ``value`` into ``out[start:start + dim]``."""
        gen.line(f"{gen.bind(self.write)}(out[{start}:{start + self.dim}], {value})")

    def emit_read(self, gen: Generator, start: int) -> str:
        """An expression reading the member from ``v[start:start + dim]``."""
        return f"{gen.bind(self.read)}(v[{start}:{start + self.dim}])"

    # -- no flat array --------------------------------------------------------------------
    def flatten_parts(self, x: Any) -> Any:
        raise self._no_array("flatten")

    def unflatten_parts(self, v: Any) -> Any:
        raise self._no_array("unflatten")

    def _no_array(self, what: str) -> ValueError:
        why = "it holds a Sequence or Graph" if not self.flattenable else "an empty product has no flat dtype"
        return ValueError(f"{what}: {self!r} cannot be flattened to one array ({why}, as in Gymnasium)")

    # -- batches: the one driver over the layout ---------------------------------------------
    @functools.cached_property
    def layout(self) -> Layout:
        """The pieces of the flat vector (:mod:`spacealg.core.flat`): here one part, flattened
        member by member (a kind with no batch rule: OneOf, Text)."""
        return Layout([Part(self, self.dim, self.dtype, self.flatten_each, self.unflatten_each)], self.dtype)

    def split(self, xs: Any, parts: list[Any]) -> None:
        """Appends the batches of the layout's pieces in ``xs`` to ``parts`` (a product's: its parts')."""
        parts.append(xs)

    def joined(self, values: Any) -> Any:
        """The batch of the pieces' batches ``values`` (an iterator), the inverse of :meth:`split`."""
        return next(values)

    def flatten_batch(self, xs: Any) -> np.ndarray:
        if self.dtype is None:
            raise self._no_array("flatten_batch")
        parts: list[Any] = []
        self.split(xs, parts)
        return self._flattener(parts)[0]  # type: ignore[no-any-return]

    def unflatten_batch(self, vs: Any) -> Any:
        if self.dtype is None:
            raise self._no_array("unflatten_batch")
        vs = np.asarray(vs)
        if vs.ndim < 1 or vs.shape[-1] != self.dim:
            raise ValueError(f"expected an array (*batch, {self.dim}), got shape {vs.shape}")
        return self.joined(iter(self._unflattener(vs)[0]))

    @functools.cached_property
    def _flattener(self) -> Callable[[Any], Any]:
        """The flatten driver's program for the layout on NumPy (:func:`~spacealg.core.flat.flattener`)."""
        return flattener(NUMPY, self.layout, self.dtype)

    @functools.cached_property
    def _unflattener(self) -> Callable[[Any], Any]:
        return unflattener(NUMPY, self.layout)

    def flatten_each(self, xs: Any) -> np.ndarray:
        """The ``(*batch, dim)`` rows of a batch (an object array or a list), a loop of ``write``."""
        members = _object_array(xs)
        out = np.empty((members.size, self.dim), self.dtype)
        for row, x in zip(out, members.reshape(-1)):
            self.write(row, x)
        return out.reshape((*members.shape, self.dim))

    def unflatten_each(self, vs: np.ndarray) -> Any:
        """The batch (an object array) of the ``(*batch, dim)`` rows ``vs``: a loop of ``read``."""
        return _object_array([self.read(row) for row in _rows_of(vs)]).reshape(vs.shape[:-1])

    def box(self) -> Any:
        if self.dtype is None:
            raise self._no_array("flattened_box")
        return Box(*self.bounds(), dtype=self.dtype)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} dim={self.dim} dtype={self.dtype}>"


# -- the rule table: a leaf by its leaf model, another kind by the codec class registered for it


@generic(0)
def flat_codec(space: Any) -> FlatCodec:
    """The compiled one-hot flattening of ``space``, a new one each call (see the module table):
    of a leaf, one-hot for Discrete/MultiDiscrete images and labels, else raveled values.
    ``flat_codec.register(MyKind)`` a :class:`FlatCodec` class or function to flatten a kind
    of your own. Raises TypeError for a space with no rule."""
    model = leaf(space)
    if model is None:
        image = image_of(space)
        if image is not None:
            return ImageCodec(image)
        return coerce(flat_codec, (space,), {})  # type: ignore[no-any-return]
    model = _unpinned(model)
    return OneHotCodec(model) if one_hot(model) else RavelCodec(model)


class _Shown:
    """A space named in a codec's error messages, held weakly where it can be: a codec is kept
    in its space's plan, which the space must not be kept alive by
    (tests/test_leaf.py::test_caches_do_not_pin_large_spaces)."""

    def __init__(self, space: Any) -> None:
        try:
            self._space: Callable[[], Any] = weakref.ref(space)
        except TypeError:  # a range, a tuple: held as it is (the plan cache holds them so too)
            self._space = lambda: space

    def __repr__(self) -> str:
        return repr(self._space())


def _unpinned(model: Any) -> Any:
    """``model`` naming its space weakly (:class:`_Shown`), for a codec kept in the space's plan."""
    return dataclasses.replace(model, space=_Shown(model.space), cache={})


# -- leaves: raveled values, or one-hot (of values or of label positions); their batch rules are
# the segments' (:mod:`spacealg.core.flat`), written once over an array kernel for every backend


class RavelCodec(RavelSegment, FlatCodec):
    """Raveled values in the leaf's dtype: Box, MultiBinary (int8 0/1), intervals (float64);
    the segment's batch rule (:mod:`spacealg.core.flat`) with NumPy's generated code."""

    def emit_fill(self, gen: Generator, value: str, start: int) -> None:
        if self.scalar:
            return gen.line(f"out[{start}] = {value}")
        cast = "" if gen.namespace["_dtype"] == self.dtype else f", {gen.bind(self.dtype)}"  # own dtype first
        raveled = f"asarray({value}{cast})" + ("" if len(self.shape) == 1 else ".reshape(-1)")  # (as Gymnasium)
        gen.line(f"out[{start}:{start + self.dim}] = " + (value if len(self.shape) == 1 and not cast else raveled))

    def emit_read(self, gen: Generator, start: int) -> str:
        if self.scalar:
            return f"float(v[{start}])"
        read = f"asarray(v[{start}:{start + self.dim}], {gen.bind(self.dtype)})"
        return read if len(self.shape) == 1 else f"{read}.reshape({self.shape!r})"

    @functools.cached_property
    def layout(self) -> Layout:
        return Layout([self], self.dtype)


class OneHotCodec(OneHotSegment, FlatCodec):
    """One-hot of each entry's ``x - low`` or label position (the segment's batch rules,
    :mod:`spacealg.core.flat`, with NumPy's generated code). Members of a scalar leaf are
    numpy scalars of ``dtype`` (a label for labels); of an array leaf, arrays of ``shape``."""

    _UNROLL = 16  # MultiDiscretes up to this many entries get one inlined line per entry

    def _position(self, x: Any) -> int:
        try:
            return self.model.lookup[plain(x)]
        except (KeyError, TypeError):
            raise ValueError(f"{x!r} is not one of {self.model.items!r}") from None

    def _hot(self, x: Any) -> np.ndarray:
        """The flat segment of the member ``x`` (a large leaf's), by the driver's program for one row."""
        return self._flattener([np.asarray(x, dtype=object if self.model.items is not None else None)[None]])[0][0]

    def _read(self, segment: np.ndarray) -> np.ndarray:
        found = segment.nonzero()[0]
        if found.size != self.size:
            raise ValueError(f"{segment} is not a concatenation of {self.size} one-hot vectors")
        values = (found - self.offsets + self.low).reshape(self.shape)
        return self.model.item_array[values] if self.model.items is not None else values.astype(self.dtype, copy=False)

    def emit_fill(self, gen: Generator, value: str, start: int) -> None:
        if self.size > self._UNROLL or self.dim > 1024:  # vectorised
            return gen.line(f"out[{start}:{start + self.dim}] = {gen.bind(self._hot)}({value})")
        labels, entries = self.model.items is not None, [value]
        if self.shape != ():
            gen.line(f"_m = asarray({value}{', object' if labels else ''}).ravel().tolist()")
            message = gen.bind(f"expected {self.size} entries, got ")
            gen.line(f"if len(_m) != {self.size}: raise ValueError({message} + repr(len(_m)))")
            entries = [f"_m[{j}]" for j in range(self.size)]
        for entry, first, count, offset in zip(entries, self.low, self.nvec, self.offsets):
            low, n, at = int(first), int(count), start + int(offset)
            if labels:  # positions, found (or refused) by the leaf model's lookup
                gen.line(f"out[{at} + {gen.bind(self._position)}({entry})] = 1")
                continue
            slots = gen.bind({low + k: at + k for k in range(n)})  # value -> its entry (a bool: its int's)
            message = gen.bind(f"a Discrete value must lie in {low}..{low + n - 1}, got ")
            if self.shape == ():  # a 0-d array (unhashable) is looked up as its value
                gen.line(f"try: _k = {slots}.get({entry})")
                gen.line(f"except TypeError: _k = {slots}.get(_plain({entry}))")
            else:
                gen.line(f"_k = {slots}.get({entry})")
            gen.line(f"if _k is None: raise ValueError({message} + repr({entry}))")
            gen.line("out[_k] = 1")

    def emit_read(self, gen: Generator, start: int) -> str:
        segment = f"v[{start}:{start + self.dim}]"
        if self.shape != ():
            return f"{gen.bind(self._read)}({segment})"
        gen.line(f"_f{start} = {segment}.nonzero()[0]")  # the first nonzero entry, as Gymnasium
        message = gen.bind(f"{segment} is not a one-hot vector: ")
        gen.line(f"if not len(_f{start}): raise ValueError({message} + repr({segment}))")
        if self.model.items is not None:
            return f"{gen.bind(self.model.items)}[_f{start}[0]]"
        return f"{gen.bind(self.dtype.type(self.low[0]))} + {gen.bind(self.dtype.type)}(_f{start}[0])"

    @functools.cached_property
    def layout(self) -> Layout:
        return Layout([self], self.dtype)


class ImageCodec(FlatCodec):
    """A kind with an image (:mod:`spacealg.core.image`): the image's codec, applied to the
    encoded member (and the decoded one on the way back)."""

    def __init__(self, image: Image) -> None:
        self.image, self.inner = image, flat_codec(image.space)
        self.dim, self.dtype, self.onehot = self.inner.dim, self.inner.dtype, self.inner.onehot
        self.flattenable = self.inner.flattenable

    def write(self, out: np.ndarray, x: Any) -> None:
        out[...] = self.inner.flatten(self.image.encode(x))

    def read(self, v: np.ndarray) -> Any:
        return self.image.decode(self.inner.unflatten(v))

    def flatten_each(self, xs: Any) -> np.ndarray:
        return self.inner.flatten_batch(self.image.encode(xs))

    def unflatten_each(self, vs: np.ndarray) -> Any:
        return self.image.decode(self.inner.unflatten_batch(vs))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.inner.bounds()


# -- products ----------------------------------------------------------------------------


@flat_codec.register(TupleProduct)
@flat_codec.register(DictProduct)
class ProductCodec(FlatCodec):
    """Tuple and Dict products: the parts concatenated in order, dtype promoted (a tuple or
    dict of the parts' flattenings where a part holds a Sequence or Graph, as Gymnasium).
    The parts are inlined into one generated function: a nested Dict costs what its leaves cost.
    """

    def __init__(self, space: TupleProduct | DictProduct) -> None:
        self.named = named = isinstance(space, DictProduct)
        self.keys = keys = tuple(space.spaces) if named else tuple(range(len(space.spaces)))
        self.parts = parts = tuple(_codec(space[k]) for k in keys)
        self.flattenable = all(p.flattenable for p in parts)
        self.dim = sum(p.dim for p in parts) if self.flattenable else 0
        self.onehot = any(p.onehot for p in parts)
        self.dtype = np.result_type(*[p.dtype for p in parts]) if parts and self.flattenable else None
        self.starts = tuple(accumulate((p.dim for p in parts[:-1]), initial=0))
        self.expected = f"a dict with keys {list(keys)}" if named else f"a tuple of {len(parts)}"

    def _join(self, values: list[Any]) -> Any:
        return dict(zip(self.keys, values)) if self.named else tuple(values)

    def _checked(self, x: Any, what: str) -> Any:
        if not self.parts:
            raise self._no_array(what)
        if len(x) != len(self.parts):  # a value with other parts is no member: never a partial read
            raise ValueError(f"expected {self.expected}, got {len(x)} parts")
        return zip(self.keys, self.parts)

    def flatten_parts(self, x: Any) -> Any:
        return self._join([p.flatten(x[k]) for k, p in self._checked(x, "flatten")])

    def unflatten_parts(self, v: Any) -> Any:
        return self._join([p.unflatten(v[k]) for k, p in self._checked(v, "unflatten")])

    def onehot_ranges(self, start: int) -> list[tuple[int, int]]:
        return [r for part, offset in zip(self.parts, self.starts) for r in part.onehot_ranges(start + offset)]

    def emit_fill(self, gen: Generator, value: str, start: int) -> None:
        if value != "x":  # a part of a product: read once, into a local of its own
            local = f"_x{len(gen.lines)}"
            gen.line(f"{local} = {value}")
            value = local
        message = gen.bind(f"expected {self.expected}, got ")
        gen.line(f"if len({value}) != {len(self.parts)}: raise ValueError({message} + repr(len({value})) + ' parts')")
        for key, part, offset in zip(self.keys, self.parts, self.starts):
            part.emit_fill(gen, f"{value}[{gen.key(key)}]", start + offset)

    def emit_read(self, gen: Generator, start: int) -> str:
        items = [part.emit_read(gen, start + offset) for part, offset in zip(self.parts, self.starts)]
        if self.named:
            return "{" + ", ".join(f"{gen.key(k)}: {e}" for k, e in zip(self.keys, items)) + "}"
        return "(" + "".join(f"{e}, " for e in items) + ")"

    @functools.cached_property
    def layout(self) -> Layout:
        return Layout([piece for part in self.parts for piece in part.layout.pieces], self.dtype)

    def split(self, xs: Any, parts: list[Any]) -> None:
        if len(xs) != len(self.parts):  # a batch with other parts is no batch: never a partial write
            raise ValueError(f"expected {self.expected}, got {len(xs)} parts")
        for key, part in zip(self.keys, self.parts):
            part.split(xs[key], parts)

    def joined(self, values: Any) -> Any:
        return self._join([part.joined(values) for part in self.parts])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = [p.bounds() for p in self.parts]
        return np.concatenate([lo for lo, _ in pairs]), np.concatenate([hi for _, hi in pairs])

    def box(self) -> Any:
        if self.flattenable:
            return super().box()
        boxes = [p.box() for p in self.parts]
        return DictProduct(list(zip(self.keys, boxes))) if self.named else TupleProduct(*boxes)


# -- OneOf, Text: written by a Python function --------------------------------------------


@flat_codec.register(OneOf)
class OneOfCodec(FlatCodec):
    """``[i, *flatten(v)]`` padded to ``1 + max(dims)`` with its first entry (Gymnasium); the
    dtype promotes the branches' flat dtypes, widened until it holds the largest index."""

    def __init__(self, space: OneOf) -> None:
        self.parts = parts = tuple(_codec(space[i]) for i in range(len(space.spaces)))
        self.flattenable = all(p.flattenable for p in parts)
        if not self.flattenable:
            return
        self.dim = 1 + max(p.dim for p in parts)
        self.dtype = dtype = np.result_type(*[p.dtype for p in parts])
        last = len(parts) - 1
        if (dtype.kind == "b" and last > 1) or (dtype.kind in "iu" and last > np.iinfo(dtype).max):
            self.dtype = np.result_type(dtype, np.min_scalar_type(last))
        sized = [p.bounds() for p in parts if p.dim]
        self.low = np.min([np.min(lo) for lo, _ in sized]) if sized else 0
        self.high = np.max([np.max(hi) for _, hi in sized]) if sized else 0

    def write(self, out: np.ndarray, x: Any) -> None:
        i, value = x
        flat = np.asarray(self.parts[i].flatten(value))
        out[0] = i
        out[1 : 1 + flat.size] = flat
        if flat.size < self.dim - 1:  # Gymnasium pads with the first entry (fails when there is none)
            out[1 + flat.size :] = flat[0] if flat.size else self.low

    def read(self, v: np.ndarray) -> Any:
        i = np.int64(v[0])
        part = self.parts[i]
        return i, part.unflatten(np.asarray(v[1 : 1 + part.dim]).astype(part.dtype))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        low = np.concatenate([[0], np.full(self.dim - 1, self.low)])
        return low, np.concatenate([[len(self.parts) - 1], np.full(self.dim - 1, self.high)])


@flat_codec.register(Text)
class TextCodec(FlatCodec):
    """``max_length`` int32 character indices (charset order), padded with ``len(charset)``."""

    dtype = np.dtype(np.int32)

    def __init__(self, space: Text) -> None:
        self.charset = space.charset
        self.dim = space.max_length
        self.pad = len(space.charset)
        self.positions = {c: i for i, c in enumerate(space.charset)}

    def write(self, out: np.ndarray, x: Any) -> None:
        try:
            codes = [self.positions[c] for c in x]
        except (KeyError, TypeError):
            raise ValueError(f"{x!r} is not a string over {self.charset!r}") from None
        if len(codes) > self.dim:
            raise ValueError(f"{x!r} is longer than max_length={self.dim}")
        out[: len(codes)] = codes
        out[len(codes) :] = self.pad

    def read(self, v: np.ndarray) -> str:
        return "".join(self.charset[int(c)] for c in v if c < self.pad)

    def unflatten_each(self, vs: np.ndarray) -> np.ndarray:
        return np.array([self.read(row) for row in _rows_of(vs)], dtype=str).reshape(vs.shape[:-1])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(self.dim, np.int32), np.full(self.dim, self.pad, np.int32)


def _rows_of(vs: np.ndarray) -> np.ndarray:
    """The ``(*batch, dim)`` array ``vs`` as ``(n, dim)`` rows (``dim`` may be 0)."""
    return vs.reshape(math.prod(vs.shape[:-1]), vs.shape[-1])


def _object_array(xs: Any) -> np.ndarray:
    """``xs`` as an object array: a list's items (tuples included) as its entries."""
    return np.asarray(xs, dtype=object) if isinstance(xs, np.ndarray) else np.fromiter(xs, object)


# -- Sequence and Graph: flattened parts, not one vector --------------------------------------


def _flatten_stacked(codec: FlatCodec, x: Any) -> Any:
    """Stacked members flattened (a ``(length, dim)`` array, or a tuple where no array), as Gymnasium."""
    return codec.flatten_batch(x) if codec.flattenable else tuple(codec.flatten(item) for item in x)


def _unflatten_stacked(codec: FlatCodec, v: Any) -> Any:
    if not codec.flattenable:
        return tuple(codec.unflatten(item) for item in v)
    v = np.asarray(v)
    return stacked(codec.unflatten_batch(v.reshape(v.size // codec.dim if codec.dim else len(v), codec.dim)))


@flat_codec.register(Sequence)
class SequenceCodec(FlatCodec):
    """A tuple of flattened members, or (``stack``) the ``(length, flatdim)`` array."""

    flattenable = False

    def __init__(self, space: Sequence) -> None:
        self.stack = space.stack
        self.feature = _codec(space._space)

    def flatten_parts(self, x: Any) -> Any:
        return _flatten_stacked(self.feature, x) if self.stack else tuple(map(self.feature.flatten, x))

    def unflatten_parts(self, v: Any) -> Any:
        return _unflatten_stacked(self.feature, v) if self.stack else tuple(map(self.feature.unflatten, v))

    def box(self) -> Sequence:
        return Sequence(self.feature.box(), stack=self.stack)


@flat_codec.register(Dynamic)
def _dynamic_codec(space: Dynamic) -> FlatCodec:
    """None: a Dynamic has no fixed width (ValueError naming its dynamic axes)."""
    raise no_fixed_width(space, "flatten")


@flat_codec.register(Graph)
class GraphCodec(FlatCodec):
    """``GraphInstance`` of the flattened node (and edge) features; links unchanged."""

    flattenable = False

    def __init__(self, space: Graph) -> None:
        self.node = _codec(space._node)
        self.edge = None if space._edge is None else _codec(space._edge)

    def flatten_parts(self, x: Any) -> GraphInstance:
        edges = None if x.edges is None or self.edge is None else _flatten_stacked(self.edge, x.edges)
        return GraphInstance(_flatten_stacked(self.node, x.nodes), edges, x.edge_links)

    def unflatten_parts(self, v: Any) -> GraphInstance:
        edges = None if v.edges is None or self.edge is None else _unflatten_stacked(self.edge, v.edges)
        return GraphInstance(_unflatten_stacked(self.node, v.nodes), edges, v.edge_links)

    def box(self) -> Graph:
        return Graph(self.node.box(), None if self.edge is None else self.edge.box())


# -- the public functions: a cached codec, then its method; errors name the argument ----------

_FLAT = "flat_codec"  # the codec's key among the variants of a space's plan (a str: its hash is kept)
_BAD_VALUE = (KeyError, IndexError, AttributeError, TypeError, ValueError)


def _codec(space: Any) -> FlatCodec:
    """The codec of ``space``: a variant of its plan (:mod:`spacealg.core.plan`), built once."""
    return variant_of(space, _FLAT, flat_codec)  # type: ignore[no-any-return]


def flat_part(space: Any, what: str, flatten: Callable[[Any, Any], Any] | None = None,
              unflatten: Callable[[Any, Any], Any] | None = None) -> Part:
    """``space`` as a piece of a flat vector flattened by ``flatten(b, space)`` and read by
    ``unflatten(v, space)`` (its own rules, :mod:`spacealg.core.flat`): its width and flat dtype
    are its codec's. ValueError naming ``what`` where it has no flat array."""
    codec = _codec_of(space, what)
    if codec.dtype is None:
        raise codec._no_array(what)
    return Part(space, codec.dim, codec.dtype, functools.partial(_called, flatten, space),
                functools.partial(_called, unflatten, space))


def _called(function: Any, space: Any, value: Any) -> Any:
    return function(value, space)


def _codec_of(space: Any, function: str, value: Any = None) -> FlatCodec:
    """The codec of ``space``, else a TypeError naming it (and saying so where x and space look swapped)."""
    try:
        return _codec(space)
    except TypeError as error:
        if isinstance(value, (Space, range)) or gym_class_of(value) is not None:
            raise TypeError(f"{function}: the arguments look swapped: spacealg's {function} takes the value "
                            f"first ({function}(x, space)), Gymnasium's the space; got x={value!r}, "
                            f"space={space!r}") from None
        raise TypeError(f"{function}: space={space!r} is not a flattenable space ({error})") from None


def _bad(function: str, argument: str, value: Any, space: Any, error: Exception) -> ValueError:
    detail = str(error) if isinstance(error, ValueError) else f"{type(error).__name__}: {error}"
    return ValueError(f"{function}: {argument}={value!r} is not valid for space={space!r} ({detail})")


def flatdim(space: Any) -> int:
    """The length of flattened members (``gymnasium.spaces.utils.flatdim``); a ValueError for
    a space holding a Sequence or Graph (their flattenings vary in size)."""
    codec = _codec_of(space, "flatdim")
    if not codec.flattenable:
        raise codec._no_array("flatdim")
    return codec.dim


def flatten(x: Any, space: Any) -> Any:
    """``x`` as a flat vector (``gymnasium.spaces.utils.flatten(space, x)``; note the order).

    Law: ``unflatten(flatten(x, s), s) == x`` and ``flatten(x, s) in flattened_box(s)``.
    A value not shaped like a member (missing or extra parts, wrong keys, a label not in
    the space) raises ValueError naming ``x`` and the space; swapped arguments a TypeError.
    """
    plan = kept_plan(space)
    codec = None if plan is None else plan.flat_codec
    if codec is None:
        codec = _codec_of(space, "flatten", x)
    try:
        return codec.flatten(x)
    except _BAD_VALUE as error:
        raise _bad("flatten", "x", x, space, error) from None


def unflatten(v: Any, space: Any) -> Any:
    """The member whose flattening is ``v`` (``gymnasium.spaces.utils.unflatten(space, v)``).

    ``v``: ``flatdim(space)`` numbers (an array, list or tuple); else, or where a one-hot
    segment has no nonzero entry, a ValueError naming ``v`` and the space.
    """
    plan = kept_plan(space)
    codec = None if plan is None else plan.flat_codec
    if codec is None:
        codec = _codec_of(space, "unflatten", v)
    try:
        return codec.unflatten(v)
    except _BAD_VALUE as error:
        raise _bad("unflatten", "v", v, space, error) from None


def flatten_batch(xs: Any, space: Any) -> np.ndarray:
    """A batch of members flattened at once: an array ``(*batch, flatdim(space))``; a
    torch/JAX one for a torch/JAX batch. Law: ``flatten_batch(xs, s)[i] == flatten(xs_i, s)``."""
    return _batched(flatten_batch, "xs", xs, space)  # type: ignore[no-any-return]


def unflatten_batch(vs: Any, space: Any) -> Any:
    """The batch whose flattenings are the rows of ``vs`` (``(*batch, flatdim)``); torch/JAX
    rows give torch/JAX batches. Law: ``unflatten_batch(flatten_batch(xs, s), s) == xs``."""
    return _batched(unflatten_batch, "vs", vs, space)


def _batched(function: Callable[..., Any], argument: str, values: Any, space: Any) -> Any:
    """The space's one route (:func:`~spacealg.core.plan.route`), for NumPy's data too: its kind's
    rule, or the backend's plans; on NumPy the flat codec (:func:`_codec_batched`). The kept
    route is read here first, as the protocol's functions read it, and NumPy's is bound to the codec
    (flatten_batch(256) of Box(16) 1.88 us, 2.01 us by the unbound run; best of 15, process time)."""
    name = backend_name(values) or "numpy"
    plan = kept_plan(space)
    run = None if plan is None else plan.routes.get((function, name))
    if run is not None:
        return run(values, space)
    return route(function, name, space, (values, space), {})


def _codec_batched(function: Callable[..., Any], argument: str) -> Callable[[Any, Any], Any]:
    """NumPy's ``function`` (``flatten_batch``/``unflatten_batch``): the space's flat codec's,
    bound to the codec once the route keeps it (``run.bind``)."""
    operation = function.__name__

    def call(method: Callable[[Any], Any], values: Any, space: Any) -> Any:
        try:
            return method(values)
        except _BAD_VALUE as error:
            raise _bad(operation, argument, values, space, error) from None

    def run(values: Any, space: Any) -> Any:
        return call(getattr(_codec_of(space, operation, values), operation), values, space)

    def bind(space: Any) -> Callable[[Any, Any], Any] | None:
        plan = kept_plan(space)  # the codec, a variant of the same plan, names its space weakly
        codec = None if plan is None else plan.flat_codec
        return None if codec is None else functools.partial(call, getattr(codec, operation))

    run.bind = bind  # type: ignore[attr-defined]
    return run


register_backend(flatten_batch, "numpy", _codec_batched(flatten_batch, "xs"))
register_backend(unflatten_batch, "numpy", _codec_batched(unflatten_batch, "vs"))


def flattened_box(space: Any) -> Any:
    """Gymnasium's ``flatten_space``: the Box that :func:`flatten` maps members into (a Sequence,
    Graph, Tuple or Dict of flattened parts where a Sequence or Graph is inside), a Gymnasium
    space for a Gymnasium space. Law: ``flatten(x, s) in flattened_box(s)`` for every member ``x``."""
    box = _codec_of(space, "flattened_box").box()
    if gym_class_of(space) is not None:
        return to_gymnasium(box)
    return box
