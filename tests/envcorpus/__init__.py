"""A corpus of small environments, each sound or with one realistic bug, for testing
environment checkers (spacealg's, Gymnasium's ``check_env``, PettingZoo's
``parallel_api_test``) on the same ground.

``CORPUS`` lists every case: its name, factory, API (``"gymnasium"``, ``"parallel"``,
``"aec"``, ``"vector"``, or ``"match"`` for a port checked against its ``reference`` with
``check_envs_match``), the property its bug breaks (None for a sound environment), how
the bug is reached, and the checker options it needs (``illegal_actions=True``).

The ``"parallel"`` and ``"aec"`` cases are PettingZoo environments, an optional extra: where
it is not installed they stay listed, with factories that raise ModuleNotFoundError, and
``Case.param`` makes a test parametrized by such a case skip naming the package.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envcorpus import checks_envs as c
from envcorpus import gym_envs as g
from envcorpus import law_envs as law
from envcorpus import vector_envs as v

__all__ = ["BUGGY", "CORPUS", "SOUND", "Case", "run_case"]

# the optional package each API's environments need (the others need only Gymnasium)
NEEDS = {"parallel": "pettingzoo", "aec": "pettingzoo"}


class _Missing:
    """Stands for a corpus module whose optional package is not installed: each attribute is
    a factory of that name that raises ModuleNotFoundError naming the package."""

    def __init__(self, package: str) -> None:
        self._package = package

    def __getattr__(self, name: str) -> Callable[[], Any]:
        package = self._package

        def factory() -> Any:
            raise ModuleNotFoundError(f"{name} needs {package}, which is not installed", name=package)

        factory.__name__ = factory.__qualname__ = name
        return factory


try:
    from envcorpus import aec_envs as a
    from envcorpus import parallel_envs as p
except ModuleNotFoundError as missing:
    if missing.name != "pettingzoo":
        raise
    a = p = _Missing("pettingzoo")  # type: ignore[assignment]


@dataclass(frozen=True)
class Case:
    name: str
    factory: Callable[[], Any]
    api: str  # "gymnasium", "parallel", "aec", "vector" or "match"
    expected: str | None  # the property the bug breaks; None: a sound environment
    reach: str  # how the bug is reached
    options: dict[str, Any] = field(default_factory=dict)  # checker options the case needs
    reference: Callable[[], Any] | None = None  # for "match": the implementation to agree with
    warns: bool = False  # a sound environment with declaration lints (warnings, not failures)

    @property
    def needs(self) -> str | None:
        """The optional package the case's environment needs (None: only Gymnasium)."""
        return NEEDS.get(self.api)

    @property
    def param(self) -> Any:
        """The case as a pytest parameter with its name as id, skipped (naming the package)
        where the package its environment needs is not installed."""
        import pytest

        missing = self.needs is not None and importlib.util.find_spec(self.needs) is None
        return pytest.param(self, id=self.name,
                            marks=pytest.mark.skipif(missing, reason=f"{self.needs} is not installed"))

    @property
    def description(self) -> str:
        doc = (self.factory.__doc__ or "").strip()
        return " ".join(doc.split("Bug:", 1)[-1].split()) if self.expected else "sound"


def _case(factory: Callable[[], Any], api: str, expected: str | None, reach: str, **extra: Any) -> Case:
    return Case(factory.__name__, factory, api, expected, reach, **extra)


