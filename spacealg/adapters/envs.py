"""The declared spaces of dm_env, TorchRL, gymnax and Jumanji environments, by name.

:func:`foreign_spaces` is what ``spacealg describe`` asks before it reads Gymnasium's
``observation_space``/``action_space``: for an environment of one of those ecosystems it
returns ``(name, spec)`` pairs, each spec a space to every generic function through the
adapters; for any other object, None. A gymnax environment comes with its parameters: pass
the pair ``(env, params)`` that ``gymnax.make`` returns (a factory may return it too).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from spacealg.describe import describe

__all__ = [
    "DEFAULTS", "JAX_EXAMPLES", "JAX_PREFIXES", "MAKERS", "REGISTRIES", "describe_env", "foreign_spaces",
    "is_jax_id", "jax_ids", "jax_maker",
]


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


JAX_PREFIXES = tuple(MAKERS)
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
