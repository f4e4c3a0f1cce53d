"""Checking functional JAX environments (gymnax, Jumanji, pgx, Brax styles) under ``jit``
and ``vmap``: the search that :func:`~spacealg.testing.check_jax_env` (the JAX kind,
:mod:`spacealg.testing.kinds.jax`) runs on the engine (see :mod:`.check`), the protocols it knows
(:func:`adapt`, :mod:`spacealg.adapters.jax_protocols`), its properties (:data:`JAX_PROPERTIES`) and
:func:`replay_jax`. Importing this package imports neither JAX nor any environment library;
a check imports JAX and the environment's own library.
"""

from spacealg.adapters.envs import is_jax_id
from spacealg.adapters.jax_protocols import adapt, is_jax_env
from spacealg.testing.jax_env.check import JaxEnvCheckError, JaxEnvCheckReport, replay_jax
from spacealg.testing.jax_env.properties import JAX_PROPERTIES
from spacealg.testing.jax_env.source import jax_source

__all__ = [
    "JAX_PROPERTIES",
    "JaxEnvCheckError",
    "JaxEnvCheckReport",
    "adapt",
    "is_jax_env",
    "is_jax_id",
    "jax_source",
    "replay_jax",
]
