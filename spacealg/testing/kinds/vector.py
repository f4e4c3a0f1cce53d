"""``check_vector_env``: property-based checking of a Gymnasium vector environment.

Hypothesis draws a reset seed ``s``, a number of steps and, each step, one action per
sub-environment from ``single_action_space``. The vector environment is reset with
``seed=s`` and stepped; beside it, a reference runs one single environment per row (sub-env
``i`` seeded ``s + i``, stepped with column ``i`` of the actions) and applies the declared
``metadata["autoreset_mode"]`` itself. Properties (:data:`VECTOR_PROPERTIES`):

- ``declared-spaces``: ``observation_space`` and ``action_space`` equal
  :func:`spacealg.joint_space` of the single spaces (hence Gymnasium's ``batch_space``);
- ``batch-in-space``: every batch of observations is in that joint space; rewards are a
  real array of shape ``(num_envs,)``, terminations and truncations bool arrays of that
  shape, infos a dict;
- ``sub-env-seeding``: after ``reset(seed=s)``, row ``i`` is sub-env ``i``'s
  ``reset(seed=s + i)`` — Gymnasium's convention for a batch of identical, independent
  envs, so checked only where the env is one (:func:`identical_sub_envs`): Gymnasium's
  ``SyncVectorEnv``/``AsyncVectorEnv``, an env checked against ``single=`` factories, or one
  that declares ``metadata["identical_sub_envs"] = True``; rows that are, say, the agents of
  one multi-agent env drawn from one generator owe it nothing;
- ``rows-differ`` (what every vector env owes): where ``reset(seed=s)`` depends on ``s``
  (another seed gives another batch), the rows of one reset are not all equal (they are not
  all seeded alike);
- ``autoreset``: around an episode end, rows follow the declared mode — next-step (the step
  after the end resets the row, ignoring its action, with reward 0 and both flags False),
  same-step (the ending step returns the reset observation and ``info["final_obs"]`` holds
  the final one) or disabled (the checker resets ended rows with
  ``reset(options={"reset_mask": ...})``);
- ``rows-match-sub-envs``: every other step, row ``i`` is what sub-env ``i`` returns;
- ``row-isolation``: changing one row's action never changes another row's results;
- ``sync-async-agree``: a second implementation (``compare``; for an id, the
  ``AsyncVectorEnv`` beside the ``SyncVectorEnv``) returns the same batches step for step;
- ``close-twice`` and ``render-modes``: the Gymnasium kind's probes
  (:func:`~spacealg.testing.engine.probes.api_probes`) on fresh copies (not for an instance
  given), a render being one frame per sub-env;
- ``no-exception``, ``reset-signature``, ``step-signature``, ``reset-determinism`` and
  ``step-determinism`` as for single environments (``no-exception`` also on the fresh
  copies the row follow-up steps with a changed row action, a member of the space too).

The reference needs the single environments: for an id they are ``gymnasium.make(id)``;
for a ``SyncVectorEnv``/``AsyncVectorEnv`` its ``env_fns``; otherwise pass ``single=`` (a
factory of sub-env 0's environment, or a list of one factory per row). Without them
``sub-env-seeding`` and ``autoreset`` are checked by reference-free laws (for a batch of
identical sub-envs, declared as above: row ``i`` of ``reset(seed=s)`` is row 0 of
``reset(seed=s + i)``; the declared mode's laws around an end) and ``rows-match-sub-envs`` is reported not checked.

The check is a kind (:func:`vector_kind`) run by the engine every checker shares
(:func:`spacealg.testing.engine.runner.check_kind`): the search, refinement and report, the row
actions drawn through :class:`~spacealg.testing.engine.runner.Draws`, the run and determinism replay
of each example; :class:`VectorEpisode` is the kind's episode (its replay only steps again)
and :func:`_follow_up` the follow-up that changes one row's action on fresh copies
(``row-isolation``; next-step ``autoreset`` ignoring the action).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from spacealg.strategies.members import members
from spacealg.testing.engine.driver import (
    DEFAULT_BUDGET,
    Budget,
    describe_exception,
    passed_over,
    same,
    snapshot,
    tick,
)
from spacealg.testing.engine.errors import EnvCheckError, PropertyError, literal, short
from spacealg.testing.engine.probes import api_probes, declared_render_mode
from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import (
    MAX_BROKEN,
    REPLAYED,
    STEPPED,
    CheckOptions,
    Declared,
    Draws,
    EnvCheckReport,
    EnvKind,
    Precondition,
    Ran,
    action_fallback,
    check_declared,
    check_kind,
    fail,
    options_of,
    replay_example,
)
from spacealg.testing.engine.snippets import factory, reproduction
from spacealg.testing.engine.values import is_member
from spacealg.testing.engine.verdicts import partition
from spacealg.testing.kinds.gymnasium import PROPERTIES

__all__ = ["VECTOR_PROPERTIES", "check_vector_env", "identical_sub_envs", "replay_vector"]

VECTOR_PROPERTIES: dict[str, str] = {
    "declared-spaces": "observation_space and action_space are joint_space of the single spaces (Gymnasium's "
    "batch_space)",
    "no-exception": PROPERTIES["no-exception"],
    "reset-signature": "reset returns (observations, infos)",
    "step-signature": "step returns (observations, rewards, terminations, truncations, infos)",
    "batch-in-space": "observations are in the joint observation space; rewards a real array and the flags bool "
    "arrays of shape (num_envs,); infos a dict",
    "sub-env-seeding": "reset(seed=s) seeds sub-env i with s + i (a batch of identical sub-envs: Gymnasium's "
    "Sync/AsyncVectorEnv, single=, or metadata['identical_sub_envs'])",
    "rows-differ": "where reset(seed=s) depends on s, the rows of one reset are not all equal",
    "autoreset": "rows follow the declared metadata['autoreset_mode'] (next-step, same-step or disabled) around "
    "an episode end",
    "rows-match-sub-envs": "row i of every batch is what sub-env i returns for column i of the actions",
    "row-isolation": "changing one row's action never changes another row's results",
    "sync-async-agree": "the synchronous and asynchronous implementations return the same batches step for step",
    "reset-determinism": PROPERTIES["reset-determinism"],
    "step-determinism": PROPERTIES["step-determinism"],
    "close-twice": PROPERTIES["close-twice"],
    "render-modes": "render_mode is None or one of metadata['render_modes'], and each declared render mode "
    "renders one frame per sub-env, each what the mode promises (an RGB uint8 image, a string, a list of them)",
}
"""The properties ``check_vector_env`` checks: name -> the law it states."""

DEFAULT_VECTOR_STEPS = 60
NUM_ENVS = 3


def _mode(env: Any) -> str:
    mode = (getattr(env, "metadata", None) or {}).get("autoreset_mode", "NextStep")
    value = str(getattr(mode, "value", mode)).replace("-", "").replace("_", "").lower()
    return {"nextstep": "next-step", "samestep": "same-step", "disabled": "disabled"}.get(value, "next-step")


@contextlib.contextmanager
def _opened(env: Any, single: Any, compare: Any, num_envs: int) -> Iterator[tuple[_Shared, Any, _Shared | None]]:
    """Inside, the sources of one check or replay (:func:`_sources`); on leaving, the vector
    environments they built are closed: this check's own, never another's (two checks in
    threads each close theirs)."""
    shared, alone, other = _sources(env, single, compare, num_envs)
    try:
        yield shared, alone, other
    finally:
        for built in (shared, other):
            if built is not None:
                built.close()


def _sources(env: Any, single: Any, compare: Any, num_envs: int) -> tuple[_Shared, Any, _Shared | None]:
    """(the vector env, single factories or None, the implementation to compare with)."""
    if isinstance(env, str) and ":" not in env:
        import gymnasium

        def build(mode: str = "sync", **keywords: Any) -> Any:
            return gymnasium.make_vec(env, num_envs=num_envs, vectorization_mode=mode, **keywords)

        construction = f"env = gymnasium.make_vec({env!r}, num_envs={num_envs}, vectorization_mode='sync')"
        source = EnvSource(build, env, construction, ("import gymnasium",), build=build)
        other = EnvSource(lambda: build("async"), f"{env} (async)", construction.replace("'sync'", "'async'"),
                          owned=False)
        alone = single or (lambda: gymnasium.make(env))
        return _Shared(source), alone, _Shared(other) if compare is not False else None
    from spacealg.testing.engine.resolve import resolve

    return _Shared(resolve(env)), single, _Shared(resolve(compare)) if compare not in (None, False) else None


class _Shared:
    """Build a vector environment once per check (they are costly: worker processes) and
    hand the same instance to every example; closed at the end of the check (:func:`_opened`)."""

    def __init__(self, source: EnvSource) -> None:
        self.inner, self.instance = source, None
        self.source = EnvSource(self.make, source.name, source.construction, source.imports, owned=False)

    def make(self) -> Any:
        if self.instance is None:
            self.instance = self.inner.make()
        return self.instance

    def close(self) -> None:
        if self.instance is not None:
            with contextlib.suppress(Exception):
                self.instance.close()
            self.instance = None


def _built(shared: _Shared) -> EnvSource | None:
    """The source of fresh copies for the probes and the changed-row laws
    (:func:`_changed_row`): the check's own, where it builds the env (an id or a factory;
    None: an instance given)."""
    return shared.inner if shared.inner.owned else None


def _single_factories(env: Any, single: Any, n: int) -> list[Callable[[], Any]] | None:
    if single is not None:
        return list(single) if isinstance(single, Sequence) else [single] * n
    fns = getattr(env, "env_fns", None)
    if fns is not None and len(fns) == n:
        return list(fns)
    return None


def single_space(env: Any, kind: str) -> Any:
    """``single_{kind}_space``, or (EnvPool's convention: no single space, ``{kind}_space``
    is the single one) ``{kind}_space``."""
    single = getattr(env, f"single_{kind}_space", None)
    return single if single is not None else getattr(env, f"{kind}_space")


def joint_of(env: Any, kind: str) -> Any:
    """The batched space Gymnasium's rule asks for: joint_space of the single space."""
    from spacealg.ops.joint import joint_space

    return joint_space(single_space(env, kind), env.num_envs)


