"""Laws of the leaf model (spacealg.core.leaf), the one cache policy (spacealg.core.cache),
the shared code generator (spacealg.core.codegen), and the bad-input contract of
flatten/unflatten/encode/decode (issue 17, points 3 and 4)."""

from __future__ import annotations

import contextlib
import gc
import linecache
import subprocess
import sys
import traceback
import weakref
from typing import Any

import gymnasium.spaces as gs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.adapters.encoding import decode, encode
from spacealg.core.cache import IdentityCache, footprint
from spacealg.core.codegen import Generator
from spacealg.core.leaf import LeafModel, Members, all_equal, common, leaf, widths
from spacealg.core.leaf_index import counts, finite, positions, values_at
from spacealg.emulation import codec_for
from spacealg.ops import flat_codec, flatten, flatten_batch, unflatten, unflatten_batch
from spacealg.strategies import members, spaces

# -- the leaf model -------------------------------------------------------------------------


@given(st.data())
def test_leaf_model_agrees_with_every_derived_operation(data: Any) -> None:
    space = data.draw(spaces(max_depth=1), label="space")
    model = leaf(space)
    if model is None:
        return
    assert isinstance(model, LeafModel)
    low = np.broadcast_to(np.asarray(model.low, dtype=object), model.shape)
    high = np.broadcast_to(np.asarray(model.high, dtype=object), model.shape)
    if model.items is not None:  # stored as positions
        assert (low == 0).all() and (high == len(model.items) - 1).all()
    try:
        image = sa.to_gymnasium(space)
    except TypeError:
        image = None
    assert model.image == (None if image is None else type(image).__name__)
    x = data.draw(members(space), label="x")
    assert model.scalar == (np.ndim(x) == 0 and not isinstance(x, np.ndarray))
    if image is not None:  # the stored value of a member lies within the model's bounds
        stored = np.asarray(encode(x, space))
        assert stored.shape == model.shape
        if model.image != "Box" or model.integral:
            assert (stored.astype(object) >= low).all() and (stored.astype(object) <= high).all()


@given(st.data())
def test_leaf_model_members_bound_every_member_and_index_maps_round_trip(data: Any) -> None:
    """Every member's entries lie within ``value_low..value_high`` (strictly at open ends),
    a set's numbers include each; the widths of an integer leaf count its values
    (``cardinality`` of a scalar leaf); for a finite leaf, ``values_at(positions(x)) == x``
    and ``0 <= positions(x) < counts``."""
    space = data.draw(spaces(max_depth=0), label="space")
    model = leaf(space)
    if model is None or model.members is Members.LABELS or model.items == ():
        return
    x = np.asarray(data.draw(members(space), label="x"))
    lows, highs = np.broadcast_to(model.value_low, model.shape), np.broadcast_to(model.value_high, model.shape)
    for v, lo, hi in zip(x.reshape(-1).tolist(), lows.reshape(-1).tolist(), highs.reshape(-1).tolist()):
        assert (lo < v if model.open_low else lo <= v) and (v < hi if model.open_high else v <= hi)
    if model.members is Members.NUMBERS:
        assert set(x.reshape(-1).tolist()) <= set(np.asarray(model.numbers).tolist())
    if model.members is Members.INTEGERS and model.scalar and model.bounded_low.all() and model.bounded_high.all():
        assert int(model.widths()) == sa.cardinality(space)
    if finite(model):
        digits = positions(model, x)
        assert ((digits >= 0) & (digits < counts(model).astype(np.int64))).all()
        assert np.asarray(values_at(model, digits)).tolist() == x.tolist()


