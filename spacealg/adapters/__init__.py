"""Adapters to and from Gymnasium and the legacy Gym: importing this package registers them.

``gymnasium`` (the conversions), ``native`` (the protocol on Gymnasium/Gym instances),
``encoding`` (``encode``/``decode``, the value side of ``to_gymnasium``), ``gym`` (the
legacy package, registered only when it imports), ``masks`` (Gymnasium's ``mask``/``probability``
conventions for ``sample``) and ``compat`` (class tuples).
"""

from spacealg.adapters import encoding, gym, gymnasium, masks  # noqa: F401
from spacealg.adapters.encoding import decode, encode
from spacealg.adapters.gym import from_gym, to_gym
from spacealg.adapters.gymnasium import from_gymnasium, to_gymnasium
from spacealg.core.generic import ADAPTER_MODULES

# The optional ecosystems, registered on first sight of one of their objects (issue 15).
ADAPTER_MODULES.update(
    {
        "dm_env": "spacealg.adapters.dm_env",
        "torchrl": "spacealg.adapters.torchrl",
        "gymnax": "spacealg.adapters.gymnax",
        "jumanji": "spacealg.adapters.jumanji",
    }
)

__all__ = ["decode", "encode", "from_gym", "from_gymnasium", "to_gym", "to_gymnasium"]
