"""JAX environment ids: ``gymnax:CartPole-v1``, ``jumanji:Snake-v1``, ``pgx:connect_four``,
``craftax:Craftax-Symbolic-v1``, ``jaxmarl:MPE_simple_v3``, ``navix:Navix-Empty-5x5-v0``,
``xminigrid:MiniGrid-Empty-5x5``, ``brax:ant``, ``playground:CartpoleBalance``.

:func:`jax_source` turns the ``env`` argument of :func:`~spacealg.testing.check_jax_env`
into an :class:`~spacealg.testing.resolve.EnvSource`: one of these ids (the library is
imported lazily: a missing one raises ModuleNotFoundError naming it; :data:`MAKERS` gives
each prefix's import and construction, the line the reproduction snippets print), or
anything :func:`~spacealg.testing.resolve.resolve` takes (an instance, the ``(env,
params)`` pair of ``gymnax.make``, a factory, ``"module:factory"``).

Laws: every prefix of :data:`~spacealg.adapters.envs.JAX_PREFIXES` has a maker; the
``construction`` of an id's source, run after its ``imports``, builds the environment
``make()`` builds.
"""

from __future__ import annotations

from typing import Any

from spacealg.adapters.envs import JAX_PREFIXES, is_jax_id
from spacealg.testing.resolve import EnvSource, resolve

__all__ = ["JAX_PREFIXES", "MAKERS", "is_jax_id", "jax_source"]

MAKERS: dict[str, tuple[str, str]] = {
    "gymnax": ("import gymnax", "gymnax.make({name!r})"),
    "jumanji": ("import jumanji", "jumanji.make({name!r})"),
    "pgx": ("import pgx", "pgx.make({name!r})"),
    "craftax": ("from craftax.craftax_env import make_craftax_env_from_name",
                "make_craftax_env_from_name({name!r}, auto_reset=True)"),
    "jaxmarl": ("import jaxmarl", "jaxmarl.make({name!r})"),
    "navix": ("import navix\nfrom navix.environments.wrappers import ToGymnax",
              "ToGymnax.wrap(navix.make({name!r}))"),
    "xminigrid": ("import xminigrid", "xminigrid.make({name!r})"),
    "brax": ("from brax import envs as brax_envs", "brax_envs.get_environment({name!r})"),
    "playground": ("from mujoco_playground import registry", "registry.load({name!r})"),
}
"""Per id prefix: the import line(s) and the expression that makes environment ``name``."""


def jax_source(env: Any) -> EnvSource:
    """The :class:`EnvSource` of ``env`` (see the module docstring)."""
    if not is_jax_id(env):
        if isinstance(env, tuple):  # gymnax's (env, params) pair
            pair = env
            name = type(env[0]).__qualname__
            return EnvSource(lambda: pair, name, "env = ...  # the (env, params) given", owned=False)
        return resolve(env)
    prefix, _, name = env.partition(":")
    imports, expression = MAKERS[prefix]
    construction = expression.format(name=name)

    def make() -> Any:
        scope: dict[str, Any] = {}
        exec(imports, scope)  # the snippet's own lines: what runs here is what it prints
        return eval(construction, scope)

    return EnvSource(make, env, f"env = {construction}", tuple(imports.splitlines()), owned=False)
