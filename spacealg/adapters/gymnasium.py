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
from typing import Any

import gymnasium.spaces as gs
import numpy as np

from spacealg.adapters import native
from spacealg.core.generic import as_space, generic
from spacealg.core.protocol import cardinality, contains, eltype, isin, sample
from spacealg.core.rng import RngLike, as_generator
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import BOOL, FiniteSet, range_length
from spacealg.spaces.graph import NUM_NODES, Graph
from spacealg.spaces.interval import Interval
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import GEOMETRIC_P, Sequence, stacked
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
    returned as is. Raises TypeError naming the space if it has no Gymnasium equivalent.
    """
    converted = as_space(space)
    if converted is space:
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


# -- from_gymnasium: one rule per Gymnasium class ------------------------------------------


@from_gymnasium.register(gs.Space)
def _unknown_from(space: gs.Space) -> Any:
    raise no_adapter(space, "from_gymnasium")


def box_from_native(space: Any) -> Box:
    """A spacealg Box with the bounds, boundedness and dtype of a Gymnasium/Gym Box."""
    low, high = np.asarray(space.low), np.asarray(space.high)
    if space.dtype.kind in "iu":
        below, above = np.asarray(space.bounded_below), np.asarray(space.bounded_above)
        if not (below.all() and above.all()):
            low = np.where(below, low, -np.inf)
            high = np.where(above, high, np.inf)
    return Box(low, high, shape=tuple(space.shape), dtype=space.dtype)


from_gymnasium.register(gs.Box)(box_from_native)


@from_gymnasium.register(gs.Discrete)
def _discrete_from(space: gs.Discrete) -> Any:
    return Categorical(int(space.n), start=int(space.start), dtype=space.dtype)


@from_gymnasium.register(gs.MultiDiscrete)
def _multidiscrete_from(space: gs.MultiDiscrete) -> Any:
    return Categorical(np.asarray(space.nvec), start=np.asarray(space.start), dtype=space.dtype)


@from_gymnasium.register(gs.MultiBinary)
def _multibinary_from(space: gs.MultiBinary) -> ArraySpace:
    return ArraySpace(bool, *space.shape)  # type: ignore[no-any-return]


@from_gymnasium.register(gs.Text)
def _text_from(space: gs.Text) -> Text:
    return Text(space.max_length, min_length=space.min_length, charset="".join(space.character_list))


@from_gymnasium.register(gs.Tuple)
def _tuple_from(space: gs.Tuple) -> TupleProduct:
    return TupleProduct(*(from_gymnasium(s) for s in space.spaces))


@from_gymnasium.register(gs.Dict)
def _dict_from(space: gs.Dict) -> DictProduct:
    pairs = [(k, from_gymnasium(s)) for k, s in space.spaces.items()]
    return DictProduct(pairs, sort_keys=getattr(space, "sort_keys", True))


@from_gymnasium.register(gs.Sequence)
def _sequence_from(space: gs.Sequence) -> Sequence:
    return Sequence(from_gymnasium(space.feature_space), stack=space.stack)


@from_gymnasium.register(gs.Graph)
def _graph_from(space: gs.Graph) -> Graph:
    edge = None if space.edge_space is None else from_gymnasium(space.edge_space)
    return Graph(from_gymnasium(space.node_space), edge)


@from_gymnasium.register(gs.OneOf)
def _oneof_from(space: gs.OneOf) -> OneOf:
    return OneOf(*(from_gymnasium(s) for s in space.spaces))


# -- to_gymnasium: one rule per spacealg kind ----------------------------------------------


@to_gymnasium.register(gs.Space)
def _already_gymnasium(space: gs.Space) -> gs.Space:
    return space


def box_to_native(space: Box, box_class: type) -> Any:
    """A Gymnasium/Gym Box with exactly the bounds, boundedness and dtype of ``space``."""
    low, high = np.array(space.low), np.array(space.high)
    if space.dtype.kind == "f":  # Gymnasium cannot sample uniform(0.0, -0.0): use 0.0
        high[(high == 0) & np.signbit(high) & ~np.signbit(low)] = 0
    native = box_class(low=low, high=high, shape=space.shape, dtype=space.dtype)
    if space.integral and not space._all_bounded:
        native.bounded_below = np.array(space.bounded_below)
        native.bounded_above = np.array(space.bounded_above)
    return native


@to_gymnasium.register(Box)
def _box_to(space: Box) -> gs.Box:
    return box_to_native(space, gs.Box)  # type: ignore[no-any-return]


def _require_nonempty(space: Any, n: int, function: str) -> None:
    if n == 0:
        raise TypeError(f"{function}: {space!r} is empty; Gymnasium has no empty space")


@to_gymnasium.register(range)
def _range_to(space: range) -> gs.Discrete:
    n = range_length(space)
    _require_nonempty(space, n, "to_gymnasium")
    if not (min(space[0], space[-1]) >= -(2**63) and max(space[0], space[-1]) < 2**63):
        raise TypeError(f"to_gymnasium: {space!r} does not fit Gymnasium's int64 Discrete")
    if space.step == 1 or n == 1:
        return gs.Discrete(n, start=space.start)
    return gs.Discrete(n)


@to_gymnasium.register(Categorical)
def _categorical_to(space: Categorical) -> Any:
    if space.scalar:
        return gs.Discrete(int(space.nvec), start=int(space.start), dtype=space.dtype)
    return gs.MultiDiscrete(np.array(space.nvec), dtype=space.dtype, start=np.array(space.start))


@to_gymnasium.register(FiniteSet)
def _finite_to(space: FiniteSet) -> gs.Discrete:
    _require_nonempty(space, len(space.items), "to_gymnasium")
    return gs.Discrete(len(space.items))


def interval_box_bounds(space: Interval, function: str) -> tuple[float, float]:
    """The bounds of the Box equal to ``space``: TypeError if an end is open and finite."""
    open_end = (not space.closed_left and math.isfinite(space.low)) or (
        not space.closed_right and math.isfinite(space.high)
    )
    if open_end:
        raise TypeError(
            f"{function}: {space!r} has no equivalent (a Box is closed; an open finite end "
            "cannot be represented)"
        )
    return float(space.low) + 0.0, float(space.high) + 0.0  # no -0.0: Box(0.0, -0.0) cannot sample


@to_gymnasium.register(Interval)
def _interval_to(space: Interval) -> gs.Box:
    low, high = interval_box_bounds(space, "to_gymnasium")
    return gs.Box(low, high, shape=(), dtype=np.float64)


@generic(0)
def array_to_gymnasium(base: Any, dims: tuple[int, ...], space: Any) -> Any:
    """``to_gymnasium`` for ``ArraySpace(base, *dims)``, chosen by the base's kind."""
    try:
        n = cardinality(base)
    except TypeError:
        n = math.inf
    if n == math.inf or n == 0:
        raise TypeError(f"to_gymnasium: {space!r} has no Gymnasium equivalent (its entries are not a "
                        "finite non-empty set)")
    return gs.MultiDiscrete(np.full(dims, n, dtype=np.int64))


