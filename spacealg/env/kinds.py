"""Which kind of Gymnasium (or legacy Gym) space a native environment declared.

PufferEnv accepts a Box observation space and a Discrete, MultiDiscrete or Box action
space. The legacy ``gym`` package is never imported here: a Gym space can only exist once
the user has imported ``gym``, so its classes are looked up in ``sys.modules`` on demand.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium.spaces

__all__ = ["space_kind"]

_KINDS = ("Box", "Discrete", "MultiDiscrete")


def _classes(name: str) -> tuple[type, ...]:
    classes: list[type] = [getattr(gymnasium.spaces, name)]
    gym = sys.modules.get("gym.spaces")
    if gym is not None and hasattr(gym, name):
        classes.append(getattr(gym, name))
    return tuple(classes)


def space_kind(space: Any) -> str | None:
    """``"Box"``, ``"Discrete"`` or ``"MultiDiscrete"`` for those Gymnasium/Gym spaces, else None."""
    for name in _KINDS:
        if isinstance(space, _classes(name)):
            return name
    return None
