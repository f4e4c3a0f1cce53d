"""``check_env``: property-based checking of a Gymnasium environment.

Hypothesis draws a reset seed, an episode length ``n <= max_steps`` and, step by step,
actions from the declared action space (:func:`spacealg.strategies.members`, so actions
have the action space's dtypes). The environment is reset with the seed and stepped ``n``
times, reset again whenever an episode ends; then (``determinism=True``) the same seed and
actions are replayed and the two trajectories compared. Every property of
:data:`~spacealg.testing.errors.PROPERTIES` is checked at every reset and step;
membership uses :func:`spacealg.contains`, which on a Gymnasium space is the space's own
``contains`` (Gymnasium's dtype policy: a float64 observation is not in a float32 Box).
The first broken property is shrunk by Hypothesis to the smallest seed and the shortest
action sequence, and raised as :class:`EnvCheckError`.

Law: a sound environment passes (returns an :class:`EnvCheckReport`); an environment that
breaks a property for some seed and actions reachable within ``max_steps`` steps raises,
with a probability that grows with ``max_examples``.
"""

from __future__ import annotations

import contextlib
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.core.protocol import contains
from spacealg.strategies.members import members
from spacealg.testing.driver import (
    DEFAULT_BUDGET,
    SEEDS,
    Budget,
    Focus,
    Outcome,
    describe_exception,
    first_difference,
    global_rng,
    same,
    search,
    snapshot,
)
from spacealg.testing.errors import OPTIONAL_PROPERTIES, PROPERTIES, EnvCheckError, PropertyError, literal
from spacealg.testing.masks import MaskedAction, check_mask, find_mask, is_rejection
from spacealg.testing.resolve import EnvSource, resolve

__all__ = ["DEFAULT_MAX_EXAMPLES", "DEFAULT_MAX_STEPS", "EnvCheckReport", "check_env"]

DEFAULT_MAX_EXAMPLES = 100
DEFAULT_MAX_STEPS = 100


@dataclass
class EnvCheckReport:
    """A passed check: what was checked, and how much."""

    env_name: str
    examples: int
    steps: int
    episodes: int
    seconds: float
    properties: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    out_of_time: bool = False  # the time budget ended the search before max_examples
    kind: str = "gymnasium"

    def __str__(self) -> str:
        budget = " (the time budget ended the search)" if self.out_of_time else ""
        return (
            f"{self.env_name}: {len(self.properties)} properties held over {self.examples} examples "
            f"({self.steps:,} steps, {self.episodes:,} episodes) in {self.seconds:.1f} s{budget}"
        )


def is_member(x: Any, space: Any) -> bool:
    """``contains(x, space)``, False where even that raises (a broken custom space)."""
    try:
        return bool(contains(x, space))
    except Exception:
        return False


def _short(value: Any) -> str:
    text = (
        literal(value)
        if not isinstance(value, np.ndarray) or value.size <= 32
        else (f"array of shape {value.shape} and dtype {value.dtype}")
    )
    return text if len(text) <= 400 else text[:400] + " ..."


def is_real_scalar(reward: Any) -> bool:
    """An int, a float or a numpy integer/floating scalar; not a bool, not an array."""
    if isinstance(reward, (bool, np.bool_)):
        return False
    return isinstance(reward, (numbers.Real, np.integer, np.floating))


def check_reward(reward: Any, step: int, who: str = "") -> None:
    if not is_real_scalar(reward):
        raise PropertyError(
            "reward-finite-real",
            f"{who}reward is {_short(reward)} of type {type(reward).__name__}",
            step,
        )
    if not np.isfinite(reward):
        raise PropertyError("reward-finite-real", f"{who}reward is {reward!r}", step)


def check_flags(terminated: Any, truncated: Any, step: int, who: str = "") -> None:
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if not isinstance(flag, (bool, np.bool_)):
            raise PropertyError(
                f"{name}-bool", f"{who}{name} is {_short(flag)} of type {type(flag).__name__}", step
            )


def check_info(info: Any, step: int | None, where: str = "", who: str = "") -> None:
    if not isinstance(info, dict):
        raise PropertyError(
            "info-dict", f"{who}info is {_short(info)} of type {type(info).__name__}", step, where
        )


