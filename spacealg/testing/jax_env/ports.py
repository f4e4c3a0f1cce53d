"""A JAX port against its Python reference, through a state bridge.

:func:`check_port_matches` (reached as ``check_envs_match(port, reference, bridge=...)``)
drives a gymnax-style port (``(env, params)`` or an env with ``default_params``) and a
Gymnasium reference side by side. Their reset randomness differs, so only the port is reset
from a key (``jax.random.key(seed)``); the reference is reset with the same seed and then
put in the port's state through the bridge. Both are then stepped with the same actions
(drawn from the reference's action space, seeded, or chosen by ``policy(observation)`` from
the reference's last observation, to steer into a region), and after every step:

- ``observations-match``: the observations agree within ``atol``/``rtol`` (``numpy.isclose``
  on float64 copies; the shapes must agree, the dtypes are not compared: a float32 port of a
  float64 reference is the usual case);
- ``rewards-match``: the rewards agree within the same tolerance;
- ``flags-match``: ``terminated`` and ``truncated`` agree. The port's step is its
  ``step_env`` (no automatic reset), ``terminated`` is its ``done`` and ``truncated`` its
  ``is_truncated(state)`` (time limit); the reference's are Gymnasium's, its ``TimeLimit``
  included. An episode ends when either says so; the next starts from the next seed.

``resync=True`` (the default) sets the port's state from the reference's after each step
(``to_port``), so each step is compared from the same state and rounding does not compound:
a port in float32 of a float64 chaotic system (Acrobot) otherwise drifts apart within a few
hundred steps without any defect. ``resync=False`` compares whole trajectories.

The bridge is ``(to_reference, to_port)``: ``to_reference(port_state) -> reference_state``
(assigned to ``reference.unwrapped.state``) and ``to_port(reference_state, port_state) ->
port_state`` (``port_state`` supplies what the reference does not hold, such as gymnax's
``time``). Its law, checked at every reset (a ValueError naming ``bridge`` otherwise):
``to_reference(to_port(to_reference(s), s)) == to_reference(s)`` within the tolerance.

Laws: a port passes against itself wrapped as a Gymnasium env by an exact bridge; the first
divergence is raised as a :class:`PortMatchError` naming the property, the step, both values
and a snippet that replays it.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.testing.engine.errors import EnvCheckError
from spacealg.testing.engine.runner import EnvCheckReport

__all__ = ["Bridge", "PortMatchError", "check_port_matches"]

Bridge = tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]

PORT_PROPERTIES = ("observations-match", "rewards-match", "flags-match")


@dataclass
class PortMatchError(EnvCheckError):
    """A divergence between a JAX port and its reference; ``seed`` is the episode's seed
    (port key ``jax.random.key(seed)``, reference ``reset(seed=seed)``, actions from
    ``action_space.seed(seed)``)."""

    replay: str = ""

    def reproduction(self) -> str:
        return self.replay


def _unpack(port: Any) -> tuple[Any, Any]:
    if isinstance(port, tuple) and len(port) == 2:
        return port
    if hasattr(port, "default_params") and callable(getattr(port, "step_env", None)):
        return port, port.default_params
    raise TypeError(f"port must be a gymnax (env, params) pair or env, got {type(port).__qualname__}")


def _close(x: Any, y: Any, atol: float, rtol: float) -> bool:
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    return a.shape == b.shape and bool(np.isclose(a, b, atol=atol, rtol=rtol, equal_nan=True).all())


def check_port_matches(
    port: Any,
    reference: Any,
    *,
    bridge: Bridge,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    episodes: int = 3,
    max_steps: int = 200,
    random_seed: int = 0,
    resync: bool = True,
    policy: Callable[[Any], Any] | None = None,
    port_name: str = "port",
    reference_name: str = "reference",
    replay_prefix: str = "",
    laws: Mapping[str, str] | None = None,
) -> EnvCheckReport:
    """Compare ``port`` (gymnax style) with ``reference`` (a Gymnasium env) over
    ``episodes`` episodes of at most ``max_steps`` steps each (see the module docstring);
    returns a report, or raises :class:`PortMatchError` at the first divergence (quoting
    its law from ``laws``, the match kind's table)."""
    import jax
    import jax.numpy as jnp

    env, params = _unpack(port)
    if not (isinstance(bridge, tuple) and len(bridge) == 2 and all(callable(f) for f in bridge)):
        raise TypeError(f"bridge must be a pair of callables (to_reference, to_port), got {bridge!r}")
    if atol < 0 or rtol < 0:
        raise ValueError(f"atol and rtol must be >= 0, got atol={atol!r}, rtol={rtol!r}")
    for name, value in (("episodes", episodes), ("max_steps", max_steps)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    to_reference, to_port = bridge
    reset = jax.jit(env.reset_env)
    step = jax.jit(env.step_env)
    truncated_of = jax.jit(env.is_truncated)
    start = _time.perf_counter()
    steps = 0
    name = f"{port_name} vs {reference_name}"

    def fail(prop: str, detail: str) -> None:
        """Raise the divergence at step ``k`` of this episode (its seed and actions so far)."""
        _fail(prop, detail, seed, k, actions, name, resync, atol, rtol, steps, episode, replay_prefix, laws or {})

    for episode in range(episodes):
        seed = random_seed + episode
        key = jax.random.key(seed)
        first, state = reset(key, params)
        reference.reset(seed=seed)
        reference.action_space.seed(seed)
        target = to_reference(state)
        back = to_reference(to_port(target, state))
        if not _close(back, target, atol, rtol):
            raise ValueError(
                f"bridge: to_reference(to_port(s)) gave {back!r}, not s={target!r} "
                f"(the two functions must be inverse on states)"
            )
        reference.unwrapped.state = np.asarray(target, dtype=np.float64)
        observation = np.asarray(first)  # the port's reset observation: the reference's is not recomputed
        actions: list[Any] = []
        for k in range(1, max_steps + 1):
            action = reference.action_space.sample() if policy is None else policy(observation)
            actions.append(action.tolist() if isinstance(action, np.ndarray) else int(action))
            p_obs, state, p_rew, p_term, _ = step(jax.random.fold_in(key, k), state, jnp.asarray(action), params)
            p_trunc = truncated_of(state, params)
            r_obs, r_rew, r_term, r_trunc, _ = reference.step(action)
            observation = r_obs
            steps += 1
            checks = (
                ("observations-match", "observation", p_obs, r_obs),
                ("rewards-match", "reward", p_rew, r_rew),
            )
            for prop, what, x, y in checks:
                if not _close(x, y, atol, rtol):
                    fail(
                        prop,
                        f"step {k}, {what}: port {np.asarray(x).tolist()!r}, reference "
                        f"{np.asarray(y).tolist()!r} (atol={atol}, rtol={rtol})",
                    )
            flags_p = (bool(p_term), bool(p_trunc))
            flags_r = (bool(r_term), bool(r_trunc))
            if flags_p != flags_r:
                fail(
                    "flags-match",
                    f"step {k}: port terminated={flags_p[0]}, truncated={flags_p[1]}; "
                    f"reference terminated={flags_r[0]}, truncated={flags_r[1]}",
                )
            if any(flags_p):
                break
            if resync:
                state = to_port(np.asarray(reference.unwrapped.state), state)
    return EnvCheckReport(
        env_name=name,
        examples=episodes,
        steps=steps,
        episodes=episodes,
        seconds=_time.perf_counter() - start,
        properties=PORT_PROPERTIES,
        kind="match",
        not_checked={
            "spaces-match": "a port's spaces are another library's (gymnax), not compared",
            "infos-match": "infos are not compared for ports",
            "exceptions-match": "a port's step is compiled and does not raise",
        },
    )


def _fail(
    prop: str,
    detail: str,
    seed: int,
    k: int,
    actions: list[Any],
    name: str,
    resync: bool,
    atol: float,
    rtol: float,
    steps: int,
    episode: int,
    prefix: str,
    laws: Mapping[str, str],
) -> None:
    mode = "each step from the reference's state (resync=True)" if resync else "whole trajectory (resync=False)"
    replay = (
        f"{prefix}"
        "import jax, jax.numpy as jnp, numpy as np\n"
        f"# {name}: {prop} at step {k}, seed {seed}, compared {mode}\n"
        "# port (a gymnax (env, params) pair), reference (Gymnasium) and bridge as in the check\n"
        "env, params = port\n"
        "to_reference, to_port = bridge\n"
        f"seed, resync, actions = {seed}, {resync}, {actions!r}\n"
        "_, state = env.reset_env(jax.random.key(seed), params)\n"
        "reference.reset(seed=seed)\n"
        "reference.unwrapped.state = np.asarray(to_reference(state), dtype=np.float64)\n"
        "for k, action in enumerate(actions, 1):\n"
        "    action = np.asarray(action, dtype=reference.action_space.dtype)\n"
        "    p = env.step_env(jax.random.fold_in(jax.random.key(seed), k), state, jnp.asarray(action), params)\n"
        "    r = reference.step(action)\n"
        "    state = to_port(np.asarray(reference.unwrapped.state), p[1]) if resync else p[1]\n"
        "print('port', p[0], p[2], p[3], '| reference', r[0], r[1], r[2], r[3])\n"
    )
    raise PortMatchError(
        property=prop,
        detail=f"{detail}\ncompared {mode}",
        seed=seed,
        actions=actions,
        step=k,
        env_name=name,
        kind="match",
        statement=laws.get(prop, ""),
        examples=episode + 1,
        steps=steps,
        replay=replay,
    )


def check_port_matches_ids(port: Any, reference: Any, **options: Any) -> EnvCheckReport:
    """:func:`check_port_matches` where ``port`` may be ``"gymnax:<id>"`` (built with
    ``gymnax.make``) and ``reference`` a Gymnasium id (built with ``gymnasium.make``); the
    reproduction then starts with those constructions."""
    prefix = ""
    port_name, reference_name = type(_unpack(port)[0] if not isinstance(port, str) else port).__name__, "reference"
    if isinstance(port, str):
        library, _, env_id = port.partition(":")
        if library != "gymnax" or not env_id:
            raise ValueError(f"port must be 'gymnax:<id>', a gymnax (env, params) pair or env, got {port!r}")
        import gymnax

        prefix += f"import gymnax\nport = gymnax.make({env_id!r})\n"
        port_name, port = port, gymnax.make(env_id)
    if isinstance(reference, str):
        import gymnasium

        prefix += f"import gymnasium\nreference = gymnasium.make({reference!r})\n"
        reference_name, reference = reference, gymnasium.make(reference)
    elif reference.spec is not None:
        reference_name = reference.spec.id
    from spacealg.adapters.jax_bridges import BRIDGES

    known = [i for i, b in BRIDGES.items() if b is options.get("bridge")]
    if known:
        prefix += f"from spacealg.adapters.jax_bridges import bridge_for\nbridge = bridge_for({known[0]!r})\n"
    elif prefix:
        prefix += "bridge = ...  # the bridge given to the check\n"
    return check_port_matches(
        port, reference, port_name=port_name, reference_name=reference_name, replay_prefix=prefix, **options
    )
