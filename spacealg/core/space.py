"""The base class of spacealg's own spaces: operators, immutability, pickling, repr.

Nothing here is needed to *be* a space (any registered type is one); the base class only
gives spacealg's classes Python's operators:

=============  ===========================  =========================================
operator       meaning                      law
=============  ===========================  =========================================
``x in s``     ``contains(x, s)``           never raises
``a * b``      ``product(a, b)``            associative
``a ** n``     ``ArraySpace(a, n)``         ``cardinality(a ** n) == cardinality(a) ** n``
``a + b``      ``OneOf(a, b)``              ``cardinality`` adds
``a | b``      ``union(a, b)``              ``x in a | b`` iff in either
``a - b``      ``difference(a, b)``         ``x in a - b`` iff in ``a``, not ``b``
``a <= b``     ``issubspace(a, b)``         partial order
``a & b``      ``intersect(a, b)``          ``x in a & b`` iff in both
``len(s)``     ``cardinality(s)``           finite spaces only (TypeError otherwise)
``iter(s)``    ``elements(s)``              finite spaces only
=============  ===========================  =========================================

Subclasses store their constructor arguments in ``_fields`` (a tuple of attribute
names, in constructor order); equality, hashing, pickling and ``repr`` derive from them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from spacealg.core import hooks, protocol
from spacealg.core.rng import RngLike

__all__ = ["MAX_DEPTH", "Space", "format_value", "nested_depth"]

MAX_DEPTH = 64
"""The deepest nesting of composite spaces (products, OneOf, arrays, Sequence, Graph) the
constructors accept: every operation (``contains``, ``==``, pickle, ``repr`` and ``eval``,
JSON) works at this depth, and a deeper space is refused with ValueError at construction."""


def nested_depth(constructor: str, components: Any) -> int:
    """The depth of a composite space built by ``constructor`` (its name) over
    ``components`` (a leaf space is 1).

    Raises ValueError naming ``constructor`` beyond :data:`MAX_DEPTH`.
    """
    depth = 1 + max((getattr(c, "_depth", 1) for c in components), default=1)
    if depth > MAX_DEPTH:
        raise ValueError(
            f"{constructor}: spaces nested {depth} deep exceed spacealg's limit of {MAX_DEPTH} "
            "(spacealg.core.space.MAX_DEPTH), the depth every operation supports"
        )
    return depth


class Space:
    """Base class for spacealg's spaces: immutable value objects with set operators."""

    __slots__ = ("_hash",)
    _hash: int
    _fields: tuple[str, ...] = ()
    _depth: int = 1  # composite spaces set their nesting depth (see nested_depth)

    # -- immutability --------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; build a new space instead")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _set(self, **attributes: Any) -> None:
        for name, value in attributes.items():
            object.__setattr__(self, name, value)

    # -- value semantics -----------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        """What equality and hashing compare (override when fields hold arrays)."""
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        try:
            return self._hash  # type: ignore[no-any-return]
        except AttributeError:
            value = hash((type(self).__name__, self._key()))
            object.__setattr__(self, "_hash", value)
            return value

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Positional and keyword arguments that rebuild this space."""
        return tuple(getattr(self, f) for f in self._fields), {}

    def __reduce__(self) -> tuple[Any, ...]:
        args, kwargs = self._constructor_args()
        if kwargs:
            return (_rebuild, (type(self), args, kwargs))
        return (type(self), args)

    def __repr__(self) -> str:
        args, kwargs = self._constructor_args()
        parts = [format_value(a) for a in args]
        parts += [f"{k}={format_value(v)}" for k, v in kwargs.items()]
        return f"{type(self).__name__}({', '.join(parts)})"

    # -- operators -----------------------------------------------------------------
    def __contains__(self, x: Any) -> bool:
        return protocol.contains(x, self)  # type: ignore[no-any-return]

    # the kinds these operators build live above the core: spacealg.spaces fills the hooks
    def __mul__(self, other: Any) -> Any:
        return hooks.product(self, other)

    def __rmul__(self, other: Any) -> Any:
        return hooks.product(other, self)

    def __pow__(self, dims: int | tuple[int, ...]) -> Any:
        return hooks.array_of(self, *(dims if isinstance(dims, tuple) else (dims,)))

    def __add__(self, other: Any) -> Any:
        return hooks.one_of(self, other)

    def __radd__(self, other: Any) -> Any:
        return hooks.one_of(other, self)

    def __or__(self, other: Any) -> Any:
        return hooks.union(self, other)

    def __ror__(self, other: Any) -> Any:
        return hooks.union(other, self)

    def __sub__(self, other: Any) -> Any:
        return hooks.difference(self, other)

    def __rsub__(self, other: Any) -> Any:
        return hooks.difference(other, self)

    def __le__(self, other: Any) -> bool:
        return protocol.issubspace(self, other)  # type: ignore[no-any-return]

    def __ge__(self, other: Any) -> bool:
        return protocol.issubspace(other, self)  # type: ignore[no-any-return]

    def __lt__(self, other: Any) -> bool:
        return self <= other and self != other

    def __gt__(self, other: Any) -> bool:
        return self >= other and self != other

    def __and__(self, other: Any) -> Any:
        return protocol.intersect(self, other)

    def __rand__(self, other: Any) -> Any:
        return protocol.intersect(other, self)

    def __len__(self) -> int:
        n = protocol.cardinality(self)
        if n == math.inf:
            raise TypeError(f"len() of an infinite space: {self!r} (use cardinality())")
        return int(n)

    def __iter__(self) -> Iterator[Any]:
        return iter(protocol.elements(self))

    def sample(
        self,
        size: int | tuple[int, ...] | None = None,
        *,
        rng: RngLike = None,
        mask: Any = None,
        probability: Any = None,
    ) -> Any:
        """``spacealg.sample(self, size, rng=rng, mask=mask, probability=probability)``."""
        return protocol.sample(self, size, rng=rng, mask=mask, probability=probability)


def _rebuild(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return cls(*args, **kwargs)


_TYPE_NAMES = {bool: "bool", int: "int", float: "float", str: "str", complex: "complex"}


def _scalars(array: np.ndarray) -> Any:
    """Nested lists of the array's numpy scalars (``tolist`` would widen float32 to float)."""
    if not isinstance(array, np.ndarray):  # a row of an object array: the Python number itself
        return array
    if array.ndim == 0:
        return array[()]
    return [_scalars(row) for row in array]


def format_value(value: Any) -> str:
    """A repr of a constructor argument that evaluates back in ``spacealg``'s namespace
    with numpy as ``np`` (numbers with infinities, arrays, dtypes, types, nested tuples)."""
    if isinstance(value, type):
        if value in _TYPE_NAMES:
            return _TYPE_NAMES[value]
        if issubclass(value, np.generic):
            return f"np.{value.__name__}"
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, np.dtype):
        return f"np.{value.type.__name__}"
    if isinstance(value, np.ndarray):
        items = format_value(_scalars(value))
        return f"np.array({items}, dtype=np.{value.dtype.type.__name__})"
    if isinstance(value, (float, np.floating)) and not isinstance(value, bool):
        if math.isinf(value):
            return "-np.inf" if value < 0 else "np.inf"
        if math.isnan(value):
            return "np.nan"
        # numpy floats print their shortest round-tripping digits at their own precision
        return str(value) if isinstance(value, np.floating) else repr(float(value))
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, (list, tuple)):
        inner = ", ".join(format_value(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {format_value(v)}" for k, v in value.items()) + "}"
    return repr(value)
