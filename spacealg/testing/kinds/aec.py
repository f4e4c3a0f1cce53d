"""``check_aec_env``: property-based checking of a PettingZoo AEC environment.

An AEC environment steps one agent at a time: ``reset(seed=...)`` returns None,
``agent_selection`` names the agent to act, ``last()`` gives its observation, cumulative
reward, flags and info, and ``step(action)`` acts for it (``None`` for an agent that has
terminated or been truncated, which then leaves ``env.agents``). Hypothesis draws the reset
seed, the number of agent-steps and, for each agent that must act, an action from
``action_space(agent)`` — a legal one where the environment publishes a mask
(``observe(agent)["action_mask"]`` or ``infos[agent]["action_mask"]``, as PettingZoo's
classic games do), so that games are played, not ended by the first illegal move.

Properties (:data:`~spacealg.testing.engine.errors.AEC_PROPERTIES`), at every reset and step:

- ``reset-signature`` / ``step-signature``: reset and step return None; ``last()`` a 5-tuple;
- ``agent-iteration``: ``agent_selection`` and the first agent of ``agent_iter()`` name a live
  agent; ``terminations``, ``truncations``, ``rewards``, ``infos`` and ``_cumulative_rewards``
  hold exactly ``env.agents``; ``last()`` returns ``observe(agent_selection)`` and
  ``_cumulative_rewards[agent_selection]``, and that reward is the sum of the agent's
  ``env.rewards`` entries since it last acted (summed by the checker); an agent stepped with None leaves ``env.agents``;
- ``observation-in-space``: ``observe(agent)`` within ``observation_space(agent)``;
  ``same-space``: the space methods return the same object on every call;
- ``state-in-space``: ``state()`` within ``state_space`` where one is declared;
- ``observation-aliasing``: the observation ``last()`` returned is not changed in place by
  the agent-steps that follow (at any depth of a Dict or Tuple observation); one is held
  per agent (its latest), so that an environment with one observation buffer per agent,
  overwritten when that agent next observes, is caught too;
- ``max-cycles``: where ``max_cycles`` is declared (``possible_agents`` or not), an episode
  ends within ``max_cycles`` cycles (one cycle: each live agent acts once; one cycle of
  slack); reported held only where some example ran an episode that far;
- rewards, flags and infos as in :func:`~spacealg.testing.check_env`; ``action-mask``,
  ``illegal-action``, ``agents-possible``, determinism (the same seed and actions give the
  same agents, observations, rewards, flags and infos), ``global-rng`` and the probes.

Long episodes reach ``max_cycles``. PettingZoo is not imported.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Unpack

from spacealg.testing.engine.driver import Budget, describe_exception, same, snapshot
from spacealg.testing.engine.episode import Actor, Api, Episode, Limit, Plain, plain_episode, who
from spacealg.testing.engine.errors import PropertyError, short
from spacealg.testing.engine.infos import recorded, recorded_per_agent
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
    check_kind,
)
from spacealg.testing.engine.snippets import reproduction
from spacealg.testing.engine.values import (
    check_flags,
    check_info,
    check_observation,
    check_reward,
    is_member,
    is_real_scalar,
    reset_of,
)
from spacealg.testing.kinds.parallel import (
    PARALLEL_PROPERTIES,
    Cast,
    _names,
    check_possible,
    lints_and_probe_actions,
    max_cycles,
    same_space,
    undeclared,
)
from spacealg.testing.kinds.parallel import PRECONDITIONS as PARALLEL_PRECONDITIONS
from spacealg.testing.kinds.parallel import spaces as parallel_spaces

__all__ = ["AEC", "API", "check_aec_env"]

AEC_PROPERTIES: dict[str, str] = {
    **PARALLEL_PROPERTIES,
    "reset-signature": "reset returns None (PettingZoo's AEC API)",
    "step-signature": "step returns None; last() returns (observation, reward, terminated, truncated, info)",
    "agent-iteration": "agent_selection (and agent_iter) names a live agent; a terminated or truncated agent "
    "is stepped with None and then leaves env.agents; terminations, truncations, rewards, infos and "
    "_cumulative_rewards hold exactly the live agents; last() agrees with observe() and "
    "_cumulative_rewards, and its reward is the sum of the agent's rewards entries since it last acted",
    "state-in-space": "state() is a member of state_space",
}
"""The properties ``check_aec_env`` checks (the parallel ones and the AEC protocol's): name -> law."""


RETURNED = ("terminations", "truncations", "rewards", "infos")
DEAD = "dead"  # the factors argument of draw for an agent that is stepped with None


class Turns(Cast):
    """What an AEC episode keeps beside its agents (:class:`~.parallel.Cast`): whether a
    ``state_space`` is declared, the most agents live at once since the reset (``width``),
    each agent's rewards entries since it last acted (``owed``), and what ``last()`` gave the
    agent acting (``seen``: agent, observation, reward, terminated, truncated, info)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.has_state = False
        with contextlib.suppress(Exception):
            self.has_state = getattr(env, "state_space", None) is not None
        self.width = 0
        self.owed: dict[Any, float] = {}
        self.seen: tuple[Any, ...] = ()

    def collect(self, env: Any) -> None:
        """Add this step's ``env.rewards`` to what each agent is owed (rewards that are not
        finite reals are reported by ``reward-finite-real`` when ``last()`` returns them)."""
        for agent, reward in (getattr(env, "rewards", None) or {}).items():
            with contextlib.suppress(TypeError, ValueError):
                self.owed[agent] = self.owed.get(agent, 0.0) + float(reward)


def _fail(detail: str, step: int | None, where: str = "") -> None:
    raise PropertyError("agent-iteration", detail, step, where)


def _check_dicts(episode: Episode, step: int | None, where: str) -> list[Any]:
    env = episode.env
    agents = list(env.agents)
    check_possible(episode.state.possible, agents, "env.agents", step, where)
    for name in RETURNED:
        returned = getattr(env, name, None)
        if not isinstance(returned, dict) or set(returned) != set(agents):
            keys = _names(returned) if isinstance(returned, dict) else type(returned).__name__
            _fail(f"env.{name} holds [{keys}]; env.agents is [{_names(agents)}]", step, where)
    cumulative = getattr(env, "_cumulative_rewards", None)
    if cumulative is not None and not set(agents) <= set(cumulative):
        missing = set(agents) - set(cumulative)
        _fail(f"env._cumulative_rewards has no entry for the live agent(s) {_names(missing)}", step, where)
    return agents


def _check_state(episode: Episode, step: int | None, where: str) -> None:
    env, turns = episode.env, episode.state
    if not turns.has_state:
        return
    try:
        state = env.state()
    except NotImplementedError:
        turns.has_state = False
        return
    except Exception as error:
        raise PropertyError("no-exception", f"state() raised {describe_exception(error)}", step, where) from error
    if not is_member(state, env.state_space):
        raise PropertyError("state-in-space", f"state() returned {short(state)}, not in {env.state_space!r}", step,
                            where)


def _check_cumulative(episode: Episode, agent: Any, reward: float, k: int) -> None:
    """``agent-iteration``: the reward ``last()`` returned is ``_cumulative_rewards[agent]``
    and the sum of the agent's ``env.rewards`` entries since it last acted."""
    cumulative = getattr(episode.env, "_cumulative_rewards", None)
    if cumulative is not None and agent in cumulative:
        held = cumulative[agent]
        if not (is_real_scalar(held) and same(reward, float(held))):
            _fail(f"{who(agent)}last() returned reward {reward!r} but _cumulative_rewards holds {short(held)}", k)
    owed = episode.state.owed.get(agent, 0.0)
    if not math.isclose(reward, owed, rel_tol=1e-9, abs_tol=1e-12):
        _fail(f"{who(agent)}last() returned reward {reward!r}, but the agent's rewards entries since it last acted "
              f"sum to {owed!r}", k)


