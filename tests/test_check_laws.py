"""The checker's laws of issue 35 that a black-box checker can see (the corpus cases are in
tests/envcorpus/law_envs.py, run by tests/test_check_env.py): each law's mechanism, stated
over generated spaces and values where it is general."""

from __future__ import annotations

import copy

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import assume, given
from hypothesis import strategies as st

from spacealg.strategies import gymnasium_spaces
from spacealg.strategies import spaces as spacealg_spaces
from spacealg.testing.engine.lints import space_fault, space_lints

# -- declared-spaces: a declared space is a well-formed set --------------------------------


@given(gymnasium_spaces())
def test_space_fault_raises_no_false_alarm_on_spaces_gymnasium_builds(space) -> None:
    before = copy.deepcopy(space.np_random.bit_generator.state) if space._np_random is not None else None
    assert space_fault(space, "observation_space") is None
    after = space.np_random.bit_generator.state if space._np_random is not None else None
    assert before == after  # the declared space's own generator is left as it was


@given(gymnasium_spaces(classes=("Box", "Dict", "Tuple")), st.integers(1, 3))
def test_space_fault_finds_every_box_whose_bounds_are_not_its_shape(space, extra) -> None:
    boxes = [s for s in _leaves(space) if isinstance(s, spaces.Box)]
    if not boxes:
        return
    boxes[-1].low = np.zeros((*boxes[-1].shape, extra), boxes[-1].dtype)  # one malformed Box, anywhere
    fault = space_fault(space, "observation_space")
    assert fault is not None and "malformed Box" in fault
    space_lints(space, spaces.Discrete(2))  # the lints pass over it: no broadcast error


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.integers(1, 3))
def test_space_fault_finds_a_space_whose_own_samples_are_not_members(nvec, extra) -> None:
    space = spaces.MultiDiscrete(nvec)
    space._shape = (len(nvec) + extra,)  # the shape disagrees with nvec
    fault = space_fault(space, "action_space")
    assert fault is not None and "action_space.sample() returned" in fault


def test_space_fault_reports_a_sample_that_raises() -> None:
    class Refuses(spaces.Discrete):
        def sample(self, mask=None, probability=None):
            raise RuntimeError("no generator")

    fault = space_fault(Refuses(3), "action_space")
    assert fault is not None and "raised RuntimeError: no generator" in fault


def _leaves(space):
    inner = space.spaces.values() if isinstance(space, spaces.Dict) else getattr(space, "spaces", None)
    if inner is None or isinstance(space, spaces.Box):
        yield space
        return
    for sub in inner:
        yield from _leaves(sub)


# -- observation-aliasing: a handed-out observation changed in place, at any depth -----------


def _arrays(value, keys=()):
    """(keys, array) of every array leaf of a Gymnasium member, depth first."""
    if isinstance(value, np.ndarray):
        yield keys, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _arrays(item, (*keys, key))
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _arrays(item, (*keys, i))


@given(gymnasium_spaces(classes=("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Dict", "Tuple")),
       st.integers(0, 2**32 - 1), st.data())
def test_changed_in_place_finds_the_array_changed_at_any_depth(space, seed, data) -> None:
    from spacealg.testing.engine.driver import changed_in_place, snapshot

    space.seed(seed)
    observation = space.sample()
    copied = snapshot(observation)
    assert changed_in_place(observation, copied) is None  # nothing touched: no false alarm
    leaves = [(keys, array) for keys, array in _arrays(observation) if array.size and array.flags.writeable]
    if not leaves:
        return
    keys, array = data.draw(st.sampled_from(leaves))
    flat = array.reshape(-1)
    if array.dtype.kind in "biu":
        flat[0] = ~flat[0]  # any other value
    else:
        flat[0] = 0.5 if flat[0] != 0.5 else 0.25
    assert changed_in_place(observation, copied) == keys


def test_changed_in_place_sees_a_returned_dict_refilled() -> None:
    from spacealg.testing.engine.driver import changed_in_place, snapshot

    observation = {"position": np.zeros(2), "door": 0}
    copied = snapshot(observation)
    observation["door"] = 1  # a scalar entry replaced in the dict handed out
    assert changed_in_place(observation, copied) == ("door",)
    observation["door"] = 0
    observation["extra"] = np.ones(1)  # an entry added
    assert changed_in_place(observation, copied) == ()

    class Opaque:  # no equality of its own: never compared (a copy is not equal to it)
        pass

    assert changed_in_place((Opaque(),), snapshot((Opaque(),))) is None


# -- max-cycles: held only where an example ran an episode that far --------------------------


