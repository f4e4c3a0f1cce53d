"""Any Gymnasium ``VectorEnv`` as a PufferLib-style buffer environment.

:class:`VectorPufferEnv` is a native :class:`spacealg.env.PufferEnv` whose agent ``i`` is
sub-environment ``i`` of a Gymnasium vector environment (``SyncVectorEnv``,
``AsyncVectorEnv`` with or without shared memory, or any other ``VectorEnv``)::

    vec = gymnasium.vector.AsyncVectorEnv([make_env] * 4, shared_memory=True)
    env = VectorPufferEnv(vec)
    obs, infos = env.reset(seed=0)            # env.observations: (4, width), emulated rows
    obs, rewards, terminals, truncations, infos = env.step(actions)

so a PufferLib-style trainer (``async_reset``/``send``/``recv``, the six buffers,
``single_*`` spaces, ``emulated``) consumes it. Structured observations (Dict, Tuple,
Discrete, ...) are emulated through the codec of the single observation space
(:func:`spacealg.emulation.codec_for`): the vector environment's batch is written, field by
field, into the ``observations`` buffer, one row per sub-environment, with no per-step
allocation; ``spacealg.emulation.nativize`` or the codec's ``nativize_batch`` turns rows
back. Actions are rows of the emulated action space (MultiDiscrete for Dict/Tuple of
discrete spaces), nativized to the vector environment's batched action with the codec's
``nativize_batch``.

Laws: ``num_agents == vector_env.num_envs``; ``single_observation_space ==
emulate_observation_space(vector_env.single_observation_space)`` (likewise for actions);
after ``reset``/``step``, ``codec.nativize_batch(observations)`` equals the vector
environment's observation batch, and ``rewards``/``terminals``/``truncations`` equal its own;
infos are PufferLib's list, one dict per sub-environment (:func:`spacealg.vector.infos.info_rows`).
Resetting is the vector environment's: its ``metadata["autoreset_mode"]`` applies
(``SAME_STEP`` gives PufferLib's native semantics, where the step that ends an episode already
returns the next one's first observation; under ``NEXT_STEP`` the step after an end is a
reset whose actions are ignored, as in PufferLib's ``Serial``). ``masks`` stay True.
Final observations (the final-observation hook of :class:`~spacealg.env.PufferEnv`): the
``infos["final_obs"]`` a ``SAME_STEP`` vector environment gives are emulated into
``final_observations`` (row ``i`` for each sub-environment ``i`` that ended), so
``GymnasiumVectorView(VectorPufferEnv(vec))`` gives them back.

Checked: the vector environment's observations (one member of the single observation space
per sub-environment, by value), rewards (``num_envs`` real numbers, no NaN) and flags
(``num_envs`` bools) are checked before any buffer is written; anything else raises
:class:`~spacealg.env.APIUsageError` and leaves the buffers as they were. ``timeout=``
(seconds): an ``AsyncVectorEnv``'s calls wait at most that long (``multiprocessing.TimeoutError``),
and ``close`` terminates the workers of one whose call timed out or whose worker died.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spacealg.core.protocol import isin
from spacealg.emulation.codec import codec_for
from spacealg.emulation.spaces import emulate_action_space, emulate_observation_space
from spacealg.env.errors import APIUsageError
from spacealg.env.kinds import puffer_space_class
from spacealg.env.namespace import Namespace
from spacealg.env.puffer_env import PufferEnv
from spacealg.vector.infos import info_rows

__all__ = ["VectorPufferEnv"]


def _is_vector_env(env: Any) -> bool:
    return all(hasattr(env, name) for name in ("num_envs", "single_observation_space", "single_action_space",
                                                "reset", "step"))


class VectorPufferEnv(PufferEnv):
    """A Gymnasium ``VectorEnv`` as a native PufferEnv of ``num_envs`` agents (see the module)."""

    keeps_final_observations = True

    def __init__(self, vector_env: Any, buf: Any = None, *, timeout: float | None = None) -> None:
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"VectorPufferEnv: timeout must be a positive number of seconds or None, got {timeout!r}")
        if not _is_vector_env(vector_env):
            raise TypeError(
                "vector_env must be a Gymnasium VectorEnv (num_envs, single_observation_space, "
                f"single_action_space, reset, step), got {type(vector_env).__qualname__}"
            )
        self.vector_env = vector_env
        self.timeout = timeout
        self._stalled = False  # a call timed out or raised: the workers are in an unknown state
        self._owner = f"VectorPufferEnv({type(vector_env).__qualname__})"
        native_obs = vector_env.single_observation_space
        native_atn = vector_env.single_action_space
        self.single_observation_space, self.obs_dtype = emulate_observation_space(native_obs)
        self.single_action_space, self.atn_dtype = emulate_action_space(native_atn)
        self.num_agents = int(vector_env.num_envs)
        self.is_obs_emulated = puffer_space_class(native_obs) != "Box"
        self.is_atn_emulated = puffer_space_class(native_atn) is None
        self.metadata = dict(getattr(vector_env, "metadata", {}) or {})
        self.render_mode = getattr(vector_env, "render_mode", None)
        super().__init__(buf)
        self._obs_codec = codec_for(native_obs, "observation") if self.is_obs_emulated else None
        self._atn_codec = codec_for(native_atn, "action") if self.is_atn_emulated else None
        self.infos: list[Any] = []

    @property
    def emulated(self) -> Any:  # type: ignore[override]
        """PufferLib's description of the emulation (what its trainers nativize with)."""
        return Namespace(
            observation_dtype=self.single_observation_space.dtype,
            emulated_observation_dtype=self.obs_dtype,
        )

    @property
    def obs_struct(self) -> np.ndarray:
        """The observations buffer seen as one struct per agent (PufferLib's ``obs_struct``)."""
        if not self.is_obs_emulated:
            return self.observations
        return self.observations.view(self.obs_dtype).reshape(self.num_agents)

    def _write(self, observations: Any) -> None:
        self._check_observations(observations)
        if self._obs_codec is None:
            self.observations[...] = observations
        else:
            self._obs_codec.emulate_batch(self.observations, observations)

    def reset(
        self, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """Reset the vector environment (Gymnasium's seeding: sub-environment ``i`` gets ``seed + i``)."""
        kwargs: dict[str, Any] = {"seed": seed} if options is None else {"seed": seed, "options": options}
        observations, infos = self._call("reset", kwargs)
        self._write(observations)
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        self.masks[:] = True
        return self.observations, info_rows(infos, self.num_agents)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Nativize the action rows, step the vector environment, emulate its observations."""
        self.actions[...] = np.reshape(actions, self.actions.shape)
        if self._atn_codec is not None:
            native = self._atn_codec.nativize_batch(self.actions, copy=True)
        else:
            native = self.actions.reshape((self.num_agents, *self.vector_env.single_action_space.shape))
        observations, rewards, terminations, truncations, infos = self._call("step", {"actions": native})
        rewards = self._numbers(rewards, "rewards")
        terminations, truncations = self._flags(terminations, "terminations"), self._flags(truncations, "truncations")
        self._check_observations(observations)  # everything checked before any buffer is written
        if "final_obs" in infos:
            self._keep_finals(infos["final_obs"], infos.get("_final_obs"))
        self._write(observations)
        self.rewards[:] = rewards
        self.terminals[:] = terminations
        self.truncations[:] = truncations
        return self.observations, self.rewards, self.terminals, self.truncations, info_rows(infos, self.num_agents)

    def _keep_finals(self, finals: Any, mask: Any) -> None:
        """Emulate the vector environment's ``final_obs`` into ``final_observations``."""
        final = self.final_observations
        assert final is not None  # keeps_final_observations
        for i in range(self.num_agents) if mask is None else np.flatnonzero(mask):
            if finals[i] is None:
                continue
            if self._obs_codec is None:
                final[i] = finals[i]
            else:
                self._obs_codec.emulate_row(final, int(i), finals[i])

    def _call(self, method: str, kwargs: dict[str, Any]) -> Any:
        """``vector_env.<method>(**kwargs)``; with a ``timeout``, through the vector env's
        ``<method>_async``/``<method>_wait(timeout)`` pair (``AsyncVectorEnv``), so that a
        blocked sub-environment raises ``multiprocessing.TimeoutError`` instead of blocking."""
        start, wait = (getattr(self.vector_env, f"{method}_{part}", None) for part in ("async", "wait"))
        try:
            if self.timeout is None or start is None or wait is None:
                return getattr(self.vector_env, method)(**kwargs)
            start(**kwargs)
            return wait(timeout=self.timeout)
        except BaseException:  # a call that raised left the workers in an unknown state (a dead
            self._stalled = True  # worker may still look alive for a moment): close terminates them
            raise

    def _refuse(self, what: str, value: Any, expected: str) -> APIUsageError:
        text = repr(value)
        text = text if len(text) <= 200 else text[:197] + "..."
        return APIUsageError(f"{self._owner}: the {what} {text} are not {expected}")

    def _numbers(self, values: Any, what: str) -> np.ndarray:
        """``num_envs`` real numbers, none NaN (else APIUsageError, before any write)."""
        array = np.asarray(values) if isinstance(values, (np.ndarray, list, tuple)) else None
        if array is None or array.shape != (self.num_agents,) or array.dtype.kind not in "biuf" or (
            array.dtype.kind == "f" and np.isnan(array).any()
        ):
            raise self._refuse(what, values, f"an array of {self.num_agents} real numbers (no NaN)")
        return array

    def _flags(self, values: Any, what: str) -> np.ndarray:
        """``num_envs`` bools (Gymnasium's vector API), else APIUsageError."""
        array = np.asarray(values) if isinstance(values, (np.ndarray, list, tuple)) else None
        if array is None or array.shape != (self.num_agents,) or array.dtype.kind != "b":
            raise self._refuse(what, values, f"an array of {self.num_agents} bools")
        return array

    def _check_observations(self, observations: Any) -> None:
        """One member of the single observation space per sub-environment (spacealg's
        membership by value), else APIUsageError naming the rows: no broadcast of a single
        row, no cast of 300.7 into a uint8 field, no NaN, no Discrete entry out of range."""
        space = self.vector_env.single_observation_space
        try:
            inside = np.asarray(isin(observations, space)) if self._rows_everywhere(observations) else None
        except (ValueError, TypeError):
            inside = None
        if inside is None or inside.shape != (self.num_agents,):
            raise self._refuse("observations", observations,
                               f"a batch of {self.num_agents} members of {space!r}")
        if not inside.all():
            rows = np.flatnonzero(~inside).tolist()
            raise APIUsageError(f"{self._owner}: the observations of sub-environments {rows} are not in "
                                f"their declared space {space!r}")

    def _rows_everywhere(self, batch: Any) -> bool:
        """Whether every leaf of the batch has one row per sub-environment (``isin`` would
        broadcast a component of one row over the others)."""
        if isinstance(batch, dict):
            return all(self._rows_everywhere(v) for v in batch.values())
        if isinstance(batch, tuple):
            return all(self._rows_everywhere(v) for v in batch)
        shape = getattr(batch, "shape", None)
        if shape is None:
            return isinstance(batch, list) and len(batch) == self.num_agents
        return len(shape) >= 1 and shape[0] == self.num_agents

    def render(self) -> Any:
        return self.vector_env.render()

    def close(self) -> None:
        """Close the vector env; an ``AsyncVectorEnv`` whose call timed out or whose worker
        died is closed by terminating its workers (a plain close would wait on them forever)."""
        processes = getattr(self.vector_env, "processes", None)
        dead = processes is not None and any(not p.is_alive() for p in processes)
        if (self._stalled or dead) and processes is not None:
            self.vector_env.close(terminate=True)
        elif processes is not None and self.timeout is not None:
            self.vector_env.close(timeout=self.timeout)
        else:
            self.vector_env.close()
