"""Issue 16: every promise under hostile input. One regression test per reported break,
each checking the general rule that fixed it (tests/test_fuzz.py fuzzes the same rules)."""

from __future__ import annotations

import contextlib
import json
import math
import pickle
import time

import gymnasium
import gymnasium.spaces as gs
import numpy as np
import pytest
from gymnasium.vector.utils import batch_space
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.core.space import MAX_DEPTH
from spacealg.emulation import GymnasiumPufferEnv, nativize
from spacealg.env import APIUsageError
from spacealg.serialize import DocumentError

# -- 1, 2: from_json --------------------------------------------------------------------


def _doc(node):
    return {"format": "spacealg.space", "version": 1, "space": node}


def test_from_json_scalar_bounds_stay_scalar_so_a_small_document_allocates_nothing():
    s = sa.from_json(_doc({"kind": "box", "dtype": "float64", "shape": [10**9], "low": 0, "high": 1}))
    assert s.shape == (10**9,)
    # the bounds are read-only broadcast views of one number each
    assert s.low.strides == (0,) and s.high.strides == (0,)
    assert sa.to_json(s)["space"]["low"] == 0.0 and hash(s) == hash(sa.from_json(sa.to_json(s)))


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"kind": "box", "dtype": "(1,2", "shape": [1], "low": 0, "high": 1}', "space.dtype"),
        ('{"kind": "box", "dtype": "float64", "shape": [2], "low": [0, 1' + "0" * 400 + '], "high": 1}', "space.low"),
        ('{"kind": "box", "dtype": "float32", "shape": [1000000000000], "low": 0, "high": 1}', "space"),
        ('{"kind": "range", "stop": 1' + "0" * 5000 + "}", "JSON"),
        ('{"kind": "sequence", "space": ' * 300 + '{"kind": "range", "stop": 2}' + "}" * 300, "space.space"),
    ],
)
def test_every_malformed_document_is_a_document_error_naming_the_path(text, where):
    document = '{"format": "spacealg.space", "version": 1, "space": ' + text + "}"
    with pytest.raises(DocumentError, match=where):
        sa.from_json(document)


def test_json_nested_past_the_parser_is_a_document_error():
    with pytest.raises(DocumentError):
        sa.from_json("[" * 100_000 + "]" * 100_000)


# -- 3, 4: lazy elements, cardinality that returns -------------------------------------------


def test_elements_are_lazy():
    assert next(iter(sa.elements(sa.DictProduct(a=sa.Text(8))))) == {"a": "0"}
    first = next(iter(sa.elements(sa.Categorical([2**62] * 10))))
    assert first.tolist() == [0] * 10
    assert next(iter(sa.elements(sa.ArraySpace(range(3), 10**6)))).shape == (10**6,)


def test_cardinality_is_exact_and_never_hangs():
    start = time.perf_counter()
    n = sa.cardinality(sa.Text(10**6))
    assert n == (62 ** (10**6 + 1) - 62) // 61
    assert sa.cardinality(sa.Text(3, charset="ab")) == 2 + 4 + 8
    with pytest.raises(OverflowError, match="too large to count"):
        sa.cardinality(sa.ArraySpace(range(3), 10**12))
    assert sa.cardinality(sa.ArraySpace(range(3), 40)) == 3**40
    assert time.perf_counter() - start < 60  # generous: a hang, not a speed goal


# -- 6: deep nesting -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wrap",
    [lambda s: sa.DictProduct(a=s, b=range(2)), lambda s: sa.TupleProduct(s, range(3)), sa.OneOf, sa.Sequence],
)
def test_the_depth_the_constructors_accept_works_everywhere(wrap):
    s = range(2)
    for _ in range(MAX_DEPTH - 1):
        s = wrap(s)
    x = () if isinstance(s, sa.Sequence) else sa.sample(s, rng=0)
    assert sa.contains(x, s)
    assert pickle.loads(pickle.dumps(s)) == s
    assert eval(repr(s), {**vars(sa), "np": np}) == s
    assert sa.from_json(json.dumps(sa.to_json(s))) == s
    with pytest.raises(ValueError, match="nested"):
        wrap(s)


