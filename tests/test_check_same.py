"""The reproduction snippets' ``same`` (spacealg.testing.engine.snippets.SAME, plain Python that a
snippet carries so that it runs without spacealg) answers as the checker's own
(spacealg.testing.engine.driver.same) on observations and rewards: NumPy arrays of every dtype
(NaN equal to NaN, dtype and shape compared), Python and NumPy scalars, nested dicts, tuples and
lists (a tuple is not a list). Not generated: what only the checker's reads (object arrays
compared item by item, Mappings that are not dicts, Gymnasium GraphInstances)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spacealg.testing.engine.driver import same
from spacealg.testing.engine.snippets import SAME

_namespace: dict = {"np": np}
exec("\n".join(SAME), _namespace)  # the snippet's own lines, as a snippet runs them
snippet_same = _namespace["same"]

_DTYPES = st.sampled_from([np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32, np.float64])
_arrays = _DTYPES.flatmap(lambda d: hnp.arrays(d, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                                               elements=hnp.from_dtype(np.dtype(d), allow_infinity=False)
                                               if np.dtype(d).kind != "f" else
                                               st.sampled_from([0.0, -0.0, 1.5, np.nan])))
_scalars = st.one_of(st.integers(-3, 3), st.sampled_from([0.0, 1.5, float("nan")]), st.booleans(), st.none(),
                     st.sampled_from([np.float32(1.5), np.float64(np.nan), np.int64(1), np.float32(0.0)]))
_values = st.recursive(_arrays | _scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(st.sampled_from("ab"), inner, max_size=2)), max_leaves=6)


def _variant(value):
    """A value like ``value``: the same, a copy, or one entry changed in a way ``same`` sees."""
    return st.one_of(st.just(value), st.just(_copied(value)), _values)


def _copied(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    return value


@given(st.data(), _values)
def test_the_snippets_same_answers_as_the_checkers(data, a):
    b = data.draw(_variant(a))
    assert snippet_same(a, b) == same(a, b)
    assert snippet_same(a, _copied(a)) and same(a, _copied(a))


def test_a_tuple_is_not_a_list_nor_float32_a_different_value():
    assert not snippet_same((1, 2), [1, 2]) and not same((1, 2), [1, 2])
    assert snippet_same(np.float32(1.5), 1.5) and same(np.float32(1.5), 1.5)
    assert snippet_same(float("nan"), np.float64("nan")) and same(float("nan"), np.float64("nan"))
