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

import numbers
from collections.abc import Callable
from typing import Any, Unpack

import numpy as np

from spacealg.core.protocol import contains
from spacealg.strategies.members import members
from spacealg.testing.driver import changed_in_place, describe_exception, passed_over, snapshot
from spacealg.testing.errors import PROPERTIES, PropertyError, literal, short
from spacealg.testing.infos import recorded
from spacealg.testing.masks import MaskedAction, check_mask, find_mask, is_rejection
from spacealg.testing.probes import single_probes
from spacealg.testing.runner import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_MAX_STEPS,
    CheckOptions,
    Declared,
    Draws,
    EnvCheckReport,
    EnvKind,
    Stepping,
    check_declared,
    check_kind,
    options_of,
)

__all__ = ["DEFAULT_MAX_EXAMPLES", "DEFAULT_MAX_STEPS", "GYMNASIUM", "EnvCheckReport", "Episode", "check_env"]


def is_member(x: Any, space: Any) -> bool:
    """``contains(x, space)``, False where even that raises (a broken custom space)."""
    try:
        return bool(contains(x, space))
    except Exception:
        return False




def is_real_scalar(reward: Any) -> bool:
    """An int, a float or a numpy integer/floating scalar; not a bool, not an array."""
    if isinstance(reward, (bool, np.bool_)):
        return False
    return isinstance(reward, (numbers.Real, np.integer, np.floating))


def check_reward(reward: Any, step: int, who: str = "") -> None:
    if passed_over("reward-finite-real"):
        return
    if not is_real_scalar(reward):
        raise PropertyError(
            "reward-finite-real",
            f"{who}reward is {short(reward)} of type {type(reward).__name__}",
            step,
        )
    if not np.isfinite(reward):
        raise PropertyError("reward-finite-real", f"{who}reward is {reward!r}", step)


def check_flags(terminated: Any, truncated: Any, step: int, who: str = "") -> None:
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if not isinstance(flag, (bool, np.bool_)) and not passed_over(f"{name}-bool"):
            raise PropertyError(
                f"{name}-bool", f"{who}{name} is {short(flag)} of type {type(flag).__name__}", step
            )


def check_info(info: Any, step: int | None, where: str = "", who: str = "") -> None:
    if not isinstance(info, dict) and not passed_over("info-dict"):
        raise PropertyError(
            "info-dict", f"{who}info is {short(info)} of type {type(info).__name__}", step, where
        )


def check_observation(obs: Any, space: Any, step: int | None, where: str = "", who: str = "") -> None:
    if not passed_over("observation-in-space") and not is_member(obs, space):
        kind = f"{type(obs).__name__}"
        if isinstance(obs, np.ndarray):
            kind += f" of shape {obs.shape} and dtype {obs.dtype}"
        raise PropertyError(
            "observation-in-space",
            f"{who}observation {short(obs)} ({kind}) is not in {space!r}",
            step,
            where,
        )


def aliased(
    returned: Any, copied: Any, at: int | None, step: int | None, what: str = "the observation"
) -> None:
    """``observation-aliasing`` where ``what`` (an observation, a parallel env's dict of
    them) ``returned`` at step ``at`` (None: at reset) changed in place since it was handed
    out (``copied`` then), found at ``step``."""
    if passed_over("observation-aliasing"):
        return
    keys = changed_in_place(returned, copied)
    if keys is None:
        return
    for key in keys:
        returned, copied = returned[key], copied[key]
    part = f"{''.join(f'[{k!r}]' for k in keys)} of {what}" if keys else what
    raise PropertyError(
        "observation-aliasing",
        f"{part} returned {'at reset' if at is None else f'at step {at}'} was changed in place "
        f"afterwards: it was {short(copied)} and is now {short(returned)}",
        step,
    )


def after_done(step: int) -> str:
    return f"at the reset after the episode ended at step {step}"




