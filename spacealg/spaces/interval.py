"""Interval: a real interval, closed, half-open or open (pandas' ``closed`` vocabulary).

>>> from spacealg import Interval, clamp, bounds
>>> s = Interval(0, 1, closed="left")        # [0, 1)
>>> 0 in s, 1 in s, 0.5 in s
(True, False, True)
>>> clamp(2.0, s) < 1.0                       # open end: the nearest float inside
True
>>> bounds(Interval(1, 5))                    # integer ends stay integers
(1, 5)

Elements are Python floats (``contains`` accepts ints, floats, bools and numpy real scalars or 0-d arrays); batches are
float64 arrays. The type ``float`` (and numpy's float types) used as a space is
``Interval(-inf, inf, closed="neither")``, the finite reals.

Sampling (Gymnasium's rule): uniform when both ends are finite, standard normal when
neither is, ``low + Exp(1)`` / ``high - Exp(1)`` when only one is; open ends are never
drawn. Laws are those of the protocol (see :mod:`spacealg.core.protocol`).
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from spacealg.core.leaf import exact_value, inner_float
from spacealg.core.protocol import (
    contains,
    element,
    elements,
    index,
    intersect,
    issubspace,
)
from spacealg.core.space import Space
from spacealg.core.styles import ContinuousSpaceStyle, FiniteSpaceStyle
from spacealg.spaces._kind import register

__all__ = ["CLOSED_OPTIONS", "Closed", "Interval", "RealLike", "closed_option", "float_inward", "real_value"]

Closed = Literal["both", "left", "right", "neither"]
CLOSED_OPTIONS: tuple[Closed, ...] = ("both", "left", "right", "neither")
#: What an interval's ends may be, for type checkers (bools are refused at run time).
RealLike = float | np.integer[Any] | np.floating[Any]
_CLOSED_BY_ENDS: dict[tuple[bool, bool], Closed] = {
    (True, True): "both",
    (True, False): "left",
    (False, True): "right",
    (False, False): "neither",
}


def closed_option(value: object) -> Closed:
    """``value`` as a ``closed`` option (for text read from elsewhere); ValueError otherwise."""
    for option in CLOSED_OPTIONS:
        if value == option:
            return option
    raise ValueError(f"Interval: closed must be one of {CLOSED_OPTIONS}, got {value!r}")


def _real_end(name: str, value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"Interval: {name} must be a real number, got {value!r}")
    if isinstance(value, numbers.Integral):
        if abs(int(value)) > 2**1023:
            raise ValueError(f"Interval: {name} is an int beyond the float range")
        return int(value)
    exact = float(value)
    if math.isnan(exact):
        raise ValueError(f"Interval: {name} must not be NaN")
    if isinstance(value, np.floating) and math.isfinite(exact) and value != exact:  # a longdouble
        raise ValueError(f"Interval: {name} = {value!r} holds no float64 (an Interval's ends are ints or "
                         "floats, read exactly); round it, or use a Box of its dtype")
    return exact


def float_inward(end: int | float, closed: bool, *, up: bool) -> float:
    """The float64 member nearest to ``end`` (:func:`spacealg.core.leaf.inner_float`)."""
    return float(inner_float(end, _FLOAT64, up, not closed))


_FLOAT64 = np.dtype(np.float64)


def real_value(x: Any) -> int | float | Fraction | None:
    """``x`` as the exact Python number it stores (bools are 0 and 1; a longdouble no float
    holds: its integer when whole, else a ``Fraction``), or None if ``x`` is not a real
    scalar (numpy's timedelta64 is an integer type but no number)."""
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return x  # np.float64 is a float, but compares with ints in float64: it is read below
    if isinstance(x, np.ndarray):
        if x.shape != ():
            return None
        x = x[()]
    if isinstance(x, (np.integer, np.floating, np.bool_)) and x.dtype.kind in "biuf":
        value = x.item()  # float16/float32 widen exactly; longdouble stays itself
        return value if isinstance(value, (int, float)) else _wide_value(value)
    return None


def _wide_value(value: Any) -> int | float | Fraction:
    """A longdouble as an exact Python number: float64 rounds ``nextafter(1, 2)``."""
    if not np.isfinite(value) or float(value) == value:
        return float(value)
    exact = exact_value(value)
    return int(exact) if exact.denominator == 1 else exact  # type: ignore[union-attr]


class Interval(Space):
    """The real interval from ``low`` to ``high``; ``closed`` is both, left, right or neither."""

    _fields = ("low", "high", "closed")
    low: int | float
    high: int | float
    closed: Closed
    closed_left: bool
    closed_right: bool
    inner_low: float
    inner_high: float

    def __init__(self, low: RealLike, high: RealLike, closed: Closed = "both") -> None:
        low, high = _real_end("low", low), _real_end("high", high)
        closed = closed_option(closed)
        if low > high:
            raise ValueError(f"Interval: low ({low}) must not exceed high ({high})")
        closed_left = closed in ("both", "left")
        closed_right = closed in ("both", "right")
        if low == high and not (closed_left and closed_right):
            raise ValueError(f"Interval: ({low}, {high}) with closed={closed!r} is empty")
        if (math.isinf(low) and low > 0) or (math.isinf(high) and high < 0):
            raise ValueError("Interval: low must not be +inf and high must not be -inf")
        # the nearest members to the ends (the ends themselves when closed)
        inner_low = float_inward(low, closed_left, up=True)
        inner_high = float_inward(high, closed_right, up=False)
        if inner_low > inner_high:  # e.g. (0, 5e-324): elements are floats, and none lies inside
            raise ValueError(
                f"Interval: ({low}, {high}) with closed={closed!r} contains no floating-point number"
            )
        self._set(
            low=low,
            high=high,
            closed=closed,
            closed_left=closed_left,
            closed_right=closed_right,
            inner_low=inner_low,
            inner_high=inner_high,
        )

    @property
    def is_point(self) -> bool:
        """Whether the interval is the single point ``low == high``."""
        return self.low == self.high

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.closed == "both":
            return (self.low, self.high), {}
        return (self.low, self.high), {"closed": self.closed}


REALS = Interval(-math.inf, math.inf, closed="neither")
"""The real line: the space of ``float`` and of NumPy's floating types."""


@contains.register(Interval)
def _contains(x: Any, space: Interval) -> bool:
    # a fast path: by the leaf model (LeafModel.inside) 3.3 us, here 0.46 (timeit contains(0.5, Interval(0, 1)))
    # members by exact value, as everywhere in spacealg: bools are the numbers 0 and 1,
    # float32(0.1) is 0.100000001490116..., compared with the ends as Python numbers
    value = real_value(x)
    if value is None or value != value:  # not a real, or NaN
        return False
    above = value >= space.low if space.closed_left else value > space.low
    below = value <= space.high if space.closed_right else value < space.high
    return bool(above and below)


register(Interval, eltype=lambda space: float, elsize=lambda space: (),
         SpaceStyle=lambda space: FiniteSpaceStyle(()) if space.is_point else ContinuousSpaceStyle(()),
         bounds=lambda space: (space.low, space.high), cardinality=lambda space: 1 if space.is_point else math.inf)


def _require_point(space: Interval, what: str) -> None:
    if not space.is_point:
        raise TypeError(f"{what}: {space!r} is not finite")


@elements.register(Interval)
def _elements(space: Interval) -> Any:
    _require_point(space, "elements")
    return iter((space.low,))


@index.register(Interval)
def _index(x: Any, space: Interval) -> int:
    _require_point(space, "index")
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    return 0


@element.register(Interval)
def _element(i: Any, space: Interval) -> Any:
    _require_point(space, "element")
    if i != 0:
        raise ValueError(f"element: i must be 0 for a one-point interval, got {i!r}")
    return space.low


@issubspace.register(Interval, Interval)
def _interval_subset(a: Interval, b: Interval) -> bool:
    low_ok = a.low > b.low or (a.low == b.low and (b.closed_left or not a.closed_left))
    high_ok = a.high < b.high or (a.high == b.high and (b.closed_right or not a.closed_right))
    return bool(low_ok and high_ok)


@intersect.register(Interval, Interval)
def _interval_intersect(a: Interval, b: Interval) -> Any:
    from spacealg.spaces.finite import FiniteSet

    if a.low > b.low or (a.low == b.low and not a.closed_left):
        low, closed_left = a.low, a.closed_left
    else:
        low, closed_left = b.low, b.closed_left
    if a.high < b.high or (a.high == b.high and not a.closed_right):
        high, closed_right = a.high, a.closed_right
    else:
        high, closed_right = b.high, b.closed_right
    if low > high or (low == high and not (closed_left and closed_right)):
        return FiniteSet()
    return Interval(low, high, _CLOSED_BY_ENDS[closed_left, closed_right])


# -- the leaf model (spacealg.core.leaf): a float64 number; a Box image unless an end is open ----

from spacealg.core import leaf as _leaf_model  # noqa: E402


@_leaf_model.leaf.register(Interval)
def _interval_leaf(space: Interval) -> _leaf_model.LeafModel:
    open_end = (not space.closed_left and math.isfinite(space.low)) or (
        not space.closed_right and math.isfinite(space.high))
    image = None if open_end else "Box"
    return _leaf_model.LeafModel(image, np.dtype(np.float64), (), float(space.low), float(space.high),
                                 scalar=True, integral=False, open_low=not space.closed_left,
                                 open_high=not space.closed_right, span=(space.low, space.high), space=space)
