"""PufferEnv: the base class of native multi-agent environments with preallocated buffers.

A subclass declares one agent's spaces and the number of agents, then calls
``super().__init__(buf)``::

    class Walkers(PufferEnv):
        def __init__(self, buf=None):
            self.single_observation_space = gymnasium.spaces.Box(0, 1, (10,), np.float32)
            self.single_action_space = gymnasium.spaces.Discrete(4)
            self.num_agents = 8
            super().__init__(buf)

after which ``observation_space`` and ``action_space`` are the joint spaces
(``joint_space(single, num_agents)``, equal to Gymnasium's ``batch_space``) and the six
buffers of :mod:`spacealg.env.buffers` exist. The subclass implements ``reset``, ``step``
and ``close``, writes into the buffers, and returns ``(observations, infos)`` and
``(observations, rewards, terminals, truncations, infos)`` with ``infos`` a list of dicts.

Final observations (optional hook). A native environment resets an agent inside ``step``, so
the observation that ended its episode is gone when ``step`` returns. An environment that
keeps it declares ``keeps_final_observations = True`` (``PufferEnv.__init__`` then allocates
``final_observations``, shaped and typed like ``observations``) and, in ``step``, calls
``self.save_final_observations(ended)`` after writing the ending observations and before
resetting the ended rows::

    ended = self.terminals | self.truncations
    self.save_final_observations(ended)
    self.observations[ended] = ...          # the first observations of the next episodes

Law: after a ``step`` whose ``terminals[i] or truncations[i]``, ``final_observations[i]`` is
row ``i``'s observation at the end of that episode (the row keeps it until its next end).
Consumers copy what they keep. :class:`spacealg.vector.GymnasiumVectorView` reads it to give
Gymnasium's ``infos["final_obs"]``; the emulated environments of :mod:`spacealg.emulation`
provide it too.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from spacealg.env.buffers import HasBuffers, set_buffers
from spacealg.env.errors import APIUsageError
from spacealg.env.kinds import puffer_space_class
from spacealg.ops.joint import joint_space

__all__ = ["PufferEnv"]

_REQUIRED = ("single_observation_space", "single_action_space", "num_agents")

_MISSING = (
    "{cls} has no attribute {name!r}. A PufferEnv subclass must assign "
    "single_observation_space, single_action_space and num_agents before calling "
    "super().__init__(buf); the usual cause is calling super().__init__ too early."
)


def _check_declaration(env: Any) -> None:
    cls = type(env).__name__
    for name in _REQUIRED:
        if not hasattr(env, name):
            raise APIUsageError(_MISSING.format(cls=cls, name=name))
    n = env.num_agents
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1:
        raise APIUsageError(f"{cls}.num_agents must be an int >= 1, got {n!r}")
    for joint, single in (("observation_space", "single_observation_space"),
                          ("action_space", "single_action_space")):
        if hasattr(env, joint):
            raise APIUsageError(
                f"{cls} already defines {joint}; a PufferEnv defines {single} and "
                f"PufferEnv.__init__ derives {joint} = joint_space({single}, num_agents)"
            )
    if puffer_space_class(env.single_observation_space) != "Box":
        raise APIUsageError(
            f"{cls}.single_observation_space must be a Box, got {env.single_observation_space!r}; "
            "wrap structured observations with spacealg.emulation.GymnasiumPufferEnv instead"
        )
    if puffer_space_class(env.single_action_space) is None:
        raise APIUsageError(
            f"{cls}.single_action_space must be a Discrete, MultiDiscrete or Box, got "
            f"{env.single_action_space!r}"
        )


class PufferEnv(HasBuffers):
    """A native vectorised environment of ``num_agents`` agents writing into shared buffers.

    Laws: after ``__init__``, ``observation_space == joint_space(single_observation_space,
    num_agents)`` and likewise for actions; ``observations.shape == observation_space.shape``;
    ``actions.shape == action_space.shape``; ``agent_ids`` is ``arange(num_agents)``.
    """

    single_observation_space: Any
    single_action_space: Any
    num_agents: int
    keeps_final_observations: bool = False
    final_observations: np.ndarray | None = None

    def __init__(self, buf: Any = None) -> None:
        _check_declaration(self)
        set_buffers(self, buf)
        if self.keeps_final_observations:
            self.final_observations = np.zeros_like(self.observations)
        self.observation_space = joint_space(self.single_observation_space, self.num_agents)
        self.action_space = joint_space(self.single_action_space, self.num_agents)
        self.agent_ids = np.arange(self.num_agents)

    @property
    def emulated(self) -> bool:
        """Always False: native environments need no emulation."""
        return False

    @property
    def done(self) -> bool:
        """Always False: native environments reset their agents themselves."""
        return False

    @property
    def agent_per_batch(self) -> int:
        return self.num_agents

    agents_per_batch = agent_per_batch  # PufferLib reads both spellings

    @property
    def driver_env(self) -> PufferEnv:
        """The environment itself (what PufferLib's vectorisation asks a worker for)."""
        return self

    def save_final_observations(self, rows: Any) -> None:
        """The final-observation hook: keep ``observations[rows]`` in ``final_observations``.

        ``rows``: a bool mask over the agents or their indices. Call it in ``step`` after
        writing the observations that end episodes and before resetting those rows (see the
        module docstring). APIUsageError unless the class declares ``keeps_final_observations``.
        """
        final = self.final_observations
        if final is None:
            raise APIUsageError(
                f"{type(self).__name__}.save_final_observations needs keeps_final_observations = True "
                "on the class (PufferEnv.__init__ then allocates final_observations)"
            )
        final[rows] = self.observations[rows]

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """Reset every agent; return ``(observations, infos)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement reset(seed=None)")

    def step(self, actions: np.ndarray) -> tuple[Any, ...]:
        """Step every agent; return ``(observations, rewards, terminals, truncations, infos)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement step(actions)")

    def close(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement close()")

    def async_reset(self, seed: int | None = None) -> None:
        """Start a reset; its results are read with :meth:`recv`."""
        _, infos = self.reset(seed)
        self.infos = self._checked_infos(infos, "reset")

    def send(self, actions: np.ndarray) -> None:
        """Start a step; its results are read with :meth:`recv`."""
        *_, infos = self.step(actions)
        self.infos = self._checked_infos(infos, "step")

    def recv(self) -> tuple[Any, ...]:
        """``(observations, rewards, terminals, truncations, infos, agent_ids, masks)``."""
        return (self.observations, self.rewards, self.terminals, self.truncations,
                self.infos, self.agent_ids, self.masks)

    def _checked_infos(self, infos: Any, method: str) -> list[Any]:
        if not isinstance(infos, list):
            raise APIUsageError(
                f"{type(self).__name__}.{method} must return infos as a list of dicts, "
                f"got {type(infos).__qualname__}"
            )
        return infos
