"""GymToGymnasium: an environment of the old Gym API seen through Gymnasium's."""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium

__all__ = ["GymToGymnasium"]


def _accepts_seed(reset: Any) -> bool:
    try:
        parameters = inspect.signature(reset).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "seed" or p.kind is p.VAR_KEYWORD for p in parameters)


class GymToGymnasium(gymnasium.Env):
    """Adapt an old-API Gym environment (``step`` → 4-tuple, ``reset`` → obs) to Gymnasium's.

    Laws: ``step(a) == (obs, reward, done, False, info)`` where the wrapped ``step(a)`` is
    ``(obs, reward, done, info)``; ``reset(seed=s)`` is ``(obs, {})`` where ``obs`` is the
    wrapped ``reset(seed=s)`` (plain ``reset()`` when ``s`` is None; ``seed(s)`` then
    ``reset()`` when the wrapped reset takes no seed). The spaces, metadata
    and render mode are the wrapped environment's. A ``step`` that does not return four
    values raises ValueError (the environment already speaks the new API).
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.metadata = getattr(env, "metadata", {})

    @property
    def render_mode(self) -> Any:  # type: ignore[override]
        return getattr(self.env, "render_mode", None)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if seed is None:
            obs = self.env.reset()
        elif _accepts_seed(self.env.reset):
            obs = self.env.reset(seed=seed)
        else:  # the oldest Gym API: seed() then reset()
            self.env.seed(seed)
            obs = self.env.reset()
        return obs, {}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict]:
        result = self.env.step(action)
        if len(result) != 4:
            raise ValueError(
                f"GymToGymnasium expects the old Gym API, step() -> (obs, reward, done, info); "
                f"{self.env!r} returned {len(result)} values"
            )
        obs, reward, done, info = result
        return obs, reward, done, False, info

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()
