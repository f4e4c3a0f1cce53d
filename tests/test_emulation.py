"""Laws of spacealg.emulation: PufferLib's structured layout where PufferLib works, the round
trip nativize(emulate(x)) == x, emulated members inside the emulated spaces, batched forms
equal to loops, and none of PufferLib's failures."""

from __future__ import annotations

from typing import Any

import gymnasium.spaces as gs
import numpy as np
import pytest
from helpers import member_at, same
from hypothesis import assume, example, given
from hypothesis import strategies as st

import spacealg as sa
from spacealg.emulation import (
    Codec,
    dtype_from_space,
    emulate,
    emulate_action_space,
    emulate_observation_space,
    nativize,
)
from spacealg.strategies.gymnasium import gymnasium_spaces
from spacealg.strategies.spaces import spaces

EMULATABLE = ("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Tuple", "Dict")
seeds = st.integers(0, 2**32 - 1)


# -- helpers ---------------------------------------------------------------------------------


def pufferlib_dtype(space: gs.Space) -> np.dtype:
    """PufferLib 2.0.2's ``dtype_from_space``, the oracle of the layout."""
    if isinstance(space, gs.Tuple):
        return np.dtype([(f"f{i}", pufferlib_dtype(s)) for i, s in enumerate(space.spaces)], align=True)
    if isinstance(space, gs.Dict):
        return np.dtype([(k, pufferlib_dtype(s)) for k, s in space.spaces.items()], align=True)
    return np.dtype((space.dtype, space.shape), align=True)


def pufferlib_leaves(space: gs.Space) -> list[gs.Space]:
    if isinstance(space, gs.Tuple):
        return [leaf for s in space.spaces for leaf in pufferlib_leaves(s)]
    if isinstance(space, gs.Dict):
        return [leaf for s in space.spaces.values() for leaf in pufferlib_leaves(s)]
    return [space]


def nonempty(space: gs.Space) -> bool:
    return bool(pufferlib_leaves(space))


emulatable_spaces = gymnasium_spaces(max_depth=2, classes=EMULATABLE).filter(nonempty)
spacealg_emulatable = spaces(composites=("tuple", "dict", "product"))


# -- PufferLib's layout ----------------------------------------------------------------------


@given(emulatable_spaces)
def test_dtype_from_space_equals_pufferlib(space: gs.Space) -> None:
    assert dtype_from_space(space) == pufferlib_dtype(space)


