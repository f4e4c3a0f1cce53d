"""Sequence: finite sequences of members of a space (Gymnasium's ``Sequence``).

>>> from spacealg import Sequence, Box, SpaceStyle
>>> s = Sequence(range(4))
>>> (0, 3, 3) in s, () in s, (4,) in s
(True, True, False)
>>> x = Sequence(Box(0.0, 1.0, shape=(2,)), stack=True).sample(rng=0)
>>> x.ndim, x.shape[1]                          # stacked: one array of shape (length, 2)
(2, 2)

Elements: a tuple of members (a list is accepted too) when ``stack=False``; with
``stack=True`` the *stacked* form of ``length`` members, Gymnasium's: the space's batch of
shape ``(length,)`` (an array for array and scalar spaces, a tuple/dict of stacked
components for products) where spaces whose batches are 1-d string or object arrays (Text,
OneOf, Sequence, Graph, finite sets of labels) give a tuple of their members.

Sampling is Gymnasium's: a length from the geometric distribution ``P(n) = 0.75**(n-1) / 4``
(``n >= 1``), then independent members. A batch of sequences is an object array.
The style is Unknown and the cardinality infinite; ``clamp`` clamps every member.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spacealg.core.plan import variant_of
from spacealg.core.protocol import clamp, contains, isin, issubspace, sample
from spacealg.core.rng import RngLike, as_generator
from spacealg.core.space import Space, nested_depth
from spacealg.spaces._batch import isin_objects, normalize_size
from spacealg.spaces._kind import register, register_infinite, register_unshaped, shown
from spacealg.spaces.product import assemble, has_parts, parts_of

__all__ = ["GEOMETRIC_P", "Sequence", "batch_form", "clamp_stacked", "object_batch", "one_by_one", "stack_items",
           "stacked", "stacked_length", "unstack"]

GEOMETRIC_P = 0.25
"""The success probability of Gymnasium's geometric sequence length."""


# -- the stacked form of n members of a space ------------------------------------------------


def batch_form(space: Any) -> str:
    """How a batch of ``space`` stacks: "array", "tuple" (of component batches), "dict", or
    "items" (a tuple of members: the spaces whose batches are string or object arrays);
    decided once, a variant of the space's plan."""
    return variant_of(space, "batch_form", _form)  # type: ignore[no-any-return]


def _form(space: Any) -> str:
    try:
        probe = sample(space, (0,), rng=0)
    except (TypeError, ValueError):
        return "items"
    if isinstance(probe, tuple):
        return "tuple"
    if isinstance(probe, Mapping):
        return "dict"
    if isinstance(probe, np.ndarray) and not _items_array(probe):
        return "array"
    return "items"


def _items_array(batch: np.ndarray) -> bool:
    """Whether a batch array holds scalar strings or objects (which stack as a tuple)."""
    return batch.dtype.kind in "OU" and batch.ndim == 1


def stacked(batch: Any) -> Any:
    """A batch in the stacked form: 1-d string and object arrays become tuples of members."""
    if isinstance(batch, np.ndarray):
        if not _items_array(batch):
            return batch
        return tuple(str(s) for s in batch) if batch.dtype.kind == "U" else tuple(batch)
    if isinstance(batch, tuple):
        return tuple(stacked(b) for b in batch)
    if isinstance(batch, Mapping):
        return {k: stacked(b) for k, b in batch.items()}
    return batch


def stacked_length(x: Any, space: Any) -> int | None:
    """The number of members stacked in ``x``, or None if ``x`` is not a stack of members."""
    form = batch_form(space)
    if form == "items":
        if not isinstance(x, (tuple, list)):
            return None
        return len(x) if all(contains(item, space) for item in x) else None
    if form == "array":
        if isinstance(x, (tuple, list, Mapping, str)):
            return None
        try:
            inside = np.asarray(isin(x, space))
        except (TypeError, ValueError):
            return None
        return int(inside.shape[0]) if inside.ndim == 1 and inside.all() else None
    if not has_parts(x, space):
        return None
    lengths = [stacked_length(x[k], s) for k, s in parts_of(space).items()]
    if not lengths:
        return 0
    return lengths[0] if None not in lengths and len(set(lengths)) == 1 else None


def _by_part(space: Any, each: Any) -> Any:
    """``each(key, component)`` for every component of a product ``space``, in its form."""
    return assemble(space, (each(k, s) for k, s in parts_of(space).items()))