def _check_batch(env: Any, result: Any, step: int | None, kind: str, joint: Any) -> tuple[Any, ...]:
    """``result`` of ``reset``/``step``, checked: the signature, the batch in ``joint``
    (the joint observation space), the rewards and flags arrays, the infos dict."""
    n = env.num_envs
    size = 2 if kind == "reset" else 5
    if not (isinstance(result, tuple) and len(result) == size):
        raise PropertyError(f"{kind}-signature", f"{kind} returned {short(result)}", step)
    obs = result[0]
    if not is_member(obs, joint):
        raise PropertyError("batch-in-space", f"observations {short(obs)} are not in {joint!r}", step)
    if kind == "step":
        _, rewards, terminations, truncations, _ = result
        for name, value, kinds in (("rewards", rewards, "iuf"), ("terminations", terminations, "b"),
                                   ("truncations", truncations, "b")):
            if not (isinstance(value, np.ndarray) and value.shape == (n,) and value.dtype.kind in kinds):
                array = isinstance(value, np.ndarray)
                what = f"array of shape {value.shape} and dtype {value.dtype}" if array else type(value).__name__
                expected = f"shape ({n},) and a {'real' if kinds != 'b' else 'bool'} dtype"
                raise PropertyError("batch-in-space", f"{name} is {what}; expected {expected}", step)
        if not np.isfinite(rewards).all():
            raise PropertyError("batch-in-space", f"rewards {rewards.tolist()} are not all finite", step)
    if not isinstance(result[-1], dict):
        raise PropertyError("batch-in-space", f"infos is a {type(result[-1]).__name__}, not a dict", step)
    return result


