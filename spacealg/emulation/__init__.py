"""PufferLib's emulation: any space's members in flat structured buffers, and back.

See :mod:`spacealg.emulation.spaces` for the layouts (the rule table) and
:mod:`spacealg.emulation.codec` for the compiled copies.
"""

from spacealg.emulation.codec import Codec, codec_for, emulate, nativize
from spacealg.emulation.envs import GymnasiumPufferEnv, PettingZooPufferEnv, make_object
from spacealg.emulation.spaces import (
    Layout,
    dtype_from_space,
    emulate_action_space,
    emulate_observation_space,
    emulation_layout,
)

__all__ = [
    "Codec",
    "GymnasiumPufferEnv",
    "Layout",
    "PettingZooPufferEnv",
    "codec_for",
    "dtype_from_space",
    "emulate",
    "emulate_action_space",
    "emulate_observation_space",
    "emulation_layout",
    "make_object",
    "nativize",
]
