"""PufferLib's emulation: any space's members in flat structured buffers, and back.

See :mod:`spacealg.emulation.spaces` for the layouts (the rule table) and
:mod:`spacealg.emulation.codec` for the compiled copies.

Every public name of ``pufferlib.emulation`` 2.0 is importable from here with the same
signature (``emulate``, ``nativize``, ``make_buffer``, ``emulate_copy``,
``dtype_from_space``, ``flatten_space``, ``emulate_observation_space``,
``emulate_action_space``, ``GymnasiumPufferEnv``, ``PettingZooPufferEnv``,
``pad_agent_data``, ``make_object``, ``check_space``, and the class tuples ``Discrete``,
``Tuple``, ``Dict`` it imports from ``pufferlib.spaces``), so a migration changes only the
package name.
"""

from spacealg.adapters.compat import Dict, Discrete, Tuple
from spacealg.emulation.buffers import emulate, emulate_copy, make_buffer, nativize
from spacealg.emulation.codec import Codec, codec_for
from spacealg.emulation.envs import (
    GymnasiumPufferEnv,
    PettingZooPufferEnv,
    check_space,
    make_object,
    pad_agent_data,
)
from spacealg.emulation.spaces import (
    Layout,
    dtype_from_space,
    emulate_action_space,
    emulate_observation_space,
    emulation_layout,
)
from spacealg.ops import flatten_space

__all__ = [
    "Codec",
    "Dict",
    "Discrete",
    "GymnasiumPufferEnv",
    "Layout",
    "PettingZooPufferEnv",
    "Tuple",
    "check_space",
    "codec_for",
    "dtype_from_space",
    "emulate",
    "emulate_action_space",
    "emulate_copy",
    "emulate_observation_space",
    "emulation_layout",
    "flatten_space",
    "make_buffer",
    "make_object",
    "nativize",
    "pad_agent_data",
]
