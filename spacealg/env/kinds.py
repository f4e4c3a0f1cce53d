"""Which kind of Gymnasium (or legacy Gym) space a native environment declared.

PufferEnv accepts a Box observation space and a Discrete, MultiDiscrete or Box action
space. The legacy ``gym`` package is never imported here (see
:func:`spacealg.adapters.native.gym_class_of`, the one place that tells the families apart).
"""

from __future__ import annotations

from typing import Any

from spacealg.adapters.native import gym_class_of

__all__ = ["puffer_space_class"]

_PUFFER_SPACE_CLASSES = ("Box", "Discrete", "MultiDiscrete")


def puffer_space_class(space: Any) -> str | None:
    """``"Box"``, ``"Discrete"`` or ``"MultiDiscrete"`` for those Gymnasium/Gym spaces, else None."""
    gym_class = gym_class_of(space)
    return gym_class[1] if gym_class is not None and gym_class[1] in _PUFFER_SPACE_CLASSES else None
