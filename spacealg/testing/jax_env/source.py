"""JAX environment ids: ``gymnax:CartPole-v1``, ``jumanji:Snake-v1``, ``pgx:connect_four``,
``craftax:Craftax-Symbolic-v1``, ``jaxmarl:MPE_simple_v3``, ``navix:Navix-Empty-5x5-v0``,
``xminigrid:MiniGrid-Empty-5x5``, ``brax:ant``, ``playground:CartpoleBalance``.

:func:`jax_source` turns the ``env`` argument of :func:`~spacealg.testing.check_jax_env`
into an :class:`~spacealg.testing.resolve.EnvSource`: one of these ids (the library is
imported when the source is made: a missing one raises ModuleNotFoundError naming it;
:data:`MAKERS` gives each prefix's import and construction, the lines the reproduction
snippets print), or
anything :func:`~spacealg.testing.resolve.resolve` takes (an instance, the ``(env,
params)`` pair of ``gymnax.make``, a factory, ``"module:factory"``).

Laws: every prefix of :data:`~spacealg.adapters.envs.JAX_PREFIXES` has a maker; the
``construction`` of an id's source, run after its ``imports``, builds the environment
``make()`` builds; :func:`jax_ids` lists the ids of one prefix (the globs ``"gymnax:*"``, ...).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from spacealg.adapters.envs import JAX_PREFIXES, is_jax_id
from spacealg.testing.resolve import EnvSource, resolve

__all__ = ["DEFAULTS", "JAX_PREFIXES", "MAKERS", "REGISTRIES", "is_jax_id", "jax_ids", "jax_maker", "jax_source"]

MAKERS: dict[str, tuple[str, str, str]] = {
    "gymnax": ("gymnax", "import gymnax", "gymnax.make({args})"),
    "jumanji": ("jumanji", "import jumanji", "jumanji.make({args})"),
    "pgx": ("pgx", "import pgx", "pgx.make({args})"),
    "craftax": ("craftax", "from craftax.craftax_env import make_craftax_env_from_name",
                "make_craftax_env_from_name({args})"),
    "jaxmarl": ("jaxmarl", "import jaxmarl", "jaxmarl.make({args})"),
    "navix": ("navix", "import navix\nfrom navix.environments.wrappers import ToGymnax",
              "ToGymnax.wrap(navix.make({args}))"),
    "xminigrid": ("xminigrid", "import xminigrid", "xminigrid.make({args})"),
    "brax": ("brax", "from brax import envs as brax_envs", "brax_envs.get_environment({args})"),
    "playground": ("mujoco_playground", "from mujoco_playground import registry", "registry.load({args})"),
}
"""Per id prefix: the library's module, the import line(s), and the expression that makes
environment ``name`` (``{args}``: the name and the keywords)."""

DEFAULTS: dict[str, dict[str, Any]] = {"craftax": {"auto_reset": True}}
"""Keywords an id passes unless given: Craftax's ``auto_reset`` has no default."""


def _names(module: str, read: Callable[[Any], Any]) -> Callable[[], list[str]]:
    return lambda: list(read(importlib.import_module(module)))


REGISTRIES: dict[str, Callable[[], list[str]]] = {
    "gymnax": _names("gymnax", lambda m: m.registered_envs),
    "jumanji": _names("jumanji", lambda m: sorted(m.registered_environments())),
    "pgx": _names("pgx", lambda m: m.available_envs()),
    "craftax": _names("craftax.craftax_env", lambda m: (  # Craftax registers none: its four names
        "Craftax-Classic-Symbolic-v1", "Craftax-Symbolic-v1", "Craftax-Classic-Pixels-v1", "Craftax-Pixels-v1")),
    "jaxmarl": _names("jaxmarl.registration", lambda m: m.registered_envs),
    "navix": _names("navix", lambda m: m.registry()),
    "xminigrid": _names("xminigrid", lambda m: m.registered_environments()),
    "brax": _names("brax.envs", lambda m: sorted(m._envs)),  # brax has no public list of its names
    "playground": _names("mujoco_playground.registry", lambda m: m.ALL_ENVS),
}
"""Per id prefix: the names its library registers, in the library's order (the library
imported by the call: ModuleNotFoundError when it is missing)."""


def jax_ids(prefix: str) -> list[str]:
    """Every id ``prefix:name`` the library of ``prefix`` registers (what the glob
    ``"prefix:*"`` expands to). ModuleNotFoundError when the library is missing; ValueError
    for an unknown prefix. Law: the prefixes of :data:`REGISTRIES` are those of
    :data:`MAKERS`, so every listed id resolves by :func:`jax_maker`."""
    if prefix not in REGISTRIES:
        raise ValueError(f"prefix: {prefix!r} is not a JAX id prefix (one of {', '.join(REGISTRIES)})")
    return [f"{prefix}:{name}" for name in REGISTRIES[prefix]()]


def jax_maker(env_id: str, kwargs: dict[str, Any] | None = None) -> tuple[Any, str, tuple[str, ...]]:
    """``(make, construction, imports)`` of a JAX id with keywords ``kwargs``: ``make()``
    builds the environment by running exactly ``imports`` and ``construction`` (the lines a
    reproduction prints). The library is imported here: ModuleNotFoundError if it is
    missing; ValueError for an id of no known prefix."""
    prefix, _, name = env_id.partition(":")
    if prefix not in MAKERS or not name:
        raise ValueError(f"env: {env_id!r} is not a JAX id (prefix:name, prefix one of {', '.join(MAKERS)})")
    module, imports, expression = MAKERS[prefix]
    importlib.import_module(module)
    given = {**DEFAULTS.get(prefix, {}), **(kwargs or {})}
    text = ", ".join([repr(name), *(f"{k}={v!r}" for k, v in given.items())])
    construction = expression.format(args=text)

    def make() -> Any:
        scope: dict[str, Any] = {}
        exec(imports, scope)  # the snippet's own lines: what runs here is what it prints
        return eval(expression.format(args="_name, **_kwargs"), {**scope, "_name": name, "_kwargs": given})

    return make, f"env = {construction}", tuple(imports.splitlines())


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