@given(emulatable_spaces)
def test_emulated_observation_box_has_pufferlib_shape_and_dtype(space: gs.Space) -> None:
    box, dtype = emulate_observation_space(space)
    assert dtype == pufferlib_dtype(space)
    if isinstance(space, gs.Box):
        assert box is space
        return
    dtypes = {leaf.dtype for leaf in pufferlib_leaves(space)}
    flat = dtypes.pop() if len(dtypes) == 1 else np.dtype(np.uint8)
    assert isinstance(box, gs.Box) and box.dtype == flat
    assert box.shape == (dtype.itemsize // flat.itemsize,)


@given(gymnasium_spaces(max_depth=2, classes=("Discrete", "Tuple", "Dict")).filter(nonempty))
def test_discrete_action_spaces_equal_pufferlib(space: gs.Space) -> None:
    emulated, dtype = emulate_action_space(space)
    if isinstance(space, gs.Discrete):
        assert emulated is space and dtype == space.dtype
        return
    leaves = pufferlib_leaves(space)
    assert emulated == gs.MultiDiscrete([leaf.n for leaf in leaves], start=[leaf.start for leaf in leaves])
    if all(leaf.dtype == np.int64 for leaf in leaves):
        assert dtype == pufferlib_dtype(space)  # PufferLib's struct, where PufferLib works


# -- round trips and membership ---------------------------------------------------------------


@given(emulatable_spaces, seeds)
def test_nativize_emulate_is_identity_on_observations(space: gs.Space, seed: int) -> None:
    space.seed(seed)
    x = space.sample()
    codec = Codec(space)
    row = codec.emulate(x)
    assert row.dtype == codec.emulated_space.dtype
    assert codec.emulated_space.contains(row)
    back = codec.nativize(row)
    assert same(back, x)
    assert space.contains(back)
    # PufferLib's signatures give the same bytes and the same member
    _, dtype = emulate_observation_space(space)
    if not codec.layout.native:  # PufferLib emulates only what it does not keep as is
        struct = np.zeros(1, dtype)
        emulate(struct, x)
        assert struct.tobytes() == row.tobytes()
    assert same(nativize(row, space, dtype), x)


@given(spacealg_emulatable, seeds)
def test_nativize_emulate_is_identity_on_spacealg_spaces(space: Any, seed: int) -> None:
    x = sa.sample(space, rng=seed)
    for role in ("observation", "action"):
        try:
            codec = Codec(space, role)
        except ValueError as error:  # integers too large for a float action Box
            assert role == "action" and "too" in str(error)
            continue
        row = codec.emulate(x)
        assert codec.emulated_space.contains(row) or codec.emulated_space.contains(row.reshape(()))
        back = codec.nativize(row)
        assert same(back, x), role
        assert sa.contains(back, space), role


@given(gymnasium_spaces(max_depth=2, classes=EMULATABLE).filter(nonempty), seeds)
def test_nativize_emulate_is_identity_on_actions(space: gs.Space, seed: int) -> None:
    space.seed(seed)
    x = space.sample()
    try:
        codec = Codec(space, "action")
    except ValueError as error:
        assert "too" in str(error)  # int64-wide integer Boxes beside float leaves
        return
    row = codec.emulate(x)
    emulated, dtype = emulate_action_space(space)
    assert emulated is codec.emulated_space and dtype == codec.struct_dtype
    action = row if not codec.layout.native else row.reshape(emulated.shape)
    assert emulated.contains(action.astype(emulated.dtype))
    back = nativize(action, space, dtype)
    assert same(back, x)
    assert space.contains(back)
    if not codec.layout.native:
        assert isinstance(emulated, (gs.MultiDiscrete, gs.Box)) and emulated.shape == (codec.width,)
        kinds = {leaf.integral for _, _, leaf, _ in codec.layout.leaves}
        assert isinstance(emulated, gs.MultiDiscrete) == (kinds == {True})


# -- the checked writer (the env layer's guard) -------------------------------------------------


def _variants(x: Any) -> list[Any]:
    """Near-members of the member ``x``: one leaf at a time moved out of range, cast, cut,
    made NaN, a bool, a list or a string (some of them are still members, by value)."""
    if isinstance(x, dict):
        return [{**x, k: v} for k in x for v in _variants(x[k])] + [{k: x[k] for k in list(x)[1:]}, list(x.values())]
    if isinstance(x, tuple):
        return [(*x[:i], v, *x[i + 1 :]) for i in range(len(x)) for v in _variants(x[i])] + [list(x), x[1:]]
    a = np.asarray(x)
    numeric = a.dtype.kind in "biuf"
    out: list[Any] = [str(x), True, 1.7, [x]]
    if numeric:
        wide = a.astype(np.float64)
        out += [wide + 1, (wide + 1).astype(a.dtype), wide * 300 + 300, -wide - 300, wide + 0.5, a.astype(np.int16),
                np.full(a.shape, np.nan), a.reshape(-1)[:1], a.tolist(), np.float32(wide.sum()), int(wide.sum())]
    return out


@given(st.one_of(emulatable_spaces, spacealg_emulatable), seeds)
@example(gs.Box(-np.inf, np.inf, (), np.float16), 0)  # a (1,) array for a scalar unbounded Box: refused
def test_the_checked_writer_writes_exactly_the_members_and_nothing_else(space: Any, seed: int) -> None:
    """``guard.checked`` (what GymnasiumPufferEnv's guard runs) accepts exactly the members by
    value; it writes what ``emulate_into`` writes, and a refused value leaves the row as it was."""
    from spacealg.emulation.guard import observation_guard, observation_writer
    from spacealg.env import APIUsageError

    codec = Codec(space)
    x = sa.sample(space, rng=seed)
    converted = sa.from_gymnasium(space) if isinstance(space, gs.Space) else space
    row = codec.new_buffer()
    rng = np.random.default_rng(seed)
    row.reshape(-1).view(np.uint8)[...] = rng.integers(0, 256, row.nbytes, dtype=np.uint8)  # old bytes, padding too
    write, check = observation_writer(space, "env", row), observation_guard(space, "env")
    for value in [x, *_variants(x)]:
        member = sa.contains(value, converted)
        before = row.copy()
        for run in (check, write):
            try:
                run(value)
                accepted = True
            except APIUsageError as error:
                accepted = False
                assert str(error).startswith("env: the")
            assert accepted == member, (value, run)
        if member:
            assert same(codec.nativize(row), codec.nativize(codec.emulate(value)))
        else:
            assert row.tobytes() == before.tobytes()


def test_the_checked_writer_takes_a_strided_row() -> None:
    """A user buffer whose rows numpy cannot see as flat bytes is checked, then copied."""
    from spacealg.emulation.guard import observation_writer
    from spacealg.env import APIUsageError

    for space in (gs.Box(-1, 1, (3,), np.float32), gs.Dict({"a": gs.Box(-1, 1, (2,)), "b": gs.Box(0, 1, (1,))})):
        buf = np.zeros((3, 4), np.float32).T  # its rows are strided
        write = observation_writer(space, "env", buf[0])
        x = space.sample()
        write(x)
        assert same(Codec(space).nativize(buf[0].copy()), x)
        with pytest.raises(APIUsageError):
            write(np.full(3, 2.0, np.float32) if isinstance(space, gs.Box) else {"a": x["a"], "b": x["b"] + 2})
        assert same(Codec(space).nativize(buf[0].copy()), x)


# -- batches equal loops -----------------------------------------------------------------------


@given(spacealg_emulatable, seeds, st.sampled_from(["observation", "action"]))
def test_emulate_batch_equals_loop_of_emulate(space: Any, seed: int, role: str) -> None:
    try:
        codec = Codec(space, role)
    except ValueError:
        assume(False)
    batch = sa.sample(space, 3, rng=seed)
    buf = codec.emulate_batch(codec.new_buffer(3), batch)
    rows = codec.new_buffer(3)
    for i in range(3):
        codec.emulate_into(rows[i : i + 1], member_at(batch, i))  # a view even for scalar rows
    assert buf.tobytes() == rows.tobytes()
    by_row = codec.new_buffer(3)
    for i in range(3):
        codec.emulate_row(by_row, i, member_at(batch, i))
    assert by_row.tobytes() == rows.tobytes()
    back = codec.nativize_batch(buf)
    for i in range(3):
        assert same(member_at(back, i), codec.nativize(rows[i : i + 1]))
        assert same(codec.nativize_row(buf, i), codec.nativize(rows[i : i + 1]))
    assert sa.isin(back, space).all()


# -- views, copies, buffers ------------------------------------------------------------------


def test_nativize_returns_views_unless_copy() -> None:
    space = gs.Dict({"img": gs.Box(0, 255, (2, 2), np.uint8), "pos": gs.Box(-1, 1, (3,), np.float32)})
    codec = Codec(space)
    row = codec.emulate(space.sample())
    assert np.shares_memory(codec.nativize(row)["img"], row)
    assert not np.shares_memory(codec.nativize(row, copy=True)["img"], row)


def test_emulate_into_reuses_views_of_the_same_row() -> None:
    space = gs.Tuple((gs.Discrete(3), gs.Box(0.0, 1.0, (2,), np.float32)))
    codec = Codec(space)
    row = codec.new_buffer()
    codec.emulate_into(row, (2, np.array([0.5, 0.25], np.float32)))
    codec.emulate_into(row, (1, np.array([0.75, 0.0], np.float32)))
    assert same(codec.nativize(row), (1, np.array([0.75, 0.0])))


def test_emulate_into_alternating_rows_and_shared_sub_members() -> None:
    """The last-row cache never writes one row's values into another; nested keys read once."""
    space = gs.Dict({"e": gs.Dict({"c": gs.Box(0.0, 1.0, (2, 3), np.float32), "n": gs.Discrete(4)}),
                     "t": gs.Box(0, 9, (2,), np.int16)})
    codec = Codec(space)
    space.seed(1)
    xs = [space.sample() for _ in range(4)]
    rows = [codec.new_buffer(), codec.new_buffer()]
    for i, x in enumerate(xs):  # rows alternate: every call after the first misses the cache
        codec.emulate_into(rows[i % 2], x)
        assert same(codec.nativize(rows[i % 2], copy=True), x)
    assert same(codec.nativize(rows[0]), xs[2]) and same(codec.nativize(rows[1]), xs[3])
    raw = bytearray(codec.width * codec.flat_dtype.itemsize)  # not an ndarray: written, never cached
    codec.emulate_into(raw, xs[0])
    assert same(codec.nativize(np.frombuffer(bytes(raw), codec.flat_dtype)), xs[0])
    buf = codec.new_buffer(2)
    codec.emulate_row(buf, 1, xs[1])
    codec.emulate_row(codec.new_buffer(2), 0, xs[2])
    codec.emulate_row(buf, 0, xs[3])
    assert same(codec.nativize_row(buf, 0), xs[3]) and same(codec.nativize_row(buf, 1), xs[1])
    with pytest.raises((TypeError, ValueError)):
        codec.emulate_into(None, xs[0])


def test_rows_can_be_struct_arrays_or_bytes() -> None:
    space = gs.Dict({"a": gs.Discrete(3), "b": gs.Box(0.0, 1.0, (2,), np.float32)})
    codec = Codec(space)
    x = {"a": 2, "b": np.array([0.5, 0.25], np.float32)}
    struct = np.zeros(1, codec.struct_dtype)
    codec.emulate_into(struct, x)
    assert same(codec.nativize(struct), x)
    assert same(codec.nativize(struct.view(np.uint8)), x)
    with pytest.raises(ValueError, match="entries"):
        codec.nativize(np.zeros(3, np.uint8))


def test_new_buffer_shapes() -> None:
    assert Codec(gs.Box(0, 1, (4, 4), np.uint8)).new_buffer(3).shape == (3, 4, 4)
    assert Codec(gs.Dict({"a": gs.Discrete(2), "b": gs.Discrete(3)})).new_buffer(5).shape == (5, 2)
    assert Codec(gs.Discrete(4), "action").new_buffer(2).shape == (2,)


# -- PufferLib's failures, fixed ---------------------------------------------------------------


def test_top_level_discrete_observation_is_a_one_entry_box() -> None:
    box, dtype = emulate_observation_space(gs.Discrete(5, start=2))
    assert box == gs.Box(2, 6, (1,), np.int64) and dtype == np.int64
    codec = Codec(gs.Discrete(5, start=2))
    row = codec.emulate(np.int64(4))
    assert row.shape == (1,) and codec.nativize(row) == 4 and type(codec.nativize(row)) is int


def test_discrete_leaves_keep_their_own_dtypes() -> None:
    int32 = np.int32
    space = gs.Dict({"a": gs.Discrete(3, dtype=int32), "b": gs.Discrete(4), "c": gs.Discrete(2, dtype=int32)})
    box, dtype = emulate_observation_space(space)
    assert [dtype.fields[k][0] for k in "abc"] == [np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.int32)]
    assert box.dtype == np.uint8
    codec = Codec(space)
    x = {"a": np.int32(2), "b": np.int64(3), "c": np.int32(1)}
    assert same(nativize(codec.emulate(x), space, dtype), x)


