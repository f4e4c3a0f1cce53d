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
always succeeds). Each NODE is an object with a ``kind``:

============  =====================================================================
kind          fields
============  =====================================================================
interval      ``low``, ``high`` (numbers), ``closed`` (both/left/right/neither)
finite        ``items``: labels, in order
range         ``start``, ``stop``, ``step`` (ints)
categorical   ``dtype``, ``nvec``, ``start`` (ints; with ``shape``, nested lists of
              that shape: the array kind, Gymnasium's MultiDiscrete)
box           ``dtype`` (numpy name), ``shape``, ``low``, ``high`` (a number, or nested
              lists of numbers of that shape; unbounded integer entries are ``"inf"``)
array         ``base`` (a node), ``dims``
tuple         ``spaces``: a list of nodes
oneof         ``spaces``: a list of nodes
dict          ``spaces``: an object of nodes (string keys, in order) or a list of
              ``[key, node]`` pairs (any label keys); ``sort_keys`` (a boolean,
              Gymnasium's flag, written only when false)
text          ``max_length``, ``min_length``, ``charset`` (a string, order kept)
sequence      ``space`` (a node), ``stack`` (a boolean)
graph         ``node_space``, ``edge_space`` (nodes; ``edge_space`` may be null)
type          ``name``: ``bool``, ``float``, ``int``, ``str`` or ``numpy.<dtype name>``
dataclass     ``class`` (``module.QualName``), ``fields``: an object of nodes
============  =====================================================================

Numbers are JSON numbers (ints stay ints) or the strings ``"inf"``, ``"-inf"`` and
``"nan"``. Labels (finite-set items, dict keys) are strings, ints, floats, booleans or
null; a JSON array stands for a tuple of labels and ``{"float": "inf"}`` for a
non-finite float label.

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
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import Sequence
from spacealg.spaces.text import Text

__all__ = [
    "FORMAT",
    "VERSION",
    "DocumentError",
    "Node",
    "decode_space",
    "decoder",
    "encode_space",
    "from_json",
    "to_json",
]

FORMAT = "spacealg.space"
VERSION = 1

_SPECIAL_NUMBERS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class DocumentError(ValueError):
    """A malformed space document; the message names the path of the offending field."""


# -- the public pair ----------------------------------------------------------------------


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
        raise DocumentError(
            f"from_json: at version: unsupported version {version} (this spacealg reads version {VERSION})"
        )
    space = top.space("space")
    top.done()
    return space


# -- reading a document ---------------------------------------------------------------------


class Node:
    """One JSON object of a document being read: typed field access, errors with paths.

    Every field read is marked; :meth:`done` rejects the fields nobody read (typos).
    """

    def __init__(self, value: Any, path: str, depth: int = 0) -> None:
        if not isinstance(value, Mapping):
            raise DocumentError(f"from_json: {_at(path)}expected an object, got {_describe(value)}")
        self.value = value
        self.path = path
        self.depth = depth
        self._read: set[str] = set()

    def at(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def error(self, name: str, message: str) -> DocumentError:
        return DocumentError(f"from_json: at {self.at(name)}: {message}")

    def has(self, name: str) -> bool:
        return name in self.value

    def get(self, name: str, default: Any = ...) -> Any:
        """The raw value of field ``name`` (required unless a default is given)."""
        self._read.add(name)
        if name not in self.value:
            if default is ...:
                raise DocumentError(f"from_json: {_at(self.path)}missing field {name!r}")
            return default
        return self.value[name]

    def string(self, name: str, default: Any = ...) -> str:
        value = self.get(name, default)
        if not isinstance(value, str):
            raise self.error(name, f"expected a string, got {_describe(value)}")
        return value

    def integer(self, name: str, default: Any = ...) -> int:
        return read_integer(self.get(name, default), self.at(name))

    def boolean(self, name: str, default: Any = ...) -> bool:
        value = self.get(name, default)
        if not isinstance(value, bool):
            raise self.error(name, f"expected true or false, got {_describe(value)}")
        return value

    def number(self, name: str) -> int | float:
        return read_number(self.get(name), self.at(name))

    def shape(self, name: str) -> tuple[int, ...]:
        value = self.get(name)
        if not isinstance(value, list):
            raise self.error(name, f"expected a list of non-negative ints, got {_describe(value)}")
        dims = tuple(read_integer(d, f"{self.at(name)}[{i}]") for i, d in enumerate(value))
        if any(d < 0 for d in dims):
            raise self.error(name, f"expected non-negative ints, got {value!r}")
        return dims

    def space(self, name: str) -> Any:
        return decode_space(self.get(name), self.at(name), self.depth + 1)

    def spaces(self, name: str) -> list[Any]:
        value = self.get(name)
        if not isinstance(value, list):
            raise self.error(name, f"expected a list of spaces, got {_describe(value)}")
        return [decode_space(v, f"{self.at(name)}[{i}]", self.depth + 1) for i, v in enumerate(value)]

    def named_spaces(self, name: str) -> list[tuple[Any, Any]]:
        """An object of spaces, or a list of ``[label, space]`` pairs (keys in order)."""
        value = self.get(name)
        where = self.at(name)
        if isinstance(value, Mapping):
            return [(k, decode_space(v, f"{where}.{k}", self.depth + 1)) for k, v in value.items()]
        if isinstance(value, list):
            pairs = []
            for i, pair in enumerate(value):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise DocumentError(
                        f"from_json: at {where}[{i}]: expected a [key, space] pair, got {_describe(pair)}"
                    )
                key = decode_label(pair[0], f"{where}[{i}][0]")
                pairs.append((key, decode_space(pair[1], f"{where}[{i}][1]", self.depth + 1)))
            return pairs
        raise self.error(name, f"expected an object or a list of [key, space] pairs, got {_describe(value)}")

    def done(self) -> None:
        """Raise for fields that no reader asked for."""
        extra = [k for k in self.value if k not in self._read]
        if extra:
            names = ", ".join(map(repr, extra))
            raise DocumentError(f"from_json: {_at(self.path)}unexpected field(s) {names}")


def _at(path: str) -> str:
    return f"at {path}: " if path else "the document: "


def _describe(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = "<unprintable>"
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def read_integer(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DocumentError(f"from_json: at {path}: expected an int, got {_describe(value)}")
    return value


def read_number(value: Any, path: str) -> int | float:
    """A JSON number, or one of the strings "inf", "-inf", "nan"."""
    if isinstance(value, str) and value in _SPECIAL_NUMBERS:
        return _SPECIAL_NUMBERS[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DocumentError(
            f'from_json: at {path}: expected a number (or "inf", "-inf", "nan"), got {_describe(value)}'
        )
    return value


def write_number(value: Any) -> int | float | str:
    """A number as a JSON value: ints and finite floats as themselves, others as strings."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    value = float(value)
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


# -- labels ---------------------------------------------------------------------------------


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
    raise DocumentError(
        f"from_json: at {path}: expected a label (string, number, boolean, null, array, or "
        f'{{"float": "inf"}}), got {_describe(value)}'
    )


# -- encoding: one registration per kind -----------------------------------------------------


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
        raise DocumentError(
            f"from_json: at {path}: spaces nested deeper than spacealg's limit of {MAX_DEPTH}"
        )
    node = Node(value, path, depth)
    kind = node.string("kind")
    try:
        build = _DECODERS[kind]
    except KeyError:
        raise DocumentError(
            f"from_json: at {path}.kind: unknown kind {kind!r} (known: {', '.join(sorted(_DECODERS))})"
        ) from None
    try:
        space = build(node)
    except DocumentError:
        raise
    except Exception as error:  # one rule: whatever a constructor or numpy meets, name the path
        raise DocumentError(f"from_json: at {path}: {type(error).__name__}: {error}") from None
    node.done()
    return space


# interval ------------------------------------------------------------------------------------


@encode_space.register(Interval)
def _encode_interval(space: Interval) -> dict[str, Any]:
    low, high = write_number(space.low), write_number(space.high)
    return {"kind": "interval", "low": low, "high": high, "closed": space.closed}


@decoder("interval")
def _decode_interval(node: Node) -> Interval:
    return Interval(node.number("low"), node.number("high"), closed_option(node.string("closed", "both")))


# finite --------------------------------------------------------------------------------------


@encode_space.register(FiniteSet)
def _encode_finite(space: FiniteSet) -> dict[str, Any]:
    return {"kind": "finite", "items": [encode_label(item) for item in space.items]}


@decoder("finite")
def _decode_finite(node: Node) -> FiniteSet:
    items = node.get("items")
    if not isinstance(items, list):
        raise node.error("items", f"expected a list of labels, got {_describe(items)}")
    return FiniteSet(*(decode_label(v, f"{node.at('items')}[{i}]") for i, v in enumerate(items)))


# range ---------------------------------------------------------------------------------------


@encode_space.register(range)
def _encode_range(space: range) -> dict[str, Any]:
    return {"kind": "range", "start": space.start, "stop": space.stop, "step": space.step}


@decoder("range")
def _decode_range(node: Node) -> range:
    return range(node.integer("start", 0), node.integer("stop"), node.integer("step", 1))


# box -----------------------------------------------------------------------------------------


def _dtype_name(dtype: np.dtype) -> str:
    return dtype.name if np.dtype(dtype.name) == dtype else dtype.str


def _read_dtype(node: Node, name: str) -> np.dtype:
    text = node.string(name)
    try:
        dtype = np.dtype(text)
    except Exception:  # numpy parses dtype strings: "(1,2" is a SyntaxError
        raise node.error(name, f"unknown dtype {text!r}") from None
    if dtype.kind not in "biuf":
        raise node.error(name, f"expected a bool, integer or floating dtype, got {text!r}")
    return dtype


def _encode_bounds(values: np.ndarray, bounded: np.ndarray, infinity: float, uniform: bool) -> Any:
    if values.size == 0:
        return 0
    if uniform:  # one number, without touching the (possibly huge, broadcast) arrays
        return write_number(values.flat[0] if bounded.flat[0] else infinity)
    numbers = np.where(bounded, values.astype(object), infinity)

    def nest(a: np.ndarray) -> Any:
        return [nest(row) for row in a] if a.ndim > 1 else [write_number(v) for v in a]

    return nest(numbers) if numbers.ndim else write_number(numbers[()])


@encode_space.register(Box)
def _encode_box(space: Box) -> dict[str, Any]:
    low, high = space.low, space.high
    uniform = low.size == 0 or space._low_scalar is not None or bool(
        (low.flat[0] == low).all()
        and (high.flat[0] == high).all()
        and (space.bounded_below.flat[0] == space.bounded_below).all()
        and (space.bounded_above.flat[0] == space.bounded_above).all()
    )
    if space.integral:
        below, above = space.bounded_below, space.bounded_above
    else:  # float boxes store their infinities themselves
        below = above = np.ones(space.shape, dtype=bool)
    return {
        "kind": "box",
        "dtype": _dtype_name(space.dtype),
        "shape": list(space.shape),
        "low": _encode_bounds(low, below, -math.inf, uniform),
        "high": _encode_bounds(high, above, math.inf, uniform),
    }


def _flat_numbers(value: Any, shape: tuple[int, ...], path: str) -> Iterator[int | float]:
    """The numbers of a nested list of ``shape``, in C order; DocumentError if misshapen."""
    if not shape:
        yield read_number(value, path)
        return
    if not isinstance(value, list) or len(value) != shape[0]:
        raise DocumentError(
            f"from_json: at {path}: expected a list of length {shape[0]} (bounds of shape {shape}), "
            f"got {_describe(value)}"
        )
    for i, item in enumerate(value):
        yield from _flat_numbers(item, shape[1:], f"{path}[{i}]")


def _exact_float(v: int | float) -> bool:
    try:
        return isinstance(v, float) or float(v) == v
    except OverflowError:
        return False


def _decode_bounds(node: Node, name: str, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    value = node.get(name)
    if not isinstance(value, list):
        return read_number(value, node.at(name))
    numbers = list(_flat_numbers(value, shape, node.at(name)))
    if dtype.kind == "f" or all(_exact_float(v) for v in numbers):
        try:
            return np.array(numbers, dtype=np.float64).reshape(shape)
        except OverflowError:
            raise node.error(name, "a bound is an int beyond the float range") from None
    # Integer bounds beyond 2**53: Box takes unbounded entries only as float infinities,
    # which would round these ints, so unbounded entries become the dtype's limits (the
    # space is equal; only the repr loses its "inf").
    info = np.iinfo(dtype)
    exact = []
    for v in numbers:
        if isinstance(v, float) and math.isinf(v):
            exact.append(int(info.min) if v < 0 else int(info.max))
        elif isinstance(v, float):
            raise node.error(name, f"expected integer bounds for the dtype {dtype}, got {v!r}")
        else:
            exact.append(v)
    try:
        return np.array(exact, dtype=dtype).reshape(shape)
    except OverflowError:
        raise node.error(name, f"bounds lie outside the range of {dtype}") from None


@decoder("box")
def _decode_box(node: Node) -> Box:
    dtype = _read_dtype(node, "dtype")
    shape = node.shape("shape")
    low = _decode_bounds(node, "low", shape, dtype)
    high = _decode_bounds(node, "high", shape, dtype)
    return Box(low, high, shape=shape, dtype=dtype)


# categorical ---------------------------------------------------------------------------------


def _nest(values: np.ndarray) -> Any:
    return values.tolist() if values.ndim else int(values[()])


def _nested_ints(node: Node, name: str, shape: tuple[int, ...]) -> np.ndarray:
    numbers = list(_flat_numbers(node.get(name), shape, node.at(name)))
    for i, v in enumerate(numbers):
        if not isinstance(v, int):
            raise node.error(name, f"expected ints, got {v!r} at flat position {i}")
    return np.array(numbers, dtype=object).reshape(shape)


@encode_space.register(Categorical)
def _encode_categorical(space: Categorical) -> dict[str, Any]:
    node: dict[str, Any] = {"kind": "categorical", "dtype": _dtype_name(space.dtype)}
    if space.scalar:
        node.update(nvec=int(space.nvec), start=int(space.start))
    else:
        node.update(shape=list(space.shape), nvec=_nest(np.asarray(space.nvec)), start=_nest(space.low))
    return node


@decoder("categorical")
def _decode_categorical(node: Node) -> Any:
    """Scalar kind (Discrete) without ``shape``; array kind (MultiDiscrete) with it."""
    dtype = _read_dtype(node, "dtype")
    if not node.has("shape"):
        return Categorical(node.integer("nvec"), start=node.integer("start", 0), dtype=dtype)
    shape = node.shape("shape")
    nvec = _nested_ints(node, "nvec", shape)
    start = _nested_ints(node, "start", shape) if node.has("start") else 0
    return Categorical(nvec, start=start, dtype=dtype)


# array ---------------------------------------------------------------------------------------


@encode_space.register(ArraySpace)
def _encode_array(space: ArraySpace) -> dict[str, Any]:
    return {"kind": "array", "base": encode_space(space.base), "dims": list(space.dims)}


@decoder("array")
def _decode_array(node: Node) -> Any:
    return ArraySpace(node.space("base"), *node.shape("dims"))


# products and sums ------------------------------------------------------------------------------


@encode_space.register(TupleProduct)
def _encode_tuple(space: TupleProduct) -> dict[str, Any]:
    return {"kind": "tuple", "spaces": [encode_space(s) for s in space.spaces]}


@decoder("tuple")
def _decode_tuple(node: Node) -> TupleProduct:
    return TupleProduct(*node.spaces("spaces"))


@encode_space.register(OneOf)
def _encode_oneof(space: OneOf) -> dict[str, Any]:
    return {"kind": "oneof", "spaces": [encode_space(s) for s in space.spaces]}


@decoder("oneof")
def _decode_oneof(node: Node) -> OneOf:
    return OneOf(*node.spaces("spaces"))


def _encode_named(spaces: Mapping[Any, Any]) -> Any:
    if all(isinstance(k, str) for k in spaces):
        return {k: encode_space(s) for k, s in spaces.items()}
    return [[encode_label(k), encode_space(s)] for k, s in spaces.items()]


@encode_space.register(DictProduct)
def _encode_dict(space: DictProduct) -> dict[str, Any]:
    node = {"kind": "dict", "spaces": _encode_named(space._constructor_args()[0][0])}
    if not space.sort_keys:
        node["sort_keys"] = False
    return node


@decoder("dict")
def _decode_dict(node: Node) -> DictProduct:
    return DictProduct(node.named_spaces("spaces"), sort_keys=node.boolean("sort_keys", True))


# variable-size spaces ----------------------------------------------------------------------------


@encode_space.register(Text)
def _encode_text(space: Text) -> dict[str, Any]:
    return {
        "kind": "text",
        "min_length": space.min_length,
        "max_length": space.max_length,
        "charset": space.charset,
    }


@decoder("text")
def _decode_text(node: Node) -> Text:
    max_length = node.integer("max_length")
    min_length = node.integer("min_length", 1)
    if node.has("charset"):
        return Text(max_length, min_length=min_length, charset=node.string("charset"))
    return Text(max_length, min_length=min_length)


@encode_space.register(Sequence)
def _encode_sequence(space: Sequence) -> dict[str, Any]:
    return {"kind": "sequence", "space": encode_space(space.space), "stack": space.stack}


@decoder("sequence")
def _decode_sequence(node: Node) -> Sequence:
    return Sequence(node.space("space"), stack=node.boolean("stack", False))


@encode_space.register(Graph)
def _encode_graph(space: Graph) -> dict[str, Any]:
    edge = None if space.edge_space is None else encode_space(space.edge_space)
    return {"kind": "graph", "node_space": encode_space(space.node_space), "edge_space": edge}


@decoder("graph")
def _decode_graph(node: Node) -> Graph:
    edge = node.get("edge_space", None)
    return Graph(node.space("node_space"), None if edge is None else node.space("edge_space"))


# types used as spaces ------------------------------------------------------------------------

_PYTHON_TYPES: dict[str, type] = {"bool": bool, "float": float, "int": int, "str": str}


def _type_name(t: type) -> str | None:
    for name, known in _PYTHON_TYPES.items():
        if t is known:
            return name
    if issubclass(t, np.generic) and np.dtype(t).kind in "biuf":
        return f"numpy.{np.dtype(t).name}"
    return None


@encode_space.register(type)
def _encode_type(space: type) -> dict[str, Any]:
    name = _type_name(space)
    if name is not None:
        return {"kind": "type", "name": name}
    return encode_space(declared_space(space))  # type: ignore[no-any-return]  # dataclasses


@decoder("type")
def _decode_type(node: Node) -> type:
    name = node.string("name")
    if name in _PYTHON_TYPES:
        return _PYTHON_TYPES[name]
    if name.startswith("numpy."):
        try:
            dtype = np.dtype(name[len("numpy.") :])
        except Exception:
            dtype = np.dtype(object)
        if dtype.kind in "biuf":
            return dtype.type
    raise node.error("name", f"unknown type {name!r} (known: bool, float, int, str, numpy.<dtype name>)")


# dataclass spaces ----------------------------------------------------------------------------


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
    name = node.string("class")
    fields = dict(node.named_spaces("fields"))
    cls = declared_dataclass(name, fields)
    if cls is None:
        raise node.error(
            "class",
            f"the dataclass {name!r} is not declared in this process: import its module and "
            "decorate it with @spacealg.spaceclass (or call spacealg.space(cls)) before from_json",
        )
    return DataclassSpace(cls, fields)


# -- masked spaces (spacealg.spaces.masked): a self-contained rule ------------------------------
#
# kind "masked": ``space`` (a node) and ``mask``: null, {"joint": nested booleans, "shape": [...]},
# {"tuple": [masks]} or {"dict": [[key, mask], ...]} (the mask as given, in spacealg's form).

from spacealg.spaces.masked import Masked  # noqa: E402


def _encode_mask(mask: Any) -> Any:
    if mask is None:
        return None
    if isinstance(mask, tuple):
        return {"tuple": [_encode_mask(m) for m in mask]}
    if isinstance(mask, Mapping):
        return {"dict": [[encode_label(k), _encode_mask(v)] for k, v in mask.items()]}
    array = np.asarray(mask, dtype=bool)
    return {"joint": array.tolist(), "shape": list(array.shape)}


def _decode_mask(value: Any, path: str) -> Any:
    if value is None:
        return None
    node = Node(value, path)
    if node.has("tuple"):
        parts = node.get("tuple")
        if not isinstance(parts, list):
            raise node.error("tuple", f"expected a list of masks, got {_describe(parts)}")
        mask: Any = tuple(_decode_mask(p, f"{node.at('tuple')}[{i}]") for i, p in enumerate(parts))
    elif node.has("dict"):
        pairs = node.get("dict")
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise node.error("dict", f"expected a list of [key, mask] pairs, got {_describe(pairs)}")
        mask = {
            decode_label(k, f"{node.at('dict')}[{i}][0]"): _decode_mask(v, f"{node.at('dict')}[{i}][1]")
            for i, (k, v) in enumerate(pairs)
        }
    else:
        shape = node.shape("shape")
        bits = node.get("joint")
        array = np.array(bits, dtype=object).reshape(-1) if shape and 0 not in shape else np.array([], dtype=object)
        if not all(isinstance(b, bool) for b in array) or np.asarray(bits, dtype=object).shape != shape:
            raise node.error("joint", f"expected nested lists of booleans of shape {list(shape)}")
        mask = np.asarray(bits, dtype=bool).reshape(shape)
    node.done()
    return mask


@encode_space.register(Masked)
def _encode_masked(space: Masked) -> dict[str, Any]:
    return {"kind": "masked", "space": encode_space(space.space), "mask": _encode_mask(space.mask)}


@decoder("masked")
def _decode_masked(node: Node) -> Masked:
    return Masked(node.space("space"), _decode_mask(node.get("mask"), node.at("mask")))