def _selection(env: Any, step: int | None, where: str) -> Any:
    agent = env.agent_selection
    if agent not in env.agents:
        _fail(f"agent_selection is {agent!r}, not a live agent ({_names(env.agents)})", step, where)
    return agent


def _reset(episode: Episode, done_at: int | None) -> None:
    env, turns = episode.env, episode.state
    _, where = reset_of(env, episode.seed, done_at, None, "None")
    agents = _check_dicts(episode, done_at, where)
    observed = None
    if agents:
        agent = _selection(env, done_at, where)
        try:
            first = next(iter(env.agent_iter()))
        except Exception as error:
            raise PropertyError(
                "agent-iteration", f"agent_iter() raised {describe_exception(error)}", done_at, where
            ) from error
        if first != agent:
            _fail(f"agent_iter() yields {first!r} first, but agent_selection is {agent!r}", done_at, where)
        for a in agents:
            space = same_space(env, "observation", a, done_at, where)
            check_observation(env.observe(a), space, done_at, where, who(a))
        observed = snapshot(env.observe(agent))
    _check_state(episode, done_at, where)
    turns.width = len(agents)
    turns.owed = {}
    turns.collect(env)
    episode.trace.append(("reset", agents, observed, recorded_per_agent(dict(env.infos))))


def _actors(episode: Episode, k: int) -> list[Actor]:
    """The selected agent, checked with what ``last()`` gives it (``agent-iteration``,
    ``observation-aliasing``: the observations held per agent, and the values' properties)."""
    env, turns = episode.env, episode.state
    agent = _selection(env, k - 1 or None, "")
    try:
        result = env.last()
    except Exception as error:
        raise PropertyError("no-exception", f"last() raised {describe_exception(error)}", k) from error
    if not (isinstance(result, tuple) and len(result) == 5):
        raise PropertyError("step-signature", f"last() returned {short(result)}, not a 5-tuple", k)
    obs, reward, terminated, truncated, info = result
    episode.hold(agent, obs, k, f"the observation last() gave agent {agent!r}")
    check_observation(obs, same_space(env, "observation", agent, k), k, "", who(agent))
    if not same(obs, env.observe(agent)):
        _fail(f"{who(agent)}last() returned {short(obs)} but observe(agent) returns {short(env.observe(agent))}", k)
    check_reward(reward, k, who(agent))
    if is_real_scalar(reward):  # one passed over (not a real scalar) has no sum to agree with
        _check_cumulative(episode, agent, float(reward), k)
    turns.owed[agent] = 0.0
    check_flags(terminated, truncated, k, who(agent))
    check_info(info, k, "", who(agent))
    turns.seen = (agent, obs, reward, terminated, truncated, info)
    dead = bool(terminated or truncated)
    return [Actor(agent, obs, info, lambda at: same_space(env, "action", agent, at), masked=not dead)]