def test_nativize_casts_an_action_array_of_another_dtype() -> None:
    space = gs.Dict({"move": gs.Discrete(5), "target": gs.Discrete(10)})
    emulated, dtype = emulate_action_space(space)
    assert emulated == gs.MultiDiscrete([5, 10])
    for array in (np.array([3, 7], np.int32), np.array([3.0, 7.0], np.float32), [3, 7]):
        assert nativize(array, space, dtype) == {"move": 3, "target": 7}


def test_box_leaves_in_action_dicts_get_a_float_box() -> None:
    space = gs.Dict({"fire": gs.Discrete(2), "aim": gs.Box(-1.0, 1.0, (2,), np.float32),
                     "gear": gs.Discrete(3, start=1)})
    emulated, dtype = emulate_action_space(space)
    assert emulated == gs.Box(np.array([-1, -1, 0, 1], np.float32), np.array([1, 1, 1, 3], np.float32))
    assert set(dtype.names) == {"fire", "aim", "gear"}
    action = nativize(np.array([0.5, -0.25, 0.7, 9.0], np.float32), space, dtype)
    assert action["fire"] == 1 and action["gear"] == 3  # rounded, clipped into range
    assert same(action["aim"], np.array([0.5, -0.25], np.float32)) and action["aim"].dtype == np.float32
    assert space.contains(action)