ILLEGAL = {"illegal_actions": True}
VOLATILE = {"ignore_info_keys": ("elapsed",)}


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
    # masks
    _case(c.MaskedGridWorld, "gymnasium", None, "-"),
    Case("MaskedGridWorld (illegal actions)", c.MaskedGridWorld, "gymnasium", None, "-", ILLEGAL),
    _case(c.DeadEndGridWorld, "gymnasium", "action-mask", "action sequence (mask)"),
    _case(c.WideMaskGridWorld, "gymnasium", "action-mask", "specific seeds (mask)"),
    _case(c.WallCrashGridWorld, "gymnasium", "illegal-action", "an action outside the mask", options=ILLEGAL),
    _case(c.MaskLiesGridWorld, "gymnasium", "no-exception", "action sequence (mask)"),
    # RNG discipline
    _case(c.ConstructorSeededCorridor, "gymnasium", "reset-seed", "different seeds"),
    _case(c.ReseedingCorridor, "gymnasium", "reset-stream", "successive resets"),
    # a seed ignored that shows only after the first step (the probes' snippets replay their steps)
    _case(c.GustyCorridor, "gymnasium", None, "-"),
    _case(c.SeededOnceGustyCorridor, "gymnasium", "reset-seed", "different seeds, then a step"),
    _case(p.GustyRace, "parallel", None, "-"),
    _case(p.SeededOnceGustyRace, "parallel", "reset-seed", "different seeds, then a step"),
    _case(a.GustyTakeAway, "aec", None, "-"),
    _case(a.SeededOnceGustyTakeAway, "aec", "reset-seed", "different seeds, then a take"),
    _case(c.BufferCorridor, "gymnasium", "observation-aliasing", "any two steps"),
    _case(c.CallCounterCorridor, "gymnasium", "step-determinism", "replay (infos)"),
    # volatile infos: one entry ignored by name, the others still compared
    _case(c.TimedCorridor, "gymnasium", None, "-", options=VOLATILE),
    _case(c.TimedSlipCorridor, "gymnasium", "global-rng", "action sequence (an info)", options=VOLATILE),
    # API hygiene
    _case(c.NoOptionsCorridor, "gymnasium", "reset-options", "reset(options={})"),
    _case(c.StartOptionCorridor, "gymnasium", "reset-options", "an option: reset(options={})"),
    _case(c.BrokenResetCorridor, "gymnasium", "no-exception", "any reset (with or without options)"),
    _case(c.DoubleCloseCorridor, "gymnasium", "close-twice", "close() twice"),
    _case(c.PaintedCorridor, "gymnasium", None, "-"),
    _case(c.FloatPaintedCorridor, "gymnasium", "render-modes", "render_mode='rgb_array'"),
    _case(c.UnnormalisedCorridor, "gymnasium", None, "-", warns=True),
    # long episodes
    _case(c.FuelCorridor, "gymnasium", None, "-"),
    _case(c.EmptyTankCorridor, "gymnasium", "observation-in-space", "the time limit (step 150)"),
    # AEC
    _case(a.TakeAway, "aec", None, "-"),
    Case("TakeAway (illegal actions)", a.TakeAway, "aec", None, "-", ILLEGAL),
    _case(a.StuckTakeAway, "aec", "action-mask", "action sequence (mask)"),
    _case(a.LingeringTakeAway, "aec", "agent-iteration", "action sequence (a game ends)"),
    _case(a.FreshSpaceTakeAway, "aec", "same-space", "any reset"),
    _case(a.DeepPileTakeAway, "aec", "observation-in-space", "specific seeds"),
    _case(a.EndlessTakeAway, "aec", "max-cycles", "action sequence (small takes)"),
    _case(a.TollTakeAway, "aec", None, "-"),
    _case(a.ForgetfulTakeAway, "aec", "agent-iteration", "action sequence (a player acts twice)"),
    _case(a.CrashingTakeAway, "aec", "illegal-action", "an action outside the mask", options=ILLEGAL),
    # vector
    _case(v.CorridorVector, "vector", None, "-"),
    _case(v.SameStepCorridorVector, "vector", None, "-"),
    _case(v.SameSeedVector, "vector", "sub-env-seeding", "any seed"),
    _case(v.MislabelledVector, "vector", "autoreset", "action sequence (an episode ends)"),
    _case(v.WindyVector, "vector", "row-isolation", "a row's action"),
    _case(v.RejectingCorridorVector, "vector", "no-exception", "a row's action (full thrust after step 1)"),
    _case(v.ClosingVector, "vector", "close-twice", "the first close()"),
    _case(v.AnsiCorridorVector, "vector", None, "-"),
    _case(v.BlankCorridorVector, "vector", "render-modes", "a render in a declared mode"),
    # natively batched (no single envs): the reference-free laws
    _case(v.BatchedCorridors, "vector", None, "-"),
    _case(v.SameSeedBatch, "vector", "sub-env-seeding", "any seed"),
    _case(v.EagerResetBatch, "vector", "autoreset", "action sequence (a row's episode ends)"),
    _case(v.ActionLeakBatch, "vector", "autoreset", "action sequence (an end, then a push)"),
    _case(v.PoolCorridors, "vector", "declared-spaces", "EnvPool's single-space declaration"),
    # differential
    _case(c.PortedCorridor, "match", None, "-", reference=g.Corridor),
    _case(c.SpeedCapPortedCorridor, "match", "observations-match", "action sequence", reference=g.Corridor),
    # issue 35: laws a black-box checker can see, each bug beside a sound twin
    _case(law.PairGridWorld, "gymnasium", None, "-"),
    _case(law.MisshapenPairGridWorld, "gymnasium", "declared-spaces", "the declaration (action_space.sample())"),
    _case(law.MalformedBoxCorridor, "gymnasium", "declared-spaces", "the declaration (a Box's low)"),
    _case(law.AnsiCorridor, "gymnasium", None, "-"),
    _case(law.MisspeltModeCorridor, "gymnasium", "render-modes", "the default render_mode"),
    _case(law.LiveInventoryWarehouse, "gymnasium", "observation-aliasing", "a pick (inside a Dict observation)"),
    _case(law.ClockedCorridor, "gymnasium", None, "-"),
    _case(law.LimitedTreadmill, "gymnasium", None, "-"),
    _case(law.UnlimitedTreadmill, "gymnasium", "max-episode-steps", "an episode run to max_episode_steps"),
    _case(law.UnlimitedTreadmillAtMaxSteps, "gymnasium", "max-episode-steps", "an episode run to max_steps, the limit"),
    _case(law.BufferClockedCorridor, "gymnasium", "observation-aliasing", "any two steps (inside a Tuple)"),
    _case(p.BufferRace, "parallel", "observation-aliasing", "any two steps (an agent's buffer)"),
    _case(a.SharedBoardTakeAway, "aec", "observation-aliasing", "the next player's observe (inside a Dict)"),
    _case(a.PerPlayerBoardTakeAway, "aec", "observation-aliasing", "its next observe (per-agent buffers)"),
    _case(a.PerPlayerFreshBoardTakeAway, "aec", None, "-"),
    _case(a.ArrayRewardTakeAway, "aec", "reward-finite-real", "the first agent-step after a take"),
    _case(a.BufferPerPlayerTakeAway, "aec", "observation-aliasing", "the player's next turn (inside a Dict)"),
    _case(p.CappedRace, "parallel", None, "-"),
    _case(p.EndlessRace, "parallel", "max-cycles", "action sequence (small moves)"),
    _case(a.UnlistedTakeAway, "aec", None, "-"),
    _case(a.UnlistedEndlessTakeAway, "aec", "max-cycles", "action sequence (small takes), no possible_agents"),
    _case(v.SharedRngBatch, "vector", None, "-"),
    _case(v.UndeclaredSameSeedBatch, "vector", "rows-differ", "any seed"),
)

BUGGY = tuple(c for c in CORPUS if c.expected is not None)
SOUND = tuple(c for c in CORPUS if c.expected is None)


def run_case(case: Case, **options: Any) -> Any:
    """Check one case with spacealg, as the tests and benchmarks/compare_checkers.py do:
    ``check`` (``check_envs_match`` against the reference for "match" cases) with the
    case's options; returns the report or raises EnvCheckError."""
    from spacealg.testing import check, check_envs_match

    options = {**case.options, **options}
    if case.api == "match":
        return check_envs_match(case.reference, case.factory, **options)
    return check(case.factory, **options)