def rows_of(batch: Any, joint: Any, single: Any) -> list[Any]:
    """The rows of ``batch``, a member of ``joint`` (``joint_space(single, n)``): Gymnasium's
    ``iterate`` over the batched space where it is a Gymnasium space (``batch_space``'s),
    else the algebra's ``unstack`` of a stack of members of ``single``. Law: row ``i`` of a
    stack of ``n`` members of ``single`` is its member ``i``."""
    import gymnasium

    if isinstance(joint, gymnasium.spaces.Space):
        from gymnasium.vector.utils import iterate

        return list(iterate(joint, batch))
    from spacealg.spaces.sequence import unstack

    return unstack(batch, single)


def stack(single: Any, members: list[Any]) -> Any:
    """The batch of ``members`` of ``single``, as a vector env stacks them: Gymnasium's
    ``concatenate`` for a Gymnasium space, the algebra's ``stack_items`` for a spacealg one
    (the inverse of :func:`rows_of`)."""
    import gymnasium

    if isinstance(single, gymnasium.spaces.Space):
        from gymnasium.vector.utils import concatenate, create_empty_array

        return concatenate(single, members, create_empty_array(single, len(members)))  # type: ignore[arg-type]
    from spacealg.spaces.sequence import stack_items

    return stack_items(members, single)


def as_row(value: Any, joint: Any, single: Any) -> Any:
    """``value`` (a sub-env's observation) as a row of a batch holds it: stacked alone, then
    read back (a Discrete observation ``0`` is the ``np.int64(0)`` of a MultiDiscrete batch);
    ``value`` itself where it cannot be stacked (it is not a member: compared as it is)."""
    try:
        return rows_of(stack(single, [value]), joint, single)[0]
    except Exception:
        return value


class Reference:
    """The single environments of the rows, with the declared autoreset applied."""

    def __init__(self, factories: list[Callable[[], Any]], mode: str) -> None:
        self.envs = [f() for f in factories]
        self.mode = mode
        self.ended = [False] * len(self.envs)

    def close(self) -> None:
        for env in self.envs:
            with contextlib.suppress(Exception):
                env.close()

    def reset(self, seed: int) -> list[Any]:
        self.ended = [False] * len(self.envs)
        return [env.reset(seed=seed + i)[0] for i, env in enumerate(self.envs)]

    def step(self, actions: list[Any]) -> list[tuple[Any, float, bool, bool, Any, bool]]:
        """Per row: (obs, reward, terminated, truncated, final obs or None, autoreset row)."""
        rows = []
        for i, (env, action) in enumerate(zip(self.envs, actions)):
            if self.mode == "next-step" and self.ended[i]:
                obs, _ = env.reset()
                rows.append((obs, 0.0, False, False, None, True))
                self.ended[i] = False
                continue
            obs, reward, terminated, truncated, _ = env.step(action)
            final = None
            if (terminated or truncated) and self.mode == "same-step":
                final, (obs, _) = obs, env.reset()
            self.ended[i] = bool(terminated or truncated)
            rows.append((obs, float(reward), bool(terminated), bool(truncated), final, False))
        return rows

    def reset_rows(self, mask: np.ndarray) -> list[Any | None]:
        out: list[Any | None] = []
        for i, env in enumerate(self.envs):
            out.append(env.reset()[0] if mask[i] else None)
            if mask[i]:
                self.ended[i] = False
        return out


