"""Codecs: a space's emulation compiled once, so each copy costs about what the copy costs.

>>> import numpy as np
>>> from spacealg import Box, DictProduct, FiniteSet
>>> from spacealg.emulation import Codec
>>> space = DictProduct(pos=Box(-1.0, 1.0, shape=(2,)), dir=range(4), mood=FiniteSet("ok", "bad"))
>>> codec = Codec(space)                      # role="observation" (or "action")
>>> row = codec.new_buffer()                  # (width,) of codec.flat_dtype, here bytes
>>> _ = codec.emulate_into(row, {"pos": np.array([0.5, -0.5], np.float32), "dir": 3, "mood": "bad"})
>>> codec.nativize(row)["mood"], codec.nativize(row)["dir"]
('bad', 3)

A :class:`Codec` holds the :class:`~spacealg.emulation.spaces.Layout` of a space in one
role and code generated for it: straight-line assignments with every field's offset,
dtype and shape inlined.

=====================================  ======================================================
method                                 does
=====================================  ======================================================
``emulate_into(out, x)``               writes member ``x`` into the row ``out``; returns ``out``
``emulate(x)``                         a new row holding ``x``
``nativize(row, copy=False)``          the member stored in ``row`` (arrays are views of
                                       ``row`` unless ``copy``; PufferLib's behaviour)
``emulate_row(buf, i, x)``             writes ``x`` into row ``i`` of a 2-D buffer
``nativize_row(buf, i, copy=False)``   the member in row ``i``
``emulate_batch(buf, xs)``             writes a batch (spacealg's batch form: arrays
                                       ``(n, ...)``, tuples/dicts of component batches)
``nativize_batch(buf, copy=False)``    the batch stored in an ``(n, width)`` buffer
``new_buffer(n=None)``                 zeros of the emulated space's shape (``(n, ...)``)
=====================================  ======================================================

A row is a 1-D array of ``flat_dtype`` and ``width`` entries (for a space kept as is, an
array of its own shape), or an array of ``struct_dtype``, or the same bytes in any other
contiguous form. ``emulate_into`` and ``emulate_row`` keep the field views of the arrays
they saw last (by identity), so passing the same row or buffer again costs only the
assignments. ``nativize`` also accepts an action array of another numeric dtype (an int32
or float tensor's array) when the layout has one dtype: it is cast first.

Laws (tests/test_emulation.py): ``nativize(emulate(x)) == x``; the emulated row lies in
``emulated_space``; ``emulate_batch``/``nativize_batch`` equal the loop of single rows.
PufferLib's free functions ``emulate`` and ``nativize`` (:mod:`spacealg.emulation.buffers`)
and the env layer's checked writer (:mod:`spacealg.emulation.guard`) build on the same fields.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.core.arrays import backend_implementation, backend_name
from spacealg.core.cache import IdentityCache
from spacealg.core.codegen import Generator
from spacealg.core.kernel import NUMPY
from spacealg.core.leaf import Form, LeafModel
from spacealg.core.plan import plan_for, variant_of
from spacealg.emulation.spaces import Layout, Struct, layout_of

__all__ = ["Codec", "codec_for"]


class Field:
    """Where and how one leaf is stored: byte offset, storage dtype, entry count, decoding."""

    def __init__(self, keys: tuple[Any, ...], leaf: LeafModel, path: str, dtype: np.dtype, offset: int,
                 flat: np.dtype) -> None:
        self.keys, self.leaf, self.path = keys, leaf, path
        self.form = leaf.form
        self.dtype = np.dtype(dtype)
        self.shape = leaf.shape
        self.size = leaf.size
        self.offset = offset
        self.nbytes = self.dtype.itemsize * self.size
        self.uniform = self.dtype == flat
        self.start = offset // flat.itemsize  # entry offset when uniform
        self.items, self.lookup = leaf.items or (), leaf.lookup
        self.low, self.high = leaf.stored_low, leaf.stored_high
        self.rounds = leaf.integral and self.dtype.kind == "f"  # integers held in a float action
        self.value_dtype = leaf.dtype
        self.decodes = bool(self.items) or self.rounds or self.dtype != self.value_dtype

    # -- label encoding ----------------------------------------------------------------
    def encode_label(self, x: Any) -> int:
        try:
            return self.lookup[x.item() if isinstance(x, (np.generic, np.ndarray)) else x]
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"emulate: {x!r} is not a member of {self.path} = {self.leaf.space!r}") from None

    def encode_labels(self, xs: Any) -> np.ndarray:
        entries = np.asarray(xs, dtype=object)
        codes = [self.encode_label(e) for e in entries.reshape(-1)]
        return np.asarray(codes, dtype=np.int64).reshape(entries.shape)

    # -- decoding from stored values ------------------------------------------------------
    def decode_int(self, value: Any) -> int:
        if self.rounds:
            value = min(max(round(float(value)), int(self.low)), int(self.high))
        return int(value)

    def decode(self, stored: Any, k: Any = NUMPY) -> Any:
        """Stored values ``(..., *shape)`` as the leaf's (where ``decodes``): integers held in
        floats rounded (half to even) and clipped into range, positions as their labels, other
        dtypes cast. One rule for NumPy and the torch/JAX rows (``k``: :mod:`spacealg.core.kernel`)."""
        xp, leaf = k.xp, self.leaf
        if self.rounds and self.size:
            wide = k.widest_float()
            low = k.const(leaf, "stored_low", lambda: self.low.astype(np.float64), wide)
            high = k.const(leaf, "stored_high", lambda: self.high.astype(np.float64), wide)
            stored = xp.clip(xp.round(stored), low, high)
        if self.items:
            return self._item_values(k)[xp.astype(stored, k.widest_int())]
        return xp.astype(stored, k.native(leaf, self.value_dtype))

    def _item_values(self, k: Any) -> Any:
        if k is NUMPY:
            return self.leaf.item_array
        items = self.numeric_items()
        return k.const(self.leaf, "item_values", lambda: items, k.native(self.leaf, items.dtype))

    def numeric_items(self) -> np.ndarray:
        """The items as an array of numbers; TypeError for labels, which tensors cannot hold."""
        items = np.asarray(self.items)
        if not self.items or items.dtype.kind not in "biuf":
            raise TypeError(f"emulation: {self.path} = {self.leaf.space!r} holds labels, which have no tensor "
                            "form (their stored index is in the raw rows)")
        return items

    def view(self, rows: np.ndarray) -> np.ndarray:
        """This field's view in a 1-D row, or ``(n, *shape)`` in a 2-D buffer of rows."""
        if self.uniform:
            part = rows[..., self.start : self.start + self.size]
        else:
            part = rows[..., self.offset : self.offset + self.nbytes].view(self.dtype)
        return part.reshape((*rows.shape[:-1], *self.shape))


