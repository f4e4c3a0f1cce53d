"""``Discrete``, ``Box``, ``MultiDiscrete``, ``MultiBinary``, ``Tuple``, ``Dict``: tuples of the
Gym and Gymnasium classes, for ``isinstance`` (see :mod:`spacealg.adapters.compat`)."""

from spacealg.adapters.compat import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Tuple

__all__ = ["Box", "Dict", "Discrete", "MultiBinary", "MultiDiscrete", "Tuple"]