def check_observation(obs: Any, space: Any, step: int | None, where: str = "", who: str = "") -> None:
    if not is_member(obs, space):
        kind = f"{type(obs).__name__}"
        if isinstance(obs, np.ndarray):
            kind += f" of shape {obs.shape} and dtype {obs.dtype}"
        raise PropertyError(
            "observation-in-space",
            f"{who}observation {_short(obs)} ({kind}) is not in {space!r}",
            step,
            where,
        )


def after_done(step: int) -> str:
    return f"at the reset after the episode ended at step {step}"


def action_fallback(space: Any, seed: int) -> Callable[[list[np.ndarray] | None], Any]:
    """Actions from a numpy generator (for the tail of a long episode, beyond what Hypothesis
    draws): legal under the mask factors when given."""
    g = np.random.default_rng(seed)
    if hasattr(space, "seed") and hasattr(space, "sample"):
        space.seed(int(g.integers(2**31)))
        whole: Callable[[], Any] = space.sample
    else:
        from spacealg.core.protocol import sample

        def whole() -> Any:
            return sample(space, rng=g)

    def draw(factors: list[np.ndarray] | None) -> Any:
        if factors is None:
            return whole()
        picks = [int(g.choice(np.flatnonzero(f))) for f in factors]
        start = np.asarray(getattr(space, "start", 0))
        if len(factors) == 1 and type(space).__name__ == "Discrete":
            return space.dtype.type(int(start) + picks[0])
        return (np.asarray(picks) + start).astype(space.dtype)

    return draw


class Episode:
    """One run of the environment from a seed through a sequence of actions.

    ``next_action(factors)`` gives the next action; ``factors`` is the checked action mask
    (one bool vector per factor) where the environment publishes one, else None."""

    def __init__(
        self,
        env: Any,
        seed: int,
        n: int,
        next_action: Callable[..., Any],
        *,
        masks: bool = True,
        illegal: bool = False,
    ) -> None:
        self.env, self.seed, self.n, self.next_action = env, seed, n, next_action
        self.observation_space = env.observation_space
        self.action_space = getattr(env, "action_space", None)
        self.masks, self.illegal = masks, illegal
        self.trace: list[Any] = []
        self.steps = 0
        self.episodes = 1
        self.last: tuple[Any, Any] = (None, None)
        self.held: Any = None  # (the observation as returned, a copy) to detect aliasing

    def _hold(self, obs: Any, step: int | None) -> None:
        """Check that the previously returned observation was not mutated, and hold this one."""
        if self.held is not None:
            returned, copied, at = self.held
            if isinstance(returned, np.ndarray) and not same(returned, copied):
                raise PropertyError(
                    "observation-aliasing",
                    f"the observation returned {'at reset' if at is None else f'at step {at}'} was "
                    f"changed in place afterwards: it was {_short(copied)} and is now {_short(returned)}",
                    step,
                )
        self.held = (obs, snapshot(obs), step)

    def reset(self, done_at: int | None) -> None:
        where = after_done(done_at) if done_at is not None else ""
        prop = "reset-after-done" if done_at is not None else "reset-signature"
        try:
            result = self.env.reset(seed=self.seed) if done_at is None else self.env.reset()
        except Exception as error:
            raise PropertyError(
                "reset-after-done" if done_at is not None else "no-exception",
                f"reset() raised {describe_exception(error)}",
                done_at,
                where,
            ) from error
        if not (isinstance(result, tuple) and len(result) == 2):
            raise PropertyError(
                prop, f"reset returned {_short(result)} instead of (observation, info)", done_at, where
            )
        obs, info = result
        check_observation(obs, self.observation_space, done_at, where)
        check_info(info, done_at, where)
        self._hold(obs, done_at)
        self.last = (obs, info)
        self.trace.append(("reset", snapshot(obs), snapshot(info)))

    def _factors(self, k: int) -> list[np.ndarray] | None:
        if not self.masks:
            return None
        mask = find_mask(*self.last)
        if mask is None:
            return None
        return check_mask(mask, self.action_space, True, k - 1 or None)

    def step(self, k: int) -> bool:
        factors = self._factors(k)
        action = self.next_action(factors)
        legal = factors is None or MaskedAction(self.action_space).is_legal(action, factors)
        try:
            result = self.env.step(action)
        except Exception as error:
            if not legal and is_rejection(error):  # a clear rejection: start a new episode
                self.trace.append(("rejected", type(error).__name__))
                self.steps += 1
                return True
            prop = "no-exception" if legal else "illegal-action"
            raise PropertyError(
                prop,
                f"step({literal(action)}){'' if legal else ', an action outside the mask,'} raised "
                f"{describe_exception(error)}",
                k,
            ) from error
        if not (isinstance(result, tuple) and len(result) == 5):
            size = f"a {len(result)}-tuple" if isinstance(result, tuple) else type(result).__name__
            raise PropertyError("step-signature", f"step returned {size}: {_short(result)}", k)
        obs, reward, terminated, truncated, info = result
        check_observation(obs, self.observation_space, k)
        check_reward(reward, k)
        check_flags(terminated, truncated, k)
        check_info(info, k)
        self._hold(obs, k)
        self.last = (obs, info)
        self.trace.append(
            ("step", snapshot(obs), snapshot(reward), bool(terminated), bool(truncated), snapshot(info))
        )
        self.steps += 1
        return bool(terminated or truncated)

    def run(self) -> list[Any]:
        self.reset(None)
        for k in range(1, self.n + 1):
            if self.step(k):
                self.reset(k)
                self.episodes += 1
        return self.trace


