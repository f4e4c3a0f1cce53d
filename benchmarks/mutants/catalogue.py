"""The mutation operators, and :func:`mutant`: one operator applied to one base.

Each :class:`Operator` states its defect and where it applies; its :class:`Defect` hooks
are applied by the wrapper of the base's API (a functional JAX base reads
:data:`~mutants.jax_wrapper.JAX_DEFECTS` instead). Where the base has no place for the
defect, :func:`mutant` raises :class:`NotApplicable` with the reason; where the base's API
hides it from every caller (``SyncVectorEnv`` copies observations into its own batch),
:class:`NotObservable`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mutants.bases import BASES, Base
from mutants.defects import Defect
from mutants.leaves import (
    NotApplicable,
    aliased,
    drifted,
    global_draw,
    malformed,
    outside,
    path_to,
    rejects,
    reshaped,
)

__all__ = ["BASES", "OPERATORS", "Base", "NotApplicable", "NotObservable", "Operator", "Probe", "mutant", "probe"]

BLACK_BOX, MATCH = "black-box", "match"
JAX = ("gymnax", "jumanji")  # the functional kinds: mutated by mutants.jax_wrapper


class NotObservable(NotApplicable):
    """The base's API hides the defect from every caller."""


@dataclass(frozen=True)
class Probe:
    """What applicability depends on: a base's declared spaces (the first agent's for
    PettingZoo, the single ones for a vector env), render modes and episode limit."""

    base: Base
    observation_space: Any
    action_space: Any
    render_modes: tuple[str, ...]
    limit: int | None


def probe(base: Base) -> Probe:
    """Build ``base`` once and read what :class:`Operator.needs` looks at."""
    if base.kind == "gymnax":
        env, params = base.make()
        limit = getattr(params, "max_steps_in_episode", None)
        return Probe(base, env.observation_space(params), env.action_space(params), (), limit)
    if base.kind == "jumanji":
        env = base.make()
        return Probe(base, env.observation_spec, env.action_spec, (), None)
    env = base.make()
    try:
        if base.kind in ("aec", "parallel"):
            agent = env.possible_agents[0]
            spaces = (env.observation_space(agent), env.action_space(agent))
            limit = getattr(getattr(env, "unwrapped", env), "max_cycles", None)
        elif base.kind == "vector":
            spaces = (env.single_observation_space, env.single_action_space)
            limit = None
        else:
            spaces = (env.observation_space, env.action_space)
            limit = env.spec.max_episode_steps if env.spec is not None else None
        modes = tuple(m for m in env.metadata.get("render_modes", []) if m != "human")
        return Probe(base, *spaces, modes, limit)
    finally:
        env.close()


def _dry(hook: Callable[[Any, Any, dict[str, Any]], Any]) -> Callable[[Probe], None]:
    """Needs: ``hook`` finds its leaf in a sample of the observation space."""

    def needs(p: Probe) -> None:
        if p.base.kind in JAX:
            return  # JAX_DEFECTS decides
        space = copy.deepcopy(p.observation_space)
        space.seed(0)
        hook(space, space.sample(), {})

    return needs


def _random(p: Probe) -> None:
    if not p.base.random:
        raise NotApplicable("no randomness: every seed gives the same episode")


def _actions(check: Callable[[Any, Any], Any]) -> Callable[[Probe], None]:
    def needs(p: Probe) -> None:
        if p.base.kind in JAX:
            return  # JAX_DEFECTS decides
        space = copy.deepcopy(p.action_space)
        space.seed(0)
        check(space, space.sample())

    return needs


def _rendered(p: Probe) -> None:
    if not p.render_modes:
        raise NotApplicable("no render mode declared but human")


def _limited(p: Probe) -> None:
    if p.limit is None or p.base.limit is None:
        raise NotApplicable("no episode limit declared")


def _boxed(p: Probe) -> None:
    from gymnasium import spaces

    if p.base.kind not in JAX:
        path_to(p.observation_space, (spaces.Box,))


def _anything(p: Probe) -> None:
    return None


def _global_action(space: Any, action: Any, mask: Any) -> Any:
    if np.random.random() >= 0.5:
        return action
    if mask is not None:
        legal = np.flatnonzero(np.asarray(mask))
        return np.int64(legal[np.random.randint(len(legal))])
    return global_draw(space)


def _rejecting(space: Any, action: Any, mask: Any) -> Any:
    if rejects(space, action):
        raise ValueError(f"action {action!r} rejected")
    return action


def _first_action(space: Any) -> Any:
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return np.int64(space.start)
    if isinstance(space, spaces.Box):
        return space.low.copy()
    raise NotApplicable(f"no first action written for {space}")


