"""Turning the ``env`` argument of the checkers into an environment, and back into source.

``env`` is an environment instance, a zero-argument factory (a class or a function), a
registered Gymnasium id (``"CartPole-v1"``) or a ``"module:factory"`` path. The
:class:`EnvSource` remembers how to rebuild it, for the reproduction snippet.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["EnvSource", "is_parallel_env", "resolve"]


@dataclass
class EnvSource:
    """An environment to check, how to name it, and how to build it again in a snippet."""

    make: Callable[[], Any]
    name: str
    construction: str
    imports: tuple[str, ...] = ()
    owned: bool = True  # whether the checker built it (and so closes it)


def _importable(obj: Any) -> tuple[str, str] | None:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname or module == "__main__":
        return None
    return module, qualname


def _factory_source(factory: Callable[[], Any], name: str | None = None) -> EnvSource:
    where = _importable(factory)
    label = name or getattr(factory, "__qualname__", repr(factory))
    if where is None:
        construction = f"env = {label}()  # the factory given to the checker"
        return EnvSource(factory, label, construction)  # type: ignore[arg-type]
    module, qualname = where
    head = qualname.split(".")[0]
    return EnvSource(factory, label, f"env = {qualname}()", (f"from {module} import {head}",))  # type: ignore[arg-type]


def _from_string(env_id: str) -> EnvSource:
    if ":" in env_id and not env_id.startswith(":"):
        module_name, _, attribute = env_id.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError):
            factory = None
        if callable(factory):
            return _factory_source(factory, env_id)

    def make() -> Any:
        import gymnasium

        return gymnasium.make(env_id, disable_env_checker=True)

    construction = f"env = gymnasium.make({env_id!r}, disable_env_checker=True)"
    return EnvSource(make, env_id, construction, ("import gymnasium",))


def is_parallel_env(env: Any) -> bool:
    """Whether ``env`` follows PettingZoo's parallel API: per-agent space methods (a
    Gymnasium env's spaces are not callable); ``possible_agents`` is optional there."""
    return callable(getattr(env, "action_space", None)) and callable(getattr(env, "observation_space", None))


def resolve(env: Any) -> EnvSource:
    """The :class:`EnvSource` for an instance, a factory, an id or a ``module:factory`` path."""
    if isinstance(env, EnvSource):
        return env
    if isinstance(env, str):
        return _from_string(env)
    if isinstance(env, type) or (callable(env) and not hasattr(env, "step")):
        return _factory_source(env)
    spec_id = getattr(getattr(env, "spec", None), "id", None)
    if spec_id is not None and type(env).__module__.startswith("gymnasium."):  # made by gymnasium.make
        return EnvSource(
            lambda: env,
            spec_id,
            f"env = gymnasium.make({spec_id!r})",
            ("import gymnasium",),
            owned=False,
        )
    cls = type(env)
    where = _importable(cls)
    name = cls.__qualname__
    if where is None:
        return EnvSource(
            lambda: env, name, f"env = ...  # the {name} instance given to the checker", owned=False
        )
    module, qualname = where
    return EnvSource(
        lambda: env,
        name,
        f"env = {qualname}()  # built like the instance given to the checker",
        (f"from {module} import {qualname.split('.')[0]}",),
        owned=False,
    )
