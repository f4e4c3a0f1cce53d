"""JAX environment ids: ``gymnax:CartPole-v1``, ``jumanji:Snake-v1``, ``pgx:connect_four``,
``craftax:Craftax-Symbolic-v1``, ``jaxmarl:MPE_simple_v3``, ``navix:Navix-Empty-5x5-v0``,
``xminigrid:MiniGrid-Empty-5x5``, ``brax:ant``, ``playground:CartpoleBalance``.

:func:`jax_source` turns the ``env`` argument of :func:`~spacealg.testing.check_jax_env`
into an :class:`~spacealg.testing.engine.resolve.EnvSource`: one of these ids (the library is
imported when the source is made: a missing one raises ModuleNotFoundError naming it;
:data:`spacealg.adapters.envs.MAKERS` gives each prefix's import and construction, the
lines the reproduction snippets print), or anything
:func:`~spacealg.testing.engine.resolve.resolve` takes (an instance, the ``(env, params)``
pair of ``gymnax.make``, a factory, ``"module:factory"``).

Law: the ``construction`` of an id's source, run after its ``imports``, builds the
environment ``make()`` builds.
"""

from __future__ import annotations

from typing import Any

from spacealg.adapters.envs import is_jax_id, jax_maker
from spacealg.testing.engine.resolve import EnvSource, resolve

__all__ = ["jax_source"]

def jax_source(env: Any) -> EnvSource:
    """The :class:`EnvSource` of ``env`` (see the module docstring)."""
    if not is_jax_id(env):
        if isinstance(env, tuple):  # gymnax's (env, params) pair
            pair = env
            name = type(env[0]).__qualname__
            return EnvSource(lambda: pair, name, "env = ...  # the (env, params) given", owned=False)
        return resolve(env)
    make, construction, imports = jax_maker(env)
    return EnvSource(make, env, construction, imports, owned=False)
