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
from spacealg.testing.engine.driver import changed_in_place, passed_over
from spacealg.testing.engine.errors import PropertyError, short

__all__ = ["after_done", "aliased", "check_flags", "check_info", "check_observation", "check_reward", "is_member"]


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
