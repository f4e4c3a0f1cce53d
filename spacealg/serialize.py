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

Extending: register an encoder for a new class with ``@encode_space.register(MyClass)``
(returning a node with a new ``kind``) and its inverse with ``@decoder("my-kind")``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from spacealg.core.generic import coerce, generic
from spacealg.core.space import MAX_DEPTH
from spacealg.declarative import DataclassSpace, declared_dataclass
from spacealg.declarative import space as declared_space
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

__all__ = ["FORMAT", "VERSION", "DocumentError", "Node", "decode_space", "decoder", "encode_space", "from_json",
           "to_json"]

FORMAT = "spacealg.space"
VERSION = 1
_SPECIAL_NUMBERS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_OMIT = object()  # a field left out of the document (a writer's answer, a reader's default)
Reader = Callable[..., Any]
"""Reads one field: ``(raw JSON value, its path[, the node's depth]) -> value``, or raises
the :class:`DocumentError` naming the path."""


class DocumentError(ValueError):
    """A malformed space document; the message names the path of the offending field."""


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
        raise _fail("version", f"unsupported version {version} (this spacealg reads version {VERSION})")
    space = top.space("space")
    top.done()
    return space


# -- reading: one reader per JSON type, each error naming the path ----------------------------


def _fail(path: str, message: str) -> DocumentError:
    return DocumentError(f"from_json: {f'at {path}: ' if path else 'the document: '}{message}")


def _expected(path: str, what: str, value: Any) -> DocumentError:
    try:
        text = repr(value)
    except Exception:
        text = "<unprintable>"
    text = text if len(text) <= 60 else text[:57] + "..."
    return _fail(path, f"expected {what}, got {type(value).__name__} {text}")


def _checked(test: Callable[[Any], bool], what: str) -> Reader:
    """The reader of the values that pass ``test`` (``what`` names them in errors)."""

    def read(value: Any, path: str, depth: int = 0) -> Any:
        if not test(value):
            raise _expected(path, what, value)
        return value

    return read


read_integer = _checked(lambda v: isinstance(v, int) and not isinstance(v, bool), "an int")
_string = _checked(lambda v: isinstance(v, str), "a string")
_boolean = _checked(lambda v: isinstance(v, bool), "true or false")
_real = _checked(
    lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    'a number (or "inf", "-inf", "nan")'
)


def read_number(value: Any, path: str, depth: int = 0) -> int | float:
    """A JSON number, or one of the strings "inf", "-inf", "nan"."""
    special = isinstance(value, str) and value in _SPECIAL_NUMBERS
    return _SPECIAL_NUMBERS[value] if special else _real(value, path)  # type: ignore[no-any-return]


