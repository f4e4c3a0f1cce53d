"""Arrays of other libraries, seen from the core: which backend an object belongs to, and
each generic function's implementation per backend.

The core knows no array library. A backend package (``spacealg.backends``) registers, when
it loads:

* the top-level package names of its array and generator types
  (:func:`register_array_root`), so that :func:`backend_name` recognises a torch tensor or
  a JAX key by its type's module, without importing torch or JAX;
* for each generic function it serves, its implementation (:func:`register_backend`),
  keyed by the function object (a protocol function, ``flatten_batch``, a codec method...);
* a loader per backend (:func:`register_backend_loader`), run the first time an
  implementation for that backend is asked for, which imports the modules whose load
  registers the implementations (so ``import spacealg`` loads none of them).

Laws: ``backend_name(x) is None`` for NumPy arrays and Python objects, whatever is
registered; ``backend_implementation(f, name) is g`` after ``register_backend(f, name, g)``;
a function with no implementation on a backend raises TypeError naming both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "backend_implementation",
    "backend_name",
    "register_array_root",
    "register_backend",
    "register_backend_loader",
]

#: The top-level package of an array or generator type -> the backend that serves it.
_ROOTS: dict[str, str] = {}
_ROOT_CACHE: dict[type, str | None] = {}
#: (generic function, backend) -> the implementation for that backend's arrays.
_IMPLEMENTATIONS: dict[tuple[Any, str], Callable[..., Any]] = {}
#: backend -> what imports its implementations (run once, then dropped).
_LOADERS: dict[str, Callable[[], None]] = {}


def register_array_root(root: str, backend: str) -> None:
    """Objects whose type lives in top-level package ``root`` belong to ``backend``."""
    _ROOTS[root] = backend
    _ROOT_CACHE.clear()


def register_backend(function: Any, backend: str, implementation: Callable[..., Any]) -> None:
    """``implementation`` answers ``function`` for arrays (or generators) of ``backend``; it
    is called with the arguments ``function`` was called with."""
    _IMPLEMENTATIONS[function, backend] = implementation


def register_backend_loader(backend: str, load: Callable[[], None]) -> None:
    """``load()`` registers ``backend``'s implementations; it runs at the first need."""
    _LOADERS[backend] = load


def backend_implementation(function: Any, backend: str) -> Callable[..., Any]:
    """The implementation of ``function`` registered for ``backend`` (loading the backend's
    implementations on first use). Raises TypeError when there is none."""
    try:
        return _IMPLEMENTATIONS[function, backend]
    except KeyError:
        load = _LOADERS.pop(backend, None)
        if load is not None:
            load()
            return backend_implementation(function, backend)
    name = getattr(function, "__name__", repr(function))
    raise TypeError(f"{name}: no implementation for {backend} arrays is registered")


def _root_backend(t: type) -> str | None:
    try:
        return _ROOT_CACHE[t]
    except KeyError:
        name = _ROOTS.get(t.__module__.partition(".")[0])
        _ROOT_CACHE[t] = name
        return name


def backend_name(obj: Any) -> str | None:
    """The registered backend (``"torch"``, ``"jax"``) of a tensor, JAX array, tracer or
    generator (or of a tuple/dict of them: its first leaf); None for anything else (NumPy
    and Python objects)."""
    while True:  # down to the first leaf; NumPy's arrays (the common case) answered first
        cls = type(obj)
        if cls is np.ndarray:
            return None
        name = _root_backend(cls)
        if name is not None:
            return name
        if isinstance(obj, dict):
            obj = next(iter(obj.values()), None)
        elif isinstance(obj, (tuple, list)):
            obj = obj[0] if obj else None
        else:
            return None
