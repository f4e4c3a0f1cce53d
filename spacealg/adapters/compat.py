"""The (Gym, Gymnasium) class tuples for ``isinstance`` checks (PufferLib's ``pufferlib.spaces``).

>>> import gymnasium
>>> from spacealg import compat
>>> isinstance(gymnasium.spaces.Discrete(4), compat.Discrete)
True

Each name is a tuple of the legacy Gym class (when ``gym`` imports) and the Gymnasium
class; without Gym it holds the Gymnasium class alone.
"""

from __future__ import annotations

import gymnasium.spaces as _gymnasium

from spacealg.adapters.gym import gym_spaces as _gym

__all__ = ["Box", "Dict", "Discrete", "MultiBinary", "MultiDiscrete", "Tuple", "class_pair"]


def class_pair(name: str) -> tuple[type, ...]:
    """The Gym and Gymnasium classes called ``name`` (Gymnasium's alone without Gym)."""
    gymnasium_class = getattr(_gymnasium, name)
    return (gymnasium_class,) if _gym is None else (getattr(_gym, name), gymnasium_class)


Discrete = class_pair("Discrete")
Box = class_pair("Box")
MultiDiscrete = class_pair("MultiDiscrete")
MultiBinary = class_pair("MultiBinary")
Tuple = class_pair("Tuple")
Dict = class_pair("Dict")
