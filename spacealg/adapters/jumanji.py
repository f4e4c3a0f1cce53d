"""Jumanji adapters: ``from_jumanji`` and ``to_jumanji``, one rule per spec class.

Importing this module imports ``jax`` and ``jumanji``; spacealg does so on first sight of a
Jumanji spec (through :data:`spacealg.core.generic.ADAPTER_MODULES`), after which every
generic function takes a spec directly.

==============================================  =========================================
Jumanji                                         spacealg (``from_jumanji``)
==============================================  =========================================
``Array(shape, dtype)``                         ``Box`` of every array of that shape and dtype
``BoundedArray(shape, dtype, min, max)``        ``Box(min, max, shape, dtype)``
``DiscreteArray(n, dtype)``                     ``Categorical(n, dtype=dtype)``
``MultiDiscreteArray(num_values, dtype)``       ``Categorical(num_values, dtype=dtype)``
``Spec(constructor, name, **specs)``            ``Record(constructor, entries)`` (key order
                                                kept): its members are the records
                                                ``constructor(**fields)`` themselves (a
                                                NamedTuple observation is a member); for a
                                                ``dict``/``SimpleNamespace`` constructor, a
                                                ``DictProduct`` (``constructor(**fields)``
                                                stands for the dict ``fields``)
==============================================  =========================================

``to_jumanji(space, name="")`` runs the table backwards: a ``Box`` with no finite bound is an
``Array``, another ``Box`` (a bool one too, as Jumanji's action masks) a ``BoundedArray``;
a ``Record`` a ``Spec`` of its constructor; a ``Categorical`` from 0 a ``DiscreteArray``
(0-d) or ``MultiDiscreteArray``, one with ``start != 0`` a ``BoundedArray`` (the set is kept);
``ArraySpace(bool, *dims)`` a ``BoundedArray`` of bool; a ``DictProduct`` a ``Spec`` whose
constructor is ``types.SimpleNamespace`` (values are namespaces with the keys as attributes;
keys must be strings) and whose entries are named by their keys; a ``TupleProduct`` the same
with keys ``item0``, ``item1``, ... (an encoding); anything else goes through Gymnasium's
encoding (``spacealg.encode``) or raises a TypeError naming the space. JAX's dtype rule
applies (:mod:`spacealg.adapters.jax_dtypes`).

Laws: ``to_jumanji(from_jumanji(spec), spec.name) == spec`` (Jumanji's ``==``: class
family, shape, dtype, bounds, leaf names; a nested ``Spec`` compares its entries) when leaf
names are their keys, as in Jumanji's environments, except that an ``Array`` of bool comes back
as the ``BoundedArray(False, True)`` of the same set; ``contains(x, spec)`` is
``spec.validate`` (False where it raises), strict about shape and dtype;
``sample(spec, ...)`` returns JAX arrays, and ``constructor(**fields)`` for a nested
``Spec`` (for a batch, one such object holding the batches).
"""

from __future__ import annotations

import types
from typing import Any

import jax.numpy as jnp
import jumanji.specs as js
import numpy as np

from spacealg.adapters.foreign import expressible, register_native
from spacealg.adapters.jax_dtypes import fit_bounds, jax_dtype
from spacealg.adapters.records import Record, fields_of
from spacealg.adapters.unbounded import is_unbounded, unbounded_box
from spacealg.core.generic import as_space, generic
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import BOOL, range_length
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = ["from_jumanji", "to_jumanji"]


@generic(0)
def from_jumanji(spec: Any) -> Any:
    """The spacealg space equal, as a set, to the Jumanji spec ``spec`` (see the table).

    Laws: ``to_jumanji(from_jumanji(spec), spec.name) == spec``; ``spec.validate(sample(spec))``
    passes. Raises TypeError for anything that is not a Jumanji spec.
    """
    raise TypeError(f"from_jumanji: {spec!r} (of type {type(spec).__qualname__}) is not a Jumanji spec")


@generic(0)
def to_jumanji(space: Any, name: str = "") -> Any:
    """The Jumanji spec equal to ``space``, named ``name`` (see the module's table);
    TypeError naming the space where Jumanji has no equivalent."""
    converted = as_space(space)
    if converted is not space:
        return to_jumanji(converted, name)
    return expressible(space, "jumanji", lambda s: to_jumanji(s, name))


