"""The registry of environment kinds: one :class:`~spacealg.testing.engine.runner.EnvKind`
per kind, in recognition order, that everything depending on a kind reads (``check``,
``checker_for`` and ``replay`` in :mod:`spacealg.testing.suite`, the properties of a report,
``spacealg check``'s spaces, the snippets through each error's kind).

The order is the recognition order: the first kind that ``claims`` the argument given to
``check`` (an id, a tuple), else the first that ``recognises`` the built instance, is the
environment's kind; the most specific kinds come first (a JAX protocol or a foreign API
before the PettingZoo ones, AEC before parallel, whose per-agent space methods AEC
environments have too, vector before Gymnasium), Gymnasium last, taking the rest. ``match``
is recognised by no instance: it is asked for by name.

A new kind is its module and one line below, or, from outside the package,
:func:`register`. Laws: :func:`kind_of` returns the first registered kind that recognises
an environment; :func:`register` then :func:`unregister` leaves the registry as it was.
"""

from __future__ import annotations

from typing import Any

from spacealg.testing.engine.runner import EnvKind
from spacealg.testing.kinds.aec import AEC
from spacealg.testing.kinds.dm_env import DM_ENV
from spacealg.testing.kinds.gymnasium import GYMNASIUM
from spacealg.testing.kinds.jax import JAX
from spacealg.testing.kinds.match import MATCH
from spacealg.testing.kinds.parallel import PARALLEL
from spacealg.testing.kinds.torchrl import TORCHRL
from spacealg.testing.kinds.vector import VECTOR

__all__ = ["KINDS", "claimant", "env_kind", "kind_named", "kind_of", "properties_of", "register", "unregister"]

KINDS: list[EnvKind] = [
    JAX,
    DM_ENV,
    TORCHRL,
    AEC,
    PARALLEL,
    VECTOR,
    MATCH,
    GYMNASIUM,
]
"""The kinds, in recognition order (the most specific first; Gymnasium takes the rest)."""


def register(kind: EnvKind) -> EnvKind:
    """Add ``kind`` ahead of the kinds registered so far (a new kind is the more specific
    one), replacing a kind of the same name; returns it."""
    if not isinstance(kind, EnvKind):
        raise TypeError(f"kind must be an EnvKind, got {type(kind).__qualname__}")
    unregister(kind.name)
    KINDS.insert(0, kind)
    return kind


def unregister(name: str) -> None:
    """Remove the kind called ``name`` (nothing if there is none)."""
    KINDS[:] = [k for k in KINDS if k.name != name]


def kind_named(name: str) -> EnvKind:
    """The kind called ``name``; a ValueError naming the kinds where there is none."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise ValueError(f"kind must be one of {', '.join(k.name for k in KINDS)}, got {name!r}")


def kind_of(env: Any) -> EnvKind:
    """The kind of an environment instance: the first kind that recognises it."""
    for kind in KINDS:
        if kind.recognises is not None and kind.recognises(env):
            return kind
    raise ValueError(f"no registered kind recognises {type(env).__qualname__}")


def claimant(env: Any) -> EnvKind | None:
    """The kind that claims the argument ``env`` given to ``check`` before anything is
    built (a JAX id, gymnax's ``(env, params)``), else None."""
    return next((kind for kind in KINDS if kind.claims is not None and kind.claims(env)), None)


def env_kind(env: Any) -> str:
    """The name of :func:`kind_of` ``env``: ``"aec"``, ``"parallel"``, ``"vector"``, ..."""
    return kind_of(env).name


def properties_of(kind: str) -> dict[str, str]:
    """The properties of the kind called ``kind``: name -> law."""
    return dict(kind_named(kind).properties)
