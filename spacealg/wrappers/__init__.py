"""PufferLib's environment wrappers (``pufferlib.postprocess``/``pufferlib.wrappers`` names)."""

from spacealg.wrappers.clip import ClipAction
from spacealg.wrappers.episode_stats import EpisodeStats
from spacealg.wrappers.gym_compat import GymToGymnasium
from spacealg.wrappers.nested import unroll_nested_dict
from spacealg.wrappers.pettingzoo import (
    MeanOverAgents,
    MultiagentEpisodeStats,
    PettingZooTruncatedWrapper,
    PettingZooWrapper,
)
from spacealg.wrappers.resize import ResizeObservation

__all__ = [
    "ClipAction",
    "EpisodeStats",
    "GymToGymnasium",
    "MeanOverAgents",
    "MultiagentEpisodeStats",
    "PettingZooTruncatedWrapper",
    "PettingZooWrapper",
    "ResizeObservation",
    "unroll_nested_dict",
]
