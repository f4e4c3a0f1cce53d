"""Hypothesis strategies for spaces and their members (needs the ``hypothesis`` extra)."""

from spacealg.strategies.spaces import finite_spaces, spaces

__all__ = ["finite_spaces", "spaces"]
