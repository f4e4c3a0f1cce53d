"""The dm_env kind: ``check_dm_env`` checks a dm_env environment on Hypothesis-drawn
episodes: time step types, observation, reward and discount specs
(:data:`DM_ENV_PROPERTIES`), with actions drawn from the action spec as spacealg reads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spacealg.testing.engine.errors import PropertyError
from spacealg.testing.engine.runner import ENDED, STEPPED, Declared, Draws, EnvCheckReport, EnvKind
from spacealg.testing.kinds.foreign import ForeignEpisode, _check_foreign, _require, foreign_snippet, made_by

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


def _validates(spec: Any, value: Any) -> bool:
    """dm_env membership of a (possibly nested) value: ``validate`` leaf by leaf."""
    if isinstance(spec, Mapping):
        return isinstance(value, Mapping) and value.keys() == spec.keys() and all(
            _validates(s, value[k]) for k, s in spec.items()
        )
    if isinstance(spec, (tuple, list)):
        return isinstance(value, (tuple, list)) and len(value) == len(spec) and all(
            _validates(s, v) for s, v in zip(spec, value)
        )
    try:
        spec.validate(value)
        return True
    except (ValueError, TypeError):
        return False


class DmEnvEpisode(ForeignEpisode):
    """A dm_env run: time step types, observation, reward and discount against the specs."""

    def observe(self, step: Any, k: int | None) -> bool:
        import dm_env

        specs = self.specs
        _require(isinstance(step, dm_env.TimeStep), "timestep", f"got {type(step).__qualname__}", k)
        _require(_validates(specs["observation"], step.observation), "observation-in-spec",
                 f"observation {step.observation!r} fails {specs['observation']!r}", k)
        if k is None or step.first():
            _require(step.first() and step.reward is None and step.discount is None, "first-step",
                     f"reset returned step_type={step.step_type}, reward={step.reward!r}, discount={step.discount!r}",
                     k)
            return False
        _require(step.mid() or step.last(), "step-type", f"step returned step_type={step.step_type}", k)
        _require(_validates(specs["reward"], step.reward), "reward-in-spec",
                 f"reward {step.reward!r} fails {specs['reward']!r}", k)
        discount = step.discount
        inside = _validates(specs["discount"], discount) and bool(np.all((np.asarray(discount) >= 0)
                                                                          & (np.asarray(discount) <= 1)))
        _require(inside, "discount-in-spec", f"discount {discount!r} fails {specs['discount']!r} or [0, 1]", k)
        return bool(step.last())

    def start(self) -> None:
        names = ("observation", "action", "reward", "discount")
        self.specs = {name: getattr(self.env, f"{name}_spec")() for name in names}
        self.observe(self.env.reset(), None)

    def step(self, k: int) -> bool:
        return self.observe(self.env.step(self.draw()), k)

    def restart(self, k: int) -> None:
        self.observe(self.env.reset(), None)


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


REPLAY = [
    "",
    "import dm_env",
    "",
    "SPECS = {name: getattr(env, f'{name}_spec')() for name in ('observation', 'action', 'reward', 'discount')}",
    "",
    "def validates(spec, value):  # dm_env membership, leaf by leaf",
    "    if isinstance(spec, dict):",
    "        return isinstance(value, dict) and value.keys() == spec.keys() and all(",
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
    "def observe(step, k):  # k: the step number; None after a reset",
    "    assert isinstance(step, dm_env.TimeStep), f'step {k}: {type(step).__qualname__}, not a dm_env.TimeStep'",
    "    assert validates(SPECS['observation'], step.observation), (",
    "        f'step {k}: observation {shown(step.observation)} fails {SPECS[\"observation\"]!r}')",
    "    if k is None:",
    "        assert step.first() and step.reward is None and step.discount is None, (",
    "            f'reset: step_type={step.step_type}, reward={step.reward!r}, discount={step.discount!r}')",
    "        return False",
    "    assert step.mid() or step.last(), f'step {k}: step_type={step.step_type}'",
    "    assert validates(SPECS['reward'], step.reward), (",
    "        f'step {k}: reward {shown(step.reward)} fails {SPECS[\"reward\"]!r}')",
    "    discount = np.asarray(step.discount)",
    "    assert validates(SPECS['discount'], step.discount) and bool(np.all((discount >= 0) & (discount <= 1))), (",
    "        f'step {k}: discount {shown(step.discount)} fails {SPECS[\"discount\"]!r} or [0, 1]')",
    "    return step.last()",
    "",
    "observe(env.reset(), None)",
    "for k, action in enumerate(ACTIONS, 1):",
    "    if observe(env.step(np.asarray(action, dtype=SPECS['action'].dtype)), k):",
    "        observe(env.reset(), None)  # the reset after the episode ended",
]
"""The replay of a dm_env failure: the check's own episode in plain Python, each property an
assertion (values shown with their dtype and shape)."""


def snippet(error: Any) -> str:
    """The reproduction of a dm_env failure (:data:`REPLAY`; for ``declared-specs``, the
    specs read as spaces, which raises while the bug is there)."""
    read = [
        "from spacealg.adapters.dm_env import from_dm_env",
        "",
        "from_dm_env(SPECS['action']), from_dm_env(SPECS['observation'])",
        "",
    ]
    return foreign_snippet(error, [*REPLAY[:5], *(read if error.property == "declared-specs" else []), *REPLAY[5:]])


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
    episode=DmEnvEpisode,
    declared=_dm_env_declared,
)
"""The dm_env kind."""