def read_leaves(gen: Generator, tree: Any, tests: Callable[[int, str], list[str]] | None = None,
                store: Callable[[int, str], str] | None = None) -> list[str]:
    """Lines reading leaf ``k`` of ``x`` into ``a<k>``, depth first, a level read once (into a
    local where two or more leaves are under it). ``store(k, expr)``: the line using leaf ``k``
    instead (the plain writers). With ``tests`` (leaf ``k``, its local -> lines raising
    ``_Miss`` on failure, :mod:`spacealg.emulation.guard`), each level must be a
    ``dict``/``tuple`` of its exact length and each leaf pass its tests, all before any store."""
    lines: list[str] = []
    leaves = itertools.count()

    def walk(node: Any, expr: str) -> None:
        if not isinstance(node, Struct):
            k = next(leaves)
            lines.append(store(k, expr) if store else f"a{k} = {expr}")
            lines.extend(tests(k, f"a{k}") if tests else ())
            return
        local = expr
        if expr != "x" and (tests or _leaf_count(node) > 1):
            local = f"p{len(lines)}"
            lines.append(f"{local} = {expr}")
        if tests:
            kind = "dict" if node.named else "tuple"
            lines.append(f"if type({local}) is not {kind} or len({local}) != {len(node.keys)}: raise _Miss")
        for key, part in zip(node.keys, node.parts):
            walk(part, f"{local}[{gen.key(key)}]")

    walk(tree, "x")
    return lines


def _leaf_count(node: Any) -> int:
    return sum(_leaf_count(part) for part in node.parts) if isinstance(node, Struct) else 1


