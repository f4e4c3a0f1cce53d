"""``members(space)``: a Hypothesis strategy for the elements of any space.

>>> from hypothesis import find
>>> from spacealg import Interval, FiniteSet
>>> from spacealg.strategies import members
>>> find(members(Interval(2, 5)), lambda x: True)        # shrinks to a bound ...
2.0
>>> find(members(Interval(-1, 1)), lambda x: True)       # ... or to zero
0.0
>>> find(members(FiniteSet("up", "down")), lambda x: x != "up")
'down'

``members`` is a generic function with one registration per kind of space, so the rule
table below reads top to bottom; register your own kind with
``members.register(MyKind)(lambda space: strategy)``.

=============================  =====================================================
space                          members drawn, and what they shrink toward
=============================  =====================================================
``Interval``                   floats inside (open ends excluded, no infinities);
                               toward zero if inside, else the nearer end
``FiniteSet``                  its items; toward the first item
``range``                      its integers; toward the one nearest zero
``Box``                        arrays of its dtype and shape; each entry toward zero
                               if inside, else toward a bound
``ArraySpace``                 arrays of members of the base; entrywise as the base
``TupleProduct``/``DictProduct``  tuples/dicts of the components' members
``OneOf``                      ``(i, x)``; toward the first branch
``Categorical``                its integers in its dtype; toward zero or the start
``Text``                       strings of the charset; toward the shortest, made of
                               the first character
``Sequence``                   tuples (stacked if ``stack``) of up to 8 members; toward ``()``
``Graph``                      1 to 8 nodes, up to 8 edges; toward one node, no edges
Gymnasium / Gym spaces         members of the adapted space (:func:`as_space`) cast to
                               the Gymnasium dtypes, so ``g.contains(x)`` holds;
                               composites recurse on their Gymnasium subspaces
a plain object                 ``members(as_space(obj))``
any other finite space         ``element(i, space)`` for a drawn ``i < cardinality``;
                               toward ``element(0, space)``
any other type with ``sample`` ``sample(space, rng=seed)`` for a drawn seed (members,
                               but no shrinking toward simple ones)
=============================  =====================================================

Laws: every drawn value is a member (``contains(x, space)``; ``g.contains(x)`` for a
Gymnasium or Gym space ``g``); an empty space gives ``hypothesis.strategies.nothing()``;
the shrunk value of a trivial search is a simple member (a bound or zero, the first
label, the shortest sequence, the empty text). Floats are finite: the infinities that an
unbounded Box formally contains are not drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gymnasium.spaces
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spacealg.adapters.native import gym_class_of
from spacealg.adapters.records import Record
from spacealg.core.generic import as_space, coerce, generic
from spacealg.core.leaf import all_equal
from spacealg.core.protocol import cardinality, element, sample
from spacealg.core.space import Space
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet, range_length
from spacealg.spaces.graph import Graph, GraphInstance
from spacealg.spaces.interval import Interval
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import Sequence, stack_items
from spacealg.spaces.text import Text

__all__ = ["members"]

Strategy = st.SearchStrategy


@generic(0)
def members(space: Any) -> Strategy[Any]:
    """A Hypothesis strategy drawing members of ``space`` (see the module's table and laws).

    Unregistered types go through :func:`as_space`; a type that ``as_space`` does not
    change but that ``sample`` accepts gets seeds mapped through ``sample``.
    """
    rule = _foreign_rule(space)
    if rule is not None:
        return rule(space)
    try:
        return coerce(members, (space,), {})  # type: ignore[no-any-return]
    except TypeError:
        if not isinstance(space, Space) and as_space.dispatch(type(space)) is as_space.dispatch(object):
            raise
    try:
        n = cardinality(space)
    except TypeError:
        n = math.inf
    if n == 0:
        return st.nothing()
    if n < math.inf:  # a finite kind without a rule of its own: its elements, shrinking toward the first
        return st.integers(0, int(n) - 1).map(lambda i: element(i, space))
    return st.integers(0, 2**32 - 1).map(lambda seed: sample(space, rng=seed))


# -- spacealg's own spaces ---------------------------------------------------------------


@members.register(Interval)
def _interval(space: Interval) -> Strategy[float]:
    low, high = space.inner_low, space.inner_high  # the nearest members to the ends
    if low > high:  # an open interval with no float inside
        return st.nothing()
    return st.floats(
        min_value=low if math.isfinite(low) else None,
        max_value=high + 0.0 if math.isfinite(high) else None,  # + 0.0: Hypothesis wants 0.0 <= max, not -0.0
        allow_nan=False,
        allow_infinity=False,
    )


@members.register(FiniteSet)
def _finite(space: FiniteSet) -> Strategy[Any]:
    return st.sampled_from(space.items) if space.items else st.nothing()


@members.register(range)
def _range(space: range) -> Strategy[int]:
    return _range_items(space)


def _range_items(space: range, cast: Callable[[int], Any] = int) -> Strategy[Any]:
    """The items of ``space`` (``cast`` applied), shrinking toward the one nearest zero."""
    n = range_length(space)
    if n == 0:
        return st.nothing()
    # offsets from the element nearest zero, so that shrinking (toward offset 0) lands there
    nearest = min(max(-space.start // space.step, 0), n - 1)
    if 0 < nearest + 1 < n and abs(space[nearest + 1]) < abs(space[nearest]):
        nearest += 1
    start, step = space.start + space.step * nearest, space.step
    # one map whatever the cast (the checker's hot path): a Discrete(3) draw 15 us, 22 with two (bench_before_after)
    return st.integers(-nearest, n - 1 - nearest).map(lambda k: cast(start + step * k))


def _scalar_strategy(dtype: np.dtype, low: Any, high: Any) -> Strategy[Any]:
    """Entries of one dtype between ``low`` and ``high`` (values of that dtype)."""
    if dtype.kind == "b":
        return st.booleans() if low != high else st.just(bool(low))
    if dtype.kind in "iu":
        return st.integers(int(low), int(high))
    return st.floats(
        min_value=float(low) if np.isfinite(low) else None,
        max_value=float(high) + 0.0 if np.isfinite(high) else None,  # -0.0 -> 0.0 (as for Interval)
        allow_nan=False,
        allow_infinity=False,
        width=min(64, dtype.itemsize * 8),  # type: ignore[arg-type]
    )


def _uniform(space: Box) -> bool:
    low, high = space.low, space.high
    return all_equal(low) and all_equal(high)


@members.register(Box)
def _box(space: Box) -> Strategy[np.ndarray]:
    if _uniform(space):
        low = space.low.flat[0] if space.low.size else 0
        high = space.high.flat[0] if space.high.size else 0
        return hnp.arrays(space.dtype, space.shape, elements=_scalar_strategy(space.dtype, low, high))
    if space.integral:
        return _nonuniform_integer_box(space)
    return _nonuniform_real_box(space)


def _anchor(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Per entry, the member that shrinking aims at: zero if inside, else the nearer bound."""
    return np.minimum(np.maximum(np.zeros_like(low), low), high)


def _nonuniform_integer_box(space: Box) -> Strategy[np.ndarray]:
    # exact integer arithmetic on object arrays; a signed draw r lands at anchor + r (wrapped)
    low, high = space.low.astype(object), space.high.astype(object)
    anchor = _anchor(low, high)
    above, below = high - anchor + 1, anchor - low + 1

    def place(r: np.ndarray) -> np.ndarray:
        r = r.astype(object)
        up = r >= 0
        value = np.where(up, anchor + r % above, anchor - (-r) % below)
        return np.asarray(value.astype(object), dtype=space.dtype).reshape(space.shape)

    return hnp.arrays(np.int64, space.shape, elements=st.integers(-(2**63), 2**63 - 1)).map(place)


def _nonuniform_real_box(space: Box) -> Strategy[np.ndarray]:
    # a draw v in [-1, 1] per entry: 0 is the anchor, ±1 the bounds (v/(1-|v|) when unbounded)
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    anchor = _anchor(low, high)
    above, below = high - anchor, anchor - low
    largest = float(np.finfo(space.dtype).max) if space.dtype.itemsize <= 8 else np.inf

    def place(v: np.ndarray) -> np.ndarray:
        magnitude = np.abs(v)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            unbounded_step = magnitude / (1.0 - magnitude)
            width = np.where(v >= 0, above, below)
            step = np.where(
                np.isfinite(width), magnitude * np.where(np.isfinite(width), width, 0.0), unbounded_step
            )
            value = np.where(v >= 0, anchor + step, anchor - step)
        value = np.clip(np.clip(value, low, high), -largest, largest)
        return value.astype(space.dtype)

    return hnp.arrays(np.float64, space.shape, elements=st.floats(-1.0, 1.0)).map(place)


@members.register(ArraySpace)
def _array(space: ArraySpace) -> Strategy[np.ndarray]:
    dtype = np.asarray(sample(space.space, (1,), rng=0)).dtype
    target = np.dtype("U") if dtype.kind == "U" else dtype

    def convert(entries: np.ndarray) -> np.ndarray:
        if target.kind == "O":
            return entries
        return entries.astype(target)

    return hnp.arrays(object, space.dims, elements=members(space.space)).map(convert)


@members.register(Categorical)
def _categorical(space: Categorical) -> Strategy[Any]:
    if space.scalar:
        scalar_type = space.dtype.type
        return _range_items(range(int(space.low), int(space.high) + 1), scalar_type)
    return members(Box(space.low, space.high, shape=space.shape, dtype=space.dtype))


# products and OneOf read their parts as ``.spaces``, as Gymnasium's and Gym's classes do


@members.register(TupleProduct)
def _tuple(space: Any) -> Strategy[tuple[Any, ...]]:
    return st.tuples(*(members(s) for s in space.spaces))


@members.register(DictProduct)
def _dict(space: Any) -> Strategy[dict[Any, Any]]:
    return st.fixed_dictionaries({k: members(s) for k, s in space.spaces.items()})


@members.register(OneOf)
def _oneof(space: Any) -> Strategy[tuple[int, Any]]:
    return st.one_of(*(st.tuples(st.just(i), members(s)) for i, s in enumerate(space.spaces)))


MAX_SEQUENCE_LENGTH = 8
"""The longest sequence, text beyond ``min_length`` aside, and the most nodes and edges drawn."""


@members.register(Text)
def _text_space(space: Text) -> Strategy[str]:
    if not space.charset:
        return st.just("") if space.min_length == 0 else st.nothing()
    longest = min(space.max_length, space.min_length + MAX_SEQUENCE_LENGTH)
    characters = st.sampled_from(space.charset)  # shrinks toward the first character
    return st.lists(characters, min_size=space.min_length, max_size=longest).map("".join)


@members.register(Sequence)
def _sequence(space: Sequence) -> Strategy[Any]:
    items = st.lists(members(space._space), max_size=MAX_SEQUENCE_LENGTH)
    if space.stack:
        return items.map(lambda values: stack_items(values, space._space))
    return items.map(tuple)


@members.register(Graph)
def _graph(space: Graph) -> Strategy[GraphInstance]:
    node_space, edge_space = space._node, space._edge

    @st.composite
    def graphs(draw: Any) -> GraphInstance:
        nodes = draw(st.lists(members(node_space), min_size=1, max_size=MAX_SEQUENCE_LENGTH))
        stacked_nodes = stack_items(nodes, node_space)
        if edge_space is None:
            return GraphInstance(stacked_nodes, None, None)
        n = len(nodes)
        pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
        links = draw(st.lists(pairs, max_size=MAX_SEQUENCE_LENGTH))
        if not links:
            return GraphInstance(stacked_nodes, None, None)
        edges = [draw(members(edge_space)) for _ in links]
        return GraphInstance(stacked_nodes, stack_items(edges, edge_space), np.asarray(links, dtype=np.int64))

    return graphs()


# -- Gymnasium and Gym spaces -------------------------------------------------------------
# Leaves go through the adapters (as_space) and are cast to the foreign space's dtype;
# composites recurse on their foreign subspaces, so nested dtypes are the foreign ones.


def _cast_array(g: Any, clip: bool = False) -> Strategy[np.ndarray]:
    """Members of the adapted space as arrays of ``g``'s dtype and shape; with ``clip``, also
    clipped into ``g``'s stored bounds (legacy Gym stores an unbounded integer end as the
    dtype's limit minus 2, and its contains() compares with that). One map (the checker's hot
    path: a Box(2,) draws in 110 us, 117 with the clip as a second map; bench_before_after's
    Tuple(Discrete(3), Box(2,)) row: 127 us, 145 with both second maps)."""
    dtype, shape = np.dtype(g.dtype), g.shape
    if not clip:
        return members(as_space(g)).map(lambda x: np.asarray(x, dtype=dtype).reshape(shape))
    low, high = np.asarray(g.low), np.asarray(g.high)
    return members(as_space(g)).map(
        lambda x: np.clip(np.asarray(x, dtype=dtype).reshape(shape), low, high).astype(dtype, copy=False)
    )


def _foreign_box(g: Any) -> Strategy[np.ndarray]:
    return _cast_array(g, clip=True)


def _cast_scalar(g: Any) -> Strategy[Any]:
    scalar_type = np.dtype(g.dtype).type
    space = as_space(g)
    return _range_items(space, scalar_type) if isinstance(space, range) else members(space).map(scalar_type)


def _text(g: Any) -> Strategy[str]:
    return members(as_space(g)).map(str)


def _foreign_sequence(g: Any) -> Strategy[Any]:
    items = st.lists(members(g.feature_space), max_size=MAX_SEQUENCE_LENGTH)
    if not getattr(g, "stack", False):
        return items.map(tuple)
    return items.map(lambda values: _foreign_stack(g.feature_space, values))


def _foreign_stack(space: Any, values: list[Any]) -> Any:
    """Members of a foreign ``space`` in the stacked form its family checks against.

    Gymnasium: its own ``concatenate`` into ``batch_space(space, n)``, which its stacked
    Sequence and its Graph (any node and edge space) iterate over: an array for Box and
    Discrete, a tuple of members for Text, Sequence, OneOf, Graph, tuples of stacks for
    Tuple... Gym 0.26: a plain array, as its Graph allows Box and Discrete features only.
    """
    if isinstance(space, gymnasium.spaces.Space):
        from gymnasium.vector.utils import concatenate, create_empty_array

        empty = create_empty_array(space, len(values))
        return concatenate(space, values, empty) if values else empty  # type: ignore[arg-type]
    shape = tuple(getattr(space, "shape", None) or ())
    return np.asarray(values, dtype=space.dtype).reshape((len(values), *shape))


def _foreign_graph(g: Any) -> Strategy[Any]:
    graph_instance = _graph_instance_class(g)

    @st.composite
    def graphs(draw: Any) -> Any:
        nodes = draw(st.lists(members(g.node_space), min_size=1, max_size=MAX_SEQUENCE_LENGTH))
        if g.edge_space is None:
            return graph_instance(nodes=_foreign_stack(g.node_space, nodes), edges=None, edge_links=None)
        n = len(nodes)
        links = draw(
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=MAX_SEQUENCE_LENGTH)
        )
        edges = [draw(members(g.edge_space)) for _ in links]
        return graph_instance(
            nodes=_foreign_stack(g.node_space, nodes),
            edges=_foreign_stack(g.edge_space, edges),
            edge_links=np.asarray(links, dtype=np.int64).reshape((len(links), 2)),
        )

    return graphs()