def unstack(x: Any, space: Any) -> list[Any]:
    """The members stacked in ``x`` (a stack of members of ``space``), in order."""
    form = batch_form(space)
    if form == "items":
        return list(x)
    if form == "array":
        return list(np.asarray(x))
    columns = _by_part(space, lambda k, s: unstack(x[k], s))
    if form == "tuple":
        return [tuple(member) for member in zip(*columns)]
    return [dict(zip(columns, member)) for member in zip(*columns.values())]


def stack_items(items: list[Any], space: Any) -> Any:
    """The stacked form of ``items`` (members of ``space``): the inverse of :func:`unstack`."""
    form = batch_form(space)
    if form == "items":
        return tuple(items)
    if form == "array":
        empty = np.asarray(sample(space, (0,), rng=0))
        return np.array(items, dtype=empty.dtype) if items else empty
    return _by_part(space, lambda k, s: stack_items([m[k] for m in items], s))


def clamp_stacked(x: Any, space: Any) -> Any:
    """Every member of the stack ``x`` clamped into ``space``."""
    form = batch_form(space)
    if form == "items":
        return tuple(clamp(item, space) for item in x)
    if form == "array":
        return clamp(x, space)
    return _by_part(space, lambda k, s: clamp_stacked(x[k], s))


def object_batch(draw: Any, size: Any, rng: RngLike) -> Any:
    """``draw(generator)`` once (``size=None``) or into an object array of shape ``size``."""
    generator = as_generator(rng)
    if size is None:
        return draw(generator)
    shape = normalize_size(size)
    batch = np.empty(shape, dtype=object)
    for position in np.ndindex(shape):
        batch[position] = draw(generator)
    return batch


def one_by_one(draw: Any) -> Any:
    """The ``sample`` rule of a kind whose batches are object arrays: ``draw(space, generator)``
    for each member (:func:`object_batch`)."""
    return lambda space, size=None, *, rng=None: object_batch(lambda generator: draw(space, generator), size, rng)


# -- Sequence ------------------------------------------------------------------------------


class Sequence(Space):
    """Finite sequences of members of ``space``; ``stack=True`` stacks them (Gymnasium's ``stack``)."""

    space: Any
    stack: bool
    _space: Any

    def __init__(self, space: Any, stack: bool = False) -> None:
        if not isinstance(stack, (bool, np.bool_)):
            raise TypeError(f"Sequence: stack must be a bool, got {stack!r}")
        space, feature = shown(space)
        self._set(space=space, stack=bool(stack), _space=feature, _depth=nested_depth("Sequence", (feature,)))

    def _key(self) -> tuple[Any, ...]:
        return (self._space, self.stack)

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.space,), ({"stack": True} if self.stack else {})


def _contains(x: Any, space: Sequence) -> bool:
    if space.stack:
        return stacked_length(x, space._space) is not None
    return isinstance(x, (tuple, list)) and all(contains(item, space._space) for item in x)


def draw_sequence(space: Sequence, generator: np.random.Generator) -> Any:
    """One sequence: a geometric length, then independent members (stacked if asked)."""
    n = int(generator.geometric(GEOMETRIC_P))
    if space.stack:
        return stacked(sample(space._space, (n,), rng=generator))
    return tuple(sample(space._space, rng=generator) for _ in range(n))


def _eltype(space: Sequence) -> type:
    if not space.stack:
        return tuple
    return {"array": np.ndarray, "dict": dict}.get(batch_form(space._space), tuple)


def _clamp(x: Any, space: Sequence) -> Any:
    if space.stack:
        if stacked_length(x, space._space) is not None:
            return x
        return clamp_stacked(x, space._space)
    if not isinstance(x, (tuple, list)):
        raise TypeError(f"clamp: a member of {space!r} is a tuple, got {type(x).__qualname__}")
    return tuple(clamp(item, space._space) for item in x)


register(Sequence, contains=_contains, sample=one_by_one(draw_sequence), isin=isin_objects, eltype=_eltype,
         clamp=_clamp)
register_infinite(Sequence)
register_unshaped(Sequence, "sequences of any length")


@issubspace.register(Sequence, Sequence)
def _sequence_subset(a: Sequence, b: Sequence) -> bool:
    return a.stack == b.stack and issubspace(a._space, b._space)  # type: ignore[no-any-return]