def compare(
    first: list[Any], second: list[Any], what: str = "(observation, reward, terminated, truncated, info)"
) -> None:
    """Raise reset-/step-determinism at the first difference between two traces."""
    i = first_difference(first, second)
    if i is None:
        return
    step = sum(1 for entry in first[:i] if entry[0] != "reset") + (first[i][0] != "reset" if i < len(first) else 0)
    a = first[i] if i < len(first) else None
    b = second[i] if i < len(second) else None
    if i == 0:
        raise PropertyError(
            "reset-determinism",
            f"reset(seed=...) returned {_short(a[1:])} and then {_short(b[1:])}",  # type: ignore[index]
        )
    kind = (a or b)[0]  # type: ignore[index]
    said = "the reset after the episode end" if kind == "reset" else "step"
    raise PropertyError(
        "step-determinism",
        f"replaying the same seed and actions, {said} returned {_short(a[1:] if a else None)} and then "
        f"{_short(b[1:] if b else None)}\n{what}",
        step,
    )


def _declared(env: Any) -> tuple[Any, Any, int | None]:
    try:
        action_space = env.action_space
        env.observation_space  # noqa: B018 - declared
        actions = members(action_space)
        actions.validate()
    except Exception as error:
        raise PropertyError(
            "declared-spaces", f"cannot draw actions from the action space: {describe_exception(error)}"
        ) from error
    return action_space, actions, episode_limit(env)


def fail(
    violation: PropertyError, source: EnvSource, reproducible: bool, examples: int, kind: str | bool
) -> EnvCheckError:
    kind = ("parallel" if kind else "gymnasium") if isinstance(kind, bool) else kind
    return EnvCheckError(
        property=violation.property,
        detail=violation.detail,
        seed=violation.seed,
        actions=violation.actions,
        step=violation.step,
        where=violation.where,
        env_name=source.name,
        construction=source.construction,
        imports=source.imports,
        parallel=kind == "parallel",
        reproducible=reproducible,
        examples=examples,
        kind=kind,
    )


def close(env: Any, source: EnvSource) -> None:
    """Close an environment the checker built (never one the caller passed in)."""
    if source.owned:
        with contextlib.suppress(Exception):
            env.close()


def probe(source: EnvSource, read: Callable[[Any], Any]) -> Any:
    """``read(env)`` on a freshly built environment (closed afterwards)."""
    env = source.make()
    try:
        return read(env)
    finally:
        close(env, source)