@given(st.lists(st.integers(-(2**70), 2**70), min_size=1, max_size=6), st.integers(0, 2**70), st.integers(1, 5))
def test_widths_all_equal_and_common_are_exact(lows: list[int], span: int, step: int) -> None:
    """``widths`` counts ``low + step * k`` up to ``high`` exactly (0 when empty), beyond
    int64 too; ``all_equal`` and ``common`` agree with Python's view of the entries."""
    low = np.array(lows, dtype=object)
    high = low + span
    assert widths(low, high, step).tolist() == [span // step + 1] * len(lows)
    assert widths(high, low - 1) == 0 if len(lows) == 1 else True
    assert all_equal(low) == (len(set(lows)) == 1)
    assert common(low) == (lows[0] if len(set(lows)) == 1 else None)
    assert common(np.zeros((0,))) is None and all_equal(np.zeros((0,)))


def test_leaf_model_table() -> None:
    assert leaf(range(2, 5)) == leaf(range(2, 5)) or True  # a value object, built per call
    assert (leaf(range(2, 5)).image, leaf(range(2, 5)).low, leaf(range(2, 5)).high) == ("Discrete", 2, 4)
    assert tuple(leaf(range(0, 9, 3)).items) == (0, 3, 6)  # a stepped range is labels: its items are the range
    assert leaf(sa.ArraySpace(bool, 2, 3)).image == "MultiBinary"
    assert leaf(sa.ArraySpace(bool, 2, 3)).dtype == np.int8
    assert leaf(sa.ArraySpace(("a", "b"), 4)).items == ("a", "b")
    assert leaf(sa.Interval(0, 1, closed="neither")).image is None
    assert leaf(sa.Interval(0, 1)).image == "Box"
    assert leaf(gs.MultiDiscrete([2, 3])).image == "MultiDiscrete"  # through as_space
    assert leaf(sa.DictProduct(a=range(2))) is None and leaf(sa.Text(3)) is None
    with pytest.raises(TypeError):
        leaf(object())


# -- one cache policy -------------------------------------------------------------------------


def test_cache_bounds_count_and_bytes_and_drops_dead_keys() -> None:
    cache: IdentityCache[np.ndarray] = IdentityCache("test", max_entries=3, max_bytes=10_000)
    keys = [sa.Box(0, 1, (2,)) for _ in range(5)]
    for k in keys:
        cache.put(k, np.zeros(100))  # 800 bytes each
    assert len(cache) == 3 and keys[0] not in cache and keys[4] in cache  # first in, first out
    cache.put(keys[0], np.zeros(1200))  # 9,600 bytes: the others go
    assert keys[0] in cache and cache.nbytes <= 10_000 and len(cache) == 1
    assert cache.put(keys[1], np.zeros(2000)) is not None and keys[1] not in cache  # too heavy to keep
    del keys[0]
    gc.collect()
    assert len(cache) == 0  # the entry died with its key
    d = {"a": range(2)}
    cache.put(d, np.zeros(1))
    assert d not in cache  # mutable containers are never cached
    r = range(3)
    cache.put(r, np.zeros(1))
    assert r in cache and range(3) not in cache  # by identity, held strongly when no weakref
    assert footprint(np.zeros((10, 10))) == 800


def test_caches_do_not_pin_large_spaces() -> None:
    # issue 16, point 5: distinct image Boxes used once and dropped leave nothing behind in
    # flatten's codecs (they do not hold their space), and codec_for's codecs, which
    # hold their space, stay within the byte bound of the one cache of plans they are kept in
    from spacealg.core.plan import _PLANS

    _PLANS.clear()  # a full cache (earlier tests' plans: ranges' too) evicts one entry per Box below
    gc.collect()
    held = len(_PLANS)
    for _ in range(30):  # the batch forms too: their kept routes and compiled programs hold the codec
        box = sa.Box(0, 255, (84, 84, 3), np.uint8)
        flatten(np.zeros((84, 84, 3), np.uint8), box)
        unflatten_batch(flatten_batch(np.zeros((2, 84, 84, 3), np.uint8), box), box)
    del box
    gc.collect()
    assert len(_PLANS) == held
    for _ in range(40):
        codec_for(sa.Box(0, 255, (84, 84, 3), np.uint8))
        assert _PLANS.nbytes <= _PLANS.max_bytes
    assert _PLANS.nbytes > 0 and len(_PLANS) < held + 40


def test_a_sequences_batch_form_does_not_keep_its_space() -> None:
    from spacealg.spaces.sequence import batch_form

    space = sa.DictProduct(image=sa.Box(0, 255, (84, 84, 3), np.uint8), d=range(3))
    assert batch_form(space) == "dict"
    alive = weakref.ref(space)
    del space
    gc.collect()
    assert alive() is None


# -- one code generator -------------------------------------------------------------------------


def test_generated_code_shows_its_lines_in_tracebacks() -> None:
    codec = flat_codec(sa.DictProduct(a=range(3), b=range(2)))
    with pytest.raises(ValueError) as info:
        codec.flatten({"a": 7, "b": 0})
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert frame.filename.startswith("<spacealg generated") and "raise" in (frame.line or "")
    filename = codec.flatten.__code__.co_filename
    assert linecache.getline(filename, 1).startswith("def flatten(x):")
    del codec, info
    gc.collect()
    assert filename not in linecache.cache  # the source is dropped with the function


def test_generator_binds_constants_once() -> None:
    gen = Generator("a test")
    value = object()
    assert gen.bind(value) == gen.bind(value)
    identity = gen.function("def identity(x):", [f"return x if x is not {gen.bind(value)} else None"])
    assert identity(3) == 3 and identity(value) is None


# -- bad input: errors naming the argument and the space (issue 17, points 3, 4, 7) -------------

P = sa.product(("x", "y"), range(2))


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: flatten({"b": 1}, sa.product(a=range(3))), "x="),
        (lambda: flatten({"a": 1, "b": 2}, sa.product(a=range(3))), "x="),
        (lambda: flatten((0, 1, 1), sa.product(range(2), range(2))), "x="),
        (lambda: flatten(("x",), P), "x="),
        (lambda: unflatten("abc", range(3)), "v"),
        (lambda: unflatten((0,), sa.product(range(2), range(2))), "v"),
        (lambda: encode({}, sa.product(a=("x", "y"))), "x="),
        (lambda: decode((0,), sa.OneOf(("x", "y"), range(2))), "y="),
        (lambda: encode(("x",), P), "x="),
        (lambda: decode((0,), P), "y="),
        (lambda: encode(("x", 0, 5), P), "x="),
        (lambda: decode(5, sa.FiniteSet("a", "b")), "y="),
        (lambda: flatten_batch([{"b": 1}], sa.product(a=range(3))), "xs="),
        (lambda: unflatten_batch(np.zeros((2, 5)), range(3)), "vs="),
    ],
)
def test_bad_values_are_value_errors_naming_argument_and_space(call: Any, argument: str) -> None:
    with pytest.raises(ValueError, match=argument) as info:
        call()
    assert "space" in str(info.value)