def test_max_cycles_is_held_only_where_an_episode_ran_to_the_bound() -> None:
    pytest.importorskip("pettingzoo")
    from envcorpus import aec_envs, parallel_envs

    from spacealg.testing import check

    def verdict(factory) -> str:
        return check(factory, max_examples=20, hygiene=False).verdicts()["max-cycles"]

    assert verdict(parallel_envs.Race) == "not checked: the environment declares no max_cycles"
    assert verdict(aec_envs.TakeAway).startswith("not checked: no example ran an episode to max_cycles")
    assert verdict(parallel_envs.CappedRace) == "held"
    assert verdict(aec_envs.UnlistedTakeAway) == "held"  # no possible_agents: the bound applies all the same


# -- the budget bounds the work: a deadline, ticks between steps, replays that stop early --------


def test_tick_stops_the_work_past_the_deadline_and_never_without_one() -> None:
    from spacealg.testing.engine.driver import Budget, OutOfTime, tick, working_until

    tick()  # no budget, no deadline
    with working_until(None):
        tick()
    with working_until(1e9):
        tick()
        with working_until(0.0):  # an inner deadline that comes sooner: passed at once
            with pytest.raises(OutOfTime):
                tick()
            assert Budget(None).spent()  # even an unbounded phase is spent past the deadline
            with pytest.raises(OutOfTime):
                Budget(None).admit(0, 0)  # nothing runs past it, not even a first example
        tick()  # the outer deadline stands again


@given(st.integers(1, 40), st.integers(1, 40))
def test_a_replay_stops_at_its_first_difference(n, at) -> None:
    from spacealg.testing.engine.runner import _replayed_against

    class Counting:
        """An episode whose trace differs from the first run's from entry ``at`` on."""

        def __init__(self) -> None:
            self.trace: list = []
            self.calls = 0

        def run(self) -> list:
            for i in range(n):
                self.calls += 1
                self.trace.append(("step", i if i < at else -i))
            return self.trace

    first = [("step", i) for i in range(n)]
    again = Counting()
    second = _replayed_against(again, first)
    assert again.calls == min(n, at + 1)  # the replay ran up to the entry that differs, no further
    assert second == [("step", i if i < at else -i) for i in range(min(n, at + 1))]


# -- bad input to the checker: a clear message naming the property or the argument -----------


class _NoObservationSpace:
    """An environment whose observation_space is None (declared later, and never)."""

    def __new__(cls):
        from envcorpus.gym_envs import Corridor

        env = Corridor()
        env.observation_space = None
        return env


class _FinalisedCorridor:
    """A sound corridor whose __del__ raises (a cleanup that fails)."""

    def __new__(cls):
        from envcorpus.gym_envs import Corridor

        class Finalised(Corridor):
            def __del__(self):
                raise RuntimeError("the log file is already closed")

        return Finalised()


def test_a_space_that_is_not_a_space_is_declared_spaces() -> None:
    from spacealg.testing import EnvCheckError, check

    with pytest.raises(EnvCheckError) as caught:
        check(_NoObservationSpace, max_examples=3)
    assert caught.value.property == "declared-spaces"
    assert "observation_space is None (of type NoneType), not a space" in caught.value.detail


def test_an_env_whose_del_raises_gets_a_warning_not_a_printed_traceback(capfd) -> None:
    from spacealg.testing import check

    report = check(_FinalisedCorridor, max_examples=3)
    assert any("__del__" in w and "RuntimeError: the log file is already closed" in w for w in report.warnings)
    assert "Exception ignored" not in capfd.readouterr().err


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ("envcorpus.cli_envs:forgets_return", "env: the factory envcorpus.cli_envs:forgets_return returned None"),
        (None, "env must be an environment, a zero-argument factory of one"),
        (3, "env must be an environment"),
    ],
)
def test_a_factory_that_returns_no_environment_is_a_type_error_naming_env(env, said) -> None:
    from spacealg.testing import check, check_env

    for checker in (check, check_env):
        with pytest.raises(TypeError, match=said):
            checker(env, max_examples=2)