@dataclass(frozen=True)
class Operator:
    """A mutation operator: its name, the defect it injects, where it applies (in words,
    and as ``needs``, which raises :class:`NotApplicable`), the APIs it has a wrapper for,
    its hooks, who scores it (``"black-box"``: every checker; ``"match"``:
    ``check_envs_match`` against the sound base, for defects no law of one env can see) and
    why a ``SyncVectorEnv`` would hide it (None: it does not)."""

    name: str
    defect_text: str
    where: str
    defect: Defect
    needs: Callable[[Probe], None] = _anything
    kinds: frozenset[str] = frozenset({"gymnasium", "aec", "parallel", "vector", "gymnax", "jumanji"})
    scored_by: str = BLACK_BOX
    hidden_by_vector: str | None = None

    def __str__(self) -> str:
        return self.name


SINGLE = frozenset({"gymnasium", "aec", "parallel", "vector"})
COPIED = "SyncVectorEnv copies every observation into its own batch buffer of the declared dtype"


OPERATORS: tuple[Operator, ...] = (
    Operator(
        "observation-out-of-space",
        "one entry of the observation's first Box leaf is set just past its upper bound (a Discrete leaf to n)",
        "bases whose observation has a Box leaf with a finite upper bound or a Discrete leaf",
        Defect(observation=lambda space, obs, _: outside(space, obs)),
        _dry(lambda space, obs, _: outside(space, obs)),
    ),
    Operator(
        "dtype-drift",
        "the observation's first Box leaf comes in another dtype (float32 <-> float64; JAX: float16)",
        "bases with a Box observation leaf",
        Defect(observation=lambda space, obs, _: drifted(space, obs)),
        _dry(lambda space, obs, _: drifted(space, obs)),
        hidden_by_vector=COPIED,
    ),
    Operator(
        "shape-drift",
        "the observation's first Box leaf gains a leading axis of length 1",
        "bases with a Box observation leaf",
        Defect(observation=lambda space, obs, _: reshaped(space, obs)),
        _dry(lambda space, obs, _: reshaped(space, obs)),
    ),
    Operator(
        "seed-ignored",
        "reset(seed=...) ignores its seed: the env seeds itself once at construction (JAX: reset ignores its key)",
        "bases with random episodes",
        Defect(seeds="ignored"),
        _random,
    ),
    Operator(
        "seeded-once",
        "only the first reset seed is honoured; later ones are dropped",
        "bases with random episodes (not the functional JAX ones: a key is not a seed stream)",
        Defect(seeds="once"),
        _random,
        kinds=SINGLE,
    ),
    Operator(
        "global-rng",
        "one step in two the action is replaced by one drawn from numpy's global generator (legal under a mask)",
        "bases with a Discrete or bounded Box action space",
        Defect(action=_global_action),
        _actions(lambda space, action: global_draw(space)),
    ),
    Operator(
        "nan-reward",
        "the reward is NaN",
        "every base",
        Defect(reward=lambda r: float("nan")),
    ),
    Operator(
        "reward-array",
        "the reward is a (1,)-shaped array instead of a scalar",
        "every base",
        Defect(reward=lambda r: np.array([r], dtype=np.float64)),
    ),
    Operator(
        "flags-array",
        "terminated and truncated are (1,)-shaped bool arrays instead of bools",
        "every base",
        Defect(flags=lambda te, tr: (np.array([te], dtype=bool), np.array([tr], dtype=bool))),
        hidden_by_vector="SyncVectorEnv stores each sub-env's flags into its own bool batch (a (1,) array fits a slot)",
    ),
    Operator(
        "info-not-dict",
        "info is a list of its items instead of a dict (gymnax: a tuple of its values)",
        "every base",
        Defect(info=lambda info: list(info.items())),
    ),
    Operator(
        "aliased-observation",
        "the observation array is one buffer the env overwrites in place at every later step",
        "bases whose observation is a bare array",
        Defect(observation=lambda space, obs, buffers: aliased(space, obs, buffers, inside=False)),
        _dry(lambda space, obs, buffers: aliased(space, obs, buffers, inside=False)),
        kinds=SINGLE,
        hidden_by_vector=COPIED,
    ),
    Operator(
        "aliased-dict-observation",
        "the array inside the Dict observation is one buffer the env overwrites in place at every later step",
        "bases whose observation is a Dict with an array leaf",
        Defect(observation=lambda space, obs, buffers: aliased(space, obs, buffers, inside=True)),
        _dry(lambda space, obs, buffers: aliased(space, obs, buffers, inside=True)),
        kinds=SINGLE,
        hidden_by_vector=COPIED,
    ),
    Operator(
        "action-rejected",
        "step raises ValueError for a legal member of the action space (the last Discrete action; a Box "
        "action in the top quarter of its first entry's range)",
        "bases with a Discrete (n >= 2) or bounded Box action space",
        Defect(action=_rejecting),
        _actions(rejects),
        kinds=SINGLE,
    ),
    Operator(
        "close-raises",
        "close() raises RuntimeError (after closing the inner env)",
        "every base but the functional JAX ones",
        Defect(close_raises=True),
        kinds=SINGLE,
    ),
    Operator(
        "render-none",
        "render() returns None in every declared mode but human (built in the first such mode)",
        "bases that declare a render mode other than human",
        Defect(render_none=True),
        _rendered,
        kinds=SINGLE,
    ),
    Operator(
        "malformed-space",
        "the declared observation space's first Box leaf claims one more axis than its low/high (and its samples)",
        "bases with a Box observation leaf",
        Defect(declared=lambda space: malformed(space)),
        _boxed,
    ),
    Operator(
        "never-truncates",
        "the env still declares its episode limit (spec.max_episode_steps, max_cycles, gymnax's "
        "max_steps_in_episode) but runs with a limit of 10**6",
        "bases with an episode limit (not a SyncVectorEnv: it declares none)",
        Defect(unlimited=True),
        _limited,
        kinds=frozenset({"gymnasium", "aec", "parallel", "gymnax"}),
    ),
    Operator(
        "action-ignored",
        "at step k (only) the action taken is replaced by the first action of the space",
        "Gymnasium bases (scored by check_envs_match against the sound base)",
        Defect(action=lambda space, action, mask: _first_action(space), once=True),
        _actions(lambda space, action: _first_action(space)),
        kinds=frozenset({"gymnasium"}),
        scored_by=MATCH,
    ),
    Operator(
        "flags-swapped",
        "terminated and truncated are swapped",
        "Gymnasium bases (scored by check_envs_match against the sound base)",
        Defect(flags=lambda te, tr: (tr, te)),
        kinds=frozenset({"gymnasium"}),
        scored_by=MATCH,
    ),
)


