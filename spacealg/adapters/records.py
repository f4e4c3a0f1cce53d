"""``Record``: the named product whose members are records built by a constructor.

JAX environments return their observations as records: a ``NamedTuple`` (Jumanji), a
dataclass or ``flax.struct`` (gymnax, Craftax, pgx states). ``Record(constructor, spaces)``
is the set of ``constructor(**fields)`` with ``fields`` a member of ``DictProduct(spaces)``:

>>> from typing import NamedTuple
>>> import spacealg as sa
>>> class Point(NamedTuple):
...     x: int
...     y: int
>>> space = Record(Point, {"x": range(3), "y": range(2)})
>>> sa.contains(Point(2, 1), space), sa.contains({"x": 2, "y": 1}, space)
(True, False)

Laws: a value is a member exactly when it is an instance of ``constructor`` whose fields
(``_asdict()``, ``vars()`` or the attributes named by the keys) are a member of the
``DictProduct``; ``sample``, ``elements``, ``element`` and the Hypothesis strategy
``members`` give instances of ``constructor``; ``isin`` takes one record holding a batch in
each field; ``eltype`` is ``constructor``; ``clamp`` clamps field by field into a new
record; ``cardinality``, ``index`` and the style are the ``DictProduct``'s. Equality
compares the constructor and the product.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from spacealg.core.protocol import clamp, contains, element, elements, eltype, index, isin, sample
from spacealg.core.rng import RngLike
from spacealg.core.space import format_value
from spacealg.spaces.product import DictProduct

__all__ = ["Record", "fields_of"]


def fields_of(value: Any, keys: Any) -> dict[str, Any] | None:
    """The fields of a record by ``keys`` (None where one is missing)."""
    try:
        if hasattr(value, "_asdict"):
            found = value._asdict()
            return {k: found[k] for k in keys}
        if isinstance(value, dict):  # a dict is not a record (a chex dataclass, a Mapping, is)
            return None
        return {k: getattr(value, k) for k in keys}
    except (KeyError, AttributeError, TypeError):
        return None


class Record(DictProduct):
    """``Record(constructor, spaces)``: the records ``constructor(**fields)`` with fields in
    ``DictProduct(spaces)`` (key order kept). See the module docstring."""

    constructor: Any

    def __init__(self, constructor: Any, spaces: Mapping[str, Any]) -> None:
        if not callable(constructor):
            raise TypeError(f"Record: constructor must be a class or function, got {constructor!r}")
        super().__init__(spaces, sort_keys=False)
        self._set(constructor=constructor)

    @property
    def product(self) -> DictProduct:
        """The ``DictProduct`` of the fields."""
        return DictProduct(dict(self._shown), sort_keys=False)

    def build(self, fields: Mapping[str, Any]) -> Any:
        """``constructor(**fields)``."""
        return self.constructor(**fields)

    def _key(self) -> tuple[Any, ...]:
        return (self.constructor, *super()._key())

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.constructor, dict(self._shown)), {}

    def __repr__(self) -> str:
        name = getattr(self.constructor, "__qualname__", repr(self.constructor))
        return f"Record({name}, {format_value(dict(self._shown))})"


def _fields(x: Any, space: Record) -> dict[str, Any] | None:
    if not isinstance(space.constructor, type) or not isinstance(x, space.constructor):
        return None
    return fields_of(x, space.keys())


@contains.register(Record)
def _contains(x: Any, space: Record) -> bool:
    found = _fields(x, space)
    return found is not None and bool(contains(found, space.product))


@sample.register(Record)
def _sample(space: Record, size: Any = None, *, rng: RngLike = None) -> Any:
    return space.build(sample(space.product, size, rng=rng))


@isin.register(Record)
def _isin(batch: Any, space: Record) -> np.ndarray:
    found = _fields(batch, space)
    if found is None:
        name = space.constructor.__qualname__
        raise ValueError(f"isin: a batch of {space!r} is one {name} holding a batch per field")
    return isin(found, space.product)  # type: ignore[no-any-return]


@eltype.register(Record)
def _eltype(space: Record) -> Any:
    return space.constructor


@clamp.register(Record)
def _clamp(x: Any, space: Record) -> Any:
    found = fields_of(x, space.keys())
    if found is None:
        raise TypeError(f"clamp: {x!r} has not the fields {list(space.keys())} of {space!r}")
    return space.build(clamp(found, space.product))


@elements.register(Record)
def _elements(space: Record) -> Iterator[Any]:
    return (space.build(fields) for fields in elements(space.product))


@element.register(Record)
def _element(i: Any, space: Record) -> Any:
    return space.build(element(i, space.product))


@index.register(Record)
def _index(x: Any, space: Record) -> int:
    found = _fields(x, space)
    if found is None:
        raise ValueError(f"index: {x!r} is not a member of {space!r}")
    return index(found, space.product)  # type: ignore[no-any-return]