class VectorEpisode:
    """One run: reset(seed), ``n`` steps of drawn row actions, compared with the reference
    and with the other implementation.

    A law already found broken (:func:`~spacealg.testing.engine.driver.passed_over`) does not stop
    the run: the episode goes on so that the other laws are checked (a reference whose rows
    have diverged is no longer compared with). ``joint``: the joint observation space the
    batches must be in (:func:`joint_of`, built once per check by :func:`vector_kind`)."""

    def __init__(self, env: Any, seed: int, n: int, draw: Callable[..., Any], *, joint: Any, factories: Any = None,
                 other: Any = None, mode: str = "next-step", free: bool = False, identical: bool = False,
                 owed: bool = False) -> None:
        self.env, self.seed, self.n, self.draw = env, seed, n, draw
        self.factories, self.other, self.mode = factories, other, mode
        self.trace: list[Any] = []
        self.batches = 0  # batch steps taken
        self.episodes = 1
        self.free = free  # check the reference-free laws (no single environments)
        self.identical = identical  # a batch of identical sub-envs: the reference-free sub-env-seeding applies
        self.owed = owed  # check what every vector env owes (rows-differ): the first run, not its replay
        self.reset_steps: list[tuple[int, int]] = []  # (step, row) of next-step reset steps seen
        self.ended = np.zeros(env.num_envs, dtype=bool)
        self.ref: Reference | None = None
        self.single = single_space(env, "observation")
        self.joint = joint

    def _call(self, env: Any, what: str, *args: Any, **kwargs: Any) -> Any:
        """``env.what(*args, **kwargs)``; ``no-exception`` where it raises, at the latest
        batch step (a step counts from its call; None: at the first reset)."""
        try:
            return getattr(env, what)(*args, **kwargs)
        except Exception as error:
            detail = f"{what}({', '.join(map(literal, args))}) raised {describe_exception(error)}"
            raise PropertyError("no-exception", detail, self.batches or None) from error

    def _broken(self, prop: str, detail: str, step: int | None = None) -> None:
        """Raise ``prop``'s violation, unless it is passed over: then the run goes on."""
        if not passed_over(prop):
            raise PropertyError(prop, detail, step)

    def _diverged(self, prop: str, detail: str, step: int | None = None) -> None:
        """A row differs from its sub-env: broken, or (passed over) no more comparisons."""
        self._broken(prop, detail, step)
        if self.ref is not None:
            self.ref.close()
        self.ref = None

    def _row(self, batch: Any, i: int) -> Any:
        return rows_of(batch, self.joint, self.single)[i]

    def _as_row(self, value: Any) -> Any:
        return as_row(value, self.joint, self.single)

    @property
    def steps(self) -> int:
        """The steps taken, counted per row (as :func:`~spacealg.testing.engine.runner.run_example` adds them up)."""
        return self.batches * self.env.num_envs

    def run(self) -> list[Any]:
        env = self.env
        self.ref = Reference(self.factories, self.mode) if self.factories is not None else None
        try:
            obs, _ = _check_batch(env, self._call(env, "reset", seed=self.seed), None, "reset", self.joint)
            self.trace.append(("reset", snapshot(obs)))
            if self.other is not None:
                other_obs = self._call(self.other, "reset", seed=self.seed)[0]
                if not same(obs, other_obs):
                    detail = (f"reset(seed={self.seed}) returned {short(obs)} and, from "
                              f"the other implementation, {short(other_obs)}")
                    self._broken("sync-async-agree", detail)
            if self.ref is not None:
                for i, expected in enumerate(map(self._as_row, self.ref.reset(self.seed))):
                    if self.ref is not None and not same(self._row(obs, i), expected):
                        detail = (f"after reset(seed={self.seed}), row {i} is {short(self._row(obs, i))} but "
                                  f"sub-env {i} reset with seed {self.seed + i} gives {short(expected)}")
                        self._diverged("sub-env-seeding", detail)
            elif self.free and self.identical:
                self._seeding(obs)
            if self.owed:
                self._rows_differ(obs)
            for k in range(1, self.n + 1):
                tick()  # past the check's deadline the episode stops here
                self._step(k)
        finally:
            if self.ref is not None:
                self.ref.close()
        return self.trace

    def _seeding(self, obs: Any) -> None:
        """Reference-free ``sub-env-seeding`` (a batch of identical sub-envs): row ``i`` of
        ``reset(seed=s)`` is row 0 of ``reset(seed=s + i)``; then reset with ``s`` again."""
        env = self.env
        for i in range(1, env.num_envs):
            again = self._call(env, "reset", seed=self.seed + i)[0]
            if not same(self._row(obs, i), self._row(again, 0)):
                detail = (f"after reset(seed={self.seed}), row {i} is {short(self._row(obs, i))}, but row 0 of "
                          f"reset(seed={self.seed + i}) is {short(self._row(again, 0))}: sub-env {i} is not seeded "
                          f"with seed + {i}")
                self._broken("sub-env-seeding", detail)
        self._call(env, "reset", seed=self.seed)

    def _rows_differ(self, obs: Any) -> None:
        """``rows-differ``: where the rows of ``reset(seed=s)`` are all equal, ``reset`` with
        another seed gives the same batch (the resets do not depend on the seed); then reset
        with ``s`` again."""
        env, single = self.env, self.single
        rows = rows_of(obs, self.joint, single)
        if len(rows) < 2 or not all(same(rows[0], row) for row in rows[1:]):
            return
        other_seed = self.seed ^ 1
        other = self._call(env, "reset", seed=other_seed)[0]
        self._call(env, "reset", seed=self.seed)
        if not same(obs, other):
            detail = (f"after reset(seed={self.seed}) every row is {short(rows[0])}, while reset(seed={other_seed}) "
                      f"gives {short(other)}: the resets depend on the seed, but every sub-env was seeded alike")
            self._broken("rows-differ", detail)

    def _autoreset(self, k: int, rewards: Any, terms: Any, truncs: Any, infos: Any, ended: Any) -> None:
        """Reference-free ``autoreset``: next-step: the step after a row's end is a reset step
        (reward 0, both flags False; that it ignores the row's action is checked on fresh
        copies by the kind's follow-up, :func:`_follow_up`); same-step: an ending row's final
        observation is in ``infos["final_obs"]`` (a member of the single space)."""
        if self.mode == "next-step":
            for i in map(int, np.flatnonzero(self.ended)):
                self.reset_steps.append((k, i))
                got = (float(rewards[i]), bool(terms[i]), bool(truncs[i]))
                if got != (0.0, False, False):
                    detail = (f"step {k}, row {i}: the episode of row {i} ended at step {k - 1}, so with next-step "
                              f"autoreset step {k} resets it (reward 0, terminated and truncated False); got (reward, "
                              f"terminated, truncated) = {short(got)}: the row was not reset on the next step")
                    self._broken("autoreset", detail, k)
        elif self.mode == "same-step":
            for i in map(int, np.flatnonzero(ended)):
                finals = infos.get("final_obs") if isinstance(infos, dict) else None
                final = None if finals is None else finals[i]
                if final is None or not is_member(final, self.single):
                    detail = (f"step {k}, row {i}: the episode ended and same-step autoreset is declared, but "
                              f"info['final_obs'][{i}] is {short(final)}, not a final observation in {self.single!r}")
                    self._broken("autoreset", detail, k)

    def _step(self, k: int) -> None:
        env = self.env
        rows = self.draw(env.num_envs)
        actions = stack(single_space(env, "action"), rows)
        self.batches += 1  # before the call: an exception is reported at this step
        obs, rewards, terms, truncs, infos = _check_batch(env, self._call(env, "step", actions), k, "step", self.joint)
        self.trace.append(("step", snapshot(obs), snapshot(rewards), snapshot(terms), snapshot(truncs)))
        if self.other is not None:
            other = self._call(self.other, "step", actions)
            for name, a, b in zip(
                ("observations", "rewards", "terminations", "truncations"), (obs, rewards, terms, truncs), other
            ):
                if not same(a, b):
                    detail = f"step {k}: {name} {short(a)} but the other implementation returned {short(b)}"
                    self._broken("sync-async-agree", detail, k)
        if self.ref is not None:
            self._compare(k, rows, obs, rewards, terms, truncs, infos)
        ended = np.logical_or(terms, truncs)
        if self.free:
            self._autoreset(k, rewards, terms, truncs, infos, ended)
        self.ended = ended
        if ended.any():
            self.episodes += int(ended.sum())
        if self.mode == "disabled" and ended.any():
            self._reset_ended(k, obs, ended)

    def _compare(self, k: int, rows: list[Any], obs: Any, rewards: Any, terms: Any, truncs: Any, infos: Any) -> None:
        """Each row against its sub-env (``rows-match-sub-envs``; ``autoreset`` at an end)."""
        for i, (e_obs, e_rew, e_term, e_trunc, final, reset_row) in enumerate(self.ref.step(rows)):  # type: ignore[union-attr]
            got = (self._row(obs, i), float(rewards[i]), bool(terms[i]), bool(truncs[i]))
            want = (self._as_row(e_obs), e_rew, e_term, e_trunc)
            if not all(same(a, b) for a, b in zip(got, want)):
                boundary = reset_row or final is not None
                should = "be reset" if reset_row else "return the reset observation"
                said = f" ({self.mode} autoreset: the row should {should})" if boundary else ""
                detail = (f"step {k}, row {i}: (observation, reward, terminated, truncated) is "
                          f"{short(got)}; sub-env {i} gives {short(want)}{said}")
                self._diverged("autoreset" if boundary else "rows-match-sub-envs", detail, k)
                return
            finals = infos.get("final_obs")
            if final is not None and (finals is None or not same(finals[i], final)):
                detail = (f"step {k}, row {i}: same-step autoreset but info['final_obs'] "
                          f"is {short(None if finals is None else finals[i])}, not the final observation "
                          f"{short(final)}")
                self._broken("autoreset", detail, k)

    def _reset_ended(self, k: int, before: Any, ended: Any) -> None:
        """Disabled autoreset: the checker resets the ended rows with a ``reset_mask``; the
        other rows keep their observations, the reset ones are their sub-env's reset."""
        said = f"after reset(options={{'reset_mask': {ended.tolist()}}}) at step {k}"
        reset = self._call(self.env, "reset", options={"reset_mask": ended})
        obs, _ = _check_batch(self.env, reset, k, "reset", self.joint)
        for kept in map(int, np.flatnonzero(~ended)):
            if not same(self._row(obs, kept), self._row(before, kept)):
                self._broken("autoreset", f"{said}, row {kept}, which was not to be reset, changed its observation", k)
        if self.other is not None:
            self._call(self.other, "reset", options={"reset_mask": ended})
        if self.ref is not None:
            for i, expected in enumerate(self.ref.reset_rows(ended)):
                if expected is not None and not same(self._row(obs, i), self._as_row(expected)):
                    self._diverged("autoreset", f"{said}, row {i} is not sub-env {i}'s reset observation", k)
                    return


