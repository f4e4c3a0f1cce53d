"""Checkers for dm_env and TorchRL environments: ``check_dm_env`` and ``check_torchrl_env``.

They are kinds (:data:`DM_ENV`, :data:`TORCHRL`) run by the engine every checker shares
(:func:`~spacealg.testing.runner.check_kind`): Hypothesis draws the episodes (a seed, a
length, and actions drawn through :class:`~spacealg.testing.runner.Draws` from the declared
action spec, read through spacealg's adapters), shrinks a failure to the shortest one, and
raises :class:`~spacealg.testing.errors.EnvCheckError` naming the
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

from spacealg.testing.driver import describe_exception, tick
from spacealg.testing.errors import EnvCheckError, PropertyError
from spacealg.testing.runner import DEFAULT_OPTIONS, Declared, Draws, EnvCheckReport, EnvKind, check_kind

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


# -- the kinds: run by the engine every checker shares ---------------------------------------

ForeignEnvCheckError = EnvCheckError
"""The error of a dm_env or TorchRL check (an :class:`EnvCheckError` of kind ``"dm_env"`` or
``"torchrl"``, whose reproduction replays the actions through that API)."""


class ForeignEpisode:
    """One run of a dm_env or TorchRL environment: a reset, then ``n`` steps with the actions
    ``draw()`` gives (a reset after each end); any exception is ``no-exception`` at the step
    it broke. Subclasses say how to reset, step and observe."""

    def __init__(self, env: Any, seed: int, n: int, draw: Callable[..., Any], *, masks: bool = True) -> None:
        self.env, self.seed, self.n, self.draw = env, seed % 2**31, n, draw
        self.steps = 0
        self.episodes = 1

    def run(self) -> list[Any]:
        try:
            self.start()
            for k in range(1, self.n + 1):
                tick()  # past the check's deadline the episode stops here
                self.steps = k
                if self.step(k):
                    try:
                        self.restart(k)
                    except PropertyError as violation:
                        raise PropertyError(
                            "reset-after-done", violation.detail, k, "at the reset after the episode ended"
                        ) from None
                    self.episodes += 1
        except PropertyError:
            raise
        except Exception as error:
            raise PropertyError("no-exception", describe_exception(error), self.steps or None) from error
        return []

    def start(self) -> None:
        raise NotImplementedError

    def step(self, k: int) -> bool:
        raise NotImplementedError

    def restart(self, k: int) -> None:
        raise NotImplementedError


def _check_foreign(kind: EnvKind, env: Any, options: dict[str, Any]) -> EnvCheckReport:
    """``env`` checked as ``kind``: the options of :func:`~spacealg.testing.check_env` it
    knows apply (no determinism: these episodes are not replayed; no probes)."""
    given = {k: v for k, v in options.items() if k in DEFAULT_OPTIONS}
    return check_kind(kind, env, {**given, "determinism": False, "hygiene": False})  # type: ignore[typeddict-item]


# -- dm_env -----------------------------------------------------------------------------------


class DmEnvEpisode(ForeignEpisode):
    """A dm_env run: time step types, observation, reward and discount against the specs."""

    def observe(self, step: Any, k: int | None) -> bool:
        import dm_env

        specs = self.specs
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

    def start(self) -> None:
        names = ("observation", "action", "reward", "discount")
        self.specs = {name: getattr(self.env, f"{name}_spec")() for name in names}
        self.observe(self.env.reset(), None)

    def step(self, k: int) -> bool:
        return self.observe(self.env.step(self.draw()), k)

    def restart(self, k: int) -> None:
        self.observe(self.env.reset(), None)


def _dm_env_declared(env: Any) -> Declared:
    """The action spec as a space (``declared-specs`` where spacealg cannot read the specs);
    actions drawn from it, as dm_env's values."""
    from spacealg.adapters.dm_env import from_dm_env
    from spacealg.strategies.members import members

    spec = env.action_spec()
    try:
        space = from_dm_env(spec)
        from_dm_env(env.observation_spec())
        strategy = members(space)
    except TypeError as error:
        raise PropertyError("declared-specs", str(error), None) from None

    def draw(draws: Draws) -> Any:
        return _native(spec, draws.action(None, None, lambda: space, lambda: strategy))

    return draw, None


def _native(spec: Any, value: Any) -> Any:
    """A spacealg value of ``from_dm_env(spec)`` as dm_env's value (arrays of the spec's dtype)."""
    if isinstance(spec, Mapping):
        return {k: _native(s, value[k]) for k, s in spec.items()}
    if isinstance(spec, (tuple, list)):
        return type(spec)(_native(s, v) for s, v in zip(spec, value))
    return np.asarray(value, dtype=spec.dtype)


