"""``check_env``: property-based checking of a Gymnasium environment.

Hypothesis draws a reset seed, an episode length ``n <= max_steps`` and, step by step,
actions from the declared action space (:func:`spacealg.strategies.members`, so actions
have the action space's dtypes). The environment is reset with the seed and stepped ``n``
times, reset again whenever an episode ends; then (``determinism=True``) the same seed and
actions are replayed and the two trajectories compared. Every property of
:data:`~spacealg.testing.engine.errors.PROPERTIES` is checked at every reset and step;
membership uses :func:`spacealg.contains`, which on a Gymnasium space is the space's own
``contains`` (Gymnasium's dtype policy: a float64 observation is not in a float32 Box).
The first broken property is shrunk by Hypothesis to the smallest seed and the shortest
action sequence, and raised as :class:`EnvCheckError`.

Where the environment declares an episode limit (``max_episode_steps``: its spec, a
TimeLimit), one example in eight runs to that limit and just past it, and the episode must
have ended by then (``max-episode-steps``; not checked where no example ran that far).

Law: a sound environment passes (returns an :class:`EnvCheckReport`); an environment that
breaks a property for some seed and actions reachable within ``max_steps`` steps raises,
with a probability that grows with ``max_examples``.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Unpack

import numpy as np

from spacealg.strategies.members import members
from spacealg.testing.engine.driver import Budget, describe_exception, snapshot
from spacealg.testing.engine.episode import Actor, Api, Episode, Limit, Plain, act_alone, plain_episode
from spacealg.testing.engine.errors import PropertyError, short
from spacealg.testing.engine.infos import recorded
from spacealg.testing.engine.lints import space_lints
from spacealg.testing.engine.masks import find_mask
from spacealg.testing.engine.probes import first_look, outside, run_probes
from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_MAX_STEPS,
    DETERMINISM,
    ENDED,
    ILLEGAL,
    MASKED,
    REPLAYED,
    STEPPED,
    CheckOptions,
    Declared,
    Draws,
    EnvCheckReport,
    EnvKind,
    Precondition,
    action_fallback,
    check_declared,
    check_kind,
    named_spaces,
)
from spacealg.testing.engine.snippets import SAME, replay_tail, reproduction
from spacealg.testing.engine.values import (
    check_flags,
    check_info,
    check_observation,
    check_reward,
    reset_of,
)

__all__ = ["API", "DEFAULT_MAX_EXAMPLES", "DEFAULT_MAX_STEPS", "GYMNASIUM", "EnvCheckReport", "check_env"]

PROPERTIES: dict[str, str] = {
    "declared-spaces": "the environment declares observation and action spaces that are well-formed sets (a "
    "Box's low and high have its shape; a space's own sample() is a member) and can be drawn from",
    "no-exception": "reset(seed=...) and step(action) raise no exception for an action of the action space",
    "reset-signature": "reset returns a pair (observation, info)",
    "step-signature": "step returns a 5-tuple (observation, reward, terminated, truncated, info)",
    "observation-in-space": "every observation is a member of the declared observation space",
    "reward-finite-real": "every reward is a finite real scalar (int, float or a numpy number)",
    "terminated-bool": "terminated is a bool",
    "truncated-bool": "truncated is a bool",
    "info-dict": "info is a dict",
    "reset-after-done": "reset works after an episode has ended",
    "reset-determinism": "the same seed gives the same first observation",
    "step-determinism": "the same seed and actions give the same trajectory (observations, rewards, flags and infos)",
    "global-rng": "the environment's randomness comes from its own generator (self.np_random, seeded "
    "by reset), not from the global random or numpy.random state",
    "reset-seed": "reset(seed=s) seeds the environment: where resets are random at all, different "
    "seeds give different episodes",
    "reset-stream": "reset() without a seed continues the random stream instead of reseeding",
    "observation-aliasing": "a returned observation is not a buffer the environment mutates later (at any depth "
    "of a Dict or Tuple observation)",
    "action-mask": "a published action mask has the shape and dtype the action space needs and "
    "allows at least one action while the agent must act",
    "illegal-action": "an action outside the mask is rejected with a clear exception or handled like any step",
    "reset-options": "reset(seed=..., options={}) is accepted",
    "close-twice": "close() can be called twice",
    "render-modes": "render_mode is None or one of metadata['render_modes'], and each declared render mode "
    "renders what it promises (an RGB uint8 image, a string, a list of them, None for human)",
}
"""The properties ``check_env`` checks (and the other single-step kinds build on): name ->
the law it states."""

GYMNASIUM_PROPERTIES: dict[str, str] = {
    **PROPERTIES,
    "max-episode-steps": "where the environment declares max_episode_steps (its spec, a TimeLimit), every "
    "episode ends (terminated or truncated) by that step",
}
"""The properties of the Gymnasium kind: :data:`PROPERTIES` and the declared episode limit."""

LIMIT = Precondition(
    "limit",
    "no example ran an episode to max_episode_steps: every one ended sooner, or the limit lies beyond the "
    "steps drawn",
)


class Limits(NamedTuple):
    """What a Gymnasium episode reads once: the declared spaces and episode limit."""

    observation_space: Any
    action_space: Any
    limit: int | None


def _reset(episode: Episode, done_at: int | None) -> None:
    (obs, info), where = reset_of(episode.env, episode.seed, done_at, 2, "(observation, info)")
    check_observation(obs, episode.state.observation_space, done_at, where)
    check_info(info, done_at, where)
    episode.hold(None, obs, done_at)
    episode.last = (obs, info)
    episode.trace.append(("reset", snapshot(obs), recorded(info)))


def _returned(episode: Episode, k: int, result: Any) -> bool:
    if not (isinstance(result, tuple) and len(result) == 5):
        size = f"a {len(result)}-tuple" if isinstance(result, tuple) else type(result).__name__
        raise PropertyError("step-signature", f"step returned {size}: {short(result)}", k)
    obs, reward, terminated, truncated, info = result
    check_observation(obs, episode.state.observation_space, k)
    check_reward(reward, k)
    check_flags(terminated, truncated, k)
    check_info(info, k)
    episode.hold(None, obs, k)
    episode.last = (obs, info)
    episode.trace.append(("step", snapshot(obs), snapshot(reward), bool(terminated), bool(truncated), recorded(info)))
    return bool(terminated or truncated)


def _actors(episode: Episode, k: int) -> list[Actor]:
    observation, info = episode.last
    return [Actor(None, observation, info, lambda at: episode.state.action_space)]


def _limit(episode: Episode) -> Limit | None:
    """``max-episode-steps``: where a limit is declared, the episode's step number ``limit``
    ends it; reached (:data:`LIMIT`) by an episode that ran that far."""
    limit = episode.state.limit
    return None if limit is None else Limit("max-episode-steps", LIMIT.mark, limit, limit,
                                            f"max_episode_steps is {limit}")


API = Api(
    reset=_reset,
    actors=_actors,
    act=act_alone,
    returned=_returned,
    plain=Plain(
        "env.reset({seed})",
        [
            "result = env.step(action)",
            "assert isinstance(result, tuple) and len(result) == 5, f'step returned {result!r}'",
            "trace.append(result)",
        ],
        "result[2] or result[3]",
    ),
    start=lambda env: Limits(env.observation_space, getattr(env, "action_space", None), declared_limit(env)),
    limit=_limit,
)
"""The Gymnasium API (a reset returns ``(observation, info)``, a step the 5-tuple): its
episode (:class:`~spacealg.testing.engine.episode.Episode`) and its plain-Python twin."""


# -- the snippet: the common properties asserted in plain Python ------------------------------

_OBSERVATION = [
    "for entry in trace:",
    "    observation = entry[0]",
    "    kind = getattr(observation, 'dtype', type(observation).__name__)",
    "    assert env.observation_space.contains(observation), (",
    "        f'observation {observation!r} (dtype {kind}) is not in {env.observation_space}')",
]

ASSERTIONS = {
    "observation-in-space": _OBSERVATION,
    "reward-finite-real": [
        "for entry in trace[1:]:",
        "    if len(entry) == 5:",
        "        reward = entry[1]",
        "        real = isinstance(reward, (int, float, np.integer, np.floating)) and not isinstance(",
        "            reward, (bool, np.bool_))",
        "        assert real and np.isfinite(reward), f'reward {reward!r} of type {type(reward).__name__}'",
    ],
    "terminated-bool": [
        "for entry in trace[1:]:",
        "    if len(entry) == 5:",
        "        assert isinstance(entry[2], (bool, np.bool_)), f'terminated {entry[2]!r}'",
    ],
    "truncated-bool": [
        "for entry in trace[1:]:",
        "    if len(entry) == 5:",
        "        assert isinstance(entry[3], (bool, np.bool_)), f'truncated {entry[3]!r}'",
    ],
    "info-dict": [
        "for entry in trace:",
        "    assert isinstance(entry[-1], dict), f'info {entry[-1]!r} of type {type(entry[-1]).__name__}'",
    ],
}
"""The properties that the snippet asserts on the trace of
:data:`API`'s plain episode."""


