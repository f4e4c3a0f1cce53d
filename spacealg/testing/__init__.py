"""Property-based validation of environments (needs the ``hypothesis`` extra).

``check_env`` (Gymnasium), ``check_parallel_env`` (PettingZoo parallel API) and ``check``
(either, by the environment's kind) drive Hypothesis-generated episodes and raise
:class:`EnvCheckError` — an AssertionError naming the broken property, the seed and the
shortest action sequence found, with ``.reproduction()`` — or return a report.
``replay`` re-runs the checks on one seed and action sequence; ``env_test`` makes a
pytest test of a check in one line. See docs/validation.md.
"""

from spacealg.testing.errors import PARALLEL_PROPERTIES, PROPERTIES, EnvCheckError
from spacealg.testing.parallel import check_parallel_env
from spacealg.testing.single import EnvCheckReport, check_env
from spacealg.testing.suite import check, env_test, replay

__all__ = [
    "PARALLEL_PROPERTIES",
    "PROPERTIES",
    "EnvCheckError",
    "EnvCheckReport",
    "check",
    "check_env",
    "check_parallel_env",
    "env_test",
    "replay",
]