# -- 7, 8, 9: membership by exact value, never raising --------------------------------------


@pytest.mark.parametrize(
    ("x", "space"),
    [
        (np.float32(0.1), sa.Interval(0, 0.1)),
        (np.float16(np.inf), sa.Interval(0, 70000)),
        (np.full(3, np.inf, np.float16), sa.ArraySpace(range(0, 2**62), 3)),
        (-(2**63) - 1, sa.Box(-(2**63), 2**63 - 1, (), np.int64)),
        (np.int64(2**53 + 1), sa.Interval(0, 2.0**53)),
        (np.array([2**60 + 1]), sa.Box(0.0, 2.0**60, (1,), np.float64)),
        (np.timedelta64(1, "s"), sa.Interval(0.0, 1.5)),
    ],
)
def test_not_members_by_exact_value(x, space):
    assert sa.contains(x, space) is False


def test_members_by_exact_value_and_bools_are_numbers():
    assert sa.contains(np.array([1, 4], np.uint8), sa.ArraySpace(range(-8, 10, 3), 2))
    assert sa.contains(np.True_, sa.Interval(-(2**70), 10, "neither"))
    assert sa.contains(np.True_, range(2)) and sa.isin([True], range(2)).tolist() == [True]
    assert sa.isin(np.array([2**63 + 4, 2**63], np.uint64), sa.FiniteSet(2**63)).tolist() == [False, True]
    assert sa.isin(np.array([0.1, 1.0], np.float32), sa.FiniteSet(0.1, 1)).tolist() == [False, True]


INTEGER_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int64, np.uint64]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-(2**64), 2**64), min_size=1, max_size=6),
    st.integers(-300, 300),
    st.integers(0, 6),
    st.sampled_from(INTEGER_DTYPES),
    st.data(),
)
def test_finite_set_isin_decides_each_entry_by_value(items, start, run, dtype, data):
    """``isin(a, FiniteSet(...))[i] == (a[i] is an item)`` for every integer dtype, whether the
    items it holds are a consecutive run (two comparisons) or not (``np.isin``)."""
    space = sa.FiniteSet(*items, *range(start, start + run))
    info = np.iinfo(dtype) if dtype is not np.bool_ else np.iinfo(np.uint8)
    lo, hi = int(info.min), 1 if dtype is np.bool_ else int(info.max)
    near = [v + d for v in (*items, start, start + run) for d in (-1, 0, 1)]
    values = data.draw(st.lists(st.sampled_from([v for v in near if lo <= v <= hi] or [lo]) | st.integers(lo, hi),
                                min_size=1, max_size=8))
    batch = np.array(values, dtype=np.uint64 if dtype is np.uint64 else object).astype(dtype)
    expected = [int(v) in set(space.items) for v in batch.tolist()]
    assert sa.isin(batch, space).tolist() == expected
    assert sa.isin(batch, space).tolist() == expected  # the memoised test for this dtype, again


class Hostile:
    def __eq__(self, other):
        raise RuntimeError("eq")

    def __hash__(self):
        raise RuntimeError("hash")

    def __len__(self):
        raise RuntimeError("len")

    def __iter__(self):
        raise RuntimeError("iter")

    def __array__(self, *args, **kwargs):
        raise RuntimeError("array")


HOSTILE_SPACES = [
    sa.Interval(0, 1), sa.Box(0, 1, (2,)), sa.FiniteSet(1, "a"), range(3), sa.Text(3),
    sa.ArraySpace(("a", "b"), 2), sa.product(range(2), ("a", "b")), sa.DictProduct(a=range(2)),
    sa.OneOf(range(2)), sa.Sequence(range(2)), sa.Categorical([2, 3], dtype=np.int8),
    sa.Graph(sa.Box(0, 1, (2,))), ("x", "y"), {"a": range(2)}, bool, float,
]