def _determinism(error: Any) -> list[str]:
    keys = tuple(getattr(error, "ignored_info", ()) or ())
    lines = [*SAME]
    if keys:
        lines += [
            f"IGNORED = {keys!r}  # volatile info entries, left out as in the check",
            "",
            "def clean(entry):",
            "    return tuple({k: v for k, v in x.items() if k not in IGNORED} if isinstance(x, dict) else x",
            "                 for x in entry)",
            "",
        ]
    wrap = "clean" if keys else ""
    if error.property == "global-rng":  # the global generators seeded differently, as the check did
        lines += [
            "import random",
            "",
            "def seeded(seed):",
            "    random.seed(seed)",
            "    np.random.seed(seed)",
            "    return episode()",
            "",
        ]
    runs = "seeded(1), seeded(2)" if error.property == "global-rng" else "episode(), episode()"
    return [
        *lines,
        f"first, second = {runs}",
        "assert len(first) == len(second), f'{len(first)} entries, then {len(second)}'",
        "for i, (a, b) in enumerate(zip(first, second)):",
        f"    assert same({wrap}(a), {wrap}(b)), f'entry {{i}} differs between the runs:\\n{{a!r}}\\n{{b!r}}'",
    ]


def _tail(error: Any) -> list[str]:
    if error.property in DETERMINISM:  # the two runs compared in plain Python
        return _determinism(error)
    if error.property in ASSERTIONS:
        return ["trace = episode()", *ASSERTIONS[error.property]]
    return ["trace = episode()", "", *replay_tail(error)]


