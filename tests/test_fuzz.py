"""Fuzzing the promises of issue 16 over generated spaces and hostile values.

CI runs these under the bounded ``ci`` profile (tests/conftest.py: 40 examples each,
deterministic); a release runs them deep with ``SPACEALG_HYPOTHESIS_PROFILE=deep`` (300
examples) or ``thorough`` (1,000, randomised). Each property is the general rule a reported
break violated:

- ``contains`` never raises, whatever ``x`` is (hostile objects, numpy scalars of every
  dtype, huge ints, NaN, ragged and object arrays), and ``isin`` raises only ValueError;
- membership is decided by the value, never by the storage dtype: a numpy scalar is a member
  iff the exact Python number it stores is, and ``isin`` agrees with ``contains`` entry by entry;
- ``from_json`` of any mutation of a valid document gives a space or a ``DocumentError``;
- every array a space exposes is read-only.
"""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.serialize import DocumentError
from spacealg.strategies import spaces
from tests.helpers import mutated_document


class _Raising:
    """Raises from every protocol Python may call on it."""

    def __init__(self, where: str) -> None:
        self.where = where

    def _raise(self, *args, **kwargs):
        raise RuntimeError(self.where)

    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = __len__ = __iter__ = __array__ = _raise
    __float__ = __int__ = __index__ = __bool__ = __getitem__ = _raise


_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
           np.uint64, np.float16, np.float32, np.float64]

_python_numbers = st.one_of(
    st.integers(-(2**80), 2**80),
    st.sampled_from([2**63, 2**63 - 1, -(2**63), -(2**63) - 1, 2**64, 2**53 + 1, 65504, 65505, 70000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)


@st.composite
def _numpy_scalars(draw):
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    value = draw(_python_numbers)
    with np.errstate(all="ignore"):
        try:
            return dtype.type(value)
        except (OverflowError, ValueError):
            return dtype.type(0)


@st.composite
def _numpy_arrays(draw):
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    shape = draw(st.lists(st.integers(0, 3), max_size=3).map(tuple))
    values = draw(st.lists(_python_numbers, min_size=1, max_size=4))
    with np.errstate(all="ignore"):
        flat = []
        for v in values:
            try:
                flat.append(dtype.type(v))
            except (OverflowError, ValueError):
                flat.append(dtype.type(0))
    size = int(np.prod(shape))
    return np.resize(np.array(flat, dtype=dtype), size).reshape(shape)


_leaf_values = st.one_of(
    _python_numbers,
    _numpy_scalars(),
    _numpy_arrays(),
    st.text(max_size=4),
    st.binary(max_size=4),
    st.none(),
    st.sampled_from([np.timedelta64(1, "s"), np.datetime64(1, "s"), 1j, object(), bool, float]),
    st.sampled_from(["eq", "hash", "len", "iter", "array"]).map(_Raising),
)
_values = st.recursive(
    _leaf_values,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text("abcxyz", max_size=2), children, max_size=3),
        st.tuples(st.integers(-1, 3), children),
    ),
    max_leaves=6,
)


@given(spaces(flavour="any"), _values)
def test_contains_never_raises(space, x):
    assert sa.contains(x, space) in (True, False)


@given(spaces(), _values)
def test_isin_raises_only_value_error(space, batch):
    with contextlib.suppress(ValueError):  # any other exception fails
        sa.isin(batch, space)


_ends = _python_numbers.filter(lambda v: v == v and not isinstance(v, bool)).map(
    lambda v: max(min(v, 2**1000), -(2**1000))
)


@st.composite
def _intervals(draw):
    low, high = sorted([draw(_ends), draw(_ends)])
    closed = draw(st.sampled_from(sa.spaces.interval.CLOSED_OPTIONS))
    try:
        return sa.Interval(low, high, closed)
    except ValueError:  # an empty interval, or one holding no float ([2**63 - 1, 2**63 - 1])
        return sa.Interval(0, 1)


_scalar_spaces = st.one_of(
    _intervals(),
    st.builds(range, st.integers(-(2**65), 2**65), st.integers(-(2**65), 2**66), st.integers(1, 2**40)),
    st.lists(_python_numbers.filter(lambda v: v == v), max_size=4).map(lambda items: sa.FiniteSet(*items)),
)


@given(_scalar_spaces, _numpy_scalars())
def test_membership_is_decided_by_the_exact_value(space, x):
    assert sa.contains(x, space) == sa.contains(x.item(), space)
    # and isin agrees with contains, entry by entry, whatever the batch's dtype
    batch = np.array([x, x], dtype=x.dtype)
    assert sa.isin(batch, space).tolist() == [sa.contains(x, space)] * 2


@given(spaces(leaves=("box", "array", "range", "interval"), max_depth=1), _numpy_arrays())
def test_isin_agrees_with_contains_for_arrays_of_any_dtype(space, array):
    try:
        inside = sa.isin(array, space)
    except ValueError:
        return
    for index in np.ndindex(inside.shape):
        assert bool(inside[index]) == sa.contains(array[index], space)


_hostile_json = st.one_of(
    st.integers(-(10**30), 10**30),
    st.sampled_from([10**400, -(10**400), 10**12, -1, 0, 2**63, "inf", "-inf", "nan", "(1,2", "float64",
                     "object", [], {}, None, True, [10**12], [[1, 2], [3]], {"kind": "box"}]),
    st.text(max_size=5),
    st.floats(),
)




@given(spaces(), st.data())
def test_from_json_of_a_mutated_document_is_a_space_or_a_document_error(space, data):
    text = mutated_document(sa.to_json(space), data, _hostile_json)
    if text is None:
        return
    for form in (json.loads(text), text):
        with contextlib.suppress(DocumentError):  # any other exception fails
            sa.from_json(form)


@given(spaces(leaves=("box", "array", "range", "finite")))
def test_every_exposed_array_is_read_only(space):
    for name in ("low", "high", "bounded_below", "bounded_above", "nvec", "start"):
        value = getattr(space, name, None)
        if isinstance(value, np.ndarray) and value.size:
            with pytest.raises(ValueError):
                value.reshape(-1)[0] = 0


@given(spaces(flavour="gymnasium", max_depth=2), st.data())
def test_the_observation_guard_accepts_exactly_the_members(space, data):
    from spacealg.emulation.guard import observation_guard
    from spacealg.env import APIUsageError

    guard = observation_guard(space, "env")
    converted = sa.from_gymnasium(space)
    member = space.sample()
    for x in (member, data.draw(_values)):
        try:
            guard(x)
            accepted = True
        except APIUsageError:
            accepted = False
        assert accepted == sa.contains(x, converted)