DM_ENV = EnvKind("dm_env", DmEnvEpisode, _dm_env_declared, "", DM_ENV_PROPERTIES)
"""The dm_env kind of :func:`~spacealg.testing.runner.check_kind`."""


def check_dm_env(
    env: Any, *, max_examples: int = 20, max_steps: int = 50, random_seed: int | None = 0, **options: Any
) -> EnvCheckReport:
    """Check a dm_env environment (an instance, a zero-argument factory or ``"module:factory"``)
    on Hypothesis-drawn episodes: time step types, observation, reward and discount specs
    (see :data:`DM_ENV_PROPERTIES`), with actions drawn from the action spec (as spacealg
    reads it) and shrunk to the shortest sequence. Raises EnvCheckError naming the broken
    property.

    ``options``: those of :func:`check_env` (``budget``, ``database``, ...); dm_env's
    ``reset`` takes no seed, so no determinism is checked and there are no probes."""
    options = {**options, "max_examples": max_examples, "max_steps": max_steps, "random_seed": random_seed}
    return _check_foreign(DM_ENV, env, options)


# -- TorchRL ----------------------------------------------------------------------------------


class TorchRLEpisode(ForeignEpisode):
    """A TorchRL run (seeded with ``set_seed``): every observation entry, reward and done
    flag against its spec."""

    def observe(self, td: Any, k: int | None) -> bool:
        import torch

        for key, spec in self.env.full_observation_spec.items(True, True):
            value = td.get(key)
            ok = tuple(value.shape) == tuple(spec.shape) and bool(spec.is_in(value))
            _require(ok, "observation-in-spec", f"observation {key!r} = {value!r} is not in {spec!r}", k)
        ended = False
        for key, spec in self.env.full_done_spec.items(True, True):
            value = td.get(key)
            ok = value.dtype == torch.bool and tuple(value.shape) == tuple(spec.shape)
            _require(ok, "done-in-spec", f"{key!r} = {value!r} does not match {spec!r}", k)
            ended = ended or (key == "done" and bool(value.any()))
        return ended

    def start(self) -> None:
        self.env.set_seed(self.seed)
        self.observe(self.env.reset(), None)
        self.td = self.env.reset()

    def step(self, k: int) -> bool:
        import torch

        env = self.env
        self.td.set("action", torch.as_tensor(self.draw(), dtype=env.action_spec.dtype))
        following = env.step(self.td).get("next")
        reward, spec = following.get("reward"), env.reward_spec
        ok = tuple(reward.shape) == tuple(spec.shape) and reward.dtype == spec.dtype and bool(spec.is_in(reward))
        _require(ok, "reward-in-spec", f"reward {reward!r} does not match {spec!r}", k)
        ended = self.observe(following, k)
        if not ended:
            self.td = following.clone()
        return ended

    def restart(self, k: int) -> None:
        self.td = self.env.reset()
        self.observe(self.td, k)


def _torchrl_declared(env: Any) -> Declared:
    """The reward and done specs' shapes (``declared-specs``); actions drawn from the action
    spec through spacealg's TorchRL adapter."""
    from spacealg.strategies.members import members

    batch = tuple(env.batch_size)
    shape = tuple(env.reward_spec.shape)
    _require(shape[: len(batch)] == batch, "declared-specs",
             f"reward_spec.shape {shape} does not start with the batch size {batch}", None)
    for key, spec in env.full_done_spec.items(True, True):
        _require(tuple(spec.shape) == shape, "declared-specs",
                 f"done spec {key!r} has shape {tuple(spec.shape)}, reward_spec {shape}", None)
    space = env.action_spec
    strategy = members(space)

    def draw(draws: Draws) -> Any:
        return draws.action(None, None, lambda: space, lambda: strategy)

    return draw, None


TORCHRL = EnvKind("torchrl", TorchRLEpisode, _torchrl_declared, "", TORCHRL_PROPERTIES)
"""The TorchRL kind of :func:`~spacealg.testing.runner.check_kind`."""


def check_torchrl_env(env: Any, *, max_examples: int = 10, max_steps: int = 30,
                      random_seed: int | None = 0, **options: Any) -> EnvCheckReport:
    """Check a TorchRL environment (an instance, a zero-argument factory or
    ``"module:factory"``) on Hypothesis-drawn episodes: reward and done spec shapes, and
    every observation, reward and done flag against its spec (see :data:`TORCHRL_PROPERTIES`).

    ``options``: those of :func:`check_env` (``budget``, ``database``, ...); no determinism
    is checked and there are no probes."""
    options = {**options, "max_examples": max_examples, "max_steps": max_steps, "random_seed": random_seed}
    return _check_foreign(TORCHRL, env, options)


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