def test_multibinary_actions_are_sized_by_their_entries() -> None:
    space = gs.Dict({"a": gs.Discrete(3), "m": gs.MultiBinary(4)})
    emulated, dtype = emulate_action_space(space)
    assert emulated == gs.MultiDiscrete([3, 2, 2, 2, 2])
    action = nativize(np.array([2, 1, 0, 1, 1]), space, dtype)
    assert action["a"] == 2 and same(action["m"], np.array([1, 0, 1, 1])) and action["m"].dtype == np.int8
    top, top_dtype = emulate_action_space(gs.MultiBinary((2, 2)))
    assert top == gs.MultiDiscrete([2, 2, 2, 2])
    back = nativize(np.array([1, 0, 0, 1]), gs.MultiBinary((2, 2)), top_dtype)
    assert same(back, np.array([[1, 0], [0, 1]]))


def test_multidiscrete_leaves_in_action_tuples_work() -> None:
    space = gs.Tuple((gs.Discrete(3), gs.MultiDiscrete([2, 5])))
    emulated, dtype = emulate_action_space(space)
    assert emulated == gs.MultiDiscrete([3, 2, 5])
    assert same(nativize(np.array([2, 1, 4]), space, dtype), (2, np.array([1, 4])))


@pytest.mark.parametrize(
    ("space", "path"),
    [
        (gs.Dict({"a": gs.Discrete(2), "seq": gs.Sequence(gs.Discrete(3))}), "space['seq']"),
        (gs.Tuple((gs.Discrete(2), gs.Dict({"g": gs.Graph(gs.Box(0, 1, (2,)), None)}))), "space[1]['g']"),
        (gs.Dict({"t": gs.Text(4)}), "space['t']"),
        (gs.Tuple((gs.OneOf((gs.Discrete(2), gs.Discrete(3))),)), "space[0]"),
    ],
)
def test_spaces_without_a_layout_raise_value_error_naming_the_path(space: gs.Space, path: str) -> None:
    for function in (emulate_observation_space, emulate_action_space, dtype_from_space):
        with pytest.raises(ValueError, match=path.replace("[", r"\[").replace("]", r"\]")):
            function(space)


