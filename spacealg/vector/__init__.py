"""spacealg's environments on the vector engines people already use.

- :class:`GymnasiumVectorView`: a PufferEnv (native or emulated) as a Gymnasium ``VectorEnv``.
- :class:`VectorPufferEnv`: a Gymnasium ``VectorEnv`` as a PufferLib-style buffer environment.
- :func:`for_pufferlib`/:func:`as_pufferlib`: spacealg envs that PufferLib's ``pufferlib.vector`` accepts.
- :mod:`spacealg.vector.ray_actors`: Ray actors that each hold a vector environment (needs ray).
"""

from spacealg.vector.gymnasium_view import GymnasiumVectorView, puffer_env_flavour
from spacealg.vector.infos import info_rows
from spacealg.vector.puffer_view import VectorPufferEnv
from spacealg.vector.pufferlib_shim import as_pufferlib, for_pufferlib

__all__ = [
    "GymnasiumVectorView",
    "VectorPufferEnv",
    "as_pufferlib",
    "for_pufferlib",
    "info_rows",
    "puffer_env_flavour",
]