def cached_views_function(gen: Generator, header: str, buffer: str, count: int, miss: list[str],
                           body: list[str]) -> Any:
    """Compiles ``header`` (a function of ``buffer``) that keeps the ``count`` views of the
    buffer it saw last in a closure cell; on a miss, ``miss`` leaves the views in ``v``.

    The cell holds one tuple ``(buffer, *views)`` replaced whole, so a concurrent call never
    pairs one buffer with another's views; only ndarrays are kept (by identity).
    """
    views = [f"v{k}" for k in range(count)]
    unpack = ", ".join(views) + ("," if count == 1 else "")
    lines = [
        f"_last = (_NOTHING,{' None,' * count})",
        header,
        "    nonlocal _last",
        f"    _o, {unpack} = _last",
        f"    if _o is not {buffer}:",
        *("        " + line for line in miss),
        f"        if isinstance({buffer}, _ndarray):",
        f"            _last = ({buffer}, *v)",
        *([f"        {unpack} = v"] if views else []),
        *("    " + line for line in body),
        f"return {header.split()[1].split('(')[0]}",
    ]
    gen.namespace.update(_NOTHING=_NOTHING, _ndarray=np.ndarray)
    return gen.function("def _make():", lines, factory=True)


_NOTHING = object()


class Codec:
    """The compiled emulation of ``space`` in ``role`` ("observation" or "action").

    Attributes: ``layout``, ``struct_dtype``, ``flat_dtype``, ``width``,
    ``emulated_space`` (a Gymnasium space) — see the module's table for the methods.
    """

    def __init__(self, space: Any, role: str = "observation") -> None:
        self.space = space
        self.role = role
        self.layout: Layout = layout_of(space, role)
        self.struct_dtype = self.layout.struct_dtype
        self.flat_dtype = self.layout.flat_dtype
        self.width = self.layout.width
        self.emulated_space = self.layout.emulated_space
        self.uniform = all(d == self.flat_dtype for d in self.layout.field_dtypes)
        self._row_shape = (self.width,)
        layout = self.layout
        self.fields = [
            Field(keys, leaf, path, dtype, offset, self.flat_dtype)
            for (keys, _, leaf, path), dtype, offset in zip(layout.leaves, layout.field_dtypes, layout.field_offsets)
        ]
        self._views: IdentityCache[tuple[np.ndarray, ...]] = IdentityCache("row views", 64)
        self._batch_views: IdentityCache[tuple[np.ndarray, ...]] = IdentityCache("buffer views", 64)
        self._compile()

    def __repr__(self) -> str:
        return f"Codec({self.space!r}, role={self.role!r})"

    # -- code generation ----------------------------------------------------------------
    def _writer(self, gen: Generator, header: str, cache: str, bind: str, target: str) -> Any:
        """A writer into rows ``out`` (the views of the last one kept; others through ``cache``)."""
        miss = [f"v = {cache}.get(out)", f"if v is None: v = {bind}(out)"]
        encode = {Form.LABEL: "encode_label", Form.LABELS: "encode_labels"}
        fields = self.fields

        def store(k: int, value: str) -> str:
            member = fields[k].form
            encoded = f"{gen.bind(getattr(fields[k], encode[member]))}({value})" if member in encode else value
            return f"v{k}[{target}] = {encoded}"

        body = [*read_leaves(gen, self.layout.tree, store=store), "return out"]
        return cached_views_function(gen, header, "out", len(self.fields), miss, body)

    def compiled(self, key: Any, build: Callable[[Codec], Any]) -> Any:
        """``build(self)``, made once per ``key`` for this codec's space and role (code other
        modules generate over the fields, such as the guard's checked writers): a variant of
        the space's plan (:mod:`spacealg.core.plan`), kept as long as the plan."""
        return variant_of(self.space, ("emulation guard", "numpy", self.role, key), lambda s: build(self))

    def _read(self, gen: Generator, field: Field, copy: bool, listed: bool = False) -> str:
        """The expression of ``field``'s value in the 1-D row ``a`` (scalars as Python numbers;
        ``listed``: read from ``_l``, the row's ``tolist()``)."""
        if self.layout.native:
            part, item = "a", "a.item(0)"
        elif field.uniform:
            part = f"a[{field.start}:{field.start + field.size}]"
            item = f"_l[{field.start}]" if listed else f"a.item({field.start})"
        else:
            part = f"a[{field.offset}:{field.offset + field.nbytes}].view({gen.bind(field.dtype)})"
            item = f"{part}.item(0)"
        stored = f"{part}.reshape({field.shape!r})" if len(field.shape) != 1 else part
        member = field.form
        if member in (Form.INT, Form.LABEL):
            number = f"{gen.bind(field.decode_int)}({item})" if field.rounds else item
            return f"{gen.bind(field.items)}[{number}]" if member is Form.LABEL else number
        if member is Form.FLOAT:
            return item
        if field.decodes:
            return f"{gen.bind(field.decode)}({stored})"
        return f"{stored}.copy()" if copy else stored

    def _compile(self) -> None:
        gen = Generator(f"emulating {self.space!r} ({self.role})")
        gen.namespace.update(_views=self._views, _bind=self._bind, _batch_views=self._batch_views,
                             _bind_batch=self._bind_batch)
        self.emulate_into = self._writer(  # type: ignore[method-assign]
            gen, "def emulate_into(out, x):", "_views", "_bind", "()")
        self.emulate_row = self._writer(  # type: ignore[method-assign]
            gen, "def emulate_row(out, i, x):", "_batch_views", "_bind_batch", "i")

        def nest(leaf: Callable[[int], str]) -> str:
            """The member's tuples and dicts around the leaf expressions ``leaf(k)``."""
            position = itertools.count()

            def build(node: Any) -> str:
                if isinstance(node, LeafModel):
                    return leaf(next(position))
                parts = [build(part) for part in node.parts]
                if node.named:
                    return "{" + ", ".join(f"{gen.key(k)}: {p}" for k, p in zip(node.keys, parts)) + "}"
                return "(" + "".join(f"{p}, " for p in parts) + ")"

            return build(self.layout.tree)

        fields = self.fields
        gen.namespace.update(_flat=self.as_row, _ndarray=np.ndarray, _dtype=self.flat_dtype)
        # a row of scalars only (actions, mostly) is read by one tolist() rather than an item() each
        listed = len(fields) > 1 and all(f.uniform and f.form in (Form.INT, Form.LABEL, Form.FLOAT) for f in fields)
        if listed:
            reads = ["_l = a.tolist()", f"return {nest(lambda k: self._read(gen, fields[k], False, True))}"]
        else:
            reads = [f"if copy: return {nest(lambda k: self._read(gen, fields[k], True))}",
                     f"return {nest(lambda k: self._read(gen, fields[k], False))}"]
        self.nativize = gen.function("def nativize(a, copy=False):", [  # type: ignore[method-assign]
            f"if type(a) is not _ndarray or a.dtype is not _dtype or a.shape != {self._row_shape!r}:",
            "    a = _flat(a, False)", *reads])
        # assemble(values): the leaf values (in field order) nested as a member is, and
        # parts(batch, what): a batch's leaf values in field order: the plan's join and split
        plan = plan_for(self.space)
        self.assemble, self.parts = plan.join, plan.check

    # -- rows ---------------------------------------------------------------------------
    def as_row(self, out: Any, writing: bool) -> np.ndarray:
        """``out`` as a 1-D array of ``flat_dtype`` and ``width`` entries (a view when writing)."""
        a = out if isinstance(out, np.ndarray) else np.asarray(out)
        one = a.reshape(1) if a.dtype.fields is not None else a.reshape(1, -1)
        if writing and a.size and not np.shares_memory(one, a):
            raise ValueError("emulation: a row to write into must be contiguous")
        return self._rows(one, writing)[0]

    def _bind(self, out: Any) -> tuple[np.ndarray, ...]:
        flat = self.as_row(out, writing=True)
        views = tuple(f.view(flat) for f in self.fields)
        if isinstance(out, np.ndarray):
            self._views.put(out, views)
        return views

    def _rows(self, buf: Any, writing: bool) -> np.ndarray:
        a = buf if isinstance(buf, np.ndarray) else np.asarray(buf)
        if a.ndim == 0:
            raise ValueError("emulation: expected a 2-D buffer of rows")
        n = a.shape[0]
        if a.dtype != self.flat_dtype and not writing and self.uniform and a.dtype.kind in "biuf":
            a = a.astype(self.flat_dtype)
        if a.dtype != self.flat_dtype:
            if a.dtype.fields is None and a.dtype.kind not in "uV":
                raise ValueError(f"emulation: expected a buffer of {self.flat_dtype} rows, got {a.dtype}")
            a = np.ascontiguousarray(a) if not writing else a
            a = a.reshape(n, -1).view(np.uint8).view(self.flat_dtype)
        rows = a.reshape(n, -1)
        if rows.shape[1] != self.width:
            raise ValueError(f"emulation: expected rows of {self.width} entries, got shape {a.shape}")
        if writing and rows.size and not np.shares_memory(rows, a):  # a reshape that had to copy
            raise ValueError("emulation: the buffer must be contiguous along its rows")
        return rows

    def _bind_batch(self, buf: Any) -> tuple[np.ndarray, ...]:
        rows = self._rows(buf, writing=True)
        views = tuple(f.view(rows) for f in self.fields)
        if isinstance(buf, np.ndarray):
            self._batch_views.put(buf, views)
        return views

    def emulate_into(self, out: Any, x: Any) -> Any:  # replaced by generated code
        raise NotImplementedError

    def emulate_row(self, out: Any, i: int, x: Any) -> Any:  # replaced by generated code
        raise NotImplementedError

    def emulate(self, x: Any) -> np.ndarray:
        """A new row holding ``x``."""
        out = np.zeros(self.emulated_space.shape if self.layout.native else self.width, self.flat_dtype)
        return self.emulate_into(out, x)  # type: ignore[no-any-return]

    def nativize(self, row: Any, copy: bool = False) -> Any:  # replaced by generated code
        """The member stored in ``row`` (see the module docstring)."""
        raise NotImplementedError

    def nativize_row(self, buf: Any, i: int, copy: bool = False) -> Any:
        """The member stored in row ``i`` of a 2-D buffer."""
        return self.nativize(self._rows(buf, writing=False)[i], copy=copy)

    def new_buffer(self, n: int | None = None) -> np.ndarray:
        """Zeros for one row (``n=None``) or ``n`` rows, of the emulated space's shape."""
        shape = tuple(self.emulated_space.shape) if self.layout.native else (self.width,)
        return np.zeros(shape if n is None else (n, *shape), self.flat_dtype)

    # -- batches ---------------------------------------------------------------------------
    def emulate_batch(self, buf: Any, xs: Any) -> Any:
        """Writes the batch ``xs`` (spacealg's batch form) into the rows of ``buf``; returns it."""
        name = backend_name(buf)
        if name is not None:  # a torch/JAX buffer: the implementation spacealg.backends registered
            return backend_implementation(Codec.emulate_batch, name)(self, buf, xs)
        views = self._batch_views.get(buf)
        if views is None:
            views = self._bind_batch(buf)
        for field, view, value in zip(self.fields, views, self.parts(xs, "emulate_batch")):
            if field.form in (Form.LABEL, Form.LABELS):
                value = field.encode_labels(value)
            view[...] = np.asarray(value).reshape(view.shape)
        return buf

    def nativize_batch(self, buf: Any, copy: bool = False) -> Any:
        """The batch stored in the rows of ``buf``: arrays ``(n, ...)`` in tuples/dicts."""
        name = backend_name(buf)
        if name is not None:  # torch/JAX rows (views where a view suffices): spacealg.backends
            return backend_implementation(Codec.nativize_batch, name)(self, buf, copy)
        rows = self._rows(buf, writing=False)
        values = []
        for field in self.fields:
            stored = field.view(rows)
            values.append(field.decode(stored) if field.decodes else stored.copy() if copy else stored)
        return self.assemble(values)


_CODEC_KEYS = {role: ("emulation codec", "numpy", role) for role in ("observation", "action")}


def codec_for(space: Any, role: str = "observation") -> Codec:
    """The :class:`Codec` of ``space`` in ``role``, a variant of the space's plan (:mod:`spacealg.core.plan`)."""
    key = _CODEC_KEYS.get(role)
    if key is None:
        return Codec(space, role)  # raises the ValueError naming role
    return variant_of(space, key, lambda s: Codec(s, role))  # type: ignore[no-any-return]
