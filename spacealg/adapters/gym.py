"""Adapters for the legacy ``gym`` package (0.26): ``from_gym`` and ``to_gym``.

The rules are Gymnasium's (see :mod:`spacealg.adapters.gymnasium`), less what Gym 0.26
lacks: it has no ``OneOf``, no ``Sequence(stack=True)``, no dtype for ``Discrete`` and no
``start`` for ``MultiDiscrete``, and its ``Graph`` takes only Box/Discrete features; a
spacealg space needing one of those raises a TypeError naming it. Law:
``to_gym(from_gym(g)) == g`` for every Gym space, and Gym ↔ Gymnasium through spacealg:
``to_gymnasium(from_gym(g))`` is the Gymnasium twin of ``g``.

One Gym bug bends the membership law: Gym stores an infinite end of an integer Box as the
dtype's limit moved in by 2 and compares with it in ``contains``, while ``bounded_below``/
``bounded_above`` say the end is infinite (and ``sample`` goes past it, wrapping around at
the dtype's limit). ``from_gym`` follows the flags, as Gymnasium 1.x does: the entry ranges
up to the dtype's limit, so the two or so values beyond Gym's stored end are members of
``from_gym(g)`` that ``g.contains`` rejects.

``import spacealg`` never imports Gym. The rules (Gymnasium's table in
:mod:`spacealg.adapters.gymnasium`, registered for Gym's classes by
:mod:`spacealg.adapters.gym_rules`, with the protocol on Gym instances: ``as_space``,
``contains``, ``isin``, ``sample``, ``eltype``, ``clamp``) are registered lazily, through
:data:`spacealg.core.generic.ADAPTER_MODULES`, the first time a Gym space reaches spacealg
or ``to_gym`` is called; Gym's import-time deprecation notice is silenced. Without Gym,
``from_gym``/``to_gym`` raise TypeError.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import warnings
from typing import Any

from spacealg.core.generic import ADAPTER_MODULES, as_space, generic, load_adapters_for

__all__ = ["from_gym", "import_gym", "to_gym"]  # also GYM_AVAILABLE, gym_spaces (lazy)

RULES = "spacealg.adapters.gym_rules"
ADAPTER_MODULES["gym"] = RULES


def import_gym() -> Any:
    """``gym.spaces`` (imported quietly), or None when Gym is missing or broken."""
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            import gym.spaces

            return gym.spaces
    except Exception:  # gym missing, or broken under this numpy
        return None


def __getattr__(name: str) -> Any:  # GYM_AVAILABLE and gym_spaces import Gym on first use
    if name == "gym_spaces":
        return import_gym()
    if name == "GYM_AVAILABLE":
        return import_gym() is not None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load_rules() -> bool:
    """Registers the Gym rules (importing Gym); False when Gym is not available."""
    if import_gym() is None:
        return False
    importlib.import_module(RULES)
    return True


@generic(0)
def from_gym(space: Any) -> Any:
    """The spacealg space equal to the Gym (0.26) space ``space``; law: ``to_gym(from_gym(g)) == g``.

    Raises TypeError for anything that is not a Gym space (and for every argument when
    ``gym`` is not installed).
    """
    if load_adapters_for(space):
        return from_gym(space)
    raise TypeError(
        f"from_gym: {space!r} (of type {type(space).__qualname__}) is not a Gym space"
        + ("" if import_gym() is not None else " (the gym package is not installed)")
    )


@generic(0)
def to_gym(space: Any) -> Any:
    """The Gym (0.26) space equal to ``space`` (with :func:`spacealg.encode`'s encoding).

    Raises TypeError naming the space if Gym has no equivalent, or if ``gym`` is missing.
    """
    import sys

    if RULES not in sys.modules:
        if not _load_rules():
            raise TypeError("to_gym: the gym package is not installed (pip install 'spacealg[gym]')")
        return to_gym(space)
    converted = as_space(space)
    if converted is space:
        raise TypeError(
            f"to_gym: {space!r} has no Gym equivalent; register one with "
            f"@spacealg.to_gym.register({type(space).__qualname__})"
        )
    return to_gym(converted)
