"""dm_env adapters: ``from_dm_env`` and ``to_dm_env``, one rule per class.

Importing this module imports ``dm_env``; spacealg does so on first sight of a
``dm_env.specs`` object (through :data:`spacealg.core.generic.ADAPTER_MODULES`), so
``spacealg.contains(x, spec)``, ``spacealg.sample(spec)``, ``SpaceStyle(spec)``,
``cardinality(spec)``, ``bounds(spec)``, ``clamp(x, spec)``, ... take a spec directly.

=========================================  ==============================================
dm_env                                     spacealg (``from_dm_env``)
=========================================  ==============================================
``Array(shape, dtype)``                    ``Box`` of that shape and dtype, unbounded (the
                                           dtype's whole range for integers and bool)
``BoundedArray(shape, dtype, min, max)``   ``Box(min, max, shape, dtype)``
``DiscreteArray(n, dtype)``                ``Categorical(n, dtype=dtype)`` (``range(n)`` for int64)
``StringArray``                            TypeError: spacealg has no space of all strings
``dict`` / ``tuple`` / ``list`` of specs   ``DictProduct`` (key order kept) / ``TupleProduct``
=========================================  ==============================================

``to_dm_env(space, name=None)`` runs the table backwards:

=========================================  ==============================================
spacealg                                   dm_env (``to_dm_env``)
=========================================  ==============================================
``Box`` with no finite bound               ``Array(shape, dtype)``
other ``Box``                              ``BoundedArray(shape, dtype, low, high)``
``Categorical(n, start=0)`` (scalar)       ``DiscreteArray(n, dtype)``
other ``Categorical``                      ``BoundedArray(shape, dtype, start, start + nvec - 1)``
``ArraySpace(bool, *dims)``                ``Array(dims, bool)``
``TupleProduct`` / ``DictProduct``         a tuple / a dict (same key order) of specs; a dict's
                                           entries are named by their keys
anything else                              Gymnasium's encoding (``spacealg.encode``): a
                                           ``FiniteSet`` becomes ``DiscreteArray(n, int64)`` of
                                           positions, a closed ``Interval`` a 0-d float64 Box, ...
=========================================  ==============================================

Laws: ``to_dm_env(from_dm_env(spec)) == spec`` (dm_env's ``==``: class family, shape, dtype,
bounds) with the same class, except that a ``BoundedArray`` whose bounds are the dtype's
whole range (``±inf`` for floats) comes back as ``Array``: the same set, the same
``validate``. ``from_dm_env(to_dm_env(s))`` is the set ``s`` (through the encoding where one
is used); dm_env names are labels, not part of the set: pass ``name=`` for the top level.
``contains(x, spec)`` is ``spec.validate`` (False where it raises), which is strict about
storage dtype: a float64 array is not a member of a float32 spec (spacealg's own ``Box``
takes any value inside it). A space with no dm_env equivalent (an open interval, text, a
sequence, a union) raises a TypeError naming the space.
"""

from __future__ import annotations

from typing import Any

import dm_env.specs as ds
import numpy as np

from spacealg.adapters.foreign import expressible, register_native
from spacealg.adapters.unbounded import is_unbounded, unbounded_box
from spacealg.core.generic import as_space, generic
from spacealg.spaces._batch import batch_shape
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import BOOL, int64_run, range_length
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = ["from_dm_env", "to_dm_env"]


@generic(0)
def from_dm_env(spec: Any) -> Any:
    """The spacealg space equal, as a set, to the dm_env spec (or nest of specs) ``spec``.

    Laws: ``to_dm_env(from_dm_env(spec)) == spec``; ``spec.validate(sample(spec))`` passes;
    ``contains(x, from_dm_env(spec))`` for every ``x`` that ``spec.validate`` accepts.
    Raises TypeError for anything that is not a dm_env spec.
    """
    raise TypeError(f"from_dm_env: {spec!r} (of type {type(spec).__qualname__}) is not a dm_env spec")


@generic(0)
def to_dm_env(space: Any, name: str | None = None) -> Any:
    """The dm_env spec (or nest of specs) equal to ``space``, named ``name``.

    Plain objects are converted with :func:`spacealg.as_space` first. A space with no dm_env
    class of its own goes through Gymnasium's documented encoding (``spacealg.encode``);
    raises TypeError naming the space where there is none.
    """
    converted = as_space(space)
    if converted is not space:
        return to_dm_env(converted, name)
    return expressible(space, "dm_env", lambda s: to_dm_env(s, name))


# -- from_dm_env: one rule per dm_env class ------------------------------------------------


