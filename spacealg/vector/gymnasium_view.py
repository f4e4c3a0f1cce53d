"""A Gymnasium ``VectorEnv`` view of a PufferLib-style environment.

:class:`GymnasiumVectorView` presents one PufferEnv — native (:class:`spacealg.env.PufferEnv`)
or emulated (:class:`spacealg.emulation.GymnasiumPufferEnv`,
:class:`spacealg.emulation.PettingZooPufferEnv`), spacealg's or PufferLib's own — as a
:class:`gymnasium.vector.VectorEnv` whose sub-environment ``i`` is the environment's agent ``i``
(its row ``i`` of every buffer)::

    view = GymnasiumVectorView(Walkers(num_agents=8))
    obs, infos = view.reset(seed=0)          # obs is view.env.observations itself
    obs, rewards, terminations, truncations, infos = view.step(view.action_space.sample())

Spaces. ``num_envs == env.num_agents``; ``single_observation_space`` and
``single_action_space`` are the environment's (emulated) single spaces, and
``observation_space == joint_space(single_observation_space, num_envs)`` (likewise for
actions), which equals Gymnasium's ``batch_space`` of the single spaces.

Copies. With ``copy=False`` (the default) ``reset`` and ``step`` return the environment's
``observations`` buffer itself — no copy — which the next ``reset``/``step`` overwrites, as
Gymnasium's ``SyncVectorEnv(copy=False)`` does with its own array. With ``copy=True`` they
return a fresh copy. Rewards, terminations and truncations are always fresh arrays (``num_envs``
values each, as Gymnasium's engines return), because the autoreset below rewrites those buffers;
rewards are float64, and for an emulated environment the exact rewards its ``step`` returned
(the float32 buffer would round them).
Under ``AutoresetMode.SAME_STEP`` the ``final_obs`` of an ended episode is a copy of its row
of the environment's ``final_observations`` (see below).

Autoreset (``metadata["autoreset_mode"]``, an :class:`gymnasium.vector.AutoresetMode`):

- a native PufferEnv resets its agents itself inside ``step`` (``done`` is always False), so
  the step that reports an agent's termination already returns the first observation of its
  next episode: ``SAME_STEP``. The view steps it and adds, for the rows that ended,
  ``infos["final_obs"]`` (an object array, ``None`` for the other rows) and
  ``infos["final_info"]`` (``{}``: a native environment's infos belong to no agent) with
  their ``_final_obs``/``_final_info`` masks, exactly as Gymnasium's ``SyncVectorEnv`` does.
  The final observations come from the environment's final-observation hook
  (``keeps_final_observations``/``final_observations``, see :mod:`spacealg.env.puffer_env`):
  the environment overwrote them before the view could see them. A native environment
  without the hook keeps no final observation, so the view refuses it (APIUsageError naming
  the remedy) unless it is built with ``final_obs=False``, which declares ``SAME_STEP`` for
  the rows and promises no ``final_obs`` (``metadata["final_obs"]`` is False; spacealg's
  ``check_vector_env`` reports that as an ``autoreset`` failure, truthfully). A native
  environment that declares ``metadata["autoreset_mode"]`` itself is taken at its word.
- an emulated environment ends its episode (``env.done``) and refuses to step until reset,
  so the view resets it. ``NEXT_STEP`` (the default, Gymnasium's and PufferLib's
  ``Serial``'s behaviour): the step after the end resets, ignores its actions, and returns
  the reset observation with rewards 0, terminations and truncations False.
  ``SAME_STEP``: the ending step resets at once and puts ``final_obs``/``final_info`` in the
  infos as Gymnasium's engines do (``final_obs`` from the environment's
  ``final_observations``, which it wrote before the reset). ``DISABLED``: the caller resets (``reset``, with or
  without ``options["reset_mask"]``); stepping an ended environment raises APIUsageError.
  A PettingZoo agent that ends before the others stays ended (zero observation, terminated,
  ``env.masks[i]`` False) until every agent has ended; the whole environment then resets.

Seeding. ``reset(seed=s)`` gives agent ``i`` the seed ``s + i``, as Gymnasium's engines do:
the one environment is reset with ``s`` and, following PufferLib's convention for native
environments, seeds its agent ``i`` with ``s + i`` (for a one-agent emulated environment the
two are the same thing). A list of seeds must therefore be ``[s, s + 1, ...]`` or all None;
other lists raise ValueError, since one environment takes one seed.

Infos. Gymnasium's dict of per-environment arrays with ``_key`` masks: a Gymnasium
environment's info belongs to row 0, a PettingZoo agent's to its row. A native
environment's infos are PufferLib's list of log dicts, which belong to no agent: they are
kept in :attr:`GymnasiumVectorView.logs` and the returned infos are ``{}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from spacealg.env.errors import APIUsageError
from spacealg.ops.joint import joint_space
from spacealg.vector.infos import info_rows

__all__ = ["GymnasiumVectorView", "puffer_env_flavour"]

_PUFFER_BASES = (("PettingZooPufferEnv", "pettingzoo"), ("GymnasiumPufferEnv", "gymnasium"), ("PufferEnv", "native"))


def puffer_env_flavour(env: Any) -> str:
    """``"native"``, ``"gymnasium"`` or ``"pettingzoo"``: which PufferLib-style environment ``env`` is.

    Decided by the names of the classes ``env`` derives from, so spacealg's and PufferLib's own
    classes are both recognised. TypeError for anything else.
    """
    names = {cls.__name__ for cls in type(env).__mro__}
    for name, flavour in _PUFFER_BASES:
        if name in names:
            return flavour
    raise TypeError(
        "env must be a PufferEnv, GymnasiumPufferEnv or PettingZooPufferEnv "
        f"(spacealg.env / spacealg.emulation), got {type(env).__qualname__}"
    )


def _mode(value: Any, argument: str) -> AutoresetMode:
    try:
        return value if isinstance(value, AutoresetMode) else AutoresetMode(value)
    except ValueError:
        raise ValueError(
            f"{argument} must be a gymnasium.vector.AutoresetMode or one of "
            f"{[m.value for m in AutoresetMode]}, got {value!r}"
        ) from None


def _one_seed(seed: Any, n: int) -> int | None:
    """The environment seed that gives agent ``i`` the seed Gymnasium's engines would give it."""
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)):
        return None if seed is None else int(seed)
    if isinstance(seed, Sequence) and not isinstance(seed, (str, bytes)):
        seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"seed: a list of seeds must have num_envs={n} entries, got {len(seeds)}")
        if all(s is None for s in seeds):
            return None
        first = seeds[0]
        if isinstance(first, (int, np.integer)) and seeds == [int(first) + i for i in range(n)]:
            return int(first)
        raise ValueError(
            "seed: the agents of one PufferEnv are seeded together (agent i gets seed + i), so a "
            f"list of seeds must be [s, s + 1, ...] or all None, got {seeds!r}"
        )
    raise TypeError(f"seed must be None, an int or a list of ints, got {type(seed).__qualname__}")