def test_nativize_rejects_a_foreign_struct_dtype() -> None:
    with pytest.raises(ValueError, match="neither"):
        nativize(np.zeros(2), gs.Dict({"a": gs.Discrete(2), "b": gs.Discrete(2)}), np.dtype(np.float32))


def test_labels_are_stored_as_indices() -> None:
    space = sa.DictProduct(mood=sa.FiniteSet("ok", "bad"), flags=sa.ArraySpace(sa.FiniteSet("r", "g"), 2))
    codec = Codec(space)
    x = {"mood": "bad", "flags": np.array(["g", "r"])}
    row = codec.emulate(x)
    assert row.tolist() == [1, 1, 0] and same(codec.nativize(row), x)
    with pytest.raises(ValueError, match="not a member"):
        codec.emulate({"mood": "meh", "flags": np.array(["g", "r"])})


def test_emulate_falls_back_for_dict_samples_of_tuple_layouts() -> None:
    space = gs.Tuple((gs.Discrete(3), gs.Discrete(4)))
    struct = np.zeros(1, dtype_from_space(space))
    emulate(struct, {"f0": 2, "f1": 3})  # PufferLib's recursive rule: by field name
    assert struct["f0"][0] == 2 and struct["f1"][0] == 3
    emulate(struct, [1, 2])
    assert struct["f0"][0] == 1 and struct["f1"][0] == 2


# -- PufferLib's own test spaces round-trip ------------------------------------------------------

_LOW, _HIGH = -1.0, 1.0


def _nethack() -> gs.Dict:
    boxes = {"blstats": ((27,), np.int64, -(2**31), 2**31 - 1), "chars": ((21, 79), np.uint8, 0, 255),
             "colors": ((21, 79), np.uint8, 0, 15), "glyphs": ((21, 79), np.int16, 0, 5976),
             "inv_glyphs": ((55,), np.int16, 0, 5976), "inv_letters": ((55,), np.uint8, 0, 127),
             "inv_oclasses": ((55,), np.uint8, 0, 18), "inv_strs": ((55, 80), np.uint8, 0, 255),
             "message": ((256,), np.uint8, 0, 255), "screen_descriptions": ((21, 79, 80), np.uint8, 0, 127),
             "specials": ((21, 79), np.uint8, 0, 255), "tty_chars": ((24, 80), np.uint8, 0, 255),
             "tty_colors": ((24, 80), np.int8, 0, 31), "tty_cursor": ((2,), np.uint8, 0, 255)}
    return gs.Dict({k: gs.Box(lo, hi, shape, dtype) for k, (shape, dtype, lo, hi) in boxes.items()})


