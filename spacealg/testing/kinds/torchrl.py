"""The TorchRL kind: ``check_torchrl_env`` checks a TorchRL environment on Hypothesis-drawn
episodes: reward and done spec shapes, and every observation, reward and done flag against
its spec (:data:`TORCHRL_PROPERTIES`)."""

from __future__ import annotations

from typing import Any

from spacealg.testing.engine.runner import ENDED, STEPPED, Declared, Draws, EnvCheckReport, EnvKind
from spacealg.testing.kinds.dm_env import spaces
from spacealg.testing.kinds.foreign import ForeignEpisode, _check_foreign, _require, foreign_snippet, made_by

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


class TorchRLEpisode(ForeignEpisode):
    """A TorchRL run (seeded with ``set_seed``): every observation entry, reward and done
    flag against its spec."""

    def observe(self, td: Any, k: int | None) -> bool:
        import torch

        for key, spec in self.env.full_observation_spec.items(True, True):
            value = td.get(key)
            ok = tuple(value.shape) == tuple(spec.shape) and bool(spec.is_in(value))
            _require(ok, "observation-in-spec", f"observation {key!r} = {value!r} is not in {spec!r}", k)
        ended = False
        for key, spec in self.env.full_done_spec.items(True, True):
            value = td.get(key)
            ok = value.dtype == torch.bool and tuple(value.shape) == tuple(spec.shape)
            _require(ok, "done-in-spec", f"{key!r} = {value!r} does not match {spec!r}", k)
            ended = ended or (key == "done" and bool(value.any()))
        return ended

    def start(self) -> None:
        self.env.set_seed(self.seed)
        self.observe(self.env.reset(), None)
        self.td = self.env.reset()

    def step(self, k: int) -> bool:
        import torch

        env = self.env
        self.td.set("action", torch.as_tensor(self.draw(), dtype=env.action_spec.dtype))
        following = env.step(self.td).get("next")
        reward, spec = following.get("reward"), env.reward_spec
        ok = tuple(reward.shape) == tuple(spec.shape) and reward.dtype == spec.dtype and bool(spec.is_in(reward))
        _require(ok, "reward-in-spec", f"reward {reward!r} does not match {spec!r}", k)
        ended = self.observe(following, k)
        if not ended:
            self.td = following.clone()
        return ended

    def restart(self, k: int) -> None:
        self.td = self.env.reset()
        self.observe(self.td, k)


def _torchrl_declared(env: Any) -> Declared:
    """The reward and done specs' shapes (``declared-specs``); actions drawn from the action
    spec through spacealg's TorchRL adapter."""
    from spacealg.strategies.members import members

    batch = tuple(env.batch_size)
    shape = tuple(env.reward_spec.shape)
    _require(shape[: len(batch)] == batch, "declared-specs",
             f"reward_spec.shape {shape} does not start with the batch size {batch}", None)
    for key, spec in env.full_done_spec.items(True, True):
        _require(tuple(spec.shape) == shape, "declared-specs",
                 f"done spec {key!r} has shape {tuple(spec.shape)}, reward_spec {shape}", None)
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


REPLAY = [
    "",
    "import torch",
    "",
    "def shown(value):  # a tensor with its dtype and shape",
    "    return f'{value!r} (dtype {value.dtype}, shape {tuple(value.shape)})'",
    "",
    "def observe(td, k):  # k: the step number; None after a reset",
    "    for key, spec in env.full_observation_spec.items(True, True):",
    "        value = td.get(key)",
    "        assert tuple(value.shape) == tuple(spec.shape) and bool(spec.is_in(value)), (",
    "            f'step {k}: observation {key!r} = {shown(value)} is not in {spec!r}')",
    "    ended = False",
    "    for key, spec in env.full_done_spec.items(True, True):",
    "        value = td.get(key)",
    "        assert value.dtype == torch.bool and tuple(value.shape) == tuple(spec.shape), (",
    "            f'step {k}: {key!r} = {shown(value)} does not match {spec!r}')",
    "        ended = ended or (key == 'done' and bool(value.any()))",
    "    return ended",
    "",
    "batch, shape = tuple(env.batch_size), tuple(env.reward_spec.shape)",
    "assert shape[: len(batch)] == batch, f'reward_spec.shape {shape} does not start with the batch size {batch}'",
    "for key, spec in env.full_done_spec.items(True, True):",
    "    assert tuple(spec.shape) == shape, f'done spec {key!r} has shape {tuple(spec.shape)}, reward_spec {shape}'",
    "env.set_seed(SEED)",
    "observe(env.reset(), None)  # the check resets twice, as here",
    "td = env.reset()",
    "for k, action in enumerate(ACTIONS, 1):",
    "    td.set('action', torch.tensor(action, dtype=env.action_spec.dtype))",
    "    following = env.step(td).get('next')",
    "    reward, spec = following.get('reward'), env.reward_spec",
    "    ok = tuple(reward.shape) == tuple(spec.shape) and reward.dtype == spec.dtype and bool(spec.is_in(reward))",
    "    assert ok, (",
    "        f'step {k}: reward {shown(reward)} does not match {spec!r}')",
    "    if observe(following, k):",
    "        td = env.reset()",
    "        observe(td, k)  # the reset after the episode ended",
    "    else:",
    "        td = following.clone()",
]
"""The replay of a TorchRL failure: the check's own episode in plain Python, each property
an assertion (values shown with their dtype and shape)."""


def snippet(error: Any) -> str:
    """The reproduction of a TorchRL failure (:data:`REPLAY`)."""
    return foreign_snippet(error, REPLAY)


TORCHRL = EnvKind(
    "torchrl",
    TORCHRL_PROPERTIES,
    check_torchrl_env,
    {**dict.fromkeys(("no-exception", "reward-in-spec"), (STEPPED,)), "reset-after-done": (ENDED,)},
    recognises=made_by("torchrl"),
    spaces=spaces,
    snippet=snippet,
    episode=TorchRLEpisode,
    declared=_torchrl_declared,
)
"""The TorchRL kind."""
