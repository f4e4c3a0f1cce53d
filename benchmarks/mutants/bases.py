"""The sound bases: environments every checker should pass, that the operators mutate.

A base's ``make(**keywords)`` builds it (``render_mode=`` and its episode-limit keyword
passed on); ``kind`` names its API — ``"gymnasium"``, ``"aec"``, ``"parallel"``,
``"vector"`` (a ``SyncVectorEnv`` of ``single``'s environment), ``"gymnax"`` or ``"jumanji"``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mutants.beacon import make_beacon

__all__ = ["BASES", "VECTOR_ENVS", "Base"]

VECTOR_ENVS = 3


@dataclass(frozen=True)
class Base:
    """A sound environment: its name, API, factory, whether its episodes are random at all
    (seed defects need randomness to be seen), the step its defects start at where episodes
    are too short for the default (Blackjack ends in one or two steps), the keyword that
    sets its episode limit, and for a vector base the base of its sub-environments."""

    name: str
    kind: str
    make: Callable[..., Any]
    random: bool = True
    first_step: int | None = None
    limit: str | None = None
    single: Base | None = None


def _gymnasium(env_id: str, **keywords: Any) -> Any:
    import gymnasium

    return gymnasium.make(env_id, disable_env_checker=True, **keywords)


def _classic(game: str, api: str, **keywords: Any) -> Any:
    import importlib

    module = importlib.import_module(f"pettingzoo.classic.{game}")
    return (module.env if api == "aec" else module.parallel_env)(**keywords)


def _vector(single: Base, **keywords: Any) -> Any:
    from gymnasium.vector import SyncVectorEnv

    return SyncVectorEnv([functools.partial(single.make, **keywords) for _ in range(VECTOR_ENVS)])


def _gymnax(env_id: str) -> Any:
    import gymnax

    return gymnax.make(env_id)


def _jumanji(env_id: str) -> Any:
    import jumanji

    return jumanji.make(env_id)


def _gym_base(env_id: str, **fields: Any) -> Base:
    return Base(env_id, "gymnasium", functools.partial(_gymnasium, env_id), limit="max_episode_steps", **fields)


CARTPOLE = _gym_base("CartPole-v1")
FROZEN_LAKE = _gym_base("FrozenLake-v1")  # Discrete observations: a vector env's rows are int64s, its sub-envs' ints

BASES: tuple[Base, ...] = (
    CARTPOLE,
    _gym_base("Pendulum-v1"),
    _gym_base("MountainCar-v0"),
    _gym_base("Acrobot-v1"),
    FROZEN_LAKE,
    _gym_base("Taxi-v4"),
    _gym_base("Blackjack-v1", first_step=1),
    Base("Beacon (Dict obs)", "gymnasium", make_beacon, limit="max_episode_steps"),
    Base("tictactoe_v3 (AEC)", "aec", functools.partial(_classic, "tictactoe_v3", "aec"), random=False),
    Base("rps_v2 (AEC)", "aec", functools.partial(_classic, "rps_v2", "aec"), random=False, limit="max_cycles"),
    Base("rps_v2 (parallel)", "parallel", functools.partial(_classic, "rps_v2", "parallel"), random=False,
         limit="max_cycles"),
    Base(f"SyncVectorEnv({VECTOR_ENVS} x CartPole-v1)", "vector", functools.partial(_vector, CARTPOLE),
         single=CARTPOLE),
    Base(f"SyncVectorEnv({VECTOR_ENVS} x FrozenLake-v1)", "vector", functools.partial(_vector, FROZEN_LAKE),
         single=FROZEN_LAKE),
    Base("gymnax CartPole-v1", "gymnax", functools.partial(_gymnax, "CartPole-v1"), limit="max_steps_in_episode"),
    Base("gymnax Acrobot-v1", "gymnax", functools.partial(_gymnax, "Acrobot-v1"), limit="max_steps_in_episode"),
    Base("jumanji Snake-v1", "jumanji", functools.partial(_jumanji, "Snake-v1")),
)
