"""Generic functions: the one mechanism behind every protocol operation.

A :class:`GenericFunction` is a ``multipledispatch.Dispatcher`` that chooses its
implementation from the types of *some* of its positional arguments (the space,
usually), and passes the others through untouched. ``contains(x, space)`` dispatches on
``type(space)`` alone; ``issubspace(a, b)`` on both.

Every generic function is declared once, with its laws in its docstring, and falls back
to :func:`spacealg.core.generic.coerce`: an argument that is not a spacealg space is
turned into one by :func:`as_space` (plain Python objects, Gymnasium and Gym spaces)
and the call is dispatched again. An object that :func:`as_space` does not know raises a
TypeError naming the function and the object.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from multipledispatch import Dispatcher

__all__ = [
    "ADAPTER_MODULES",
    "AdapterUnavailableError",
    "GenericFunction",
    "NotASpaceError",
    "as_space",
    "delegate",
    "generic",
    "load_adapters_for",
]

#: The top-level package of a foreign space type -> the spacealg module whose import
#: registers the adapters for it. Adapters for optional packages are registered lazily:
#: the first time an object of such a package reaches ``as_space``, its adapter module is
#: imported (which registers its rules) and the call is dispatched again, so
#: ``import spacealg`` imports none of the optional packages.
ADAPTER_MODULES: dict[str, str] = {}

#: The signature of a generic function, for type checkers (see :class:`GenericFunction`).
F = TypeVar("F", bound=Callable[..., Any])
_Implementation = TypeVar("_Implementation", bound=Callable[..., Any])


def load_adapters_for(obj: Any) -> bool:
    """Import the adapter module registered for ``obj``'s package, once.

    Returns True when a module was imported by this call (so dispatch should be retried),
    False when there is none or it was already imported.
    """
    import importlib
    import sys

    root = type(obj).__module__.partition(".")[0]
    module = ADAPTER_MODULES.get(root)
    if module is None or module in sys.modules:
        return False
    try:
        importlib.import_module(module)
    except ImportError as error:
        extra = module.rpartition(".")[2]
        raise AdapterUnavailableError(
            f"spacealg cannot take {type(obj).__qualname__} objects: its adapter {module} failed to "
            f"import ({error}); install what it needs with pip install 'spacealg[{extra}]'"
        ) from error
    return True


class AdapterUnavailableError(ImportError):
    """The adapter for a foreign space's package failed to import (a missing dependency).
    Every protocol function raises it, ``contains`` too: a space whose adapter cannot load
    is never answered False."""


class NotASpaceError(TypeError):
    """An argument in a space position is not a space (raised by :func:`as_space`)."""


Guard = Callable[[Exception, tuple[Any, ...]], Any]


class GenericFunction(Dispatcher, Generic[F]):
    """A multipledispatch generic function that dispatches on chosen argument positions.

    ``register(*types)`` takes one type per dispatch position; the implementation is then
    called with all the original arguments.

    Typing: ``GenericFunction[F]`` is called with the signature ``F`` of its declaration
    (:func:`generic` infers it; ``spacealg/core/protocol.pyi`` spells out the protocol's
    overloads), so type checkers see real parameters and results while the object stays a
    multipledispatch ``Dispatcher`` at run time, with its registration API.
    """

    if TYPE_CHECKING:
        __call__: F  # the declaration's signature (the runtime method is below)

    def __init__(
        self, declaration: Callable[..., Any], positions: tuple[int, ...], guard: Guard | None = None
    ) -> None:
        super().__init__(declaration.__name__, doc=declaration.__doc__)
        self.positions = positions
        self.guard = guard
        functools.update_wrapper(self, declaration, updated=())  # type: ignore[arg-type]
        self.__module__ = declaration.__module__

    def _dispatch_call(self, *args: Any, **kwargs: Any) -> Any:
        try:
            types = tuple([type(args[p]) for p in self.positions])
        except IndexError:
            raise TypeError(
                f"{self.name}() takes the dispatched argument(s) at position(s) "
                f"{self.positions} positionally; got {len(args)} positional argument(s)"
            ) from None
        try:
            implementation = self._cache[types]
        except KeyError:
            implementation = self.dispatch(*types)
            if implementation is None:
                raise TypeError(f"{self.name}: no implementation for {types}") from None
            self._cache[types] = implementation
        if self.guard is None:
            return implementation(*args, **kwargs)
        try:
            return implementation(*args, **kwargs)
        except NotASpaceError:
            raise
        except Exception as error:  # one rule for every implementation, user's included
            return self.guard(error, args)

    if not TYPE_CHECKING:
        __call__ = _dispatch_call

    def register(self, *types: Any, **kwargs: Any) -> Callable[[_Implementation], _Implementation]:
        """Decorator: register the decorated function for ``types`` (one per dispatch
        position) and return it unchanged (multipledispatch's ``register``, typed)."""
        decorate: Callable[[_Implementation], _Implementation] = super().register(*types, **kwargs)
        return decorate

    def implementation_for(self, *types: type) -> Callable[..., Any]:
        """The function that a call with arguments of these types runs (cached lookup)."""
        try:
            return self._cache[types]
        except KeyError:
            found = self.dispatch(*types)
            self._cache[types] = found
            return found

    def __repr__(self) -> str:
        return f"<generic function {self.name}>"

    def __reduce__(self) -> str:
        return self.name


def generic(*positions: int, guard: Guard | None = None) -> Callable[[F], GenericFunction[F]]:
    """Declare a generic function dispatching on ``positions`` (default: the first argument).

    The decorated function is the declaration: its signature and docstring document the
    generic function, and its body is the fallback for arguments of unregistered types
    (registered for ``object`` in every dispatch position). ``guard(error, args)``, if
    given, answers for any exception an implementation raises (except
    :class:`NotASpaceError`): how a function that promises never to raise (``contains``)
    keeps that promise for every registered type at once.
    """
    positions = positions or (0,)

    def declare(declaration: F) -> GenericFunction[F]:
        function: GenericFunction[F] = GenericFunction(declaration, positions, guard)
        function.add(tuple(object for _ in positions), declaration)
        return function

    return declare


def delegate(cls: type, part: Callable[[Any], Any], *functions: GenericFunction[Any]) -> None:
    """Register each of ``functions`` (taking one space) for ``cls`` as the function of a
    part of the space: law, ``f(space) == f(part(space))`` for a space of class ``cls``."""
    for function in functions:
        function.register(cls)(lambda space, f=function: f(part(space)))


@generic(0)
def as_space(obj: Any) -> Any:
    """The spacealg space that ``obj`` stands for.

    Laws: ``as_space(s) is s`` for a spacealg space and for any object whose type has a
    ``contains`` implementation of its own (a user's registered space); ``as_space`` is
    idempotent; ``contains(x, obj) == contains(x, as_space(obj))`` for every registered
    plain object. Registered for tuples, lists, sets, frozensets (finite sets of their
    items), ``range``, dicts (named products), the types ``bool``, ``float`` and numpy
    scalar types, and Gymnasium/Gym spaces. Raises TypeError for anything else.
    """
    from spacealg.core.protocol import contains

    if contains.implementation_for(type(obj)) is not contains.implementation_for(object):
        return obj
    if load_adapters_for(obj):
        return as_space(obj)
    raise NotASpaceError(
        f"{obj!r} (of type {type(obj).__qualname__}) is not a space: spacealg knows "
        "tuples, lists, sets, ranges, dicts of spaces, bool/float/numpy scalar types, "
        "spacealg spaces and Gymnasium/Gym spaces; register others with "
        "spacealg.contains.register(YourType) (and the rest of the protocol)"
    )


def coerce(function: GenericFunction[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Re-dispatch ``function`` after converting its dispatched arguments with as_space.

    The shared fallback body of every protocol function. Raises TypeError when no
    dispatched argument changes (the object is not a space).
    """
    for p in function.positions:
        if load_adapters_for(args[p]):  # the adapter just loaded may register a rule of its own
            return function(*args, **kwargs)
    converted = list(args)
    changed = False
    for p in function.positions:
        space = as_space(args[p])
        if space is not args[p]:
            converted[p] = space
            changed = True
    if not changed:
        raise NotASpaceError(
            f"{function.name}: no implementation for "
            + ", ".join(type(args[p]).__qualname__ for p in function.positions)
            + f"; register one with spacealg.{function.name}.register(...)"
        )
    return function(*converted, **kwargs)