def _replayed(
    make: Callable[[], Any], seed: int, taken: list[list[Any]], row: int = 0, alternatives: dict[int, Any] | None = None
) -> list[tuple[Any, ...]]:
    """A fresh copy reset with ``seed`` and stepped with the actions ``taken``, ``row``'s
    action at step ``k`` replaced by ``alternatives[k]``: its per-step (observations,
    rewards, terminations, truncations). ``no-exception`` where the copy raises (a changed
    action is a member of the action space too), carrying the changes up to that step."""
    changes = alternatives or {}
    env = make()
    k = 0
    try:
        env.reset(seed=seed)
        space = single_space(env, "action")
        out = []
        for k, rows in enumerate(taken, 1):
            rows = [changes[k] if i == row and k in changes else a for i, a in enumerate(rows)]
            out.append(tuple(snapshot(x) for x in env.step(stack(space, rows))[:4]))
        return out
    except Exception as error:
        what = f"step({literal(rows)})" if k else f"reset(seed={seed})"
        raised = PropertyError("no-exception", f"{what} raised {describe_exception(error)}", k or None)
        if any(j <= k for j in changes):
            raised.changed = (row, {j: a for j, a in changes.items() if j <= k})
        raise raised from error
    finally:
        with contextlib.suppress(Exception):
            env.close()


def _ended_before(run: list[tuple[Any, ...]], k: int, row: int) -> bool:
    """Whether ``row``'s episode ended at step ``k - 1`` of ``run`` (:func:`_replayed`'s steps)."""
    return k >= 2 and bool(run[k - 2][2][row] | run[k - 2][3][row])


def _changed_row(
    fresh: Callable[[], Any],
    vec: Any,
    seed: int,
    taken: list[list[Any]],
    row: int,
    changes: dict[int, Any],
    base: list[tuple[Any, ...]] | None = None,
) -> None:
    """The laws of a changed row, on fresh copies reset with ``seed`` and stepped with
    ``taken``, one of them with ``row``'s action at step ``k`` replaced by ``changes[k]``
    (each copy compared with a copy of its own, so that an env that ignores reset seeds, as
    EnvPool does, is judged on what its copies do alike; ``base``: the unchanged run, if
    already made). Changes only at steps that follow the row's end under next-step
    autoreset: ``autoreset`` (those steps reset the row and ignore its action, so the row's
    observation stays). Otherwise ``row-isolation`` (every other row's results stay). The
    PropertyError carries ``changed = (row, changes)`` for its replay (:func:`replay_vector`)."""
    base = base if base is not None else _replayed(fresh, seed, taken)
    moved = _replayed(fresh, seed, taken, row, changes)
    single, joint = single_space(vec, "observation"), joint_of(vec, "observation")

    def row_of(batch: Any, i: int) -> Any:
        return rows_of(batch, joint, single)[i]

    if _mode(vec) == "next-step" and all(_ended_before(base, k, row) for k in changes):
        for k in sorted(changes):
            kept, got = row_of(base[k - 1][0], row), row_of(moved[k - 1][0], row)
            if not same(kept, got):
                error = PropertyError(
                    "autoreset",
                    f"step {k}, row {row}: the row's episode ended at step {k - 1}, so with next-step autoreset "
                    f"this step resets it and ignores its action, but changing the action to {literal(changes[k])} "
                    f"changed the row's observation from {short(kept)} to {short(got)}",
                    k,
                )
                error.changed = (row, {k: changes[k]})
                raise error
        return
    for k, (a, b) in enumerate(zip(base, moved), 1):
        for i in (i for i in range(vec.num_envs) if i != row):
            row_a, row_b = ((row_of(x[0], i), x[1][i], x[2][i], x[3][i]) for x in (a, b))
            if not all(same(x, y) for x, y in zip(row_a, row_b)):
                error = PropertyError(
                    "row-isolation",
                    f"changing row {row}'s action at step {k} to {literal(changes[k])} changed "
                    f"row {i}: {short(row_a)} became {short(row_b)}",
                    k,
                )
                error.changed = (row, {j: a for j, a in changes.items() if j <= k})
                raise error


