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
from collections.abc import Callable
from typing import Any, Unpack

from spacealg.testing.engine.driver import Budget, describe_exception, passed_over, same, snapshot, tick
from spacealg.testing.engine.errors import PropertyError, short
from spacealg.testing.engine.infos import recorded, recorded_per_agent
from spacealg.testing.engine.masks import MaskedAction, check_mask, find_mask
from spacealg.testing.engine.probes import first_look, run_probes
from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import (
    CYCLES,
    ILLEGAL,
    MASKED,
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
    aliased,
    check_flags,
    check_info,
    check_observation,
    check_reward,
    is_member,
    is_real_scalar,
    reset_of,
    stepped,
)
from spacealg.testing.kinds.parallel import (
    PARALLEL_PROPERTIES,
    _names,
    agent_lints,
    check_possible,
    max_cycles,
    same_space,
    undeclared,
)
from spacealg.testing.kinds.parallel import PRECONDITIONS as PARALLEL_PRECONDITIONS
from spacealg.testing.kinds.parallel import spaces as parallel_spaces

__all__ = ["AEC", "AECEpisode", "check_aec_env"]

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


class AECEpisode:
    """One run of an AEC environment from a seed through ``n`` agent-steps.
    ``draw(agent, env, factors)`` gives the action of an agent that must act."""

    def __init__(self, env: Any, seed: int, n: int, draw: Callable[..., Any], *, masks: bool = True) -> None:
        self.env, self.seed, self.n, self.draw, self.masks = env, seed, n, draw, masks
        possible = getattr(env, "possible_agents", None)
        self.possible = None if possible is None else set(possible)
        self.cycles = max_cycles(env)
        self.has_state = self._declares_state()
        self.trace: list[Any] = []
        self.steps = 0
        self.episodes = 1
        self.since_reset = 0
        self.width = 0  # the most agents live at once since the reset
        self.owed: dict[Any, float] = {}  # per agent: its rewards entries since it last acted
        # per agent: (the observation last() last returned it, a copy, the step), to detect aliasing
        self.held: dict[Any, tuple[Any, Any, int]] = {}
        self.reached: set[str] = set()  # the preconditions reached beyond a step and an end

    def _declares_state(self) -> bool:
        try:
            return getattr(self.env, "state_space", None) is not None
        except Exception:
            return False

    def _fail(self, detail: str, step: int | None, where: str = "", prop: str = "agent-iteration") -> None:
        raise PropertyError(prop, detail, step, where)

    def _check_dicts(self, step: int | None, where: str) -> list[Any]:
        agents = list(self.env.agents)
        check_possible(self.possible, agents, "env.agents", step, where)
        for name in RETURNED:
            returned = getattr(self.env, name, None)
            if not isinstance(returned, dict) or set(returned) != set(agents):
                keys = _names(returned) if isinstance(returned, dict) else type(returned).__name__
                self._fail(f"env.{name} holds [{keys}]; env.agents is [{_names(agents)}]", step, where)
        cumulative = getattr(self.env, "_cumulative_rewards", None)
        if cumulative is not None and not set(agents) <= set(cumulative):
            missing = set(agents) - set(cumulative)
            self._fail(f"env._cumulative_rewards has no entry for the live agent(s) {_names(missing)}", step, where)
        return agents

    def _check_state(self, step: int | None, where: str) -> None:
        if not self.has_state:
            return
        try:
            state = self.env.state()
        except NotImplementedError:
            self.has_state = False
            return
        except Exception as error:
            raise PropertyError("no-exception", f"state() raised {describe_exception(error)}", step, where) from error
        if not is_member(state, self.env.state_space):
            raise PropertyError(
                "state-in-space", f"state() returned {short(state)}, not in {self.env.state_space!r}", step, where
            )

    def _collect(self) -> None:
        """Add this step's ``env.rewards`` to what each agent is owed (rewards that are not
        finite reals are reported by ``reward-finite-real`` when ``last()`` returns them)."""
        for agent, reward in (getattr(self.env, "rewards", None) or {}).items():
            with contextlib.suppress(TypeError, ValueError):
                self.owed[agent] = self.owed.get(agent, 0.0) + float(reward)

    def _check_cumulative(self, agent: Any, reward: float, k: int, who: str) -> None:
        """``agent-iteration``: the reward ``last()`` returned is ``_cumulative_rewards[agent]``
        and the sum of the agent's ``env.rewards`` entries since it last acted."""
        cumulative = getattr(self.env, "_cumulative_rewards", None)
        if cumulative is not None and agent in cumulative:
            held = cumulative[agent]
            if not (is_real_scalar(held) and same(reward, float(held))):
                self._fail(f"{who}last() returned reward {reward!r} but _cumulative_rewards holds {short(held)}", k)
        owed = self.owed.get(agent, 0.0)
        if not math.isclose(reward, owed, rel_tol=1e-9, abs_tol=1e-12):
            self._fail(
                f"{who}last() returned reward {reward!r}, but the agent's rewards entries since it last acted "
                f"sum to {owed!r}",
                k,
            )

    def _selection(self, step: int | None, where: str) -> Any:
        agent = self.env.agent_selection
        if agent not in self.env.agents:
            self._fail(f"agent_selection is {agent!r}, not a live agent ({_names(self.env.agents)})", step, where)
        return agent

    def reset(self, done_at: int | None) -> None:
        _, where = reset_of(self.env, self.seed, done_at, None, "None")
        agents = self._check_dicts(done_at, where)
        observed = None
        if agents:
            agent = self._selection(done_at, where)
            try:
                first = next(iter(self.env.agent_iter()))
            except Exception as error:
                raise PropertyError(
                    "agent-iteration", f"agent_iter() raised {describe_exception(error)}", done_at, where
                ) from error
            if first != agent:
                self._fail(f"agent_iter() yields {first!r} first, but agent_selection is {agent!r}", done_at, where)
            for a in agents:
                space = same_space(self.env, "observation", a, done_at, where)
                check_observation(self.env.observe(a), space, done_at, where, f"agent {a!r}: ")
            observed = snapshot(self.env.observe(agent))
        self._check_state(done_at, where)
        self.since_reset = 0
        self.width = len(agents)
        self.owed = {}
        self._collect()
        self.trace.append(("reset", agents, observed, recorded_per_agent(dict(self.env.infos))))

    def step(self, k: int) -> bool:
        agent = self._selection(k - 1 or None, "")
        who = f"agent {agent!r}: "
        try:
            result = self.env.last()
        except Exception as error:
            raise PropertyError("no-exception", f"last() raised {describe_exception(error)}", k) from error
        if not (isinstance(result, tuple) and len(result) == 5):
            raise PropertyError("step-signature", f"last() returned {short(result)}, not a 5-tuple", k)
        obs, reward, terminated, truncated, info = result
        for held_by, (returned, copied, at) in self.held.items():
            aliased(returned, copied, at, k, f"the observation last() gave agent {held_by!r}")
        self.held[agent] = (obs, snapshot(obs), k)
        check_observation(obs, same_space(self.env, "observation", agent, k), k, "", who)
        if not same(obs, self.env.observe(agent)):
            self._fail(
                f"{who}last() returned {short(obs)} but observe(agent) returns {short(self.env.observe(agent))}", k
            )
        check_reward(reward, k, who)
        if is_real_scalar(reward):  # one passed over (not a real scalar) has no sum to agree with
            self._check_cumulative(agent, float(reward), k, who)
        self.owed[agent] = 0.0
        check_flags(terminated, truncated, k, who)
        check_info(info, k, "", who)
        dead = bool(terminated or truncated)
        illegal = False
        if dead:
            self.draw(agent, self.env, DEAD)  # recorded as None, so that actions align with agent-steps
            action = None
        else:
            factors = None
            if self.masks:
                mask = find_mask(obs, info)
                if mask is not None:
                    self.reached.add(MASKED.mark)
                    factors = check_mask(mask, same_space(self.env, "action", agent, k), True, k, who)
            action = self.draw(agent, self.env, factors)
            if factors is not None:
                illegal = not MaskedAction(self.env.action_space(agent)).is_legal(action, factors)
                if illegal:
                    self.reached.add(ILLEGAL.mark)
        returned, rejected = stepped(self.env, action, k, illegal, who)
        if rejected:
            self.trace.append(("rejected", agent, rejected))
            self.steps += 1
            return True
        if returned is not None:
            raise PropertyError("step-signature", f"step returned {short(returned)} instead of None", k)
        self._collect()
        agents = self._check_dicts(k, "")
        if dead and agent in agents:
            self._fail(f"{who}was stepped with None after terminating or truncation but is still in env.agents", k)
        self._check_state(k, "")
        self.trace.append(("step", agent, snapshot(obs), snapshot(reward), bool(terminated), bool(truncated),
                           recorded(info), action is None))
        self.steps += 1
        self.since_reset += 1
        self._check_cycles(k, agents)
        return not agents

    def _check_cycles(self, k: int, agents: list[Any]) -> None:
        """``max-cycles``: where ``max_cycles`` is declared, an episode ends within
        ``(max_cycles + 1) * n + n`` agent-steps, ``n`` the most agents live at once since the
        reset (``possible_agents`` is not needed): one cycle of slack and the steps with None
        of the agents that ended. Marked reached (:data:`CYCLES`) where decided: an episode that
        ended after ``max_cycles * n`` agent-steps or later, or one still running past the bound."""
        if self.cycles is None:
            return
        self.width = max(self.width, len(agents))
        if not agents:
            if self.since_reset >= self.cycles * self.width:
                self.reached.add(CYCLES.mark)
            return
        bound = (self.cycles + 1) * self.width + self.width
        if self.since_reset > bound:
            self.reached.add(CYCLES.mark)
            if not passed_over("max-cycles"):
                detail = (f"max_cycles is {self.cycles} but the episode is still running after {self.since_reset} "
                          f"agent-steps ({self.width} agents)")
                raise PropertyError("max-cycles", detail, k)

    def run(self) -> list[Any]:
        self.reset(None)
        k = 0
        while k < self.n:
            tick()  # past the check's deadline the episode stops here
            if not self.env.agents:
                self.reset(k)
                self.episodes += 1
                if not self.env.agents:
                    break
                continue
            k += 1
            if self.step(k):
                self.reset(k)
                self.episodes += 1
        return self.trace


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


