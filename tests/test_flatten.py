"""Laws of spacealg.ops.flatten: Gymnasium's one-hot flattening, value for value and dtype for
dtype, the round trip, the flattened Box, the batched forms, and PufferLib's leaf list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium.spaces as gs
import numpy as np
import pytest
from gymnasium.spaces import GraphInstance
from gymnasium.spaces import utils as gym_utils
from helpers import member_at, same
from hypothesis import assume, given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.adapters.encoding import encode
from spacealg.adapters.gymnasium import to_gymnasium
from spacealg.ops import (
    flat_codec,
    flatdim,
    flatten,
    flatten_batch,
    flatten_space,
    flattened_box,
    unflatten,
    unflatten_batch,
)
from spacealg.strategies.gymnasium import gymnasium_spaces
from spacealg.strategies.spaces import spaces

# -- helpers ---------------------------------------------------------------------------------


def identical(a: Any, b: Any) -> bool:
    """Equal in value, type and (for arrays and numpy scalars) dtype, recursively."""
    if isinstance(a, GraphInstance) or isinstance(b, GraphInstance):
        return (
            type(a) is type(b)
            and identical(a.nodes, b.nodes)
            and identical(a.edges, b.edges)
            and identical(a.edge_links, b.edge_links)
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
        )
    if isinstance(a, tuple) or isinstance(b, tuple):
        return type(a) is type(b) and len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return isinstance(a, Mapping) and isinstance(b, Mapping) and list(a) == list(b) and all(
            identical(a[k], b[k]) for k in a
        )
    if isinstance(a, np.generic) or isinstance(b, np.generic):
        return type(a) is type(b) and bool(a == b)
    return type(a) is type(b) and bool(a == b)


def gym_reference(function: Any, *args: Any) -> Any:
    """Gymnasium's result, or the exception it raises."""
    try:
        return function(*args)
    except Exception as error:  # Gymnasium fails on some corners (empty Tuples, ...)
        return error


seeds = st.integers(0, 2**32 - 1)


# -- equality with gymnasium.spaces.utils ------------------------------------------------------


@given(gymnasium_spaces(max_depth=2), seeds)
def test_flatten_equals_gymnasium(space: gs.Space, seed: int) -> None:
    space.seed(seed)
    x = space.sample()
    expected = gym_reference(gym_utils.flatten, space, x)
    assume(not isinstance(expected, Exception))  # Gymnasium's own failures (zero-size corners)
    assert identical(flatten(x, space), expected)


@given(gymnasium_spaces(max_depth=2), seeds)
def test_unflatten_equals_gymnasium(space: gs.Space, seed: int) -> None:
    space.seed(seed)
    x = space.sample()
    flat = gym_reference(gym_utils.flatten, space, x)
    assume(not isinstance(flat, Exception))
    expected = gym_reference(gym_utils.unflatten, space, flat)
    assume(not isinstance(expected, Exception))
    assert identical(unflatten(flat, space), expected)


@given(gymnasium_spaces(max_depth=2))
def test_flatdim_and_flattened_box_equal_gymnasium(space: gs.Space) -> None:
    expected_dim = gym_reference(gym_utils.flatdim, space)
    if isinstance(expected_dim, ValueError):  # a Sequence or Graph inside
        with pytest.raises(ValueError):
            flatdim(space)
    elif not isinstance(expected_dim, Exception):
        assert flatdim(space) == expected_dim
    expected_box = gym_reference(gym_utils.flatten_space, space)
    assume(not isinstance(expected_box, Exception))  # Gymnasium's own failures (zero-size corners)
    box = flattened_box(space)
    assert box == expected_box
    if isinstance(expected_box, gs.Box):
        assert box.dtype == expected_box.dtype
        assert np.array_equal(box.low, expected_box.low) and np.array_equal(box.high, expected_box.high)


@given(gymnasium_spaces(max_depth=2, classes=("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Text",
                                                "Tuple", "Dict", "OneOf")), seeds)
def test_flatten_batch_equals_loop_of_gymnasium_flatten(space: gs.Space, seed: int) -> None:
    batch = sa.sample(space, 3, rng=seed)
    members = [member_at(batch, i) for i in range(3)]
    expected = [gym_reference(gym_utils.flatten, space, x) for x in members]
    assume(not any(isinstance(e, Exception) for e in expected))
    flat = flatten_batch(batch, space)
    assert flat.shape == (3, flatdim(space))
    for row, e in zip(flat, expected):
        assert identical(row, e)


