"""State bridges between gymnax's classic-control ports and Gymnasium's originals, for
:func:`spacealg.testing.jax_env.ports.check_port_matches`.

Each bridge is ``(to_reference, to_port)``. Gymnasium keeps the state as
``env.unwrapped.state``, a float64 array: CartPole ``[x, x_dot, theta, theta_dot]``,
Acrobot ``[theta1, theta2, dtheta1, dtheta2]``, Pendulum ``[theta, theta_dot]`` (not
normalised), MountainCar and MountainCarContinuous ``[position, velocity]``. gymnax keeps
the same numbers as fields of its ``EnvState`` dataclass, plus ``time`` (and Pendulum's
``last_u``), which ``to_port`` takes from the port state it is given.

Law: ``to_reference(to_port(to_reference(s), s)) == to_reference(s)`` up to float32
rounding (gymnax holds float32).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["BRIDGES", "bridge_for"]


def _fields(*names: str) -> tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]:
    def to_reference(state: Any) -> np.ndarray:
        return np.array([float(getattr(state, n)) for n in names], dtype=np.float64)

    def to_port(reference_state: Any, state: Any) -> Any:
        import jax.numpy as jnp

        values = np.asarray(reference_state, dtype=np.float64)
        return state.replace(**{n: jnp.asarray(values[i], dtype=jnp.float32) for i, n in enumerate(names)})

    return to_reference, to_port


BRIDGES: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]] = {
    "CartPole-v1": _fields("x", "x_dot", "theta", "theta_dot"),
    "Acrobot-v1": _fields("joint_angle1", "joint_angle2", "velocity_1", "velocity_2"),
    "Pendulum-v1": _fields("theta", "theta_dot"),
    "MountainCar-v0": _fields("position", "velocity"),
    "MountainCarContinuous-v0": _fields("position", "velocity"),
}


def bridge_for(env_id: str) -> tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]:
    """The bridge for one of the five classic-control ids (ValueError for another)."""
    try:
        return BRIDGES[env_id]
    except KeyError:
        raise ValueError(f"env_id must be one of {sorted(BRIDGES)}, got {env_id!r}") from None
