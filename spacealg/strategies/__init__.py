"""Hypothesis strategies for spaces and their members (needs the ``hypothesis`` extra).

``members(space)``: the elements of any space, shrinking toward simple ones;
``spaces()``/``finite_spaces()``: random spacealg spaces; ``gymnasium_spaces()``/
``gym_spaces()``: random Gymnasium and Gym spaces; ``masks(space)``/``masked_spaces()``: masks and masked spaces
(:mod:`spacealg.strategies.masks`). Importing ``spacealg`` itself does not
import Hypothesis; importing this package does.
"""

from spacealg.strategies.gymnasium import gym_spaces, gymnasium_spaces
from spacealg.strategies.masks import masked_spaces, masks
from spacealg.strategies.members import members
from spacealg.strategies.spaces import finite_spaces, spaces

__all__ = ["finite_spaces", "gym_spaces", "gymnasium_spaces", "masked_spaces", "masks", "members", "spaces"]
