"""Vector environments on a Ray cluster: Ray actors that each hold one vector environment.

The path for spacealg environments on Ray is Ray Core's actors (``ray.remote``), each holding
one Gymnasium ``VectorEnv`` built *inside* the actor's process — a
:class:`~spacealg.vector.GymnasiumVectorView` of a PufferEnv, or ``SyncVectorEnv``/
``AsyncVectorEnv`` of emulated environments::

    actors = vector_env_actors(lambda: GymnasiumVectorView(MyPufferEnv(num_agents=64)), 4)
    reset_all(actors, seed=0)                       # global sub-environment i gets seed + i
    results = step_all(actors, actions)             # actions: (4 * 64, ...) split in order

Only the factory travels to the actor (pickled by Ray), never an environment. The calls return
what the vector environment returns, serialized by Ray (so observation batches arrive as
copies, read-only on the driver). Ray is an optional extra (``pip install 'ray[default]'``),
imported when these functions run, never by ``import spacealg.vector``.

Laws: ``reset_all(actors, seed)`` resets actor ``j`` with ``seed + offset_j`` where
``offset_j`` is the number of sub-environments of the actors before it, so the sub-environments
are seeded exactly as one Gymnasium vector environment of all of them; ``step_all`` splits the
batched actions in actor order and concatenates the results in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["VectorEnvActor", "reset_all", "step_all", "vector_env_actors"]


def _ray() -> Any:
    try:
        import ray
    except ImportError as error:  # depends on the installation
        raise ImportError(
            "spacealg.vector.ray_actors needs Ray: pip install 'ray[default]'"
        ) from error
    return ray


class VectorEnvActor:
    """One vector environment, built by ``make_vector_env()`` in this (actor) process."""

    def __init__(self, make_vector_env: Callable[[], Any]) -> None:
        if not callable(make_vector_env):
            raise TypeError(f"make_vector_env must be callable, got {make_vector_env!r}")
        self.env = make_vector_env()

    def describe(self) -> dict[str, Any]:
        """``num_envs``, the single and batched spaces and the metadata of the vector environment."""
        env = self.env
        return {
            "num_envs": env.num_envs,
            "single_observation_space": env.single_observation_space,
            "single_action_space": env.single_action_space,
            "observation_space": env.observation_space,
            "action_space": env.action_space,
            "metadata": dict(env.metadata),
        }

    def reset(self, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        return tuple(self.env.reset(seed=seed, options=options))  # type: ignore[return-value]

    def step(self, actions: Any) -> tuple[Any, ...]:
        return tuple(self.env.step(actions))

    def close(self) -> None:
        self.env.close()


def vector_env_actors(make_vector_env: Callable[[], Any], num_actors: int, **actor_options: Any) -> list[Any]:
    """``num_actors`` Ray actors, each holding ``make_vector_env()``; ``actor_options`` go to
    ``ray.remote(...).options`` (``num_cpus``, ``resources``, ...). Needs ``ray.init()`` first
    (or Ray starts a local instance)."""
    if isinstance(num_actors, bool) or not isinstance(num_actors, int) or num_actors < 1:
        raise ValueError(f"num_actors must be a positive int, got {num_actors!r}")
    if not callable(make_vector_env):
        raise TypeError(f"make_vector_env must be callable, got {make_vector_env!r}")
    remote = _ray().remote(VectorEnvActor)
    if actor_options:
        remote = remote.options(**actor_options)
    return [remote.remote(make_vector_env) for _ in range(num_actors)]


def _sizes(actors: Sequence[Any]) -> list[int]:
    ray = _ray()
    return [d["num_envs"] for d in ray.get([a.describe.remote() for a in actors])]


def reset_all(
    actors: Sequence[Any], seed: int | None = None, options: dict[str, Any] | None = None
) -> list[tuple[Any, dict[str, Any]]]:
    """Reset every actor's vector environment at once; sub-environment ``i`` overall gets ``seed + i``.

    Returns each actor's ``(observations, infos)``, in actor order.
    """
    ray = _ray()
    offsets = np.concatenate([[0], np.cumsum(_sizes(actors))[:-1]]) if seed is not None else [0] * len(actors)
    calls = [
        a.reset.remote(seed=None if seed is None else int(seed + off), options=options)
        for a, off in zip(actors, offsets)
    ]
    return list(ray.get(calls))


def step_all(actors: Sequence[Any], actions: Any, sizes: Sequence[int] | None = None) -> list[tuple[Any, ...]]:
    """Step every actor at once with its slice of ``actions`` (split along axis 0 in actor order).

    ``sizes`` (each actor's ``num_envs``) saves a round trip when known. Returns each actor's
    step results, in actor order.
    """
    ray = _ray()
    sizes = list(sizes) if sizes is not None else _sizes(actors)
    if len(sizes) != len(actors):
        raise ValueError(f"sizes must have one entry per actor ({len(actors)}), got {len(sizes)}")
    actions = np.asarray(actions)
    if actions.shape[:1] != (sum(sizes),):
        raise ValueError(f"actions must have {sum(sizes)} rows (one per sub-environment), got shape {actions.shape}")
    parts = np.split(actions, np.cumsum(sizes)[:-1])
    return list(ray.get([a.step.remote(part) for a, part in zip(actors, parts)]))
