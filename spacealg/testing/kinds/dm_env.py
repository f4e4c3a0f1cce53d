"""The dm_env kind: ``check_dm_env`` checks a dm_env environment on Hypothesis-drawn
episodes: time step types, observation, reward and discount specs
(:data:`DM_ENV_PROPERTIES`), with actions drawn from the action spec as spacealg reads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spacealg.testing.engine.errors import PropertyError
from spacealg.testing.engine.runner import ENDED, STEPPED, Declared, Draws, EnvCheckReport, EnvKind
from spacealg.testing.kinds.foreign import _check_foreign, foreign_api, foreign_snippet, made_by

__all__ = ["DM_ENV", "DM_ENV_PROPERTIES", "check_dm_env"]

DM_ENV_PROPERTIES: dict[str, str] = {
    "declared-specs": "observation_spec, action_spec, reward_spec and discount_spec are dm_env specs",
    "no-exception": "reset() and step(action) raise no exception for an action of the action spec",
    "timestep": "reset and step return a dm_env.TimeStep",
    "first-step": "reset returns a FIRST time step with reward and discount None",
    "step-type": "step returns a MID or LAST time step with a reward and a discount",
    "observation-in-spec": "every observation passes observation_spec().validate",
    "reward-in-spec": "every reward passes reward_spec().validate",
    "discount-in-spec": "every discount passes discount_spec().validate and lies in [0, 1]",
    "reset-after-done": "reset works after a LAST time step",
}


CHECKS = [
    "from collections.abc import Mapping",
    "",
    "import dm_env",
    "",
    "def validates(spec, value):  # dm_env membership, leaf by leaf",
    "    if isinstance(spec, Mapping):",
    "        return isinstance(value, Mapping) and value.keys() == spec.keys() and all(",
    "            validates(s, value[k]) for k, s in spec.items())",
    "    if isinstance(spec, (tuple, list)):",
    "        return isinstance(value, (tuple, list)) and len(value) == len(spec) and all(",
    "            validates(s, v) for s, v in zip(spec, value))",
    "    try:",
    "        spec.validate(value)",
    "        return True",
    "    except (ValueError, TypeError):",
    "        return False",
    "",
    "def shown(value):  # a value with its dtype and shape",
    "    return f'{value!r} (dtype {getattr(value, \"dtype\", type(value).__name__)}, shape {np.shape(value)})'",
    "",
    "def observe(specs, step, k):  # k: the step number, None at a reset; whether the episode ended",
    "    if not isinstance(step, dm_env.TimeStep):",
    "        fail('timestep', k, f'{type(step).__qualname__}, not a dm_env.TimeStep')",
    "    if not validates(specs['observation'], step.observation):",
    "        fail('observation-in-spec', k, f'observation {shown(step.observation)} fails {specs[\"observation\"]!r}')",
    "    if k is None or step.first():",
    "        if not (step.first() and step.reward is None and step.discount is None):",
    "            detail = f'step_type={step.step_type}, reward={step.reward!r}, discount={step.discount!r}'",
    "            fail('first-step', k, f'reset returned {detail}')",
    "        return False",
    "    if not (step.mid() or step.last()):",
    "        fail('step-type', k, f'step returned step_type={step.step_type}')",
    "    if not validates(specs['reward'], step.reward):",
    "        fail('reward-in-spec', k, f'reward {shown(step.reward)} fails {specs[\"reward\"]!r}')",
    "    discount = np.asarray(step.discount)",
    "    if not (validates(specs['discount'], step.discount) and bool(np.all((discount >= 0) & (discount <= 1)))):",
    "        fail('discount-in-spec', k, f'discount {shown(step.discount)} fails {specs[\"discount\"]!r} or [0, 1]')",
    "    return bool(step.last())",
    "",
    "def reset(env, seed):  # dm_env's reset takes no seed; the specs, the episode's state",
    "    specs = {name: getattr(env, f'{name}_spec')() for name in ('observation', 'action', 'reward', 'discount')}",
    "    observe(specs, env.reset(), None)",
    "    return specs",
    "",
    "def step(env, specs, action, k):",
    "    return specs, observe(specs, env.step(action), k)",
]
"""The dm_env checks in plain Python, as the check runs them and the snippet shows them
(:func:`~spacealg.testing.kinds.foreign.foreign_api`): time step types, observation, reward
and discount against the specs."""

API = foreign_api(CHECKS)
"""The dm_env episode: a reset (no seed), then the steps, each time step checked."""


def _dm_env_declared(env: Any) -> Declared:
    """The action spec as a space (``declared-specs`` where spacealg cannot read the specs);
    actions drawn from it, as dm_env's values."""
    from spacealg.adapters.dm_env import from_dm_env
    from spacealg.strategies.members import members

    spec = env.action_spec()
    try:
        space = from_dm_env(spec)
        from_dm_env(env.observation_spec())
        strategy = members(space)
    except TypeError as error:
        raise PropertyError("declared-specs", str(error), None) from None

    def draw(draws: Draws) -> Any:
        return _native(spec, draws.action(None, None, lambda: space, lambda: strategy))

    return draw, None


def _native(spec: Any, value: Any) -> Any:
    """A spacealg value of ``from_dm_env(spec)`` as dm_env's value (arrays of the spec's dtype)."""
    if isinstance(spec, Mapping):
        return {k: _native(s, value[k]) for k, s in spec.items()}
    if isinstance(spec, (tuple, list)):
        return type(spec)(_native(s, v) for s, v in zip(spec, value))
    return np.asarray(value, dtype=spec.dtype)


def check_dm_env(
    env: Any, *, max_examples: int = 20, max_steps: int = 50, random_seed: int | None = 0, **options: Any
) -> EnvCheckReport:
    """Check a dm_env environment (an instance, a zero-argument factory or ``"module:factory"``)
    on Hypothesis-drawn episodes: time step types, observation, reward and discount specs
    (see :data:`DM_ENV_PROPERTIES`), with actions drawn from the action spec (as spacealg
    reads it) and shrunk to the shortest sequence. Raises EnvCheckError naming the broken
    property.

    ``options``: those of :func:`check_env` (``budget``, ``database``, ...); dm_env's
    ``reset`` takes no seed, so no determinism is checked and there are no probes."""
    options = {**options, "max_examples": max_examples, "max_steps": max_steps, "random_seed": random_seed}
    return _check_foreign(DM_ENV, env, options)


def snippet(error: Any) -> str:
    """The reproduction of a dm_env failure (:data:`CHECKS`; for ``declared-specs``, the
    specs read as spaces first, which raises while the bug is there)."""
    read = [
        "from spacealg.adapters.dm_env import from_dm_env",
        "",
        "from_dm_env(env.action_spec()), from_dm_env(env.observation_spec())",
    ]
    return foreign_snippet(error, API, CHECKS, read if error.property == "declared-specs" else ())


def spaces(env: Any) -> list[tuple[str, Any]]:
    """The declared specs, named."""
    from spacealg.adapters.envs import foreign_spaces

    return list(foreign_spaces(env) or [])


DM_ENV = EnvKind(
    "dm_env",
    DM_ENV_PROPERTIES,
    check_dm_env,
    {
        **dict.fromkeys(("no-exception", "step-type", "reward-in-spec", "discount-in-spec"), (STEPPED,)),
        "reset-after-done": (ENDED,),
    },
    recognises=made_by("dm_env"),
    spaces=spaces,
    snippet=snippet,
    episode=API.episode,
    declared=_dm_env_declared,
)
"""The dm_env kind."""
