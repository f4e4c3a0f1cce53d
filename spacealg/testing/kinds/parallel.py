"""``check_parallel_env``: property-based checking of a PettingZoo parallel environment.

As :func:`spacealg.testing.check_env`, per agent: each step, Hypothesis draws an action
for every live agent from ``env.action_space(agent)``; every returned observation is
checked against ``env.observation_space(agent)``, every reward, flag and info as in the
single-agent check. On top, the agents' life cycle
(:data:`~spacealg.testing.engine.errors.PARALLEL_PROPERTIES`):

- every agent in ``env.agents`` and in the returned reward/termination/truncation dicts
  is one of ``possible_agents`` (``agents-possible``);
- every live agent gets an observation, a reward, terminated, truncated and an info; no
  agent that is not live is returned (observations and infos may carry extra keys that are
  not agents, as PettingZoo allows); after a step ``env.agents`` holds exactly the live
  agents that did not terminate or get truncated, plus newly spawned ones; an agent that
  finished is never returned again in the episode (``agents-life-cycle``);
- ``max-cycles``: where the environment declares ``max_cycles``, no episode is still running
  after ``max_cycles + 1`` steps (checked, and reported held, only where some example ran
  an episode that far: one that ended at ``max_cycles`` steps or later, or one still running
  past the bound);
- the observations a step returned are not changed in place by a later step or reset, at
  any depth of an agent's Dict or Tuple observation (``observation-aliasing``).

``possible_agents`` is optional, as in PettingZoo (environments that spawn agents with new
names may lack it): without it ``agents-possible`` is not checked, rewards, terminations
and truncations may hold only live agents, and each new agent's action space is read when
it first appears. The episode is reset when ``env.agents`` becomes empty. PettingZoo is
not imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Unpack

import numpy as np

from spacealg.testing.engine.driver import Budget, passed_over, snapshot
from spacealg.testing.engine.episode import Actor, Api, Episode, Limit, Plain, plain_episode, who
from spacealg.testing.engine.errors import PropertyError, short
from spacealg.testing.engine.infos import recorded_per_agent
from spacealg.testing.engine.lints import space_lints
from spacealg.testing.engine.masks import find_mask
from spacealg.testing.engine.probes import first_look, run_probes
from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import (
    CYCLES,
    STEPPED,
    AgentActions,
    CheckOptions,
    Declared,
    Draws,
    EnvCheckReport,
    EnvKind,
    Precondition,
    action_fallback,
    agents_of,
    check_kind,
)
from spacealg.testing.engine.snippets import reproduction
from spacealg.testing.engine.values import (
    check_flags,
    check_info,
    check_observation,
    check_reward,
    reset_of,
)
from spacealg.testing.kinds.gymnasium import PRECONDITIONS as GYMNASIUM_PRECONDITIONS
from spacealg.testing.kinds.gymnasium import PROPERTIES

__all__ = [
    "API", "PARALLEL", "Cast", "agent_lints", "check_parallel_env", "check_possible", "lints_and_probe_actions",
    "max_cycles", "same_space",
]

PARALLEL_PROPERTIES: dict[str, str] = {
    **PROPERTIES,
    "agents-possible": "every agent (in env.agents and in the returned dicts) is one of possible_agents",
    "agents-life-cycle": "each live agent gets a reward, terminated and truncated; an agent that "
    "terminated or was truncated is not returned again and leaves env.agents",
    "same-space": "observation_space(agent) and action_space(agent) return the same object on every call",
    "max-cycles": "an environment with max_cycles ends every episode within max_cycles cycles (a cycle: a parallel "
    "step, or each live agent of an AEC env acting once; one cycle of slack)",
}
"""The properties ``check_parallel_env`` checks (those of ``PROPERTIES`` and the agents'): name -> law."""


def _names(agents: Any) -> str:
    return ", ".join(repr(a) for a in sorted(agents, key=repr))


def same_space(env: Any, kind: str, agent: Any, step: int | None, where: str = "") -> Any:
    """``env.<kind>_space(agent)``, checked to be the object returned by an earlier call
    (PettingZoo's envs cache their spaces; a new object per call breaks seeding and
    identity checks). ``same-space`` otherwise (unless passed over: already found broken)."""
    method = getattr(env, f"{kind}_space")
    first, second = method(agent), method(agent)
    if first is not second and not passed_over("same-space"):
        detail = f"{kind}_space({agent!r}) returned a new object on a second call ({first!r})"
        raise PropertyError("same-space", detail, step, where)
    return first


def check_possible(possible: set[Any] | None, agents: Any, what: str, step: int | None, where: str = "") -> None:
    """``agents-possible``: ``what`` (``agents``) holds only agents of ``possible`` (None:
    ``possible_agents`` is not declared, nothing to check)."""
    strangers = [a for a in agents if possible is not None and a not in possible]
    if strangers:
        detail = f"{what} holds {_names(strangers)}, not in possible_agents ({_names(possible)})"
        raise PropertyError("agents-possible", detail, step, where)


def max_cycles(env: Any) -> int | None:
    """PettingZoo's ``max_cycles`` of an environment (through wrappers), if it declares one."""
    for holder in (env, getattr(env, "unwrapped", None), getattr(env, "aec_env", None)):
        value = getattr(holder, "max_cycles", None)
        if isinstance(value, (int, np.integer)) and value > 0:
            return int(value)
    return None


class Cast:
    """What a PettingZoo episode keeps of its agents: ``possible`` (None: not declared),
    ``cycles`` (``max_cycles``; None: none) and since the reset, the agents ``finished`` (at
    which step)."""

    def __init__(self, env: Any) -> None:
        possible = getattr(env, "possible_agents", None)
        self.possible = None if possible is None else set(possible)
        self.cycles = max_cycles(env)
        self.finished: dict[Any, int] = {}

    def is_agent(self, key: Any, returned: str) -> bool:
        """Whether a key of a returned dict names an agent (observations and infos may hold
        other keys; without possible_agents, any key of the other dicts is an agent)."""
        if self.possible is not None:
            return key in self.possible
        return returned in ("rewards", "terminations", "truncations") or key in self.finished


def _reset(episode: Episode, done_at: int | None) -> None:
    env, cast = episode.env, episode.state
    (observations, infos), where = reset_of(env, episode.seed, done_at, 2, "(observations, infos)", dicts=True)
    agents = list(env.agents)
    check_possible(cast.possible, agents, "env.agents after reset", done_at, where)
    for name, returned in (("observations", observations), ("infos", infos)):
        missing = [a for a in agents if a not in returned]
        if missing:
            detail = f"reset returned no {name} for the live agent(s) {_names(missing)}"
            raise PropertyError("agents-life-cycle", detail, done_at, where)
    for agent in agents:
        space = same_space(env, "observation", agent, done_at, where)
        check_observation(observations[agent], space, done_at, where, who(agent))
        check_info(infos[agent], done_at, where, who(agent))
    episode.hold(None, observations, done_at, "the observations")
    cast.finished = {}
    episode.last = (observations, infos)
    episode.trace.append(("reset", snapshot({a: observations[a] for a in agents}), agents, recorded_per_agent(infos)))


def _actors(episode: Episode, k: int) -> list[Actor]:
    observations, infos = episode.last
    env = episode.env

    def space(agent: Any) -> Callable[[int | None], Any]:
        return lambda at: same_space(env, "action", agent, at)

    return [Actor(a, observations.get(a), infos.get(a), space(a)) for a in env.agents]


def _act(episode: Episode, actors: list[Actor], factors: dict[Any, Any]) -> tuple[Any, dict[Any, Any]]:
    actions = episode.draw([actor.agent for actor in actors], episode.env, factors)
    return actions, actions


def _returned(episode: Episode, k: int, result: Any) -> bool:
    env, cast = episode.env, episode.state
    if not (isinstance(result, tuple) and len(result) == 5 and all(isinstance(d, dict) for d in result)):
        raise PropertyError("step-signature", f"step returned {short(result)} instead of a 5-tuple of dicts", k)
    observations, rewards, terminations, truncations, infos = result
    live, after = [actor.agent for actor in episode.acting], list(env.agents)
    check_possible(cast.possible, after, f"env.agents after step {k}", k)
    for name, returned in (("rewards", rewards), ("terminations", terminations), ("truncations", truncations)):
        check_possible(cast.possible, returned, name, k)
    _check_life_cycle(cast, k, live, after, result)
    expected = set(live) | (set(after) - set(live))
    for agent in sorted(expected, key=repr):
        check_observation(observations[agent], same_space(env, "observation", agent, k), k, "", who(agent))
        check_reward(rewards[agent], k, who(agent))
        check_flags(terminations[agent], truncations[agent], k, who(agent))
        check_info(infos[agent], k, "", who(agent))
    done = {a for a in expected if terminations[a] or truncations[a]}
    remaining = expected - done
    if set(after) != remaining:
        kept = sorted(set(after) & done, key=repr)
        lost = sorted(remaining - set(after), key=repr)
        detail = f"env.agents after step {k} is [{_names(after)}]; expected [{_names(remaining)}]"
        if kept:
            detail += f": {_names(kept)} terminated or was truncated but is still in env.agents"
        if lost:
            detail += f": {_names(lost)} left env.agents without terminating or being truncated"
        raise PropertyError("agents-life-cycle", detail, k)
    episode.hold(None, observations, k, "the observations")
    cast.finished.update(dict.fromkeys(done, k))
    episode.last = (observations, infos)
    observed = snapshot({a: observations[a] for a in expected})
    episode.trace.append(("step", observed, snapshot(rewards), dict(terminations), dict(truncations), after,
                          recorded_per_agent(infos)))
    return not after


def _check_life_cycle(cast: Cast, k: int, live: list[Any], after: list[Any], result: tuple[Any, ...]) -> None:
    revived = [a for a in after if a in cast.finished]
    if revived:
        at = cast.finished[revived[0]]
        detail = f"{_names(revived)} finished at step {at} and is in env.agents again after step {k}"
        raise PropertyError("agents-life-cycle", detail, k)
    expected = set(live) | (set(after) - set(live))
    names = ("observations", "rewards", "terminations", "truncations", "infos")
    for name, returned in zip(names, result):
        ghosts = [a for a in returned if cast.is_agent(a, name) and a not in expected]
        if ghosts:
            past = [a for a in ghosts if a in cast.finished]
            reason = f"finished at step {cast.finished[past[0]]} and is returned again" if past else ""
            detail = f"{name} of step {k} holds {_names(ghosts)}, which {reason or 'is not a live agent'}"
            raise PropertyError("agents-life-cycle", detail, k)
        missing = [a for a in expected if a not in returned]
        if missing:
            detail = f"step {k} returned no {name} for the live agent(s) {_names(missing)}"
            raise PropertyError("agents-life-cycle", detail, k)


def _limit(episode: Episode) -> Limit | None:
    """``max-cycles`` (see the module docstring): decided (:data:`CYCLES`) by an episode that
    ended at ``max_cycles`` steps or later, or one still running after ``max_cycles + 1``."""
    cycles = episode.state.cycles
    return None if cycles is None else Limit("max-cycles", CYCLES.mark, cycles, cycles + 2,
                                             f"max_cycles is {cycles}")


API = Api(
    reset=_reset,
    actors=_actors,
    act=_act,
    returned=_returned,
    plain=Plain(
        "(env.reset({seed})[0], list(env.agents))",
        ["trace.append((*env.step(action), list(env.agents)))"],
        "not env.agents",
    ),
    start=Cast,
    limit=_limit,
)
"""The PettingZoo parallel API (per-agent dicts; the episode ends when ``env.agents`` is
empty): its episode (:class:`~spacealg.testing.engine.episode.Episode`) and its plain-Python twin."""


def _declared(env: Any) -> Declared:
    agents = AgentActions.read(env)

    def draw(draws: Draws, live: list[Any], env: Any, factors: dict[Any, Any]) -> dict[Any, Any]:
        return {agent: agents.draw(draws, agent, env, factors.get(agent)) for agent in live}

    cycles = max_cycles(env)
    return draw, None if cycles is None else min(cycles + 1, 2000)


def undeclared(env: Any) -> dict[str, str]:
    """The properties that do not apply to a PettingZoo env (parallel or AEC) for what it does
    not declare (``possible_agents``, ``max_cycles``), with why."""
    why: dict[str, str] = {}
    if getattr(env, "possible_agents", None) is None:
        why["agents-possible"] = "the environment declares no possible_agents"
    if max_cycles(env) is None:
        why["max-cycles"] = "the environment declares no max_cycles"
    return why


def check_parallel_env(env: Any, **options: Unpack[CheckOptions]) -> EnvCheckReport:
    """Check a PettingZoo parallel environment (see the module docstring); the options and
    the outcome are those of :func:`spacealg.testing.check_env`, with per-agent actions
    (one dict of the live agents' actions per step) and per-agent masks
    (``observations[agent]["action_mask"]`` or ``infos[agent]["action_mask"]``); long
    episodes reach the environment's ``max_cycles``."""
    return check_kind(PARALLEL, env, options)


def spaces(env: Any) -> list[tuple[str, Any]]:
    """Each agent's declared spaces, named (agents that spawn: those at ``reset(seed=0)``)."""
    return [
        (f"{space} space of {agent!r}", getattr(env, f"{space}_space")(agent))
        for agent in agents_of(env)
        for space in ("observation", "action")
    ]


def snippet(error: Any) -> str:
    """The reproduction of a parallel failure: its episode, then spacealg's replay."""
    notes = ["actions[k] is the dict of actions of the live agents at step k + 1"]
    return reproduction(error, plain_episode(API.plain), notes=notes, probe_episode=PROBE_EPISODE)


def recognises(env: Any) -> bool:
    """PettingZoo's parallel API: per-agent space methods (a Gymnasium env's spaces are not
    callable); ``possible_agents`` is optional there. (AEC environments, which have them
    too, are recognised first.)"""
    return callable(getattr(env, "action_space", None)) and callable(getattr(env, "observation_space", None))


def agent_lints(env: Any) -> list[Any]:
    """The declaration lints of each agent's spaces (a PettingZoo env, parallel or AEC)."""
    return [
        lint
        for agent in agents_of(env)
        for lint in space_lints(env.observation_space(agent), env.action_space(agent), f"agent {agent!r}: ")
    ]


def lints_and_probe_actions(env: Any) -> tuple[list[Any], list[Any]]:
    """The agents' declaration lints, and the RNG probes' three joint actions (each agent's
    fallback draw), read from a PettingZoo env (parallel or AEC) before its first reset."""
    draws = {agent: action_fallback(env.action_space(agent), 0) for agent in agents_of(env)}
    return agent_lints(env), [{agent: draw(None) for agent, draw in draws.items()} for _ in range(3)]


PROBE_EPISODE = [
    "def probe_episode(env, seed, actions):  # the first observations, then each step's observations and rewards",
    "    observations, infos = env.reset() if seed is None else env.reset(seed=seed)",
    "    trace = [keep(observations)]",
    "    if any(masked(observation, infos.get(agent)) for agent, observation in observations.items()):",
    "        return trace",
    "    for joint in actions:  # the live agents' actions",
    "        if not env.agents:",
    "            break",
    "        step = {agent: keep(joint[agent]) for agent in env.agents if agent in joint}",
    "        observations, rewards, *_ = env.step(step)",
    "        trace.append((keep(observations), keep(rewards)))",
    "    return trace",
]
"""The episode of the RNG probes in plain Python (run by the probe, shown by its snippet)."""


def probes(source: EnvSource, clock: Budget | None = None) -> list[Any]:
    """The probes of a PettingZoo parallel environment; returns the warnings."""

    warned, actions = first_look(source, lints_and_probe_actions)
    if actions is None:
        return warned

    def act(env: Any) -> str | None:
        env.step({a: snapshot(actions[0][a]) for a in list(getattr(env, "agents", [])) if a in actions[0]})
        return None

    def start_and_act(env: Any) -> None:
        observations, infos = env.reset(seed=0)
        if not any(find_mask(o, infos.get(a)) is not None for a, o in observations.items()):
            act(env)

    return run_probes(source, warned, actions, PROBE_EPISODE, clock, act, start_and_act)


PRECONDITIONS: dict[str, tuple[Precondition, ...]] = {
    **GYMNASIUM_PRECONDITIONS,
    "agents-life-cycle": (STEPPED,),
    "max-cycles": (CYCLES,),
}
"""What an example must reach for each property to count as checked (the others: a reset)."""

PARALLEL = EnvKind(
    "parallel",
    PARALLEL_PROPERTIES,
    check_parallel_env,
    PRECONDITIONS,
    recognises=recognises,
    spaces=spaces,
    snippet=snippet,
    episode=API.episode,
    declared=_declared,
    what="(observations, rewards, terminations, truncations, agents, infos)",
    probes=probes,
    unchecked=undeclared,
)
"""The PettingZoo parallel kind."""
