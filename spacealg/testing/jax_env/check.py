"""The JAX-native kind's search, run on the engine's loop: :class:`Search` gives
:func:`~spacealg.testing.engine.runner.run_check` its one-off probes and its Hypothesis body
(:func:`~spacealg.testing.kinds.jax.check_jax_env` wires them), so a JAX check searches,
refines, reports every broken property and earns its verdicts as every other kind's does.

Each Hypothesis example draws a seed ``s`` (row ``i`` of the batch gets the key
``key(s + i)``, split as in :mod:`spacealg.adapters.jax_protocols`), an action key (the
action sequences: row ``i`` draws step ``t``'s action with ``fold_in(fold_in(key(a), i), t)``,
legal under a published mask) and a row to cross-check; one example in four (by a hash of its
draws; the first example, all zeros, is one: :data:`REPLAY_EVERY`) replays that row unbatched,
one in 64 eagerly too.
Where the library promises an episode limit (gymnax's ``max_steps_in_episode``,
XLand-MiniGrid's ``max_steps``) beyond ``max_steps`` (and within :data:`LONG_CAP` steps), one
example in eight runs a rollout of its own just past that limit (its trajectory laws only:
the relational ones are the ordinary examples'; compiled with the probes). One compiled call
runs the whole batch (``vmap`` over keys of a ``lax.scan`` over ``max_steps`` steps); the
laws of :mod:`.laws` are checked on every step of every row (those of ``laws.SCREENED``
inside that call: the host reads their first failing columns), the relational laws of
:mod:`.relations` on the drawn row; properties already found broken are not checked again.
The earliest broken law is reported with the failing row's seed and its actions up to the
failure (by causality, the shortest prefix for that seed); the engine's refinement searches
shorter lengths ``n`` (only the first ``n`` steps are checked).

Laws: the same ``random_seed`` and options give the same run; a sound environment passes;
an environment breaking a law within ``max_steps`` steps of some row raises
:class:`JaxEnvCheckError`, whose ``reproduction()`` replays the failure with JAX and ends in
an assertion that fails while the defect is there.
"""

from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.adapters.jax_protocols import Protocol, adapt
from spacealg.testing.engine.driver import SEEDS, Budget, Focus, describe_exception, global_rng
from spacealg.testing.engine.errors import EnvCheckError, PropertyError
from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import ILLEGAL, MASKED, REPLAYED, STEPPED, EnvCheckReport
from spacealg.testing.jax_env.properties import EAGER, JAX_PROPERTIES, LIMIT
from spacealg.testing.jax_env.source import jax_source

__all__ = ["JaxEnvCheckError", "JaxEnvCheckReport", "Search", "adapted", "applicable", "jax_options", "replay_jax"]

DEFAULT_BATCH = 512
RECORD_BYTES = 32 * 2**20  # the most the recorded trajectories of one example may take
LONG_CAP = 2000
"""The longest horizon of a long example (as ``check_env``'s episode limits)."""
RELATIONAL = frozenset({"batching", "purity", "jit-eager", "global-rng"})
REPLAY_EVERY, EAGER_EVERY = 4, 64
"""One ordinary example in ``REPLAY_EVERY`` (by a hash of its draws; the first, all zeros, is
one; while refining a failure, every one) replays its drawn row unbatched for the relational
laws, and one in ``EAGER_EVERY`` (among them) eagerly too: eager execution dispatches every
operation alone, about a hundred times slower than the compiled rollout, and what these
comparisons test (batched, compiled and plain execution agree) is a property of the program,
which every example runs, more than of the drawn values."""