def _dtype(spec: Any) -> np.dtype:
    dtype = np.dtype(spec.dtype)
    if dtype.kind not in "biuf":
        raise TypeError(f"from_dm_env: {spec!r} has the dtype {dtype}; spacealg's Box holds bool, integers, floats")
    return dtype


@from_dm_env.register(ds.Array)
def _array_from(spec: ds.Array) -> Box:
    return unbounded_box(tuple(spec.shape), _dtype(spec))


@from_dm_env.register(ds.BoundedArray)
def _bounded_from(spec: ds.BoundedArray) -> Box:
    return Box(np.asarray(spec.minimum), np.asarray(spec.maximum), shape=tuple(spec.shape), dtype=_dtype(spec))


@from_dm_env.register(ds.DiscreteArray)
def _discrete_from(spec: ds.DiscreteArray) -> Any:
    return Categorical(int(spec.num_values), dtype=spec.dtype)


@from_dm_env.register(ds.StringArray)
def _string_from(spec: ds.StringArray) -> Any:
    raise TypeError(
        f"from_dm_env: {spec!r} holds strings of any length and characters; spacealg's Text is "
        "bounded (max_length, charset), so no spacealg space equals it"
    )


@from_dm_env.register(dict)
def _dict_from(spec: dict[Any, Any]) -> DictProduct:
    return DictProduct([(k, from_dm_env(v)) for k, v in spec.items()])


@from_dm_env.register(tuple)
@from_dm_env.register(list)
def _tuple_from(spec: Any) -> TupleProduct:
    return TupleProduct(*(from_dm_env(v) for v in spec))


# -- to_dm_env: one rule per spacealg kind -------------------------------------------------


@to_dm_env.register(ds.Array)
def _already_dm_env(space: ds.Array, name: str | None = None) -> ds.Array:
    return space


@to_dm_env.register(Box)
def _box_to(space: Box, name: str | None = None) -> ds.Array:
    if is_unbounded(space):
        return ds.Array(space.shape, space.dtype, name=name)
    return ds.BoundedArray(space.shape, space.dtype, np.array(space.low), np.array(space.high), name=name)


def _integers(shape: tuple[int, ...], dtype: np.dtype, low: Any, high: Any, name: str | None) -> ds.Array:
    """The spec of the integer arrays with entries in ``[low, high]``: a 0-d range from 0 is a
    ``DiscreteArray``, anything else a ``BoundedArray``."""
    if shape == () and int(low) == 0:
        return ds.DiscreteArray(int(high) + 1, dtype=dtype, name=name)
    return ds.BoundedArray(shape, dtype, np.array(low, dtype=dtype), np.array(high, dtype=dtype), name=name)


@to_dm_env.register(Categorical)
def _categorical_to(space: Categorical, name: str | None = None) -> ds.Array:
    return _integers(space.shape, space.dtype, space.low, space.high, name)


@to_dm_env.register(range)
def _range_to(space: range, name: str | None = None) -> Any:
    if int64_run(space):
        return _integers((), np.dtype(np.int64), space.start, space.start + range_length(space) - 1, name)
    return expressible(space, "dm_env", lambda s: to_dm_env(s, name))


@to_dm_env.register(ArraySpace)
def _array_to(space: ArraySpace, name: str | None = None) -> Any:
    if space.space == BOOL:
        return ds.Array(space.dims, bool, name=name)
    base = space.space
    if int64_run(base):
        last = base.start + range_length(base) - 1
        return ds.BoundedArray(space.dims, np.int64, np.full(space.dims, base.start, np.int64),
                               np.full(space.dims, last, np.int64), name=name)
    return expressible(space, "dm_env", lambda s: to_dm_env(s, name))


@to_dm_env.register(TupleProduct)
def _tuple_to(space: TupleProduct, name: str | None = None) -> tuple[Any, ...]:
    return tuple(to_dm_env(s) for s in space._spaces)


@to_dm_env.register(DictProduct)
def _dict_to(space: DictProduct, name: str | None = None) -> dict[Any, Any]:
    return {k: to_dm_env(s, str(k)) for k, s in space._spaces.items()}


# -- the protocol on dm_env specs (see spacealg.adapters.foreign) ---------------------------


def _validate(spec: ds.Array, x: Any) -> bool:
    spec.validate(x)
    return True


def _to_native(value: Any, spec: ds.Array, size: tuple[int, ...]) -> np.ndarray:
    return np.asarray(value, dtype=spec.dtype)


def _leading(batch: Any, spec: ds.Array) -> tuple[int, ...]:
    return batch_shape(np.asarray(batch), tuple(spec.shape), spec)


register_native(ds.Array, from_dm_env, _validate, _to_native, _leading)
