"""Reading a space document: one reader per JSON type, the :class:`Node` whose typed getters
are those readers, the decoder registry and :func:`decode_space`; numbers and labels both ways.

A reader is ``(raw JSON value, its path, the node's depth) -> value`` and raises the
:class:`DocumentError` naming the path. Nothing here evaluates code or imports a module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from spacealg.core.catalog import catalogued, entries
from spacealg.core.space import MAX_DEPTH

SPECIAL_NUMBERS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
OMIT = object()  # a field left out of the document (a writer's answer, a reader's default)
Reader = Callable[..., Any]
"""Reads one field: ``(raw JSON value, its path[, the node's depth]) -> value``, or raises
the :class:`DocumentError` naming the path."""


class DocumentError(ValueError):
    """A malformed space document; the message names the path of the offending field."""

    __module__ = "spacealg.serialize"  # where users import it from (and tracebacks name it)


def fail(path: str, message: str) -> DocumentError:
    return DocumentError(f"from_json: {f'at {path}: ' if path else 'the document: '}{message}")


def expected(path: str, what: str, value: Any) -> DocumentError:
    try:
        text = repr(value)
    except Exception:
        text = "<unprintable>"
    text = text if len(text) <= 60 else text[:57] + "..."
    return fail(path, f"expected {what}, got {type(value).__name__} {text}")


# -- readers ------------------------------------------------------------------------------------


def _checked(test: Callable[[Any], bool], what: str) -> Reader:
    """The reader of the values that pass ``test`` (``what`` names them in errors)."""

    def read(value: Any, path: str, depth: int = 0) -> Any:
        if not test(value):
            raise expected(path, what, value)
        return value

    return read


read_integer = _checked(lambda v: isinstance(v, int) and not isinstance(v, bool), "an int")
"""Read a JSON integer (not a boolean) at ``path``, or raise the DocumentError naming the path."""
read_string = _checked(lambda v: isinstance(v, str), "a string")
read_boolean = _checked(lambda v: isinstance(v, bool), "true or false")
_real = _checked(
    lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), 'a number (or "inf", "-inf", "nan")'
)


def read_number(value: Any, path: str, depth: int = 0) -> int | float:
    """A JSON number, or one of the strings "inf", "-inf", "nan"."""
    special = isinstance(value, str) and value in SPECIAL_NUMBERS
    return SPECIAL_NUMBERS[value] if special else _real(value, path)  # type: ignore[no-any-return]


def list_of(item: Reader, what: str) -> Reader:
    """The reader of a list whose entries ``item`` reads (``what`` names them in errors)."""

    def read(value: Any, path: str, depth: int = 0) -> list[Any]:
        if not isinstance(value, list):
            raise expected(path, f"a list of {what}", value)
        return [item(entry, f"{path}[{i}]", depth) for i, entry in enumerate(value)]

    return read


def pairs_of(item: Reader, what: str, keyed: bool = False) -> Reader:
    """The reader of a list of ``[label, item]`` pairs, in order; with ``keyed``, an object
    of items is read too (its string keys in order)."""

    def read(value: Any, path: str, depth: int = 0) -> list[tuple[Any, Any]]:
        if keyed and isinstance(value, Mapping):
            return [(k, item(v, f"{path}.{k}", depth)) for k, v in value.items()]
        if not isinstance(value, list):
            raise expected(path, f"{'an object or ' if keyed else ''}a list of [key, {what}] pairs", value)
        pairs = []
        for i, pair in enumerate(value):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise expected(f"{path}[{i}]", f"a [key, {what}] pair", pair)
            pairs.append((decode_label(pair[0], f"{path}[{i}][0]"), item(pair[1], f"{path}[{i}][1]", depth)))
        return pairs

    return read


_dims = list_of(read_integer, "non-negative ints")


def read_shape(value: Any, path: str, depth: int = 0) -> tuple[int, ...]:
    dims = tuple(_dims(value, path))
    if any(d < 0 for d in dims):
        raise fail(path, f"expected non-negative ints, got {value!r}")
    return dims


def read_dtype(value: Any, path: str, depth: int = 0) -> np.dtype:
    text = read_string(value, path)
    try:
        dtype = np.dtype(text)
    except Exception:  # numpy parses dtype strings: "(1,2" is a SyntaxError
        raise fail(path, f"unknown dtype {text!r}") from None
    if dtype.kind not in "biuf":
        raise fail(path, f"expected a bool, integer or floating dtype, got {text!r}")
    return dtype


def read_flat(value: Any, shape: tuple[int, ...], path: str, item: Reader = read_number) -> Iterator[Any]:
    """The entries of nested lists of ``shape``, in C order, each read by ``item``."""
    if not shape:
        yield item(value, path)
        return
    if not isinstance(value, list) or len(value) != shape[0]:
        raise expected(path, f"a list of length {shape[0]} (bounds of shape {shape})", value)
    for i, entry in enumerate(value):
        yield from read_flat(entry, shape[1:], f"{path}[{i}]", item)


def read_space(value: Any, path: str, depth: int) -> Any:
    return decode_space(value, path, depth + 1)


read_spaces = list_of(read_space, "spaces")
read_named = pairs_of(read_space, "space", keyed=True)  # an object of spaces, or [label, space] pairs


def _typed(reader: Reader) -> Callable[..., Any]:
    def read(self: Node, name: str, default: Any = ...) -> Any:
        return self.read(name, reader, default)

    return read


class Node:
    """One JSON object of a document being read: typed field access, errors with paths.

    Every field read is marked; :meth:`done` rejects the fields nobody read (typos).
    """

    __module__ = "spacealg.serialize"

    def __init__(self, value: Any, path: str, depth: int = 0) -> None:
        if not isinstance(value, Mapping):
            raise expected(path, "an object", value)
        self.value, self.path, self.depth = value, path, depth
        self._read: set[str] = set()

    def at(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def error(self, name: str, message: str) -> DocumentError:
        return fail(self.at(name), message)

    def has(self, name: str) -> bool:
        return name in self.value

    def get(self, name: str, default: Any = ...) -> Any:
        """The raw value of field ``name`` (required unless a default is given)."""
        self._read.add(name)
        if name not in self.value and default is ...:
            raise fail(self.path, f"missing field {name!r}")
        return self.value.get(name, default)

    def read(self, name: str, reader: Reader, default: Any = ...) -> Any:
        """Field ``name`` through ``reader`` (``default`` as it is where the field is absent)."""
        if default is not ... and name not in self.value:
            return self.get(name, default)
        return reader(self.get(name), self.at(name), self.depth)

    string, integer, boolean = _typed(read_string), _typed(read_integer), _typed(read_boolean)
    number, shape, dtype = _typed(read_number), _typed(read_shape), _typed(read_dtype)
    space, spaces, named_spaces = _typed(read_space), _typed(read_spaces), _typed(read_named)

    def done(self) -> None:
        """Raise for fields that no reader asked for."""
        extra = [k for k in self.value if k not in self._read]
        if extra:
            raise fail(self.path, f"unexpected field(s) {', '.join(map(repr, extra))}")


# -- numbers and labels, both ways ------------------------------------------------------------


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


def decode_label(value: Any, path: str, depth: int = 0) -> Any:
    """The inverse of :func:`encode_label` (a reader)."""
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, list):
        return tuple(decode_label(v, f"{path}[{i}]") for i, v in enumerate(value))
    if isinstance(value, Mapping) and set(value) == {"float"} and value["float"] in SPECIAL_NUMBERS:
        return SPECIAL_NUMBERS[value["float"]]
    raise expected(path, 'a label (string, number, boolean, null, array, or {"float": "inf"})', value)


# -- the decoders, one per kind -----------------------------------------------------------------

_DECODERS: dict[str, Callable[[Node], Any]] = {}
#: the decoder of every class catalogued in spacealg.core.catalog (its arguments, generically)
CATALOGUED = "(catalogued)"


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
        raise fail(path, f"spaces nested deeper than spacealg's limit of {MAX_DEPTH}")
    node = Node(value, path, depth)
    kind = node.string("kind")
    function = _DECODERS.get(kind)
    if function is None and catalogued(kind) is not None:  # a kind that catalogued itself (core.catalog)
        function = _DECODERS.get(CATALOGUED)
    if function is None:
        known = sorted({*_DECODERS, *(e.name for e in entries())} - {CATALOGUED})
        raise fail(f"{path}.kind", f"unknown kind {kind!r} (known: {', '.join(known)})")
    try:
        space = function(node)
    except DocumentError:
        raise
    except Exception as error:  # one rule: whatever a constructor or numpy meets, name the path
        raise fail(path, f"{type(error).__name__}: {error}") from None
    node.done()
    return space