def test_the_command_line_says_a_factory_returned_none(capsys) -> None:
    from spacealg.cli import main

    assert main(["check", "envcorpus.cli_envs:forgets_return", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "cannot make 'envcorpus.cli_envs:forgets_return'" in err and "returned None, not an environment" in err
    assert "Traceback" not in err


def test_a_reward_array_is_reported_not_a_raw_exception_of_the_checker() -> None:
    # the AEC checker compared float(reward) with _cumulative_rewards while reward-finite-real was
    # passed over (searching for further broken properties): numpy's TypeError escaped
    pytest.importorskip("pettingzoo")
    from envcorpus.aec_envs import ArrayRewardTakeAway

    from spacealg.testing import EnvCheckError, check

    with pytest.raises(EnvCheckError) as caught:
        check(ArrayRewardTakeAway, max_examples=20, hygiene=False)
    assert caught.value.property == "reward-finite-real"


def test_a_vector_env_refusing_a_legal_action_in_a_changed_row_is_no_exception() -> None:
    # the changed-row replays (row-isolation) called step unguarded: the env's ValueError escaped
    from envcorpus.vector_envs import BatchedCorridors

    from spacealg.testing import EnvCheckError, check_vector_env

    class Refuses(BatchedCorridors):
        def step(self, actions):
            if (np.asarray(actions) == 0).any():
                raise ValueError("action 0 refused")
            return super().step(actions)

    with pytest.raises(EnvCheckError) as caught:
        check_vector_env(Refuses, max_examples=10)
    assert {e.property for e in caught.value.broken} == {"no-exception"}


# -- the rows of a vector env's batch ----------------------------------------------------------


def _has_empty_product(space) -> bool:
    parts = list(space.spaces.values() if isinstance(space, spaces.Dict) else space.spaces) if isinstance(
        space, (spaces.Dict, spaces.Tuple)) else None
    return parts is not None and (not parts or any(_has_empty_product(p) for p in parts))


@given(gymnasium_spaces(classes=("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Dict", "Tuple")),
       st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_row_i_of_a_stack_of_members_is_member_i_as_a_row(space, n, seed) -> None:
    # the vector kind reads rows through the joint space (Gymnasium's iterate over batch_space), never the
    # single space, whose iterate refuses a Discrete: a SyncVectorEnv of FrozenLakes raised a raw TypeError
    from spacealg import contains
    from spacealg.ops import joint_space
    from spacealg.testing.engine.driver import same
    from spacealg.testing.kinds.vector import as_row, rows_of, stack

    assume(not _has_empty_product(space))  # a batch of Tuple() holds no rows for Gymnasium's iterate to split
    space.seed(seed)
    members = [space.sample() for _ in range(n)]
    joint = joint_space(space, n)
    batch = stack(space, members)
    assert contains(batch, joint)
    rows = rows_of(batch, joint, space)
    assert len(rows) == n
    for row, member in zip(rows, members):
        assert contains(row, space)
        assert same(row, as_row(member, joint, space))


@given(spacealg_spaces(), st.integers(1, 3), st.data())
def test_row_i_of_a_stack_of_members_of_a_spacealg_space_is_member_i(space, n, data) -> None:
    # the same law where the single space is spacealg's: stack_items and unstack (the algebra's batch rows)
    from spacealg import contains
    from spacealg.ops import joint_space
    from spacealg.strategies import members
    from spacealg.testing.engine.driver import same
    from spacealg.testing.kinds.vector import as_row, rows_of, stack

    drawn = [data.draw(members(space)) for _ in range(n)]
    joint = joint_space(space, n)
    rows = rows_of(stack(space, drawn), joint, space)
    assert len(rows) == n
    for row, member in zip(rows, drawn):
        assert contains(row, space)
        assert same(row, as_row(member, joint, space))


@pytest.mark.parametrize("env_id", ["FrozenLake-v1", "Blackjack-v1"])
def test_a_sync_vector_env_of_discrete_observations_is_checked(env_id) -> None:
    # Discrete (FrozenLake) and Tuple-of-Discrete (Blackjack) rows: the sub-envs return ints, the batch int64s
    import functools

    import gymnasium
    from gymnasium.vector import SyncVectorEnv

    from spacealg.testing import check_vector_env

    report = check_vector_env(
        lambda: SyncVectorEnv([functools.partial(gymnasium.make, env_id) for _ in range(3)]), max_examples=10
    )
    assert {"rows-match-sub-envs", "sub-env-seeding", "batch-in-space"} <= set(report.properties)


# -- the long draw reaches a declared episode limit --------------------------------------------


@pytest.mark.parametrize(("max_steps", "beyond"), [(0, 0), (50, 0), (100, 0), (50, 1), (20, 30)])
def test_the_long_draw_reaches_a_declared_limit_at_or_beyond_max_steps(max_steps, beyond) -> None:
    # a limit equal to max_steps was reached by chance only: a never-truncating env survived
    from hypothesis import find

    from spacealg.testing.engine.driver import draw_length

    limit = max_steps + beyond

    @st.composite
    def lengths(draw):
        class Data:
            def draw(self, strategy, label=None):
                return draw(strategy)

        return draw_length(Data(), max_steps, limit)

    assert find(lengths(), lambda n: n == limit + 2) == limit + 2
    assert find(lengths(), lambda n: n == max_steps) == max_steps


# -- the one episode of the stepped kinds (engine/episode.py) and its plain-Python twin ----


def _driven(kind: str):
    """(the kind's Api, a factory of a sound env, draw(pick) in the kind's signature)."""
    import gymnasium

    from spacealg.testing.kinds import aec, parallel
    from spacealg.testing.kinds import gymnasium as single

    if kind == "gymnasium":
        return single.API, lambda: gymnasium.make("CartPole-v1"), lambda pick: lambda factors: pick(2)
    rps = pytest.importorskip("pettingzoo.classic.rps_v2")
    if kind == "parallel":
        return parallel.API, rps.parallel_env, lambda pick: lambda live, env, factors: {a: pick(3) for a in live}
    return aec.API, rps.env, lambda pick: lambda agent, env, factors: None if factors == aec.DEAD else pick(3)


@pytest.mark.parametrize("kind", ["gymnasium", "parallel", "aec"])
@given(seed=st.integers(0, 2**32 - 1), choices=st.lists(st.integers(0, 5), max_size=40))
def test_the_episode_takes_n_steps_replays_alike_and_its_plain_twin_takes_the_same_steps(kind, seed, choices):
    """Episode's laws: ``n`` steps (each end followed by a reset), the trace a function of the
    seed and the actions; and the snippet's episode (plain_episode of the same Api), given the
    actions the driver drew, resets and steps where the driver did (one trace entry each)."""
    import itertools

    from spacealg.testing.engine.driver import first_difference
    from spacealg.testing.engine.episode import plain_episode

    api, make, drawer = _driven(kind)

    def run():
        stream = itertools.cycle(choices or [0])
        draw, taken = drawer(lambda m: next(stream) % m), []

        def recording(*args):
            taken.append(draw(*args))
            return taken[-1]

        episode = api.episode(make(), seed, len(choices), recording)
        return episode, episode.run(), taken

    episode, trace, taken = run()
    _, again, _ = run()
    assert episode.steps == len(choices) == len(taken)
    assert first_difference(trace, again) is None
    assert sum(entry[0] == "reset" for entry in trace) == episode.episodes
    namespace = {"env": make(), "SEED": seed, "actions": taken, "np": np}
    exec("\n".join(plain_episode(api.plain)), namespace)
    assert len(namespace["episode"]()) == len(trace)


class _RaisesFrom(gymnasium.Wrapper):
    """An env whose step raises from its ``at``-th call on (None: never)."""

    def __init__(self, env, at):
        super().__init__(env)
        self.at, self.calls = at, 0

    def step(self, action):
        self.calls += 1
        if self.at is not None and self.calls >= self.at:
            raise RuntimeError(f"step call {self.calls}")
        return self.env.step(action)


@given(
    seed=st.integers(0, 2**32 - 1),
    choices=st.lists(st.integers(0, 1), max_size=30),
    at_a=st.one_of(st.none(), st.integers(1, 30)),
    both=st.booleans(),
)
def test_the_match_episode_steps_both_envs_n_times_until_both_raise(seed, choices, at_a, both):
    """The match kind on the one driver (its ``call`` hook steps the pair): ``n`` steps of
    both envs; where both raise at one step the run ends there (``Stop``), the steps before
    it counted; where only one raises, ``exceptions-match`` at that step."""
    import gymnasium

    from spacealg.testing.engine.errors import PropertyError
    from spacealg.testing.engine.resolve import resolve
    from spacealg.testing.kinds.match import API, Pair

    source = resolve("CartPole-v1")
    at_b = at_a if both else None
    pair = Pair(
        _RaisesFrom(gymnasium.make("CartPole-v1"), at_a), _RaisesFrom(gymnasium.make("CartPole-v1"), at_b),
        (source, source), 0.0, 0.0, True,
    )
    stream = iter(choices)
    episode = API.episode(pair, seed, len(choices), lambda factors: next(stream))
    if at_a is None or at_a > len(choices):
        assert episode.run() == []
        assert episode.steps == len(choices)
    elif both:
        assert episode.run() == []
        assert episode.steps == at_a - 1
    else:
        with pytest.raises(PropertyError) as raised:
            episode.run()
        assert (raised.value.property, raised.value.step, episode.steps) == ("exceptions-match", at_a, at_a - 1)
