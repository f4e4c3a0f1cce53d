"""Spaces to and from JSON-compatible documents: ``to_json`` and ``from_json``.

>>> import json
>>> from spacealg import Interval, from_json, to_json
>>> doc = to_json({"speed": Interval(0, 1), "gear": range(1, 6)})
>>> doc["space"]["kind"], doc["version"]
('dict', 1)
>>> from_json(json.dumps(doc)) == from_json(doc)
True

A document is ``{"format": "spacealg.space", "version": 1, "space": NODE}``, made of
dicts, lists, strings, numbers, booleans and null only (``json.dumps(doc, allow_nan=False)``
always succeeds); each NODE is an object with a ``kind`` and that kind's fields, listed in
docs/declarative.md and stated once here, in the rule of each kind. Numbers are JSON numbers
or ``"inf"``, ``"-inf"``, ``"nan"``; labels are strings, numbers, booleans, null, arrays
(tuples) or ``{"float": "inf"}``.

Laws: ``from_json(to_json(s)) == s`` for every spacealg space ``s``, with the same class
and ``repr`` (for plain objects: ``== as_space(s)``); for a Gymnasium space ``g``,
``to_gymnasium(from_json(to_json(g))) == g``; ``from_json`` never evaluates code or
imports modules (dataclasses are found among those already declared as spaces); a
malformed document raises :class:`DocumentError` (a ValueError) naming the path of the
offending field, whatever is wrong with it (bad JSON, 5,000-digit ints, a dtype string
numpy cannot parse, numbers beyond the float range, nesting deeper than
:data:`spacealg.core.space.MAX_DEPTH`, a shape whose element cannot be allocated).

Resources: reading a document allocates at most a small multiple of its own size. Bounds
written as one number stay one number (a ``Box`` keeps uniform bounds as read-only
broadcast views), so ``{"kind": "box", "shape": [1000000000], "low": 0, "high": 1}`` costs
bytes, not gigabytes; bounds written out in full are as large as the document.

Reading: every field goes through one reader per JSON type (a number, an int, a string, a
shape, a dtype, nested lists of a shape, a node, a list or an object of nodes), which raises
the :class:`DocumentError` naming the field's path; a kind's :func:`rule` names its fields.
The readers, :class:`Node` and the decoder registry live in :mod:`spacealg.serialize.document`;
this module holds the rule of each kind.

Extending: register an encoder for a new class with ``@encode_space.register(MyClass)``
(returning a node with a new ``kind``) and its inverse with ``@decoder("my-kind")``; or
catalogue the class (:func:`spacealg.core.catalog.register_space_class`, from the kind's own
module): its node is then ``{"kind": name, <argument>: value, ...}`` with the arguments of
``_constructor_args`` named by the constructor's signature, each value an int, bool, string,
null, list, ``{"float": n}``, ``{"tuple": [...]}``, ``{"dtype": name}``,
``{"array": nested lists, "shape": [...], "dtype": name}`` or ``{"space": node}`` (a ``*args``
parameter: the list of them), and reading it calls the class with those arguments (a class
never catalogued is never built).
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from spacealg.core.catalog import catalogued, name_of
from spacealg.core.generic import coerce, generic
from spacealg.core.space import Space
from spacealg.declarative import DataclassSpace, declared_dataclass
from spacealg.declarative import space as declared_space
from spacealg.serialize.document import (
    CATALOGUED,
    OMIT,
    DocumentError,
    Node,
    Reader,
    decode_label,
    decode_space,
    decoder,
    encode_label,
    fail,
    list_of,
    pairs_of,
    read_boolean,
    read_dtype,
    read_flat,
    read_integer,
    read_named,
    read_number,
    read_shape,
    read_space,
    read_spaces,
    read_string,
    write_number,
)
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.graph import Graph
from spacealg.spaces.interval import Interval, closed_option
from spacealg.spaces.masked import Masked
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import Sequence
from spacealg.spaces.text import Text

__all__ = ["FORMAT", "VERSION", "DocumentError", "Node", "Reader", "decode_label", "decode_space", "decoder",
           "encode_label", "encode_space", "from_json", "read_integer", "read_number", "rule", "to_json",
           "write_number"]

FORMAT = "spacealg.space"
"""The ``format`` field of every document."""
VERSION = 1
"""The ``version`` field of the documents this version writes (and the newest it reads)."""


def to_json(space: Any) -> dict[str, Any]:
    """The JSON-compatible document of ``space`` (see the module docstring for its form).

    ``space`` is a spacealg space, a plain object used as a space, or a Gymnasium/Gym
    space (converted with ``as_space``). Raises TypeError naming a space (or label) that
    has no JSON form. Law: ``from_json(to_json(s)) == s``.
    """
    return {"format": FORMAT, "version": VERSION, "space": encode_space(space)}


def from_json(doc: Mapping[str, Any] | str | bytes) -> Any:
    """The space a document (or its JSON text) describes: the inverse of :func:`to_json`.

    Raises :class:`DocumentError` (a ValueError) naming what is wrong and where: invalid
    JSON, a missing or unsupported ``version``, an unknown ``kind``, a missing, unexpected
    or ill-typed field, or field values a space's constructor rejects.
    """
    if isinstance(doc, (str, bytes, bytearray)):
        try:
            doc = json.loads(doc)
        except (ValueError, RecursionError) as error:  # bad JSON, 5,000-digit ints, deep nesting
            raise DocumentError(f"from_json: not valid JSON: {error}") from None
    top = Node(doc, "")
    fmt = top.get("format", FORMAT)
    if fmt != FORMAT:
        raise DocumentError(f"from_json: at format: expected {FORMAT!r}, got {fmt!r}")
    version = top.integer("version")
    if version != VERSION:
        raise fail("version", f"unsupported version {version} (this spacealg reads version {VERSION})")
    space = top.space("space")
    top.done()
    return space


@generic(0)
def encode_space(space: Any) -> dict[str, Any]:
    """The document node of ``space`` (``{"kind": ..., ...}``); dispatched on its type.

    Objects that are not spacealg spaces are converted with ``as_space`` first; a space
    without a registered encoder raises TypeError naming its class.
    """
    try:
        return coerce(encode_space, (space,), {})  # type: ignore[no-any-return]
    except TypeError as error:
        if "no implementation" not in str(error):
            raise
        raise TypeError(
            f"to_json: no JSON form for {type(space).__qualname__}; register one with "
            "spacealg.serialize.encode_space.register and spacealg.serialize.decoder"
        ) from None


def _given(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not OMIT}


def rule(kind: str, cls: Any, build: Callable[..., Any], **fields: tuple[Any, ...]) -> None:
    """Register the encoder of ``cls`` and the decoder of ``kind`` from one list of fields, in
    document order: ``name=(reader, writer[, default])``; ``writer(space)`` gives the field's
    JSON value (``OMIT``: left out), ``reader`` reads it back (``default`` where absent), and
    the decoder calls ``build`` with the values read as keywords (``OMIT`` ones left out).

    A field whose meaning depends on others (a Box's bounds on its shape and dtype) has a
    reader that returns a function of those fields; ``build`` applies it.
    """
    encode_space.register(cls)(lambda space: _given(kind=kind, **{k: f[1](space) for k, f in fields.items()}))
    decoder(kind)(lambda node: build(**_given(**{k: node.read(k, f[0], *f[2:]) for k, f in fields.items()})))


def _encode_named(spaces: Mapping[Any, Any]) -> Any:
    if all(isinstance(k, str) for k in spaces):
        return {k: encode_space(s) for k, s in spaces.items()}
    return [[encode_label(k), encode_space(s)] for k, s in spaces.items()]


def _encode_spaces(space: Any) -> list[Any]:
    return [encode_space(s) for s in space.spaces]


def _optional(value: Any, path: str, depth: int) -> Any:
    return None if value is None else decode_space(value, path, depth + 1)


rule("interval", Interval, lambda low, high, closed: Interval(low, high, closed_option(closed)),
     low=(read_number, lambda s: write_number(s.low)), high=(read_number, lambda s: write_number(s.high)),
     closed=(read_string, lambda s: s.closed, "both"))
rule("finite", FiniteSet, lambda items: FiniteSet(*items),
     items=(list_of(decode_label, "labels"), lambda s: list(map(encode_label, s.items))))
rule("range", range, lambda start, stop, step: range(start, stop, step), start=(read_integer, lambda s: s.start, 0),
     stop=(read_integer, lambda s: s.stop), step=(read_integer, lambda s: s.step, 1))
rule("array", ArraySpace, lambda base, dims: ArraySpace(base, *dims), base=(read_space, lambda s: encode_space(s.base)),
     dims=(read_shape, lambda s: list(s.dims)))
rule("tuple", TupleProduct, lambda spaces: TupleProduct(*spaces), spaces=(read_spaces, _encode_spaces))
rule("oneof", OneOf, lambda spaces: OneOf(*spaces), spaces=(read_spaces, _encode_spaces))
rule("dict", DictProduct, lambda spaces, sort_keys: DictProduct(spaces, sort_keys=sort_keys),
     spaces=(read_named, lambda s: _encode_named(s._constructor_args()[0][0])),
     sort_keys=(read_boolean, lambda s: OMIT if s.sort_keys else False, True))  # Gymnasium's flag, written when off
rule("text", Text, lambda max_length, **rest: Text(max_length, **rest),
     min_length=(read_integer, lambda s: s.min_length, 1), max_length=(read_integer, lambda s: s.max_length),
     charset=(read_string, lambda s: s.charset, OMIT))
rule("sequence", Sequence, Sequence, space=(read_space, lambda s: encode_space(s.space)),
     stack=(read_boolean, lambda s: s.stack, False))
rule("graph", Graph, Graph, node_space=(read_space, lambda s: encode_space(s.node_space)),
     edge_space=(_optional, lambda s: None if s.edge_space is None else encode_space(s.edge_space), None))


# box and categorical: bounds and counts as one number or nested lists of the shape --------------


def _dtype_name(dtype: np.dtype) -> str:
    return dtype.name if np.dtype(dtype.name) == dtype else dtype.str


def _nest(values: np.ndarray, write: Callable[[Any], Any] = int) -> Any:
    """``values`` as nested lists (a number when 0-d), each entry through ``write``."""

    def walk(entry: Any) -> Any:
        return [walk(e) for e in entry] if isinstance(entry, list) else write(entry)

    return walk(values.tolist())


def _write_bounds(space: Box, which: str) -> Any:
    """``space.low`` or ``space.high``: one number when every bound and mask is uniform (without
    touching the possibly huge, broadcast arrays), else nested lists; an integer Box's unbounded
    entries as infinities (float boxes store their infinities themselves)."""
    low, high, below, above = space.low, space.high, space.bounded_below, space.bounded_above
    if low.size == 0:
        return 0
    values, bounded = (low, below) if which == "low" else (high, above)
    bounded = bounded if space.integral else np.ones(space.shape, dtype=bool)
    infinity = -math.inf if which == "low" else math.inf
    if space._low_scalar is not None or all(bool((a.flat[0] == a).all()) for a in (low, high, below, above)):
        return write_number(values.flat[0] if bounded.flat[0] else infinity)
    return _nest(np.where(bounded, values.astype(object), infinity), write_number)


def _exact_float(v: int | float) -> bool:
    try:
        return isinstance(v, float) or float(v) == v
    except OverflowError:
        return False


def _bounds(value: Any, path: str, depth: int = 0) -> Callable[[tuple[int, ...], np.dtype], Any]:
    """A Box bound: one number, or nested lists of the Box's shape (a function of its shape and dtype)."""

    def read(shape: tuple[int, ...], dtype: np.dtype) -> Any:
        if not isinstance(value, list):
            return read_number(value, path)
        numbers = list(read_flat(value, shape, path))
        if dtype.kind == "f" or all(_exact_float(v) for v in numbers):
            try:
                return np.array(numbers, dtype=np.float64).reshape(shape)
            except OverflowError:
                raise fail(path, "a bound is an int beyond the float range") from None
        # Integer bounds beyond 2**53: Box takes unbounded entries only as float infinities,
        # which would round these ints, so unbounded entries become the dtype's limits (the
        # space is equal; only the repr loses its "inf").
        info = np.iinfo(dtype)
        for v in numbers:
            if isinstance(v, float) and not math.isinf(v):
                raise fail(path, f"expected integer bounds for the dtype {dtype}, got {v!r}")
        exact = [(int(info.min) if v < 0 else int(info.max)) if isinstance(v, float) else v for v in numbers]
        try:
            return np.array(exact, dtype=dtype).reshape(shape)
        except OverflowError:
            raise fail(path, f"bounds lie outside the range of {dtype}") from None

    return read


rule("box", Box, lambda dtype, shape, low, high: Box(low(shape, dtype), high(shape, dtype), shape=shape, dtype=dtype),
     dtype=(read_dtype, lambda s: _dtype_name(s.dtype)), shape=(read_shape, lambda s: list(s.shape)),
     low=(_bounds, lambda s: _write_bounds(s, "low")), high=(_bounds, lambda s: _write_bounds(s, "high")))


def _counts(value: Any, path: str, depth: int = 0) -> Callable[[Any], Any]:
    """A Categorical's ``nvec`` or ``start``: an int (the scalar kind, Discrete, has no
    ``shape``), or nested lists of ints of the shape (the array kind, MultiDiscrete)."""

    def read(shape: Any) -> Any:
        if shape is OMIT:
            return read_integer(value, path)
        numbers = list(read_flat(value, shape, path))
        for i, v in enumerate(numbers):
            if not isinstance(v, int):
                raise fail(path, f"expected ints, got {v!r} at flat position {i}")
        return np.array(numbers, dtype=object).reshape(shape)

    return read


rule("categorical", Categorical,
     lambda dtype, nvec, start, shape=OMIT: Categorical(start=start(shape), nvec=nvec(shape), dtype=dtype),
     dtype=(read_dtype, lambda s: _dtype_name(s.dtype)),
     shape=(read_shape, lambda s: OMIT if s.scalar else list(s.shape), OMIT),
     nvec=(_counts, lambda s: int(s.nvec) if s.scalar else _nest(np.asarray(s.nvec))),
     start=(_counts, lambda s: int(s.start) if s.scalar else _nest(s.low), lambda shape: 0))


# types used as spaces, dataclass spaces ----------------------------------------------------------

_PYTHON_TYPES: dict[str, type] = {"bool": bool, "float": float, "int": int, "str": str}


@encode_space.register(type)
def _encode_type(space: type) -> dict[str, Any]:
    for name, known in _PYTHON_TYPES.items():
        if space is known:
            return {"kind": "type", "name": name}
    if issubclass(space, np.generic) and np.dtype(space).kind in "biuf":
        return {"kind": "type", "name": f"numpy.{np.dtype(space).name}"}
    return encode_space(declared_space(space))  # type: ignore[no-any-return]  # dataclasses


def _type(value: Any, path: str, depth: int = 0) -> type:
    name = read_string(value, path)
    if name in _PYTHON_TYPES:
        return _PYTHON_TYPES[name]
    try:
        dtype = np.dtype(name.removeprefix("numpy.")) if name.startswith("numpy.") else None
    except Exception:
        dtype = None
    if dtype is not None and dtype.kind in "biuf":
        return dtype.type  # type: ignore[no-any-return]
    raise fail(path, f"unknown type {name!r} (known: bool, float, int, str, numpy.<dtype name>)")


decoder("type")(lambda node: node.read("name", _type))


def _declared(value: Any, path: str, depth: int = 0) -> Callable[[dict[str, Any]], type]:
    """A dataclass's ``module.QualName``: a function of its fields finding the class among
    those declared as spaces in this process (never importing one)."""
    name = read_string(value, path)

    def find(fields: dict[str, Any]) -> type:
        cls = declared_dataclass(name, fields)
        if cls is None:
            raise fail(path, f"the dataclass {name!r} is not declared in this process: import its module and "
                       "decorate it with @spacealg.spaceclass (or call spacealg.space(cls)) before from_json")
        return cls

    return find


rule("dataclass", DataclassSpace, lambda fields, **named: DataclassSpace(named["class"](dict(fields)), dict(fields)),
     **{"class": (_declared, lambda s: f"{s.cls.__module__}.{s.cls.__qualname__}")},
     fields=(read_named, lambda s: _encode_named(s.fields._constructor_args()[0][0])))


# masked spaces: the mask as given, in spacealg's form ----------------------------------------------


def _encode_mask(mask: Any) -> Any:
    if mask is None:
        return None
    if isinstance(mask, tuple):
        return {"tuple": [_encode_mask(m) for m in mask]}
    if isinstance(mask, Mapping):
        return {"dict": [[encode_label(k), _encode_mask(v)] for k, v in mask.items()]}
    array = np.asarray(mask, dtype=bool)
    return {"joint": array.tolist(), "shape": list(array.shape)}


def _mask(value: Any, path: str, depth: int = 0) -> Any:
    """The inverse of :func:`_encode_mask`."""
    if value is None:
        return None
    node = Node(value, path)
    if node.has("tuple"):
        mask: Any = tuple(node.read("tuple", list_of(_mask, "masks")))
    elif node.has("dict"):
        mask = dict(node.read("dict", pairs_of(_mask, "mask")))
    else:
        shape, joint = node.shape("shape"), node.get("joint")
        try:
            bits = list(read_flat(joint, shape, node.at("joint"), read_boolean))
        except DocumentError:
            raise node.error("joint", f"expected nested lists of booleans of shape {list(shape)}") from None
        mask = np.array(bits, dtype=bool).reshape(shape)
    node.done()
    return mask


rule("masked", Masked, Masked, space=(read_space, lambda s: encode_space(s.space)),
     mask=(_mask, lambda s: _encode_mask(s.mask)))


# catalogued classes: their constructor arguments, named and typed --------------------------------


def _write_argument(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return {"float": write_number(value)}
    if isinstance(value, list):
        return [_write_argument(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [_write_argument(v) for v in value]}
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return {"dtype": _dtype_name(np.dtype(value))}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"array": _nest(value, write_number), "shape": list(value.shape), "dtype": _dtype_name(value.dtype)}
    return {"space": encode_space(value)}


def _read_argument(value: Any, path: str, depth: int = 0) -> Any:
    """The inverse of :func:`_write_argument` (a reader)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, list):
        return [_read_argument(v, f"{path}[{i}]", depth) for i, v in enumerate(value)]
    node = Node(value, path, depth)
    if node.has("float"):
        result: Any = float(node.number("float"))
    elif node.has("tuple"):
        result = tuple(node.read("tuple", list_of(_read_argument, "arguments")))
    elif node.has("array"):
        shape, dtype = node.shape("shape"), node.dtype("dtype")
        result = np.array(list(read_flat(node.get("array"), shape, node.at("array"))), dtype=dtype).reshape(shape)
    elif node.has("dtype"):
        result = node.dtype("dtype")
    else:
        result = node.space("space")
    node.done()
    return result


@encode_space.register(Space)
def _encode_catalogued(space: Space) -> dict[str, Any]:
    name = name_of(type(space))
    if name is None:
        raise TypeError(
            f"to_json: no JSON form for {type(space).__qualname__}; register one with "
            "spacealg.serialize.encode_space.register and spacealg.serialize.decoder, or catalogue "
            "the class with spacealg.core.catalog.register_space_class"
        )
    args, kwargs = space._constructor_args()
    named = inspect.signature(type(space)).bind(*args, **kwargs).arguments
    star = _star(type(space))  # ``*spaces``: a list
    return {"kind": name, **{k: _write_argument(list(v) if k == star else v) for k, v in named.items()}}


def _star(cls: type) -> str | None:
    """The name of ``cls``'s ``*args`` parameter, if it has one."""
    found = (n for n, p in inspect.signature(cls).parameters.items() if p.kind is p.VAR_POSITIONAL)
    return next(found, None)


@decoder(CATALOGUED)
def _decode_catalogued(node: Node) -> Any:
    name = node.string("kind")
    cls = catalogued(name)
    if cls is None:
        raise node.error("kind", f"unknown kind {name!r}")
    arguments = {k: node.read(k, _read_argument) for k in node.value if k != "kind"}
    star = _star(cls)
    positional = arguments.pop(star, []) if star is not None else []
    if not isinstance(positional, list):
        raise node.error(star or "kind", "expected a list of arguments")
    return cls(*positional, **arguments)