def _graph_instance_class(g: Any) -> type:
    module = __import__(type(g).__module__, fromlist=["GraphInstance"])
    return module.GraphInstance  # type: ignore[no-any-return]


_FOREIGN_RULES: dict[str, Callable[[Any], Strategy[Any]]] = {
    "Box": _foreign_box,
    "MultiDiscrete": _cast_array,
    "MultiBinary": _cast_array,
    "Discrete": _cast_scalar,
    "Text": _text,
    "Tuple": _tuple,
    "Dict": _dict,
    "OneOf": _oneof,
    "Sequence": _foreign_sequence,
    "Graph": _foreign_graph,
}

def _foreign_rule(space: Any) -> Callable[[Any], Strategy[Any]] | None:
    """The rule for a Gym space (Gymnasium's classes are registered at import; Gym's are
    found by class name, so that importing this module does not import Gym and nothing is
    registered at call time), else None."""
    gym_class = gym_class_of(space)
    return _FOREIGN_RULES.get(gym_class[1]) if gym_class is not None and gym_class[0] == "gym" else None


for _name, _rule in _FOREIGN_RULES.items():
    if hasattr(gymnasium.spaces, _name):
        members.register(getattr(gymnasium.spaces, _name))(_rule)


@members.register(Record)
def _record(space: Record) -> Strategy[Any]:
    """Records of the product's members (a Jumanji observation is one)."""
    return st.builds(space.build, members(space.product))