def _follow_up(vec: Any, fresh: Callable[[], Any] | None, mode: str, actions: Any) -> Callable[[Ran], None]:
    """The vector kind's :attr:`~spacealg.testing.engine.runner.EnvKind.after`: the laws of a
    changed row (:func:`_changed_row`), the row and its other actions drawn.

    ``row-isolation``: with one row's action changed over the first steps, every other row
    returns the same; looked for first where a row did not match its sub-env (a leak between
    rows is the more precise diagnosis). ``autoreset`` (next-step, without single envs): the
    step after a row's end resets it and ignores its action, so changing that action leaves
    the row's observation."""
    from hypothesis import strategies as st

    def other_than(data: Any, action: Any) -> Any:
        """An action different from ``action`` where the space has one: drawn, or (when the
        draw equals it, as shrunk draws do) sampled from a fixed generator."""
        candidate = data.draw(actions())
        sampler = action_fallback(single_space(vec, "action"), 0)
        for _ in range(16):
            if not same(candidate, action):
                return candidate
            candidate = sampler(None)
        return action

    def isolated(ran: Ran, row: int, steps: int) -> None:
        taken = ran.taken[:steps]
        alternatives = {k: other_than(ran.data, rows[row]) for k, rows in enumerate(taken, 1)}
        _changed_row(fresh, vec, ran.seed, taken, row, alternatives)  # type: ignore[arg-type]

    def ignored(ran: Ran) -> None:
        k, row = ran.episode.reset_steps[0]  # the first reset step the episode saw: row's end was at k - 1
        base = _replayed(fresh, ran.seed, ran.taken[:k])  # type: ignore[arg-type]
        if _ended_before(base, k, row):  # a fresh copy ends there too
            alternative = other_than(ran.data, ran.taken[k - 1][row])
            _changed_row(fresh, vec, ran.seed, ran.taken[:k], row, {k: alternative}, base)  # type: ignore[arg-type]

    def after(ran: Ran) -> None:
        if fresh is None:
            return
        checks_rows = mode != "disabled" and not passed_over("row-isolation")
        if ran.violation is not None:
            if ran.violation.property == "rows-match-sub-envs" and checks_rows:
                for row in range(vec.num_envs):
                    isolated(ran, row, len(ran.taken))
            return
        if ran.episode.reset_steps and not passed_over("autoreset"):
            ignored(ran)
        if ran.taken and checks_rows:
            isolated(ran, ran.data.draw(st.integers(0, vec.num_envs - 1), label="row"), 5)

    return after


def _probes(vec: Any, built: EnvSource | None) -> Callable[[EnvSource, Budget | None], list[Any]]:
    """The vector kind's one-off probes: ``declared-spaces``, the declared render mode, then
    ``close-twice`` and ``render-modes`` as the Gymnasium kind's
    (:func:`~spacealg.testing.engine.probes.api_probes`), on fresh copies from ``built``
    (None: the instance given, which they leave to its caller and report not checked)."""

    def run(source: EnvSource, clock: Budget | None) -> list[Any]:
        warned = declared_spaces(vec)
        declared_render_mode(vec, warned)
        try:
            sample = action_fallback(single_space(vec, "action"), 0)
        except Exception:  # spaces that cannot be read: declared-spaces says so
            return warned

        def act(env: Any) -> None:
            env.step(stack(single_space(env, "action"), [sample(None) for _ in range(env.num_envs)]))

        def start_and_act(env: Any) -> None:
            env.reset(seed=0)
            act(env)

        return api_probes(built or source, warned, clock, act, start_and_act, batched=True)

    return run


def vector_kind(
    vec: Any,
    factories: list[Callable[[], Any]] | None,
    other: Any,
    fresh: Callable[[], Any] | None,
    built: EnvSource | None = None,
) -> EnvKind:
    """The :class:`~spacealg.testing.engine.runner.EnvKind` of a check of ``vec``: its episodes
    compare with the single ``factories`` (None: the reference-free laws) and the ``other``
    implementation; the replay only steps again; ``fresh`` builds copies for the follow-up
    (:func:`_follow_up`; None: an instance, whose row laws are not checked); ``built``
    builds the probes' fresh copies (:func:`_probes`; None: an instance)."""
    mode = _mode(vec)
    identical = factories is not None or identical_sub_envs(vec)
    actions = functools.cache(lambda: members(single_space(vec, "action")))
    joint = functools.cache(lambda: joint_of(vec, "observation"))  # once per check: ~5 % of a corpus check's time

    def declared(env: Any) -> Declared:
        for what in ("action", "observation"):
            try:
                space = single_space(vec, what)
            except Exception as error:
                detail = f"cannot read the spaces: {describe_exception(error)}"
                raise PropertyError("declared-spaces", detail) from error
            check_declared(space, f"single_{what}_space")
        try:
            actions().validate()
        except Exception as error:
            raise PropertyError("declared-spaces", f"cannot read the spaces: {describe_exception(error)}") from error

        def draw(draws: Draws, count: int) -> list[Any]:
            with draws.data.span():  # a step's rows as one span: ActionLeakBatch's check 13.8 -> 12.2 s
                return [draws.action(None, None, lambda: single_space(vec, "action"), actions) for _ in range(count)]

        return draw, None

    def episode(env: Any, seed: int, n: int, draw: Callable[..., Any], masks: bool = False) -> VectorEpisode:
        return VectorEpisode(
            env, seed, n, draw, factories=factories, other=other, mode=mode, free=factories is None, joint=joint(),
            identical=identical, owed=True,
        )

    def replay(env: Any, seed: int, n: int, draw: Callable[..., Any], masks: bool = False) -> VectorEpisode:
        return VectorEpisode(env, seed, n, draw, mode=mode, joint=joint())

    return dataclasses.replace(
        VECTOR,
        episode=episode,
        declared=declared,
        what="(observations, rewards, terminations, truncations)",
        probes=_probes(vec, built),
        unchecked=lambda env: _not_checked(other is not None, factories is not None, fresh is not None, identical),
        replay=replay,
        after=_follow_up(vec, fresh, mode, actions),
    )


