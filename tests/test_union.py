"""Union and Difference (issue 38 point 8): the laws of spacealg/spaces/union.py's and
difference.py's docstrings, over generated spaces and members, on NumPy, torch and JAX, and
against TorchRL's ``Choice``."""

from __future__ import annotations

import collections
import itertools
import math
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg import Box, Difference, FiniteSet, Interval, OneOf, Union, difference, union
from spacealg.strategies import members, spaces
from spacealg.strategies.spaces import LEAF_KINDS

LAWS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BACKENDS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLOSED = ("both", "left", "right", "neither")


@st.composite
def intervals(draw: Any) -> Interval:
    low = draw(st.integers(-6, 6)) / 2
    return Interval(low, low + draw(st.integers(1, 6)) / 2, draw(st.sampled_from(CLOSED)))


#: small spaces of numbers (scalars): the parts of generated unions and differences
numbers = st.one_of(
    intervals(),
    st.builds(lambda a, n: range(a, a + n), st.integers(-4, 4), st.integers(0, 4)),
    st.lists(st.integers(-8, 8).map(lambda v: v / 2), min_size=1, max_size=4).map(lambda v: FiniteSet(*v)),
)
finite_numbers = numbers.filter(lambda s: sa.cardinality(s) < math.inf)
boxes = st.tuples(st.integers(-3, 2), st.integers(1, 3)).map(lambda t: Box(t[0], t[0] + t[1], (2,), np.float64))
labels = st.lists(st.sampled_from("abcd"), min_size=1, max_size=3).map(lambda v: FiniteSet(*v))


