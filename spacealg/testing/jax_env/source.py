"""JAX environment ids: ``gymnax:CartPole-v1``, ``jumanji:Snake-v1``, ``pgx:connect_four``.

:func:`jax_source` turns the ``env`` argument of :func:`~spacealg.testing.check_jax_env`
into an :class:`~spacealg.testing.resolve.EnvSource`: one of these ids (the library is
imported lazily: a missing one raises ModuleNotFoundError naming it), or anything
:func:`~spacealg.testing.resolve.resolve` takes (an instance, the ``(env, params)`` pair of
``gymnax.make``, a factory, ``"module:factory"``).
"""

from __future__ import annotations

import importlib
from typing import Any

from spacealg.adapters.envs import JAX_PREFIXES, is_jax_id
from spacealg.testing.resolve import EnvSource, resolve

__all__ = ["JAX_PREFIXES", "is_jax_id", "jax_source"]

def jax_source(env: Any) -> EnvSource:
    """The :class:`EnvSource` of ``env`` (see the module docstring)."""
    if not is_jax_id(env):
        if isinstance(env, tuple):  # gymnax's (env, params) pair
            pair = env
            name = type(env[0]).__qualname__
            return EnvSource(lambda: pair, name, "env = ...  # the (env, params) given", owned=False)
        return resolve(env)
    prefix, _, name = env.partition(":")
    module = importlib.import_module(prefix)

    def make() -> Any:
        return module.make(name)

    return EnvSource(make, env, f"env = {prefix}.make({name!r})", (f"import {prefix}",), owned=False)
