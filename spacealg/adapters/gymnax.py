"""gymnax adapters: ``from_gymnax`` and ``to_gymnax``, one rule per class.

Importing this module imports ``jax`` and ``gymnax``; spacealg does so on first sight of a
gymnax space (through :data:`spacealg.core.generic.ADAPTER_MODULES`), after which every
generic function takes a gymnax space directly.

=====================================  ==================================================
gymnax                                 spacealg (``from_gymnax``)
=====================================  ==================================================
``Discrete(n, dtype)``                 ``Categorical(n, dtype=dtype)`` (int32 unless x64)
``Box(low, high, shape, dtype)``       ``Box(low, high, shape, dtype)``
``Dict(spaces)``                       ``DictProduct`` (key order kept)
``Tuple(spaces)``                      ``TupleProduct``
=====================================  ==================================================

``to_gymnax(space)`` runs the table backwards: a ``Categorical`` from 0 (0-d) is a
``Discrete``, any other ``Categorical``/``range``/``ArraySpace`` of integers or bool a
``Box`` of its integer dtype (gymnax has no ``start`` and no MultiDiscrete; the set is kept,
though gymnax's own ``Box.sample`` never draws an integer box's top value), a ``Box`` a
``Box``, products ``Dict``/``Tuple``; anything else goes through Gymnasium's encoding
(``spacealg.encode``) or raises a TypeError naming the space. JAX's dtype rule applies
(:mod:`spacealg.adapters.jax_dtypes`): without x64 mode a 64-bit space becomes the 32-bit
one, and a TypeError is raised where its bounds do not fit.

Laws: ``to_gymnax(from_gymnax(g))`` equals ``g`` (class, bounds, shape, dtype, key order);
``from_gymnax(to_gymnax(s))`` is the set ``s`` (up to JAX's dtype rule).
``contains(x, g)`` is gymnax's ``g.contains(x)``, which checks bounds but neither shape nor
dtype nor integrality; it agrees with ``contains(x, from_gymnax(g))`` on arrays of ``g``'s
shape and dtype. One gymnax bug is mended: ``Dict.contains`` reads the entries as
attributes, so it rejects the dicts its own ``sample`` returns; ``contains(x, g)`` on a
``Dict`` takes mappings (and objects with those attributes) entry by entry.
``sample(g, ...)`` returns JAX arrays (dicts/tuples of them for products), drawn with
spacealg's rng.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnax.environments.spaces as gx
import jax.numpy as jnp
import numpy as np

from spacealg.adapters.foreign import expressible, register_native
from spacealg.adapters.jax_dtypes import fit_bounds, jax_dtype
from spacealg.core.generic import as_space, generic
from spacealg.core.protocol import contains
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import BOOL, range_length
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = ["from_gymnax", "to_gymnax"]


@generic(0)
def from_gymnax(space: Any) -> Any:
    """The spacealg space equal, as a set, to the gymnax space ``space``.

    Laws: ``to_gymnax(from_gymnax(g))`` equals ``g``; ``g.contains(sample(g))``.
    Raises TypeError for anything that is not a gymnax space.
    """
    raise TypeError(f"from_gymnax: {space!r} (of type {type(space).__qualname__}) is not a gymnax space")


@generic(0)
def to_gymnax(space: Any) -> Any:
    """The gymnax space equal to ``space`` (see the module's table); TypeError naming the
    space where gymnax has no equivalent."""
    converted = as_space(space)
    if converted is not space:
        return to_gymnax(converted)
    return expressible(space, "gymnax", to_gymnax)


# -- from_gymnax ---------------------------------------------------------------------------


@from_gymnax.register(gx.Discrete)
def _discrete_from(space: gx.Discrete) -> Any:
    return Categorical(int(space.n), dtype=np.dtype(space.dtype))


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


@from_gymnax.register(gx.Box)
def _box_from(space: gx.Box) -> Box:
    shape = _shape(space.shape)
    return Box(np.asarray(space.low), np.asarray(space.high), shape=shape, dtype=np.dtype(space.dtype))


@from_gymnax.register(gx.Dict)
def _dict_from(space: gx.Dict) -> DictProduct:
    return DictProduct([(k, from_gymnax(s)) for k, s in space.spaces.items()])


@from_gymnax.register(gx.Tuple)
def _tuple_from(space: gx.Tuple) -> TupleProduct:
    return TupleProduct(*(from_gymnax(s) for s in space.spaces))


# -- to_gymnax -----------------------------------------------------------------------------


@to_gymnax.register(gx.Space)
def _already_gymnax(space: gx.Space) -> gx.Space:
    return space


def _integer_box(space: Any, shape: tuple[int, ...], dtype: np.dtype, low: Any, high: Any) -> gx.Space:
    narrow = jax_dtype(dtype)
    low, high = fit_bounds(np.broadcast_to(low, shape), np.broadcast_to(high, shape), narrow, space, "gymnax")
    if shape == () and int(low) == 0 and narrow in (np.dtype(np.int32), np.dtype(np.int64)):
        return gx.Discrete(int(high) + 1, dtype=narrow)
    return gx.Box(jnp.asarray(low), jnp.asarray(high), shape, dtype=narrow.type)


@to_gymnax.register(Box)
def _box_to(space: Box) -> gx.Space:
    narrow = jax_dtype(space.dtype)
    low, high = fit_bounds(np.array(space.low), np.array(space.high), narrow, space, "gymnax")
    return gx.Box(jnp.asarray(low), jnp.asarray(high), space.shape, dtype=narrow.type)


@to_gymnax.register(Categorical)
def _categorical_to(space: Categorical) -> gx.Space:
    return _integer_box(space, space.shape, space.dtype, space.low, space.high)


@to_gymnax.register(range)
def _range_to(space: range) -> gx.Space:
    n = range_length(space)
    if n and (space.step == 1 or n == 1):
        return _integer_box(space, (), np.dtype(np.int64), space.start, space.start + n - 1)
    return expressible(space, "gymnax", to_gymnax)


@to_gymnax.register(ArraySpace)
def _array_to(space: ArraySpace) -> gx.Space:
    base = space.space
    if base == BOOL:
        return gx.Box(jnp.zeros(space.dims, bool), jnp.ones(space.dims, bool), space.dims, dtype=np.bool_)
    n = range_length(base) if isinstance(base, range) else 0
    if n and (base.step == 1 or n == 1):
        return _integer_box(space, space.dims, np.dtype(np.int64), base.start, base.start + n - 1)
    return expressible(space, "gymnax", to_gymnax)


@to_gymnax.register(DictProduct)
def _dict_to(space: DictProduct) -> gx.Dict:
    return gx.Dict({k: to_gymnax(s) for k, s in space._spaces.items()})


@to_gymnax.register(TupleProduct)
def _tuple_to(space: TupleProduct) -> gx.Tuple:
    return gx.Tuple([to_gymnax(s) for s in space._spaces])


# -- the protocol on gymnax spaces ---------------------------------------------------------


def _member(space: Any, x: Any) -> bool:
    if isinstance(space, gx.Dict):
        if isinstance(x, Mapping):
            return x.keys() == space.spaces.keys() and all(contains(x[k], s) for k, s in space.spaces.items())
        return all(contains(getattr(x, k), s) for k, s in space.spaces.items())
    if isinstance(space, gx.Tuple):
        return len(x) == len(space.spaces) and all(contains(v, s) for v, s in zip(x, space.spaces))
    return bool(space.contains(x))


@generic(1)
def to_gymnax_value(x: Any, space: Any) -> Any:
    """The gymnax (JAX) value for the member ``x`` of ``from_gymnax(space)``, or a batch."""
    return jnp.asarray(x, dtype=jax_dtype(np.dtype(space.dtype)))


@to_gymnax_value.register(gx.Dict)
def _dict_value(x: Any, space: gx.Dict) -> dict[Any, Any]:
    return {k: to_gymnax_value(x[k], s) for k, s in space.spaces.items()}


@to_gymnax_value.register(gx.Tuple)
def _tuple_value(x: Any, space: gx.Tuple) -> tuple[Any, ...]:
    return tuple(to_gymnax_value(v, s) for v, s in zip(x, space.spaces))


def _leading(batch: Any, space: Any) -> tuple[int, ...]:
    if isinstance(space, gx.Dict):
        key = next(iter(space.spaces))
        return _leading(batch[key], space.spaces[key])
    if isinstance(space, gx.Tuple):
        return _leading(batch[0], space.spaces[0])
    shape, own = tuple(np.shape(batch)), _shape(space.shape)
    if len(shape) < len(own) or shape[len(shape) - len(own) :] != own:
        raise ValueError(f"isin: a batch of shape {shape} is not a batch of {space!r}")
    return shape[: len(shape) - len(own)]


def _item(batch: Any, space: Any, position: tuple[int, ...]) -> Any:
    if isinstance(space, gx.Dict):
        return {k: _item(batch[k], s, position) for k, s in space.spaces.items()}
    if isinstance(space, gx.Tuple):
        return tuple(_item(b, s, position) for b, s in zip(batch, space.spaces))
    return batch[position] if position else batch


register_native(gx.Space, from_gymnax, _member, lambda x, s, size: to_gymnax_value(x, s), _leading, _item)