@array_to_gymnasium.register(range)
def _range_array_to(base: range, dims: tuple[int, ...], space: Any) -> gs.MultiDiscrete:
    n = range_length(base)
    _require_nonempty(space, n, "to_gymnasium")
    if base.step != 1 and n != 1:
        return gs.MultiDiscrete(np.full(dims, n, dtype=np.int64))
    return gs.MultiDiscrete(np.full(dims, n, dtype=np.int64), start=np.full(dims, base.start, dtype=np.int64))


@array_to_gymnasium.register(FiniteSet)
def _finite_array_to(base: FiniteSet, dims: tuple[int, ...], space: Any) -> Any:
    if base == BOOL:
        return gs.MultiBinary(dims[0] if len(dims) == 1 else list(dims))
    _require_nonempty(space, len(base.items), "to_gymnasium")
    return gs.MultiDiscrete(np.full(dims, len(base.items), dtype=np.int64))


@to_gymnasium.register(ArraySpace)
def _array_to(space: ArraySpace) -> Any:
    return array_to_gymnasium(space.space, space.dims, space)


@to_gymnasium.register(Text)
def _text_to(space: Text) -> gs.Text:
    return gs.Text(space.max_length, min_length=space.min_length, charset=space.charset)


@to_gymnasium.register(TupleProduct)
def _tuple_to(space: TupleProduct) -> gs.Tuple:
    return gs.Tuple([to_gymnasium(s) for s in space._spaces])