def run_check(
    source: EnvSource,
    make_body: Callable[[EnvSource, dict[str, int], Budget, Focus], Callable[[Any], None]],
    *,
    max_examples: int,
    random_seed: int | None,
    kind: str,
    properties: tuple[str, ...],
    budget: float | None = DEFAULT_BUDGET,
    database: Any = None,
    probes: Callable[[EnvSource, Budget], list[str]] | None = None,
) -> EnvCheckReport:
    """Run the one-off probes, then search for a violation; raise it as an EnvCheckError,
    or report (with the warnings of the probes, also issued as EnvCheckWarning). A violation
    found with ``k`` actions is refined: further searches look for the same property with
    fewer actions, over all seeds, until none is found (within the budget)."""
    stats = {"steps": 0, "episodes": 0}
    started = time.perf_counter()
    warned: list[str] = []
    try:
        clock = Budget(budget)
        body = make_body(source, stats, clock, Focus())
        if probes is not None:
            warned = probes(source, clock)
    except PropertyError as violation:
        raise fail(violation, source, True, 0, kind) from None
    name = f"{kind}:{source.name}"
    outcome = search(
        body, max_examples=max_examples, random_seed=random_seed, budget=clock, database=database, name=name
    )
    if outcome.violation is not None:
        best = outcome
        while best.reproducible and best.violation is not None and best.violation.actions and not clock.spent():
            found = best.violation
            focus = Focus(len(found.actions) - 1, found.property)
            shorter = search(
                make_body(source, stats, Budget(budget), focus),
                max_examples=max_examples,
                random_seed=random_seed,
                name=name,
            )
            if (
                shorter.violation is None
                or not shorter.reproducible
                or len(shorter.violation.actions) >= len(found.actions)
            ):
                break
            best = Outcome(shorter.violation, True, best.examples + shorter.examples)
        raise fail(best.violation, source, best.reproducible, best.examples, kind) from None  # type: ignore[arg-type]
    from spacealg.testing.lints import warn_all

    warn_all(source.name, warned)
    return EnvCheckReport(
        source.name,
        outcome.examples,
        stats["steps"],
        stats["episodes"],
        time.perf_counter() - started,
        properties,
        tuple(warned),
        outcome.out_of_time,
        kind,
    )


def run_example(
    source: EnvSource,
    episode: Callable[..., Any],
    seed: int,
    n: int,
    draw: Callable[..., Any],
    taken: list[Any],
    *,
    determinism: bool,
    stats: dict[str, int] | None = None,
    what: str = "(observation, reward, terminated, truncated, info)",
) -> None:
    """One example: run ``n`` steps from ``seed`` on a fresh environment, drawing actions
    with ``draw`` (which records them in ``taken``), then replay ``taken`` on the same
    instance and compare. The global ``random``/``numpy.random`` states are seeded
    differently for the two runs; a difference that goes away when they are seeded alike
    is reported as ``global-rng``. A PropertyError leaves with the seed and the actions up to
    the failure — all of them for a determinism failure, whose replay needs the whole first
    run on the same instance."""
    instance = source.make()
    try:
        with global_rng(1):
            first = episode(instance, seed, n, draw)
            trace = first.run()
        if stats is not None:
            stats["steps"] += first.steps
            stats["episodes"] += first.episodes
        if determinism:
            replayed = iter(list(taken))
            with global_rng(2):
                second = episode(instance, seed, n, lambda *_: snapshot(next(replayed)))
                again = second.run()
            try:
                compare(trace, again, what)
            except PropertyError as violation:
                if source.owned and _alike_with_same_globals(source, episode, seed, n, taken, what):
                    raise PropertyError(
                        "global-rng",
                        f"{violation.detail}\nwith the global random and numpy.random states seeded alike "
                        "before both runs, the runs agree: the environment draws from the global state",
                        violation.step,
                        violation.where,
                    ) from None
                raise
    except PropertyError as violation:
        violation.seed, violation.n = seed, n
        if violation.property.endswith("determinism") or violation.property == "global-rng":
            violation.actions = list(taken)
        else:
            violation.actions = taken[: violation.step] if violation.step is not None else []
        raise
    finally:
        close(instance, source)


def _replayer(taken: list[Any]) -> Callable[..., Any]:
    """A draw function that gives the recorded actions again, in order."""
    replayed = iter(list(taken))
    return lambda *_: snapshot(next(replayed))


def _alike_with_same_globals(
    source: EnvSource, episode: Callable[..., Any], seed: int, n: int, taken: list[Any], what: str
) -> bool:
    instance = source.make()
    try:
        traces = []
        for _ in range(2):
            with global_rng(1):
                traces.append(episode(instance, seed, n, _replayer(taken)).run())
        return first_difference(*traces) is None
    except Exception:
        return False
    finally:
        close(instance, source)


def episode_limit(env: Any) -> int | None:
    """The environment's own episode limit in steps (``spec.max_episode_steps``, a
    TimeLimit's ``_max_episode_steps``), capped at 2,000; None if it declares none."""
    limit = getattr(getattr(env, "spec", None), "max_episode_steps", None)
    if limit is None:
        limit = getattr(env, "_max_episode_steps", None)
    return min(int(limit), 2000) if isinstance(limit, (int, np.integer)) and limit > 0 else None


