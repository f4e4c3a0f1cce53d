"""The checks of one returned value that every kind of environment shares: membership in a
declared space, a finite real reward, bool flags, a dict info. Each raises its property's
:class:`~spacealg.testing.engine.errors.PropertyError` (``step``: where; ``who``: the agent),
unless that property is already known broken (:func:`~spacealg.testing.engine.driver.passed_over`).
Laws: a value that satisfies the law passes; none of them raises anything but PropertyError.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from spacealg.core.protocol import contains
from spacealg.testing.engine.driver import changed_in_place, describe_exception, passed_over
from spacealg.testing.engine.errors import PropertyError, literal, short
from spacealg.testing.engine.masks import is_rejection

__all__ = [
    "after_done", "aliased", "check_flags", "check_info", "check_observation", "check_reward", "is_member", "reset_of",
    "stepped",
]


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
        detail = f"{who}reward is {short(reward)} of type {type(reward).__name__}"
        raise PropertyError("reward-finite-real", detail, step)
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
        detail = f"{who}observation {short(obs)} ({kind}) is not in {space!r}"
        raise PropertyError("observation-in-space", detail, step, where)


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
    detail = (f"{part} returned {'at reset' if at is None else f'at step {at}'} was changed in place "
              f"afterwards: it was {short(copied)} and is now {short(returned)}")
    raise PropertyError("observation-aliasing", detail, step)


def after_done(step: int) -> str:
    return f"at the reset after the episode ended at step {step}"


def reset_of(
    env: Any, seed: int, done_at: int | None, size: int | None, expected: str, dicts: bool = False
) -> tuple[Any, str]:
    """``env.reset(seed=seed)`` (``done_at`` None: the episode's first reset), else
    ``env.reset()`` after the episode ended at step ``done_at``, with where it ran. A reset
    that raises breaks ``no-exception`` (first) or ``reset-after-done``; one that returns
    no ``size``-tuple (of ``dicts``; ``size`` None: returns None, as an AEC env) breaks
    ``reset-signature`` (first, or always for None) or ``reset-after-done``, the message
    naming what was ``expected``."""
    where = after_done(done_at) if done_at is not None else ""
    try:
        result = env.reset(seed=seed) if done_at is None else env.reset()
    except Exception as error:
        prop = "reset-after-done" if done_at is not None else "no-exception"
        raise PropertyError(prop, f"reset() raised {describe_exception(error)}", done_at, where) from error
    if (result is not None) if size is None else not (
        isinstance(result, tuple) and len(result) == size and (not dicts or all(isinstance(d, dict) for d in result))
    ):
        prop = "reset-after-done" if done_at is not None and size is not None else "reset-signature"
        raise PropertyError(prop, f"reset returned {short(result)} instead of {expected}", done_at, where)
    return result, where


def stepped(env: Any, action: Any, k: int, illegal: bool, said: str = "") -> tuple[Any, str | None]:
    """``env.step(action)`` at step ``k``: (its result, None), or (None, the exception's
    type) where an ``illegal`` action (outside the published mask) was clearly rejected
    (:func:`~spacealg.testing.engine.masks.is_rejection`; the episode starts anew). Any
    other exception breaks ``illegal-action`` (an illegal action) or ``no-exception``, the
    message led by ``said`` (the agent)."""
    try:
        return env.step(action), None
    except Exception as error:
        if illegal and is_rejection(error):
            return None, type(error).__name__
        outside = ", an action outside the mask," if illegal else ""
        detail = f"{said}step({literal(action)}){outside} raised {describe_exception(error)}"
        raise PropertyError("illegal-action" if illegal else "no-exception", detail, k) from error