def _neural_mmo() -> gs.Dict:
    def mask(n: int) -> gs.Box:
        return gs.Box(0, 1, (n,), np.int8)

    targets = {"Attack": {"Style": 3, "Target": 100}, "Buy": {"MarketItem": 1024}, "Comm": {"Token": 50},
               "Destroy": {"InventoryItem": 12}, "Give": {"InventoryItem": 12, "Target": 100},
               "GiveGold": {"Price": 99, "Target": 100}, "Move": {"Direction": 5},
               "Sell": {"InventoryItem": 12, "Price": 99}, "Use": {"InventoryItem": 12}}
    table = gs.Box(-32768, 32767, (1,), np.int16)
    return gs.Dict({
        "ActionTargets": gs.Dict(
            {a: gs.Dict({k: mask(n) for k, n in ks.items()}) for a, ks in targets.items()}
        ),
        "AgentId": gs.Discrete(129), "CurrentTick": gs.Discrete(1025),
        "Entity": gs.Box(table.low[0], table.high[0], (100, 23), np.int16),
        "Inventory": gs.Box(table.low[0], table.high[0], (12, 16), np.int16),
        "Market": gs.Box(table.low[0], table.high[0], (1024, 16), np.int16),
        "Task": gs.Box(-32770.0, 32770.0, (1024,), np.float16),
        "Tile": gs.Box(table.low[0], table.high[0], (225, 3), np.int16),
    })


def _neural_mmo_actions() -> gs.Dict:
    choices = {"Attack": {"Style": 3, "Target": 100}, "Buy": {"MarketItem": 1024}, "Comm": {"Token": 50},
               "Destroy": {"InventoryItem": 12}, "Give": {"InventoryItem": 12, "Target": 100},
               "GiveGold": {"Price": 99, "Target": 100}, "Move": {"Direction": 5},
               "Sell": {"InventoryItem": 12, "Price": 99}, "Use": {"InventoryItem": 12}}
    return gs.Dict({a: gs.Dict({k: gs.Discrete(n) for k, n in ks.items()}) for a, ks in choices.items()})


def _box(shape: tuple[int, ...]) -> gs.Box:
    return gs.Box(_LOW, _HIGH, shape, np.float32)


PUFFERLIB_OBSERVATION_SPACES = [
    gs.Box(0, 255, (4, 84, 84), np.uint8),
    _nethack(),
    _neural_mmo(),
    gs.Discrete(5),
    _box((4,)),
    gs.Dict({"foo": _box((2,)), "bar": _box((2,))}),
    gs.Tuple((gs.Discrete(3), gs.Discrete(4))),
    gs.Tuple((_box((2,)), gs.Discrete(3), gs.Dict({"baz": _box((1,)), "qux": _box((1,))}))),
    gs.Dict({
        "foo": gs.Tuple((_box((2,)), gs.Discrete(3))),
        "bar": gs.Dict({"baz": gs.Discrete(2), "qux": gs.Discrete(4)}),
    }),
]

PUFFERLIB_ACTION_SPACES = [
    gs.Discrete(5),
    _neural_mmo_actions(),
    gs.Tuple((gs.Discrete(2), gs.Discrete(3))),
    gs.Dict({"foo": gs.Discrete(4), "bar": gs.Discrete(2)}),
    gs.Tuple((gs.Discrete(4), gs.Dict({"baz": gs.Discrete(2), "qux": gs.Discrete(2)}))),
    gs.Dict({
        "foo": gs.Tuple((gs.Discrete(2), gs.Discrete(3))),
        "bar": gs.Dict({"baz": gs.Discrete(2), "qux": gs.Discrete(4)}),
    }),
]


@pytest.mark.parametrize("space", PUFFERLIB_OBSERVATION_SPACES, ids=lambda s: type(s).__name__)
def test_pufferlib_observation_spaces_round_trip(space: gs.Space) -> None:
    box, dtype = emulate_observation_space(space)
    assert dtype == pufferlib_dtype(space)
    codec = Codec(space)
    buf = codec.new_buffer(4)
    for seed in range(4):
        space.seed(seed)
        x = space.sample()
        codec.emulate_row(buf, seed, x)
        assert box.contains(buf[seed])
        assert same(codec.nativize_row(buf, seed), x)
        assert same(nativize(buf[seed], space, dtype), x)


@pytest.mark.parametrize("space", PUFFERLIB_ACTION_SPACES, ids=lambda s: type(s).__name__)
def test_pufferlib_action_spaces_round_trip(space: gs.Space) -> None:
    emulated, dtype = emulate_action_space(space)
    leaves = pufferlib_leaves(space)
    if isinstance(space, gs.Discrete):
        assert emulated is space
    else:
        assert emulated == gs.MultiDiscrete([leaf.n for leaf in leaves]) and dtype == pufferlib_dtype(space)
    for seed in range(4):
        emulated.seed(seed)
        action = emulated.sample()
        native = nativize(action, space, dtype)
        assert space.contains(native)
        assert same(Codec(space, "action").emulate(native).reshape(np.shape(action)), action)