def check_env(
    env: Any,
    *,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    max_steps: int = DEFAULT_MAX_STEPS,
    determinism: bool = True,
    random_seed: int | None = 0,
    budget: float | None = DEFAULT_BUDGET,
    database: Any = None,
    masks: bool = True,
    illegal_actions: bool = False,
    hygiene: bool = True,
) -> EnvCheckReport:
    """Check a Gymnasium environment's properties on Hypothesis-generated episodes.

    ``env``: an instance, a zero-argument factory, a registered id or ``"module:factory"``.
    ``max_examples``: episodes drawn (before shrinking); ``max_steps``: longest episode
    drawn (episodes that end earlier are reset and continued; one example in eight runs up
    to just past the environment's own ``max_episode_steps`` when it has one); ``determinism``:
    replay each episode and compare; ``random_seed``: the seed of Hypothesis' search (None:
    random, so repeated runs explore differently); ``budget``: seconds the search may take
    (and as many for shrinking a failure; None: no limit); ``database``: a directory or a
    Hypothesis ``ExampleDatabase`` where failures are saved and replayed first (default None:
    none, nothing written); ``masks``: draw legal actions under a published
    ``info["action_mask"]`` and check the mask; ``illegal_actions``: draw some actions outside
    the mask too; ``hygiene``: the one-off RNG and API probes and declaration lints (see
    :mod:`spacealg.testing.probes`). Returns an :class:`EnvCheckReport`; raises
    :class:`EnvCheckError` naming the broken property, the seed and the shortest action
    sequence found.
    """
    from spacealg.testing.foreign import foreign_checker  # dm_env and TorchRL instances (issue 15)

    checker = foreign_checker(env)
    if checker is not None:
        return checker(env, max_examples=max_examples, max_steps=max_steps, random_seed=random_seed)
    source = resolve(env)
    _check_options(max_examples=max_examples, max_steps=max_steps, budget=budget)

    def make_body(source: EnvSource, stats: dict[str, int], clock: Budget, focus: Focus) -> Callable[[Any], None]:
        space, actions, limit = probe(source, _declared)

        def body(data: Any) -> None:
            n = focus.length(data, max_steps, limit)
            seed = data.draw(SEEDS, label="seed")
            clock.admit(seed, n)
            taken: list[Any] = []
            tail = action_fallback(space, data.draw(SEEDS, label="tail")) if n > max_steps else None

            def draw(factors: list[np.ndarray] | None) -> Any:
                if tail is not None and len(taken) >= max_steps:
                    action = tail(factors)
                elif factors is None:
                    action = data.draw(actions)
                else:
                    action = MaskedAction(space, illegal_actions).draw(data, factors, actions)[0]
                taken.append(snapshot(action))
                return action

            def episode(env: Any, seed: int, n: int, next_action: Callable[..., Any]) -> Episode:
                return Episode(env, seed, n, next_action, masks=masks, illegal=illegal_actions)

            try:
                run_example(source, episode, seed, n, draw, taken, determinism=determinism, stats=stats)
            except PropertyError as violation:
                if not focus.ignores(violation):
                    raise

        return body

    checked = tuple(
        p
        for p in PROPERTIES
        if (determinism or not (p.endswith("determinism") or p == "global-rng"))
        and (illegal_actions or p not in OPTIONAL_PROPERTIES)
        and (masks or p != "action-mask")
        and (hygiene or p not in HYGIENE)
    )
    from spacealg.testing.probes import single_probes

    return run_check(
        source,
        make_body,
        max_examples=max_examples,
        random_seed=random_seed,
        kind="gymnasium",
        properties=checked,
        budget=budget,
        database=database,
        probes=single_probes if hygiene else None,
    )


HYGIENE = ("reset-seed", "reset-stream", "reset-options", "close-twice", "render-modes")
"""The properties of the one-off probes (checked with ``hygiene=True``)."""


def _check_options(**options: Any) -> None:
    for name in ("max_examples", "max_steps"):
        value = options.get(name)
        if name in options and (not isinstance(value, (int, np.integer)) or value < (name == "max_examples")):
            raise ValueError(f"{name} must be an int >= {int(name == 'max_examples')}, got {value!r}")
    budget = options.get("budget")
    if budget is not None and not (isinstance(budget, (int, float)) and budget > 0):
        raise ValueError(f"budget must be a positive number of seconds or None, got {budget!r}")