def _list(value: Any, path: str, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _expected(path, f"a list of {what}", value)
    return value


def _shape(value: Any, path: str, depth: int = 0) -> tuple[int, ...]:
    dims = tuple(read_integer(d, f"{path}[{i}]") for i, d in enumerate(_list(value, path, "non-negative ints")))
    if any(d < 0 for d in dims):
        raise _fail(path, f"expected non-negative ints, got {value!r}")
    return dims


def _dtype(value: Any, path: str, depth: int = 0) -> np.dtype:
    text = _string(value, path)
    try:
        dtype = np.dtype(text)
    except Exception:  # numpy parses dtype strings: "(1,2" is a SyntaxError
        raise _fail(path, f"unknown dtype {text!r}") from None
    if dtype.kind not in "biuf":
        raise _fail(path, f"expected a bool, integer or floating dtype, got {text!r}")
    return dtype


def _flat(value: Any, shape: tuple[int, ...], path: str, item: Reader = read_number) -> Iterator[Any]:
    """The entries of nested lists of ``shape``, in C order, each read by ``item``."""
    if not shape:
        yield item(value, path)
        return
    if not isinstance(value, list) or len(value) != shape[0]:
        raise _expected(path, f"a list of length {shape[0]} (bounds of shape {shape})", value)
    for i, entry in enumerate(value):
        yield from _flat(entry, shape[1:], f"{path}[{i}]", item)


def _space(value: Any, path: str, depth: int) -> Any:
    return decode_space(value, path, depth + 1)


def _spaces(value: Any, path: str, depth: int) -> list[Any]:
    return [decode_space(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(_list(value, path, "spaces"))]


def _named(value: Any, path: str, depth: int) -> list[tuple[Any, Any]]:
    """An object of spaces, or a list of ``[label, space]`` pairs (keys in order)."""
    if isinstance(value, Mapping):
        return [(k, decode_space(v, f"{path}.{k}", depth + 1)) for k, v in value.items()]
    if not isinstance(value, list):
        raise _expected(path, "an object or a list of [key, space] pairs", value)
    pairs = []
    for i, pair in enumerate(value):
        if not (isinstance(pair, list) and len(pair) == 2):
            raise _expected(f"{path}[{i}]", "a [key, space] pair", pair)
        pairs.append((decode_label(pair[0], f"{path}[{i}][0]"), decode_space(pair[1], f"{path}[{i}][1]", depth + 1)))
    return pairs


def _labels(value: Any, path: str, depth: int = 0) -> list[Any]:
    return [decode_label(v, f"{path}[{i}]") for i, v in enumerate(_list(value, path, "labels"))]


def _typed(reader: Reader) -> Callable[..., Any]:
    def read(self: Node, name: str, default: Any = ...) -> Any:
        return self.read(name, reader, default)

    return read


class Node:
    """One JSON object of a document being read: typed field access, errors with paths.

    Every field read is marked; :meth:`done` rejects the fields nobody read (typos).
    """

    def __init__(self, value: Any, path: str, depth: int = 0) -> None:
        if not isinstance(value, Mapping):
            raise _expected(path, "an object", value)
        self.value, self.path, self.depth = value, path, depth
        self._read: set[str] = set()

    def at(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def error(self, name: str, message: str) -> DocumentError:
        return _fail(self.at(name), message)

    def has(self, name: str) -> bool:
        return name in self.value

    def get(self, name: str, default: Any = ...) -> Any:
        """The raw value of field ``name`` (required unless a default is given)."""
        self._read.add(name)
        if name not in self.value and default is ...:
            raise _fail(self.path, f"missing field {name!r}")
        return self.value.get(name, default)

    def read(self, name: str, reader: Reader, default: Any = ...) -> Any:
        """Field ``name`` through ``reader`` (``default`` as it is where the field is absent)."""
        if default is not ... and name not in self.value:
            return self.get(name, default)
        return reader(self.get(name), self.at(name), self.depth)

    string, integer, boolean = _typed(_string), _typed(read_integer), _typed(_boolean)
    number, shape, dtype = _typed(read_number), _typed(_shape), _typed(_dtype)
    space, spaces, named_spaces = _typed(_space), _typed(_spaces), _typed(_named)

    def done(self) -> None:
        """Raise for fields that no reader asked for."""
        extra = [k for k in self.value if k not in self._read]
        if extra:
            raise _fail(self.path, f"unexpected field(s) {', '.join(map(repr, extra))}")


def write_number(value: Any) -> int | float | str:
    """A number as a JSON value: ints and finite floats as themselves, others as strings."""
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))


def encode_label(value: Any) -> Any:
    """A finite-set item or dict key as JSON (tuples as arrays; see the module docstring)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": write_number(value)}
    if isinstance(value, tuple):
        return [encode_label(v) for v in value]
    raise TypeError(
        f"to_json: the label {value!r} (a {type(value).__qualname__}) has no JSON form; labels "
        "may be str, int, float, bool, None or tuples of them"
    )


def decode_label(value: Any, path: str) -> Any:
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, list):
        return tuple(decode_label(v, f"{path}[{i}]") for i, v in enumerate(value))
    if isinstance(value, Mapping) and set(value) == {"float"} and value["float"] in _SPECIAL_NUMBERS:
        return _SPECIAL_NUMBERS[value["float"]]
    raise _expected(path, 'a label (string, number, boolean, null, array, or {"float": "inf"})', value)


# -- the two generic functions and the rule table ----------------------------------------------


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


_DECODERS: dict[str, Callable[[Node], Any]] = {}


def decoder(kind: str) -> Callable[[Callable[[Node], Any]], Callable[[Node], Any]]:
    """Register the function that builds a space from a node of ``kind``.

    The function receives a :class:`Node` and reads its fields with the Node's typed
    getters; errors its constructor raises are reported with the node's path.
    """

    def register(function: Callable[[Node], Any]) -> Callable[[Node], Any]:
        _DECODERS[kind] = function
        return function

    return register


def decode_space(value: Any, path: str = "space", depth: int = 1) -> Any:
    """The space of one document node (``path`` names it in error messages, ``depth`` its
    nesting: beyond :data:`~spacealg.core.space.MAX_DEPTH` the document is refused before
    it is read further)."""
    if depth > MAX_DEPTH:
        raise _fail(path, f"spaces nested deeper than spacealg's limit of {MAX_DEPTH}")
    node = Node(value, path, depth)
    kind = node.string("kind")
    if kind not in _DECODERS:
        raise _fail(f"{path}.kind", f"unknown kind {kind!r} (known: {', '.join(sorted(_DECODERS))})")
    try:
        space = _DECODERS[kind](node)
    except DocumentError:
        raise
    except Exception as error:  # one rule: whatever a constructor or numpy meets, name the path
        raise _fail(path, f"{type(error).__name__}: {error}") from None
    node.done()
    return space


def _given(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not _OMIT}


def rule(kind: str, cls: Any, build: Callable[..., Any], **fields: tuple[Any, ...]) -> None:
    """Register the encoder of ``cls`` and the decoder of ``kind`` from one list of fields, in
    document order: ``name=(reader, writer[, default])``; ``writer(space)`` gives the field's
    JSON value (``_OMIT``: left out), ``reader`` reads it back (``default`` where absent), and
    the decoder calls ``build`` with the values read as keywords (``_OMIT`` ones left out)."""
    encode_space.register(cls)(lambda space: _given(kind=kind, **{k: f[1](space) for k, f in fields.items()}))
    _DECODERS[kind] = lambda node: build(**_given(**{k: node.read(k, f[0], *f[2:]) for k, f in fields.items()}))


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
     closed=(_string, lambda s: s.closed, "both"))
rule("finite", FiniteSet, lambda items: FiniteSet(*items), items=(_labels, lambda s: list(map(encode_label, s.items))))
rule("range", range, lambda start, stop, step: range(start, stop, step), start=(read_integer, lambda s: s.start, 0),
     stop=(read_integer, lambda s: s.stop), step=(read_integer, lambda s: s.step, 1))
rule("array", ArraySpace, lambda base, dims: ArraySpace(base, *dims), base=(_space, lambda s: encode_space(s.base)),
     dims=(_shape, lambda s: list(s.dims)))
rule("tuple", TupleProduct, lambda spaces: TupleProduct(*spaces), spaces=(_spaces, _encode_spaces))
rule("oneof", OneOf, lambda spaces: OneOf(*spaces), spaces=(_spaces, _encode_spaces))
rule("dict", DictProduct, lambda spaces, sort_keys: DictProduct(spaces, sort_keys=sort_keys),
     spaces=(_named, lambda s: _encode_named(s._constructor_args()[0][0])),
     sort_keys=(_boolean, lambda s: _OMIT if s.sort_keys else False, True))  # Gymnasium's flag, written when off
rule("text", Text, lambda max_length, **rest: Text(max_length, **rest),
     min_length=(read_integer, lambda s: s.min_length, 1), max_length=(read_integer, lambda s: s.max_length),
     charset=(_string, lambda s: s.charset, _OMIT))
rule("sequence", Sequence, Sequence, space=(_space, lambda s: encode_space(s.space)),
     stack=(_boolean, lambda s: s.stack, False))
rule("graph", Graph, Graph, node_space=(_space, lambda s: encode_space(s.node_space)),
     edge_space=(_optional, lambda s: None if s.edge_space is None else encode_space(s.edge_space), None))
rule("masked", Masked, Masked, space=(_space, lambda s: encode_space(s.space)),
     mask=(lambda value, path, depth: _mask(value, path), lambda s: _encode_mask(s.mask)))


# box and categorical: bounds and counts as one number or nested lists of the shape --------------


def _dtype_name(dtype: np.dtype) -> str:
    return dtype.name if np.dtype(dtype.name) == dtype else dtype.str


def _nest(values: np.ndarray, write: Callable[[Any], Any] = int) -> Any:
    """``values`` as nested lists (a number when 0-d), each entry through ``write``."""

    def walk(entry: Any) -> Any:
        return [walk(e) for e in entry] if isinstance(entry, list) else write(entry)

    return walk(values.tolist())


def _encode_bounds(values: np.ndarray, bounded: np.ndarray, infinity: float, uniform: bool) -> Any:
    if values.size == 0:
        return 0
    if uniform:  # one number, without touching the (possibly huge, broadcast) arrays
        return write_number(values.flat[0] if bounded.flat[0] else infinity)
    return _nest(np.where(bounded, values.astype(object), infinity), write_number)


@encode_space.register(Box)
def _encode_box(space: Box) -> dict[str, Any]:
    low, high, below, above = space.low, space.high, space.bounded_below, space.bounded_above
    uniform = low.size == 0 or space._low_scalar is not None or all(
        bool((a.flat[0] == a).all()) for a in (low, high, below, above)
    )
    if not space.integral:  # float boxes store their infinities themselves
        below = above = np.ones(space.shape, dtype=bool)
    return {
        "kind": "box",
        "dtype": _dtype_name(space.dtype),
        "shape": list(space.shape),
        "low": _encode_bounds(low, below, -math.inf, uniform),
        "high": _encode_bounds(high, above, math.inf, uniform),
    }


def _exact_float(v: int | float) -> bool:
    try:
        return isinstance(v, float) or float(v) == v
    except OverflowError:
        return False


def _bounds(node: Node, name: str, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    value = node.get(name)
    if not isinstance(value, list):
        return read_number(value, node.at(name))
    numbers = list(_flat(value, shape, node.at(name)))
    if dtype.kind == "f" or all(_exact_float(v) for v in numbers):
        try:
            return np.array(numbers, dtype=np.float64).reshape(shape)
        except OverflowError:
            raise node.error(name, "a bound is an int beyond the float range") from None
    # Integer bounds beyond 2**53: Box takes unbounded entries only as float infinities,
    # which would round these ints, so unbounded entries become the dtype's limits (the
    # space is equal; only the repr loses its "inf").
    info = np.iinfo(dtype)
    for v in numbers:
        if isinstance(v, float) and not math.isinf(v):
            raise node.error(name, f"expected integer bounds for the dtype {dtype}, got {v!r}")
    exact = [(int(info.min) if v < 0 else int(info.max)) if isinstance(v, float) else v for v in numbers]
    try:
        return np.array(exact, dtype=dtype).reshape(shape)
    except OverflowError:
        raise node.error(name, f"bounds lie outside the range of {dtype}") from None


@decoder("box")
def _decode_box(node: Node) -> Box:
    dtype, shape = node.dtype("dtype"), node.shape("shape")
    low, high = _bounds(node, "low", shape, dtype), _bounds(node, "high", shape, dtype)
    return Box(low, high, shape=shape, dtype=dtype)


def _ints(node: Node, name: str, shape: tuple[int, ...]) -> np.ndarray:
    numbers = list(_flat(node.get(name), shape, node.at(name)))
    for i, v in enumerate(numbers):
        if not isinstance(v, int):
            raise node.error(name, f"expected ints, got {v!r} at flat position {i}")
    return np.array(numbers, dtype=object).reshape(shape)


@encode_space.register(Categorical)
def _encode_categorical(space: Categorical) -> dict[str, Any]:
    node: dict[str, Any] = {"kind": "categorical", "dtype": _dtype_name(space.dtype)}
    if space.scalar:
        return {**node, "nvec": int(space.nvec), "start": int(space.start)}
    return {**node, "shape": list(space.shape), "nvec": _nest(np.asarray(space.nvec)), "start": _nest(space.low)}


@decoder("categorical")
def _decode_categorical(node: Node) -> Any:
    """Scalar kind (Discrete) without ``shape``; array kind (MultiDiscrete) with it."""
    dtype = node.dtype("dtype")
    if not node.has("shape"):
        return Categorical(node.integer("nvec"), start=node.integer("start", 0), dtype=dtype)
    shape = node.shape("shape")
    start = _ints(node, "start", shape) if node.has("start") else 0
    return Categorical(_ints(node, "nvec", shape), start=start, dtype=dtype)


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


@decoder("type")
def _decode_type(node: Node) -> type:
    name = node.string("name")
    if name in _PYTHON_TYPES:
        return _PYTHON_TYPES[name]
    try:
        dtype = np.dtype(name.removeprefix("numpy.")) if name.startswith("numpy.") else None
    except Exception:
        dtype = None
    if dtype is not None and dtype.kind in "biuf":
        return dtype.type
    raise node.error("name", f"unknown type {name!r} (known: bool, float, int, str, numpy.<dtype name>)")


@encode_space.register(DataclassSpace)
def _encode_dataclass(space: DataclassSpace) -> dict[str, Any]:
    cls = space.cls
    return {
        "kind": "dataclass",
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "fields": _encode_named(space.fields._constructor_args()[0][0]),
    }


@decoder("dataclass")
def _decode_dataclass(node: Node) -> DataclassSpace:
    name, fields = node.string("class"), dict(node.named_spaces("fields"))
    cls = declared_dataclass(name, fields)
    if cls is None:
        raise node.error(
            "class",
            f"the dataclass {name!r} is not declared in this process: import its module and "
            "decorate it with @spacealg.spaceclass (or call spacealg.space(cls)) before from_json",
        )
    return DataclassSpace(cls, fields)


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


def _mask(value: Any, path: str) -> Any:
    if value is None:
        return None
    node = Node(value, path)
    if node.has("tuple"):
        parts = _list(node.get("tuple"), node.at("tuple"), "masks")
        mask: Any = tuple(_mask(p, f"{node.at('tuple')}[{i}]") for i, p in enumerate(parts))
    elif node.has("dict"):
        pairs = node.get("dict")
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise _expected(node.at("dict"), "a list of [key, mask] pairs", pairs)
        where = node.at("dict")
        mask = {decode_label(k, f"{where}[{i}][0]"): _mask(v, f"{where}[{i}][1]") for i, (k, v) in enumerate(pairs)}
    else:
        shape, joint = node.shape("shape"), node.get("joint")
        try:
            bits = list(_flat(joint, shape, node.at("joint"), _boolean))
        except DocumentError:
            raise node.error("joint", f"expected nested lists of booleans of shape {list(shape)}") from None
        mask = np.array(bits, dtype=bool).reshape(shape)
    node.done()
    return mask