@to_gymnasium.register(DictProduct)
def _dict_to(space: DictProduct) -> gs.Dict:
    pairs = [(k, to_gymnasium(s)) for k, s in space._spaces.items()]
    return gs.Dict(pairs) if space.sort_keys else gs.Dict(pairs, sort_keys=False)


@to_gymnasium.register(Sequence)
def _sequence_to(space: Sequence) -> gs.Sequence:
    return gs.Sequence(to_gymnasium(space._space), stack=space.stack)


@to_gymnasium.register(Graph)
def _graph_to(space: Graph) -> gs.Graph:
    edge = None if space._edge is None else to_gymnasium(space._edge)
    return gs.Graph(to_gymnasium(space._node), edge)


@to_gymnasium.register(OneOf)
def _oneof_to(space: OneOf) -> gs.OneOf:
    return gs.OneOf([to_gymnasium(s) for s in space._spaces])


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
    if isinstance(batch, np.ndarray) and batch.dtype.kind == "O":
        return native.isin_items(batch, space)
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


@sample.register(gs.Box)
def _sample_box(space: gs.Box, size: Any = None, *, rng: RngLike = None) -> np.ndarray:
    return native.sample_box(spacealg_space(space), size, rng)


@sample.register(gs.Discrete)
def _sample_discrete(space: gs.Discrete, size: Any = None, *, rng: RngLike = None) -> Any:
    return native.sample_discrete(space, size, rng)


@sample.register(gs.MultiDiscrete)
def _sample_multidiscrete(space: gs.MultiDiscrete, size: Any = None, *, rng: RngLike = None) -> Any:
    return native.sample_multidiscrete(space, size, rng)


@sample.register(gs.MultiBinary)
def _sample_multibinary(space: gs.MultiBinary, size: Any = None, *, rng: RngLike = None) -> Any:
    return native.sample_multibinary(space, size, rng)


@sample.register(gs.Text)
def _sample_text(space: gs.Text, size: Any = None, *, rng: RngLike = None) -> Any:
    return sample(spacealg_space(space), size, rng=rng)


@sample.register(gs.Tuple)
def _sample_tuple(space: gs.Tuple, size: Any = None, *, rng: RngLike = None) -> tuple[Any, ...]:
    generator = as_generator(rng)
    return tuple(sample(s, size, rng=generator) for s in space.spaces)


@sample.register(gs.Dict)
def _sample_dict(space: gs.Dict, size: Any = None, *, rng: RngLike = None) -> dict[Any, Any]:
    generator = as_generator(rng)
    return {k: sample(s, size, rng=generator) for k, s in space.spaces.items()}


@sample.register(gs.OneOf)
def _sample_oneof(space: gs.OneOf, size: Any = None, *, rng: RngLike = None) -> Any:
    def draw(generator: np.random.Generator) -> tuple[Any, Any]:
        i = generator.integers(0, len(space.spaces), dtype=np.int64)
        return i, sample(space.spaces[int(i)], rng=generator)

    return native.sample_items(draw, size, rng)


@sample.register(gs.Sequence)
def _sample_sequence(space: gs.Sequence, size: Any = None, *, rng: RngLike = None) -> Any:
    def draw(generator: np.random.Generator) -> Any:
        n = int(generator.geometric(GEOMETRIC_P))
        if space.stack:
            return stacked(sample(space.feature_space, (n,), rng=generator))
        return tuple(sample(space.feature_space, rng=generator) for _ in range(n))

    return native.sample_items(draw, size, rng)


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

    return native.sample_items(draw, size, rng)


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
