"""``check_jax_env``: property-based checking of functional JAX environments.

Each Hypothesis example draws a seed ``s`` (row ``i``
of the batch gets the key ``key(s + i)``, split as in :mod:`spacealg.adapters.jax_protocols`), an action key (the
action sequences: row ``i`` draws step ``t``'s action with ``fold_in(fold_in(key(a), i), t)``,
legal under a published mask) and a row to cross-check; one example in sixteen (by a hash
of the seeds) replays that row eagerly too (eager execution is slow). Where the library
promises an episode limit (gymnax's ``max_steps_in_episode``, XLand-MiniGrid's
``max_steps``) beyond ``max_steps`` (and within 2,000 steps), one example in eight runs a
rollout of its own just past that limit, so that ``episode-end`` sees an episode reach it
(its trajectory laws only: the relational ones are the ordinary examples'). One compiled call runs the
whole batch (``vmap`` over keys of a ``lax.scan`` over ``max_steps`` steps); the laws of
:mod:`.laws` are checked on every step of every row, the relational laws of
:mod:`.relations` on the drawn row. The earliest broken law is reported with the failing
row's seed and its actions up to the failure (by causality, the shortest prefix for that
seed); a second search over shorter lengths ``n`` (all seeds; only the first ``n`` steps are
checked) looks for a shorter one, as :func:`~spacealg.testing.check_env` does.

Laws: the same ``random_seed`` and options give the same run; a sound environment passes;
an environment breaking a law within ``max_steps`` steps of some row raises
:class:`JaxEnvCheckError`, whose ``reproduction()`` replays the failure with JAX and ends in
an assertion that fails while the defect is there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spacealg.adapters.jax_protocols import Protocol, adapt
from spacealg.testing.engine.driver import SEEDS, Budget, Focus, describe_exception, search
from spacealg.testing.engine.errors import EnvCheckError, PropertyError
from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import EnvCheckReport, refine
from spacealg.testing.jax_env.properties import JAX_PROPERTIES
from spacealg.testing.jax_env.source import jax_source

__all__ = ["JaxEnvCheckError", "JaxEnvCheckReport", "check_jax_env", "replay_jax"]

DEFAULT_BATCH = 512
RECORD_BYTES = 32 * 2**20  # the most the recorded trajectories of one example may take


@dataclass(eq=False)
class JaxEnvCheckError(EnvCheckError):
    """A JAX environment broke a property (an :class:`EnvCheckError`). ``seed`` is the
    failing row's seed, ``actions`` its actions up to the failure; ``context`` holds what
    the reproduction of a batched law needs (batch size, action key, horizon)."""

    style: str = ""
    context: dict[str, Any] = field(default_factory=dict)

    def reproduction(self) -> str:
        from spacealg.testing.jax_env.snippet import reproduction

        return reproduction(self)


@dataclass
class JaxEnvCheckReport(EnvCheckReport):
    """A passed check of a JAX environment; ``not_checked`` maps a property to why it was
    not checked; ``rollout_seconds`` is the time spent in the compiled rollouts."""

    not_checked: dict[str, str] = field(default_factory=dict)
    rollout_seconds: float = 0.0
    style: str = ""
    setup_seconds: float = 0.0

    def searching_seconds(self) -> float:
        """The seconds of the search, after the one-off compilation and probes (which take
        ``setup_seconds``): what ``steps_per_second`` divides by."""
        return self.seconds - self.setup_seconds

    def speed(self) -> str:
        compiled = self.steps / self.rollout_seconds if self.rollout_seconds else 0
        return (
            f"{self.steps_per_second:,.0f} steps/s searching after {self.setup_seconds:.1f} s compiling and "
            f"probing ({compiled:,.0f} steps/s inside the compiled rollouts)"
        )

    def __str__(self) -> str:
        skipped = "".join(f"\n  not checked: {k}: {why}" for k, why in self.not_checked.items())
        return super().__str__() + skipped


LONG_CAP = 2000
"""The longest horizon of a long example (as ``check_env``'s episode limits)."""


def _checked(
    protocol: Protocol, masks: bool, illegal: bool, determinism: bool, skip: Any = ()
) -> tuple[set[str], dict[str, str]]:
    unknown = sorted(set(skip) - set(JAX_PROPERTIES))
    if unknown:
        raise ValueError(f"skip: unknown properties {unknown}; the properties are {', '.join(JAX_PROPERTIES)}")
    skipped: dict[str, str] = {name: "skipped by the caller (skip=...)" for name in skip}
    if not illegal:
        skipped["illegal-action"] = "illegal_actions=False"
    if protocol.sample_action is None:
        skipped["action-in-space"] = "the library has no sampler of its own: spacealg draws the actions"
    if protocol.discount_space is None and protocol.style not in ("jumanji", "xminigrid"):
        skipped["discount-in-space"] = f"{protocol.style} environments have no discount"
    if protocol.style != "gymnax":
        skipped["info-dict"] = f"{protocol.style} environments return no info of gymnax's kind"
    if protocol.inferred:
        skipped["declared-dtypes"] = f"{protocol.style} declares no observation dtypes: the space takes reset's"
    if not masks:
        skipped["action-mask"] = "masks=False"
    if not determinism:
        for name in ("purity", "jit-eager", "global-rng", "batching"):
            skipped[name] = "determinism=False"
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


def _options(max_examples: Any, max_steps: Any, batch: Any, eager_steps: Any, budget: Any) -> None:
    for name, value, least in (("max_examples", max_examples, 1), ("max_steps", max_steps, 1), ("batch", batch, 1),
                               ("eager_steps", eager_steps, 0)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < least:
            raise ValueError(f"{name} must be an int >= {least}, got {value!r}")
    if budget is not None and not (isinstance(budget, (int, float)) and budget > 0):
        raise ValueError(f"budget must be a positive number of seconds or None, got {budget!r}")


class _Check:
    """The state of one check: the environment, its compiled rollouts, the counters."""

    def __init__(self, source: EnvSource, options: dict[str, Any]) -> None:
        from spacealg.adapters.jax_spaces import converted
        from spacealg.testing.jax_env.rollout import Rollouts

        self.source, self.options = source, options
        env = source.make()
        try:
            self.protocol = adapt(env)
        except TypeError as error:
            raise TypeError(f"check_jax_env: {source.name}: {error}") from None
        self.checked, self.skipped = _checked(
            self.protocol, options["masks"], options["illegal_actions"], options["determinism"], options["skip"]
        )
        self.stats = {"steps": 0, "episodes": 0}
        self.rollout_seconds = 0.0
        try:
            converted(self.protocol.observation_space)
            converted(self.protocol.action_space)
            self.rollouts = Rollouts(self.protocol, options["max_steps"], options["masks"], options["illegal_actions"])
        except Exception as error:
            detail = f"cannot read the declared spaces: {describe_exception(error)}"
            raise PropertyError("declared-spaces", detail) from error
        self.batch = _batch_size(self.protocol, options["max_steps"], options["batch"])
        self._long: Any = None  # the rollouts to the episode limit (compiled when first drawn)
        self._long_rows = self.batch  # and their batch size

    def probe(self) -> None:
        """The one-off laws: compile once (abstract types, then one compilation of the batched
        rollout, whose scan must trace step once) and, with ``determinism``, the purity of
        tracing (:func:`~.relations.trace_purity`)."""
        from spacealg.testing.engine.driver import global_rng
        from spacealg.testing.jax_env.relations import compile_once, scan_traced_once, trace_purity

        if "compile-once" in self.checked:
            compile_once(self.protocol, self.rollouts)
        if self.checked & {"purity", "global-rng"}:
            trace_purity(self.protocol, self.rollouts)
        try:
            with global_rng(0):  # compiled in a known global state (the replays are too)
                self._run(0, 0)
            self.rollout_seconds = 0.0  # the compilation is not a rollout
        except Exception as error:
            raise PropertyError("no-exception", f"the compiled rollout raised {describe_exception(error)}") from error
        if "compile-once" in self.checked:
            scan_traced_once(self.rollouts, self.rollouts.traces)
        self.warm_up()

    def warm_up(self) -> None:
        """Compile the replay and check row 0 of the first batch against its unbatched and
        eager replays before the search, so that every check runs eagerly at least once and
        the time budget goes to examples (compilation and eager dispatch cost most the first
        time). A broken law leaves as a PropertyError with row 0's seed and actions."""
        import jax

        from spacealg.testing.jax_env.relations import compare_row

        if not self.options["determinism"]:
            return
        seeds, out0, traj = self._run(0, 0)
        self.rollout_seconds = 0.0
        actions = jax.tree.map(lambda a: a[0], traj["action"])
        batched = jax.tree.map(lambda a: a[0], (out0, traj))
        try:
            compare_row(self.rollouts, int(seeds[0]), batched, actions, self.options["max_steps"],
                        self.options["eager_steps"], self.checked)
        except PropertyError as violation:
            violation.seed, violation.n = int(seeds[0]), self.options["max_steps"]
            violation.actions = [
                jax.tree.map(lambda a, t=t: np.asarray(a)[t], actions) for t in range(violation.step or 0)
            ]
            violation.context = {"batch": self.batch, "action_seed": 0, "horizon": self.options["max_steps"],  # type: ignore[attr-defined]
                                 "row": 0, "n": self.options["max_steps"], "first_seed": 0}
            raise

    def long_horizon(self) -> int | None:
        """The horizon of the long examples: just past the episode limit the library
        promises (``max_steps_in_episode``, capped at :data:`LONG_CAP`), where that lies
        beyond ``max_steps``; None where it does not."""
        limit = self.protocol.max_steps
        if limit is None or limit + 2 <= self.options["max_steps"] or limit + 2 > LONG_CAP:
            return None
        return limit + 2

    def _long_rollouts(self) -> Any:
        from spacealg.testing.jax_env.rollout import Rollouts

        if self._long is None:
            horizon = self.long_horizon()
            assert horizon is not None  # drawn only where there is one
            self._long = Rollouts(self.protocol, horizon, self.options["masks"], self.options["illegal_actions"])
            self._long_rows = _batch_size(self.protocol, horizon, self.options["batch"])  # bounded memory
        return self._long

    def _run(self, seed: int, action_seed: int, rollouts: Any = None) -> tuple[np.ndarray, Any, Any]:
        import jax
        import jax.numpy as jnp

        rows = self._long_rows if rollouts is not None and rollouts is self._long else self.batch
        seeds = ((np.uint64(seed) + np.arange(rows, dtype=np.uint64)) % 2**32).astype(np.uint32)
        keys = jax.vmap(jax.random.fold_in, (None, 0))(jax.random.key(np.uint32(action_seed)), jnp.arange(rows))
        started = time.perf_counter()
        out0, traj = jax.device_get((rollouts or self.rollouts).drawn(seeds, keys))
        self.rollout_seconds += time.perf_counter() - started
        return seeds, out0, traj

    def body(self, clock: Budget, focus: Focus) -> Any:
        from hypothesis import strategies as st

        max_steps = self.options["max_steps"]

        def run(data: Any) -> None:
            import jax

            from spacealg.testing.jax_env.laws import first_illegal, first_violation
            from spacealg.testing.jax_env.relations import compare_row

            # one example in eight runs just past the promised episode limit where max_steps stops short of it
            long = (focus.shorter is None and self.long_horizon() is not None
                    and data.draw(st.integers(0, 7), label="long") == 7)
            rollouts = self._long_rollouts() if long else self.rollouts
            # (refining a long example's failure: at most max_steps, the ordinary rollouts' horizon)
            n = max_steps if focus.shorter is None else min(focus.length(data, max_steps, None), max_steps)
            n = rollouts.horizon if long else n
            seed = data.draw(SEEDS, label="seed")
            clock.admit(seed, n)
            action_seed = data.draw(SEEDS, label="actions")
            row = data.draw(st.integers(0, self.batch - 1), label="row")
            # one example in sixteen, by a hash of the seed (Hypothesis favours small draws)
            eager = self.options["eager_steps"] if (seed * 2654435761 + action_seed) % 16 == 0 else 0
            try:
                seeds, out0, traj = self._run(seed, action_seed, rollouts)
            except Exception as error:
                detail = f"the compiled rollout raised {describe_exception(error)}"
                raise PropertyError("no-exception", detail) from error
            self.stats["steps"] += len(seeds) * n
            ended = int(np.asarray(traj["done"])[:, :n].sum()) if "done" in traj else 0
            self.stats["episodes"] += len(seeds) + ended
            context = {"batch": self.batch, "action_seed": action_seed, "horizon": rollouts.horizon, "row": row, "n": n,
                       "first_seed": seed}
            try:
                found = first_violation(self.protocol, out0, traj, n, self.checked)
                if found is not None:
                    failing, step, prop, detail = found
                    illegal = first_illegal(self.protocol, out0, traj, failing, step or 0)
                    if illegal is not None and self.options["illegal_actions"]:
                        detail = f"after the action of step {illegal}, outside the mask, {prop} broke: {detail}"
                        prop = "illegal-action"
                    raise PropertyError(prop, detail, step)
                failing = row
                if long:  # the laws that compare runs are the ordinary examples' (a horizon of their own)
                    return
                batched = jax.tree.map(lambda a: a[row], (out0, traj))
                actions = jax.tree.map(lambda a: a[row], traj["action"])
                compare_row(self.rollouts, int(seeds[row]), batched, actions, n, eager, self.checked)
            except PropertyError as violation:
                if focus.ignores(violation):
                    return
                violation.seed, violation.n = seed, n
                k = violation.step or 0
                violation.actions = [
                    jax.tree.map(lambda a, t=t: np.asarray(a)[failing, t], traj["action"]) for t in range(k)
                ]
                violation.row_seed = int(seeds[failing])  # type: ignore[attr-defined]
                violation.context = {**context, "row": failing}  # type: ignore[attr-defined]
                raise

        return run


def _error(violation: PropertyError, source: EnvSource, protocol: Protocol | None, reproducible: bool,
           examples: int) -> JaxEnvCheckError:
    return JaxEnvCheckError(
        property=violation.property,
        detail=violation.detail,
        seed=getattr(violation, "row_seed", violation.seed),
        actions=violation.actions,
        step=violation.step,
        where=violation.where,
        env_name=source.name,
        construction=source.construction,
        imports=tuple(source.imports),
        reproducible=reproducible,
        examples=examples,
        statement=JAX_PROPERTIES.get(violation.property, ""),
        kind="jax",
        style=protocol.style if protocol is not None else "",
        context=getattr(violation, "context", {}),
    )


def _probed(source: EnvSource, options: dict[str, Any], examples: int) -> _Check:
    """A :class:`_Check` of ``source`` whose one-off probes (declared spaces, compile once,
    tracing purity) passed; the first that broke raises its :class:`JaxEnvCheckError`."""
    check: _Check | None = None
    try:
        check = _Check(source, options)
        check.probe()
    except PropertyError as violation:
        raise _error(violation, source, check.protocol if check else None, True, examples) from None
    return check


def check_jax_env(
    env: Any,
    *,
    max_examples: int = 100,
    max_steps: int = 100,
    batch: int = DEFAULT_BATCH,
    eager_steps: int = 4,
    random_seed: int | None = 0,
    budget: float | None = None,
    database: Any = None,
    masks: bool = True,
    illegal_actions: bool = False,
    determinism: bool = True,
    hygiene: bool = True,
    skip: Any = (),
) -> JaxEnvCheckReport:
    """Check a functional JAX environment (gymnax, Jumanji, pgx, Brax styles) under ``jit``
    and ``vmap`` on Hypothesis-drawn keys and action sequences.

    ``env``: an id (``"gymnax:CartPole-v1"``, ``"jumanji:Snake-v1"``, ``"pgx:connect_four"``),
    an environment, gymnax's ``(env, params)`` pair, a factory or ``"module:factory"``.
    ``max_examples`` compiled batches of ``batch`` rows (fewer for large observations) of up
    to ``max_steps`` steps; ``eager_steps``: steps of the drawn row replayed without ``jit``;
    ``masks``: draw legal actions under a published mask (``illegal_actions``: one draw in
    four ignores it); ``determinism``: the relational laws (purity, jit-eager, global-rng,
    batching); ``skip``: names of properties not to check (reported as not checked);
    ``random_seed``, ``budget``, ``database`` as for
    :func:`~spacealg.testing.check_env` (``hygiene`` is accepted for the CLI and has no
    effect here). The properties are :data:`~.properties.JAX_PROPERTIES`.
    Returns a :class:`JaxEnvCheckReport`; raises :class:`JaxEnvCheckError`.
    """
    del hygiene
    _options(max_examples, max_steps, batch, eager_steps, budget)
    options = {"max_steps": int(max_steps), "batch": int(batch), "eager_steps": int(eager_steps), "masks": masks,
               "illegal_actions": illegal_actions, "determinism": determinism, "skip": tuple(skip)}
    source = jax_source(env)
    started = time.perf_counter()
    check = _probed(source, options, examples=0)
    setup = time.perf_counter() - started
    clock = Budget(budget)
    name = f"jax:{source.name}"
    outcome = search(check.body(clock, Focus()), max_examples=max_examples, random_seed=random_seed, budget=clock,
                     database=database, name=name)
    if outcome.violation is not None:  # refined as every check's failures are (the engine's refine)
        best = refine(outcome, source, lambda source, stats, clock, focus: check.body(clock, focus), check.stats,
                      budget, frozenset(), max_examples, random_seed, name)
        assert best.violation is not None
        raise _error(best.violation, source, check.protocol, best.reproducible, best.examples) from None
    return JaxEnvCheckReport(
        source.name,
        outcome.examples,
        check.stats["steps"],
        check.stats["episodes"],
        time.perf_counter() - started,
        tuple(sorted(check.checked, key=list(JAX_PROPERTIES).index)),
        (),
        outcome.out_of_time,
        "jax",
        not_checked=check.skipped,
        rollout_seconds=check.rollout_seconds,
        setup_seconds=setup,
        style=check.protocol.style,
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
    if seed is None:
        options = {"max_steps": 1, "batch": 1, "eager_steps": 0, "masks": masks, "illegal_actions": False,
                   "determinism": True, "skip": ("batching", "jit-eager")}
        _probed(source, options, examples=1)
        return
    protocol = adapt(source.make())
    steps = len(actions)
    checked, _ = _checked(protocol, masks, False, True)
    checked -= {"batching", "action-in-space"}
    rollouts = Rollouts(protocol, max(steps, 1), masks, False)
    try:
        if steps:
            stacked = jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *actions)
            out0, traj = jax.device_get(rollouts.replay(np.uint32(seed), stacked))
            batch0 = jax.tree.map(lambda a: np.asarray(a)[None], (out0, traj))
        else:  # the reset alone: one drawn step, none of it checked
            key = jax.random.key(0)[None]
            batch0 = jax.device_get(rollouts.drawn(np.asarray([seed], np.uint32), key))
        found = first_violation(protocol, batch0[0], batch0[1], steps, checked)
        if found is None and steps:
            compare_row(rollouts, seed, (out0, traj), stacked, steps, eager_steps, checked)
        if found is not None:
            _, step, prop, detail = found
            raise PropertyError(prop, detail, step)
    except PropertyError as violation:
        violation.seed = seed
        violation.actions = list(actions[: violation.step or 0])
        raise _error(violation, source, protocol, True, 1) from None