# -- laws on spacealg spaces ---------------------------------------------------------------


@given(spaces(), seeds)
def test_unflatten_flatten_is_identity(space: Any, seed: int) -> None:
    x = sa.sample(space, rng=seed)
    flat = flatten(x, space)
    assert flat.shape == (flatdim(space),)
    assert same(unflatten(flat, space), x)
    assert sa.contains(unflatten(flat, space), space)


@given(spaces(), seeds)
def test_flatten_lies_in_flattened_box(space: Any, seed: int) -> None:
    box = flattened_box(space)
    flat = flatten(sa.sample(space, rng=seed), space)
    assert flat.dtype == box.dtype
    assert flat in box


@given(spaces(), seeds, st.integers(0, 4))
def test_flatten_batch_equals_loop_of_flatten(space: Any, seed: int, n: int) -> None:
    batch = sa.sample(space, n, rng=seed)
    flat = flatten_batch(batch, space)
    assert flat.shape == (n, flatdim(space))
    for i in range(n):
        assert identical(flat[i], flatten(member_at(batch, i), space))


@given(spaces(), seeds)
def test_unflatten_batch_equals_loop_of_unflatten(space: Any, seed: int) -> None:
    batch = sa.sample(space, 3, rng=seed)
    flat = flatten_batch(batch, space)
    back = unflatten_batch(flat, space)
    assert same(back, batch) or all(same(member_at(back, i), member_at(batch, i)) for i in range(3))
    for i in range(3):
        assert same(member_at(back, i), unflatten(flat[i], space))
    assert sa.isin(back, space).all()


@given(spaces(leaves=("interval", "finite", "range", "box", "array")), seeds)
def test_flatten_of_spacealg_space_is_gymnasium_flatten_of_its_image(space: Any, seed: int) -> None:
    try:
        image = to_gymnasium(space)
    except TypeError:  # open intervals have no Gymnasium image
        assume(False)
    x = sa.sample(space, rng=seed)
    expected = gym_reference(gym_utils.flatten, image, encode(x, space))
    expected_box = gym_reference(gym_utils.flatten_space, image)
    assume(not isinstance(expected, Exception) and not isinstance(expected_box, Exception))
    flat = flatten(x, space)
    assert flat.dtype == expected.dtype and np.array_equal(flat, expected)
    assert same(encode(unflatten(flat, space), space), gym_utils.unflatten(image, expected))
    assert to_gymnasium(flattened_box(space)) == expected_box


# -- special cases, one by one -------------------------------------------------------------


def test_discrete_with_start_and_dtype() -> None:
    g = gs.Discrete(5, start=-2, dtype=np.int32)
    flat = flatten(np.int32(1), g)
    assert identical(flat, np.array([0, 0, 0, 1, 0], np.int32))
    value = unflatten(flat, g)
    assert type(value) is np.int32 and value == 1


def test_text_flattens_to_padded_character_indices() -> None:
    g = gs.Text(5, min_length=0, charset="cab")
    flat = flatten("ab", g)
    assert identical(flat, gym_utils.flatten(g, "ab"))
    assert identical(flat, np.array([1, 2, 3, 3, 3], np.int32))
    assert unflatten(flat, g) == "ab"
    assert flattened_box(g) == gs.Box(0, 3, (5,), np.int32)


def test_oneof_widens_its_dtype_to_hold_the_index() -> None:
    g = gs.OneOf([gs.Box(0, 1, (2,), np.bool_)] * 3)
    x = (2, np.array([True, False]))
    assert identical(flatten(x, g), gym_utils.flatten(g, x))
    assert flatten(x, g).dtype == np.uint8
    assert identical(unflatten(flatten(x, g), g), gym_utils.unflatten(g, gym_utils.flatten(g, x)))


def test_oneof_pads_with_the_first_entry() -> None:
    g = gs.OneOf([gs.Discrete(2), gs.Box(-1.0, 1.0, (4,), np.float32)])
    assert identical(flatten((0, 1), g), np.array([0, 0, 1, 0, 0], np.float64))  # int64 + float32
    assert identical(flatten((0, 1), g), gym_utils.flatten(g, (0, 1)))


