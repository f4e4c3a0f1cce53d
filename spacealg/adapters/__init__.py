"""Adapters to and from Gymnasium and the legacy Gym: importing this package registers them."""

from spacealg.adapters import gymnasium  # noqa: F401
from spacealg.adapters.gymnasium import from_gymnasium, to_gymnasium

__all__ = ["from_gymnasium", "to_gymnasium"]
