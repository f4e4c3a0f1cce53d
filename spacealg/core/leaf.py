"""The leaf model: what every derived operation needs to know of a leaf space, decided once.

>>> import spacealg as sa
>>> from spacealg.core.leaf import leaf
>>> leaf(range(2, 5))
LeafModel(image='Discrete', dtype=int64, shape=(), low=2, high=4, scalar)
>>> leaf(sa.ArraySpace(bool, 3))
LeafModel(image='MultiBinary', dtype=int8, shape=(3,), low=0, high=1)
>>> leaf(sa.FiniteSet("up", "down")).items
('up', 'down')
>>> leaf(sa.DictProduct(a=range(2))) is None      # a product is not a leaf
True

A *leaf* is a space whose members are stored as one array of numbers (or one number):
``Box``, ``range``, ``Categorical``, ``FiniteSet``, ``Interval`` and ``ArraySpace`` over
one of the scalar ones. :func:`leaf` is registered once per kind, at the end of the
kind's own module in ``spacealg/spaces/``; flattening (:mod:`spacealg.ops.flatten`),
emulation layouts (:mod:`spacealg.emulation.spaces`), ``joint_space``, ``encode`` and
``to_gymnasium``'s array rules all read it, so these decisions are made here only:

=====================================  ==============  ========  ==========================
space                                  ``image``       dtype     stored values
=====================================  ==============  ========  ==========================
``Box``                                Box             its own   the entries
``range(a, b)``, step 1 (or one item)  Discrete        int64     the integers (``low = a``)
other ``range``, ``FiniteSet``         Discrete        int64     positions in ``items``
``Categorical``                        (Multi)Discrete its own   the integers
closed ``Interval`` (or infinite end)  Box             float64   the number (``scalar``)
open finite ``Interval``               None            float64   the number (``scalar``)
``ArraySpace(base, *d)``               see below       …         ``base``'s, per entry
=====================================  ==============  ========  ==========================

``ArraySpace`` over ``bool`` is MultiBinary (int8 0/1); over a consecutive range or labels
MultiDiscrete (int64, positions for labels); over an interval the interval's image.
Laws: ``low <= high`` entrywise for a non-empty leaf; ``items`` is set exactly when stored
values are positions (then ``low == 0`` and ``high == len(items) - 1``); ``scalar`` exactly
when members are Python/numpy scalars rather than arrays; ``image`` is the class name of
``to_gymnasium(space)`` for every leaf with one.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from spacealg.core.generic import as_space, generic

__all__ = ["Form", "LeafModel", "Members", "all_equal", "common", "consecutive", "exact_value", "inner_float", "labels",
           "leaf", "over", "plain", "widths"]

INT64 = np.dtype(np.int64)


class Members(enum.Enum):
    """What a leaf's members are, entry by entry (the rule every batched operation follows)."""

    REAL = "real"          #: the floats between ``value_low`` and ``value_high`` (open ends excluded)
    INTEGERS = "integers"  #: the integers ``value_low + step * k`` up to ``value_high``
    NUMBERS = "numbers"    #: the numbers of ``numbers`` (a finite set)
    LABELS = "labels"      #: labels with no number form: only their positions stack


class Form(enum.Enum):
    """The Python form of one member (what ``nativize`` builds, what a guard checks)."""

    INT = "int"        #: a Python int (a scalar integer leaf)
    FLOAT = "float"    #: a Python float (a scalar real leaf)
    ARRAY = "array"    #: an array of the leaf's dtype
    LABEL = "label"    #: one of ``items`` (stored: its position)
    LABELS = "labels"  #: an array of ``items`` (stored: their positions)