def snippet(error: Any) -> str:
    """The reproduction of a Gymnasium failure: its episode, then the property asserted in
    plain Python where it can be (:data:`ASSERTIONS`, the determinism runs), else replayed."""
    return reproduction(error, plain_episode(API.plain), _tail, probe_episode=PROBE_EPISODE)


def _declared(env: Any) -> Declared:
    try:
        space, observed = env.action_space, env.observation_space
    except Exception as error:
        raise PropertyError("declared-spaces", f"cannot read the spaces: {describe_exception(error)}") from error
    check_declared(space, "action_space")
    check_declared(observed, "observation_space")
    try:
        actions = members(space)
        actions.validate()
    except Exception as error:
        raise PropertyError(
            "declared-spaces", f"cannot draw actions from the action space: {describe_exception(error)}"
        ) from error

    def draw(draws: Draws, factors: list[np.ndarray] | None) -> Any:
        return draws.action(None, factors, lambda: space, lambda: actions)

    return draw, episode_limit(env)


def episode_limit(env: Any) -> int | None:
    """The environment's own episode limit in steps (``spec.max_episode_steps``, a
    TimeLimit's ``_max_episode_steps``), capped at 2,000; None if it declares none. An
    unwrapped env's spec counts here (its long episodes reach the limit: an env that ends
    its episodes there itself) though not for ``max-episode-steps`` (:func:`declared_limit`)."""
    limit = getattr(getattr(env, "spec", None), "max_episode_steps", None)
    if limit is None:
        limit = getattr(env, "_max_episode_steps", None)
    return min(int(limit), 2000) if isinstance(limit, (int, np.integer)) and limit > 0 else None


