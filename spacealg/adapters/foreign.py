"""What the adapters for the optional ecosystems (dm_env, TorchRL, gymnax, Jumanji) share.

Each of those adapter modules has a ``from_X``/``to_X`` pair of generic functions (one rule
per class, read top to bottom as the table in its docstring) and calls
:func:`register_native` once per foreign class, which makes every generic function accept
the foreign object directly:

* ``as_space(spec)`` is ``from_X(spec)``, computed once per live instance where the object
  takes weak references (every other generic function reaches spacealg's implementation
  through it: ``SpaceStyle``, ``cardinality``, ``bounds``, ``clamp``, ``elements``, ...);
* ``contains(x, spec)`` is the foreign object's own membership test (``validate``,
  ``is_in``, ``contains``), with False for a value it rejects by raising;
* ``sample(spec, size, rng=...)`` draws from the converted space with spacealg's rng and
  returns the foreign ecosystem's value types (``to_native``);
* ``isin(batch, spec)[i] == contains(batch[i], spec)``.

:func:`expressible` is the one rule for spacealg spaces with no class of their own in the
target: they go through Gymnasium's documented encoding (:func:`spacealg.encode`), or raise
a TypeError naming the space and the target.

The modules themselves are listed in :data:`spacealg.core.generic.ADAPTER_MODULES`, so
none of the optional packages is imported before an object of theirs is seen.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.adapters import native
from spacealg.adapters.gymnasium import from_gymnasium, to_gymnasium
from spacealg.core.generic import as_space
from spacealg.core.protocol import contains, isin, sample
from spacealg.core.rng import RngLike
from spacealg.spaces._batch import normalize_size

__all__ = ["cached", "expressible", "numpy_dtype", "register_native"]


def cached(space: Any, convert: Callable[[Any], Any]) -> Any:
    """``convert(space)``, once per live instance when the object takes weak references."""
    try:
        weakref.ref(space)
    except TypeError:  # no __weakref__ (dm_env specs have __slots__): convert each time
        return convert(space)
    return native.converted(space, convert)


def numpy_dtype(dtype: Any, space: Any, function: str) -> np.dtype:
    """``dtype`` as a numpy dtype, or a TypeError naming the space and the function."""
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{function}: {space!r} has the dtype {dtype}, which numpy cannot hold") from None


def expressible(space: Any, target: str, convert: Callable[[Any], Any]) -> Any:
    """``convert`` of the space Gymnasium's encoding maps ``space`` to (see
    :mod:`spacealg.adapters.encoding`), or a TypeError naming ``space`` and ``target``.

    Law: the result holds ``encode(x, space)`` for every member ``x`` of ``space``.
    """
    try:
        encoded = from_gymnasium(to_gymnasium(space))
    except TypeError as error:
        raise TypeError(f"to_{target}: {space!r} has no {target} equivalent ({error})") from None
    if type(encoded) is type(space) and encoded == space:  # no simpler form: the target has no rule for it
        raise TypeError(f"to_{target}: {space!r} has no {target} equivalent")
    return convert(encoded)


def _safe(member: Callable[[Any, Any], Any]) -> Callable[[Any, Any], bool]:
    def contains_native(x: Any, space: Any) -> bool:
        try:
            return bool(member(space, x))
        except Exception:
            return False

    return contains_native


def register_native(
    cls: type,
    convert: Callable[[Any], Any],
    member: Callable[[Any, Any], Any],
    to_native: Callable[[Any, Any, tuple[int, ...]], Any],
    leading: Callable[[Any, Any], tuple[int, ...]],
    item: Callable[[Any, Any, tuple[int, ...]], Any] | None = None,
) -> None:
    """Register the protocol on instances of the foreign class ``cls``.

    ``member(spec, x)``: the foreign membership test (truthy, or raising for a non-member);
    ``to_native(value, spec, size)``: a value (or a batch of shape ``size``) of the converted
    space in the foreign value types; ``leading(batch, spec)``: the batch shape of ``batch``; ``item(batch, spec,
    position)``: the element at ``position`` (default: ``batch[position]``).
    """
    contains_native = _safe(member)

    def as_spacealg(spec: Any) -> Any:
        return cached(spec, convert)

    def sample_native(spec: Any, size: Any = None, *, rng: RngLike = None) -> Any:
        return to_native(sample(as_spacealg(spec), size, rng=rng), spec, normalize_size(size))

    def isin_native(batch: Any, spec: Any) -> np.ndarray:
        shape = normalize_size(leading(batch, spec))
        result = np.zeros(shape, dtype=bool)
        for position in np.ndindex(shape):
            element = item(batch, spec, position) if item else batch[position] if position else batch
            result[position] = contains_native(element, spec)
        return result

    as_space.register(cls)(as_spacealg)
    contains.register(cls)(contains_native)
    sample.register(cls)(sample_native)
    isin.register(cls)(isin_native)