@pytest.mark.parametrize("space", HOSTILE_SPACES, ids=repr)
def test_contains_never_raises_on_hostile_objects(space):
    objects = np.empty(1, dtype=object)
    objects[0] = Hostile()
    for x in (Hostile(), [Hostile()], (0, Hostile()), {"a": Hostile()}, objects):
        assert sa.contains(x, space) is False


@pytest.mark.parametrize("space", HOSTILE_SPACES, ids=repr)
def test_isin_raises_only_value_error(space):
    for batch in (0, Hostile(), [Hostile()], "text"):
        with contextlib.suppress(ValueError):  # anything else fails the test
            sa.isin(batch, space)


def test_isin_of_a_non_batch_is_the_documented_value_error():
    with pytest.raises(ValueError, match="not a batch"):
        sa.isin(0, sa.OneOf(range(2)))
    with pytest.raises(TypeError):  # the space, not the batch, is wrong
        sa.isin([1], object())


# -- 10, 11, 12, 13: values and constructors ---------------------------------------------------


def test_every_public_array_is_read_only():
    for s in (sa.Box(0, 1, (3,)), sa.Box(np.zeros(3), np.arange(1, 4)), sa.Box(-np.inf, 5, (2,), np.int8),
              sa.Categorical([2, 3], dtype=np.int8)):
        for name in ("low", "high", "bounded_below", "bounded_above", "nvec", "start"):
            array = getattr(s, name, None)
            if isinstance(array, np.ndarray):
                with pytest.raises(ValueError):
                    array[0] = 0


@pytest.mark.parametrize(
    "build",
    [lambda: sa.FiniteSet(float("nan"), 1.0), lambda: sa.FiniteSet((1, float("nan"))),
     lambda: sa.DictProduct({float("nan"): range(2)}), lambda: sa.FiniteSet(np.float32("nan"))],
)
def test_nan_labels_are_refused(build):
    with pytest.raises(ValueError, match="NaN"):
        build()


def test_oneof_samples_only_non_empty_branches():
    s = sa.OneOf(sa.FiniteSet(), range(2))
    assert {sa.sample(s, rng=k) for k in range(100)} == {(1, 0), (1, 1)}
    with pytest.raises(ValueError, match="empty"):
        sa.sample(sa.OneOf(sa.FiniteSet()), rng=0)


def test_encode_of_an_array_of_text_agrees_with_to_gymnasium():
    s = sa.ArraySpace(sa.Text(3), 2)
    y = sa.encode(np.array(["ab", "c"]), s)
    assert sa.to_gymnasium(s).contains(y)
    assert sa.decode(y, s).tolist() == ["ab", "c"]


def test_categorical_and_range_beyond_int64():
    for nvec in (2**70, [2**70]):
        with pytest.raises(ValueError, match="do not fit"):
            sa.Categorical(nvec)
    with pytest.raises(TypeError, match="int64"):
        sa.to_gymnasium(range(2**70))


# -- 17, 19, 20: boxes --------------------------------------------------------------------------


def test_a_box_whose_element_cannot_be_allocated_is_a_value_error_naming_shape():
    with pytest.raises(ValueError, match="shape"):
        sa.Box(0, 1, shape=(10**12,))


@pytest.mark.parametrize(
    ("args", "name"),
    [((0, 1e39), "high"), ((0, 65505.0, (1,), np.float16), "high"), ((-1e39, 0), "low")],
)
def test_float_bounds_beyond_the_dtype_are_refused(args, name):
    with pytest.raises(ValueError, match=name):
        sa.Box(*args)
    assert sa.Box(0, 65504.0, (1,), np.float16).high[0] == 65504.0