EPISODE = [
    "def episode():",
    "    env.reset(seed=SEED)",
    "    trace = []",
    "    for action in actions:  # None: the selected agent has ended and is stepped with None",
    "        if not env.agents:",
    "            env.reset()",
    "        agent = env.agent_selection",
    "        observation, reward, terminated, truncated, info = env.last()",
    "        env.step(action)",
    "        trace.append((agent, observation, reward, terminated, truncated, info))",
    "        if not env.agents:",
    "            env.reset()",
    "    return trace",
]
"""An AEC episode in plain Python, for the snippet."""


def snippet(error: Any) -> str:
    """The reproduction of an AEC failure: its episode, then spacealg's replay."""
    return reproduction(error, EPISODE, notes=["actions[k] is the action of the agent selected at agent-step k + 1"])


def recognises(env: Any) -> bool:
    """PettingZoo's AEC API: ``agent_iter`` and ``last`` methods (``agent_selection``
    exists only after reset). Asked before the parallel API, whose per-agent space methods
    AEC environments have too."""
    return callable(getattr(env, "agent_iter", None)) and callable(getattr(env, "last", None))


def probes(source: EnvSource, clock: Budget | None = None) -> list[Any]:
    """The probes of a PettingZoo AEC environment (an episode: the first observation of the
    selected agent and the infos); returns the warnings."""
    warned, started = first_look(source, lambda env: (agent_lints(env), []))
    if started is None:
        return warned

    def episode(env: Any, seed: int | None, actions: list[Any]) -> list[Any]:
        env.reset(seed=seed) if seed is not None else env.reset()
        if not env.agents:
            return [None]
        return [snapshot(env.observe(env.agent_selection)), env.agent_selection]

    def last(env: Any) -> None:
        env.last()

    return run_probes(source, warned, [], episode, clock, last, lambda env: env.reset(seed=0))


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
    episode=AECEpisode,
    declared=_declared,
    what="(agent, observation, reward, terminated, truncated, info, stepped with None)",
    probes=probes,
    unchecked=_unchecked,
)
"""The PettingZoo AEC kind."""