@dataclass(eq=False)
class JaxEnvCheckError(EnvCheckError):
    """A JAX environment broke a property (an :class:`EnvCheckError`). ``seed`` is the
    failing row's seed (``context["row_seed"]``), ``actions`` its actions up to the failure;
    ``context`` holds what the reproduction needs: the protocol's ``style`` and, for a batched
    law, the batch size, the action key, the horizon, the row and the example's first seed."""

    def __post_init__(self) -> None:
        self.seed = self.context.get("row_seed", self.seed)
        super().__post_init__()

    @property
    def style(self) -> str:
        """The protocol's style (``"gymnax"``, ``"jumanji"``, ...; "" where none was read)."""
        return str(self.context.get("style", ""))

    def reproduction(self) -> str:
        from spacealg.testing.jax_env.snippet import reproduction

        return reproduction(self)


@dataclass
class JaxEnvCheckReport(EnvCheckReport):
    """A passed check of a JAX environment: ``setup_seconds`` compiling and probing, and
    timing the raw rollout after the search (the search's speed is counted without them),
    ``rollout_seconds`` inside the compiled rollouts, ``raw_steps_per_second`` the
    environment's own ``jit(vmap(scan(step)))`` rollout of the same batch and horizon,
    recording nothing (:meth:`~.rollout.Rollouts.throughput`, its median run; 0 where the check's deadline
    had passed), and ``raw_ratio`` the search's share of it."""

    rollout_seconds: float = 0.0
    style: str = ""
    setup_seconds: float = 0.0
    raw_steps_per_second: float = 0.0

    def searching_seconds(self) -> float:
        """The seconds of the search, after the one-off compilation and probes."""
        return self.seconds - self.setup_seconds

    @property
    def raw_ratio(self) -> float:
        """``steps_per_second / raw_steps_per_second`` (0 where no raw rollout was timed)."""
        return self.steps_per_second / self.raw_steps_per_second if self.raw_steps_per_second else 0.0

    def speed(self) -> str:
        compiled = self.steps / self.rollout_seconds if self.rollout_seconds else 0
        raw = (f"; {self.raw_ratio:.2f}x the raw jit(vmap(scan(step))) rollout's {self.raw_steps_per_second:,.0f} "
               "steps/s") if self.raw_steps_per_second else ""
        return (
            f"{self.steps_per_second:,.0f} steps/s searching after {self.setup_seconds:.1f} s compiling and "
            f"probing ({compiled:,.0f} steps/s inside the compiled rollouts{raw})"
        )

    def __str__(self) -> str:
        return super().__str__() + "".join(f"\n  not checked: {k}: {why}" for k, why in self.not_checked.items())


