"""The declared spaces of dm_env, TorchRL, gymnax and Jumanji environments, by name.

:func:`foreign_spaces` is what ``spacealg describe`` asks before it reads Gymnasium's
``observation_space``/``action_space``: for an environment of one of those ecosystems it
returns ``(name, spec)`` pairs, each spec a space to every generic function through the
adapters; for any other object, None. A gymnax environment comes with its parameters: pass
the pair ``(env, params)`` that ``gymnax.make`` returns (a factory may return it too).
"""

from __future__ import annotations

from typing import Any

from spacealg.describe import describe

__all__ = ["JAX_EXAMPLES", "JAX_PREFIXES", "describe_env", "foreign_spaces", "is_jax_id"]


JAX_EXAMPLES: dict[str, str] = {
    "gymnax": "CartPole-v1",
    "jumanji": "Snake-v1",
    "pgx": "connect_four",
    "craftax": "Craftax-Symbolic-v1",
    "jaxmarl": "MPE_simple_v3",
    "navix": "Navix-Empty-5x5-v0",
    "xminigrid": "MiniGrid-Empty-5x5",
    "brax": "ant",
    "playground": "CartpoleBalance",
}
"""Per id prefix (a library whose ``make(name)`` makes the environment, and the extra of
pyproject that installs it), one name it makes: ``gymnax:CartPole-v1`` and so on."""

JAX_PREFIXES = tuple(JAX_EXAMPLES)
"""The id prefixes: each names a library whose ``make(name)`` makes the environment."""


def is_jax_id(env: Any) -> bool:
    """Whether ``env`` is a string naming a JAX environment by one of :data:`JAX_PREFIXES`."""
    return isinstance(env, str) and env.partition(":")[0] in JAX_PREFIXES and bool(env.partition(":")[2])


def _roots(obj: Any) -> set[str]:
    return {cls.__module__.partition(".")[0] for cls in type(obj).__mro__}


def _nest(spec: Any, convert: str) -> Any:
    """A tuple or list of dm_env specs as a product (spacealg reads plain tuples as finite sets)."""
    if isinstance(spec, (tuple, list)):
        from spacealg.adapters import dm_env

        return getattr(dm_env, convert)(spec)
    return spec


def foreign_spaces(env: Any) -> list[tuple[str, Any]] | None:
    """``[(name, spec), ...]`` for a dm_env, TorchRL, gymnax (``(env, params)``) or Jumanji
    environment; None for anything else."""
    if isinstance(env, tuple) and len(env) == 2 and "gymnax" in _roots(env[0]):
        gymnax_env, params = env
        return [
            ("observation space", gymnax_env.observation_space(params)),
            ("action space", gymnax_env.action_space(params)),
        ]
    roots = _roots(env)
    if "dm_env" in roots:
        return [
            (f"{name} spec", _nest(getattr(env, f"{name}_spec")(), "from_dm_env"))
            for name in ("observation", "action", "reward", "discount")
        ]
    if "torchrl" in roots:
        return [
            ("observation spec", env.full_observation_spec),
            ("action spec", env.full_action_spec),
            ("reward spec", env.full_reward_spec),
            ("done spec", env.full_done_spec),
        ]
    if "jumanji" in roots:
        return [("observation spec", env.observation_spec), ("action spec", env.action_spec)]
    return None


def describe_env(env: Any, title: str | None = None) -> str:
    """The algebraic description (:func:`spacealg.describe.describe`) of each declared space of
    a dm_env, TorchRL, gymnax (``(env, params)``) or Jumanji environment object, or of a
    Gymnasium one; TypeError for anything else."""
    named = foreign_spaces(env)
    if named is None:
        if not hasattr(env, "observation_space"):
            raise TypeError(f"describe_env: {env!r} is not a dm_env, TorchRL, gymnax, Jumanji or Gymnasium environment")
        named = [("observation space", env.observation_space), ("action space", env.action_space)]
    head = [title] if title else []
    return "\n".join(head + [describe(space, title=name) for name, space in named])
