"""The JAX-native kind: functional environments (gymnax, Jumanji, pgx, Brax styles) checked
under ``jit``, ``vmap`` and ``lax.scan`` by :func:`~spacealg.testing.jax_env.check_jax_env`,
which runs its own batched search (:mod:`spacealg.testing.jax_env`); this module states the
kind for the registry: its recognition (an instance of a known protocol, an id such as
``"gymnax:CartPole-v1"``, gymnax's ``(env, params)``), its properties, its spaces and its
replay. Importing it imports neither JAX nor any environment library."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spacealg.testing.engine.resolve import EnvSource
from spacealg.testing.engine.runner import EnvKind
from spacealg.testing.jax_env import JAX_PROPERTIES, adapt, check_jax_env, is_jax_env, is_jax_id, replay_jax

__all__ = ["JAX"]


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
    recognises=is_jax_env,
    claims=claims,
    spaces=spaces,
    replays=replays,
)
"""The JAX-native kind (its failures write their own reproduction: ``JaxEnvCheckError``)."""
