"""A defect: what an operator changes, as hooks that the wrapper of each API applies.

A :class:`Defect` names the values it touches — observations, rewards, flags, infos, the
actions taken, reset seeds, the declared observation space, ``close``, ``render``, the
episode limit — and how; the wrappers (:mod:`mutants.gym_wrapper`,
:mod:`mutants.pz_wrappers`) call the hooks from the ``k``-th step of each episode on (reset
seeds, ``close``, ``render`` and the declared space from the start). A hook left None
leaves its values alone, so a defect changes exactly one thing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Defect"]


@dataclass(frozen=True)
class Defect:
    """The hooks of one defect (each None where the defect leaves those values alone).

    ``observation(space, obs, buffers)``: the observation the env returns instead
    (``buffers``: a dict kept per env instance); ``reward(r)``; ``flags(terminated,
    truncated)``; ``info(info)``; ``action(space, action, mask)``: the action the env applies
    (raising rejects it); ``seeds``: ``"ignored"`` (seeded once at construction, every
    reset seed dropped) or ``"once"`` (only the first seed honoured); ``declared(space)``: the
    observation space declared instead; ``close_raises``; ``render_none``: render returns
    None in every mode but human; ``unlimited``: the env never ends an episode by its limit
    while still declaring it; ``once``: the step hooks act at step ``k`` alone, not from
    ``k`` on.
    """

    observation: Callable[[Any, Any, dict[str, Any]], Any] | None = None
    reward: Callable[[Any], Any] | None = None
    flags: Callable[[Any, Any], tuple[Any, Any]] | None = None
    info: Callable[[Any], Any] | None = None
    action: Callable[[Any, Any, Any], Any] | None = None
    seeds: str | None = None
    declared: Callable[[Any], Any] | None = None
    close_raises: bool = False
    render_none: bool = False
    unlimited: bool = False
    once: bool = False
