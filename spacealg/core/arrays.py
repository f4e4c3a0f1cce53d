"""Arrays of other libraries, seen from the core: which backend an object belongs to, and
each generic function's implementation per backend.

The core knows no array library. A backend package (``spacealg.backends``) registers, when
it loads:

* the top-level package names of its array and generator types
  (:func:`register_array_root`), so that :func:`backend_name` recognises a torch tensor or
  a JAX key by its type's module, without importing torch or JAX;
* each function's implementation (:func:`register_backend`, keyed by the function object:
  the protocol's ``isin``, ``sample``, ``clamp``, ``clamp_`` and ``flatten_batch``/``unflatten_batch``
  for a space whose kind has no rule of its own, which :func:`spacealg.core.plan.route` falls
  back to; a codec method...);
* a loader per backend (:func:`register_backend_loader`), run the first time an
  implementation for that backend is asked for, which imports the modules whose load
  registers the implementations (so ``import spacealg`` loads none of them).

Laws: ``backend_name(x) is None`` for NumPy arrays and Python objects, whatever is
registered; ``backend_implementation(f, name) is g`` after ``register_backend(f, name, g)``;
a function with no implementation on a backend raises TypeError naming both.

Batched rules of a kind, written once. A space kind may answer a batched operation itself
on every backend, NumPy included, with one rule written over a kernel
(:func:`register_kind_rule`, keyed by the operation's *name*, so that a kind registers
rules for operations declared above it, ``"flatten_batch"`` say). The rule is called as
``rule(k, *args, **kwargs)`` where ``k`` is the :class:`~spacealg.core.kernel.Kernel` of the
batch's (or the generator's) backend (:func:`spacealg.core.kernel.kernel_for`); a NumPy
entry registered with it takes NumPy's calls as they come.
Law: after ``register_kind_rule(name, cls, rule, numpy)``, a call of operation ``name`` on a
space of class ``cls`` (or a subclass) with torch or JAX data returns
``rule(kernel_for(backend, probe), *args, **kwargs)``, and with NumPy or Python data
``numpy(*args, **kwargs)`` (without an entry: the class's own implementation of the
protocol function where it has one, else ``rule`` over NumPy's kernel).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "backend_implementation",
    "backend_name",
    "first_leaf",
    "kind_rule",
    "load_backend",
    "numpy_entry",
    "on_kind_rule",
    "register_array_root",
    "register_backend",
    "register_backend_loader",
    "register_kind_rule",
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
        if backend in _LOADERS:
            load_backend(backend)
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


def first_leaf(batch: Any) -> Any:
    """The first leaf of a batch (tuples, lists and dicts of arrays, nested), depth first; None
    for an empty tuple, list or dict on the way. The one walk down to a batch's first array:
    :func:`backend_name` reads its backend, a backend's kernel its device."""
    while isinstance(batch, (tuple, list, dict)):
        if not batch:
            return None
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    return batch


def backend_name(obj: Any) -> str | None:
    """The registered backend (``"torch"``, ``"jax"``) of a tensor, JAX array, tracer or
    generator (or of a tuple/list/dict of them: its :func:`first_leaf`'s); None for anything
    else (NumPy and Python objects)."""
    cls = type(obj)
    if cls is np.ndarray:  # NumPy's arrays (the common case) answered first
        return None
    name = _root_backend(cls)
    if name is None and isinstance(obj, (tuple, list, dict)):
        return _root_backend(type(first_leaf(obj)))
    return name


# -- batched rules of a kind, written once over a kernel ---------------------------------------


def load_backend(backend: str) -> None:
    """Runs ``backend``'s loader if it has not run yet (what registers its implementations and kernel)."""
    load = _LOADERS.pop(backend, None)
    if load is not None:
        load()


#: (operation name, space class) -> the kind's rule
_KIND_RULES: dict[tuple[str, type], Callable[..., Any]] = {}
#: (operation name, space class) -> the kind's NumPy entry (the call's own arguments)
_NUMPY_ENTRIES: dict[tuple[str, type], Callable[..., Any]] = {}


def register_kind_rule(operation: str, cls: type, rule: Callable[..., Any],
                       numpy: Callable[..., Any] | None = None) -> None:
    """``rule(k, *args, **kwargs)`` answers operation ``operation`` (``"isin"``, ``"sample"``,
    ``"clamp"``, ``"clamp_"``, ``"flatten_batch"``, ``"unflatten_batch"``) for spaces of class
    ``cls`` on every backend; ``numpy(*args, **kwargs)``, where given, answers a call on NumPy
    and Python data itself (what NumPy takes that no kernel sees: lists, numbers, seeds; a
    fast path). Routes chosen before for spaces of class ``cls`` are chosen again (:func:`on_kind_rule`)."""
    _KIND_RULES[operation, cls] = rule
    if numpy is not None:
        _NUMPY_ENTRIES[operation, cls] = numpy
    _FOUND.clear()
    for changed in _LISTENERS:
        changed(cls)


#: what runs when a kind rule is registered (the plans of its class forget the routes they chose)
_LISTENERS: list[Callable[[type], None]] = []


def on_kind_rule(changed: Callable[[type], None]) -> None:
    """``changed(cls)`` runs whenever :func:`register_kind_rule` registers a rule for class ``cls``."""
    _LISTENERS.append(changed)


#: (operation, class) -> the rule found for it by the MRO walk (one lookup per call)
_FOUND: dict[tuple[str, type], Callable[..., Any] | None] = {}


def kind_rule(operation: str, cls: type) -> Callable[..., Any] | None:
    """The rule registered for ``operation`` on ``cls`` or its nearest base class; None if none."""
    try:
        return _FOUND[operation, cls]
    except KeyError:
        found = next((r for b in cls.__mro__ if (r := _KIND_RULES.get((operation, b))) is not None), None)
        _FOUND[operation, cls] = found
        return found


def numpy_entry(operation: str, cls: type) -> tuple[Callable[..., Any], type] | None:
    """The NumPy entry registered with the rule of ``operation`` on ``cls`` or its nearest base
    class, and that class; None if none."""
    home = next((b for b in cls.__mro__ if (operation, b) in _NUMPY_ENTRIES), None)
    return None if home is None else (_NUMPY_ENTRIES[operation, home], home)