def test_sequence_and_graph_flatten_to_parts() -> None:
    seq = gs.Sequence(gs.Discrete(3), stack=True)
    x = np.array([2, 0], dtype=np.int64)
    assert identical(flatten(x, seq), gym_utils.flatten(seq, x))
    assert identical(unflatten(flatten(x, seq), seq), x)
    graph = gs.Graph(gs.Box(0.0, 1.0, (2,), np.float32), gs.Discrete(3))
    graph.seed(1)
    g = graph.sample()
    assert identical(flatten(g, graph), gym_utils.flatten(graph, g))
    expected = gym_utils.unflatten(graph, gym_utils.flatten(graph, g))
    assert identical(unflatten(flatten(g, graph), graph), expected)
    assert flattened_box(graph) == gym_utils.flatten_space(graph)
    with pytest.raises(ValueError, match="Sequence or Graph"):
        flatdim(gs.Tuple([seq]))
    with pytest.raises(ValueError):
        flatten_batch((x,), gs.Tuple([seq]))


def test_unflatten_rejects_a_vector_that_is_not_one_hot() -> None:
    with pytest.raises(ValueError, match="one-hot"):
        unflatten(np.zeros(4), range(4))
    with pytest.raises(ValueError, match="one-hot"):
        unflatten(np.zeros(6), sa.ArraySpace(range(3), 2))
    with pytest.raises(ValueError, match="one-hot"):
        unflatten_batch(np.zeros((2, 4)), range(4))


@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 6), st.data())
def test_unflatten_batch_reads_the_first_nonzero_column_or_rejects_a_segment_without_one(
        size: int, width: int, n: int, data: Any) -> None:
    """Each entry of ``unflatten_batch`` is its segment's first nonzero column; a row with a
    segment of zeros raises ValueError (the check is read off the argmax: an entry whose
    column 0 is zero and whose argmax is 0 has none)."""
    space = sa.ArraySpace(range(width), size)
    cells = st.sampled_from([0.0, 0.0, 1.0, 2.0, -1.0])
    rows = np.array(data.draw(st.lists(st.lists(cells, min_size=size * width, max_size=size * width),
                                       min_size=n, max_size=n)), dtype=np.float32)
    segments = rows.reshape(n, size, width) != 0
    if not segments.any(axis=2).all():
        with pytest.raises(ValueError, match="one-hot"):
            unflatten_batch(rows, space)
        return
    assert unflatten_batch(rows, space).tolist() == segments.argmax(axis=2).tolist()


def test_flatten_rejects_values_outside_a_discrete_range() -> None:
    space = sa.DictProduct(a=range(2, 5), b=sa.ArraySpace(range(3), 2))
    with pytest.raises(ValueError, match=r"2\.\.4"):
        flatten({"a": 5, "b": np.array([0, 1])}, space)
    with pytest.raises(ValueError, match=r"0\.\.2"):
        flatten({"a": 2, "b": np.array([0, 3])}, space)
    with pytest.raises(ValueError):
        flatten("z", sa.FiniteSet("x", "y"))


def test_a_bool_discrete_value_is_its_integer_not_a_mask() -> None:
    assert identical(flatten(True, range(2)), gym_utils.flatten(gs.Discrete(2), True))
    assert identical(flatten({"a": True}, sa.DictProduct(a=range(3))), np.array([0, 1, 0], np.int64))
    assert identical(flatten(np.array([True, False]), sa.ArraySpace(range(2), 2)), np.array([0, 1, 1, 0]))
    assert identical(unflatten([0, 0, 1], range(3)), np.int64(2))  # a list reads as its array
    for member in (np.True_, np.array(1), 1.0):  # members by contains, so they flatten
        assert sa.contains(member, range(2)) and identical(flatten(member, range(2)), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"0\.\.1"):
        flatten(1.5, range(2))


def test_labels_flatten_by_index_and_come_back() -> None:
    space = sa.TupleProduct(sa.FiniteSet("up", "down"), sa.ArraySpace(sa.FiniteSet("r", "g", "b"), 2))
    x = ("down", np.array(["b", "r"]))
    flat = flatten(x, space)
    assert identical(flat, np.array([0, 1, 0, 0, 1, 1, 0, 0], np.int64))
    assert same(unflatten(flat, space), x)


def test_interval_flattens_to_one_float() -> None:
    assert identical(flatten(0.25, sa.Interval(0, 1)), np.array([0.25]))
    assert unflatten(np.array([0.25]), sa.Interval(0, 1)) == 0.25
    assert flattened_box(sa.Interval(0, 1)) == sa.Box(0.0, 1.0, shape=(1,), dtype=np.float64)


