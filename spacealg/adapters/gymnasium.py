"""Gymnasium adapters: ``from_gymnasium`` and ``to_gymnasium``, one registration per class.

Law: ``to_gymnasium(from_gymnasium(g)) == g`` for every Gymnasium space ``g``, and the
attributes Gymnasium's ``==`` ignores survive too (exact bounds and boundedness of a Box,
``start`` and dtypes, Text's character order, Dict key order, Sequence ``stack``, Graph's
``None`` edge space). The one exception is Gymnasium's own: ``MultiBinary([n])`` and
``MultiBinary(n)`` are the same space (same shape, set and samples) but unequal under
Gymnasium's ``==``; both come back as ``MultiBinary(n)``.

=====================================  ==================================================
Gymnasium                              spacealg (``from_gymnasium``)
=====================================  ==================================================
``Box(low, high, shape, dtype)``       ``Box`` (same bounds, boundedness and dtype)
``Discrete(n, start, dtype)``          ``Categorical(n, start, dtype)``: ``range(start, start + n)``
                                       when int64
``MultiDiscrete(nvec, dtype, start)``  ``Categorical(nvec, start, dtype)``: an
                                       ``ArraySpace(range(s, s + n), *shape)`` when uniform int64
``MultiBinary(n)``                     ``ArraySpace(bool, *shape)``
``Text(max_length, ...)``              ``Text`` (same lengths, characters in the same order)
``Tuple(spaces)``                      ``TupleProduct`` (nesting kept)
``Dict(spaces)``                       ``DictProduct`` (key order kept)
``Sequence(space, stack)``             ``Sequence(space, stack)``
``Graph(node_space, edge_space)``      ``Graph(node_space, edge_space)`` (``None`` kept)
``OneOf(spaces)``                      ``OneOf``
=====================================  ==================================================

``to_gymnasium`` runs the table backwards, and maps the spacealg spaces with no single
Gymnasium class as follows (see :mod:`spacealg.adapters.encoding` for the value mapping
``encode``/``decode``):

=========================================  =========================================
spacealg                                   Gymnasium (``to_gymnasium``)
=========================================  =========================================
``FiniteSet`` of ``n`` items               ``Discrete(n)``; item ``i`` (in ``index`` order) is ``i``
``range`` with step 1 / other steps        ``Discrete(n, start)`` / ``Discrete(n)`` by position
closed ``Interval`` (or infinite ends)     ``Box(low, high, shape=(), dtype=float64)``
``ArraySpace(range(a, b), *dims)``         ``MultiDiscrete`` with ``nvec = b - a``, ``start = a``
``ArraySpace(bool, *dims)``                ``MultiBinary(dims)`` (an int for one dimension)
``ArraySpace`` of another finite set       ``MultiDiscrete`` of its cardinality, by position
``TupleProduct`` / ``DictProduct``         ``Tuple`` / ``Dict`` of the converted components
=========================================  =========================================

A space with no Gymnasium equivalent (an open interval, an array of one) raises a
TypeError naming it; a Gymnasium space class without an adapter raises a TypeError naming
the class and how to register one::

    @spacealg.from_gymnasium.register(MySpace)
    def _(space): return MySpacealgSpace(...)

    @spacealg.to_gymnasium.register(MySpacealgSpace)
    def _(space): return MySpace(...)

Registering ``from_gymnasium`` is enough for every generic function to accept ``MySpace``
(they reach it through :func:`spacealg.as_space`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium.spaces as gs
import numpy as np

from spacealg.adapters import native
from spacealg.core.generic import as_space, generic
from spacealg.core.image import image_of
from spacealg.core.leaf import leaf, widths
from spacealg.core.plan import components
from spacealg.core.protocol import cardinality, contains, eltype, isin, sample
from spacealg.core.rng import RngLike, as_generator
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.graph import NUM_NODES, Graph
from spacealg.spaces.interval import Interval
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import GEOMETRIC_P, Sequence, object_batch, stacked
from spacealg.spaces.text import Text

__all__ = ["from_gymnasium", "to_gymnasium"]


@generic(0)
def from_gymnasium(space: Any) -> Any:
    """The spacealg space equal, as a set, to the Gymnasium space ``space``.

    Laws: ``to_gymnasium(from_gymnasium(g)) == g`` (see the module's table);
    ``g.contains(x)`` for ``x = sample(from_gymnasium(g))``; ``g.sample()`` is in
    ``from_gymnasium(g)``. Raises TypeError for anything that is not a Gymnasium space.
    """
    raise TypeError(
        f"from_gymnasium: {space!r} (of type {type(space).__qualname__}) is not a Gymnasium space"
    )


@generic(0)
def to_gymnasium(space: Any) -> Any:
    """The Gymnasium space equal to ``space`` (through a documented encoding where no
    Gymnasium class holds the same values; see :func:`spacealg.encode`).

    Plain objects are converted with :func:`spacealg.as_space` first; a Gymnasium space is
    returned as is; a kind with an image (:mod:`spacealg.core.image`) maps to its image's
    Gymnasium space. Raises TypeError naming the space if it has no Gymnasium equivalent.
    """
    converted = as_space(space)
    if converted is space:
        image = image_of(space)
        if image is not None:
            return to_gymnasium(image.space)
        raise TypeError(
            f"to_gymnasium: {space!r} has no Gymnasium equivalent; register one with "
            f"@spacealg.to_gymnasium.register({type(space).__qualname__})"
        )
    return to_gymnasium(converted)


def no_adapter(space: Any, function: str) -> TypeError:
    """The error for a Gymnasium/Gym space class that has no adapter."""
    cls = type(space)
    name = f"{cls.__module__}.{cls.__qualname__}"
    return TypeError(
        f"{function}: no adapter for the space class {name}; register one with "
        f"@spacealg.{function}.register({cls.__qualname__}) returning a spacealg space "
        f"(and @spacealg.to_{function.split('_', 1)[1]}.register for the way back)"
    )


@dataclass(frozen=True)
class Family:
    """A package of Gymnasium-style space classes and what it lacks (Gym 0.26 lacks more).

    The conversion rules below take the family as their last argument, so one table serves
    Gymnasium and the legacy Gym: ``register_family`` registers each rule for the family's
    classes (``from``) and for spacealg's kinds (``to``).
    """

    name: str  # "gymnasium" or "gym"
    spaces: Any  # the module of space classes
    from_: Any  # the generic functions from_<name> and to_<name>
    to: Any
    discrete_dtype: bool = True  # Discrete takes a dtype (Gym: always int64)
    multidiscrete_start: bool = True  # MultiDiscrete takes a start
    sequence_stack: bool = True  # Sequence takes stack=
    graph_features: tuple[str, ...] | None = None  # Graph's allowed feature classes (None: any)

    def lacks(self, space: Any, what: str) -> TypeError:
        return TypeError(f"to_{self.name}: {space!r} has no {self.name} equivalent ({what})")


# -- from_<family>: one rule per class name ---------------------------------------------------


def box_from_native(space: Any, f: Family | None = None) -> Box:
    """A spacealg Box with the bounds, boundedness and dtype of a Gymnasium/Gym Box."""
    low, high = np.asarray(space.low), np.asarray(space.high)
    if space.dtype.kind in "iu":
        below, above = np.asarray(space.bounded_below), np.asarray(space.bounded_above)
        if not (below.all() and above.all()):
            low = np.where(below, low, -np.inf)
            high = np.where(above, high, np.inf)
    return Box(low, high, shape=tuple(space.shape), dtype=space.dtype)


def _discrete_from(space: Any, f: Family) -> Any:
    return Categorical(int(space.n), start=int(space.start), dtype=space.dtype)


def _multidiscrete_from(space: Any, f: Family) -> Any:
    start = np.asarray(getattr(space, "start", 0))
    return Categorical(np.asarray(space.nvec), start=start, dtype=space.dtype)


def _multibinary_from(space: Any, f: Family) -> ArraySpace:
    return ArraySpace(bool, *space.shape)  # type: ignore[no-any-return]


def _text_from(space: Any, f: Family) -> Text:
    return Text(space.max_length, min_length=space.min_length, charset="".join(space.character_list))


def _tuple_from(space: Any, f: Family) -> TupleProduct:
    return TupleProduct(*(f.from_(s) for s in space.spaces))


def _dict_from(space: Any, f: Family) -> DictProduct:
    pairs = [(k, f.from_(s)) for k, s in space.spaces.items()]
    return DictProduct(pairs, sort_keys=getattr(space, "sort_keys", True))


def _sequence_from(space: Any, f: Family) -> Sequence:
    return Sequence(f.from_(space.feature_space), stack=getattr(space, "stack", False))


def _graph_from(space: Any, f: Family) -> Graph:
    edge = None if space.edge_space is None else f.from_(space.edge_space)
    return Graph(f.from_(space.node_space), edge)


def _oneof_from(space: Any, f: Family) -> OneOf:
    return OneOf(*(f.from_(s) for s in space.spaces))


def _unknown_from(space: Any, f: Family) -> Any:
    raise no_adapter(space, f"from_{f.name}")


FROM_RULES: dict[str, Callable[[Any, Family], Any]] = {
    "Space": _unknown_from, "Box": box_from_native, "Discrete": _discrete_from,
    "MultiDiscrete": _multidiscrete_from, "MultiBinary": _multibinary_from, "Text": _text_from,
    "Tuple": _tuple_from, "Dict": _dict_from, "Sequence": _sequence_from, "Graph": _graph_from,
    "OneOf": _oneof_from,
}


# -- to_<family>: one rule per spacealg kind ------------------------------------------------


def box_to_native(space: Box, box_class: type) -> Any:
    """A Gymnasium Box with exactly the bounds, boundedness and dtype of ``space``."""
    low, high = np.array(space.low), np.array(space.high)
    if space.dtype.kind == "f":  # Gymnasium cannot sample uniform(0.0, -0.0): use 0.0
        high[(high == 0) & np.signbit(high) & ~np.signbit(low)] = 0
    native = box_class(low=low, high=high, shape=space.shape, dtype=space.dtype)
    if space.integral and not space._all_bounded:
        native.bounded_below = np.array(space.bounded_below)
        native.bounded_above = np.array(space.bounded_above)
    return native


def _box_to(space: Box, f: Family) -> Any:
    if f.name == "gymnasium":
        return box_to_native(space, f.spaces.Box)
    low, high = space.low, space.high
    if space.integral and not space._all_bounded:  # Gym applies its own integer limits
        low = np.where(space.bounded_below, low, -np.inf)
        high = np.where(space.bounded_above, high, np.inf)
    with np.errstate(invalid="ignore"):  # Gym casts infinities before replacing them
        return f.spaces.Box(np.array(low), np.array(high), shape=space.shape, dtype=space.dtype)


def _discrete_to(space: Any, f: Family) -> Any:
    """The Discrete of a scalar leaf: its integers (``start``), or positions of labels."""
    model = leaf(space)
    assert model is not None  # this rule is registered for leaves only
    if model.items == ():
        raise f.lacks(space, "it is empty")
    n = widths(model.low, model.high)
    if not (int(model.low) >= -(2**63) and int(model.high) < 2**63):
        raise TypeError(f"to_{f.name}: {space!r} does not fit {f.name}'s int64 Discrete")
    if model.dtype != np.int64:
        if not f.discrete_dtype:
            raise f.lacks(space, f"{f.name}'s Discrete is always int64")
        if n > np.iinfo(model.dtype).max:
            raise f.lacks(space, f"{f.name}'s Discrete stores its n = {n} in the dtype {model.dtype}")
        return f.spaces.Discrete(n, start=int(model.low), dtype=model.dtype)
    return f.spaces.Discrete(n, start=int(model.low))


def _multi_to(space: Any, f: Family) -> Any:
    """MultiBinary / MultiDiscrete of an array leaf (positions for labels)."""
    model = leaf(space)
    if model is None or model.image not in ("MultiBinary", "MultiDiscrete"):
        return _finite_array_to(space, f)
    if model.image == "MultiBinary":
        dims = model.shape
        return f.spaces.MultiBinary(dims[0] if len(dims) == 1 else list(dims))
    lows, highs = np.ravel(np.asarray(model.low, dtype=object)), np.ravel(np.asarray(model.high, dtype=object))
    if model.dtype.kind not in "iu" or (lows.size and (min(lows) < np.iinfo(model.dtype).min
                                                       or max(highs) > np.iinfo(model.dtype).max)):
        raise TypeError(f"to_{f.name}: {space!r} does not fit {f.name}'s MultiDiscrete (its integers exceed "
                        f"{model.dtype})")
    low = np.broadcast_to(np.asarray(model.low, dtype=model.dtype), model.shape)
    counts = np.broadcast_to(widths(model.low, model.high), model.shape)
    if counts.size and max(np.ravel(counts).tolist()) > np.iinfo(model.dtype).max:
        raise f.lacks(space, f"{f.name}'s MultiDiscrete stores its nvec in the dtype {model.dtype}")
    nvec = counts.astype(model.dtype)
    if not f.multidiscrete_start:
        if (low != 0).any():
            raise f.lacks(space, f"{f.name}'s MultiDiscrete has no start")
        return f.spaces.MultiDiscrete(np.array(nvec), dtype=model.dtype)
    return f.spaces.MultiDiscrete(np.array(nvec), dtype=model.dtype, start=np.array(low))


def _finite_array_to(space: ArraySpace, f: Family) -> Any:
    """An array over any other finite set: its entries by position."""
    try:
        n = cardinality(space.space)
    except TypeError:
        n = math.inf
    if n == math.inf or n == 0:
        raise TypeError(f"to_{f.name}: {space!r} has no {f.name} equivalent (its entries are not a "
                        "finite non-empty set)")
    return f.spaces.MultiDiscrete(np.full(space.dims, n, dtype=np.int64))


def _categorical_to(space: Categorical, f: Family) -> Any:
    return _discrete_to(space, f) if space.scalar else _multi_to(space, f)


def interval_box_bounds(space: Interval, function: str) -> tuple[float, float]:
    """The bounds of the Box equal to ``space``: TypeError if an end is open and finite."""
    model = leaf(space)
    if model is None or model.image is None:
        raise TypeError(
            f"{function}: {space!r} has no equivalent (a Box is closed; an open finite end "
            "cannot be represented)"
        )
    return float(space.low) + 0.0, float(space.high) + 0.0  # no -0.0: Box(0.0, -0.0) cannot sample


def _interval_to(space: Interval, f: Family) -> Any:
    low, high = interval_box_bounds(space, f"to_{f.name}")
    return f.spaces.Box(low, high, shape=(), dtype=np.float64)


def _text_to(space: Text, f: Family) -> Any:
    return f.spaces.Text(space.max_length, min_length=space.min_length, charset=space.charset)


def _tuple_to(space: TupleProduct, f: Family) -> Any:
    return f.spaces.Tuple([f.to(s) for s in space._spaces])


def _dict_to(space: DictProduct, f: Family) -> Any:
    pairs = [(k, f.to(s)) for k, s in space._spaces.items()]
    if space.sort_keys or f.name != "gymnasium":
        return f.spaces.Dict(pairs)
    return f.spaces.Dict(pairs, sort_keys=False)


def _sequence_to(space: Sequence, f: Family) -> Any:
    if not f.sequence_stack:
        if space.stack:
            raise f.lacks(space, f"{f.name}'s Sequence does not stack")
        return f.spaces.Sequence(f.to(space._space))
    return f.spaces.Sequence(f.to(space._space), stack=space.stack)


def _graph_to(space: Graph, f: Family) -> Any:
    node = f.to(space._node)
    edge = None if space._edge is None else f.to(space._edge)
    if f.graph_features is not None:
        allowed = tuple(getattr(f.spaces, name) for name in f.graph_features)
        if not all(s is None or isinstance(s, allowed) for s in (node, edge)):
            raise f.lacks(space, f"{f.name}'s Graph takes only Box or Discrete features")
    return f.spaces.Graph(node, edge)


def _oneof_to(space: OneOf, f: Family) -> Any:
    return f.spaces.OneOf([f.to(s) for s in space._spaces])


TO_RULES: dict[type, Callable[[Any, Family], Any]] = {
    Box: _box_to, range: _discrete_to, FiniteSet: _discrete_to, Categorical: _categorical_to,
    Interval: _interval_to, ArraySpace: _multi_to, Text: _text_to, TupleProduct: _tuple_to,
    DictProduct: _dict_to, Sequence: _sequence_to, Graph: _graph_to, OneOf: _oneof_to,
}


def register_family(family: Family) -> None:
    """Registers the two tables for ``family``: ``from`` for each class it has, ``to`` for
    each spacealg kind (OneOf only where the family has one)."""
    def bound(rule: Callable[[Any, Family], Any]) -> Callable[[Any], Any]:
        return lambda space: rule(space, family)

    for name, rule in FROM_RULES.items():
        cls = getattr(family.spaces, name, None)
        if cls is not None:
            family.from_.register(cls)(bound(rule))
    family.to.register(family.spaces.Space)(lambda space: space)  # already one of the family's
    for cls, rule in TO_RULES.items():
        if cls is not OneOf or hasattr(family.spaces, "OneOf"):
            family.to.register(cls)(bound(rule))


GYMNASIUM = Family("gymnasium", gs, from_gymnasium, to_gymnasium)
register_family(GYMNASIUM)


# -- the protocol on Gymnasium instances (see spacealg.adapters.native) ---------------------


def spacealg_space(space: gs.Space) -> Any:
    """``from_gymnasium(space)``, cached per instance."""
    return native.converted(space, from_gymnasium)


as_space.register(gs.Space)(spacealg_space)


@contains.register(gs.Space)
def _contains(x: Any, space: gs.Space) -> bool:
    return native.safe_contains(space, x)


isin.register(gs.Space)(native.isin_items)
isin.register(gs.Box)(native.isin_box)
isin.register(gs.Discrete)(native.isin_discrete)
isin.register(gs.MultiDiscrete)(native.isin_multidiscrete)
isin.register(gs.MultiBinary)(native.isin_multibinary)


@isin.register(gs.Tuple)
def _isin_tuple(batch: Any, space: gs.Tuple) -> np.ndarray:
    """A tuple of component batches; an object array of elements; or, as ``Tuple.contains``
    takes a tuple-like ndarray, a numeric array whose rows (the last axis) are elements."""
    if isinstance(batch, np.ndarray) and batch.dtype.kind == "O":
        return native.isin_items(batch, space)
    if isinstance(batch, np.ndarray) and batch.ndim and batch.shape[-1] == len(space.spaces):
        result = np.zeros(batch.shape[:-1], dtype=bool)
        for position in np.ndindex(result.shape):
            result[position] = native.safe_contains(space, batch[position])
        return result
    if not isinstance(batch, (tuple, list)) or len(batch) != len(space.spaces):
        raise ValueError(f"isin: a batch of {space} is a tuple of {len(space.spaces)} component batches")
    return native.all_of([isin(b, s) for b, s in zip(batch, space.spaces)], space)


@isin.register(gs.Dict)
def _isin_dict(batch: Any, space: gs.Dict) -> np.ndarray:
    if isinstance(batch, np.ndarray) and batch.dtype.kind == "O":
        return native.isin_items(batch, space)
    if not isinstance(batch, dict) or batch.keys() != space.spaces.keys():
        raise ValueError(f"isin: a batch of {space} is a dict of component batches with its keys")
    return native.all_of([isin(batch[k], s) for k, s in space.spaces.items()], space)


@components.register(gs.Tuple)
@components.register(gs.Dict)
def _components(space: gs.Tuple | gs.Dict) -> tuple[Any, ...] | dict[Any, Any]:
    """A plan walks a Gymnasium product through its own parts, so that each leaf keeps its
    Gymnasium dtype (:attr:`spacealg.core.leaf.LeafModel.own_dtype`), as NumPy's rules do."""
    return dict(space.spaces) if isinstance(space.spaces, Mapping) else tuple(space.spaces)


@sample.register(gs.Box)
def _sample_box(space: gs.Box, size: Any = None, *, rng: RngLike = None) -> np.ndarray:
    return native.sample_box(spacealg_space(space), size, rng)


sample.register(gs.Discrete)(native.sample_discrete)
sample.register(gs.MultiDiscrete)(native.sample_multidiscrete)
sample.register(gs.MultiBinary)(native.sample_multibinary)


@sample.register(gs.Text)
def _sample_text(space: gs.Text, size: Any = None, *, rng: RngLike = None) -> Any:
    return sample(spacealg_space(space), size, rng=rng)


@sample.register(gs.Tuple)
@sample.register(gs.Dict)
def _sample_parts(space: gs.Tuple | gs.Dict, size: Any = None, *, rng: RngLike = None) -> Any:
    generator = as_generator(rng)
    if isinstance(space.spaces, Mapping):  # a Dict, of Gymnasium or of Gym (gym_rules registers this rule too)
        return {k: sample(s, size, rng=generator) for k, s in space.spaces.items()}
    return tuple(sample(s, size, rng=generator) for s in space.spaces)


@sample.register(gs.OneOf)
def _sample_oneof(space: gs.OneOf, size: Any = None, *, rng: RngLike = None) -> Any:
    def draw(generator: np.random.Generator) -> tuple[Any, Any]:
        i = generator.integers(0, len(space.spaces), dtype=np.int64)
        return i, sample(space.spaces[int(i)], rng=generator)

    return object_batch(draw, size, rng)


@sample.register(gs.Sequence)
def _sample_sequence(space: gs.Sequence, size: Any = None, *, rng: RngLike = None) -> Any:
    def draw(generator: np.random.Generator) -> Any:
        n = int(generator.geometric(GEOMETRIC_P))
        if space.stack:
            return stacked(sample(space.feature_space, (n,), rng=generator))
        return tuple(sample(space.feature_space, rng=generator) for _ in range(n))

    return object_batch(draw, size, rng)


@sample.register(gs.Graph)
def _sample_graph(space: gs.Graph, size: Any = None, *, rng: RngLike = None) -> Any:
    def draw(generator: np.random.Generator) -> gs.GraphInstance:
        n = NUM_NODES
        m = int(generator.integers(n * (n - 1))) if space.edge_space is not None else 0
        nodes = stacked(sample(space.node_space, (n,), rng=generator))
        if m == 0:
            return gs.GraphInstance(nodes, None, None)
        edges = stacked(sample(space.edge_space, (m,), rng=generator))
        return gs.GraphInstance(nodes, edges, generator.integers(0, n, size=(m, 2), dtype=np.int32))

    return object_batch(draw, size, rng)


@eltype.register(gs.Box)
def _eltype_box(space: gs.Box) -> type:
    scalar = space.shape == () and space.dtype.kind in "biu"
    return space.dtype.type if scalar else np.ndarray  # type: ignore[no-any-return]


@eltype.register(gs.MultiDiscrete)
@eltype.register(gs.MultiBinary)
def _eltype_array(space: gs.Space) -> type:
    return np.ndarray


@eltype.register(gs.Discrete)
def _eltype_discrete(space: gs.Discrete) -> type:
    return space.dtype.type  # type: ignore[no-any-return]


@eltype.register(gs.Text)
def _eltype_text(space: gs.Text) -> type:
    return str


@eltype.register(gs.Sequence)
def _eltype_sequence(space: gs.Sequence) -> Any:
    return eltype(spacealg_space(space))


@eltype.register(gs.Graph)
def _eltype_graph(space: gs.Graph) -> type:
    return gs.GraphInstance


@eltype.register(gs.Tuple)
def _eltype_tuple(space: gs.Tuple) -> Any:
    return tuple[tuple(eltype(s) for s in space.spaces)]  # type: ignore[misc]


@eltype.register(gs.Dict)
def _eltype_dict(space: gs.Dict) -> type:
    return dict


@eltype.register(gs.OneOf)
def _eltype_oneof(space: gs.OneOf) -> Any:
    return tuple[np.int64, Any]
