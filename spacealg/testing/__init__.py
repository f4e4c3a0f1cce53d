"""Property-based validation of environments (needs the ``hypothesis`` extra).

``check_env`` (Gymnasium; another kind's environment goes to its kind's checker),
``check_parallel_env`` (PettingZoo parallel API), ``check_aec_env`` (PettingZoo AEC API),
``check_vector_env`` (Gymnasium vector envs) and
``check`` (the right one, by the environment's kind, read from the registry of kinds:
:mod:`spacealg.testing.registry`) drive Hypothesis-generated episodes and
raise :class:`EnvCheckError` — an AssertionError naming the broken property, the seed and
the shortest action sequence found, with ``.reproduction()`` — or return a report.
``check_envs_match`` drives two implementations of one environment side by side;
``check_jax_env`` checks functional JAX environments (gymnax, Jumanji, pgx, Brax) under
``jit`` and ``vmap`` (docs/jax_envs.md).
``replay`` (``replay_vector``) re-runs the checks on one seed and action sequence; ``env_test`` makes a
pytest test of a check in one line; ``check_many`` checks several environments in parallel
worker processes (or on a Ray cluster). See docs/validation.md.
"""

from spacealg.testing.engine.errors import EnvCheckError
from spacealg.testing.engine.lints import EnvCheckWarning
from spacealg.testing.fanout import check_many
from spacealg.testing.jax_env import JAX_PROPERTIES, JaxEnvCheckError
from spacealg.testing.kinds.aec import AEC_PROPERTIES, check_aec_env
from spacealg.testing.kinds.gymnasium import PROPERTIES, EnvCheckReport
from spacealg.testing.kinds.jax import check_jax_env
from spacealg.testing.kinds.match import check_envs_match
from spacealg.testing.kinds.parallel import PARALLEL_PROPERTIES, check_parallel_env
from spacealg.testing.kinds.vector import VECTOR_PROPERTIES, check_vector_env, replay_vector
from spacealg.testing.suite import check, check_env, env_test, replay

__all__ = [
    "AEC_PROPERTIES",
    "JAX_PROPERTIES",
    "PARALLEL_PROPERTIES",
    "PROPERTIES",
    "VECTOR_PROPERTIES",
    "EnvCheckError",
    "EnvCheckReport",
    "EnvCheckWarning",
    "JaxEnvCheckError",
    "check",
    "check_aec_env",
    "check_env",
    "check_envs_match",
    "check_jax_env",
    "check_many",
    "check_parallel_env",
    "check_vector_env",
    "env_test",
    "replay",
    "replay_vector",
]
