"""The JAX-native kind: functional environments (gymnax, Jumanji, pgx, Brax styles) checked
under ``jit``, ``vmap`` and ``lax.scan`` by :func:`check_jax_env`, on the engine's loop
(:func:`~spacealg.testing.engine.runner.run_check`) with the JAX search's probes and body
(:class:`~spacealg.testing.jax_env.check.Search`); this module states the kind for the
registry: its recognition (an instance of a known protocol, an id such as
``"gymnax:CartPole-v1"``, gymnax's ``(env, params)``), its properties and preconditions,
its spaces, its error and its replay. Importing it imports neither JAX nor any environment
library."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from spacealg.testing.engine.driver import past_deadline, working_until
from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import MAX_BROKEN, EnvKind, options_of, run_check
from spacealg.testing.jax_env import JAX_PROPERTIES, JaxEnvCheckError, adapt, is_jax_env, is_jax_id, replay_jax
from spacealg.testing.jax_env.check import DEFAULT_BATCH, JaxEnvCheckReport, Search, adapted, applicable, jax_options
from spacealg.testing.jax_env.properties import JAX_PRECONDITIONS
from spacealg.testing.jax_env.source import jax_source

__all__ = ["JAX", "check_jax_env"]


def check_jax_env(
    env: Any,
    *,
    max_examples: int = 100,
    max_steps: int = 100,
    batch: int = DEFAULT_BATCH,
    eager_steps: int = 4,
    random_seed: int | None = 0,
    budget: float | None = None,
    database: Any = None,
    masks: bool = True,
    illegal_actions: bool = False,
    determinism: bool = True,
    hygiene: bool = True,
    skip: Any = (),
    max_broken: int = MAX_BROKEN,
) -> JaxEnvCheckReport:
    """Check a functional JAX environment (gymnax, Jumanji, pgx, Brax styles) under ``jit``
    and ``vmap`` on Hypothesis-drawn keys and action sequences.

    ``env``: an id (``"gymnax:CartPole-v1"``, ``"jumanji:Snake-v1"``, ``"pgx:connect_four"``),
    an environment, gymnax's ``(env, params)`` pair, a factory or ``"module:factory"``.
    ``max_examples`` compiled batches of ``batch`` rows (fewer for large observations) of up
    to ``max_steps`` steps (0: the resets only); ``eager_steps``: steps of the drawn row
    replayed without ``jit``; ``masks``: draw legal actions under a published mask
    (``illegal_actions``: one draw in four ignores it); ``determinism``: the relational laws
    (purity, jit-eager, global-rng, batching); ``skip``: names of properties not to check
    (reported as not checked); ``random_seed``, ``max_broken``, ``budget`` (the search's: counted after
    the compilation and probes), ``database`` as for :func:`~spacealg.testing.check_env` (``hygiene`` is
    accepted for the CLI and has no effect here). The properties are
    :data:`~spacealg.testing.jax_env.JAX_PROPERTIES`; every broken one is reported
    (``error.also``), the others held or not checked with why, as for every kind.
    Returns a :class:`~spacealg.testing.jax_env.JaxEnvCheckReport` (with the speed of the
    search beside the environment's own ``jit(vmap(scan(step)))`` rollout); raises
    :class:`~spacealg.testing.jax_env.JaxEnvCheckError`.
    """
    del hygiene
    options_of({"max_broken": max_broken})
    options = jax_options(max_examples, max_steps, batch, eager_steps, budget, masks=masks,
                          illegal_actions=illegal_actions, determinism=determinism, skip=tuple(skip))
    source = jax_source(env)
    started = time.perf_counter()
    protocol = adapted(source)
    checked, skipped = applicable(protocol, options)
    searches: list[Search] = []
    setup = [0.0]

    def make_body(source: EnvSource, stats: dict[str, Any], clock: Any, focus: Any) -> Any:
        if not searches:  # the compiled rollouts, built once (declared-spaces)
            searches.append(Search(protocol, options, checked, stats))
        return searches[0].body(clock, focus)

    def probes(source: EnvSource, clock: Any) -> list[Any]:
        found = searches[0].probes()
        setup[0] = time.perf_counter() - started
        return found

    with working_until(budget, since=started):
        report = run_check(
            source, make_body, max_examples=max_examples, random_seed=random_seed, kind=JAX,
            properties=tuple(p for p in JAX_PROPERTIES if p in checked), budget=budget, database=database,
            max_broken=max_broken, probes=probes, not_checked=skipped,
        )
        timing = time.perf_counter()
        if not past_deadline():  # a passed check only: the raw rollout compiled and timed (setup time)
            searches[0].time_raw()
    return JaxEnvCheckReport(
        source.name, report.examples, report.steps, report.episodes, time.perf_counter() - started,
        report.properties, report.warnings, report.out_of_time, JAX.name, report.not_checked,
        rollout_seconds=searches[0].rollout_seconds, style=protocol.style,
        setup_seconds=setup[0] + time.perf_counter() - timing, raw_steps_per_second=searches[0].raw_steps_per_second,
    )


def claims(env: Any) -> bool:
    """An id of a JAX library (``"gymnax:CartPole-v1"``) or gymnax's ``(env, params)`` pair."""
    return is_jax_id(env) or isinstance(env, tuple)


def spaces(env: Any) -> list[tuple[str, Any]]:
    """The observation and action spaces as spacealg reads them from the protocol."""
    protocol = adapt(env)
    return [("observation space", protocol.observation_space), ("action space", protocol.action_space)]


def replays(source: EnvSource, seed: int | None, actions: Sequence[Any], *, determinism: bool, masks: bool) -> None:
    """A recorded failure again (:func:`~spacealg.testing.jax_env.replay_jax`)."""
    replay_jax(source, seed, list(actions), masks=masks)


JAX = EnvKind(
    "jax",
    JAX_PROPERTIES,
    check_jax_env,
    JAX_PRECONDITIONS,
    recognises=is_jax_env,
    claims=claims,
    spaces=spaces,
    replays=replays,
    error=JaxEnvCheckError,
)
"""The JAX-native kind (its failures write their own reproduction: ``JaxEnvCheckError``)."""