class Episode(Stepping):
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
    ) -> None:
        self.env, self.seed, self.n, self.next_action = env, seed, n, next_action
        self.observation_space = env.observation_space
        self.action_space = getattr(env, "action_space", None)
        self.masks = masks
        self.trace: list[Any] = []
        self.steps = 0
        self.episodes = 1
        self.last: tuple[Any, Any] = (None, None)
        self.held: Any = None  # (the observation as returned, a copy) to detect aliasing

    def _hold(self, obs: Any, step: int | None) -> None:
        """Check that the previously returned observation was not mutated (at any depth of a
        Dict or Tuple observation: :func:`~spacealg.testing.driver.changed_in_place`), and
        hold this one."""
        if self.held is not None:
            returned, copied, at = self.held
            aliased(returned, copied, at, step)
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
                prop, f"reset returned {short(result)} instead of (observation, info)", done_at, where
            )
        obs, info = result
        check_observation(obs, self.observation_space, done_at, where)
        check_info(info, done_at, where)
        self._hold(obs, done_at)
        self.last = (obs, info)
        self.trace.append(("reset", snapshot(obs), recorded(info)))

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
            raise PropertyError("step-signature", f"step returned {size}: {short(result)}", k)
        obs, reward, terminated, truncated, info = result
        check_observation(obs, self.observation_space, k)
        check_reward(reward, k)
        check_flags(terminated, truncated, k)
        check_info(info, k)
        self._hold(obs, k)
        self.last = (obs, info)
        self.trace.append(
            ("step", snapshot(obs), snapshot(reward), bool(terminated), bool(truncated), recorded(info))
        )
        self.steps += 1
        return bool(terminated or truncated)




def _declared(env: Any) -> Declared:
    try:
        space, observed = env.action_space, env.observation_space
    except Exception as error:
        raise PropertyError("declared-spaces", f"cannot read the spaces: {describe_exception(error)}") from error
    check_declared(space, "action_space")
    check_declared(observed, "observation_space")
    try:
        actions = members(space)
        actions.validate()
    except Exception as error:
        raise PropertyError(
            "declared-spaces", f"cannot draw actions from the action space: {describe_exception(error)}"
        ) from error

    def draw(draws: Draws, factors: list[np.ndarray] | None) -> Any:
        return draws.action(None, factors, lambda: space, lambda: actions)

    return draw, episode_limit(env)


def episode_limit(env: Any) -> int | None:
    """The environment's own episode limit in steps (``spec.max_episode_steps``, a
    TimeLimit's ``_max_episode_steps``), capped at 2,000; None if it declares none."""
    limit = getattr(getattr(env, "spec", None), "max_episode_steps", None)
    if limit is None:
        limit = getattr(env, "_max_episode_steps", None)
    return min(int(limit), 2000) if isinstance(limit, (int, np.integer)) and limit > 0 else None


GYMNASIUM = EnvKind(
    "gymnasium", Episode, _declared, "(observation, reward, terminated, truncated, info)", PROPERTIES, single_probes
)
"""The Gymnasium kind (single agent) of :func:`~spacealg.testing.runner.check_kind`."""


def check_env(env: Any, **options: Unpack[CheckOptions]) -> EnvCheckReport:
    """Check a Gymnasium environment's properties on Hypothesis-generated episodes.

    ``env``: an instance, a zero-argument factory, a registered id or ``"module:factory"``.
    Options (keywords, :class:`~spacealg.testing.runner.CheckOptions`):
    ``max_examples`` (100): episodes drawn (before shrinking); ``max_steps`` (100): longest
    episode drawn (episodes that end earlier are reset and continued; one example in eight
    runs up to just past the environment's own ``max_episode_steps`` when it has one);
    ``determinism`` (True): replay each episode and compare; ``random_seed`` (0): the seed of
    Hypothesis' search (None: random, so repeated runs explore differently); ``budget``
    (None): seconds the search may take (and as many for shrinking a failure; the whole
    check ends its work within 3 x budget, episodes stopping between steps, and reports what
    broke by then; None: no limit); ``database`` (None): a directory or a Hypothesis ``ExampleDatabase`` where
    failures are saved and replayed first (None: none, nothing written); ``masks`` (True):
    draw legal actions under a published ``info["action_mask"]`` and check the mask;
    ``illegal_actions`` (False): draw some actions outside the mask too; ``hygiene`` (True):
    the one-off RNG and API probes and declaration lints (see
    :mod:`spacealg.testing.probes`). Returns an :class:`EnvCheckReport`; raises
    :class:`EnvCheckError` naming the broken property, the seed and the shortest action
    sequence found.
    """
    from spacealg.testing.foreign import foreign_checker  # dm_env and TorchRL instances (issue 15)

    checker = foreign_checker(env)
    if checker is not None:
        return checker(env, **options_of(options))
    return check_kind(GYMNASIUM, env, options)
