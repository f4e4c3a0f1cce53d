"""Spaces of libraries that ship their own copy of gymnax's spaces (Craftax, JaxMARL).

Craftax (``craftax.environment_base.spaces``) and JaxMARL (``jaxmarl.environments.spaces``)
each define ``Discrete``, ``Box`` (and JaxMARL ``MultiDiscrete``, ``Dict``, ``Tuple``) with
gymnax's attributes but not gymnax's classes, so :func:`~spacealg.adapters.gymnax.from_gymnax`
does not take them. :func:`from_lookalike` reads them by class name and attributes:

=====================================  ==================================================
lookalike                              spacealg
=====================================  ==================================================
``Discrete(n, dtype)``                 ``Categorical(n, dtype=dtype)``
``MultiDiscrete(num_categories)``      ``Categorical(num_categories, dtype=dtype)``
``Box(low, high, shape, dtype)``       ``Box(low, high, shape, dtype)``
``Dict(spaces)``                       ``DictProduct`` (key order kept)
``Tuple(spaces)``                      ``TupleProduct``
=====================================  ==================================================

Laws: ``contains(x, from_lookalike(s))`` is ``bool(s.contains(x))`` for ``x`` of the space's
shape and dtype (the libraries' own ``contains`` checks bounds only); any other class raises
TypeError naming it. JAX's dtype rule applies (a 64-bit dtype reads as its 32-bit form).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["LOOKALIKE_ROOTS", "from_lookalike", "is_lookalike"]

LOOKALIKE_ROOTS = frozenset({"craftax", "jaxmarl"})
"""Top-level packages whose spaces are copies of gymnax's."""


def is_lookalike(space: Any) -> bool:
    """Whether ``space`` is a space of one of :data:`LOOKALIKE_ROOTS`."""
    return type(space).__module__.partition(".")[0] in LOOKALIKE_ROOTS


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def _dtype(space: Any, default: Any) -> np.dtype:
    from spacealg.adapters.jax_dtypes import jax_dtype

    return jax_dtype(np.dtype(getattr(space, "dtype", default)))


def from_lookalike(space: Any) -> Any:
    """The spacealg space equal, as a set, to a Craftax or JaxMARL space (see the table)."""
    from spacealg.spaces.box import Box
    from spacealg.spaces.categorical import Categorical
    from spacealg.spaces.product import DictProduct, TupleProduct

    if not is_lookalike(space):
        raise TypeError(f"from_lookalike: {type(space).__qualname__} is not a Craftax or JaxMARL space")
    kind = type(space).__name__
    if kind == "Discrete":
        return Categorical(int(space.n), dtype=_dtype(space, np.int32))
    if kind == "MultiDiscrete":
        return Categorical(np.asarray(space.num_categories, np.int64), dtype=_dtype(space, np.int32))
    if kind == "Box":
        dtype = _dtype(space, np.float32)
        return Box(np.asarray(space.low), np.asarray(space.high), shape=_shape(space.shape), dtype=dtype)
    if kind == "Dict":
        return DictProduct([(k, from_lookalike(s)) for k, s in space.spaces.items()])
    if kind == "Tuple":
        return TupleProduct(*(from_lookalike(s) for s in space.spaces))
    raise TypeError(f"from_lookalike: {type(space).__module__}.{kind} is not a space kind spacealg reads")