# -- from_jumanji --------------------------------------------------------------------------


@from_jumanji.register(js.Array)
def _array_from(spec: js.Array) -> Box:
    return unbounded_box(tuple(spec.shape), np.dtype(spec.dtype))


@from_jumanji.register(js.BoundedArray)
def _bounded_from(spec: js.BoundedArray) -> Box:
    shape = tuple(spec.shape)  # Jumanji broadcasts its bounds to the shape
    low, high = (np.broadcast_to(np.asarray(bound), shape) for bound in (spec.minimum, spec.maximum))
    return Box(low, high, shape=shape, dtype=np.dtype(spec.dtype))


@from_jumanji.register(js.DiscreteArray)
def _discrete_from(spec: js.DiscreteArray) -> Any:
    return Categorical(int(spec.num_values), dtype=np.dtype(spec.dtype))


@from_jumanji.register(js.MultiDiscreteArray)
def _multidiscrete_from(spec: js.MultiDiscreteArray) -> Any:
    return Categorical(np.asarray(spec.num_values), dtype=np.dtype(spec.dtype))


@from_jumanji.register(js.Spec)
def _nested_from(spec: js.Spec) -> DictProduct:
    entries = [(k, from_jumanji(s)) for k, s in spec._specs.items()]
    if _is_record(spec._constructor):
        return Record(spec._constructor, dict(entries))
    return DictProduct(entries)


def _is_record(constructor: Any) -> bool:
    """Whether a Spec's values are records of their own class (a NamedTuple, a dataclass):
    then the converted space is a :class:`Record` of that class; ``dict`` and
    ``SimpleNamespace`` values (this module's encoding) stay a ``DictProduct``."""
    return isinstance(constructor, type) and constructor not in (dict, types.SimpleNamespace)


# -- to_jumanji ----------------------------------------------------------------------------


@to_jumanji.register(js.Spec)
def _already_jumanji(space: js.Spec, name: str = "") -> js.Spec:
    return space


@to_jumanji.register(Box)
def _box_to(space: Box, name: str = "") -> js.Array:
    dtype = jax_dtype(space.dtype)
    if is_unbounded(space) and dtype.kind != "b":  # bool: a BoundedArray, as Jumanji's action masks
        if dtype != space.dtype:  # the whole range of a 64-bit dtype does not fit 32 bits
            fit_bounds(np.array(space.low), np.array(space.high), dtype, space, "jumanji")
        return js.Array(space.shape, dtype, name)
    low, high = fit_bounds(np.array(space.low), np.array(space.high), dtype, space, "jumanji")
    return js.BoundedArray(space.shape, dtype, _bound(low), _bound(high), name)


def _bound(values: np.ndarray) -> Any:
    """A bound as Jumanji's environments write it: 0-d when uniform (Jumanji's ``==`` cannot
    compare array bounds)."""
    uniform = values.size and (values == values.flat[0]).all()
    return jnp.asarray(values.flat[0] if uniform else values)


def _integers(space: Any, shape: tuple[int, ...], dtype: np.dtype, low: Any, high: Any, name: str) -> js.Array:
    narrow = jax_dtype(dtype)
    low, high = fit_bounds(np.broadcast_to(low, shape), np.broadcast_to(high, shape), narrow, space, "jumanji")
    if low.size and (low == 0).all():
        if shape == ():
            return js.DiscreteArray(int(high) + 1, narrow, name)
        return js.MultiDiscreteArray(jnp.asarray(high.astype(np.int64) + 1, dtype=narrow), narrow, name)
    return js.BoundedArray(shape, narrow, _bound(low), _bound(high), name)


@to_jumanji.register(Categorical)
def _categorical_to(space: Categorical, name: str = "") -> js.Array:
    return _integers(space, space.shape, space.dtype, space.low, space.high, name)


@to_jumanji.register(range)
def _range_to(space: range, name: str = "") -> Any:
    n = range_length(space)
    if n and (space.step == 1 or n == 1):
        return _integers(space, (), np.dtype(np.int64), space.start, space.start + n - 1, name)
    return expressible(space, "jumanji", lambda s: to_jumanji(s, name))


