"""The index <-> value map of a finite leaf: every entry's values, numbered from 0.

One rule per kind of members (:class:`~spacealg.core.leaf.Members`), read by masks
(:mod:`spacealg.spaces.mask_factors`):

=====================================  ====================================================
leaf                                   the index of an entry ``x``
=====================================  ====================================================
integers ``low..high`` (no ``items``)  ``x - low``
a stepped range (``items``)            ``(x - items[0]) // (items[1] - items[0])``
a set of numbers or labels             the position of ``x`` among them
a point (every entry one real)         0
=====================================  ====================================================

``held(m, d)``: the items of a set leaf that NumPy dtype ``d`` holds exactly (a batch of
``d`` equals no other item; a clamp into ``d`` picks among these).

Laws, for a finite leaf ``m`` and members ``x``: ``values_at(m, positions(m, x)) == x``;
``0 <= positions(m, x) < counts(m)`` entrywise. On non-members ``positions`` returns
integers (junk, to be clipped) and never raises for a numeric array; an object array
raises TypeError (its entries are read one by one instead).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import numpy as np

from spacealg.core.leaf import LeafModel, Members, all_equal, exact_value, plain, widths

__all__ = ["clamp_holds", "counts", "exact_value", "finite", "held", "holds", "nearest_item", "nearest_step",
           "positions", "range_items", "values_at"]


def finite(model: LeafModel) -> bool:
    """Whether every entry of the leaf has finitely many values (then masks apply)."""
    if model.members is Members.REAL:
        return bool((model.value_low == model.value_high).all()) and not (model.open_low or model.open_high)
    if model.members is Members.INTEGERS:
        return bool(model.bounded_low.all() and model.bounded_high.all())
    return True


def counts(model: LeafModel) -> np.ndarray:
    """The number of values of every entry (an object array of ``shape``: exact ints)."""
    if model.items is not None:
        return np.full(model.shape, len(model.items), dtype=object)
    if model.numbers is not None:
        return np.full(model.shape, len(model.numbers), dtype=object)
    if model.members is Members.REAL:
        return np.ones(model.shape, dtype=object)
    return np.asarray(widths(model.value_low, model.value_high), dtype=object)


def _ordered(model: LeafModel) -> np.ndarray:
    """The values of an entry as an array, in index order."""
    return model.numbers if model.numbers is not None and model.items is None else model.item_array


def _stepped(model: LeafModel) -> tuple[Any, int]:
    """A stepped range's first item and signed step."""
    items = model.items or ()
    step = model.step if len(items) < 2 or items[1] > items[0] else -model.step
    return items[0], step


def positions(model: LeafModel, array: np.ndarray) -> np.ndarray:
    """The index of every entry of ``array`` (int64, ``array``'s shape)."""
    if array.dtype.kind == "O" and model.members is Members.INTEGERS:
        raise TypeError("an object batch is read element by element")  # isin falls back to contains
    if model.members is Members.REAL:
        return np.zeros(array.shape, dtype=np.int64)
    if model.members is Members.INTEGERS:
        if model.items is not None:
            first, step = _stepped(model)
            return _offsets(array, first, step)
        low = model.value_low
        return _offsets(array, low.reshape(-1)[0] if low.size and all_equal(low) else low)
    values = _ordered(model)
    n = len(values)
    if values.dtype.kind != "O" and n:
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        if not (array.dtype.kind == values.dtype.kind or (array.dtype.kind in "biuf" and values.dtype.kind in "biuf")):
            return np.zeros(array.shape, dtype=np.int64)
        at = np.clip(np.searchsorted(ordered, array), 0, n - 1)
        return order[at].astype(np.int64)  # type: ignore[no-any-return]
    lookup = model.lookup

    def position(x: Any) -> int:
        try:
            return lookup.get(plain(x), 0)
        except TypeError:  # unhashable
            return 0

    return np.asarray(np.frompyfunc(position, 1, 1)(array), dtype=np.int64).reshape(array.shape)