def parts_of(part: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(part, min_size=1, max_size=3)


def near(space: Any) -> list[float]:
    """Numbers at and around the ends of a union's or difference's scalar parts."""
    points = [-9.0, 0.0, 9.0]
    for p in _leaves(space):
        low, high = sa.bounds(p)
        for v in (low, high):
            points += [float(v), float(np.nextafter(v, -np.inf)), float(np.nextafter(v, np.inf)), v + 0.25]
    return points


def _leaves(space: Any) -> list[Any]:
    if isinstance(space, (Union, Difference)):
        return [leaf for p in space._spaces for leaf in _leaves(p)]
    return [] if sa.cardinality(space) == 0 else [sa.as_space(space)]


# -- union: membership, the canonical form ----------------------------------------------------------


@given(parts_of(numbers), st.data())
@LAWS
def test_members_of_a_union_are_members_of_a_part_and_the_canonical_form_is_the_same_set(parts, data):
    written, canonical = Union(*parts), union(*parts)
    for x in near(written) + [data.draw(members(p)) for p in parts if sa.cardinality(p)]:
        expected = any(sa.contains(x, p) for p in parts)
        assert sa.contains(x, written) == expected == sa.contains(x, canonical)
    batch = np.array(near(written))
    assert sa.isin(batch, written).tolist() == [sa.contains(x, written) for x in batch]


@given(st.lists(intervals(), min_size=1, max_size=4))
@LAWS
def test_intervals_that_overlap_or_touch_merge(parts):
    u = union(*parts)
    merged = u._spaces if isinstance(u, Union) else (u,)
    assert all(isinstance(p, Interval) for p in merged)
    for a, b in itertools.pairwise(merged):  # sorted, and a gap (an open end on both sides at least) between
        assert a.high < b.low or (a.high == b.low and not a.closed_right and not b.closed_left)
    assert union(Interval(0, 1), Interval(1, 2)) == Interval(0, 2)
    assert union(Interval(0, 1, "left"), (1,), Interval(1, 2, "neither")) == Interval(0, 2, "left")
    assert isinstance(union(Interval(0, 1, "left"), Interval(1, 2, "neither")), Union)


def test_canonical_forms_and_operators():
    assert union() == FiniteSet() and union(range(3)) == range(3)
    assert union((1, 2), (2, 3)) == FiniteSet(1, 2, 3)
    assert union(Interval(0, 5), (1, 7)) == Union(Interval(0, 5), FiniteSet(7))
    assert union(Union(range(2), (5,)), Interval(4, 6)) == Union(range(2), Interval(4, 6))
    assert Interval(0, 1) | Interval(3, 4) == union(Interval(0, 1), Interval(3, 4))
    assert Interval(0, 1) + Interval(3, 4) == OneOf(Interval(0, 1), Interval(3, 4))  # a + b stays tagged
    assert (0, 1) | Interval(3, 4) == union((0, 1), Interval(3, 4))
    assert Interval(0, 3) - Interval(1, 2) == union(Interval(0, 1, "left"), Interval(2, 3, "right"))
    assert Union(Interval(0, 1), range(3)) == Union(range(3), Interval(0, 1))  # order-free
    with pytest.raises(ValueError, match="at least one"):
        Union()


# -- sampling ---------------------------------------------------------------------------------------


@given(parts_of(numbers), st.integers(0, 2**32 - 1))
@LAWS
def test_samples_are_members_and_the_same_seed_gives_the_same_draws(parts, seed):
    u = Union(*parts)
    if sa.cardinality(u) == 0:
        with pytest.raises(ValueError, match="empty"):
            sa.sample(u, rng=seed)
        return
    assert sa.sample(u, rng=seed) in u
    batch = sa.sample(u, 20, rng=seed)
    assert batch.shape == (20,) and sa.isin(batch, u).all()
    assert np.array_equal(sa.sample(u, 20, rng=seed), batch)
    low, high = sa.bounds(u)
    assert (low <= batch).all() and (batch <= high).all()


@pytest.mark.parametrize("u", [Union(range(4), range(2, 6)), Union(FiniteSet(0, 1), range(0, 10)),
                               Union((1,), (1, 2), (1, 2, 3))], ids=repr)
def test_every_member_of_a_finite_union_is_equally_likely_overlaps_included(u):
    n = sa.cardinality(u)
    counts = collections.Counter(sa.sample(u, 60_000, rng=7).tolist())
    assert sorted(counts) == sorted(sa.elements(u))
    assert all(abs(c / 60_000 - 1 / n) < 0.1 / n for c in counts.values())  # 10% of 1/n; sd is ~2% here
    ones = collections.Counter(sa.sample(u, rng=seed) for seed in range(6_000))
    assert all(abs(c / 6_000 - 1 / n) < 0.3 / n for c in ones.values())


def test_labels_and_numbers_do_not_stack_batches_are_object_arrays():
    u = union(("a", "b"), Interval(0, 1))
    batch = sa.sample(u, 8, rng=0)
    assert batch.dtype == object and sa.isin(batch, u).all()
    assert sa.isin(np.array(["a", 0.5, "c", 2.0], dtype=object), u).tolist() == [True, True, False, False]
    assert sa.SpaceStyle(u) == sa.ContinuousSpaceStyle(())


# -- counting, style, bounds, clamp ----------------------------------------------------------------------


@given(parts_of(finite_numbers))
@LAWS
def test_cardinality_counts_each_member_once_and_elements_index_element_are_a_bijection(parts):
    u = Union(*parts)
    distinct = {v for p in parts for v in sa.elements(p)}
    listed = list(sa.elements(u))
    assert sa.cardinality(u) == len(distinct) == len(listed) and set(listed) == distinct
    assert sa.cardinality(u) <= sum(sa.cardinality(p) for p in parts)
    for i, x in enumerate(listed):
        assert sa.index(x, u) == i and sa.element(i, u) == x
    assert sa.SpaceStyle(u) == sa.FiniteSpaceStyle(())


@given(parts_of(numbers), st.data())
@LAWS
def test_clamp_is_the_nearest_of_the_parts_clamps_and_lands_inside(parts, data):
    u = Union(*parts)
    if sa.cardinality(u) == 0:
        return
    xs = [*near(u), data.draw(st.floats(-20, 20))]
    for x in xs:
        c = sa.clamp(x, u)
        assert c in u
        assert abs(c - x) == min(abs(sa.clamp(x, p) - x) for p in parts if sa.cardinality(p))
        if x in u:
            assert c == x
    batch = np.array(xs)
    clamped = sa.clamp(batch, u)
    assert sa.isin(clamped, u).all()
    assert np.array_equal(np.abs(clamped - batch), [abs(sa.clamp(x, u) - x) for x in xs])
    inplace = batch.copy()
    assert sa.clamp_(inplace, u) is inplace and np.array_equal(inplace, clamped)


@given(parts_of(boxes), st.integers(0, 2**16))
@LAWS
def test_unions_of_boxes_sample_clamp_and_bound_arrays(parts, seed):
    u = Union(*parts)
    batch = sa.sample(u, 6, rng=seed)
    assert batch.shape == (6, 2) and sa.isin(batch, u).all()
    low, high = sa.bounds(u)
    assert (low <= batch).all() and (batch <= high).all()
    far = batch * 3 + 1
    clamped = sa.clamp(far, u)
    assert sa.isin(clamped, u).all()
    gaps = np.stack([((sa.clamp(far, p) - far) ** 2).sum(axis=-1) for p in parts])
    assert np.allclose(((clamped - far) ** 2).sum(axis=-1), gaps.min(axis=0))
    assert sa.SpaceStyle(u) == sa.ContinuousSpaceStyle((2,))


# -- inclusion, intersection --------------------------------------------------------------------------


@given(parts_of(numbers), numbers, st.data())
@LAWS
def test_inclusion_and_intersection_of_unions(parts, other, data):
    u = Union(*parts)
    assert all(p <= u for p in parts) and u <= u
    assert (u <= other) == all(sa.issubspace(p, other) for p in parts)
    both = sa.intersect(u, other)
    for x in near(u) + near(Union(other)):
        assert sa.contains(x, both) == (x in u and x in other)
        assert sa.contains(x, sa.intersect(other, u)) == (x in u and x in other)
    if sa.cardinality(other) < math.inf:
        assert (other <= u) == all(x in u for x in sa.elements(other))


def test_an_interval_in_a_union_of_intervals():
    assert Interval(0, 2) <= Union(Interval(0, 1), Interval(1, 3))
    assert not Interval(0, 2) <= Union(Interval(0, 1, "left"), Interval(1, 3, "neither"))
    assert Interval(0, 2, "neither") <= Union(Interval(0, 1, "neither"), FiniteSet(1), Interval(1, 3))


# -- difference ------------------------------------------------------------------------------------------


@given(numbers, numbers, st.integers(0, 2**32 - 1))
@LAWS
def test_difference_is_members_of_a_not_of_b_and_samples_by_rejection(a, b, seed):
    written, canonical = Difference(a, b), difference(a, b)
    for x in near(Union(a, b)):
        assert sa.contains(x, written) == (sa.contains(x, a) and not sa.contains(x, b)) == sa.contains(x, canonical)
    batch = np.array(near(Union(a, b)))
    assert sa.isin(batch, written).tolist() == [sa.contains(x, written) for x in batch]
    n = sa.cardinality(written)
    assert n == sa.cardinality(canonical)
    if n == 0:
        with pytest.raises(ValueError, match="is empty"):
            sa.sample(written, rng=seed)
        return
    drawn = sa.sample(written, 10, rng=seed)
    assert sa.isin(drawn, written).all() and np.array_equal(drawn, sa.sample(written, 10, rng=seed))
    if n < math.inf:
        listed = list(sa.elements(written))
        assert len(listed) == n and all(sa.element(i, written) == x and sa.index(x, written) == i
                                        for i, x in enumerate(listed))


@given(numbers, numbers, st.data())
@LAWS
def test_difference_clamps_members_unchanged_and_lands_inside_or_says_it_cannot(a, b, data):
    d = Difference(a, b)
    if sa.cardinality(d) == 0:
        return
    for x in near(Union(a, b)):
        try:
            c = sa.clamp(x, d)
        except TypeError as error:
            assert "not decided" in str(error) and sa.clamp(x, a) in b
            continue
        assert c in d and (c == x or x not in d)


def test_difference_closed_forms_inclusion_and_too_thin_spaces():
    assert difference(Interval(0, 2), Interval(1, 3)) == Interval(0, 1, "left")
    assert difference(Interval(0, 1), Interval(-1, 2)) == FiniteSet()
    assert difference(Interval(0, 1), Interval(5, 6)) == Interval(0, 1)
    assert sa.clamp(0.0, Difference(Interval(-5, -2), FiniteSet(-2))) < -2  # the closed form's
    assert difference((0, 1, 2, 3), range(1, 4, 2)) == FiniteSet(0, 2)
    ring = Box(-1, 1, (2,)) - Box(-0.5, 0.5, (2,))
    assert isinstance(ring, Difference) and ring <= Box(-1, 1, (2,)) and Box(0.6, 0.9, (2,)) <= ring
    assert not Box(0, 0.9, (2,)) <= ring
    assert sa.intersect(ring, Box(0, 1, (2,))) == Difference(Box(0, 1, (2,)), Box(-0.5, 0.5, (2,)))
    with pytest.raises(ValueError, match="is empty"):
        sa.sample(Difference(Box(0, 1, (2,)), Box(0, 1, (2,))), 3, rng=0)
    for size in (None, 4):  # members drawn one by one (tagged parts do not stack): refused before any draw
        with pytest.raises(ValueError, match="is empty"):
            sa.sample(Difference(sa.OneOf(range(3)), sa.OneOf(range(3))), size, rng=0)
    thin = Box(0, 1, (2,)) - sa.ArraySpace(Interval(0, 1, "neither"), 2)  # the square's edges
    assert isinstance(thin, Difference) and np.array([0.0, 0.5]) in thin
    with pytest.raises(ValueError, match="empty or too thin to draw from"):
        sa.sample(thin, 3, rng=0)
    with pytest.raises(ValueError, match="empty or too thin to draw from"):
        sa.sample(thin, rng=0)
    assert sa.clamp(np.array([3.0, 0.0]), ring).tolist() == [1.0, 0.0]


# -- values: equality, repr, pickle, JSON --------------------------------------------------------------


@given(st.one_of(parts_of(numbers).map(lambda p: Union(*p)), st.tuples(numbers, numbers).map(lambda t: Difference(*t)),
                 spaces(leaves=(*LEAF_KINDS, "dynamic"), composites=("union", "difference"), max_depth=2)))
@LAWS
def test_repr_evaluates_back_pickle_hash_and_json(s):
    from numpy import inf  # noqa: F401  (repr's names)

    namespace = {**vars(sa), "np": np}
    assert eval(repr(s), namespace) == s and pickle.loads(pickle.dumps(s)) == s
    assert hash(eval(repr(s), namespace)) == hash(s)
    assert sa.from_json(sa.to_json(s)) == s


# -- every backend ---------------------------------------------------------------------------------------

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")


def generator(name: str, seed: int) -> Any:
    return torch.Generator().manual_seed(seed) if name == "torch" else jax.random.key(seed)


def on(name: str, a: np.ndarray) -> Any:
    return torch.from_numpy(np.array(a)) if name == "torch" else jax.numpy.asarray(a)


def host(x: Any) -> np.ndarray:
    return np.asarray(x.cpu() if hasattr(x, "cpu") else x)


stacking = st.one_of(parts_of(numbers.filter(lambda s: not isinstance(s, range))).map(lambda p: Union(*p)),
                     parts_of(boxes).map(lambda p: Union(*p)),
                     st.tuples(intervals(), numbers).map(lambda t: Difference(*t)),
                     st.tuples(boxes, boxes).map(lambda t: Difference(*t))).filter(lambda s: sa.cardinality(s) != 0)


@given(stacking, st.sampled_from(["torch", "jax"]), st.integers(0, 2**16))
@BACKENDS
def test_sample_isin_clamp_on_torch_and_jax_agree_with_the_laws(space, name, seed):
    try:
        sa.sample(space, 7, rng=seed)
    except ValueError as error:  # a rejection that found too few members on NumPy: said so
        assert "too thin" in str(error)
        return
    drawn = sa.sample(space, 7, rng=generator(name, seed))  # where NumPy draws, the backend does
    rows = host(drawn)
    assert rows.shape[0] == 7 and all(sa.contains(r, space) for r in rows)
    assert host(sa.isin(drawn, space)).all()
    same = sa.sample(space, 7, rng=generator(name, seed))
    assert np.array_equal(host(same), rows)
    probe = np.concatenate([rows * 2 - 1, rows])
    expected = sa.isin(probe, space)
    assert host(sa.isin(on(name, probe), space)).tolist() == expected.tolist()
    try:
        clamped = sa.clamp(probe, space)
    except TypeError as error:  # a difference whose nearest member has no closed form: alike everywhere
        with pytest.raises(TypeError, match="not decided"):
            sa.clamp(on(name, probe), space)
        assert "not decided" in str(error)
        return
    assert np.allclose(host(sa.clamp(on(name, probe), space)), clamped)
    if name == "torch":
        t = torch.from_numpy(probe.copy())
        assert sa.clamp_(t, space) is t and np.allclose(t.numpy(), clamped)


@given(stacking.filter(lambda s: sa.elsize(s) == ()), st.sampled_from(["torch", "jax"]), st.integers(0, 2**16))
@BACKENDS
def test_an_array_space_of_a_union_or_difference_answers_on_torch_and_jax_by_its_entrys_rules(space, name, seed):
    """An ``ArraySpace`` whose entry has no leaf model (a union, a difference) asks its entry's
    rules for every entry at once (its kind's rule on the backend): draws are members, ``isin``
    and ``clamp`` (``clamp_`` on torch) equal NumPy's."""
    array = sa.ArraySpace(space, 2)
    try:
        rows = sa.sample(array, 5, rng=seed)
    except ValueError as error:  # a rejection that found too few members on NumPy: said so
        assert "too thin" in str(error)
        return
    drawn = sa.sample(array, 5, rng=generator(name, seed))  # where NumPy draws, the backend does
    assert host(drawn).shape == (5, 2) and sa.isin(host(drawn), array).all()
    probe = np.concatenate([rows * 2 - 1, rows])
    assert host(sa.isin(on(name, probe), array)).tolist() == sa.isin(probe, array).tolist()
    with pytest.raises(ValueError, match="shape"):
        sa.isin(on(name, probe[:, :1]), array)
    try:
        clamped = sa.clamp(probe, array)
    except TypeError:  # a difference whose nearest member has no closed form: alike everywhere
        with pytest.raises(TypeError, match="not decided"):
            sa.clamp(on(name, probe), array)
        return
    assert np.allclose(host(sa.clamp(on(name, probe), array)), clamped)
    if name == "torch":
        t = torch.from_numpy(probe.copy())
        assert sa.clamp_(t, array) is t and np.allclose(t.numpy(), clamped)


@given(st.sampled_from(["torch", "jax"]), st.integers(0, 2**16))
@BACKENDS
def test_each_round_of_a_rejection_draws_afresh_on_torch_and_jax(name, seed):
    """Regression: JAX's kernel gave every further draw (each round of a difference's rejection,
    each part of a union's draw) the call's own key, so a row rejected once was rejected in every
    round: ``Difference(range(3), bool)``, whose draws are members one time in three, was "too
    thin" on JAX (7 rows: one chance in 2,187 that every first draw was a member)."""
    assert host(sa.sample(Difference(range(0, 3), bool), 7, rng=generator(name, seed))).tolist() == [2] * 7


@given(st.sampled_from(["torch", "jax"]))
@BACKENDS
def test_parts_of_other_shapes_hold_none_of_a_batchs_rows_on_torch_and_jax(name):
    """A union whose parts' members have no one shape: a part whose members have another shape
    than the batch's rows holds none of them (NumPy reads such a batch entry by entry), and a
    difference with such a ``b`` reads it row by row on the host (a 0-d tensor is no member
    for ``contains``); a part of labels, which torch and JAX hold no array of, is asked entry by
    entry on the host."""
    union = Union(bool, sa.ArraySpace(range(0, 1), 1))
    batch = np.array([0, 1, 2])
    assert host(sa.isin(on(name, batch), union)).tolist() == sa.isin(batch, union).tolist() == [True, True, False]
    difference = Difference(range(0, 3), union)
    assert host(sa.isin(on(name, batch), difference)).tolist() == sa.isin(batch, difference).tolist()
    assert host(sa.isin(on(name, batch), difference)).tolist() == [False, False, True]
    assert host(sa.sample(difference, 5, rng=generator(name, 0))).tolist() == [2] * 5
    labelled = Union(range(0, 3), FiniteSet("a", 7))  # labels: asked entry by entry on the host
    numbers = np.array([0, 7, 5])
    assert host(sa.isin(on(name, numbers), labelled)).tolist() == sa.isin(numbers, labelled).tolist()
    assert sa.isin(numbers, labelled).tolist() == [True, True, False]


# -- TorchRL's Choice ----------------------------------------------------------------------------------


def test_torchrl_choice_converts_to_the_union_and_back_and_membership_is_is_in():
    td = pytest.importorskip("torchrl.data")
    specs = [td.Choice([td.Bounded(0, 1, shape=(1,)), td.Bounded(10, 11, shape=(1,))]),
             td.Choice([td.Categorical(3), td.Categorical(5)]),
             td.Choice([td.Bounded(-1, 1, shape=(2,)), td.Bounded(0, 3, shape=(2,))])]
    for spec in specs:
        u = sa.from_torchrl(spec)
        assert isinstance(u, Union) and sa.to_torchrl(u) == spec
        torch.manual_seed(0)
        drawn = [spec.rand() for _ in range(20)]  # TorchRL's own draws are members (their values)
        assert all(sa.contains(x.numpy(), u) for x in drawn)
        ours = sa.sample(u, 20, rng=torch.Generator().manual_seed(0))
        assert all(bool(spec.is_in(x)) for x in ours)
        probes = [x * 3 + 2 for x in drawn] + drawn
        assert [sa.contains(x.numpy(), u) for x in probes] == [bool(spec.is_in(x)) for x in probes]
        assert sa.isin(torch.stack(probes), u).tolist() == [bool(spec.is_in(x)) for x in probes]
    with pytest.raises(TypeError, match="no TorchRL equivalent"):
        sa.to_torchrl(Union(Box(0, 1, (2,)), Box(0, 1, (3,))))


@pytest.mark.parametrize("module", ["spacealg.spaces.union", "spacealg.spaces.difference"])
def test_the_docstring_examples_run(module):
    import doctest
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(module))
    assert tried and not failures


@pytest.mark.parametrize("node", [{"kind": "union", "spaces": "x"}, {"kind": "union", "spaces": []},
                                  {"kind": "union"}, {"kind": "difference", "a": {"space": {"kind": "bool"}}},
                                  {"kind": "union", "spaces": [{"space": {"kind": "nothing"}}]}])
def test_malformed_documents_raise_document_errors(node):
    from spacealg.serialize import DocumentError

    with pytest.raises(DocumentError):
        sa.from_json({"format": "spacealg.space", "version": 1, "space": node})
