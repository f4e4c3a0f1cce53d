"""Text: strings of ``min_length`` to ``max_length`` characters from a character set
(Gymnasium's ``Text``, with its defaults).

>>> from spacealg import Text, cardinality, index, element
>>> s = Text(3, charset="ab")                   # min_length=1: "a", "b", "aa", ..., "bbb"
>>> cardinality(s), index("ba", s), element(5, s)
(14, 4, 'bb')
>>> s.sample(rng=0) in s, "" in s, "abc" in s
(True, False, False)

``charset`` is a string (its order is kept, duplicates dropped) or a set (sorted, as
Gymnasium does); every character must be a single character. The order is the order of
:func:`elements` (shorter strings first, then by position in the charset) and what the
Gymnasium adapter passes on; equality, like Gymnasium's, compares the *set* of characters.

Sampling is Gymnasium's: a length uniform in ``[min_length, max_length]``, then each
character uniform in the charset. A batch is a unicode array. Text is finite:
``cardinality = sum(k ** n for n in range(min_length, max_length + 1))`` for ``k``
characters. It has no bounds and no ``clamp`` (strings have no nearest member): both
raise TypeError.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from spacealg.core.protocol import check_position, issubspace
from spacealg.core.rng import RngLike, as_generator
from spacealg.core.space import Space
from spacealg.core.styles import FiniteSpaceStyle
from spacealg.spaces._batch import normalize_size
from spacealg.spaces._counting import geometric_count
from spacealg.spaces._kind import register

__all__ = ["ALPHANUMERIC", "Text"]

ALPHANUMERIC = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
"""Gymnasium's default character set, in its (sorted) order."""


def _length(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"Text: {name} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"Text: {name} must be non-negative, got {value}")
    return int(value)


def _characters(charset: Any) -> str:
    if isinstance(charset, (set, frozenset)):
        chars: Iterable[Any] = sorted(charset)
    elif isinstance(charset, (str, list, tuple)):
        chars = charset
    else:
        kind = type(charset).__qualname__
        raise TypeError(f"Text: charset must be a str or a set of characters, got a {kind}")
    unique = list(dict.fromkeys(chars))
    invalid = [c for c in unique if not isinstance(c, str) or len(c) != 1]
    if invalid:
        raise ValueError(f"Text: charset must hold single characters, got {invalid!r}")
    return "".join(unique)


class Text(Space):
    """Strings of ``min_length`` to ``max_length`` characters drawn from ``charset``."""

    max_length: int
    min_length: int
    charset: str
    _chars: frozenset[str]
    _array: np.ndarray
    _positions: dict[str, int]

    def __init__(self, max_length: int, *, min_length: int = 1, charset: Any = ALPHANUMERIC) -> None:
        high, low = _length("max_length", max_length), _length("min_length", min_length)
        if low > high:
            raise ValueError(f"Text: min_length ({low}) must not exceed max_length ({high})")
        chars = _characters(charset)
        self._set(
            max_length=high,
            min_length=low,
            charset=chars,
            _chars=frozenset(chars),
            _array=np.array(list(chars), dtype="<U1"),
            _positions={c: i for i, c in enumerate(chars)},
        )

    def _key(self) -> tuple[Any, ...]:
        return (self.min_length, self.max_length, self._chars)

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs: dict[str, Any] = {}
        if self.min_length != 1:
            kwargs["min_length"] = self.min_length
        if self.charset != ALPHANUMERIC:
            kwargs["charset"] = self.charset
        return (self.max_length,), kwargs


def _contains(x: Any, space: Text) -> bool:
    return isinstance(x, str) and space.min_length <= len(x) <= space.max_length and all(c in space._chars for c in x)


def _sample(space: Text, size: Any = None, *, rng: RngLike = None) -> Any:
    if not space.charset and space.min_length > 0:
        raise ValueError(f"sample: {space!r} is empty (no characters, min_length > 0)")
    generator = as_generator(rng)
    k = len(space.charset)
    if size is None:
        n = int(generator.integers(space.min_length, space.max_length + 1))
        return "".join(space._array[generator.integers(k, size=n)]) if k else ""
    shape = normalize_size(size)
    width = space.max_length
    lengths = generator.integers(space.min_length, space.max_length + 1, size=shape)
    if width == 0 or k == 0:
        return np.zeros(shape, dtype="<U1")
    chars = space._array[generator.integers(k, size=(*shape, width))]
    chars[np.arange(width) >= lengths[..., None]] = ""
    return np.ascontiguousarray(chars).view(f"<U{width}").reshape(shape)


def _isin(batch: Any, space: Text) -> np.ndarray:
    array = batch if isinstance(batch, np.ndarray) else np.asarray(batch, dtype=object)
    member = np.frompyfunc(lambda x: _contains(x, space), 1, 1)
    return np.asarray(member(array), dtype=bool).reshape(array.shape)


def _no_bounds(space: Text) -> Any:
    raise TypeError(f"bounds: {space!r} has no bounds (strings are not numbers)")


def _no_clamp(x: Any, space: Text) -> Any:
    raise TypeError(f"clamp: {space!r} has no nearest member to a string (strings are not ordered)")


def _cardinality(space: Text) -> int:
    return geometric_count(len(space.charset), space.min_length, space.max_length)


def _elements(space: Text) -> Iterator[str]:
    lengths = range(space.min_length, space.max_length + 1)
    return ("".join(chars) for n in lengths for chars in itertools.product(space.charset, repeat=n))


def _index(x: Any, space: Text) -> int:
    if not _contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    offset = geometric_count(len(space.charset), space.min_length, len(x) - 1)
    position = 0
    for c in x:
        position = position * len(space.charset) + space._positions[c]
    return offset + position


def _element(i: Any, space: Text) -> str:
    i = check_position(i, _cardinality(space))
    k = len(space.charset)
    for n in range(space.min_length, space.max_length + 1):  # the k**n strings of each length, shortest first
        if i < k**n:
            digits = []
            for _ in range(n):
                i, digit = divmod(i, k)
                digits.append(space.charset[digit])
            return "".join(reversed(digits))
        i -= k**n
    raise AssertionError("unreachable")


register(Text, contains=_contains, sample=_sample, isin=_isin, eltype=lambda space: str, elsize=lambda space: (),
         SpaceStyle=lambda space: FiniteSpaceStyle(()), bounds=_no_bounds, clamp=_no_clamp, clamp_=_no_clamp,
         cardinality=_cardinality, elements=_elements, index=_index, element=_element)


@issubspace.register(Text, Text)
def _text_subset(a: Text, b: Text) -> bool:
    if not a.charset:  # at most the empty string
        return a.min_length > 0 or _contains("", b)
    return a.min_length >= b.min_length and a.max_length <= b.max_length and a._chars <= b._chars