def _offsets(array: np.ndarray, low: Any, step: int = 1) -> np.ndarray:
    """``(array - low) // step`` as int64 for numeric arrays (junk, clipped later, elsewhere)."""
    if array.dtype.kind not in "biuf":
        return np.zeros(array.shape, dtype=np.int64)
    if array.dtype.kind == "f":
        values = np.where(np.isfinite(array), array, 0.0)
        offsets = np.floor((values - np.asarray(low, dtype=np.float64)) / step)
        return np.clip(offsets, -1, 2.0**62).astype(np.int64)
    low = np.asarray(low)
    if array.dtype == np.uint64 or low.dtype.kind in "uO":  # exact beyond int64
        offsets = (array.astype(object) - low.astype(object)) // step
        return np.asarray(np.clip(offsets, -1, 2**62), dtype=np.int64)
    return np.asarray((array.astype(np.int64) - low.astype(np.int64)) // step, dtype=np.int64)


def values_at(model: LeafModel, digits: np.ndarray) -> np.ndarray:
    """The values of the given indices (the leaf's value dtype; exact integers beyond it)."""
    digits = np.asarray(digits)
    if model.members is Members.REAL:
        low = model.value_low.astype(model.value_dtype)
        return np.broadcast_to(low, digits.shape).copy() if low.shape else np.full(digits.shape, low[()])
    if model.members is Members.INTEGERS:
        if model.items is not None:
            first, step = _stepped(model)
            return range_items(first, step, len(model.items), digits)
        low = model.value_low
        if low.dtype.kind == "O":
            return low + digits.astype(object)  # type: ignore[no-any-return]
        if not holds(np.dtype(model.value_dtype), int(model.value_high.max(initial=0))):  # ends beyond the dtype
            if model.uniform_bounds and low.size:
                first, last = int(low.reshape(-1)[0]), int(model.value_high.reshape(-1)[0])
                return range_items(first, 1, last - first + 1, digits)
            return low.astype(object) + digits.astype(object)  # type: ignore[no-any-return]
        # in the bounds' own dtype: uint64 + int64 would round through float64 beyond 2**53
        return (low + digits.astype(low.dtype)).astype(model.value_dtype)  # type: ignore[no-any-return]
    return _ordered(model)[digits]  # type: ignore[no-any-return]


def range_items(first: int, step: int, n: int, positions: np.ndarray) -> np.ndarray:
    """The items ``first + step * positions`` of a range of ``n`` items (``step`` of either
    sign), exactly: int64 when every item of the range fits int64, else uint64 when they fit
    uint64, else an object array of Python ints (the dtype of ``sample``'s batches)."""
    positions = np.asarray(positions)
    last = first + step * (n - 1) if n else first
    low, high = min(first, last), max(first, last)
    signed, unsigned = low >= -(2**63) and high < 2**63, low >= 0 and high < 2**64
    if signed or unsigned:
        # modular uint64 arithmetic is exact whenever the result fits the output dtype
        with np.errstate(over="ignore"):  # the wrap-around is the point
            wrapped = positions.astype(np.uint64, copy=False) * np.uint64(step % 2**64) + np.uint64(first % 2**64)
        return wrapped.view(np.int64) if signed else wrapped  # type: ignore[no-any-return]
    return first + step * positions.astype(object)  # type: ignore[no-any-return]


# -- the items a dtype holds exactly ---------------------------------------------------------


def _items(leaf: LeafModel) -> list[Any]:
    """The set's items as exact Python numbers (the labels where the leaf keeps them)."""
    source = leaf.items if leaf.items is not None else (leaf.numbers if leaf.numbers is not None else ())
    return [v.item() if isinstance(v, np.generic) else v for v in source]


def holds(dtype: np.dtype, v: Any) -> bool:
    """Whether NumPy ``dtype`` holds the number ``v`` exactly."""
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, float) and v != v:
        return False
    if dtype.kind == "b":
        return v in (0, 1)
    if dtype.kind in "iu":
        if isinstance(v, float) and not (np.isfinite(v) and v.is_integer()):
            return False
        info = np.iinfo(dtype)
        return int(info.min) <= int(v) <= int(info.max)
    exact = exact_value(v)
    if isinstance(exact, float):  # an infinity: every float dtype holds it
        return True
    if abs(exact) > exact_value(np.finfo(dtype).max):
        return False
    with np.errstate(over="ignore", under="ignore"):
        return bool(exact_value(dtype.type(v)) == exact)  # read back exactly (a longdouble too)


