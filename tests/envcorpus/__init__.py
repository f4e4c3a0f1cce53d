"""A corpus of small environments, each sound or with one realistic bug, for testing
environment checkers (spacealg's, Gymnasium's ``check_env``, PettingZoo's
``parallel_api_test``) on the same ground.

``CORPUS`` lists every case: its name, factory, API (``"gymnasium"`` or ``"parallel"``),
the property its bug breaks (None for a sound environment), and how the bug is reached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envcorpus import gym_envs as g
from envcorpus import parallel_envs as p

__all__ = ["BUGGY", "CORPUS", "SOUND", "Case"]


@dataclass(frozen=True)
class Case:
    name: str
    factory: Callable[[], Any]
    api: str  # "gymnasium" or "parallel"
    expected: str | None  # the property the bug breaks; None: a sound environment
    reach: str  # how the bug is reached

    @property
    def description(self) -> str:
        doc = (self.factory.__doc__ or "").strip()
        return " ".join(doc.split("Bug:", 1)[-1].split()) if self.expected else "sound"


def _case(factory: Callable[[], Any], api: str, expected: str | None, reach: str) -> Case:
    return Case(factory.__name__, factory, api, expected, reach)


CORPUS: tuple[Case, ...] = (
    _case(g.Corridor, "gymnasium", None, "-"),
    _case(g.ContinuousCorridor, "gymnasium", None, "-"),
    _case(g.GridWorld, "gymnasium", None, "-"),
    _case(g.Warehouse, "gymnasium", None, "-"),
    _case(g.LeakyCorridor, "gymnasium", "observation-in-space", "action sequence"),
    _case(g.Float64ResetCorridor, "gymnasium", "observation-in-space", "first reset"),
    _case(g.GlobalRngResetCorridor, "gymnasium", "global-rng", "any reset"),
    _case(g.SlipperyCorridor, "gymnasium", "global-rng", "random steps"),
    _case(g.SpeedRewardCorridor, "gymnasium", "reward-finite-real", "specific action (coast at rest)"),
    _case(g.IntTruncatedCorridor, "gymnasium", "truncated-bool", "first step"),
    _case(g.ListInfoCorridor, "gymnasium", "info-dict", "action sequence (episode end)"),
    _case(g.OldApiCorridor, "gymnasium", "step-signature", "first step"),
    _case(g.CheckpointCorridor, "gymnasium", "observation-in-space", "action sequence"),
    _case(g.CurriculumCorridor, "gymnasium", "reset-after-done", "action sequence (episode end)"),
    _case(g.WideStartCorridor, "gymnasium", "observation-in-space", "specific seeds"),
    _case(g.ArrayRewardCorridor, "gymnasium", "reward-finite-real", "first step"),
    _case(g.LogBarrierCorridor, "gymnasium", "no-exception", "specific action (a bound)"),
    _case(g.OffByOneGridWorld, "gymnasium", "observation-in-space", "action sequence"),
    _case(g.ThreeMovesGridWorld, "gymnasium", "no-exception", "specific action"),
    _case(g.OverfullWarehouse, "gymnasium", "observation-in-space", "action sequence"),
    _case(p.Race, "parallel", None, "-"),
    _case(p.ZombieRace, "parallel", "agents-life-cycle", "action sequence (an agent finishes)"),
    _case(p.GhostRace, "parallel", "agents-life-cycle", "action sequence (an agent finishes)"),
    _case(p.MarshalRace, "parallel", "agents-possible", "specific joint action"),
    _case(p.OvershootRace, "parallel", "observation-in-space", "action sequence"),
    _case(p.IdleRewardRace, "parallel", "reward-finite-real", "specific action"),
    _case(p.UnseededRace, "parallel", "global-rng", "any reset"),
)

BUGGY = tuple(c for c in CORPUS if c.expected is not None)
SOUND = tuple(c for c in CORPUS if c.expected is None)
