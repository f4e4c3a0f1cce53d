"""The TorchRL kind: ``check_torchrl_env`` checks a TorchRL environment on Hypothesis-drawn
episodes: reward and done spec shapes, and every observation, reward and done flag against
its spec (:data:`TORCHRL_PROPERTIES`)."""

from __future__ import annotations

from typing import Any

from spacealg.testing.engine.episode import plain_checks
from spacealg.testing.engine.runner import ENDED, STEPPED, Declared, Draws, EnvCheckReport, EnvKind
from spacealg.testing.kinds.dm_env import spaces
from spacealg.testing.kinds.foreign import _check_foreign, foreign_api, foreign_snippet, made_by

__all__ = ["TORCHRL", "TORCHRL_PROPERTIES", "check_torchrl_env"]

TORCHRL_PROPERTIES: dict[str, str] = {
    "declared-specs": "the environment's specs are TorchRL specs; reward and done specs have the "
    "environment's batch shape as their leading dimensions and the same shape as each other",
    "no-exception": "reset() and step(td) raise no exception for an action of the action spec",
    "observation-in-spec": "every observation entry is in its observation spec (is_in, same shape)",
    "reward-in-spec": "every reward has the shape and dtype of reward_spec and is in it",
    "done-in-spec": "done, terminated and truncated have the shapes of their done specs and are bool",
    "reset-after-done": "reset works after an episode has ended",
}


CHECKS = [
    "import torch",
    "",
    "def shown(value):  # a tensor with its dtype and shape",
    "    return f'{value!r} (dtype {value.dtype}, shape {tuple(value.shape)})'",
    "",
    "def declared(env):  # the reward and done specs: the batch shape leads, one shape for all",
    "    batch, shape = tuple(env.batch_size), tuple(env.reward_spec.shape)",
    "    if shape[: len(batch)] != batch:",
    "        fail('declared-specs', None, f'reward_spec.shape {shape} does not start with the batch size {batch}')",
    "    for key, spec in env.full_done_spec.items(True, True):",
    "        if tuple(spec.shape) != shape:",
    "            fail('declared-specs', None, f'done spec {key!r} has shape {tuple(spec.shape)}, reward_spec {shape}')",
    "",
    "def observe(env, td, k):  # k: the step number, None at a reset; whether the episode ended",
    "    for key, spec in env.full_observation_spec.items(True, True):",
    "        value = td.get(key)",
    "        if not (tuple(value.shape) == tuple(spec.shape) and bool(spec.is_in(value))):",
    "            fail('observation-in-spec', k, f'observation {key!r} = {shown(value)} is not in {spec!r}')",
    "    ended = False",
    "    for key, spec in env.full_done_spec.items(True, True):",
    "        value = td.get(key)",
    "        if not (value.dtype == torch.bool and tuple(value.shape) == tuple(spec.shape)):",
    "            fail('done-in-spec', k, f'{key!r} = {shown(value)} does not match {spec!r}')",
    "        ended = ended or (key == 'done' and bool(value.any()))",
    "    return ended",
    "",
    "def reset(env, seed):  # seeded with set_seed (seed None: after an end); the td, the episode's state",
    "    if seed is not None:",
    "        env.set_seed(seed)",
    "    td = env.reset()",
    "    observe(env, td, None)",
    "    return td",
    "",
    "def step(env, td, action, k):",
    "    td.set('action', torch.as_tensor(action, dtype=env.action_spec.dtype))",
    "    following = env.step(td).get('next')",
    "    reward, spec = following.get('reward'), env.reward_spec",
    "    ok = tuple(reward.shape) == tuple(spec.shape) and reward.dtype == spec.dtype and bool(spec.is_in(reward))",
    "    if not ok:",
    "        fail('reward-in-spec', k, f'reward {shown(reward)} does not match {spec!r}')",
    "    return following.clone(), observe(env, following, k)",
]
"""The TorchRL checks in plain Python, as the check runs them and the snippet shows them
(:func:`~spacealg.testing.kinds.foreign.foreign_api`): the reward and done specs' shapes,
and every observation entry, reward and done flag against its spec."""

API = foreign_api(CHECKS)
"""The TorchRL episode: a reset seeded with ``set_seed``, then the steps, each td checked."""


def _torchrl_declared(env: Any) -> Declared:
    """The reward and done specs' shapes (``declared-specs``); actions drawn from the action
    spec through spacealg's TorchRL adapter."""
    from spacealg.strategies.members import members

    plain_checks(tuple(CHECKS))["declared"](env)
    space = env.action_spec
    strategy = members(space)

    def draw(draws: Draws) -> Any:
        return draws.action(None, None, lambda: space, lambda: strategy)

    return draw, None


def check_torchrl_env(env: Any, *, max_examples: int = 10, max_steps: int = 30,
                      random_seed: int | None = 0, **options: Any) -> EnvCheckReport:
    """Check a TorchRL environment (an instance, a zero-argument factory or
    ``"module:factory"``) on Hypothesis-drawn episodes: reward and done spec shapes, and
    every observation, reward and done flag against its spec (see :data:`TORCHRL_PROPERTIES`).

    ``options``: those of :func:`check_env` (``budget``, ``database``, ...); no determinism
    is checked and there are no probes."""
    options = {**options, "max_examples": max_examples, "max_steps": max_steps, "random_seed": random_seed}
    return _check_foreign(TORCHRL, env, options)


def snippet(error: Any) -> str:
    """The reproduction of a TorchRL failure (:data:`CHECKS`, the declared specs first)."""
    return foreign_snippet(error, API, CHECKS, ["declared(env)"])


TORCHRL = EnvKind(
    "torchrl",
    TORCHRL_PROPERTIES,
    check_torchrl_env,
    {**dict.fromkeys(("no-exception", "reward-in-spec"), (STEPPED,)), "reset-after-done": (ENDED,)},
    recognises=made_by("torchrl"),
    spaces=spaces,
    snippet=snippet,
    episode=API.episode,
    declared=_torchrl_declared,
)
"""The TorchRL kind."""