def jax_options(max_examples: Any, max_steps: Any, batch: Any, eager_steps: Any, budget: Any,
                **flags: Any) -> dict[str, Any]:
    """The options of a check, validated (a ValueError naming a bad one)."""
    for name, value, least in (("max_examples", max_examples, 1), ("max_steps", max_steps, 0), ("batch", batch, 1),
                               ("eager_steps", eager_steps, 0)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < least:
            raise ValueError(f"{name} must be an int >= {least}, got {value!r}")
    if budget is not None and not (isinstance(budget, (int, float)) and budget > 0):
        raise ValueError(f"budget must be a positive number of seconds or None, got {budget!r}")
    unknown = sorted(set(flags.get("skip", ())) - set(JAX_PROPERTIES))
    if unknown:
        raise ValueError(f"skip: unknown properties {unknown}; the properties are {', '.join(JAX_PROPERTIES)}")
    return {"max_steps": int(max_steps), "batch": int(batch), "eager_steps": int(eager_steps), "skip": (),
            "masks": True, "illegal_actions": False, "determinism": True, **flags}


def adapted(source: EnvSource) -> Protocol:
    """The protocol of a fresh environment of ``source`` (a TypeError naming it where none fits)."""
    try:
        return adapt(source.make())
    except TypeError as error:
        raise TypeError(f"check_jax_env: {source.name}: {error}") from None


def applicable(protocol: Protocol, options: dict[str, Any]) -> tuple[set[str], dict[str, str]]:
    """The properties checked on ``protocol`` under ``options``, and the others with why."""
    skipped: dict[str, str] = dict.fromkeys(options["skip"], "skipped by the caller (skip=...)")
    if not options["illegal_actions"]:
        skipped["illegal-action"] = "illegal_actions=False"
    if protocol.sample_action is None:
        skipped["action-in-space"] = "the library has no sampler of its own: spacealg draws the actions"
    if protocol.discount_space is None and protocol.style not in ("jumanji", "xminigrid"):
        skipped["discount-in-space"] = f"{protocol.style} environments have no discount"
    if protocol.style != "gymnax":
        skipped["info-dict"] = f"{protocol.style} environments return no info of gymnax's kind"
    if protocol.max_steps is None:
        skipped["max-episode-steps"] = f"the {protocol.style} environment promises no episode limit"
    if protocol.inferred:
        skipped["declared-dtypes"] = f"{protocol.style} declares no observation dtypes: the space takes reset's"
    if not options["masks"]:
        skipped["action-mask"] = "masks=False"
    if not options["determinism"]:
        skipped.update(dict.fromkeys(("purity", "jit-eager", "global-rng", "batching"), "determinism=False"))
    return set(JAX_PROPERTIES) - set(skipped), skipped


def _batch_size(protocol: Protocol, horizon: int, batch: int) -> int:
    import jax

    try:
        _, out = jax.eval_shape(protocol.reset, jax.random.key(0))
        size = sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in jax.tree.leaves(out))
    except Exception:
        return batch
    per_row = max(1, 2 * size * max(horizon, 1))
    return max(1, min(batch, RECORD_BYTES // per_row))


def _mixed(seed: int, action_seed: int, row: int) -> int:
    """A hash of an example's draws (0 for the first example's zeros): Hypothesis favours small
    draws, which a plain sum or product would pick again and again."""
    h = (seed * 0x9E3779B97F4A7C15 + action_seed * 0xBF58476D1CE4E5B9 + row * 0xD6E8FEB86659FD93) % 2**64
    h = ((h ^ (h >> 31)) * 0x94D049BB133111EB) % 2**64
    return h ^ (h >> 29)


def _seeds(seed: int, rows: int) -> np.ndarray:
    return ((np.uint64(seed) + np.arange(rows, dtype=np.uint64)) % 2**32).astype(np.uint32)


@functools.cache
def _fold_rows() -> Any:
    import jax

    def fold(seed: Any, rows: Any) -> Any:
        return jax.vmap(jax.random.fold_in, (None, 0))(jax.random.key(seed), rows)

    return jax.jit(fold)  # compiled once (a vmap called eagerly is traced anew on every call)


def _keys(action_seed: int, rows: int) -> Any:
    return _fold_rows()(np.uint32(action_seed), np.arange(rows, dtype=np.int32))


class Search:
    """One check's compiled rollouts, its one-off :meth:`probes` and its Hypothesis
    :meth:`body`; ``stats`` are the engine's counters and precondition marks."""

    def __init__(self, protocol: Protocol, options: dict[str, Any], checked: set[str], stats: dict[str, Any]) -> None:
        from spacealg.adapters.jax_spaces import converted
        from spacealg.testing.jax_env.rollout import Rollouts

        self.protocol, self.options, self.checked, self.stats = protocol, options, checked, stats
        self.rollout_seconds = self.raw_steps_per_second = 0.0
        try:
            converted(protocol.observation_space)
            converted(protocol.action_space)
            # max_steps=0: one step is run and none checked (the resets only)
            self.rollouts = Rollouts(protocol, max(options["max_steps"], 1), options["masks"],
                                     options["illegal_actions"])
        except Exception as error:
            detail = f"cannot read the declared spaces: {describe_exception(error)}"
            raise self._styled(PropertyError("declared-spaces", detail)) from error
        self.batch = _batch_size(protocol, options["max_steps"], options["batch"])
        self._long: Any = None  # the rollouts to the episode limit (compiled when first drawn)
        self._long_rows = self.batch  # and their batch size

    def _styled(self, violation: PropertyError) -> PropertyError:
        violation.context = {"style": self.protocol.style, **violation.context}
        return violation

    def probes(self) -> list[PropertyError]:
        """The one-off laws, broken ones returned: the abstract types (compile once), the
        purity of tracing (:func:`~.relations.trace_purity`), one compilation of the batched
        rollout (whose scan must trace step once) and of the long examples' one; then the first
        example's comparisons are run once (compiling the replay, dispatching the eager steps'
        operations), so that the search's time goes to examples."""
        from spacealg.testing.jax_env.relations import compile_once, scan_traced_once, trace_purity

        found: list[PropertyError] = []

        def attempt(law: Any, *args: Any) -> bool:
            """Run ``law``; False once reset and step cannot be traced (nothing else can run)."""
            try:
                law(*args)
            except PropertyError as violation:
                if violation.property in self.checked and all(v.property != violation.property for v in found):
                    found.append(self._styled(violation))
            except Exception as error:
                detail = f"tracing reset and step raised {describe_exception(error)}"
                found.append(self._styled(PropertyError("no-exception", detail)))
            return all(v.property != "no-exception" for v in found)

        if "compile-once" in self.checked and not attempt(compile_once, self.protocol, self.rollouts):
            return found
        if self.checked & {"purity", "global-rng"} and not attempt(trace_purity, self.protocol, self.rollouts):
            return found
        seeds, keys = _seeds(0, self.batch), _keys(0, self.batch)
        try:
            with global_rng(0):  # compiled in a known global state (the replays are too)
                out0, traj, _ = self._run(seeds, keys, self.rollouts)
        except Exception as error:
            detail = f"the compiled rollout raised {describe_exception(error)}"
            return [*found, self._styled(PropertyError("no-exception", detail))]
        if "compile-once" in self.checked:
            attempt(scan_traced_once, self.rollouts, self.rollouts.traces)
        if self.long_horizon() is not None:  # compiled here, not by the first long example of the search
            long, rows = self._rollouts(True)
            with contextlib.suppress(Exception), global_rng(0):  # a rollout that raises: the search reports it
                self._run(_seeds(0, rows), _keys(0, rows), long)
        if self.checked & RELATIONAL:  # the first example's comparisons (its row 0, eagerly), warmed up
            import jax

            from spacealg.testing.jax_env.relations import compare_row

            row = jax.tree.map(lambda a: a[0], (out0, traj))
            with contextlib.suppress(PropertyError):  # the search's first example is this one: found there
                compare_row(self.rollouts, int(seeds[0]), row, row[1]["action"], self.options["max_steps"],
                            self.options["eager_steps"], self.checked)
        self.rollout_seconds = 0.0  # the compilation is not a rollout
        return found

    def time_raw(self) -> None:
        """Time the environment's own rollout of the search's batch and horizon
        (:meth:`~.rollout.Rollouts.throughput`): ``raw_steps_per_second``."""
        if self.options["max_steps"]:
            self.raw_steps_per_second = self.rollouts.throughput(_seeds(0, self.batch), _keys(0, self.batch))

    def long_horizon(self) -> int | None:
        """The horizon of the long examples: just past the episode limit the library
        promises, where that lies beyond ``max_steps`` (and within :data:`LONG_CAP`)."""
        limit = self.protocol.max_steps
        if limit is None or limit + 2 <= self.options["max_steps"] or limit + 2 > LONG_CAP:
            return None
        return limit + 2

    def _rollouts(self, long: bool) -> tuple[Any, int]:
        """The rollouts of an ordinary or a long example and their batch size."""
        from spacealg.testing.jax_env.rollout import Rollouts

        if not long:
            return self.rollouts, self.batch
        if self._long is None:
            horizon = self.long_horizon()
            assert horizon is not None  # drawn only where there is one
            self._long = Rollouts(self.protocol, horizon, self.options["masks"], self.options["illegal_actions"])
            self._long_rows = _batch_size(self.protocol, horizon, self.options["batch"])  # bounded memory
        return self._long, self._long_rows

    def _run(self, seeds: np.ndarray, keys: Any, rollouts: Any) -> tuple[Any, Any, Any]:
        """The screened rollout of these rows: their resets, trajectories (left where JAX
        holds them: the laws read what they need) and the screen's first failing columns."""
        import jax

        started = time.perf_counter()
        out0, traj, firsts = jax.block_until_ready(rollouts.drawn(seeds, keys))
        firsts = jax.device_get(firsts)
        self.rollout_seconds += time.perf_counter() - started
        return out0, traj, firsts

    def body(self, clock: Budget, focus: Focus) -> Any:
        """The Hypothesis body of one search (the engine's ``make_body``): the laws not in
        ``focus.excluded`` on every row, the relational ones on the drawn row; a violation
        ``focus`` ignores ends the example (counted in ``focus.stopped``)."""
        from hypothesis import strategies as st

        max_steps, laws = self.options["max_steps"], self.checked - focus.excluded
        reached: set[str] = self.stats["reached"]

        def run(data: Any) -> None:
            import jax

            from spacealg.testing.jax_env.laws import first_illegal, first_violation, limit_reached
            from spacealg.testing.jax_env.relations import compare_row

            # one example in eight runs just past the promised episode limit where max_steps stops short of it
            long = (focus.shorter is None and self.long_horizon() is not None
                    and data.draw(st.integers(0, 7), label="long") == 7)
            rollouts, rows = self._rollouts(long)
            # (refining a long example's failure: at most max_steps, the ordinary rollouts' horizon)
            n = max_steps if focus.shorter is None else min(focus.length(data, max_steps, None), max_steps)
            n = rollouts.horizon if long else n
            seed = data.draw(SEEDS, label="seed")
            clock.admit(seed, n)
            action_seed = data.draw(SEEDS, label="actions")
            row = failing = data.draw(st.integers(0, self.batch - 1), label="row")
            mixed = _mixed(seed, action_seed, row)  # (refining: every example replays)
            replayed = not long and laws & RELATIONAL and (focus.shorter is not None or mixed % REPLAY_EVERY == 0)
            eager = self.options["eager_steps"] if mixed % EAGER_EVERY == 0 else 0
            seeds, traj = _seeds(seed, rows), None
            try:
                try:
                    out0, traj, firsts = self._run(seeds, _keys(action_seed, rows), rollouts)
                except Exception as error:
                    detail = f"the compiled rollout raised {describe_exception(error)}"
                    raise PropertyError("no-exception", detail) from error
                ended = int(np.asarray(traj["done"])[:, :n].sum()) if "done" in traj else 0
                self.stats["steps"] += rows * n
                self.stats["episodes"] += rows + ended
                found = first_violation(self.protocol, out0, traj, n, laws, firsts)
                if found is not None:
                    failing, step, prop, detail = found
                    illegal = first_illegal(self.protocol, out0, traj, failing, step or 0)
                    if illegal is not None and self.options["illegal_actions"]:
                        detail = f"after the action of step {illegal}, outside the mask, {prop} broke: {detail}"
                        prop = "illegal-action"
                    raise PropertyError(prop, detail, step)
                reached.update(mark for mark, met in (
                    (STEPPED.mark, n > 0), (MASKED.mark, "mask" in out0),
                    (LIMIT.mark, limit_reached(self.protocol, traj, n)),
                    (ILLEGAL.mark, self.options["illegal_actions"] and first_illegal(self.protocol, out0, traj, row,
                                                                                      n) is not None)) if met)
                if replayed:  # the laws that compare runs: the ordinary examples' (a sample of them)
                    batched = jax.tree.map(lambda a: a[row], (out0, traj))
                    compare_row(self.rollouts, int(seeds[row]), batched, batched[1]["action"], n, eager, laws)
                    self.stats["replayed"] += 1
                    reached.update((REPLAYED.mark, EAGER.mark) if eager else (REPLAYED.mark,))
            except PropertyError as violation:
                if focus.ignores(violation):
                    focus.stopped.add(violation.property)
                    return
                violation.seed, violation.n = seed, n
                actions = traj["action"] if traj is not None else None
                violation.actions = [
                    jax.tree.map(lambda a, t=t: np.asarray(a)[failing, t], actions) for t in range(violation.step or 0)
                ]
                violation.context = {"batch": rows, "action_seed": action_seed, "horizon": rollouts.horizon,
                                     "row": failing, "n": n, "first_seed": seed, "row_seed": int(seeds[failing])}
                if focus.longer(violation):
                    return
                raise self._styled(violation) from None
            focus.completed += 1

        return run


def _error(violation: PropertyError, source: EnvSource, protocol: Protocol) -> JaxEnvCheckError:
    """A violation found by :func:`replay_jax` as its error (a check's go through the engine)."""
    return JaxEnvCheckError(
        property=violation.property, detail=violation.detail, seed=violation.seed, actions=violation.actions,
        step=violation.step, where=violation.where, env_name=source.name, construction=source.construction,
        imports=tuple(source.imports), examples=1, statement=JAX_PROPERTIES.get(violation.property, ""), kind="jax",
        context={"style": protocol.style, **violation.context},
    )


def replay_jax(env: Any, seed: int | None, actions: list[Any], *, masks: bool = True, eager_steps: int = 8) -> None:
    """Re-run the laws of one row on ``seed`` and ``actions`` (a failure's, say after a fix):
    the trajectory laws and purity/jit-eager/global-rng on the compiled, unbatched replay;
    ``seed=None`` (a failure of the one-off probes: declared spaces, compile once, tracing
    purity) re-runs the probes. Raises the :class:`JaxEnvCheckError` of the first broken
    one; returns None if none is."""
    import jax
    import jax.numpy as jnp

    from spacealg.testing.jax_env.laws import first_violation
    from spacealg.testing.jax_env.relations import compare_row
    from spacealg.testing.jax_env.rollout import Rollouts

    source = jax_source(env)
    protocol = adapted(source)
    if seed is None:
        options = jax_options(1, 1, 1, 0, None, masks=masks, skip=("batching", "jit-eager"))
        try:
            probed = Search(protocol, options, applicable(protocol, options)[0], {}).probes()
        except PropertyError as violation:
            probed = [violation]
        if probed:
            raise _error(probed[0], source, protocol) from None
        return
    steps = len(actions)
    checked = applicable(protocol, jax_options(1, 1, 1, 0, None, masks=masks))[0] - {"batching", "action-in-space"}
    rollouts = Rollouts(protocol, max(steps, 1), masks, False)
    try:
        if steps:
            stacked = jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *actions)
            out0, traj = jax.device_get(rollouts.replay(np.uint32(seed), stacked))
            batch0 = jax.tree.map(lambda a: np.asarray(a)[None], (out0, traj))
        else:  # the reset alone: one drawn step, none of it checked
            key = jax.random.key(0)[None]
            batch0 = jax.device_get(rollouts.drawn(np.asarray([seed], np.uint32), key)[:2])
        found = first_violation(protocol, batch0[0], batch0[1], steps, checked)
        if found is None and steps:
            compare_row(rollouts, seed, (out0, traj), stacked, steps, eager_steps, checked)
        if found is not None:
            _, step, prop, detail = found
            raise PropertyError(prop, detail, step)
    except PropertyError as violation:
        violation.seed = seed
        violation.actions = list(actions[: violation.step or 0])
        raise _error(violation, source, protocol) from None
