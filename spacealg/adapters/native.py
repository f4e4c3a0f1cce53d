"""The protocol on Gymnasium (and Gym) space instances, so every generic function takes them.

* ``as_space(g)`` is ``from_gymnasium(g)`` (``from_gym`` for Gym), converted once per
  instance and cached (Gymnasium spaces are treated as immutable once used);
  ``SpaceStyle``, ``cardinality``, ``bounds``, ``elements``, ``index``, … reach the
  spacealg implementation through it.
* ``contains(x, g) == g.contains(x)``, except that it never raises (an exception is False).
* ``isin(batch, g)[i] == contains(batch[i], g)``, vectorised for the array classes; batches
  of Tuple/Dict are tuples/dicts of component batches, as for spacealg's products.
* ``sample(g, size, rng=...)`` draws with Gymnasium's distributions and returns ``g``'s own
  value types: numpy scalars of ``g.dtype`` for Discrete, arrays of ``g.dtype`` for Box and
  MultiDiscrete, int8 arrays for MultiBinary, ``str`` for Text, ``(np.int64, value)`` for
  OneOf, tuples (or Gymnasium's stacked form) for Sequence, ``GraphInstance`` for Graph.
  Batches: arrays of shape ``(*size, *shape)``, tuples/dicts of batches for Tuple/Dict,
  a unicode array for Text and object arrays for Sequence, Graph and OneOf.
* ``eltype(g)`` is the type of ``sample(g)``; ``clamp(x, g)`` is the nearest member in
  ``g``'s dtype.

Law: ``contains(sample(g, rng=r), g)`` and ``isin(sample(g, n, rng=r), g).all()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.core.cache import IdentityCache
from spacealg.core.kernel import NUMPY
from spacealg.core.plan import variant_of
from spacealg.core.protocol import clamp, sample
from spacealg.core.rng import RngLike, as_generator
from spacealg.spaces._batch import all_trailing, batch_shape, items_array, normalize_size

__all__ = [
    "all_of",
    "converted",
    "gym_class_of",
    "isin_box",
    "isin_discrete",
    "isin_items",
    "isin_multibinary",
    "isin_multidiscrete",
    "items_array",
    "safe_contains",
    "sample_box",
    "sample_discrete",
    "sample_multibinary",
    "sample_multidiscrete",
]

def converted(space: Any, convert: Callable[[Any], Any]) -> Any:
    """``convert(space)``, computed once per live instance: a variant of its plan
    (:mod:`spacealg.core.plan`), which dies with the instance."""
    return variant_of(space, "as_space", convert)


FAMILIES = ("gymnasium", "gym")
#: keyed by class, not by space (no plan): 0.15 us a lookup against 1.1 us for the walk of a Dict's MRO
_GYM_CLASSES: IdentityCache[tuple[str, str] | tuple[()]] = IdentityCache("Gymnasium/Gym classes")


def gym_class_of(space: Any) -> tuple[str, str] | None:
    """``(family, class name)`` for a Gymnasium or Gym space (family ``"gymnasium"`` or
    ``"gym"``; the nearest class of its MRO defined in ``<family>.spaces``, e.g.
    ``("gym", "Box")``), None for anything else. The one place spacealg tells Gymnasium
    and Gym spaces apart; it never imports Gym."""
    cls = type(space)
    found = _GYM_CLASSES.get(cls)
    if found is None:
        found = ()
        for base in cls.__mro__:
            family, _, rest = base.__module__.partition(".")
            if family in FAMILIES and rest.startswith("spaces"):
                found = (family, base.__name__)
                break
        _GYM_CLASSES.put(cls, found)
    return found or None


def safe_contains(space: Any, x: Any) -> bool:
    """``space.contains(x)``, with False for any exception."""
    try:
        return bool(space.contains(x))
    except Exception:
        return False


def isin_items(batch: Any, space: Any) -> np.ndarray:
    """Element-by-element membership of a batch (an array or sequence of elements).

    Entries of a numeric array are tested as the numpy scalars indexing gives (not as the
    Python scalars ``np.frompyfunc`` would pass: ``Discrete.contains`` takes ``True``, an
    ``int``, but not ``np.True_``)."""
    array = items_array(batch)
    if array.dtype.kind != "O":
        result = np.zeros(array.shape, dtype=bool)
        for position in np.ndindex(array.shape):
            result[position] = safe_contains(space, array[position])
        return result
    member = np.frompyfunc(lambda x: safe_contains(space, x), 1, 1)
    return np.asarray(member(array), dtype=bool).reshape(array.shape)


def all_of(parts: list[np.ndarray], space: Any) -> np.ndarray:
    """The conjunction of the components' memberships of a product batch (:meth:`Kernel.all_of
    <spacealg.core.kernel.Kernel.all_of>`: broadcast as NumPy broadcasts)."""
    return NUMPY.all_of([np.asarray(p) for p in parts], space)  # type: ignore[no-any-return]


def _scalars(array: np.ndarray, space: Any) -> bool:
    """Whether the elements of the batch are numpy scalars (a 0-d space), which
    MultiDiscrete/MultiBinary ``contains`` reject (they want arrays)."""
    return tuple(space.shape) == () and array.ndim > 0


def isin_box(batch: Any, space: Any) -> np.ndarray:
    """Box: castable dtype, trailing shape, within bounds (as ``Box.contains``).

    The elements of a batch of a 0-d Box are numpy scalars, which ``Box.contains`` first
    casts to the Box's dtype; arrays must have a dtype that casts safely.
    """
    array = batch if isinstance(batch, np.ndarray) else np.asarray(batch)
    leading = batch_shape(array, space.shape, space)
    if array.dtype.kind == "O":  # Python numbers (or arrays of them): each element as Box.contains takes it
        result = np.zeros(leading, dtype=bool)
        for position in np.ndindex(leading):
            result[position] = safe_contains(space, array[position])
        return result
    if array.dtype.kind not in "biuf":
        return np.zeros(leading, dtype=bool)
    if space.shape == () and array.ndim:
        with np.errstate(all="ignore"):
            array = array.astype(space.dtype)
    elif not np.can_cast(array.dtype, space.dtype):
        return np.zeros(leading, dtype=bool)
    return all_trailing((array >= space.low) & (array <= space.high), len(space.shape))


def isin_discrete(batch: Any, space: Any) -> np.ndarray:
    """Discrete: integer entries of a castable dtype within range (Python ints one by one)."""
    if not isinstance(batch, np.ndarray) or batch.dtype.kind == "O":
        return isin_items(np.asarray(batch, dtype=object), space)
    if batch.dtype.kind not in "iu" or not np.can_cast(batch.dtype, space.dtype):
        return np.zeros(batch.shape, dtype=bool)
    start = int(space.start)
    return (batch >= start) & (batch <= start + int(space.n) - 1)  # type: ignore[no-any-return]


def isin_multidiscrete(batch: Any, space: Any) -> np.ndarray:
    """MultiDiscrete: arrays of a dtype that casts safely (bool included, as for
    ``MultiDiscrete.contains``) with entries within each entry's range."""
    array = batch if isinstance(batch, np.ndarray) else np.asarray(batch)
    leading = batch_shape(array, space.shape, space)
    if array.dtype.kind not in "biu" or not np.can_cast(array.dtype, space.dtype) or _scalars(array, space):
        return np.zeros(leading, dtype=bool)
    start = getattr(space, "start", 0)
    inside = (array >= start) & (array <= start + (space.nvec - 1))
    return all_trailing(inside, len(space.shape))


def isin_multibinary(batch: Any, space: Any) -> np.ndarray:
    """MultiBinary: arrays of the shape whose entries equal 0 or 1 (any dtype)."""
    array = batch if isinstance(batch, np.ndarray) else np.asarray(batch)
    leading = batch_shape(array, space.shape, space)
    if array.dtype.kind == "O":
        return _binary_items(array, leading, space)
    if _scalars(array, space):
        return np.zeros(leading, dtype=bool)
    with np.errstate(invalid="ignore"):
        inside = (array == 0) | (array == 1)
    return all_trailing(np.asarray(inside, dtype=bool), len(space.shape))


def _binary_items(array: np.ndarray, leading: tuple[int, ...], space: Any) -> np.ndarray:
    result = np.zeros(leading, dtype=bool)
    for position in np.ndindex(leading):
        result[position] = safe_contains(space, np.asarray(array[position]))
    return result


# -- sampling with Gymnasium's distributions, in the space's own value types ---------------
# (``sample_discrete``/``multidiscrete``/``multibinary`` have ``sample``'s signature: registered as they are)


def sample_box(spacealg_box: Any, size: Any, rng: RngLike) -> Any:
    """A Box sample (spacealg's Box draws with Gymnasium's rule, in the Box's dtype); like
    ``Box.sample``, a single draw of a 0-d integer or bool Box is a numpy scalar."""
    drawn = sample(spacealg_box, size, rng=rng)
    if size is None and spacealg_box.shape == () and spacealg_box.dtype.kind in "biu":
        return drawn[()]
    return drawn


def sample_discrete(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
    """``start + uniform(n)``, a numpy scalar (or array) of the space's dtype."""
    generator = as_generator(rng)
    if size is None:
        return space.start + generator.integers(space.n, dtype=space.dtype)
    return space.start + generator.integers(space.n, size=normalize_size(size), dtype=space.dtype)


def sample_multidiscrete(space: Any, size: Any = None, *, rng: RngLike = None) -> np.ndarray:
    """Uniform entries in ``range(start, start + nvec)``, an array of the space's dtype."""
    generator = as_generator(rng)
    dtype = np.dtype(space.dtype)
    start = np.asarray(getattr(space, "start", np.zeros(space.nvec.shape, dtype=dtype)), dtype=dtype)
    low = start
    high = start + (np.asarray(space.nvec, dtype=dtype) - 1)
    shape = normalize_size(size) + tuple(space.nvec.shape)
    return np.asarray(generator.integers(low, high, size=shape, endpoint=True, dtype=dtype), dtype=dtype)


def sample_multibinary(space: Any, size: Any = None, *, rng: RngLike = None) -> np.ndarray:
    """Fair coins, an int8 array."""
    generator = as_generator(rng)
    return generator.integers(0, 2, size=normalize_size(size) + tuple(space.shape), dtype=np.int8)


def clamp_native(x: Any, space: Any, spacealg_space: Any, encode: Callable[[Any, Any], Any]) -> Any:
    """``clamp`` on a native space: spacealg's nearest member, in the native value types."""
    return encode(clamp(x, spacealg_space), spacealg_space)