def held(leaf: LeafModel, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``(values, positions)``: the items NumPy ``dtype`` holds exactly, as an array of
    ``dtype``, and their positions among the set's items."""
    dtype = np.dtype(dtype)
    key = ("held", dtype.str)
    if key not in leaf.cache:
        items = _items(leaf)
        positions = [i for i, v in enumerate(items) if holds(dtype, v)]
        values = np.array([items[i] for i in positions], dtype=object).astype(dtype)
        leaf.cache[key] = (values, np.array(positions, dtype=np.int64))
    return leaf.cache[key]  # type: ignore[no-any-return]


def clamp_holds(model: LeafModel, dtype: Any) -> bool:
    """Whether NumPy ``dtype`` holds the clamp of every value it holds (``clamp_`` writes
    in place only then): every member between the clamps of ``dtype``'s least and greatest
    values, entry by entry, is a number of ``dtype``."""
    dtype = np.dtype(dtype)
    if model.members is Members.REAL or dtype.kind not in "biuf":
        return dtype.kind == "f"
    if dtype.kind == "f":
        largest = Fraction(float(np.finfo(dtype).max))
        least, greatest = -largest, largest  # (a set's items: its clamps of the largest floats)
    else:
        info = np.iinfo(np.uint8 if dtype.kind == "b" else dtype)
        least, greatest = Fraction(int(info.min)), Fraction(1 if dtype.kind == "b" else int(info.max))
    if model.members is Members.INTEGERS:
        exact = 2 ** (np.finfo(dtype).nmant + 1) if dtype.kind == "f" else None
        for low, high in zip(np.asarray(model.value_low).reshape(-1).tolist(),
                             np.asarray(model.value_high).reshape(-1).tolist()):
            if exact is not None:  # floats: the clamps of -inf and inf are the ends
                if max(abs(low), abs(high)) > exact:  # an integer between them the floats skip
                    return False
                continue
            first, last = (_snapped(v, low, high, model.step) for v in (least, greatest))  # the dtype's ends' clamps
            if first < least or last > greatest:
                return False
        return True
    items = sorted({exact_value(v) for v in _items(model)})
    if not items:
        return True
    first, last = nearest_item(items, least), nearest_item(items, greatest)
    values = {exact_value(v): v for v in _items(model)}
    return all(holds(dtype, values[v]) for v in items if first <= v <= last)


def _snapped(x: Fraction, low: Any, high: Any, step: int) -> Any:
    """The clamp of ``x`` into the integers ``low + step * k`` up to ``high``: the nearest,
    ties to the even ``k`` (monotone in ``x``: the clamps of a dtype's ends bound all others)."""
    if step == 1:  # every integer between: the clip (an integer Box's infinite end included)
        return min(max(x, low), high)
    return Fraction(low + step * nearest_step(x, low, step, (high - low) // step + 1))


def nearest_step(x: int | float | Fraction, first: int, step: int, n: int) -> int:
    """The position ``k`` (``0 <= k < n``) of the member ``first + step * k`` nearest to the
    real number ``x`` by exact value (an int, a float, a Fraction), ties to the even ``k``;
    an infinity: the member at that end. The one decision of a stepped range's clamp: the
    exact clamp of a number (:func:`spacealg.backends.host.nearest_position`) and the clamps
    of a dtype's ends (:func:`clamp_holds`) both read it; the batched rule
    (:mod:`spacealg.backends.clamp`) computes the same in fixed-width arithmetic."""
    if isinstance(x, float) and math.isinf(x):
        return n - 1 if x > 0 else 0
    whole = math.floor(x)
    twice = 2 * (x - whole)  # exact (a float's fraction doubled, a Fraction's): in [0, 2)
    k, rest = divmod(whole - first, step)
    s = step - 2 * rest  # twice the distance to the member above, less the fraction's part
    if s < twice or (s == twice and k % 2):
        k += 1
    return min(max(k, 0), n - 1)


def nearest_item(items: Iterable[Any], x: Any) -> Any:
    """The item of ``items`` (real numbers) nearest to the real number ``x`` by exact value,
    ties to the lower; an infinity: the item at that end. The one decision of a finite set's
    exact clamp (:func:`spacealg.backends.host.finite_clamp`) and of :func:`clamp_holds`."""
    exact = exact_value(x)
    if not isinstance(exact, Fraction):  # an infinity
        return max(items, key=exact_value) if exact > 0 else min(items, key=exact_value)
    return min(items, key=lambda v: (abs(exact_value(v) - exact), exact_value(v)))