def first_step(base: Base, k: int) -> int:
    """The step the defects of ``base`` start at: ``k``, or earlier where its episodes are short."""
    return min(k, base.first_step) if base.first_step is not None else k


def mutant(base: Base, operator: Operator, k: int = 2, probed: Probe | None = None) -> Callable[..., Any]:
    """A factory (keywords passed to the base's) of ``base`` with ``operator``'s defect from
    step ``k`` on; :class:`NotApplicable` (or :class:`NotObservable`) says why there is none."""
    if base.kind not in operator.kinds:
        raise NotApplicable(f"not for {base.kind} environments")
    if base.kind == "vector" and operator.hidden_by_vector is not None:
        raise NotObservable(operator.hidden_by_vector)
    p = probed if probed is not None else probe(base)
    operator.needs(p)
    k = first_step(base, k)
    if base.kind in JAX:
        return _jax_mutant(base, operator, k)
    if base.kind == "vector":
        assert base.single is not None
        single = mutant(base.single, operator, k)
        return functools.partial(_vector_of, single)
    return functools.partial(_build, base, operator, k, p.limit, p.render_modes[:1])


def _vector_of(single: Callable[..., Any], **keywords: Any) -> Any:
    from gymnasium.vector import SyncVectorEnv

    from mutants.bases import VECTOR_ENVS

    return SyncVectorEnv([functools.partial(single, **keywords) for _ in range(VECTOR_ENVS)])


def _build(base: Base, operator: Operator, k: int, limit: int | None, modes: tuple[str, ...], **keywords: Any) -> Any:
    defect = operator.defect
    if defect.render_none and modes:
        keywords.setdefault("render_mode", modes[0])
    if defect.unlimited:
        assert base.limit is not None
        keywords[base.limit] = 10**6
    env = base.make(**keywords)
    if base.kind == "gymnasium":
        from mutants.gym_wrapper import GymMutant

        return GymMutant(env, defect, k, limit, functools.partial(_build, base, operator, k, limit, modes))
    from mutants.pz_wrappers import AecMutant, ParallelMutant

    return (AecMutant if base.kind == "aec" else ParallelMutant)(env, defect, k, limit)


def _jax_mutant(base: Base, operator: Operator, k: int) -> Callable[..., Any]:
    from mutants.jax_wrapper import JAX_DEFECTS, JUMANJI_ABSENT

    hooks = JAX_DEFECTS.get(operator.name)
    if hooks is None:
        raise NotApplicable("a functional JAX environment has no place for it")
    if base.kind == "jumanji":
        if operator.name in JUMANJI_ABSENT:
            raise NotApplicable(JUMANJI_ABSENT[operator.name])
        return functools.partial(_jumanji_mutant, base, hooks, k)
    return functools.partial(_gymnax_mutant, base, hooks, k)


def _gymnax_mutant(base: Base, hooks: Any, k: int) -> Any:
    from mutants.jax_wrapper import GymnaxMutant

    env, params = base.make()
    return GymnaxMutant(env, params, hooks, k)


def _jumanji_mutant(base: Base, hooks: Any, k: int) -> Any:
    from mutants.jax_wrapper import JumanjiMutant

    return JumanjiMutant(base.make(), hooks, k)
