"""Checkers for dm_env and TorchRL environments: ``check_dm_env`` and ``check_torchrl_env``.

They share the validation core: Hypothesis draws the episodes (an rng seed, a length, and
actions drawn from the declared action spec through spacealg's adapters), shrinks a failure
to the shortest one, and raises :class:`~spacealg.testing.errors.EnvCheckError` naming the
broken property, the seed and the actions; a sound environment returns an
:class:`~spacealg.testing.runner.EnvCheckReport`. :func:`foreign_checker` tells
``check``/``check_env`` which checker an environment needs (None for a Gymnasium one).

dm_env properties (:data:`DM_ENV_PROPERTIES`) and TorchRL properties
(:data:`TORCHRL_PROPERTIES`) are listed with their statements below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from spacealg.core.protocol import sample
from spacealg.testing.driver import Budget, Focus, describe_exception
from spacealg.testing.errors import EnvCheckError, PropertyError
from spacealg.testing.resolve import EnvSource, resolve
from spacealg.testing.runner import EnvCheckReport, close, drawn_body, run_check

__all__ = [
    "DM_ENV_PROPERTIES",
    "TORCHRL_PROPERTIES",
    "ForeignEnvCheckError",
    "check_dm_env",
    "check_torchrl_env",
    "foreign_checker",
]

DM_ENV_PROPERTIES: dict[str, str] = {
    "declared-specs": "observation_spec, action_spec, reward_spec and discount_spec are dm_env specs",
    "no-exception": "reset() and step(action) raise no exception for an action of the action spec",
    "timestep": "reset and step return a dm_env.TimeStep",
    "first-step": "reset returns a FIRST time step with reward and discount None",
    "step-type": "step returns a MID or LAST time step with a reward and a discount",
    "observation-in-spec": "every observation passes observation_spec().validate",
    "reward-in-spec": "every reward passes reward_spec().validate",
    "discount-in-spec": "every discount passes discount_spec().validate and lies in [0, 1]",
    "reset-after-done": "reset works after a LAST time step",
}

TORCHRL_PROPERTIES: dict[str, str] = {
    "declared-specs": "the environment's specs are TorchRL specs; reward and done specs have the "
    "environment's batch shape as their leading dimensions and the same shape as each other",
    "no-exception": "reset() and step(td) raise no exception for an action of the action spec",
    "observation-in-spec": "every observation entry is in its observation spec (is_in, same shape)",
    "reward-in-spec": "every reward has the shape and dtype of reward_spec and is in it",
    "done-in-spec": "done, terminated and truncated have the shapes of their done specs and are bool",
    "reset-after-done": "reset works after an episode has ended",
}


def _validates(spec: Any, value: Any) -> bool:
    """dm_env membership of a (possibly nested) value: ``validate`` leaf by leaf."""
    if isinstance(spec, Mapping):
        return isinstance(value, Mapping) and value.keys() == spec.keys() and all(
            _validates(s, value[k]) for k, s in spec.items()
        )
    if isinstance(spec, (tuple, list)):
        return isinstance(value, (tuple, list)) and len(value) == len(spec) and all(
            _validates(s, v) for s, v in zip(spec, value)
        )
    try:
        spec.validate(value)
        return True
    except (ValueError, TypeError):
        return False


def _require(condition: bool, prop: str, detail: str, step: int | None) -> None:
    if not condition:
        raise PropertyError(prop, detail, step)


# -- the search: the runner every checker shares ----------------------------------------------

ForeignEnvCheckError = EnvCheckError
"""The error of a dm_env or TorchRL check (an :class:`EnvCheckError` of kind ``"dm_env"`` or
``"torchrl"``, whose reproduction replays the actions through that API)."""


def _body(
    source: EnvSource, episode: Callable[[Any, int, int, list[Any]], int], max_steps: int
) -> Callable[[EnvSource, dict[str, int], Budget, Focus], Callable[[Any], None]]:
    """The Hypothesis body of a foreign check on :func:`~spacealg.testing.runner.run_check`:
    the length and seed drawn as every checker draws them; the actions drawn by the
    episode from the seed (through spacealg's adapters); any exception is ``no-exception``."""

    def make_body(source: EnvSource, stats: dict[str, int], clock: Budget, focus: Focus) -> Callable[[Any], None]:
        def run(data: Any, seed: int, n: int, taken: list[Any]) -> None:
            env = source.make()
            try:
                stats["steps"] += episode(env, seed % 2**31, n, taken)
                stats["episodes"] += 1
            except PropertyError:
                raise
            except Exception as error:
                raise PropertyError("no-exception", describe_exception(error), len(taken) or None) from error
            finally:
                close(env, source)

        return drawn_body(run, max_steps=max_steps, limit=None, clock=clock, focus=focus)

    return make_body


def _search(
    source: EnvSource,
    episode: Callable[[Any, int, int, list[Any]], int],
    table: dict[str, str],
    api: str,
    *,
    max_examples: int,
    max_steps: int,
    random_seed: int | None,
) -> EnvCheckReport:
    return run_check(
        source,
        _body(source, episode, max_steps),
        max_examples=max_examples,
        random_seed=random_seed,
        kind=api,
        properties=tuple(table),
        not_checked={},
    )


# -- dm_env -----------------------------------------------------------------------------------


def _dm_env_episode(env: Any, seed: int, steps: int, taken: list[Any]) -> int:
    import dm_env

    from spacealg.adapters.dm_env import from_dm_env

    specs = {name: getattr(env, f"{name}_spec")() for name in ("observation", "action", "reward", "discount")}
    try:
        action_space = from_dm_env(specs["action"])
        from_dm_env(specs["observation"])
    except TypeError as error:
        raise PropertyError("declared-specs", str(error), None) from None
    rng = np.random.default_rng(seed)

    def observe(step: Any, k: int | None) -> bool:
        _require(isinstance(step, dm_env.TimeStep), "timestep", f"got {type(step).__qualname__}", k)
        _require(_validates(specs["observation"], step.observation), "observation-in-spec",
                 f"observation {step.observation!r} fails {specs['observation']!r}", k)
        if k is None or step.first():
            _require(step.first() and step.reward is None and step.discount is None, "first-step",
                     f"reset returned step_type={step.step_type}, reward={step.reward!r}, discount={step.discount!r}",
                     k)
            return False
        _require(step.mid() or step.last(), "step-type", f"step returned step_type={step.step_type}", k)
        _require(_validates(specs["reward"], step.reward), "reward-in-spec",
                 f"reward {step.reward!r} fails {specs['reward']!r}", k)
        discount = step.discount
        inside = _validates(specs["discount"], discount) and bool(np.all((np.asarray(discount) >= 0)
                                                                          & (np.asarray(discount) <= 1)))
        _require(inside, "discount-in-spec", f"discount {discount!r} fails {specs['discount']!r} or [0, 1]", k)
        return bool(step.last())

    observe(env.reset(), None)
    for k in range(1, steps + 1):
        action = _native(specs["action"], sample(action_space, rng=rng))
        taken.append(np.asarray(action).tolist())
        if observe(env.step(action), k):
            try:
                observe(env.reset(), None)
            except PropertyError as violation:
                raise PropertyError(
                    "reset-after-done", violation.detail, k, "at the reset after the episode ended"
                ) from None
    return steps


def _native(spec: Any, value: Any) -> Any:
    """A spacealg value of ``from_dm_env(spec)`` as dm_env's value (arrays of the spec's dtype)."""
    if isinstance(spec, Mapping):
        return {k: _native(s, value[k]) for k, s in spec.items()}
    if isinstance(spec, (tuple, list)):
        return type(spec)(_native(s, v) for s, v in zip(spec, value))
    return np.asarray(value, dtype=spec.dtype)


def check_dm_env(
    env: Any, *, max_examples: int = 20, max_steps: int = 50, random_seed: int | None = 0, **options: Any
) -> EnvCheckReport:
    """Check a dm_env environment (an instance, a zero-argument factory or ``"module:factory"``)
    on Hypothesis-drawn episodes: time step types, observation, reward and discount specs
    (see :data:`DM_ENV_PROPERTIES`). Raises EnvCheckError naming the broken property.

    ``options``: the other options of :func:`check_env` are accepted and have no effect here
    (dm_env's ``reset`` takes no seed, so there is no determinism to check)."""
    return _search(resolve(env), _dm_env_episode, DM_ENV_PROPERTIES, "dm_env", max_examples=max_examples,
                   max_steps=max_steps, random_seed=random_seed)


# -- TorchRL ----------------------------------------------------------------------------------


def _torchrl_specs(env: Any) -> None:
    batch = tuple(env.batch_size)
    reward = env.reward_spec
    shape = tuple(reward.shape)
    _require(shape[: len(batch)] == batch, "declared-specs",
             f"reward_spec.shape {shape} does not start with the batch size {batch}", None)
    for key, spec in env.full_done_spec.items(True, True):
        _require(tuple(spec.shape) == shape, "declared-specs",
                 f"done spec {key!r} has shape {tuple(spec.shape)}, reward_spec {shape}", None)


def _torchrl_episode(env: Any, seed: int, steps: int, taken: list[Any]) -> int:
    import torch

    _torchrl_specs(env)
    env.set_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    observations, done_specs = env.full_observation_spec, env.full_done_spec

    def observe(td: Any, k: int | None) -> bool:
        for key, spec in observations.items(True, True):
            value = td.get(key)
            ok = tuple(value.shape) == tuple(spec.shape) and bool(spec.is_in(value))
            _require(ok, "observation-in-spec", f"observation {key!r} = {value!r} is not in {spec!r}", k)
        ended = False
        for key, spec in done_specs.items(True, True):
            value = td.get(key)
            ok = value.dtype == torch.bool and tuple(value.shape) == tuple(spec.shape)
            _require(ok, "done-in-spec", f"{key!r} = {value!r} does not match {spec!r}", k)
            ended = ended or (key == "done" and bool(value.any()))
        return ended

    observe(env.reset(), None)
    td = env.reset()
    for k in range(1, steps + 1):
        action = _draw(env.action_spec, generator)
        taken.append(action.tolist())
        td.set("action", action)
        td = env.step(td)
        following = td.get("next")
        reward, spec = following.get("reward"), env.reward_spec
        ok = tuple(reward.shape) == tuple(spec.shape) and reward.dtype == spec.dtype and bool(spec.is_in(reward))
        _require(ok, "reward-in-spec", f"reward {reward!r} does not match {spec!r}", k)
        if observe(following, k):
            try:
                td = env.reset()
                observe(td, k)
            except PropertyError as violation:
                raise PropertyError(
                    "reset-after-done", violation.detail, k, "at the reset after the episode ended"
                ) from None
        else:
            td = following.clone()
    return steps


def _draw(spec: Any, generator: Any) -> Any:
    """An action drawn through spacealg's TorchRL adapter, seeded by the episode's seed."""
    return sample(spec, rng=int(torch_seed(generator)))


def torch_seed(generator: Any) -> int:
    import torch

    return int(torch.randint(0, 2**31 - 1, (), generator=generator))


def check_torchrl_env(env: Any, *, max_examples: int = 10, max_steps: int = 30,
                      random_seed: int | None = 0, **options: Any) -> EnvCheckReport:
    """Check a TorchRL environment (an instance, a zero-argument factory or
    ``"module:factory"``) on Hypothesis-drawn episodes: reward and done spec shapes, and
    every observation, reward and done flag against its spec (see :data:`TORCHRL_PROPERTIES`).

    ``options``: the other options of :func:`check_env` are accepted and have no effect here."""
    return _search(resolve(env), _torchrl_episode, TORCHRL_PROPERTIES, "torchrl", max_examples=max_examples,
                   max_steps=max_steps, random_seed=random_seed)


# -- dispatch ---------------------------------------------------------------------------------


def foreign_checker(env: Any) -> Callable[..., EnvCheckReport] | None:
    """The checker for a dm_env or TorchRL environment instance; None for any other."""
    roots = {cls.__module__.partition(".")[0] for cls in type(env).__mro__}
    if "dm_env" in roots:
        return check_dm_env
    if "torchrl" in roots:
        return check_torchrl_env
    return None
checker_for = foreign_checker  # the name testing.suite looks up
