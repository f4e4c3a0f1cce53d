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
from hypothesis import strategies as st

from spacealg.core.protocol import contains
from spacealg.strategies.members import members
from spacealg.testing.driver import SEEDS, describe_exception, first_difference, search, snapshot
from spacealg.testing.errors import PROPERTIES, EnvCheckError, PropertyError, literal
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

    def __str__(self) -> str:
        return (
            f"{self.env_name}: {len(self.properties)} properties held over {self.examples} examples "
            f"({self.steps:,} steps, {self.episodes:,} episodes) in {self.seconds:.1f} s"
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


class Episode:
    """One run of the environment from a seed through a sequence of actions."""

    def __init__(self, env: Any, seed: int, n: int, next_action: Callable[[], Any]) -> None:
        self.env, self.seed, self.n, self.next_action = env, seed, n, next_action
        self.observation_space = env.observation_space
        self.trace: list[Any] = []
        self.steps = 0
        self.episodes = 1

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
        self.trace.append(("reset", snapshot(obs)))

    def step(self, k: int) -> bool:
        action = self.next_action()
        try:
            result = self.env.step(action)
        except Exception as error:
            raise PropertyError(
                "no-exception", f"step({literal(action)}) raised {describe_exception(error)}", k
            ) from error
        if not (isinstance(result, tuple) and len(result) == 5):
            size = f"a {len(result)}-tuple" if isinstance(result, tuple) else type(result).__name__
            raise PropertyError("step-signature", f"step returned {size}: {_short(result)}", k)
        obs, reward, terminated, truncated, info = result
        check_observation(obs, self.observation_space, k)
        check_reward(reward, k)
        check_flags(terminated, truncated, k)
        check_info(info, k)
        self.trace.append(("step", snapshot(obs), snapshot(reward), bool(terminated), bool(truncated)))
        self.steps += 1
        return bool(terminated or truncated)

    def run(self) -> list[Any]:
        self.reset(None)
        for k in range(1, self.n + 1):
            if self.step(k):
                self.reset(k)
                self.episodes += 1
        return self.trace


def compare(first: list[Any], second: list[Any]) -> None:
    """Raise reset-/step-determinism at the first difference between two traces."""
    i = first_difference(first, second)
    if i is None:
        return
    step = sum(1 for entry in first[:i] if entry[0] == "step") + (first[i][0] == "step")
    a = first[i] if i < len(first) else None
    b = second[i] if i < len(second) else None
    if i == 0:
        raise PropertyError(
            "reset-determinism",
            f"reset(seed=...) returned {_short(a[1])} and then {_short(b[1])}",  # type: ignore[index]
        )
    what = "the reset after the episode end" if (a or b)[0] == "reset" else "step"  # type: ignore[index]
    raise PropertyError(
        "step-determinism",
        f"replaying the same seed and actions, {what} returned {_short(a[1:])} and then {_short(b[1:])}"  # type: ignore[index]
        "\n(observation, reward, terminated, truncated)",
        step,
    )


def _declared(env: Any) -> tuple[Any, Any]:
    try:
        obs_space, action_space = env.observation_space, env.action_space
        actions = members(action_space)
        actions.validate()
    except Exception as error:
        raise PropertyError(
            "declared-spaces", f"cannot draw actions from the action space: {describe_exception(error)}"
        ) from error
    return obs_space, actions


def fail(
    violation: PropertyError, source: EnvSource, reproducible: bool, examples: int, parallel: bool
) -> EnvCheckError:
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
        parallel=parallel,
        reproducible=reproducible,
        examples=examples,
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
    make_body: Callable[[EnvSource, dict[str, int]], Callable[[Any], None]],
    *,
    max_examples: int,
    random_seed: int | None,
    parallel: bool,
    properties: tuple[str, ...],
) -> EnvCheckReport:
    """Search for a violation; raise it as an EnvCheckError, or report."""
    stats = {"steps": 0, "episodes": 0}
    started = time.perf_counter()
    try:
        body = make_body(source, stats)
    except PropertyError as violation:
        raise fail(violation, source, True, 0, parallel) from None
    outcome = search(body, max_examples=max_examples, random_seed=random_seed)
    if outcome.violation is not None:
        raise fail(outcome.violation, source, outcome.reproducible, outcome.examples, parallel) from None
    return EnvCheckReport(
        source.name,
        outcome.examples,
        stats["steps"],
        stats["episodes"],
        time.perf_counter() - started,
        properties,
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
) -> None:
    """One example: run ``n`` steps from ``seed`` on a fresh environment, drawing actions
    with ``draw`` (which records them in ``taken``), then replay ``taken`` and compare.
    A PropertyError leaves with the seed and the actions up to the failure."""
    instance = source.make()
    try:
        first = episode(instance, seed, n, draw)
        trace = first.run()
        if stats is not None:
            stats["steps"] += first.steps
            stats["episodes"] += first.episodes
        if determinism:
            replayed = iter(list(taken))
            second = episode(instance, seed, n, lambda *_: snapshot(next(replayed)))
            compare(trace, second.run())
    except PropertyError as violation:
        violation.seed = seed
        violation.actions = taken[: violation.step] if violation.step is not None else []
        raise
    finally:
        close(instance, source)


def check_env(
    env: Any,
    *,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    max_steps: int = DEFAULT_MAX_STEPS,
    determinism: bool = True,
    random_seed: int | None = 0,
) -> EnvCheckReport:
    """Check a Gymnasium environment's properties on Hypothesis-generated episodes.

    ``env``: an instance, a zero-argument factory, a registered id or ``"module:factory"``.
    ``max_examples``: episodes drawn (before shrinking); ``max_steps``: longest episode
    drawn (episodes that end earlier are reset and continued); ``determinism``: replay
    each episode and compare; ``random_seed``: the seed of Hypothesis' search (None:
    random, so repeated runs explore differently). Returns an :class:`EnvCheckReport`;
    raises :class:`EnvCheckError` naming the broken property, the seed and the shortest
    action sequence found.
    """
    from spacealg.testing.foreign import foreign_checker  # dm_env and TorchRL instances (issue 15)

    checker = foreign_checker(env)
    if checker is not None:
        return checker(env, max_examples=max_examples, max_steps=max_steps, random_seed=random_seed)
    source = resolve(env)

    def make_body(source: EnvSource, stats: dict[str, int]) -> Callable[[Any], None]:
        _, actions = probe(source, _declared)

        def body(data: Any) -> None:
            seed = data.draw(SEEDS, label="seed")
            n = data.draw(st.integers(0, max_steps), label="steps")
            taken: list[Any] = []

            def draw() -> Any:
                action = data.draw(actions)
                taken.append(snapshot(action))
                return action

            run_example(source, Episode, seed, n, draw, taken, determinism=determinism, stats=stats)

        return body

    checked = tuple(p for p in PROPERTIES if determinism or not p.endswith("determinism"))
    return run_check(
        source,
        make_body,
        max_examples=max_examples,
        random_seed=random_seed,
        parallel=False,
        properties=checked,
    )