@to_jumanji.register(ArraySpace)
def _array_to(space: ArraySpace, name: str = "") -> Any:
    base = space.space
    if base == BOOL:
        return js.BoundedArray(space.dims, bool, False, True, name)
    n = range_length(base) if isinstance(base, range) else 0
    if n and (base.step == 1 or n == 1):
        return _integers(space, space.dims, np.dtype(np.int64), base.start, base.start + n - 1, name)
    return expressible(space, "jumanji", lambda s: to_jumanji(s, name))


_SPEC_NAMES = frozenset({"self", "constructor", "name", *dir(js.Spec)})


def _nested(space: Any, entries: dict[Any, Any], name: str) -> js.Spec:
    if not all(isinstance(k, str) for k in entries):
        raise TypeError(f"to_jumanji: {space!r} has no jumanji equivalent (Jumanji's entry names are strings)")
    taken = sorted(k for k in entries if k in _SPEC_NAMES)
    if taken:  # Spec(constructor, name, **specs) sets each entry as an attribute of the spec
        raise TypeError(f"to_jumanji: {space!r} has no jumanji equivalent: Jumanji's Spec cannot hold "
                        f"entries named {taken} (its own arguments and attributes)")
    specs = {k: to_jumanji(s, k) for k, s in entries.items()}
    return js.Spec(types.SimpleNamespace, name, **specs)


@to_jumanji.register(DictProduct)
def _dict_to(space: DictProduct, name: str = "") -> js.Spec:
    return _nested(space, dict(space._spaces), name)


@to_jumanji.register(Record)
def _record_to(space: Record, name: str = "") -> js.Spec:
    specs = {k: to_jumanji(s, k) for k, s in space._spaces.items()}
    return js.Spec(space.constructor, name, **specs)


@to_jumanji.register(TupleProduct)
def _tuple_to(space: TupleProduct, name: str = "") -> js.Spec:
    return _nested(space, {f"item{i}": s for i, s in enumerate(space._spaces)}, name)


# -- the protocol on Jumanji specs ---------------------------------------------------------


def _validate(spec: js.Spec, x: Any) -> bool:
    spec.validate(x)
    return True


@generic(1)
def to_jumanji_value(x: Any, spec: Any) -> Any:
    """The Jumanji value for the member ``x`` of ``from_jumanji(spec)`` (or a batch): a JAX
    array of the spec's dtype, ``constructor(**fields)`` for a nested ``Spec``."""
    return jnp.asarray(x, dtype=spec.dtype)


@to_jumanji_value.register(js.Spec)
def _nested_value(x: Any, spec: js.Spec) -> Any:
    if not isinstance(spec, js.Array):
        if not isinstance(x, dict) and fields_of(x, spec._specs) is not None:  # a record
            x = fields_of(x, spec._specs)
        elif isinstance(x, (tuple, list)):  # the tuple encoding: keys item0, item1, ...
            x = {f"item{i}": v for i, v in enumerate(x)}
        return spec._constructor(**{k: to_jumanji_value(x[k], s) for k, s in spec._specs.items()})
    return jnp.asarray(x, dtype=spec.dtype)


def _fields(value: Any) -> dict[str, Any]:
    return value._asdict() if hasattr(value, "_asdict") else dict(vars(value))


def _leading(batch: Any, spec: Any) -> tuple[int, ...]:
    if not isinstance(spec, js.Array):
        key, inner = next(iter(spec._specs.items()))
        return _leading(_fields(batch)[key], inner)
    shape, own = tuple(np.shape(batch)), tuple(spec.shape)
    if len(shape) < len(own) or shape[len(shape) - len(own) :] != own:
        raise ValueError(f"isin: a batch of shape {shape} is not a batch of {spec!r}")
    return shape[: len(shape) - len(own)]


def _item(batch: Any, spec: Any, position: tuple[int, ...]) -> Any:
    if not isinstance(spec, js.Array):
        fields = _fields(batch)
        return spec._constructor(**{k: _item(fields[k], s, position) for k, s in spec._specs.items()})
    return batch[position] if position else batch


register_native(js.Spec, from_jumanji, _validate, lambda x, s, size: to_jumanji_value(x, s), _leading, _item)
