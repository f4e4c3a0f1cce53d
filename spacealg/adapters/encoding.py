"""``encode``/``decode``: the values of ``to_gymnasium(space)`` that stand for members of ``space``.

>>> from spacealg import FiniteSet, to_gymnasium, encode, decode
>>> s = FiniteSet("up", "down", "left", "right")
>>> to_gymnasium(s)
Discrete(4)
>>> encode("left", s), decode(2, s)
(np.int64(2), 'left')

One rule per spacealg kind:

=========================================  =================================================
space                                      ``encode(x, space)``
=========================================  =================================================
``FiniteSet``                              ``np.int64(index(x, space))`` (the item's position)
``range`` (step 1) / other steps           ``np.int64(x)`` / ``np.int64`` position in the range
``Categorical``                            ``x`` in its dtype (numpy scalar or array)
``Box`` / closed ``Interval``              ``x`` as an array of the Box's dtype (float64, 0-d)
``ArraySpace(range(a, b), ...)``           ``x`` as an int64 array
``ArraySpace(bool, ...)``                  ``x`` as an int8 array of 0/1
``ArraySpace`` of another finite set       the int64 array of the entries' positions
``TupleProduct`` / ``DictProduct``         the tuple / dict (same key order) of encoded parts
``OneOf``                                  ``(np.int64(i), encode(value, spaces[i]))``
``Text``                                   the string
``Sequence``                               the tuple of encoded members (stacked: Gymnasium's
                                           stacked form of the encoded members)
``Graph``                                  ``GraphInstance`` of encoded nodes and edges, same links
a kind with an image (``OneHot``, ...)     ``encode(image.encode(x), image.space)``: what the
                                           member stands for (a one-hot vector: its position)
=========================================  =================================================

``decode`` is the inverse and returns spacealg's own value types (those of ``sample``).
Laws, for ``g = to_gymnasium(s)``: ``g.contains(encode(x, s))`` for every member ``x``;
``decode(encode(x, s), s) == x``; ``decode(y, s) in s`` for every ``y`` in ``g``. For the
spaces that ``from_gymnasium`` returns, ``encode`` only normalises storage types.
``space`` may also be a Gymnasium space (through :func:`spacealg.as_space`). Register a
rule for your own space with ``@spacealg.encode.register(MySpace)`` (and ``decode``).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import gymnasium.spaces as gs
import numpy as np
from gymnasium.spaces import GraphInstance

from spacealg.adapters import native
from spacealg.adapters.gymnasium import from_gymnasium, to_gymnasium
from spacealg.core.generic import as_space, generic
from spacealg.core.image import image_of
from spacealg.core.leaf import consecutive, leaf
from spacealg.core.protocol import clamp, contains, element, index
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.graph import Graph
from spacealg.spaces.interval import Interval
from spacealg.spaces.oneof import OneOf
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.sequence import Sequence, stack_items, unstack
from spacealg.spaces.text import Text

__all__ = ["decode", "encode"]


def _no_rule(function: str, space: Any) -> TypeError:
    return TypeError(
        f"{function}: no rule for {space!r}; register one with "
        f"@spacealg.{function}.register({type(space).__qualname__})"
    )


@generic(1)
def encode(x: Any, space: Any) -> Any:
    """The value of ``to_gymnasium(space)`` that stands for the member ``x`` of ``space``.

    Laws: ``to_gymnasium(space).contains(encode(x, space))``;
    ``decode(encode(x, space), space) == x``.
    """
    converted = as_space(space)
    if converted is space:
        image = image_of(space)
        if image is None:
            raise _no_rule("encode", space)
        if not contains(x, space):
            raise ValueError(f"encode: x={x!r} is not a member of space={space!r}")
        return encode(image.encode(x), image.space)
    return encode(x, converted)


@generic(1)
def decode(y: Any, space: Any) -> Any:
    """The member of ``space`` that the value ``y`` of ``to_gymnasium(space)`` stands for.

    Laws: ``decode(y, space) in space``; ``encode(decode(y, space), space) == y``.
    """
    converted = as_space(space)
    if converted is space:
        image = image_of(space)
        if image is None:
            raise _no_rule("decode", space)
        member = image.decode(decode(y, image.space))
        if not contains(member, space):
            raise ValueError(f"decode: y={y!r} is not a value of to_gymnasium(space) for space={space!r}")
        return member
    return decode(y, converted)


def _native(x: Any, dtype: Any) -> Any:
    """``x`` in ``dtype``: a numpy scalar for a scalar, an array otherwise."""
    array = _as(x, dtype)
    return array[()] if array.ndim == 0 else array


def _as(x: Any, dtype: Any) -> np.ndarray:
    """``np.asarray(x, dtype)``, with a ValueError naming ``x`` where it does not fit."""
    try:
        return np.asarray(x, dtype=dtype)
    except OverflowError:
        raise ValueError(f"encode: x={x!r} does not fit {np.dtype(dtype)}") from None


def _python(y: Any) -> Any:
    """A scalar as a Python int (an array stays an int64 array)."""
    array = np.asarray(y)
    return int(array) if array.ndim == 0 else array.astype(np.int64)


# -- one rule per kind -------------------------------------------------------------------------


@encode.register(Box)
@decode.register(Box)
def _box(x: Any, space: Box) -> np.ndarray:
    return _as(x, space.dtype)


@encode.register(Interval)
def _interval_encode(x: Any, space: Interval) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


@decode.register(Interval)
def _interval_decode(y: Any, space: Interval) -> Any:
    array = np.asarray(y, dtype=np.float64)
    return float(array) if array.ndim == 0 else array


@encode.register(range)
def _range_encode(x: Any, space: range) -> Any:
    if consecutive(space):  # consecutive integers are their own values (core.leaf)
        return _native(x, np.int64)
    return _native((_as(x, np.int64) - space.start) // space.step, np.int64)


@decode.register(range)
def _range_decode(y: Any, space: range) -> Any:
    if consecutive(space):  # consecutive integers are their own values (core.leaf)
        return _python(y)
    return _python(space.start + space.step * np.asarray(y, dtype=np.int64))


@encode.register(Categorical)
@decode.register(Categorical)
def _categorical(x: Any, space: Categorical) -> Any:
    if space.scalar:
        return _native(x, space.dtype)
    return _as(x, space.dtype)


@encode.register(FiniteSet)
def _finite_encode(x: Any, space: FiniteSet) -> np.int64:
    return np.int64(index(x, space))


@decode.register(FiniteSet)
def _finite_decode(y: Any, space: FiniteSet) -> Any:
    try:
        i = int(y)
    except (TypeError, ValueError):
        i = -1
    if not 0 <= i < len(space.items) or i != y:
        raise ValueError(f"decode: y={y!r} is not a position 0..{len(space.items) - 1} of space={space!r}")
    return element(i, space)


def _entry_rule(space: ArraySpace) -> str:
    model = leaf(space)
    if model is not None and model.items is None and model.image in ("MultiBinary", "MultiDiscrete"):
        return "binary" if model.image == "MultiBinary" else "range"
    return "positions"


@encode.register(ArraySpace)
def _array_encode(x: Any, space: ArraySpace) -> np.ndarray:
    rule = _entry_rule(space)
    if rule == "range":
        return _as(x, np.int64)
    if rule == "binary":
        return np.asarray(x).astype(np.int8)
    entries = np.asarray(x, dtype=object)
    codes = [index(v, space.space) for v in entries.flat]  # positions, as to_gymnasium's MultiDiscrete
    return np.array(codes, dtype=np.int64).reshape(entries.shape)


@decode.register(ArraySpace)
def _array_decode(y: Any, space: ArraySpace) -> np.ndarray:
    rule = _entry_rule(space)
    if rule == "range":
        return np.asarray(y, dtype=np.int64)
    if rule == "binary":
        return np.asarray(y).astype(bool)
    codes = np.asarray(y)
    values = [element(int(c), space.space) for c in codes.flat]
    if not values:
        return np.asarray(values).reshape(codes.shape)
    if all(isinstance(v, str) for v in values) or all(isinstance(v, numbers.Real) for v in values):
        return np.array(values).reshape(codes.shape)  # as FiniteSet batches its items
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(codes.shape)


def _both_ways(cls: type) -> Any:
    """Register ``rule(x, space, convert)`` as ``encode`` (``convert`` is ``encode``) and
    ``decode`` (``convert`` is ``decode``) of the composite kind ``cls``: its parts are
    converted by ``convert`` itself, so the two directions are one rule."""

    def register(rule: Any) -> Any:
        encode.register(cls)(lambda x, space: rule(x, space, encode))
        decode.register(cls)(lambda y, space: rule(y, space, decode))
        return rule

    return register


def _parts(x: Any, space: Any, convert: Any) -> Any:
    """``x`` checked to have exactly the parts of the product ``space`` (never a silent
    partial result): ValueError naming the argument and the space otherwise."""
    function = convert.name
    argument = "x" if function == "encode" else "y"
    if isinstance(space, DictProduct):
        if not isinstance(x, Mapping) or set(x.keys()) != set(space._spaces):
            raise ValueError(f"{function}: {argument}={x!r} must be a dict with keys {list(space._spaces)!r} "
                             f"for space={space!r}")
    elif isinstance(x, (str, bytes, Mapping)) or not hasattr(x, "__len__") or len(x) != len(space._spaces):
        raise ValueError(f"{function}: {argument}={x!r} must be a tuple of {len(space._spaces)} parts "
                         f"for space={space!r}")
    return x


@_both_ways(TupleProduct)
def _tuple(x: Any, space: TupleProduct, convert: Any) -> tuple[Any, ...]:
    return tuple(convert(v, s) for v, s in zip(_parts(x, space, convert), space._spaces))


@_both_ways(DictProduct)
def _dict(x: Any, space: DictProduct, convert: Any) -> dict[Any, Any]:
    _parts(x, space, convert)
    return {k: convert(x[k], s) for k, s in space._spaces.items()}


@_both_ways(OneOf)
def _oneof(x: Any, space: OneOf, convert: Any) -> tuple[Any, Any]:
    """``(branch index, value)``: the index an ``np.int64`` when encoded, an int when decoded."""
    function = convert.name
    argument = "x" if function == "encode" else "y"
    try:
        i, _ = x
        i = int(i)
    except (TypeError, ValueError):
        raise ValueError(f"{function}: {argument}={x!r} must be a pair (branch index, value) for "
                         f"space={space!r}") from None
    if not 0 <= i < len(space._spaces):
        raise ValueError(f"{function}: {argument}={x!r} names branch {i} of space={space!r}, which has "
                         f"{len(space._spaces)}")
    return (np.int64(i) if convert is encode else i), convert(x[1], space._spaces[i])


@encode.register(Text)
@decode.register(Text)
def _text(x: Any, space: Text) -> str:
    return str(x)


def _encoded_space(space: Any) -> Any:
    """The spacealg space of the encoded values (whose stacked form Gymnasium uses)."""
    return from_gymnasium(to_gymnasium(space))


def _stack(x: Any, space: Any, convert: Any) -> Any:
    """A stacked batch of members converted member by member (Gymnasium's stacked form of
    the encoded members, or spacealg's of the decoded ones)."""
    source, target = (space, _encoded_space(space)) if convert is encode else (_encoded_space(space), space)
    return stack_items([convert(m, space) for m in unstack(x, source)], target)


@_both_ways(Sequence)
def _sequence(x: Any, space: Sequence, convert: Any) -> Any:
    if space.stack:
        return _stack(x, space._space, convert)
    return tuple(convert(m, space._space) for m in x)


@_both_ways(Graph)
def _graph(x: Any, space: Graph, convert: Any) -> GraphInstance:
    nodes = _stack(x.nodes, space._node, convert)
    if x.edges is None or space._edge is None:
        return GraphInstance(nodes, None, None)
    return GraphInstance(nodes, _stack(x.edges, space._edge, convert), x.edge_links)


# -- clamp on Gymnasium instances: the nearest member, in Gymnasium's value types ---------------


@clamp.register(gs.Space)
def _clamp_native(x: Any, space: Any) -> Any:  # Gymnasium's and (gym_rules) Gym's
    return native.clamp_native(x, space, as_space(space), encode)