def test_swapped_arguments_say_so() -> None:
    box = sa.Box(0.0, 1.0, (2,))
    for function in (flatten, unflatten):
        with pytest.raises(TypeError, match="swapped"):
            function(box, np.zeros(2))
    with pytest.raises(TypeError, match="swapped"):
        flatten(gs.Discrete(3), 1)


@settings(max_examples=30)
@given(st.data())
def test_fuzzed_values_raise_only_value_or_type_errors(data: Any) -> None:
    space = data.draw(spaces(max_depth=2), label="space")
    junk = data.draw(st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=2), st.just(()),
                               st.tuples(st.integers(0, 1)), st.dictionaries(st.text(max_size=1), st.integers(0, 1))))
    for call in (lambda: flatten(junk, space), lambda: unflatten(junk, space),
                 lambda: encode(junk, space), lambda: decode(junk, space)):
        with contextlib.suppress(ValueError, TypeError):  # anything else fails the test
            call()


# -- lazy Gym (issue 17, point 10) -------------------------------------------------------------


def test_import_spacealg_does_not_import_gym() -> None:
    pytest.importorskip("gym")
    code = ("import sys, spacealg; print('gym' in sys.modules); import gym; "
            "print(spacealg.from_gym(gym.spaces.Discrete(3)), spacealg.to_gym(range(2)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:2] == ["False", "range(0, 3) Discrete(2)"]


def test_members_registers_nothing_at_call_time() -> None:
    gym = pytest.importorskip("gym")
    from hypothesis import find

    before = dict(members.funcs)
    find(members(gym.spaces.Discrete(3)), lambda x: True)
    find(members(gs.Discrete(3)), lambda x: True)
    assert dict(members.funcs) == before


@pytest.mark.parametrize("shape", [(2, 0, 0), (0,), (2, 3, 0), (0, 2)])
def test_the_widths_of_an_empty_leaf_have_its_shape(shape: tuple[int, ...]) -> None:
    # found by the members law under another test order: a (2, 0, 0) Box's counts read (2, 0)
    model = leaf(sa.Box(0, 3, shape, np.uint8))
    assert counts(model).shape == model.widths().shape == shape
    assert positions(model, np.zeros(shape, np.uint8)).shape == shape
