"""Compiled programs shared by every check in a process that compiles the same program.

A check builds its rollouts (:class:`~.rollout.Rollouts`) from a fresh environment, so JAX's
own cache (keyed by the Python function) compiles them again for every check, even of the
same environment with the same options (a notebook checking twice, the CLI's text and JSON
runs, tests). :func:`compiled` keys an executable by what it computes instead: the traced
program (its jaxpr, as text), its constants' values, its arguments' abstract types and
pytree structure, and the backend and configuration it is lowered under; a program traced
again to the same key is not lowered nor compiled again.

Laws: ``compiled(f, *args)(*args)`` returns what ``f(*args)`` returns (``f`` a ``jax.jit``
function); two programs share an executable only where their keys are equal, and a key holds
everything that lowering reads (a Python function a jaxpr names by its address, a callback
say, is kept alive by its entry, so its address is not reused while the entry lives). The
cache follows :mod:`spacealg.core.cache`'s policy: by value, at most :data:`MAX_PROGRAMS`
entries, the oldest dropped first.
"""

from __future__ import annotations

import hashlib
from typing import Any

import jax
import numpy as np

from spacealg.core.cache import IdentityCache

__all__ = ["MAX_PROGRAMS", "compiled", "signature"]

MAX_PROGRAMS = 32
"""At most this many compiled programs are kept (a few rollouts of each of several envs)."""

_PROGRAMS: IdentityCache[tuple[Any, Any]] = IdentityCache("compiled JAX rollouts", max_entries=MAX_PROGRAMS,
                                                           by_value=True, weigh=lambda entry: 0)


def signature(args: tuple[Any, ...]) -> tuple[str, ...]:
    """The arguments' pytree structure and each leaf's abstract type (shape, dtype, weak
    type): what selects one compiled program of a ``jax.jit`` function."""
    leaves, structure = jax.tree.flatten(args)
    return (str(structure), *(str(jax.typeof(a)) for a in leaves))


def _constant(value: Any) -> tuple[Any, ...]:
    data = jax.random.key_data(value) if jax.dtypes.issubdtype(jax.typeof(value).dtype, jax.dtypes.prng_key) else value
    array = np.ascontiguousarray(np.asarray(data))
    return str(jax.typeof(value)), hashlib.sha256(array.tobytes()).hexdigest()


def _key(traced: Any) -> tuple[Any, ...]:
    closed = traced.jaxpr
    return (
        str(closed.jaxpr), tuple(_constant(c) for c in closed.consts), str(traced.in_tree), str(traced.in_avals),
        str(traced.out_tree), jax.default_backend(),
        *(str(getattr(jax.config, flag, None)) for flag in ("jax_default_matmul_precision", "jax_default_device")),
    )


def compiled(function: Any, *args: Any) -> Any:
    """The executable of the ``jax.jit`` function ``function`` for arguments like ``args``:
    one compiled earlier in this process for the same program (see the module), else a new
    one, kept."""
    traced = function.trace(*args)
    key = _key(traced)
    entry = _PROGRAMS.get(key)
    if entry is None:
        entry = _PROGRAMS.put(key, (traced.lower().compile(), traced.jaxpr))
    return entry[0]
