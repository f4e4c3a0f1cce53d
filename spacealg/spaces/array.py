"""ArraySpace: arrays of a given shape whose entries lie in a base space.

>>> import numpy as np
>>> from spacealg import ArraySpace, Interval, SpaceStyle, Box
>>> s = ArraySpace(range(1, 6), 2, 3)
>>> x = s.sample(rng=0); x.shape, x in s
((2, 3), True)
>>> SpaceStyle(ArraySpace(bool, 3, 4))
FiniteSpaceStyle(shape=(3, 4))
>>> ArraySpace(Interval(1, 5), 3, 4) == Box(1.0, 5.0, shape=(3, 4), dtype=np.float64)
True

Canonical forms (what the constructor returns, so that ``==`` compares like with like):

==============================  ==============================================
base                            ``ArraySpace(base, *dims)`` is
==============================  ==============================================
closed ``Interval``             ``Box(low, high, dims, float64)``
``float`` / numpy float type    ``Box(-inf, inf, dims, that dtype)``
numpy integer type              ``Box(min, max, dims, that dtype)``
``Box`` of shape ``s``          ``Box`` of shape ``(*dims, *s)``
``ArraySpace(b, *d)``           ``ArraySpace(b, *dims, *d)``
``TupleProduct`` / ``DictProduct``  the product of the components' arrays (stacked batches)
anything with scalar elements   an ``ArraySpace`` (finite sets, ranges, ``bool``, open intervals, text)
==============================  ==============================================

Laws: ``cardinality(ArraySpace(b, *d)) == cardinality(b) ** prod(d)``; ``elements`` and
``index`` enumerate in C order (last axis fastest); every operation is vectorised over
the entries through the base's batched ``isin``/``sample``/``clamp``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator
from typing import Any, SupportsIndex

import numpy as np

from spacealg.core import hooks
from spacealg.core.generic import as_space, generic
from spacealg.core.kernel import Kernel
from spacealg.core.protocol import (
    SpaceStyle,
    bounds,
    cardinality,
    check_position,
    clamp,
    clamp_,
    contains,
    element,
    elements,
    elsize,
    index,
    intersect,
    isin,
    issubspace,
    sample,
)
from spacealg.core.rng import no_extra
from spacealg.core.space import Space, nested_depth
from spacealg.core.styles import ContinuousSpaceStyle, FiniteSpaceStyle, Style, UnknownSpaceStyle
from spacealg.spaces._batch import batch_shape, items_array, normalize_size
from spacealg.spaces._counting import lazy_product, power
from spacealg.spaces._kind import on_numpy, register, register_batched, shown
from spacealg.spaces.box import Box
from spacealg.spaces.finite import BOOL, FiniteSet
from spacealg.spaces.interval import Interval

__all__ = ["RULES", "ArraySpace", "array_of"]


def _dims_arg(dims: tuple[Any, ...]) -> tuple[int, ...]:
    if len(dims) == 1 and isinstance(dims[0], tuple):
        dims = dims[0]
    checked = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"ArraySpace: dims must be ints, got {dims!r}")
        if d < 0:
            raise ValueError(f"ArraySpace: dims must be non-negative, got {dims!r}")
        checked.append(int(d))
    return tuple(checked)


@generic(0)
def array_of(space: Any, dims: tuple[int, ...], base: Any) -> Any:
    """The canonical space of arrays of shape ``dims`` over ``space`` (see the module's table).

    ``base`` is what the user wrote (a type, say) and ``space`` is ``as_space(base)``.
    Returns None where the plain ``ArraySpace`` is the canonical form.
    """
    try:
        scalar = elsize(space) == ()
    except TypeError:
        scalar = False
    if not scalar:
        raise TypeError(
            f"ArraySpace: the base {base!r} does not have scalar elements; "
            "use TupleProduct for arrays of structured values"
        )
    return None


@array_of.register(Interval)
def _interval_array(space: Interval, dims: tuple[int, ...], base: Any) -> Any:
    if isinstance(base, type) and issubclass(base, (float, np.floating)):
        dtype = np.float64 if base is float else base
        return Box(-np.inf, np.inf, shape=dims, dtype=dtype)
    if space.closed == "both":
        return Box(float(space.low), float(space.high), shape=dims, dtype=np.float64)
    return None


@array_of.register(range)
def _range_array(space: range, dims: tuple[int, ...], base: Any) -> Any:
    if isinstance(base, type) and issubclass(base, np.integer):
        return Box(space.start, space.stop - 1, shape=dims, dtype=base)
    return None


@array_of.register(Box)
def _box_array(space: Box, dims: tuple[int, ...], base: Any) -> Box:
    args, _ = space._constructor_args()
    shape = dims + space.shape
    low, high = (np.broadcast_to(np.asarray(a), shape) for a in args)
    return Box(low, high, shape=shape, dtype=space.dtype)


class ArraySpace(Space):
    """Arrays of shape ``dims`` whose entries lie in ``base``."""

    _fields = ("base", "dims")
    base: Any
    dims: tuple[int, ...]
    space: Any
    size: int

    def __new__(cls, base: Any, *dims: SupportsIndex) -> Any:
        checked = _dims_arg(dims)
        canonical = array_of(as_space(base), checked, base)
        if canonical is not None:
            return canonical
        return super().__new__(cls)

    def __init__(self, base: Any, *dims: SupportsIndex) -> None:
        if "dims" in self.__dict__:  # __new__ returned an already built (canonical) space
            return
        base, space = shown(base)
        checked = _dims_arg(dims)
        self._set(_depth=nested_depth("ArraySpace", (space,)), base=base, dims=checked, space=space,
                  size=math.prod(checked))

    def _key(self) -> tuple[Any, ...]:
        return (self.space, self.dims)

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.base, *self.dims), {}

    def __reduce__(self) -> tuple[Any, ...]:
        return (ArraySpace, (self.base, *self.dims))


@array_of.register(ArraySpace)
def _nested_array(space: ArraySpace, dims: tuple[int, ...], base: Any) -> Any:
    return ArraySpace(space.base, *(dims + space.dims))


def _as_array(x: Any) -> np.ndarray | None:
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (str, bytes)):
        return None
    try:
        return np.asarray(x)
    except (ValueError, TypeError, OverflowError):
        return None


def _contains(x: Any, space: ArraySpace) -> bool:
    a = _as_array(x)
    if a is None or a.shape != space.dims:
        return False
    try:
        return bool(isin(a, space.space).all())
    except (ValueError, TypeError):
        return False




def _style(space: ArraySpace) -> Style:
    base = SpaceStyle(space.space)  # Finite or Continuous of the array's shape, as its entries are
    if isinstance(base, (FiniteSpaceStyle, ContinuousSpaceStyle)):
        return type(base)(space.dims)
    return UnknownSpaceStyle()


def _bounds(space: ArraySpace) -> tuple[np.ndarray, np.ndarray]:
    low, high = bounds(space.space)
    return np.full(space.dims, low), np.full(space.dims, high)




def _require_shape(a: np.ndarray | None, space: ArraySpace, what: str) -> None:
    """ValueError naming ``what`` unless ``a`` is an array of ``space``'s elements or a batch of
    them (trailing shape ``space.dims``): one check for ``clamp`` and ``clamp_``, as on torch/JAX."""
    if a is None or a.ndim < len(space.dims) or a.shape[a.ndim - len(space.dims) :] != space.dims:
        raise ValueError(f"{what}: x is not an array of shape {space.dims} (or a batch of them)")


def _entry_dtype(space: ArraySpace) -> np.dtype:
    return np.asarray(sample(space.space, (1,), rng=0)).dtype


def _elements(space: ArraySpace) -> Iterator[np.ndarray]:
    dtype = _entry_dtype(space)
    return (_filled(combo, dtype, space.dims) for combo in lazy_product(lambda _: elements(space.space), space.size))


def _filled(entries: Any, dtype: np.dtype, dims: tuple[int, ...]) -> np.ndarray:
    """An array of shape ``dims`` whose entries are ``entries`` (C order), each kept whole:
    an object array of tuple labels holds the tuples, never their items."""
    if dtype.kind != "O":
        return np.array(entries, dtype=dtype).reshape(dims)
    return items_array(entries).reshape(dims)


def _index(x: Any, space: ArraySpace) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x is not a member of {space!r}")
    n = int(cardinality(space.space))  # finite: index is defined on finite spaces only
    position = 0
    for entry in np.asarray(x).flat:
        position = position * n + index(entry, space.space)
    return position


def _element(i: Any, space: ArraySpace) -> np.ndarray:
    i = check_position(i, power(cardinality(space.space), space.size))
    n = int(cardinality(space.space))  # finite: index is defined on finite spaces only
    digits = []
    for _ in range(space.size):
        i, digit = divmod(i, n)
        digits.append(element(digit, space.space))
    return _filled(digits[::-1], _entry_dtype(space), space.dims)


# -- the batched rules: one over the kernel, for NumPy, torch and JAX alike: the entries' own ----------


def _sample_rule(k: Kernel, space: ArraySpace, size: Any = None, *, rng: Any, **extra: Any) -> Any:
    """The entries' draw of ``(*size, *dims)`` entries."""
    if extra:
        no_extra(extra, k.name)
    return k.xp.asarray(sample(space.space, normalize_size(size) + space.dims, rng=k.spawn()))


def _isin_rule(k: Kernel, batch: Any, space: ArraySpace) -> Any:
    """The entries' ``isin``, every entry of a row inside (ValueError unless the trailing shape is ``dims``)."""
    a = _as_array(batch) if k.name == "numpy" else batch  # NumPy's takes nested lists too
    if a is None:
        raise ValueError(f"isin: {type(batch).__qualname__} is not a batch of {space!r}")
    batch_shape(a, space.dims, space)
    inside, n = isin(a, space.space), len(space.dims)
    if not n:
        return inside
    width = math.prod(space.dims)
    return k.every(width)(k.xp.reshape(inside, (*tuple(inside.shape)[: len(inside.shape) - n], width)))


def _clamp_rule(k: Kernel, x: Any, space: ArraySpace) -> Any:
    """The entries' ``clamp`` (a NumPy member comes back as it is); ValueError unless the trailing shape is ``dims``."""
    if k.name == "numpy" and contains(x, space):
        return x
    a = _as_array(x) if k.name == "numpy" else x
    _require_shape(a, space, "clamp")
    return k.xp.asarray(clamp(a, space.space))


def _clamp_inplace_rule(k: Kernel, x: Any, space: ArraySpace) -> Any:
    """The entries' ``clamp_``; ValueError unless the trailing shape is ``dims``."""
    if k.name != "numpy" or isinstance(x, np.ndarray):  # anything else: the entries' clamp_ refuses it (TypeError)
        _require_shape(x, space, "clamp_")
    return clamp_(x, space.space)


#: operation -> the array spaces' batched rule, over the kernel of NumPy, torch or JAX
RULES: dict[str, Callable[..., Any]] = {
    "isin": _isin_rule, "sample": _sample_rule, "clamp": _clamp_rule, "clamp_": _clamp_inplace_rule}


register(ArraySpace, contains=_contains, eltype=lambda space: np.ndarray, elsize=lambda space: space.dims,
         SpaceStyle=_style, bounds=_bounds, cardinality=lambda space: power(cardinality(space.space), space.size),
         elements=_elements, index=_index, element=_element)
register_batched(ArraySpace, on_numpy(**RULES), **RULES)  # torch/JAX: through spacealg.backends.parts


@issubspace.register(ArraySpace, ArraySpace)
def _array_subset(a: ArraySpace, b: ArraySpace) -> bool:
    return a.dims == b.dims and issubspace(a.space, b.space)


@issubspace.register(ArraySpace, Box)
def _array_box_subset(a: ArraySpace, b: Box) -> bool:
    if a.dims != b.shape:
        return False
    if a.size == 0:
        return True
    try:
        low, high = bounds(a.space)
    except TypeError:
        return False
    if not (np.isfinite(low) and np.isfinite(high)) and b.integral:
        return False  # an integer box is bounded; a base unbounded on a side is not inside it
    if b.integral and not issubspace(a.space, range(int(np.floor(low)), int(np.floor(high)) + 1)):
        return False
    return bool((np.asarray(low) >= b.low).all() and (np.asarray(high) <= b.high).all())


@issubspace.register(Box, ArraySpace)
def _box_array_subset(a: Box, b: ArraySpace) -> bool:
    if a.shape != b.dims:
        return False
    pairs = set(zip(a.low.flat, a.high.flat))
    if a.integral:
        return all(issubspace(range(int(lo), int(hi) + 1), b.space) for lo, hi in pairs)
    return all(issubspace(Interval(float(lo), float(hi)), b.space) for lo, hi in pairs)


@intersect.register(ArraySpace, ArraySpace)
def _array_intersect(a: ArraySpace, b: ArraySpace) -> Any:
    if a.dims != b.dims:
        return FiniteSet()
    common = intersect(a.space, b.space)
    if cardinality(common) == 0 and a.size:
        return FiniteSet()
    return ArraySpace(common, *a.dims)


def _uniform_entry_space(box: Box) -> Any:
    """The one set every entry of ``box`` ranges over, or None when the bounds vary by entry."""
    low, high = box.low.reshape(-1), box.high.reshape(-1)
    if low.size == 0 or (low != low[0]).any() or (high != high[0]).any():
        return None
    if box.integral:
        return range(int(low[0]), int(high[0]) + 1)
    return Interval(float(low[0]), float(high[0]))


@intersect.register(Box, ArraySpace)
def _box_array_intersect(a: Box, b: ArraySpace) -> Any:
    if a.shape != b.dims:
        return FiniteSet()
    entries = _uniform_entry_space(a)
    if entries is None:
        raise TypeError(f"intersect: {a!r} has per-entry bounds; its intersection with {b!r} has no closed form")
    common = intersect(entries, b.space)
    if cardinality(common) == 0 and b.size:
        return FiniteSet()
    return ArraySpace(common, *b.dims)


@intersect.register(ArraySpace, Box)
def _array_box_intersect(a: ArraySpace, b: Box) -> Any:
    return _box_array_intersect(b, a)


# -- the leaf model (spacealg.core.leaf): the base's model, per entry -------------------------

from spacealg.core import leaf as _leaf_model  # noqa: E402


@_leaf_model.leaf.register(ArraySpace)
def _array_leaf(space: ArraySpace) -> _leaf_model.LeafModel | None:
    if space.space == BOOL:  # stored as int8 0/1, its members bools
        return _leaf_model.LeafModel("MultiBinary", np.dtype(np.int8), space.dims, 0, 1,
                                     numbers=np.array([False, True]), space=space)
    base = _leaf_model.leaf(space.space)
    if base is None or not base.scalar or base.items == ():
        return None
    image = "MultiDiscrete" if base.image == "Discrete" else base.image
    return _leaf_model.over(base, space.dims, space, image)


hooks.array_of.define(ArraySpace)  # ``a ** n`` on spacealg's spaces