@dataclass(frozen=True, eq=False)
class LeafModel:
    """One leaf, as the derived operations see it (see the module's table).

    Storage: ``image``: the Gymnasium class of its image ("Box", "Discrete", "MultiDiscrete",
    "MultiBinary"; None where it has none); ``dtype``/``shape``: of the stored entries;
    ``low``/``high``: bounds of stored values (scalars or arrays broadcasting to
    ``shape``); ``items``: the labels that stored positions stand for, or None;
    ``scalar``: members are scalars; ``integral``: stored values are integers.

    Members: ``members`` (:class:`Members`; derived from ``integral`` and ``items`` when
    not given); ``value_dtype``: the NumPy dtype of NumPy's samples (``dtype`` unless
    given); ``value_low``/``value_high``: per-entry bounds of member values (arrays of
    ``shape``); ``step``: a stepped range's spacing; ``numbers``: a set's numbers, in order;
    ``open_low``/``open_high``: open ends (Interval); ``bounded_low``/``bounded_high``: which
    entries are finite on that side; ``ties_by_position``: a clamp halfway between two
    integer members takes the one at the even position ``k`` of ``value_low + step * k`` (a
    range: its even index; otherwise the even value, as ``numpy.rint``). ``space``: the space
    it describes (for messages); ``cache``: what operations derive from it (device
    constants), kept with it.
    """

    image: str | None
    dtype: np.dtype
    shape: tuple[int, ...]
    low: Any
    high: Any
    items: tuple[Any, ...] | range | None = None  # a stepped range's items: the range (never enumerated)
    scalar: bool = False
    integral: bool = True
    members: Members | None = None
    value_dtype: np.dtype | None = None
    step: int = 1
    numbers: np.ndarray | None = None
    span: tuple[Any, Any] | None = None  # member bounds where not low/high: positions (a stepped range), exact ends
    open_low: bool = False
    open_high: bool = False
    bounded: tuple[Any, Any] | None = None  # which entries are bounded below/above, where not ``isfinite``
    ties_by_position: bool = False  # a clamp's tie goes to the even k of value_low + step * k (a range's index)
    own_dtype: bool = False  # a Gymnasium space's: its clamps are in value_dtype, whatever the batch's
    space: Any = field(default=None, repr=False)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.members is None:
            members = (Members.NUMBERS if self.numbers is not None else Members.LABELS if self.items is not None
                       else Members.INTEGERS if self.integral else Members.REAL)
            object.__setattr__(self, "members", members)
        if self.value_dtype is None:
            numbers = self.numbers
            object.__setattr__(self, "value_dtype", numbers.dtype if numbers is not None else np.dtype(self.dtype))

    @property
    def size(self) -> int:
        """The number of entries of a member."""
        return math.prod(self.shape)

    @functools.cached_property
    def value_low(self) -> np.ndarray:
        """The least member value per entry (an array of ``shape``)."""
        return self._value_bound(0)

    @functools.cached_property
    def value_high(self) -> np.ndarray:
        """The greatest member value per entry (an array of ``shape``)."""
        return self._value_bound(1)

    def _value_bound(self, side: int) -> np.ndarray:
        if self.numbers is not None and len(self.numbers):
            bound = self.numbers.max() if side else self.numbers.min()
        elif self.span is not None:
            bound = self.span[side]
        else:
            bound = self.high if side else self.low
        array = np.asarray(bound)
        if self.members is Members.REAL and array.dtype.kind not in "f":
            # integer ends stay exact (an Interval's 2**64 - 2 is no float64): floats where they hold them
            as_float = array.astype(np.float64)
            exact = (as_float.astype(object) == array.astype(object)).all()
            array = as_float if exact else array.astype(object)
        return np.array(np.broadcast_to(array, self.shape))

    @functools.cached_property
    def bounded_low(self) -> np.ndarray:
        """Which entries are bounded below (finite ``value_low`` unless given)."""
        return np.array(np.broadcast_to(self.bounded[0], self.shape)) if self.bounded else _finite(self.value_low)

    @functools.cached_property
    def bounded_high(self) -> np.ndarray:
        """Which entries are bounded above (finite ``value_high`` unless given)."""
        return np.array(np.broadcast_to(self.bounded[1], self.shape)) if self.bounded else _finite(self.value_high)

    @functools.cached_property
    def uniform_bounds(self) -> bool:
        """Whether every entry has the same member bounds (scalars then suffice)."""
        return all_equal(self.value_low) and all_equal(self.value_high)

    def widths(self) -> np.ndarray:
        """The number of member values per entry (an object array of ``shape``: exact ints)."""
        return np.asarray(widths(self.value_low, self.value_high, self.step), dtype=object)

    def inner_ends(self, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
        """The least and greatest floats of ``dtype`` inside the member bounds, per entry.

        Each end is rounded inwards exactly (an integer beyond 2**53 included); an open end
        that ``dtype`` holds is stepped inside; an infinite end stays infinite unless open.
        Where no float of ``dtype`` lies inside an entry's bounds, its low exceeds its high.
        """
        dtype = np.dtype(dtype)
        key = ("inner_ends", dtype.str)
        if key not in self.cache:
            low = _round_inward(self.value_low, dtype, up=True, open_end=self.open_low)
            high = _round_inward(self.value_high, dtype, up=False, open_end=self.open_high)
            self.cache[key] = (low, high)
        return self.cache[key]  # type: ignore[no-any-return]

    def inside(self, a: np.ndarray) -> np.ndarray:
        """Per entry of the NumPy array ``a`` (numbers of :attr:`shape`), whether it is a member
        value of this leaf of reals or of consecutive integers, by exact value: floats against
        the floats of their own dtype nearest inside the member bounds (:meth:`inner_ends`;
        open ends excluded; integers: whole floats only), integers and bools against the
        bounds themselves (as Python ints beyond 2**53, which float64 bounds would round).
        The scalar ``contains`` of Box, Categorical and Interval; decided once per dtype."""
        test = self.cache.get(a.dtype)
        if test is None:
            test = self.cache[a.dtype] = self._inside_test(a.dtype)
        return test(a)  # type: ignore[no-any-return]

    def _inside_test(self, dtype: np.dtype) -> Callable[[np.ndarray], np.ndarray]:
        if dtype.kind == "f":
            low, high = self.inner_ends(dtype)
            if self.integral:
                return lambda a: (a >= low) & (a <= high) & (np.floor(a) == a)  # type: ignore[no-any-return]
            return lambda a: (a >= low) & (a <= high)  # type: ignore[no-any-return]
        low, high, bools, exact = self.value_low, self.value_high, dtype.kind == "b", self.integral
        above = np.greater if self.open_low else np.greater_equal
        below = np.less if self.open_high else np.less_equal

        def test(a: np.ndarray) -> np.ndarray:
            if bools:
                a = a.view(np.uint8)
            if not exact and a.dtype.itemsize == 8 and a.size and not -(2**53) <= a.min() <= a.max() <= 2**53:
                return above(a.astype(object), low.astype(object)) & below(a.astype(object), high.astype(object))
            return above(a, low) & below(a, high)  # type: ignore[no-any-return]

        return test

    @property
    def form(self) -> Form:
        """The Python form of one member."""
        if self.items is not None:
            return Form.LABEL if self.scalar else Form.LABELS
        if self.scalar:
            return Form.INT if self.integral else Form.FLOAT
        return Form.ARRAY

    @functools.cached_property
    def stored_low(self) -> np.ndarray:
        """The least stored value per entry (an array of ``shape``: exact ints as objects for
        an integral leaf, float64 otherwise)."""
        return np.array(np.broadcast_to(np.asarray(self.low, dtype=object if self.integral else np.float64),
                                        self.shape))

    @functools.cached_property
    def stored_high(self) -> np.ndarray:
        """The greatest stored value per entry (as :attr:`stored_low`)."""
        return np.array(np.broadcast_to(np.asarray(self.high, dtype=object if self.integral else np.float64),
                                        self.shape))

    @functools.cached_property
    def lookup(self) -> dict[Any, int]:
        """Label -> position (numpy scalars keyed by their Python value); empty without labels."""
        return {plain(item): i for i, item in enumerate(self.items or ())}

    @functools.cached_property
    def item_array(self) -> np.ndarray:
        """The labels as an array (of their numbers, bools or strings when all are; else objects:
        a bool beside numbers would become one). Its dtype is the members' on every backend
        (``sample`` draws bools of ``FiniteSet(False, True)``; torch/JAX decode them so)."""
        items = self.items or ()
        if items and (all(isinstance(i, str) for i in items) or all(isinstance(i, (bool, np.bool_)) for i in items)
                      or all(isinstance(i, (int, float, np.integer, np.floating)) and not isinstance(i, bool)
                             for i in items)):
            return np.asarray(items)
        array = np.empty(len(items), dtype=object)
        array[:] = list(items)
        return array

    @property
    def stacks(self) -> bool:
        """Whether members stack into one numeric array (labels do not: their positions do)."""
        return self.items is None

    def __repr__(self) -> str:
        def show(bound: Any) -> str:
            array = np.asarray(bound)
            return repr(array.item()) if array.size == 1 else np.array2string(array, threshold=6)

        flags = ", scalar" if self.scalar else ""
        return (f"LeafModel(image={self.image!r}, dtype={self.dtype}, shape={self.shape}, "
                f"low={show(self.low)}, high={show(self.high)}{flags})")


def _finite(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.asarray(np.isfinite(a))
    return np.ones(a.shape, dtype=bool)


def exact_value(v: Any) -> Fraction | float:
    """The real number ``v`` (an int, a float of any width, NumPy's included, a bool, a
    Fraction) as the exact Fraction it stores; an infinity or NaN as the float it is. The one
    reading of a number's exact value: ``float(v)`` rounds a longdouble to float64."""
    if isinstance(v, Fraction):
        return v
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    try:
        return Fraction(*v.as_integer_ratio())  # floats of every width, exactly
    except (OverflowError, ValueError):  # an infinity, NaN
        return float(v)
    except AttributeError:  # a bool_ or another real with no ratio
        f = float(v)
        return Fraction(f) if math.isfinite(f) else f


def _round_inward(values: np.ndarray, dtype: np.dtype, up: bool, open_end: bool) -> np.ndarray:
    """Per entry: the nearest float of ``dtype`` at or inside the bound (strictly inside an
    open end), compared exactly with the bound's value. A function of each value alone:
    computed once per distinct value (a Box's bounds repeat one value over many entries)."""
    if values.dtype.kind in "fiu" and values.size > 1:
        distinct, where = np.unique(values.reshape(-1), return_inverse=True)
        if distinct.size < values.size:
            return _round_inward(distinct, dtype, up, open_end)[where].reshape(values.shape)
    out = np.empty(values.shape, dtype)
    for i, v in np.ndenumerate(values):
        out[i] = inner_float(v, dtype, up, open_end)
    return out


def inner_float(end: Any, dtype: np.dtype, up: bool, open_end: bool) -> Any:
    """The nearest float of ``dtype`` at or inside the real ``end`` of a set that lies above it
    (``up``) or below it, strictly inside where the end is open, compared exactly with the
    end's value (``float(2**53 + 1)`` rounds out of ``[2**53 + 1, ...]``); an infinite end is
    infinite unless open; the infinity where no float lies inside. The one decision of a
    real end's nearest float: the leaf model's :meth:`LeafModel.inner_ends` and
    :class:`~spacealg.spaces.interval.Interval`'s inner ends read it."""
    toward = dtype.type(np.inf if up else -np.inf)
    exact = exact_value(end)
    if isinstance(exact, float):  # an infinite bound: infinite unless open
        f = dtype.type(exact)
        return np.nextafter(f, toward) if open_end else f
    f = _near(exact, dtype)  # within an ulp or two; beyond every float of dtype: its largest

    def inside(g: Any) -> bool:
        value = exact_value(g)
        return value > exact or (not open_end and value == exact) if up else (
            value < exact or (not open_end and value == exact))

    with np.errstate(over="ignore"):  # beyond the largest float: the infinity (no float lies inside)
        while not inside(f):
            f = np.nextafter(f, toward)
        away = -toward
        while np.isfinite(g := np.nextafter(f, away)) and inside(g):
            f = g
    return f


def _near(exact: Fraction, dtype: np.dtype) -> Any:
    """A float of ``dtype`` within an ulp or two of ``exact`` (finite: ±the largest beyond it).
    ``float(exact)`` is correctly rounded, for float64 and narrower; a wider float (longdouble)
    is its numerator over its denominator, each exact up to the dtype's precision."""
    largest = np.finfo(dtype).max
    with np.errstate(over="ignore", under="ignore"):
        if np.finfo(dtype).nmant <= 52:
            try:
                f = dtype.type(float(exact))
            except OverflowError:  # beyond float64 (an int, a longdouble's Fraction)
                f = dtype.type(np.inf if exact > 0 else -np.inf)
        else:
            d = exact.denominator
            if d & (d - 1) == 0:  # a power of two (every float's): scaled exactly, rounded once
                f = np.ldexp(dtype.type(exact.numerator), -(d.bit_length() - 1))
            else:
                f = dtype.type(exact.numerator) / dtype.type(d)
    if not np.isfinite(f):
        f = dtype.type(largest if exact > 0 else -largest)
    return f


def all_equal(a: Any) -> bool:
    """Whether every entry of ``a`` equals the first (True for no entries): the one test of
    "the same bounds everywhere", which lets a scalar stand for an array."""
    array = np.asarray(a)
    if array.size <= 1:
        return True
    flat = array.reshape(-1)
    return bool((flat == flat[0]).all())


def common(a: Any) -> Any:
    """The one value every entry of ``a`` holds, as a Python number, or None where entries
    differ or there are none (then an array must stand for ``a``)."""
    array = np.asarray(a)
    if not (array.size and all_equal(array)):
        return None
    first = array.reshape(-1)[0]
    return first.item() if isinstance(first, np.generic) else first


def widths(low: Any, high: Any, step: int = 1) -> Any:
    """The number of integers ``low + step * k`` up to ``high``, per entry, exact (Python
    ints: an array of objects for arrays, an int for scalars); 0 where ``high < low``."""
    lo, hi = (_exact_integers(np.asarray(bound)) for bound in (low, high))
    shape = np.broadcast_shapes(lo.shape, hi.shape)
    count = np.atleast_1d((np.atleast_1d(hi) - np.atleast_1d(lo)) // step + 1)  # 0-d object math gives ints
    count[count < 0] = 0
    return int(count[0]) if not shape else count.reshape(shape)


def _exact_integers(array: np.ndarray) -> np.ndarray:
    """Integer (or bool) entries as Python ints, in an object array."""
    if array.dtype.kind == "O":
        return array
    flat = array.astype(np.int64 if array.dtype.kind == "b" else array.dtype).reshape(-1).tolist()
    exact = np.empty(len(flat), dtype=object)  # filled flat: a (2, 0, 0) array's tolist() is [[], []], read back (2, 0)
    exact[:] = flat
    return exact.reshape(array.shape)


def plain(x: Any) -> Any:
    """A numpy scalar (or 0-d array) as its Python value, for label lookups; else ``x``."""
    if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.shape == ()):
        return x.item()
    return x


def consecutive(r: Any) -> bool:
    """A non-empty range of consecutive integers (Gymnasium's ``Discrete(n, start)``);
    a range of one integer counts whatever its step."""
    if not isinstance(r, range):
        return False
    nonempty = r.start < r.stop if r.step > 0 else r.start > r.stop  # len() overflows past maxsize
    return nonempty and (r.step == 1 or r[0] == r[-1])


def labels(items: tuple[Any, ...], shape: tuple[int, ...] = ()) -> LeafModel:
    """Labels stored as their positions: Discrete (``shape == ()``) or MultiDiscrete."""
    image = "Discrete" if shape == () else "MultiDiscrete"
    return LeafModel(image, INT64, shape, 0, len(items) - 1, tuple(items), scalar=shape == ())


def over(base: LeafModel, dims: tuple[int, ...], space: Any, image: str | None = None) -> LeafModel:
    """``base`` (a scalar leaf) on every entry of arrays of shape ``dims`` (an array space)."""
    return dataclasses.replace(base, image=image if image is not None else base.image, shape=dims + base.shape,
                               scalar=False, space=space, cache={})


@generic(0)
def leaf(space: Any) -> LeafModel | None:
    """The :class:`LeafModel` of ``space``, or None for a space that is not a leaf.

    Plain and Gymnasium objects go through :func:`spacealg.as_space`; raises TypeError for
    an object that is not a space.
    """
    converted = as_space(space)
    if converted is not space:
        model = leaf(converted)
        own = getattr(space, "dtype", None)  # a converted space's values keep its own dtype (Gymnasium's)
        if model is None or not isinstance(own, np.dtype) or model.items is not None:
            return model
        numbers = None if model.numbers is None else model.numbers.astype(own)
        return dataclasses.replace(model, value_dtype=own, numbers=numbers, own_dtype=True, space=space, cache={})
    return None
