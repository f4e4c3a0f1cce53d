"""``check_parallel_env``: property-based checking of a PettingZoo parallel environment.

As :func:`spacealg.testing.check_env`, per agent: each step, Hypothesis draws an action
for every live agent from ``env.action_space(agent)``; every returned observation is
checked against ``env.observation_space(agent)``, every reward, flag and info as in the
single-agent check. On top, the agents' life cycle
(:data:`~spacealg.testing.errors.PARALLEL_PROPERTIES`):

- every agent in ``env.agents`` and in the returned reward/termination/truncation dicts
  is one of ``possible_agents`` (``agents-possible``);
- every live agent gets an observation, a reward, terminated, truncated and an info; no
  agent that is not live is returned (observations and infos may carry extra keys that are
  not agents, as PettingZoo allows); after a step ``env.agents`` holds exactly the live
  agents that did not terminate or get truncated, plus newly spawned ones; an agent that
  finished is never returned again in the episode (``agents-life-cycle``).

``possible_agents`` is optional, as in PettingZoo (environments that spawn agents with new
names may lack it): without it ``agents-possible`` is not checked, rewards, terminations
and truncations may hold only live agents, and each new agent's action space is read when
it first appears. The episode is reset when ``env.agents`` becomes empty. PettingZoo is
not imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from spacealg.strategies.members import members
from spacealg.testing.driver import SEEDS, describe_exception, snapshot
from spacealg.testing.errors import PARALLEL_PROPERTIES, PropertyError, literal
from spacealg.testing.resolve import EnvSource, resolve
from spacealg.testing.single import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_MAX_STEPS,
    EnvCheckReport,
    _short,
    after_done,
    check_flags,
    check_info,
    check_observation,
    check_reward,
    probe,
    run_check,
    run_example,
)

__all__ = ["check_parallel_env"]


def _names(agents: Any) -> str:
    return ", ".join(repr(a) for a in sorted(agents, key=repr))


class ParallelEpisode:
    """One run of a parallel environment from a seed through ``n`` joint actions."""

    def __init__(self, env: Any, seed: int, n: int, draw: Callable[[list[Any], Any], dict[Any, Any]]) -> None:
        self.env, self.seed, self.n, self.draw = env, seed, n, draw
        possible = getattr(env, "possible_agents", None)
        self.possible = None if possible is None else set(possible)  # None: not declared
        self.trace: list[Any] = []
        self.finished: dict[Any, int] = {}
        self.steps = 0
        self.episodes = 1

    def _check_possible(self, agents: Any, what: str, step: int | None, where: str = "") -> None:
        if self.possible is None:
            return
        strangers = [a for a in agents if a not in self.possible]
        if strangers:
            raise PropertyError(
                "agents-possible",
                f"{what} holds {_names(strangers)}, not in possible_agents ({_names(self.possible)})",
                step,
                where,
            )

    def reset(self, done_at: int | None) -> None:
        where = after_done(done_at) if done_at is not None else ""
        try:
            result = self.env.reset(seed=self.seed) if done_at is None else self.env.reset()
        except Exception as error:
            prop = "reset-after-done" if done_at is not None else "no-exception"
            raise PropertyError(
                prop, f"reset() raised {describe_exception(error)}", done_at, where
            ) from error
        if not (isinstance(result, tuple) and len(result) == 2 and all(isinstance(d, dict) for d in result)):
            prop = "reset-after-done" if done_at is not None else "reset-signature"
            raise PropertyError(
                prop, f"reset returned {_short(result)} instead of (observations, infos)", done_at, where
            )
        observations, infos = result
        agents = list(self.env.agents)
        self._check_possible(agents, "env.agents after reset", done_at, where)
        for name, returned in (("observations", observations), ("infos", infos)):
            missing = [a for a in agents if a not in returned]
            if missing:
                raise PropertyError(
                    "agents-life-cycle",
                    f"reset returned no {name} for the live agent(s) {_names(missing)}",
                    done_at,
                    where,
                )
        for agent in agents:
            who = f"agent {agent!r}: "
            check_observation(observations[agent], self.env.observation_space(agent), done_at, where, who)
            check_info(infos[agent], done_at, where, who)
        self.finished = {}
        self.trace.append(("reset", snapshot({a: observations[a] for a in agents}), agents))

    def step(self, k: int) -> bool:
        live = list(self.env.agents)
        actions = self.draw(live, self.env)
        try:
            result = self.env.step(actions)
        except Exception as error:
            raise PropertyError(
                "no-exception", f"step({literal(actions)}) raised {describe_exception(error)}", k
            ) from error
        if not (isinstance(result, tuple) and len(result) == 5 and all(isinstance(d, dict) for d in result)):
            raise PropertyError(
                "step-signature", f"step returned {_short(result)} instead of a 5-tuple of dicts", k
            )
        observations, rewards, terminations, truncations, infos = result
        after = list(self.env.agents)
        self._check_possible(after, f"env.agents after step {k}", k)
        for name, returned in (
            ("rewards", rewards),
            ("terminations", terminations),
            ("truncations", truncations),
        ):
            self._check_possible(returned, name, k)
        self._check_life_cycle(k, live, after, result)
        expected = set(live) | (set(after) - set(live))
        for agent in sorted(expected, key=repr):
            who = f"agent {agent!r}: "
            check_observation(observations[agent], self.env.observation_space(agent), k, "", who)
            check_reward(rewards[agent], k, who)
            check_flags(terminations[agent], truncations[agent], k, who)
            check_info(infos[agent], k, "", who)
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
        self.finished.update(dict.fromkeys(done, k))
        self.trace.append(
            (
                "step",
                snapshot({a: observations[a] for a in expected}),
                snapshot(rewards),
                dict(terminations),
                dict(truncations),
                after,
            )
        )
        self.steps += 1
        return not after

    def _check_life_cycle(self, k: int, live: list[Any], after: list[Any], result: tuple[Any, ...]) -> None:
        revived = [a for a in after if a in self.finished]
        if revived:
            raise PropertyError(
                "agents-life-cycle",
                f"{_names(revived)} finished at step {self.finished[revived[0]]} and is in env.agents "
                f"again after step {k}",
                k,
            )
        expected = set(live) | (set(after) - set(live))
        names = ("observations", "rewards", "terminations", "truncations", "infos")
        for name, returned in zip(names, result):
            ghosts = [a for a in returned if self._is_agent(a, name) and a not in expected]
            if ghosts:
                past = [a for a in ghosts if a in self.finished]
                reason = (
                    f"finished at step {self.finished[past[0]]} and is returned again"
                    if past
                    else "is not a live agent"
                )
                raise PropertyError(
                    "agents-life-cycle", f"{name} of step {k} holds {_names(ghosts)}, which {reason}", k
                )
            missing = [a for a in expected if a not in returned]
            if missing:
                raise PropertyError(
                    "agents-life-cycle",
                    f"step {k} returned no {name} for the live agent(s) {_names(missing)}",
                    k,
                )

    def _is_agent(self, key: Any, returned: str) -> bool:
        """Whether a key of a returned dict names an agent (observations and infos may hold
        other keys; without possible_agents, any key of the other dicts is an agent)."""
        if self.possible is not None:
            return key in self.possible
        return returned in ("rewards", "terminations", "truncations") or key in self.finished

    def run(self) -> list[Any]:
        self.reset(None)
        for k in range(1, self.n + 1):
            if self.step(k):
                self.reset(k)
                self.episodes += 1
        return self.trace


def check_parallel_env(
    env: Any,
    *,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    max_steps: int = DEFAULT_MAX_STEPS,
    determinism: bool = True,
    random_seed: int | None = 0,
) -> EnvCheckReport:
    """Check a PettingZoo parallel environment (see the module docstring); the options and
    the outcome are those of :func:`spacealg.testing.check_env`, with per-agent actions
    (one dict of the live agents' actions per step)."""
    source = resolve(env)

    def make_body(source: EnvSource, stats: dict[str, int]) -> Callable[[Any], None]:
        strategies: dict[Any, Any] = {}
        spaces: dict[Any, Any] = {}

        def strategy(agent: Any, env: Any = None) -> Any:
            if agent not in strategies:
                try:
                    if agent not in spaces:  # an agent not in possible_agents (or none declared)
                        spaces[agent] = env.action_space(agent)
                    strategies[agent] = members(spaces[agent])
                    strategies[agent].validate()
                except Exception as error:
                    raise PropertyError(
                        "declared-spaces",
                        f"cannot draw actions from action_space({agent!r}): {describe_exception(error)}",
                    ) from error
            return strategies[agent]

        def declared(env: Any) -> None:
            try:
                declared_agents = getattr(env, "possible_agents", None)
                if declared_agents is None:  # agents are spawned: read their spaces as they come
                    env.reset(seed=0)
                    declared_agents = list(env.agents)
                spaces.update({agent: env.action_space(agent) for agent in declared_agents})
            except Exception as error:
                raise PropertyError(
                    "declared-spaces",
                    f"cannot read the agents and action_space(agent): {describe_exception(error)}",
                ) from error
            for agent in spaces:
                strategy(agent)

        probe(source, declared)

        def body(data: Any) -> None:
            seed = data.draw(SEEDS, label="seed")
            n = data.draw(st.integers(0, max_steps), label="steps")
            taken: list[Any] = []

            def draw(live: list[Any], env: Any) -> dict[Any, Any]:
                joint = {agent: data.draw(strategy(agent, env)) for agent in live}
                taken.append(snapshot(joint))
                return joint

            run_example(source, ParallelEpisode, seed, n, draw, taken, determinism=determinism, stats=stats)

        return body

    declares = probe(source, lambda env: getattr(env, "possible_agents", None) is not None)
    checked = tuple(
        p
        for p in PARALLEL_PROPERTIES
        if (determinism or not p.endswith("determinism")) and (declares or p != "agents-possible")
    )
    return run_check(
        source,
        make_body,
        max_examples=max_examples,
        random_seed=random_seed,
        parallel=True,
        properties=checked,
    )