def test_unsigned_box_with_infinite_high_is_refused():
    with pytest.raises(ValueError, match="high may not be inf"):
        sa.Box(0, np.inf, dtype=np.uint8)


def test_batched_box_sampling_keeps_the_distribution_and_the_closed_bound():
    box = sa.Box(-1, 1, (16,), np.float32)
    batch = sa.sample(box, 10_000, rng=0)
    assert batch.dtype == np.float32 and batch.shape == (10_000, 16)
    assert sa.isin(batch, box).all()
    assert abs(batch.mean()) < 0.02 and abs(batch.var() - 1 / 3) < 0.01  # uniform on [-1, 1]
    assert np.array_equal(sa.sample(box, 10_000, rng=0), batch)
    # the closed upper bound: a point box and a box whose high is drawn by rounding
    assert (sa.sample(sa.Box(1, 1, (4,), np.float32), 3, rng=0) == 1).all()


# -- 14: the environment layer -------------------------------------------------------------------


class _Malformed(gymnasium.Env):
    def __init__(self, ob, reward=0.0):
        self.observation_space = gs.Dict({"a": gs.Box(0, 255, (3,), np.uint8), "d": gs.Discrete(3)})
        self.action_space = gs.Discrete(2)
        self.ob, self.reward = ob, reward

    def reset(self, *, seed=None, options=None):
        return {"a": np.zeros(3, np.uint8), "d": 0}, {}

    def step(self, action):
        return self.ob, self.reward, False, False, {}


@pytest.mark.parametrize(
    ("ob", "reward", "field"),
    [
        ({"a": np.array([7], np.uint8), "d": 1}, 0.0, "['a']"),
        ({"a": np.array([300, 0, 0]), "d": 1}, 0.0, "['a']"),
        ({"a": np.array([-1, 0, 0]), "d": 1}, 0.0, "['a']"),
        ({"a": np.zeros(3, np.uint8), "d": 1.7}, 0.0, "['d']"),
        ({"a": np.zeros(3, np.uint8)}, 0.0, "observation ="),
        ({"a": np.zeros(3, np.uint8), "d": 1}, "1.5", "reward"),
    ],
)
def test_a_malformed_step_is_refused_and_leaves_the_row_as_it_was(ob, reward, field):
    env = GymnasiumPufferEnv(_Malformed(ob, reward))
    env.reset()
    before = env.observations.copy()
    with pytest.raises(APIUsageError, match="_Malformed") as error:
        env.step(0)
    assert field in str(error.value)
    assert np.array_equal(env.observations, before)


def test_a_wellformed_step_is_written():
    env = GymnasiumPufferEnv(_Malformed({"a": np.ones(3, np.uint8), "d": np.int64(2)}, np.float32(1.0)))
    env.reset()
    env.step(0)
    assert nativize(env.observations[0], env.env.observation_space, env.obs_dtype)["d"] == 2


# -- 18, 21: Gymnasium's Dict(sort_keys=False) --------------------------------------------------


def test_sort_keys_false_survives_every_conversion():
    g = gs.Dict({"b": gs.Discrete(2), "a": gs.Box(0, 1, (2,))}, sort_keys=False)
    s = sa.from_gymnasium(g)
    assert s.sort_keys is False and list(s.keys()) == ["b", "a"]
    assert sa.to_gymnasium(s).sort_keys is False
    assert sa.from_json(json.dumps(sa.to_json(s))).sort_keys is False
    assert eval(repr(s), {**vars(sa), "np": np}).sort_keys is False
    joint = sa.joint_space(s, 3)
    assert joint.sort_keys is False
    assert list(sa.to_gymnasium(joint).spaces) == list(batch_space(g, 3).spaces) == ["b", "a"]
    assert sa.DictProduct(b=range(2), a=range(2)).sort_keys is True


