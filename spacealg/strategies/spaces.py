"""``spaces()``: a Hypothesis strategy for random spacealg spaces.

Leaves: intervals (every closedness, finite and infinite ends), finite sets of labels or
numbers, ranges (any step), the types ``bool`` and ``float``, boxes (bool, integer and
floating dtypes; bounded, half-bounded and unbounded entries) and arrays over finite sets,
ranges, ``bool`` and open intervals. Composites: ``TupleProduct``, ``DictProduct``,
``OneOf`` and ``product`` of those, nested up to ``max_depth``; ``Union`` and ``Difference``
(composites ``"union"``, ``"difference"``) only where ``composites`` names them. The leaf kind
``"catalogued"`` (not drawn unless named in ``leaves``) draws the classes catalogued with
examples in :mod:`spacealg.core.catalog` (``OneHot``, a user's kinds), from small ints; the
leaf kind ``"dynamic"`` (likewise) draws ``Dynamic`` arrays of any length along some axes,
over boxes and arrays of ranges or bools (they have no fixed width: flattening refuses them).

``finite_spaces(max_cardinality)`` draws only finite spaces small enough to enumerate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from spacealg.core.catalog import entries
from spacealg.core.protocol import cardinality
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.difference import Difference
from spacealg.spaces.dynamic import DEFAULT_LENGTHS, Dynamic
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.interval import CLOSED_OPTIONS, Interval
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct, product
from spacealg.spaces.union import Union
from spacealg.strategies.gymnasium import gym_spaces, gymnasium_spaces

__all__ = ["COMPOSITE_KINDS", "EXTRA_COMPOSITE_KINDS", "EXTRA_LEAF_KINDS", "FLAVOURS", "LEAF_KINDS",
           "catalogued_spaces", "dynamic_spaces", "finite_spaces", "spaces"]

LEAF_KINDS = ("interval", "finite", "range", "type", "box", "array")
EXTRA_LEAF_KINDS = ("catalogued", "dynamic")  # drawn only where named in ``leaves``
COMPOSITE_KINDS = ("tuple", "dict", "oneof", "product")
EXTRA_COMPOSITE_KINDS = ("union", "difference")  # drawn only where named in ``composites``

_ends = st.one_of(
    st.integers(-100, 100),
    st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32),
)


@st.composite
def intervals(draw: Any) -> Interval:
    """Intervals with every closedness; either end may be infinite."""
    low, high = sorted((draw(_ends), draw(_ends)))
    if draw(st.booleans()) and draw(st.booleans()):
        low = -math.inf
    if draw(st.booleans()) and draw(st.booleans()):
        high = math.inf
    closed = draw(st.sampled_from(CLOSED_OPTIONS))
    if low == high:
        closed = "both"
    return Interval(low, high, closed)


_labels = st.one_of(
    st.text(alphabet="abcdefgh", min_size=1, max_size=4),
    st.integers(-50, 50),
    st.sampled_from([True, False]),
)


@st.composite
def finite_sets(draw: Any) -> FiniteSet:
    kind = draw(st.sampled_from(["labels", "numbers", "mixed"]))
    items: st.SearchStrategy[Any]
    if kind == "labels":
        items = st.text(alphabet="abcdefgh", min_size=1, max_size=4)
    elif kind == "numbers":
        items = st.one_of(st.integers(-50, 50), st.floats(-10, 10, allow_nan=False, width=32))
    else:
        items = _labels
    return FiniteSet(*draw(st.lists(items, min_size=1, max_size=6, unique_by=lambda v: (type(v) is str, v))))


@st.composite
def ranges(draw: Any) -> range:
    start = draw(st.integers(-20, 20))
    step = draw(st.sampled_from([1, 1, 1, 2, 3, -1, -2]))
    n = draw(st.integers(1, 8))
    return range(start, start + step * n, step)


_shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)
_nonempty_shapes = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)

_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, np.bool_]


@st.composite
def boxes(draw: Any, shapes: st.SearchStrategy[tuple[int, ...]] = _shapes) -> Box:
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    shape = draw(shapes)
    size = math.prod(shape)
    if dtype.kind == "b":
        return Box(0, 1, shape=shape, dtype=dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -100), min(int(info.max), 100)
        values: st.SearchStrategy[Any] = st.integers(lo, hi)
    else:
        values = st.floats(-100, 100, allow_nan=False, width=16 if dtype.itemsize == 2 else 32)
    a = np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=np.float64).reshape(shape)
    b = np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=np.float64).reshape(shape)
    low, high = np.minimum(a, b), np.maximum(a, b)
    if dtype.kind in "fi" and draw(st.booleans()):
        masks = st.lists(st.booleans(), min_size=size, max_size=size)
        low = np.where(np.array(draw(masks), dtype=bool).reshape(shape), -np.inf, low)
        high = np.where(np.array(draw(masks), dtype=bool).reshape(shape), np.inf, high)
    return Box(low, high, shape=shape, dtype=dtype)


@st.composite
def arrays(draw: Any) -> Any:
    base = draw(
        st.one_of(
            ranges(),
            finite_sets(),
            st.just(bool),
            intervals().filter(lambda i: i.closed != "both"),
        )
    )
    dims = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    return ArraySpace(base, *dims)


@st.composite
def catalogued_spaces(draw: Any) -> Any:
    """A space of a catalogued class (:mod:`spacealg.core.catalog`) built from small ints."""
    kinds = [e for e in entries() if e.examples is not None]
    if not kinds:
        return draw(st.nothing())
    entry = draw(st.sampled_from(kinds))
    return entry.examples(draw(st.lists(st.integers(0, 7), min_size=4, max_size=8)))


@st.composite
def dynamic_spaces(draw: Any) -> Dynamic:
    """A ``Dynamic`` over a box or an array of a range or ``bool`` (its template, of length 1
    along the dynamic axes), with the default lengths or others from 0 to 3."""
    dims = draw(_nonempty_shapes)
    axes = draw(st.lists(st.integers(0, len(dims) - 1), min_size=1, max_size=len(dims), unique=True))
    shape = tuple(1 if a in axes else d for a, d in enumerate(dims))
    template = draw(st.one_of(boxes(st.just(shape)),
                              st.one_of(ranges(), st.just(bool)).map(lambda base: ArraySpace(base, *shape))))
    lengths = draw(st.one_of(st.just(DEFAULT_LENGTHS), st.lists(st.integers(0, 3), min_size=2, max_size=2).map(
        lambda ends: tuple(sorted(ends)))))
    return Dynamic(template, axes=axes, lengths=lengths)


def _leaf(kind: str) -> st.SearchStrategy[Any]:
    if kind == "catalogued":
        return catalogued_spaces()
    if kind == "dynamic":
        return dynamic_spaces()
    return {
        "interval": intervals(),
        "finite": finite_sets(),
        "range": ranges(),
        "type": st.sampled_from([bool, float]),
        "box": boxes(),
        "array": arrays(),
    }[kind]


FLAVOURS = ("spacealg", "gymnasium", "gym", "any")


def spaces(
    *,
    flavour: str = "spacealg",
    leaves: Sequence[str] = LEAF_KINDS,
    composites: Sequence[str] = COMPOSITE_KINDS,
    max_depth: int = 2,
    max_width: int = 3,
) -> st.SearchStrategy[Any]:
    """Random spaces built from ``leaves`` and ``composites`` up to ``max_depth``.

    ``flavour``: ``"spacealg"`` (spacealg's own spaces and plain objects), ``"gymnasium"``
    or ``"gym"`` (random Gymnasium / legacy Gym spaces of every class, nested up to
    ``max_depth``: :func:`spacealg.strategies.gymnasium.gymnasium_spaces`), or ``"any"``
    (spacealg or Gymnasium). Types (``bool``, ``float``) are plain objects, not spacealg
    instances: they are drawn as leaves only where ``leaves`` includes ``"type"``.
    """
    if flavour not in FLAVOURS:
        raise ValueError(f"spaces: flavour must be one of {FLAVOURS}, got {flavour!r}")
    if flavour in ("gymnasium", "gym", "any"):
        foreign = gym_spaces if flavour == "gym" else gymnasium_spaces
        drawn = foreign(max_depth=max_depth, max_width=max_width)
        if flavour != "any":
            return drawn
        return st.one_of(
            spaces(leaves=leaves, composites=composites, max_depth=max_depth, max_width=max_width), drawn
        )
    unknown = set(leaves) - {*LEAF_KINDS, *EXTRA_LEAF_KINDS} | set(composites) - {*COMPOSITE_KINDS,
                                                                                  *EXTRA_COMPOSITE_KINDS}
    if unknown:
        raise ValueError(f"spaces: unknown kinds {sorted(unknown)}")
    leaf = st.one_of(*[_leaf(k) for k in leaves])
    if max_depth <= 0 or not composites:
        return leaf

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        parts = st.lists(children, min_size=1, max_size=max_width)
        options = {
            "tuple": parts.map(lambda p: TupleProduct(*p)),
            "dict": st.dictionaries(
                st.text(alphabet="abcdefxyz", min_size=1, max_size=3), children, min_size=1, max_size=max_width
            ).map(DictProduct),
            "oneof": parts.map(lambda p: OneOf(*p)),
            "product": parts.map(lambda p: product(*p)),
            "union": parts.map(lambda p: Union(*p)),
            "difference": st.tuples(children, children).map(lambda t: Difference(*t)),
        }
        return st.one_of(*[options[k] for k in composites])

    return st.recursive(leaf, extend, max_leaves=max_width**max_depth)


def finite_spaces(max_cardinality: int = 64, max_depth: int = 2) -> st.SearchStrategy[Any]:
    """Random finite spaces with at most ``max_cardinality`` elements."""
    small_arrays = st.builds(
        lambda base, dims: ArraySpace(base, *dims),
        st.one_of(st.just(bool), st.builds(lambda n: range(n), st.integers(1, 3)), finite_sets()),
        st.lists(st.integers(1, 2), min_size=1, max_size=2),
    )
    small_boxes = boxes(_nonempty_shapes).filter(lambda b: b.integral)
    candidates = spaces(
        leaves=("finite", "range"), composites=("tuple", "dict", "oneof", "product"), max_depth=max_depth
    )
    return st.one_of(candidates, small_arrays, small_boxes).filter(
        lambda s: cardinality(s) <= max_cardinality
    )
