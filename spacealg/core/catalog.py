"""The catalog of space classes that describe themselves: a document name, and examples.

A kind registers its class here, from its own module, and the operations above the core
serve it without a rule of their own for it:

* :mod:`spacealg.serialize` writes a catalogued space as ``{"kind": name, <argument>: value,
  ...}`` from its constructor arguments (``Space._constructor_args``, named by the
  constructor's signature) and reads such a node back by calling the class with them;
* :func:`spacealg.strategies.spaces` draws catalogued classes among its leaves through
  ``examples``: a function of a list of small ints (each ``0 <= k < 8``) returning a space
  (so the core needs no Hypothesis; the strategy draws the ints and shrinks them to zeros).

Laws: ``catalogued(name) is cls`` and ``name_of(cls) == name`` after
``register_space_class(cls, name)``; a name is taken once (ValueError on a second class);
``name_of`` of a subclass that did not register itself is None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Entry", "catalogued", "entries", "name_of", "register_space_class"]


@dataclass(frozen=True)
class Entry:
    """A catalogued class: ``name`` in documents; ``examples(ints)`` builds one of its spaces."""

    cls: type
    name: str
    examples: Callable[[Sequence[int]], Any] | None = None


_BY_NAME: dict[str, Entry] = {}
_BY_CLASS: dict[type, Entry] = {}


def register_space_class(cls: type, name: str, examples: Callable[[Sequence[int]], Any] | None = None) -> type:
    """Catalogue ``cls`` under ``name`` (see the module docstring); returns ``cls``."""
    known = _BY_NAME.get(name)
    if known is not None and known.cls is not cls:
        raise ValueError(f"register_space_class: the name {name!r} is taken by {known.cls.__qualname__}")
    _BY_NAME[name] = _BY_CLASS[cls] = Entry(cls, name, examples)
    return cls


def catalogued(name: str) -> type | None:
    """The class catalogued under ``name``, or None."""
    entry = _BY_NAME.get(name)
    return None if entry is None else entry.cls


def name_of(cls: type) -> str | None:
    """The document name of ``cls`` itself, or None: a subclass of a catalogued class is not
    catalogued (its document would read back as the base class, a different space)."""
    entry = _BY_CLASS.get(cls)
    return None if entry is None else entry.name


def entries() -> list[Entry]:
    """Every catalogued class, in registration order."""
    return list(_BY_NAME.values())
