"""The kind rules of the leaf kinds (``Box``, ``Interval``, ``Categorical``, ``FiniteSet`` of numbers,
``range``): ``isin``, ``sample``, ``clamp`` and ``clamp_`` by the per-leaf plans
(:mod:`~spacealg.backends.isin`, :mod:`~spacealg.backends.sample`, :mod:`~spacealg.backends.clamp`)
on the kernel's backend, and their NumPy entries, the same plans over NumPy's kernel
(:class:`~spacealg.core.kernel.Kernel`, the one NumPy call runs on) and
:class:`~spacealg.backends.rng.NumpyRng`.

Layers: the spaces (below this package) define the kinds and their scalar ``contains``;
this package holds the batched rules, so its import registers them for each kind it serves
(:func:`spacealg.core.arrays.register_kind_rule`, as any kind registers its own; the space's
route, :func:`spacealg.core.plan.route`, calls them). What NumPy takes that no tensor is, is
settled here before the rule runs: lists and Python numbers become arrays
(:func:`~spacealg.spaces._batch.as_real_array`), a batch of non-numbers has no member,
``rng`` becomes a ``numpy.random.Generator``, ``clamp`` of a member is the member itself,
and what only object arrays hold (labels, sets no numeric dtype holds) goes by position
among a FiniteSet's items, and what no 64-bit integer holds (ranges beyond int64, Python
ints beyond 64 bits) entry by entry in exact arithmetic (:func:`range_isin_exact`,
:func:`range_clamp_exact`, :func:`range_sample_items`), except an integer batch's ``isin``,
which the rule answers on the items its dtype holds (:func:`int64_window`, which says why
the rest cannot be written over a kernel).

Laws: ``isin(b, s)[i] == contains(b[i], s)``; ``isin(sample(s, n, rng=g), s).all()``;
``contains(clamp(x, s), s)`` and ``clamp(x, s) is x`` for a member ``x``; ``clamp_(x, s)``
writes ``clamp(x, s)`` into ``x`` (a writable array whose dtype holds it) or raises
TypeError leaving ``x`` unchanged.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.clamp import clamp_inplace_on, clamp_on
from spacealg.backends.isin import isin_on, isin_variant
from spacealg.backends.rng import NumpyRng
from spacealg.backends.sample import draws_for, sample_on
from spacealg.core.arrays import register_kind_rule
from spacealg.core.leaf import leaf
from spacealg.core.leaf_index import clamp_holds, nearest_item, nearest_step, range_items
from spacealg.core.plan import kept_plan, plan_for
from spacealg.core.protocol import clamp, contains, elsize, eltype
from spacealg.core.rng import RngLike, as_generator, no_extra
from spacealg.spaces._batch import as_real_array, isin_objects, normalize_size
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import (
    FiniteSet,
    ascending,
    int64_ends,
    isin_items,
    range_length,
    require_nonempty,
    require_numeric,
    sample_items,
)
from spacealg.spaces.interval import Interval, real_value

__all__ = ["ENTRIES", "RULES", "finite_clamp", "finite_clamp_", "finite_isin", "finite_sample", "host_clamp",
           "host_clamp_", "host_isin", "host_sample", "int64_window", "positions_below", "range_clamp", "range_clamp_",
           "range_isin", "range_sample"]


def host_isin(batch: Any, space: Any) -> Any:
    """``isin`` of a NumPy batch (or a list, or a number) of a leaf space."""
    a = as_real_array(batch)
    if a is None:
        element = elsize(space)
        if isinstance(batch, np.ndarray) and batch.ndim >= len(element):
            lead = batch.shape[: batch.ndim - len(element)]
            if batch.dtype.kind == "O":  # Python numbers no dtype holds (ints beyond 64 bits): row by row
                return np.array([contains(batch[i], space) for i in np.ndindex(lead)], dtype=bool).reshape(lead)
            return np.zeros(lead, dtype=bool)  # no number: no member
        raise ValueError(f"isin: {type(batch).__qualname__} is not a batch of {space!r}")
    return _isin_array(a, space)


def _isin_array(a: np.ndarray, space: Any) -> Any:
    """The rule's test of a leaf space for ``a``'s dtype, kept per dtype in the space's plan
    (its ``numpy_isin`` variant, read as an attribute): one row of ArraySpace(bool, 4)
    (contains of the bench's small Dict) costs 2.3 us at ef41173, 4.4 us through isin_on,
    2.0 us through this (bench row "contains(x, small Dict)": 1.04x)."""
    plan = kept_plan(space)
    if plan is None or plan.numpy_isin is None:
        plan = plan_for(space, "numpy", "isin")
        plan.variant("numpy_isin", dict)  # batch dtype -> the rule's test
    tests = plan.numpy_isin
    run = tests.get(a.dtype)
    if run is None:
        run = tests[a.dtype] = isin_variant("numpy", space, plan, (a,))
    return run((a,))


def host_sample(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
    """``sample`` of a leaf space with a NumPy generator (or a seed, or None); one element
    of a scalar kind (``size=None``) is its ``eltype``: a float, an int, a NumPy scalar."""
    global _LAST_ADAPTER
    plan = kept_plan(space)
    kept = plan.numpy_draw if plan is not None else None
    generator = as_generator(rng)
    last = _LAST_ADAPTER  # one read of an immutable pair: consistent under threads
    if last[0] is generator:
        adapter = last[1]
    else:
        adapter = NumpyRng(generator)
        _LAST_ADAPTER = (generator, adapter)
    if kept is None:  # the rule's draw of the space's one leaf and its scalar type, kept in its plan
        plan, draws = draws_for(space, adapter)
        kept = plan.variant("numpy_draw", lambda: (draws[0], _scalar_type(space)))
    draw, scalar = kept
    drawn = draw(adapter, () if size is None else normalize_size(size))
    if size is None and scalar is not None:
        return scalar(drawn)
    return drawn if type(drawn) is np.ndarray else np.asarray(drawn)  # a 0-d array, not a NumPy scalar


#: the last generator drawn from and its adapter (a NumpyRng holds nothing else): most calls
#: draw from the same generator (bench row "sample(Box(16))": 0.1 us of its 3.1 us)
_LAST_ADAPTER: tuple[Any, Any] = (None, None)

def _scalar_type(space: Any) -> Any:
    """The type of an element of a scalar kind (an Interval's float, a range's int, a
    Discrete Categorical's NumPy integer), None for a kind whose elements are arrays."""
    kind = eltype(space)
    return None if kind is np.ndarray else kind


def host_clamp(x: Any, space: Any) -> Any:
    """``clamp`` of a NumPy array (or a list, or a number): ``x`` itself when a member; a
    Python number into a scalar kind gives its ``eltype``."""
    if contains(x, space):
        return x
    a = as_real_array(x)
    if a is None and _python_numbers(x, space):
        return _clamp_objects(x, space)
    if a is None or isinstance(x, (str, bytes)):
        raise TypeError(f"clamp: x must be a real number or array, got {type(x).__qualname__}")
    clamped = clamp_on("numpy", a, space)
    if a.ndim == 0 and not isinstance(x, np.ndarray):
        scalar = _scalar_type(space)
        if scalar is not None:
            value = scalar(clamped)
            return value if value == clamped else clamped[()]  # a longdouble no float holds stays itself
    return clamped


def _python_numbers(x: Any, space: Any) -> bool:
    """Whether ``x`` is an object batch of ``space`` holding real numbers only."""
    return (isinstance(x, np.ndarray) and x.dtype.kind == "O" and x.ndim >= len(elsize(space))
            and all(isinstance(v, numbers.Real) for v in x.reshape(-1).tolist()))


def _clamp_objects(x: np.ndarray, space: Any) -> np.ndarray:
    """An object batch of Python numbers no dtype holds (ints beyond 64 bits), row by row:
    members kept, any other row clamped from its nearest float64s."""
    lead, out = x.shape[: x.ndim - len(elsize(space))], np.empty(x.shape, dtype=object)
    for i in np.ndindex(lead):
        row = x[i]
        out[i] = row if contains(row, space) else np.asarray(clamp(np.asarray(row, dtype=np.float64), space))[()]
    return out


def host_clamp_(x: Any, space: Any) -> Any:
    """``clamp_`` of a writable NumPy array: the clamp written into ``x``."""
    if not isinstance(x, np.ndarray) or not x.flags.writeable:
        raise TypeError("clamp_: x must be a writable numpy array")
    return clamp_inplace_on("numpy", x, space)


# -- FiniteSet: its numbers by the rule; labels, and one item, by position among the items -------


def _numbers(space: FiniteSet) -> bool:
    """Whether the rule serves ``space``'s batches: a set of numbers that an array holds."""
    return space._numeric and space._array.dtype.kind in "biuf"


def finite_isin(batch: Any, space: FiniteSet) -> Any:
    """``isin`` of a FiniteSet: arrays of numbers by the rule, anything else by its items."""
    a = as_real_array(batch) if _numbers(space) else None
    return isin_items(batch, space) if a is None else _isin_array(a, space)


def finite_sample(space: FiniteSet, size: Any = None, *, rng: RngLike = None) -> Any:
    """``sample`` of a FiniteSet: batches of numbers by the rule; one element (the item
    itself) and batches no numeric dtype holds by position among the items."""
    if size is None or not _numbers(space) or space._drawn is not space._array:
        return sample_items(space, size, rng=rng)
    return host_sample(space, size, rng=rng)


def finite_clamp(x: Any, space: FiniteSet) -> Any:
    """``clamp`` into a set of numbers: ``x`` itself when a member; a Python number's exact
    nearest item; arrays by the rule. NaN (no nearest item) is a TypeError, as a label is."""
    if contains(x, space):
        return x
    require_numeric(space, "clamp")
    if as_real_array(x) is None and _python_numbers(x, space):
        return _clamp_objects(x, space)
    a = _without_nan(x, "clamp")
    if a.ndim == 0 and not isinstance(x, np.ndarray):
        return nearest_item(space.items, a[()].item())
    return clamp_on("numpy", a, space)


def finite_clamp_(x: Any, space: FiniteSet) -> Any:
    """``clamp_`` of a writable array into a set of numbers."""
    require_numeric(space, "clamp_")
    if not isinstance(x, np.ndarray) or not x.flags.writeable:
        raise TypeError("clamp_: x must be a writable numpy array")
    _without_nan(x, "clamp_")
    return clamp_inplace_on("numpy", x, space)


def _without_nan(x: Any, what: str) -> np.ndarray:
    a = as_real_array(x)
    if a is None:
        raise TypeError(f"{what}: x must be a real number or array, got {x!r}")
    if a.dtype.kind == "f" and bool(np.isnan(a).any()):  # the rule's error, as for every kind and backend
        raise ValueError(f"{what}: x contains NaN, which has no nearest member")
    return a


# -- range: its integers by the rule; what no 64-bit integer holds exactly, entry by entry -------


def range_sample_items(space: range, size: Any = None, *, rng: RngLike = None) -> Any:
    """``sample`` of a range by position: one Python int (``size=None``), or a batch of
    the items at uniform positions (:func:`~spacealg.core.leaf_index.range_items`: int64,
    uint64 or Python ints), for ranges whose items no int64 holds; the backends' rule draws
    the other batches (:func:`range_sample`)."""
    if size is None:  # one element (the hot path of a product's draw: len() where it fits)
        try:
            n = len(space)
        except OverflowError:
            n = range_length(space)
        require_nonempty(space, n)
        generator = as_generator(rng)  # a scalar draw where uint64 holds it: sample(small Dict) 20.2 -> 18.6 us
        offset = int(generator.integers(0, n - 1, endpoint=True, dtype=np.uint64) if n <= 2**64
                     else positions_below(generator, n, ()))
        step = space.step
        return space.start + step * offset if step > 0 else space.start + step * (n - 1) - step * offset
    first, step, n = ascending(space)
    require_nonempty(space, n)
    return range_items(first, step, n, positions_below(as_generator(rng), n, normalize_size(size)))


def positions_below(generator: np.random.Generator, n: int, shape: tuple[int, ...]) -> np.ndarray:
    """Integers uniform on ``0 .. n - 1``, exactly, for any ``n >= 1``: uint64 draws where
    uint64 holds ``n - 1``; beyond, Python ints of ``(n - 1).bit_length()`` random bits (64-bit
    words joined), drawn again where they reach ``n`` (each draw is kept with probability > 1/2)."""
    if n <= 2**64:
        return generator.integers(0, n - 1, endpoint=True, size=shape, dtype=np.uint64)
    bits = (n - 1).bit_length()
    words = -(-bits // 64)
    out = np.empty(math.prod(shape), dtype=object)
    todo = np.arange(out.size)
    while todo.size:
        drawn = generator.integers(0, 2**64 - 1, endpoint=True, size=(todo.size, words), dtype=np.uint64)
        values = np.zeros(todo.size, dtype=object)
        for column in drawn.T.astype(object):
            values = (values << 64) | column
        values >>= 64 * words - bits
        kept = values < n
        out[todo[kept]] = values[kept]
        todo = todo[~kept]
    return out.reshape(shape)


def nearest_position(x: Any, space: range) -> int:
    """The position ``k`` (ascending) of the item ``first + step * k`` nearest to the number
    ``x`` by exact value, ties to the even ``k``; an infinity: the item at that end. ValueError
    for NaN or an empty range."""
    first, step, n = ascending(space)
    if n == 0:
        raise ValueError(f"clamp: {space!r} is empty")
    value = real_value(x)
    if value is None:
        raise TypeError(f"clamp: x must be a real number or array, got {x!r}")
    if not isinstance(value, int) and math.isnan(value):
        raise ValueError("clamp: x contains NaN, which has no nearest member")
    return nearest_step(value, first, step, n)


def range_isin_exact(batch: Any, space: range) -> np.ndarray:
    """``isin`` entry by entry (``contains``), exactly: object arrays of Python ints and
    ranges whose items no int64 holds (no 64-bit integer holds both their ends and values)."""
    array = batch if isinstance(batch, np.ndarray) else as_real_array(batch)
    if array is None:
        raise ValueError(f"isin: {type(batch).__qualname__} is not a batch of integers")
    if array.dtype.kind not in "biufO":
        return np.zeros(array.shape, dtype=bool)
    return isin_objects(array, space)


def range_clamp_exact(x: Any, space: range) -> Any:
    """``clamp`` entry by entry in exact arithmetic (:func:`nearest_position`): a Python
    number gives a Python int; an array its items as ``sample`` stores them (int64, uint64
    or Python ints, :func:`~spacealg.core.leaf_index.range_items`)."""
    first, step, n = ascending(space)
    if n == 0:
        raise ValueError(f"clamp: {space!r} is empty")
    if isinstance(x, (numbers.Real, np.bool_)):  # a Python or NumPy number: a Python int
        return first + step * nearest_position(x, space)
    array = x if isinstance(x, np.ndarray) else as_real_array(x)
    if array is None or array.dtype.kind not in "biufO":
        raise TypeError(f"clamp: x must be a real number or array, got {type(x).__qualname__}")
    positions = np.frompyfunc(lambda v: nearest_position(v, space), 1, 1)(array)
    return range_items(first, step, n, np.asarray(positions, dtype=object).reshape(array.shape))


def range_isin(batch: Any, space: range) -> Any:
    """``isin`` of a range: arrays of numbers by the rule; an integer array and a range whose
    items int64 does not hold, by the rule on the items int64 and its dtype hold
    (:func:`int64_window`); object arrays of Python ints, and floats with such a range, entry
    by entry (exact: no 64-bit integer holds them)."""
    if not int64_ends(space):
        window = int64_window(space, batch.dtype) if isinstance(batch, np.ndarray) else None
        return range_isin_exact(batch, space) if window is None else range_isin(batch, window)
    a = as_real_array(batch)
    if a is None:
        if isinstance(batch, np.ndarray):
            return range_isin_exact(batch, space)  # Python ints beyond 64 bits, or no numbers (no member)
        raise ValueError(f"isin: {type(batch).__qualname__} is not a batch of integers")
    if not range_length(space):
        return np.zeros(a.shape, dtype=bool)
    return _isin_array(a, space)


def int64_window(space: range, dtype: np.dtype) -> range | None:
    """The items of ``space`` that the integer (or bool) ``dtype`` holds, as a range the rule
    serves (int64 ends); None for another dtype, and for uint64 (whose values beyond int64 no
    such range holds). The batched rules work in
    fixed-width integers (torch and JAX have nothing wider than 64 bits), so a range beyond
    int64 meets them only through such a window; what lies outside it (floats beyond 2**63,
    Python ints, clamps whose nearest item lies beyond) is answered entry by entry in exact
    arithmetic, about 600x slower (isin of 10,000 int64 into range(0, 2**70, 3): 26 ms entry
    by entry, 47 us through the window; timeit, loaded machine)."""
    if dtype.kind not in "biu" or dtype == np.uint64:
        return None
    first, step, n = ascending(space)
    info = np.iinfo(np.uint8 if dtype.kind == "b" else dtype)
    low, high = max(first, int(info.min)), min(first + step * (n - 1), int(info.max))
    k, last = -((first - low) // step), (high - first) // step  # the first and last positions inside
    return range(first + step * k, first + step * last + 1, step) if k <= last else range(0)


def range_sample(space: range, size: Any = None, *, rng: RngLike = None) -> Any:
    """``sample`` of a range: batches by the rule; one element (a Python int), and ranges
    whose items or count int64 does not hold, by position (exact, uint64 draws)."""
    if size is None:  # one element: a Python int, by position
        return range_sample_items(space, rng=rng)
    n = range_length(space)
    if not 0 < n < 2**63 or not int64_ends(space):
        return range_sample_items(space, size, rng=rng)
    return host_sample(space, size, rng=rng)


def range_clamp(x: Any, space: range) -> Any:
    """``clamp`` into a range: ``x`` itself when a member; arrays by the rule; a number (a
    Python int), ranges beyond int64 and Python ints beyond 64 bits in exact arithmetic
    (what no 64-bit integer holds), entry by entry."""
    if contains(x, space):
        return x
    if not range_length(space):
        raise ValueError(f"clamp: {space!r} is empty")
    if not isinstance(x, np.ndarray) and isinstance(x, (numbers.Real, np.bool_)):  # one number: 2.4 us, 20 by the
        return range_clamp_exact(x, space)  # rule's 0-d array (clamp(2.5, range(1, 10)); 6.0 at ef41173)
    a = as_real_array(x) if int64_ends(space) else None
    if a is None or isinstance(x, (str, bytes)):
        return range_clamp_exact(x, space)
    return clamp_on("numpy", a, space)


def range_clamp_(x: Any, space: range) -> Any:
    """``clamp_`` of a writable array into a range (exact, as :func:`range_clamp`)."""
    if not isinstance(x, np.ndarray) or not x.flags.writeable:
        raise TypeError("clamp_: x must be a writable numpy array")
    if not range_length(space):
        raise ValueError(f"clamp_: {space!r} is empty")
    if int64_ends(space) and x.dtype.kind != "O":
        return clamp_inplace_on("numpy", x, space)
    if x.dtype.kind != "O" and not clamp_holds(leaf(space), x.dtype):  # type: ignore[arg-type]
        raise TypeError(f"clamp_: x of dtype {x.dtype} cannot hold the clamp of {space!r}")
    x[...] = range_clamp_exact(x, space)
    return x


# -- the rules: the per-leaf plans on every backend, NumPy's entries above -------------------------


def _isin_rule(k: Any, batch: Any, space: Any) -> Any:
    return isin_on(k.name, batch, space)


def _sample_rule(k: Any, space: Any, size: Any = None, *, rng: Any, **extra: Any) -> Any:
    no_extra(extra, k.name)
    return sample_on(k.name, space, size, rng, getattr(k, "adapter", None))  # the kernel's: one per call


def _clamp_rule(k: Any, x: Any, space: Any) -> Any:
    return clamp_on(k.name, x, space)


def _clamp_inplace_rule(k: Any, x: Any, space: Any) -> Any:
    return clamp_inplace_on(k.name, x, space)


#: operation -> the leaf kinds' rule: the per-leaf plans (:mod:`~spacealg.backends.isin`,
#: :mod:`~spacealg.backends.sample`, :mod:`~spacealg.backends.clamp`) on the kernel's backend
RULES: dict[str, Callable[..., Any]] = {"isin": _isin_rule, "sample": _sample_rule, "clamp": _clamp_rule,
                                        "clamp_": _clamp_inplace_rule}
#: space class -> operation -> its NumPy entry
ENTRIES: dict[type, dict[str, Callable[..., Any]]] = {
    cls: {"isin": host_isin, "sample": host_sample, "clamp": host_clamp, "clamp_": host_clamp_}
    for cls in (Box, Interval, Categorical)
}
ENTRIES[FiniteSet] = {"isin": finite_isin, "sample": finite_sample, "clamp": finite_clamp, "clamp_": finite_clamp_}
ENTRIES[range] = {"isin": range_isin, "sample": range_sample, "clamp": range_clamp, "clamp_": range_clamp_}

for _cls, _entries in ENTRIES.items():
    for _operation, _entry in _entries.items():
        register_kind_rule(_operation, _cls, RULES[_operation], numpy=_entry)