def check_vector_env(
    env: Any,
    *,
    single: Any = None,
    compare: Any = None,
    num_envs: int = NUM_ENVS,
    max_examples: int = 30,
    max_steps: int = DEFAULT_VECTOR_STEPS,
    determinism: bool = True,
    random_seed: int | None = 0,
    budget: float | None = DEFAULT_BUDGET,
    database: Any = None,
    max_broken: int = MAX_BROKEN,
    **_: Any,
) -> EnvCheckReport:
    """Check a Gymnasium vector environment (see the module docstring). ``env``: a
    registered id (then ``gymnasium.make_vec(id, num_envs, "sync")``, compared with the
    ``"async"`` one unless ``compare=False``), a vector environment or a factory of one;
    ``single``: the single environments' factory (or one per row) when ``env`` has no
    ``env_fns``; ``compare``: another implementation to agree with step for step. Other
    options as :func:`~spacealg.testing.check_env` (``max_steps`` counts batch steps)."""
    options: CheckOptions = {"max_examples": max_examples, "max_steps": max_steps, "determinism": determinism,
                             "random_seed": random_seed, "budget": budget, "database": database, "masks": False,
                             "max_broken": max_broken}
    options_of(options)  # bad options are refused before anything is built
    with _opened(env, single, compare, num_envs) as (shared, single, other):
        built = _built(shared)
        vec = shared.source.make()
        factories = _single_factories(vec, single, vec.num_envs)
        fresh = built.make if built is not None else None
        kind = vector_kind(vec, factories, other.make() if other is not None else None, fresh, built)
        try:
            return check_kind(kind, shared.source, options)
        except EnvCheckError as error:
            if other is not None:  # the snippets replay against it (``compare=``)
                for broken in error.broken:
                    broken.compared_with = other.source.construction
                    broken.imports = (*broken.imports, *(i for i in other.source.imports if i not in broken.imports))
            raise


def replay_vector(
    env: Any,
    seed: int | None,
    actions: Sequence[Sequence[Any]],
    *,
    single: Any = None,
    compare: Any = None,
    row: int | None = None,
    changes: Mapping[int, Any] | None = None,
    determinism: bool = True,
) -> None:
    """Replay one example of :func:`check_vector_env` (an EnvCheckError's ``seed``,
    ``actions`` — one list of row actions per step — and ``changed``): raises the
    EnvCheckError of the first property that breaks, None if none does (say, after a fix).
    ``env``, ``single`` and ``compare`` as :func:`check_vector_env`'s; a registered id is made
    with as many sub-envs as the actions have rows (the check's ``num_envs``).

    ``seed=None`` (a failure of the declaration, which reports no seed): the declared
    spaces again. Without ``row``: the episode, compared with the single environments (else the
    reference-free laws) and with ``compare``, then its replay on the same instance
    (``step-determinism``; not with ``determinism=False``). With ``row`` and ``changes``
    (step -> that row's action): the laws of a changed row on fresh copies (``autoreset``
    where every change follows the row's end under next-step autoreset, else
    ``row-isolation``). Laws: a failure of the check replays to the same property while the
    bug is there; nothing is searched, so a replay costs one example."""
    taken = [list(rows) for rows in actions]
    _check_replayed(taken, row, changes)
    with _opened(env, single, compare, len(taken[0]) if taken else NUM_ENVS) as (shared, single, other):
        vec = shared.source.make()
        if row is not None and seed is not None:
            built = _built(shared)
            if built is None:
                raise ValueError("env must be a factory or an id to replay a changed row: it needs two fresh copies")
            try:
                _changed_row(built.make, vec, seed, taken, row, dict(changes or {}))
            except PropertyError as violation:
                violation.seed, violation.actions = seed, taken[: violation.step or 0]
                raise fail(violation, shared.source, True, 1, VECTOR) from None
            return
        kind = vector_kind(
            vec, _single_factories(vec, single, vec.num_envs), other.make() if other else None, None, _built(shared)
        )
        if seed is None:  # the declaration, then the one-off probes
            try:
                kind.declared(vec)
                _, _, broken = partition(kind.probes(shared.source, None) if kind.probes is not None else [])
                if broken:
                    raise broken[0]
            except PropertyError as violation:
                raise fail(violation, shared.source, True, 1, VECTOR) from None
            return
        replay_example(
            shared.source, kind.episode, seed, taken, determinism=determinism, kind=VECTOR, replay=kind.replay
        )


def _check_replayed(taken: list[list[Any]], row: int | None, changes: Mapping[int, Any] | None) -> None:
    """A ValueError naming the argument of :func:`replay_vector` that is not what it takes."""
    widths = {len(rows) for rows in taken}
    if len(widths) > 1:
        raise ValueError(f"actions must give each step the same number of rows, got {sorted(widths)}")
    if row is None and changes is not None:
        raise ValueError("changes needs row: the row whose actions change")
    if row is None:
        return
    if not isinstance(row, (int, np.integer)) or isinstance(row, bool) or not 0 <= row < max(widths, default=0):
        raise ValueError(f"row must be the index of a row of the actions, got {row!r}")
    if (
        not isinstance(changes, Mapping)
        or not changes
        or not all(isinstance(k, (int, np.integer)) and 1 <= k <= len(taken) for k in changes)
    ):
        raise ValueError(f"changes must map steps 1..{len(taken)} to the row's actions, got {changes!r}")


