"""spacealg's environments in PufferLib's own ``pufferlib.vector`` (Serial, Multiprocessing).

PufferLib's vectorisation accepts an environment only if it ``isinstance``-checks as one of
PufferLib's classes (``pufferlib.PufferEnv``, ``pufferlib.emulation.GymnasiumPufferEnv``,
``pufferlib.emulation.PettingZooPufferEnv``), which spacealg's classes are not. Everything else
it uses — ``num_agents``, ``single_*`` spaces, ``emulated``, ``done``, ``reset``/``step``,
buffers passed as ``buf=`` (native) or assigned to ``env.buf`` (emulated) — spacealg's
environments already have. :func:`as_pufferlib` therefore only re-labels an environment: its
class becomes a subclass of its own class *and* of the matching PufferLib class, with its own
class first, so every attribute and method is still spacealg's::

    import pufferlib.vector
    from spacealg.vector import for_pufferlib

    vecenv = pufferlib.vector.make(for_pufferlib(make_env), num_envs=4,
                                   backend=pufferlib.vector.Multiprocessing, num_workers=2)

The two PufferLib generations hand buffers and seeds over differently: PufferLib 2.0 assigns
``env.buf`` after constructing an emulated environment and passes ``buf=`` to native ones;
PufferLib 3.0 calls every creator with ``buf=`` and ``seed=``. :func:`for_pufferlib` passes
each to the creator when it takes it, and otherwise applies it after construction (an
emulated environment's ``env.buf = buf`` and ``env.seed(seed)``, which seeds its first
reset; a native environment gets its seed from ``reset``).

Tested with PufferLib 2.0.2 (``benchmarks/setup_pufferlib.sh`` builds a virtual environment
for it) and PufferLib 3.0.0 (built from its source distribution, see docs/vector.md), whose
classes live in ``pufferlib.pufferlib``, where :func:`as_pufferlib` looks as well.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from spacealg.vector.gymnasium_view import puffer_env_flavour

__all__ = ["as_pufferlib", "for_pufferlib"]

_CLASS_NAMES = {"native": "PufferEnv", "gymnasium": "GymnasiumPufferEnv", "pettingzoo": "PettingZooPufferEnv"}


def _pufferlib_class(flavour: str) -> type:
    """PufferLib's class for ``flavour``, from PufferLib 2 (``pufferlib``, ``pufferlib.emulation``)
    or PufferLib 3 (``pufferlib.pufferlib``)."""
    import importlib

    name = _CLASS_NAMES[flavour]
    modules = ["pufferlib", "pufferlib.emulation", "pufferlib.environment", "pufferlib.pufferlib"]
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        cls = getattr(module, name, None)
        if isinstance(cls, type):
            return cls
    raise ImportError(
        f"as_pufferlib needs PufferLib (bash benchmarks/setup_pufferlib.sh); no class {name} in {modules}"
    )


def _one_seed_reset(cls: type) -> Callable[..., Any]:
    """``cls.reset`` taking PufferLib 2's list of seeds too: its Multiprocessing backend passes a
    worker's seeds as a list, and a native environment takes one seed (agent ``i`` gets
    ``seed + i``), so a list gives its first entry (None for an empty list)."""

    def reset(self: Any, seed: Any = None, *args: Any, **kwargs: Any) -> Any:
        if isinstance(seed, (list, tuple)):
            seed = seed[0] if seed else None
        return cls.reset(self, seed, *args, **kwargs)  # type: ignore[attr-defined]

    return reset


_RELABELLED: dict[tuple[type, type], type] = {}


def _relabelled(cls: type, base: type, flavour: str) -> type:
    """The class deriving from ``cls`` then ``base`` (one per pair, so instances share it)."""
    if (cls, base) in _RELABELLED:
        return _RELABELLED[cls, base]
    namespace: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    if flavour == "native":
        namespace["reset"] = _one_seed_reset(cls)
    relabelled = type(cls.__name__, (cls, base), namespace)
    _RELABELLED[cls, base] = relabelled
    return relabelled


def as_pufferlib(env: Any) -> Any:
    """``env`` itself, now also an instance of the matching PufferLib class (see the module).

    Laws: ``as_pufferlib(env) is env``; its class derives from its former class first, so
    attribute lookups and behaviour are unchanged — except that a native environment's
    ``reset`` also takes the list of seeds PufferLib 2's Multiprocessing passes (its first
    entry is the seed); environments that already are PufferLib's are returned untouched.
    TypeError for an object that is not a PufferLib-style environment.
    """
    flavour = puffer_env_flavour(env)
    base = _pufferlib_class(flavour)
    if not isinstance(env, base):
        env.__class__ = _relabelled(type(env), base, flavour)
    return env


def _accepts(creator: Callable[..., Any], name: str) -> bool:
    """Whether ``creator`` takes the keyword argument ``name`` (or any keyword)."""
    try:
        parameters = inspect.signature(creator).parameters.values()
    except (TypeError, ValueError):  # no signature to read: pass everything, as PufferLib does
        return True
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _make_and_relabel(creator: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    late = {name: kwargs.pop(name) for name in ("buf", "seed") if name in kwargs and not _accepts(creator, name)}
    env = creator(*args, **kwargs)
    flavour = puffer_env_flavour(env)
    if late.get("buf") is not None:
        if flavour == "native":
            raise TypeError(
                f"PufferLib passes buf= (its shared buffers) to the creator, but {creator!r} takes no buf "
                "argument: a native PufferEnv's creator must pass buf on to PufferEnv.__init__"
            )
        env.buf = late["buf"]
    if late.get("seed") is not None and flavour != "native":
        env.seed(late["seed"])  # the seed of the first reset, as PufferLib 3's constructors take it
    return as_pufferlib(env)


def for_pufferlib(creator: Callable[..., Any]) -> Callable[..., Any]:
    """An environment creator for ``pufferlib.vector.make``: ``creator``'s environments, relabelled.

    Arguments go to ``creator`` unchanged, ``buf=`` and ``seed=`` (which PufferLib passes) only
    where ``creator`` takes them; otherwise they are applied after construction (see the
    module docstring). The result is picklable when ``creator`` is, as Multiprocessing needs.
    """
    if not callable(creator):
        raise TypeError(f"creator must be callable, got {creator!r}")
    return functools.partial(_make_and_relabel, creator)