class GymnasiumVectorView(VectorEnv):
    """A PufferEnv as a Gymnasium ``VectorEnv`` of its agents (see the module docstring).

    Laws: ``num_envs == env.num_agents``; ``observation_space == joint_space(
    single_observation_space, num_envs)`` and likewise for actions; with ``copy=False`` every
    returned observation batch ``is env.observations``; every returned batch lies in
    ``observation_space``; ``metadata["autoreset_mode"]`` is the mode the view follows.
    """

    def __init__(
        self,
        env: Any,
        autoreset_mode: AutoresetMode | str | None = None,
        copy: bool = False,
        final_obs: bool = True,
    ) -> None:
        self.flavour = puffer_env_flavour(env)
        if not isinstance(copy, bool):
            raise TypeError(f"copy must be a bool, got {copy!r}")
        if not isinstance(final_obs, bool):
            raise TypeError(f"final_obs must be a bool, got {final_obs!r}")
        declared = getattr(env, "metadata", None) or {}
        if self.flavour == "native":
            native = _mode(declared.get("autoreset_mode", AutoresetMode.SAME_STEP), "env.metadata['autoreset_mode']")
            mode = native if autoreset_mode is None else _mode(autoreset_mode, "autoreset_mode")
            if mode != native:
                raise ValueError(
                    f"autoreset_mode: a native PufferEnv resets its agents itself ({native.value}); "
                    f"the view cannot make it follow {mode.value}"
                )
            if mode == AutoresetMode.SAME_STEP and final_obs and getattr(env, "final_observations", None) is None:
                raise APIUsageError(
                    f"GymnasiumVectorView: {type(env).__name__} resets its agents inside step (SAME_STEP) "
                    "but keeps no final observations, so the view cannot give Gymnasium's "
                    "infos['final_obs']. Give the environment the final-observation hook (set "
                    "keeps_final_observations = True on its class and call "
                    "self.save_final_observations(ended) in step before resetting the ended rows), "
                    "or pass final_obs=False for a view whose infos carry no final_obs"
                )
        else:
            mode = _mode(AutoresetMode.NEXT_STEP if autoreset_mode is None else autoreset_mode, "autoreset_mode")
        self.env = env
        self.copy = copy
        self.final_obs = final_obs
        self.autoreset_mode = mode
        self.num_envs = int(env.num_agents)
        self.single_observation_space = env.single_observation_space
        self.single_action_space = env.single_action_space
        self.observation_space = joint_space(self.single_observation_space, self.num_envs)
        self.action_space = joint_space(self.single_action_space, self.num_envs)
        self.metadata = {**declared, "autoreset_mode": mode}
        if not final_obs:
            self.metadata["final_obs"] = False
        self.render_mode = getattr(env, "render_mode", None)
        self.logs: list[Any] = []
        self._agents = list(env.possible_agents) if self.flavour == "pettingzoo" else None
        self._reset_pending = False

    # ----------------------------------------------------------------- the environment's calls

    def _env_reset(self, seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
        if self.flavour == "native":
            result = self.env.reset(seed) if not options else self.env.reset(seed, options=options)
            return self._native_infos(result[-1])
        _, info = self.env.reset(seed=seed) if options is None else self.env.reset(seed=seed, options=options)
        return self._row_infos(info)

    def _env_step(self, actions: Any) -> tuple[np.ndarray, dict[str, Any]]:
        """Step the environment; ``(rewards as float64, vector infos)``.

        The rewards are the ones the environment returned (an emulated environment's exact
        Python/NumPy rewards, not their float32 copies in the buffer), as Gymnasium's engines
        return them; a native environment's are its float32 buffer's.
        """
        if self.flavour == "native":
            result = self.env.step(actions)
            return np.array(self.env.rewards, np.float64), self._native_infos(result[-1])
        if self.flavour == "gymnasium":
            result = self.env.step(actions[0])
            return np.array([result[1]], np.float64), self._row_infos(result[-1])
        result = self.env.step(np.asarray(actions))
        return np.array([result[1][a] for a in self._agents or ()], np.float64), self._row_infos(result[-1])

    def _native_infos(self, logs: Any) -> dict[str, Any]:
        self.logs = list(logs) if logs else []
        return {}

    def _row_infos(self, info: Any) -> dict[str, Any]:
        """Gymnasium's vector infos from a Gymnasium info (row 0) or PettingZoo's infos by agent."""
        infos: dict[str, Any] = {}
        if self._agents is None:
            return self._add_info(infos, info or {}, 0)
        for i, agent in enumerate(self._agents):
            agent_info = info.get(agent) if info else None
            if agent_info:
                infos = self._add_info(infos, agent_info, i)
        return infos

    def _ended(self) -> bool:
        return self.flavour != "native" and bool(self.env.done)

    def _observations(self) -> np.ndarray:
        observations: np.ndarray = self.env.observations
        return observations.copy() if self.copy else observations

    # ---------------------------------------------------------------------- VectorEnv methods

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every agent; agent ``i`` gets the seed ``seed + i`` (see the module docstring).

        ``options["reset_mask"]`` (Gymnasium's partial reset) is accepted when it selects every
        agent, or when it selects the one ended environment of an emulated view: the agents of
        one PufferEnv reset together, so another mask raises ValueError.
        """
        one_seed = _one_seed(seed, self.num_envs)
        if options is not None and "reset_mask" in options:
            options = dict(options)
            self._check_reset_mask(options.pop("reset_mask"))
            options = options or None
        infos = self._env_reset(one_seed, options)
        self._reset_pending = False
        return self._observations(), infos

    def _check_reset_mask(self, mask: Any) -> None:
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise TypeError(f"options['reset_mask'] must be a numpy array of dtype bool, got {mask!r}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"options['reset_mask'] must have shape ({self.num_envs},), got {mask.shape}")
        if not mask.all() and not (self._ended() and mask.any()):
            raise ValueError(
                "options['reset_mask']: the agents of one PufferEnv reset together; give a mask of all "
                f"True (or, once the environment has ended, any non-empty mask), got {mask}"
            )

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every agent with its row of ``actions``; autoreset as ``metadata`` declares."""
        env = self.env
        if self._reset_pending:
            infos = self._env_reset(None, None)
            self._reset_pending = False
            n = self.num_envs
            return self._observations(), np.zeros(n), np.zeros(n, bool), np.zeros(n, bool), infos
        if self.autoreset_mode == AutoresetMode.DISABLED and self._ended():
            raise APIUsageError("step() after the environment ended with autoreset_mode DISABLED; call reset()")
        rewards, infos = self._env_step(actions)
        terminations, truncations = env.terminals.copy(), env.truncations.copy()
        if self.flavour == "native":
            ended = terminations | truncations
            if self.final_obs and self.autoreset_mode == AutoresetMode.SAME_STEP and ended.any():
                infos = self._add_finals(infos, ended, [{}] * self.num_envs)
        elif self._ended():
            if self.autoreset_mode == AutoresetMode.NEXT_STEP:
                self._reset_pending = True
            elif self.autoreset_mode == AutoresetMode.SAME_STEP:
                infos = self._reset_same_step(infos)
        return self._observations(), rewards, terminations, truncations, infos

    def _reset_same_step(self, step_infos: dict[str, Any]) -> dict[str, Any]:
        """Reset now; Gymnasium's ``final_obs``/``final_info`` plus the infos of the reset."""
        infos: dict[str, Any] = {}
        if self.final_obs:
            rows = info_rows(step_infos, self.num_envs)
            infos = self._add_finals(infos, np.ones(self.num_envs, bool), rows)
        reset_rows = info_rows(self._env_reset(None, None), self.num_envs)
        for i, row in enumerate(reset_rows):
            infos = self._add_info(infos, row, i)
        return infos

    def _add_finals(self, infos: dict[str, Any], rows: np.ndarray, final_infos: list[dict[str, Any]]) -> dict[str, Any]:
        """``final_obs`` (a copy of each ended row of ``final_observations``) and ``final_info``
        for the ``rows`` that ended, as Gymnasium's ``SyncVectorEnv`` writes them."""
        final = self.env.final_observations
        for i in np.flatnonzero(rows):
            infos = self._add_info(infos, {"final_obs": final[i].copy(), "final_info": final_infos[i]}, int(i))
        return infos

    def render(self) -> Any:
        return self.env.render()

    def close_extras(self, **kwargs: Any) -> None:
        """Close the environment. Law: a view whose construction was refused (it never held
        an environment) closes quietly, so that its finaliser prints nothing."""
        env = self.__dict__.get("env")
        if env is not None:
            env.close()

    def __repr__(self) -> str:
        return f"GymnasiumVectorView({type(self.env).__name__}, num_envs={self.num_envs})"

