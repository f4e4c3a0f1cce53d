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

__all__ = ["EnvSource", "is_environment", "resolve"]


@dataclass
class EnvSource:
    """An environment to check, how to name it, and how to build it again in a snippet."""

    make: Callable[[], Any]
    name: str
    construction: str
    imports: tuple[str, ...] = ()
    owned: bool = True  # whether the checker built it (and so closes it)
    build: Callable[..., Any] | None = None  # make with keyword arguments (render_mode=...), if known


def _importable(obj: Any) -> tuple[str, str] | None:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname or module == "__main__":
        return None
    return module, qualname


def is_environment(obj: Any) -> bool:
    """Whether ``obj`` can be an environment at all, of whichever kind (the engine knows no
    kind): an instance of a class of its own, not a builtin value (None, ``object()``, a
    number, a string, a list, a dict, ...), or a tuple led by one (gymnax's ``(env,
    params)``). Which kind it is, the registry decides."""
    if isinstance(obj, tuple):
        return bool(obj) and is_environment(obj[0])
    return type(obj).__module__ != "builtins"


def _checked(factory: Callable[..., Any], label: str) -> Callable[..., Any]:
    """``factory``, raising a TypeError naming the ``env`` argument where it builds what is
    not an environment (None, say: a factory that forgot its ``return``)."""

    def make(**kwargs: Any) -> Any:
        built = factory(**kwargs)
        if not is_environment(built):
            raise TypeError(
                f"env: the factory {label} returned {built!r} (of type {type(built).__name__}), not an environment "
                "(an instance of an environment's class)"
            )
        return built

    return make


def _factory_source(factory: Callable[[], Any], name: str | None = None) -> EnvSource:
    where = _importable(factory)
    label = str(name or getattr(factory, "__qualname__", repr(factory)))
    factory = _checked(factory, label)
    if where is None:
        construction = f"env = ...  # built by {label}, the factory given to the checker"
        return EnvSource(factory, label, construction, build=factory)
    module, qualname = where
    head = qualname.split(".")[0]
    return EnvSource(factory, label, f"env = {qualname}()", (f"from {module} import {head}",), build=factory)


def _from_string(env_id: str) -> EnvSource:
    """``"package.module:attribute"`` (the snippet imports the module and calls the attribute
    through it, so closures made by helpers such as PettingZoo's ``parallel_wrapper_fn``
    reproduce too) or a registered Gymnasium id."""
    if ":" in env_id and not env_id.startswith(":"):
        module_name, _, attribute = env_id.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError):
            factory = None
        if callable(factory) and module_name.replace(".", "").replace("_", "").isalnum():
            factory = _checked(factory, env_id)
            return EnvSource(
                factory, env_id, f"env = {module_name}.{attribute}()", (f"import {module_name}",), build=factory
            )

    def make(**kwargs: Any) -> Any:
        import gymnasium

        return gymnasium.make(env_id, disable_env_checker=True, **kwargs)

    construction = f"env = gymnasium.make({env_id!r}, disable_env_checker=True)"
    return EnvSource(make, env_id, construction, ("import gymnasium",), build=make)


def resolve(env: Any) -> EnvSource:
    """The :class:`EnvSource` for an instance, a factory, an id or a ``module:factory`` path."""
    if isinstance(env, EnvSource):
        return env
    if isinstance(env, str):
        return _from_string(env)
    if isinstance(env, type) or (callable(env) and not hasattr(env, "step")):
        return _factory_source(env)
    if not is_environment(env):
        raise TypeError(
            f"env must be an environment, a zero-argument factory of one, a registered id or 'module:factory', "
            f"got {env!r} (of type {type(env).__name__})"
        )
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
