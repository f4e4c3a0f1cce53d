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

Batched rules of a kind, written once. A space kind may answer a batched operation itself
on every backend, NumPy included, with one rule written over an array namespace
(:func:`register_kind_rule`, keyed by the operation's *name*, so that a kind registers
rules for operations declared above it, ``"flatten_batch"`` say). The rule is called as
``rule(ns, *args, **kwargs)`` where ``ns`` is the :class:`Namespace` of the batch's (or the
generator's) backend: ``ns.xp`` is its array-API namespace, ``ns.dtype`` maps a NumPy dtype
to the backend's, ``ns.constant`` puts a NumPy array where the batch lives and
``ns.below(widths, shape)`` draws integers ``0 <= k < widths`` and ``ns.uniform(shape)``
floats in ``[0, 1)`` from the call's generator, and ``ns.child()`` is the ``rng`` for a draw
of another space within the rule.
The routed protocol functions (``isin``, ``sample``, ``clamp``, ``clamp_``) and the batch
functions above the core consult :func:`kind_rule` before the backends' per-leaf plans.
Law: after ``register_kind_rule(name, cls, rule)``, a call of operation ``name`` on a
space of class ``cls`` (or a subclass) with torch or JAX data returns
``rule(namespace_for(backend, probe), *args, **kwargs)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "Namespace",
    "backend_implementation",
    "backend_name",
    "kind_rule",
    "namespace_for",
    "numpy_namespace",
    "register_array_root",
    "register_backend",
    "register_backend_loader",
    "register_kind_rule",
    "register_namespace",
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


# -- batched rules of a kind, written once over an array namespace ---------------------------


class Namespace:
    """What a kind's batched rule needs of one backend (see the module docstring).

    ``name``: None for NumPy, else the backend's name; ``xp``: the array-API namespace;
    ``device``: where the probe lives (None for NumPy). Subclasses (one per backend,
    registered by the backend package) override :meth:`dtype`, :meth:`constant`,
    :meth:`below` and :meth:`uniform`.
    """

    name: str | None = None

    def __init__(self, xp: Any, device: Any = None, rng: Any = None) -> None:
        self.xp, self.device, self.rng = xp, device, rng

    def dtype(self, dtype: Any) -> Any:
        """The backend's dtype for NumPy ``dtype``."""
        return np.dtype(dtype)

    def constant(self, array: Any, dtype: Any = None) -> Any:
        """A backend array of ``array``'s values (NumPy ``dtype``, or its own) on :attr:`device`."""
        return np.asarray(array, dtype=dtype)

    def below(self, widths: Any, shape: tuple[int, ...]) -> Any:
        """int64 integers ``0 <= k < widths`` (broadcast to ``shape``) from :attr:`rng`."""
        return self._generator().integers(0, np.asarray(widths, dtype=np.int64), size=shape, dtype=np.int64)

    def uniform(self, shape: tuple[int, ...]) -> Any:
        """Floats uniform on ``[0, 1)`` of ``shape``, in the widest float dtype, from :attr:`rng`."""
        return self._generator().random(shape)

    def child(self) -> Any:
        """The ``rng`` a sub-draw takes (``sample`` of a part): the call's own generator, whose
        state advances (NumPy's, torch's); a backend whose keys do not advance gives a fresh one."""
        return self.rng

    def _generator(self) -> np.random.Generator:
        return self.rng if isinstance(self.rng, np.random.Generator) else np.random.default_rng(self.rng)


def numpy_namespace(rng: Any = None) -> Namespace:
    """NumPy's :class:`Namespace` (``rng``: a ``numpy.random.Generator`` for :meth:`~Namespace.below`)."""
    return Namespace(np, None, rng)


#: backend -> its Namespace class, called with (probe, rng); registered by the backend package
_NAMESPACES: dict[str, Callable[[Any, Any], Namespace]] = {}
#: (operation name, space class) -> the kind's rule
_KIND_RULES: dict[tuple[str, type], Callable[..., Any]] = {}


def register_namespace(backend: str, make: Callable[[Any, Any], Namespace]) -> None:
    """``make(probe, rng)`` builds ``backend``'s :class:`Namespace` for a call whose batch (or
    generator) is ``probe`` and whose generator is ``rng`` (None for a batch operation)."""
    _NAMESPACES[backend] = make


def namespace_for(backend: str | None, probe: Any, rng: Any = None) -> Namespace:
    """The :class:`Namespace` for a call on ``backend``'s data (None: NumPy's). Raises
    TypeError when the backend registered none."""
    if backend is None:
        return numpy_namespace(rng)
    make = _NAMESPACES.get(backend)
    if make is None:
        load = _LOADERS.pop(backend, None)
        if load is not None:
            load()
            return namespace_for(backend, probe, rng)
        raise TypeError(f"no array namespace for {backend} arrays is registered")
    return make(probe, rng)


def register_kind_rule(operation: str, cls: type, rule: Callable[..., Any]) -> None:
    """``rule(ns, *args, **kwargs)`` answers operation ``operation`` (``"isin"``, ``"sample"``,
    ``"clamp"``, ``"clamp_"``, ``"flatten_batch"``, ``"unflatten_batch"``) for spaces of class
    ``cls`` on every backend."""
    _KIND_RULES[operation, cls] = rule
    _FOUND.clear()


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