def identical_sub_envs(vec: Any) -> bool:
    """Whether ``vec`` is a batch of identical, independent sub-envs, which Gymnasium's
    convention seeds with ``seed + i`` (``sub-env-seeding``): Gymnasium's ``SyncVectorEnv``
    or ``AsyncVectorEnv`` (through wrappers), or an env that declares
    ``metadata["identical_sub_envs"] = True``."""
    from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

    try:
        if isinstance(getattr(vec, "unwrapped", vec), (SyncVectorEnv, AsyncVectorEnv)):
            return True
        return (getattr(vec, "metadata", None) or {}).get("identical_sub_envs") is True
    except Exception:
        return False


def _not_checked(other: bool, factories: bool, fresh: bool, identical: bool = True) -> dict[str, str]:
    why: dict[str, str] = {}
    if not identical:
        why["sub-env-seeding"] = (
            "the rows are not declared a batch of identical sub-envs (a SyncVectorEnv/AsyncVectorEnv, single=, or "
            "metadata['identical_sub_envs'] = True), so row i owes no seed + i"
        )
    if not other:
        why["sync-async-agree"] = "no second implementation to compare with (compare=, or a registered id)"
    if not factories:
        why["rows-match-sub-envs"] = (
            "no single environments to compare rows with (pass single=, or a SyncVectorEnv/AsyncVectorEnv)"
        )
    if not fresh:
        why["row-isolation"] = "the vector environment was given as an instance: two fresh copies are needed"
    return why


def declared_spaces(vec: Any) -> list[Any]:
    """The ``declared-spaces`` finding (as a probe's): ``observation_space`` and
    ``action_space`` are joint_space of the single spaces. EnvPool's convention (no single
    spaces, ``observation_space`` the single one) breaks it; the other properties are
    checked all the same, against the single spaces."""
    found: list[Any] = []
    for kind in ("observation", "action"):
        try:
            declared = getattr(vec, f"{kind}_space")
            expected = joint_of(vec, kind)
        except Exception as error:
            detail = f"cannot read the {kind} spaces: {describe_exception(error)}"
            found.append(PropertyError("declared-spaces", detail))
            continue
        if declared != expected:
            has_single = getattr(vec, f"single_{kind}_space", None) is not None
            said = f"joint_space of single_{kind}_space ({single_space(vec, kind)!r})" if has_single else (
                f"there is no single_{kind}_space and {kind}_space is the single space (EnvPool's convention); "
                "joint_space of it")
            detail = f"{kind}_space is {declared!r}; {said} over {vec.num_envs} envs is {expected!r}"
            found.append(PropertyError("declared-spaces", detail))
    return found[:1]


EPISODE = [
    "from gymnasium.vector.utils import concatenate, create_empty_array",
    "",
    "def episode():",
    "    observations, infos = env.reset(seed=SEED)",
    "    trace = [observations]",
    "    space = getattr(env, 'single_action_space', None)",
    "    space = env.action_space if space is None else space  # EnvPool's convention: no single space",
    "    for rows in actions:",
    "        batch = concatenate(space, rows, create_empty_array(space, len(rows)))",
    "        trace.append(env.step(batch))",
    "    return trace",
]
"""A vector episode in plain Python, for the snippet."""


def _vector_tail(error: Any) -> list[str]:
    """A vector failure: spacealg's replay of the example (:func:`~spacealg.testing.kinds.vector.replay_vector`;
    a changed row's actions where the law compares two runs; the implementation compared with for
    ``sync-async-agree``), which raises while the bug is there."""
    other = error.compared_with if error.changed is None and error.property == "sync-async-agree" else ""
    name, defined = factory(error.construction, avoid=other)
    lines = ["trace = episode()", "", "from spacealg.testing import replay_vector", "", *defined]
    extra = ""
    if error.changed is not None:
        row, changes = error.changed
        extra = f", row={row}, changes={literal(changes)}"
    elif other:  # the implementation it was compared with
        other_name, other_defined = factory(other, ("make_other", "make_compared", "build_other"), error.construction)
        lines += other_defined
        extra = f", compare={other_name}"
    return [*lines, f"replay_vector({name}, SEED, actions{extra})  # raises (AssertionError) while the bug is there"]


def snippet(error: Any) -> str:
    """The reproduction of a vector failure: its episode, then :func:`replay_vector`."""
    notes = ["actions[k] holds one action per sub-environment (row) at step k + 1"]
    return reproduction(error, EPISODE, _vector_tail, notes)


def recognises(env: Any) -> bool:
    """A Gymnasium vector environment: ``num_envs`` and single spaces, or ``num_envs`` on a
    ``VectorEnv`` subclass or an EnvPool environment (whose declared spaces are the single
    ones: EnvPool's convention, reported as ``declared-spaces``)."""
    if not hasattr(env, "num_envs"):
        return False
    if hasattr(env, "single_action_space") and hasattr(env, "single_observation_space"):
        return True
    kinds = type(env).__mro__
    return any(k.__name__ == "VectorEnv" for k in kinds) or type(env).__module__.startswith("envpool")


def spaces(env: Any) -> list[tuple[str, Any]]:
    """The single spaces, named."""
    return [("single observation space", single_space(env, "observation")),
            ("single action space", single_space(env, "action"))]


def _replays(source: EnvSource, seed: int | None, actions: Sequence[Any], *, determinism: bool, masks: bool) -> None:
    """A vector failure replays through :func:`replay_vector` (with ``seed=None``, its declared spaces)."""
    replay_vector(source, seed, actions, determinism=determinism)


VECTOR = EnvKind(
    "vector",
    VECTOR_PROPERTIES,
    check_vector_env,
    {
        **dict.fromkeys(("no-exception", "step-signature", "batch-in-space", "rows-match-sub-envs"), (STEPPED,)),
        "row-isolation": (STEPPED,),
        "autoreset": (Precondition("end", "no row's episode ended within the steps drawn"),),
        "reset-determinism": (REPLAYED,),
        "step-determinism": (STEPPED, REPLAYED),
    },
    recognises=recognises,
    spaces=spaces,
    replays=_replays,
    snippet=snippet,
)
"""The vector kind (each check runs a copy fitted to its environment: :func:`vector_kind`)."""