def _act(episode: Episode, actors: list[Actor], factors: dict[Any, Any]) -> tuple[Any, dict[Any, Any]]:
    """The selected agent's action; None, drawn as :data:`DEAD`, for one that has ended (so
    that the actions align with the agent-steps)."""
    agent = actors[0].agent
    if not actors[0].masked:
        episode.draw(agent, episode.env, DEAD)
        return None, {}
    action = episode.draw(agent, episode.env, factors.get(agent))
    return action, {agent: action}


def _returned(episode: Episode, k: int, returned: Any) -> bool:
    env, turns = episode.env, episode.state
    agent, obs, reward, terminated, truncated, info = turns.seen
    if returned is not None:
        raise PropertyError("step-signature", f"step returned {short(returned)} instead of None", k)
    turns.collect(env)
    agents = _check_dicts(episode, k, "")
    dead = bool(terminated or truncated)
    if dead and agent in agents:
        _fail(f"{who(agent)}was stepped with None after terminating or truncation but is still in env.agents", k)
    _check_state(episode, k, "")
    episode.trace.append(("step", agent, snapshot(obs), snapshot(reward), bool(terminated), bool(truncated),
                          recorded(info), dead))
    turns.width = max(turns.width, len(agents))
    return not agents


def _limit(episode: Episode) -> Limit | None:
    """``max-cycles``: where ``max_cycles`` is declared, an episode ends within
    ``(max_cycles + 1) * n + n`` agent-steps, ``n`` the most agents live at once since the
    reset (``possible_agents`` is not needed): one cycle of slack and the steps with None
    of the agents that ended. Decided (:data:`CYCLES`) by an episode that ended after
    ``max_cycles * n`` agent-steps or later, or one still running past the bound."""
    turns = episode.state
    if turns.cycles is None:
        return None
    width = turns.width
    said = f"max_cycles is {turns.cycles} ({width} agents, so {turns.cycles * width} agent-steps)"
    return Limit("max-cycles", CYCLES.mark, turns.cycles * width, (turns.cycles + 2) * width + 1, said)