def test_codec_is_compiled_once_per_space() -> None:
    space = sa.DictProduct(a=range(3))
    assert flat_codec(space) is not flat_codec(space)  # the rule builds a new codec ...
    flatten({"a": 1}, space)
    from spacealg.ops.flatten import _codec

    assert _codec(space) is _codec(space)  # ... and the functions reuse a cached one


def test_empty_product_has_no_flat_dtype() -> None:
    with pytest.raises(ValueError, match="empty product"):
        flatten((), sa.TupleProduct())


# -- PufferLib's flatten_space: the leaf list ------------------------------------------------


def test_flatten_space_lists_leaves_depth_first() -> None:
    image = gs.Box(0, 255, (4, 4, 3), np.uint8)
    g = gs.Dict({"obs": gs.Dict({"image": image, "hp": gs.Discrete(5)}), "mask": gs.MultiBinary(3),
                 "pair": gs.Tuple((gs.Discrete(2), gs.Discrete(3)))})
    leaves = flatten_space(g)
    assert list(g.spaces) == ["mask", "obs", "pair"]  # Gymnasium sorts the keys of a plain dict
    assert leaves == [gs.MultiBinary(3), gs.Discrete(5), image, gs.Discrete(2), gs.Discrete(3)]
    assert leaves == [leaf for part in g.spaces.values() for leaf in flatten_space(part)]
    assert all(isinstance(leaf, gs.Space) for leaf in leaves)


def test_flatten_space_on_spacealg_and_plain_objects() -> None:
    s = sa.DictProduct(a=sa.TupleProduct(range(2), sa.Box(0, 1, (2,))), b=sa.FiniteSet("x"))
    assert flatten_space(s) == [range(2), sa.Box(0, 1, (2,)), sa.FiniteSet("x")]
    assert flatten_space({"a": range(2), "b": sa.TupleProduct(range(3))}) == [range(2), range(3)]
    assert flatten_space(range(4)) == [range(4)]
    assert flatten_space(("a", "b")) == [("a", "b")]  # a tuple is a finite set, not a product


@given(gymnasium_spaces(max_depth=3))
def test_flatten_space_leaf_count_matches_recursion(space: gs.Space) -> None:
    def count(s: gs.Space) -> int:
        if isinstance(s, gs.Tuple):
            return sum(count(p) for p in s.spaces)
        if isinstance(s, gs.Dict):
            return sum(count(p) for p in s.spaces.values())
        return 1

    leaves = flatten_space(space)
    assert len(leaves) == count(space)
    assert not any(isinstance(leaf, (gs.Tuple, gs.Dict)) for leaf in leaves)


# -- the top-level names (DESIGN.md section 4) -----------------------------------------------


def test_operations_are_importable_from_the_package() -> None:
    import spacealg.ops

    for name in ("joint_space", "flatten_space", "flatdim", "flatten", "unflatten"):
        assert name in sa.__all__
        assert getattr(sa, name) is getattr(spacealg.ops, name)
        assert callable(getattr(sa, name))  # the functions, not the module spacealg.ops.flatten
    s = sa.DictProduct(a=range(3), b=sa.Box(0.0, 1.0, (2,)))
    x = {"a": 2, "b": np.array([0.5, 0.25], np.float32)}
    assert sa.flatdim(s) == 5
    assert identical(sa.flatten(x, s), np.array([0, 0, 1, 0.5, 0.25]))
    assert sa.unflatten(sa.flatten(x, s), s)["a"] == 2
    assert sa.flatten_space(s) == [range(3), sa.Box(0.0, 1.0, (2,))]
    assert sa.joint_space(s, 2) == sa.DictProduct(a=sa.ArraySpace(range(3), 2), b=sa.Box(0.0, 1.0, (2, 2)))


def test_import_spacealg_stays_free_of_hypothesis() -> None:
    import subprocess
    import sys

    code = "import sys, spacealg; spacealg.flatten; print('hypothesis' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_flatten_batch_refuses_a_fraction_in_a_one_hot_segment() -> None:
    """Regression: NumPy truncated 2.5 to 2 (torch rounded it to 3) and flattened a non-member
    of ``range(5)``; one rule now refuses it on every backend, and whole floats are members."""
    torch = pytest.importorskip("torch")
    space = sa.ArraySpace(range(5), 2)
    assert np.array_equal(flatten_batch(np.array([[1.0, 4.0]]), space), [[0, 1, 0, 0, 0, 0, 0, 0, 0, 1]])
    for batch in (np.array([[1.0, 2.5]]), torch.tensor([[1.0, 2.5]]), np.array([[1.0, np.nan]])):
        with pytest.raises(ValueError, match="flatten_batch"):
            flatten_batch(batch, space)


