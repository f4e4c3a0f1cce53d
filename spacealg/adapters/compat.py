"""The (Gym, Gymnasium) class tuples for ``isinstance`` checks (PufferLib's ``pufferlib.spaces``).

>>> import gymnasium
>>> from spacealg import compat
>>> isinstance(gymnasium.spaces.Discrete(4), compat.Discrete)
True

Each name is a class pair usable with ``isinstance``/``issubclass`` like PufferLib's tuple:
an object is an instance when it is one of the Gymnasium class or, once ``gym`` has been
imported (by you: spacealg never imports it), of the Gym class. ``tuple(compat.Discrete)``
gives the classes themselves (importing Gym when it is installed), and the pair equals
that tuple.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import gymnasium.spaces as _gymnasium

from spacealg.adapters.gym import import_gym

__all__ = ["Box", "Dict", "Discrete", "MultiBinary", "MultiDiscrete", "Tuple", "class_pair"]


class _PairMeta(type):
    """``isinstance`` against the Gymnasium class and, when Gym is loaded, the Gym class."""

    name: str

    def _loaded(cls) -> tuple[type, ...]:
        classes: list[type] = [getattr(_gymnasium, cls.name)]
        gym = sys.modules.get("gym.spaces")
        if gym is not None and hasattr(gym, cls.name):
            classes.append(getattr(gym, cls.name))
        return tuple(classes)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._loaded())

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._loaded())

    def __iter__(cls) -> Iterator[type]:
        gym = import_gym()
        if gym is not None:
            yield getattr(gym, cls.name)
        yield getattr(_gymnasium, cls.name)

    def __eq__(cls, other: object) -> bool:  # equal to PufferLib's tuple of the same classes
        if isinstance(other, tuple):
            return tuple(cls) == other
        return cls is other

    __hash__ = type.__hash__

    def __repr__(cls) -> str:
        return f"spacealg.compat.{cls.name}"


def class_pair(name: str) -> type:
    """The Gym and Gymnasium classes called ``name``, as one ``isinstance`` target."""
    return _PairMeta(name, (), {"name": name})


Discrete = class_pair("Discrete")
"""``isinstance(x, Discrete)``: ``x`` is a Gym or a Gymnasium ``Discrete``."""
Box = class_pair("Box")
"""``isinstance(x, Box)``: ``x`` is a Gym or a Gymnasium ``Box``."""
MultiDiscrete = class_pair("MultiDiscrete")
"""``isinstance(x, MultiDiscrete)``: ``x`` is a Gym or a Gymnasium ``MultiDiscrete``."""
MultiBinary = class_pair("MultiBinary")
"""``isinstance(x, MultiBinary)``: ``x`` is a Gym or a Gymnasium ``MultiBinary``."""
Tuple = class_pair("Tuple")
"""``isinstance(x, Tuple)``: ``x`` is a Gym or a Gymnasium ``Tuple``."""
Dict = class_pair("Dict")
"""``isinstance(x, Dict)``: ``x`` is a Gym or a Gymnasium ``Dict``."""