API = Api(
    reset=_reset,
    actors=_actors,
    act=_act,
    returned=_returned,
    plain=Plain(
        "env.reset({seed})",
        [
            "if not env.agents:",
            "    env.reset()",
            "agent = env.agent_selection",
            "observation, reward, terminated, truncated, info = env.last()",
            "env.step(action)  # None: the selected agent has ended and is stepped with None",
            "trace.append((agent, observation, reward, terminated, truncated, info))",
        ],
        "not env.agents",
    ),
    start=Turns,
    limit=_limit,
    idle=lambda episode: not episode.env.agents,
    seen=0,
)
"""The PettingZoo AEC API (one agent acts at a time; ``last()`` is what it sees): its
episode (:class:`~spacealg.testing.engine.episode.Episode`) and its plain-Python twin."""


def _declared(env: Any) -> Declared:
    agents = AgentActions.read(env)
    possible = list(agents.spaces)

    def draw(draws: Draws, agent: Any, env: Any, factors: Any) -> Any:
        if isinstance(factors, str) and factors == DEAD:
            return None  # recorded as None, so that actions align with agent-steps
        return agents.draw(draws, agent, env, factors)

    cycles = max_cycles(env)
    return draw, None if cycles is None else min((cycles + 2) * (len(possible) or 1), 2000)


def _unchecked(env: Any) -> dict[str, str]:
    """The properties that do not apply to ``env``, with why."""
    why = {"agents-life-cycle": "the AEC life cycle is checked as agent-iteration", **undeclared(env)}
    declared = False
    with contextlib.suppress(Exception):
        declared = getattr(env, "state_space", None) is not None
    if not declared:
        why["state-in-space"] = "the environment declares no state_space"
    return why


def check_aec_env(env: Any, **options: Unpack[CheckOptions]) -> EnvCheckReport:
    """Check a PettingZoo AEC environment (see the module docstring); the options and the
    outcome are those of :func:`spacealg.testing.check_env`; ``max_steps`` counts
    agent-steps, and an error's ``actions`` has one entry per agent-step, in order: None
    where the selected agent had terminated or been truncated (and was stepped with None)."""
    return check_kind(AEC, env, options)


def snippet(error: Any) -> str:
    """The reproduction of an AEC failure: its episode, then spacealg's replay."""
    notes = ["actions[k] is the action of the agent selected at agent-step k + 1"]
    return reproduction(error, plain_episode(API.plain), notes=notes, probe_episode=PROBE_EPISODE)


def recognises(env: Any) -> bool:
    """PettingZoo's AEC API: ``agent_iter`` and ``last`` methods (``agent_selection``
    exists only after reset). Asked before the parallel API, whose per-agent space methods
    AEC environments have too."""
    return callable(getattr(env, "agent_iter", None)) and callable(getattr(env, "last", None))


PROBE_EPISODE = [
    "def probe_episode(env, seed, actions):  # each agent-step's agent, observation and reward (None: no agent left)",
    "    env.reset() if seed is None else env.reset(seed=seed)",
    "    trace = []",
    "    for joint in [*actions, None]:  # the fixed action of each agent",
    "        if not env.agents:",
    "            return [*trace, None]",
    "        agent = env.agent_selection",
    "        observation, reward, terminated, truncated, info = env.last()",
    "        trace.append((agent, keep(observation), keep(reward)))",
    "        done = terminated or truncated",
    "        if joint is None or masked(observation, info) or not (done or agent in joint):",
    "            return trace",
    "        env.step(None if done else keep(joint[agent]))",
    "    return trace",
]
"""The episode of the RNG probes in plain Python (run by the probe, shown by its snippet)."""


def probes(source: EnvSource, clock: Budget | None = None) -> list[Any]:
    """The probes of a PettingZoo AEC environment; returns the warnings."""

    warned, actions = first_look(source, lints_and_probe_actions)
    if actions is None:
        return warned

    def last(env: Any) -> None:
        env.last()

    return run_probes(source, warned, actions, PROBE_EPISODE, clock, last, lambda env: env.reset(seed=0))


PRECONDITIONS: dict[str, tuple[Precondition, ...]] = {
    **PARALLEL_PRECONDITIONS,
    "agent-iteration": (STEPPED,),
}
"""What an example must reach for each property to count as checked (the others: a reset)."""

AEC = EnvKind(
    "aec",
    AEC_PROPERTIES,
    check_aec_env,
    PRECONDITIONS,
    recognises=recognises,
    spaces=parallel_spaces,
    snippet=snippet,
    episode=API.episode,
    declared=_declared,
    what="(agent, observation, reward, terminated, truncated, info, stepped with None)",
    probes=probes,
    unchecked=_unchecked,
)
"""The PettingZoo AEC kind."""
