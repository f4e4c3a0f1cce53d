"""Adapters for the legacy ``gym`` package (0.26): ``from_gym`` and ``to_gym``.

The rules are Gymnasium's (see :mod:`spacealg.adapters.gymnasium`), less what Gym 0.26
lacks: it has no ``OneOf``, no ``Sequence(stack=True)``, no dtype for ``Discrete`` and no
``start`` for ``MultiDiscrete``, and its ``Graph`` takes only Box/Discrete features; a
spacealg space needing one of those raises a TypeError naming it. Law:
``to_gym(from_gym(g)) == g`` for every Gym space, and Gym ↔ Gymnasium through spacealg:
``to_gymnasium(from_gym(g))`` is the Gymnasium twin of ``g``.

One Gym bug bends the membership law: Gym stores an infinite end of an integer Box as the
dtype's limit moved in by 2 and compares with it in ``contains``, while ``bounded_below``/
``bounded_above`` say the end is infinite (and ``sample`` goes past it, wrapping around at
the dtype's limit). ``from_gym`` follows the flags, as Gymnasium 1.x does: the entry ranges
up to the dtype's limit, so the two or so values beyond Gym's stored end are members of
``from_gym(g)`` that ``g.contains`` rejects.

The registrations (and those of the protocol on Gym instances: ``as_space``, ``contains``,
``isin``, ``sample``, ``eltype``) exist only when ``import gym`` succeeds; Gym's import-time
deprecation notice is silenced (spacealg imports it on your behalf). Without Gym,
``from_gym``/``to_gym`` raise TypeError.
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings
from typing import Any

import numpy as np

from spacealg.adapters import native
from spacealg.adapters.gymnasium import interval_box_bounds, no_adapter
from spacealg.core.generic import as_space, generic
from spacealg.core.protocol import cardinality, clamp, contains, eltype, isin, sample
from spacealg.core.rng import RngLike, as_generator
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import BOOL, FiniteSet, range_length
from spacealg.spaces.graph import NUM_NODES, Graph
from spacealg.spaces.interval import Interval
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import GEOMETRIC_P, Sequence
from spacealg.spaces.text import Text

__all__ = ["GYM_AVAILABLE", "from_gym", "to_gym"]


def _import_gym() -> Any:
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            import gym.spaces

            return gym.spaces
    except Exception:  # gym missing, or broken under this numpy
        return None


gym_spaces = _import_gym()
GYM_AVAILABLE = gym_spaces is not None


@generic(0)
def from_gym(space: Any) -> Any:
    """The spacealg space equal to the Gym (0.26) space ``space``; law: ``to_gym(from_gym(g)) == g``.

    Raises TypeError for anything that is not a Gym space (and for every argument when
    ``gym`` is not installed).
    """
    raise TypeError(
        f"from_gym: {space!r} (of type {type(space).__qualname__}) is not a Gym space"
        + ("" if GYM_AVAILABLE else " (the gym package is not installed)")
    )


@generic(0)
def to_gym(space: Any) -> Any:
    """The Gym (0.26) space equal to ``space`` (with :func:`spacealg.encode`'s encoding).

    Raises TypeError naming the space if Gym has no equivalent, or if ``gym`` is missing.
    """
    if not GYM_AVAILABLE:
        raise TypeError("to_gym: the gym package is not installed (pip install 'spacealg[gym]')")
    converted = as_space(space)
    if converted is space:
        raise TypeError(
            f"to_gym: {space!r} has no Gym equivalent; register one with "
            f"@spacealg.to_gym.register({type(space).__qualname__})"
        )
    return to_gym(converted)


def _no_gym(space: Any, what: str) -> TypeError:
    return TypeError(f"to_gym: {space!r} has no Gym 0.26 equivalent ({what})")


def _register() -> None:
    gs = gym_spaces

    # -- from_gym: one rule per Gym class ----------------------------------------------------

    @from_gym.register(gs.Space)
    def _unknown_from(space: Any) -> Any:
        raise no_adapter(space, "from_gym")

    @from_gym.register(gs.Box)
    def _box_from(space: Any) -> Box:
        low, high = np.asarray(space.low), np.asarray(space.high)
        if space.dtype.kind in "iu":
            low = np.where(space.bounded_below, low, -np.inf) if not space.bounded_below.all() else low
            high = np.where(space.bounded_above, high, np.inf) if not space.bounded_above.all() else high
        return Box(low, high, shape=tuple(space.shape), dtype=space.dtype)

    @from_gym.register(gs.Discrete)
    def _discrete_from(space: Any) -> Any:
        return Categorical(int(space.n), start=int(space.start), dtype=space.dtype)

    @from_gym.register(gs.MultiDiscrete)
    def _multidiscrete_from(space: Any) -> Any:
        return Categorical(np.asarray(space.nvec), dtype=space.dtype)

    @from_gym.register(gs.MultiBinary)
    def _multibinary_from(space: Any) -> Any:
        return ArraySpace(bool, *space.shape)

    @from_gym.register(gs.Text)
    def _text_from(space: Any) -> Text:
        return Text(space.max_length, min_length=space.min_length, charset="".join(space.character_list))

    @from_gym.register(gs.Tuple)
    def _tuple_from(space: Any) -> TupleProduct:
        return TupleProduct(*(from_gym(s) for s in space.spaces))

    @from_gym.register(gs.Dict)
    def _dict_from(space: Any) -> DictProduct:
        return DictProduct([(k, from_gym(s)) for k, s in space.spaces.items()])

    @from_gym.register(gs.Sequence)
    def _sequence_from(space: Any) -> Sequence:
        return Sequence(from_gym(space.feature_space))

    @from_gym.register(gs.Graph)
    def _graph_from(space: Any) -> Graph:
        edge = None if space.edge_space is None else from_gym(space.edge_space)
        return Graph(from_gym(space.node_space), edge)

    # -- to_gym: one rule per spacealg kind ----------------------------------------------------

    @to_gym.register(gs.Space)
    def _already_gym(space: Any) -> Any:
        return space

    @to_gym.register(Box)
    def _box_to(space: Box) -> Any:
        low, high = space.low, space.high
        if space.integral and not space._all_bounded:  # Gym applies its own integer limits
            low = np.where(space.bounded_below, low, -np.inf)
            high = np.where(space.bounded_above, high, np.inf)
        with np.errstate(invalid="ignore"):  # Gym casts infinities before replacing them
            return gs.Box(np.array(low), np.array(high), shape=space.shape, dtype=space.dtype)

    @to_gym.register(range)
    def _range_to(space: range) -> Any:
        n = range_length(space)
        if n == 0:
            raise _no_gym(space, "it is empty")
        return gs.Discrete(n, start=space.start) if space.step == 1 or n == 1 else gs.Discrete(n)

    @to_gym.register(Categorical)
    def _categorical_to(space: Categorical) -> Any:
        if space.scalar:
            raise _no_gym(space, "Gym's Discrete is always int64")
        if (space.low != 0).any():
            raise _no_gym(space, "Gym's MultiDiscrete has no start")
        return gs.MultiDiscrete(np.array(space.nvec), dtype=space.dtype)

    @to_gym.register(FiniteSet)
    def _finite_to(space: FiniteSet) -> Any:
        if not space.items:
            raise _no_gym(space, "it is empty")
        return gs.Discrete(len(space.items))

    @to_gym.register(Interval)
    def _interval_to(space: Interval) -> Any:
        low, high = interval_box_bounds(space, "to_gym")
        return gs.Box(low, high, shape=(), dtype=np.float64)

    @to_gym.register(ArraySpace)
    def _array_to(space: ArraySpace) -> Any:
        base, dims = space.space, space.dims
        if base == BOOL:
            return gs.MultiBinary(dims[0] if len(dims) == 1 else list(dims))
        if isinstance(base, range) and (base.step == 1 or range_length(base) == 1) and base.start != 0:
            raise _no_gym(space, "Gym's MultiDiscrete has no start")
        try:
            n = cardinality(base)
        except TypeError:
            n = math.inf
        if n == math.inf or n == 0:
            raise _no_gym(space, "its entries are not a finite non-empty set")
        return gs.MultiDiscrete(np.full(dims, n, dtype=np.int64))

    @to_gym.register(Text)
    def _text_to(space: Text) -> Any:
        return gs.Text(space.max_length, min_length=space.min_length, charset=space.charset)

    @to_gym.register(TupleProduct)
    def _tuple_to(space: TupleProduct) -> Any:
        return gs.Tuple([to_gym(s) for s in space._spaces])

    @to_gym.register(DictProduct)
    def _dict_to(space: DictProduct) -> Any:
        return gs.Dict([(k, to_gym(s)) for k, s in space._spaces.items()])

    @to_gym.register(Sequence)
    def _sequence_to(space: Sequence) -> Any:
        if space.stack:
            raise _no_gym(space, "Gym's Sequence does not stack")
        return gs.Sequence(to_gym(space._space))

    @to_gym.register(Graph)
    def _graph_to(space: Graph) -> Any:
        node = to_gym(space._node)
        edge = None if space._edge is None else to_gym(space._edge)
        if not all(s is None or isinstance(s, (gs.Box, gs.Discrete)) for s in (node, edge)):
            raise _no_gym(space, "Gym's Graph takes only Box or Discrete features")
        return gs.Graph(node, edge)

    # -- the protocol on Gym instances (see spacealg.adapters.native) ---------------------------

    def spacealg_space(space: Any) -> Any:
        return native.converted(space, from_gym)

    as_space.register(gs.Space)(spacealg_space)

    @contains.register(gs.Space)
    def _contains(x: Any, space: Any) -> bool:
        return native.safe_contains(space, x)

    isin.register(gs.Space)(native.isin_items)
    isin.register(gs.Box)(native.isin_box)
    isin.register(gs.MultiBinary)(native.isin_multibinary)

    @isin.register(gs.Discrete)
    def _isin_discrete(batch: Any, space: Any) -> np.ndarray:
        # Gym's Discrete.contains takes ints and 0-d integer arrays of any integer dtype
        if not isinstance(batch, np.ndarray) or batch.dtype.kind not in "biuf":
            return native.isin_items(np.asarray(batch, dtype=object), space)
        if batch.dtype.kind not in "iu":
            return np.zeros(batch.shape, dtype=bool)
        start = int(space.start)
        return (batch >= start) & (batch <= start + int(space.n) - 1)  # type: ignore[no-any-return]

    @isin.register(gs.MultiDiscrete)
    def _isin_multidiscrete(batch: Any, space: Any) -> np.ndarray:
        # Gym's MultiDiscrete.contains checks 0 <= x < nvec on any non-object array (no
        # dtype check: float entries in range are members), unlike Gymnasium's
        array = batch if isinstance(batch, np.ndarray) else np.asarray(batch)
        k = space.nvec.ndim
        if array.ndim < k or array.shape[array.ndim - k :] != tuple(space.shape):
            raise ValueError(f"isin: batch of shape {array.shape} is not a batch of {space}")
        leading = array.shape[: array.ndim - k]
        if array.dtype.kind not in "biuf" or k == 0:
            return np.zeros(leading, dtype=bool)
        with np.errstate(invalid="ignore"):
            inside = (array >= 0) & (array < space.nvec)
        return inside.reshape((*leading, -1)).all(axis=-1)  # type: ignore[no-any-return]

    @isin.register(gs.Tuple)
    def _isin_tuple(batch: Any, space: Any) -> np.ndarray:
        if isinstance(batch, np.ndarray) and batch.dtype.kind == "O":
            return native.isin_items(batch, space)
        return native.all_of([isin(b, s) for b, s in zip(batch, space.spaces, strict=True)], space)

    @isin.register(gs.Dict)
    def _isin_dict(batch: Any, space: Any) -> np.ndarray:
        if isinstance(batch, np.ndarray) and batch.dtype.kind == "O":
            return native.isin_items(batch, space)
        return native.all_of([isin(batch[k], s) for k, s in space.spaces.items()], space)

    @sample.register(gs.Box)
    def _sample_box(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        return native.sample_box(spacealg_space(space), size, rng)

    @sample.register(gs.Discrete)
    def _sample_discrete(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        drawn = native.sample_discrete(space, size, rng)
        return int(drawn) if size is None else drawn  # Gym's Discrete samples Python ints

    @sample.register(gs.MultiDiscrete)
    def _sample_multidiscrete(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        return native.sample_multidiscrete(space, size, rng)

    @sample.register(gs.MultiBinary)
    def _sample_multibinary(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        return native.sample_multibinary(space, size, rng)

    @sample.register(gs.Text)
    def _sample_text(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        return sample(spacealg_space(space), size, rng=rng)

    @sample.register(gs.Tuple)
    def _sample_tuple(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        generator = as_generator(rng)
        return tuple(sample(s, size, rng=generator) for s in space.spaces)

    @sample.register(gs.Dict)
    def _sample_dict(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        generator = as_generator(rng)
        return {k: sample(s, size, rng=generator) for k, s in space.spaces.items()}

    @sample.register(gs.Sequence)
    def _sample_sequence(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        def draw(generator: np.random.Generator) -> Any:
            n = int(generator.geometric(GEOMETRIC_P))
            return tuple(sample(space.feature_space, rng=generator) for _ in range(n))

        return native.sample_items(draw, size, rng)

    @sample.register(gs.Graph)
    def _sample_graph(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        def draw(generator: np.random.Generator) -> Any:
            n = NUM_NODES
            m = int(generator.integers(n * (n - 1))) if space.edge_space is not None else 0
            nodes = sample(space.node_space, (n,), rng=generator)
            if m == 0:
                return gs.GraphInstance(nodes, None, None)
            edges = sample(space.edge_space, (m,), rng=generator)
            return gs.GraphInstance(nodes, edges, generator.integers(0, n, size=(m, 2)))

        return native.sample_items(draw, size, rng)

    @eltype.register(gs.Box)
    def _eltype_box(space: Any) -> type:
        scalar = space.shape == () and space.dtype.kind in "biu"  # Box.sample gives a numpy scalar
        return space.dtype.type if scalar else np.ndarray  # type: ignore[no-any-return]

    @eltype.register(gs.MultiDiscrete)
    @eltype.register(gs.MultiBinary)
    def _eltype_array(space: Any) -> type:
        return np.ndarray

    @eltype.register(gs.Discrete)
    def _eltype_discrete(space: Any) -> type:
        return int

    @eltype.register(gs.Text)
    def _eltype_text(space: Any) -> type:
        return str

    @eltype.register(gs.Tuple)
    @eltype.register(gs.Sequence)
    def _eltype_tuple(space: Any) -> type:
        return tuple

    @eltype.register(gs.Dict)
    def _eltype_dict(space: Any) -> type:
        return dict

    @eltype.register(gs.Graph)
    def _eltype_graph(space: Any) -> type:
        return gs.GraphInstance  # type: ignore[no-any-return]

    @clamp.register(gs.Space)
    def _clamp(x: Any, space: Any) -> Any:
        from spacealg.adapters.encoding import encode

        return native.clamp_native(x, space, spacealg_space(space), encode)


if GYM_AVAILABLE:
    _register()
