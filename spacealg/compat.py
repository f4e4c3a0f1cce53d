"""PufferLib's ``pufferlib.spaces`` under spacealg: the class tuples ``Discrete``, ``Box``,
``MultiDiscrete``, ``MultiBinary``, ``Tuple``, ``Dict`` (the Gym and Gymnasium classes, for
``isinstance``; see :mod:`spacealg.adapters.compat`) and ``joint_space(space, n)``, with
PufferLib's signatures, so a migration changes only the package name."""

from spacealg.adapters.compat import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Tuple
from spacealg.ops import joint_space

__all__ = ["Box", "Dict", "Discrete", "MultiBinary", "MultiDiscrete", "Tuple", "joint_space"]