def declared_limit(env: Any) -> int | None:
    """The episode limit ``env`` declares (``spec.max_episode_steps``, a TimeLimit's
    ``_max_episode_steps``), uncapped; None where it declares none or is unwrapped
    (``gymnasium.make`` gives the bare environment its spec too, but the TimeLimit that
    enforces the limit is a wrapper: :func:`_unchecked`)."""
    try:
        if getattr(env, "unwrapped", None) is env and getattr(env, "_max_episode_steps", None) is None:
            return None
        limit = getattr(getattr(env, "spec", None), "max_episode_steps", None)
        if limit is None:
            limit = getattr(env, "_max_episode_steps", None)
    except Exception:
        return None
    return int(limit) if isinstance(limit, (int, np.integer)) and limit > 0 else None


def _unchecked(env: Any) -> dict[str, str]:
    """The properties that do not apply to ``env``, with why."""
    if declared_limit(env) is not None:
        return {}
    if getattr(getattr(env, "spec", None), "max_episode_steps", None) is not None:
        why = "the environment is unwrapped: the max_episode_steps of its spec is the TimeLimit wrapper's to enforce"
    else:
        why = "the environment declares no max_episode_steps"
    return {"max-episode-steps": why}


def check_env(env: Any, **options: Unpack[CheckOptions]) -> EnvCheckReport:
    """The Gymnasium kind's checker: ``env`` checked as a Gymnasium environment, ``options``
    and outcome as :func:`spacealg.testing.check_env`'s (which hands an environment of
    another kind to that kind's checker, as the registry recognises it)."""
    return check_kind(GYMNASIUM, env, options)


PROBE_EPISODE = [
    "def probe_episode(env, seed, actions):  # the first observation, then each step's observation and reward",
    "    observation, info = env.reset() if seed is None else env.reset(seed=seed)",
    "    trace = [keep(observation)]",
    "    if masked(observation, info):",
    "        return trace",
    "    for action in actions:",
    "        observation, reward, terminated, truncated, info = env.step(keep(action))",
    "        trace.append((keep(observation), keep(reward)))",
    "        if terminated or truncated:",
    "            break",
    "    return trace",
]
"""The episode of the RNG probes in plain Python (run by the probe, shown by its snippet)."""


def probes(source: EnvSource, clock: Budget | None = None) -> list[Any]:
    """The probes of a Gymnasium environment; returns the warnings."""

    def read(env: Any) -> tuple[list[Any], list[Any]]:
        draw = action_fallback(env.action_space, 0)
        return space_lints(env.observation_space, env.action_space), [draw(None) for _ in range(3)]

    warned, actions = first_look(source, read)
    if actions is None:
        return warned

    def act(env: Any) -> str | None:
        return outside(env.step(snapshot(actions[0])), env.observation_space)

    def start_and_act(env: Any) -> None:
        obs, info = env.reset(seed=0)
        if find_mask(obs, info) is None:
            act(env)

    return run_probes(source, warned, actions, PROBE_EPISODE, clock, act, start_and_act)


PRECONDITIONS: dict[str, tuple[Precondition, ...]] = {
    **dict.fromkeys(
        ("no-exception", "step-signature", "reward-finite-real", "terminated-bool", "truncated-bool"), (STEPPED,)
    ),
    "observation-aliasing": (STEPPED,),
    "reset-after-done": (ENDED,),
    "reset-determinism": (REPLAYED,),
    "step-determinism": (STEPPED, REPLAYED),
    "global-rng": (REPLAYED,),
    "action-mask": (MASKED,),
    "illegal-action": (ILLEGAL,),
}
"""What an example must reach for each property to count as checked (the others: a reset)."""

GYMNASIUM = EnvKind(
    "gymnasium",
    GYMNASIUM_PROPERTIES,
    check_env,
    {**PRECONDITIONS, "max-episode-steps": (LIMIT,)},
    recognises=lambda env: True,  # the last kind of the registry: whatever no other kind recognises
    spaces=named_spaces,
    snippet=snippet,
    episode=API.episode,
    declared=_declared,
    what="(observation, reward, terminated, truncated, info)",
    probes=probes,
    unchecked=_unchecked,
)
"""The Gymnasium kind (single agent)."""