def test_joint_space_keeps_what_batch_space_drops():
    g = gs.Box(np.array([-np.inf, 0]), np.array([5, np.inf]), dtype=np.int32)
    joint, batched = sa.joint_space(g, 2), batch_space(g, 2)
    assert joint == batched
    assert not joint.bounded_below[:, 0].any() and batched.bounded_below.all()
    assert sa.joint_space(gs.Discrete(4, start=2), 3) == gs.MultiDiscrete([4] * 3, start=[2] * 3)
    assert math.isfinite(sa.cardinality(sa.joint_space(range(4), 3)))


def test_box_with_one_scalar_bound_and_one_array_bound_samples():
    # a scalar low beside a per-entry high (dm_env's BoundedArray(minimum=-1.0, maximum=[1, 2]))
    # took numpy's scalar fast path with an array high
    import spacealg as sa

    box = sa.Box(-1.0, [1.0, 2.0])
    assert box == sa.Box([-1.0, -1.0], [1.0, 2.0]) and hash(box) == hash(sa.Box([-1.0, -1.0], [1.0, 2.0]))
    assert sa.sample(box, rng=0) in box and sa.isin(sa.sample(box, 50, rng=1), box).all()
    assert sa.isin(sa.sample(sa.Box([0, 1], 3, dtype=np.int64), 50, rng=2), sa.Box([0, 1], 3, dtype=np.int64)).all()


# -- 14 for PettingZoo: a malformed agent observation or reward is refused before any write ----


class _MalformedAgents:
    """A two-agent parallel env whose second agent's observation (or reward) is ``bad``."""

    metadata = {"render_modes": [], "name": "malformed_agents_v0"}  # noqa: RUF012
    render_mode = None
    possible_agents = ["a", "b"]  # noqa: RUF012

    def __init__(self, bad_ob, bad_reward=0.0):
        self.bad_ob, self.bad_reward, self.agents = bad_ob, bad_reward, []

    def observation_space(self, agent):
        return gs.Dict({"x": gs.Box(0, 1, (2,), np.float32), "d": gs.Discrete(3)})

    def action_space(self, agent):
        return gs.Discrete(2)

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        good = {"x": np.full(2, 0.5, np.float32), "d": 1}
        return {"a": good, "b": good}, {"a": {}, "b": {}}

    def step(self, actions):
        good = {"x": np.full(2, 0.25, np.float32), "d": 2}
        obs = {"a": good, "b": self.bad_ob}
        flags = {"a": False, "b": False}
        return obs, {"a": 1.0, "b": self.bad_reward}, flags, dict(flags), {"a": {}, "b": {}}


@pytest.mark.parametrize(
    ("ob", "reward", "field"),
    [
        ({"x": np.full(2, 2.0, np.float32), "d": 1}, 0.0, "['x']"),
        ({"x": np.zeros(2, np.float32), "d": 1.5}, 0.0, "['d']"),
        ({"x": np.zeros(2, np.float32)}, 0.0, "observation"),
        ({"x": np.zeros(2, np.float32), "d": 1}, "1.5", "reward"),
    ],
)
def test_a_malformed_agent_step_is_refused_and_leaves_every_row_as_it_was(ob, reward, field):
    from spacealg.emulation import PettingZooPufferEnv

    env = PettingZooPufferEnv(_MalformedAgents(ob, reward))
    env.reset(seed=0)
    before = env.observations.copy()
    with pytest.raises(APIUsageError, match="_MalformedAgents") as error:
        env.step({"a": 0, "b": 1})
    assert field in str(error.value) and "agent 'b'" in str(error.value)
    assert np.array_equal(env.observations, before)  # agent 'a' was not written either


def test_a_wellformed_agent_step_is_written():
    from spacealg.emulation import PettingZooPufferEnv

    env = PettingZooPufferEnv(_MalformedAgents({"x": np.ones(2, np.float32), "d": np.int64(0)}, np.float32(1.0)))
    env.reset(seed=0)
    env.step({"a": 0, "b": 1})
    assert env.rewards.tolist() == [1.0, 1.0] and env.masks.all()