#: batch sizes: none, one, several. A part without a leaf model is flattened by eager JAX operations,
#: each compiled once per shape: sizes 0 to 5 (and the uneven batch's one row more) compiled 247 programs
@given(st.integers(0, 2**16), st.sampled_from([0, 1, 3]), st.sampled_from(["torch", "jax"]))
def test_one_driver_flattens_a_part_without_leaf_model_as_numpy_does(seed: int, n: int, backend: str) -> None:
    """The one flatten driver (``spacealg.core.flat``): a product holding a leaf with no leaf model
    (``OneHot``, flattened by its own rules) beside leaf segments gives NumPy's rows value for value
    and dtype for dtype on torch and JAX, and reads them back; a non-member of a segment is a
    ValueError naming that leaf on every backend, and so are batches of different batch shapes."""
    from spacealg.backends.arrays import backend_named, to_numpy
    from spacealg.spaces.onehot import OneHot

    pytest.importorskip(backend)
    space = sa.DictProduct(hot=OneHot(3), box=sa.Box(-1.0, 1.0, shape=(2,), dtype=np.float32), dir=range(4))
    batch = sa.sample(space, n, rng=seed)
    flat = flatten_batch(batch, space)
    moved = {k: backend_named(backend).from_host(np.asarray(v)) for k, v in batch.items()}
    on_backend = flatten_batch(moved, space)
    assert np.array_equal(to_numpy(on_backend), flat)
    assert on_backend.dtype == backend_named(backend).dtype(flat.dtype, None, None, space)  # JAX: its x64 policy
    assert same(to_numpy(unflatten_batch(on_backend, space)), batch)
    bad = dict(batch, dir=np.full(n, 4))
    for where in (bad, {k: backend_named(backend).from_host(np.asarray(v)) for k, v in bad.items()}):
        if n:
            with pytest.raises(ValueError, match=r"not a member of range\(0, 4\)"):
                flatten_batch(where, space)
    uneven = dict(batch, dir=np.zeros(n + 1, np.int64))
    with pytest.raises(ValueError, match="different batch shapes"):
        flatten_batch(uneven, space)


@given(st.lists(st.integers(1, 6), min_size=17, max_size=40), st.booleans(), seeds)
def test_a_leaf_of_many_entries_flattens_by_the_drivers_program(nvec: list[int], labels: bool, seed: int) -> None:
    """A one-hot leaf of more than 16 entries flattens through the flatten driver's program for
    one row (no unrolled lines): Gymnasium's flatten for a MultiDiscrete, the batch form's row
    for labels; a non-member raises ValueError naming ``x``."""
    if labels:
        space: Any = sa.ArraySpace(sa.FiniteSet("a", "b", "c"), len(nvec))
        x = np.random.default_rng(seed).choice(np.array(["a", "b", "c"], dtype=object), len(nvec))
        expected = flatten_batch(x[None], space)[0]
        outside = np.array(["d", *x[1:]], dtype=object)
    else:
        gym = gs.MultiDiscrete(np.array(nvec), seed=seed)
        space, x = gym, gym.sample()
        expected, outside = gym_utils.flatten(gym, x), np.array([nvec[0], *x[1:]])
    assert same(flatten(x, space), expected) and flatten(x, space).dtype == expected.dtype
    assert same(unflatten(flatten(x, space), space), x)
    with pytest.raises(ValueError, match="flatten: x="):
        flatten(outside, space)


def test_a_product_of_empty_products_has_no_batch_to_flatten() -> None:
    """Its flat vector is empty (Gymnasium's), its batch holds no leaf to read a batch shape from:
    ``flatten_batch`` raises ValueError naming ``xs``, ``unflatten_batch`` gives the structure."""
    space = sa.DictProduct(a=sa.DictProduct())
    assert flatdim(space) == 0 and flatten({"a": {}}, space).shape == (0,)
    with pytest.raises(ValueError, match=r"flatten_batch: xs=.*no leaves"):
        flatten_batch({"a": {}}, space)
    assert unflatten_batch(np.zeros((3, 0)), space) == {"a": {}}
