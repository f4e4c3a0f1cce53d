"""Functions the core declares and the spaces define: how the ground floor reaches a space
kind without importing the package above it.

``Space``'s operators build products, arrays and unions, and ``sample(..., mask=...)``
draws from masked spaces; those kinds live in :mod:`spacealg.spaces`, which imports the
core. So the core holds a :class:`Hook` for each, and the module defining the kind fills
it when it loads (``spacealg.spaces.product`` fills :data:`product`, and so on).

Law: after ``hook.define(f)``, ``hook(*args, **kwargs) == f(*args, **kwargs)``; calling a
hook that no module has defined raises RuntimeError naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Hook", "array_of", "difference", "one_of", "product", "sample_with_mask", "union"]

_F = TypeVar("_F", bound=Callable[..., Any])


class Hook:
    """A function declared here and defined by a module above the core at import."""

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc
        self.implementation: Callable[..., Any] | None = None

    def define(self, implementation: _F) -> _F:
        """Make ``implementation`` the hook's body; returns it (usable as a decorator)."""
        self.implementation = implementation
        return implementation

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        implementation = self.implementation
        if implementation is None:
            raise RuntimeError(f"{self.name}: no module defined this hook (import spacealg first)")
        return implementation(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<hook {self.name}>"


product = Hook("product", "``product(*spaces)``: ``a * b`` (defined by spacealg.spaces.product).")
array_of = Hook("array_of", "``array_of(space, *dims)``: ``a ** n`` (defined by spacealg.spaces.array).")
one_of = Hook("one_of", "``one_of(*spaces)``: ``a + b`` (defined by spacealg.spaces.oneof).")
union = Hook("union", "``union(*spaces)``: ``a | b`` (defined by spacealg.spaces.union).")
difference = Hook("difference", "``difference(a, b)``: ``a - b`` (defined by spacealg.spaces.difference).")
sample_with_mask = Hook(
    "sample_with_mask",
    "``sample_with_mask(space, size, mask, probability, rng=rng)``: ``sample`` with ``mask=`` or "
    "``probability=`` (defined by spacealg.spaces.masked; backends register theirs for the same hook).",
)
