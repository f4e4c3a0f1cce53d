"""``clamp_`` of a container (a tuple, list or dict of parts, a dataclass), all or nothing.

Law: ``clamp_(x, s)`` either writes ``clamp(x, s)`` into ``x`` or raises and leaves ``x``
as it was: every part is clamped, into a copy, before any part of ``x`` is written (the
array backends' ``clamp_`` keeps the same law by clamping every leaf before writing one).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["write_through"]


def write_through(x: Any, clamp_in_place: Callable[[Any], Any]) -> Any:
    """``clamp_in_place(x)``, run on a deep copy of ``x`` and written back into ``x``; returns ``x``.

    Raises what ``clamp_in_place`` raises, and TypeError for a read-only array part (the
    copy would be writable), with ``x`` unchanged.
    """
    _require_writable(x)
    trial = copy.deepcopy(x)
    clamp_in_place(trial)
    _write_into(x, trial)
    return x


def _children(x: Any) -> list[tuple[Any, Any]]:
    if isinstance(x, dict):
        return list(x.items())
    if isinstance(x, (list, tuple)):
        return list(enumerate(x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [(f.name, getattr(x, f.name)) for f in dataclasses.fields(x)]
    return []


def _require_writable(x: Any) -> None:
    if isinstance(x, np.ndarray):
        if not x.flags.writeable:
            raise TypeError("clamp_: x must be a writable numpy array (a part of x is read-only)")
        return
    for _, child in _children(x):
        _require_writable(child)


def _write_into(target: Any, source: Any) -> None:
    """``source``'s values into ``target``, which it was copied from: arrays in place, other
    parts through their container (a frozen dataclass's fields, and a tuple's items, are
    never replaced: ``clamp_in_place`` refuses to change them)."""
    for (key, old), (_, new) in zip(_children(target), _children(source)):
        if old is new:
            continue
        if isinstance(old, np.ndarray) and isinstance(new, np.ndarray) and old.shape == new.shape:
            np.copyto(old, new, casting="unsafe")  # new has old's dtype: clamp_ kept it
        elif _children(old) and type(old) is type(new):
            _write_into(old, new)
        elif isinstance(target, (list, dict)):
            target[key] = new
        elif dataclasses.is_dataclass(target) and not _frozen(target):
            setattr(target, key, new)


def _frozen(instance: Any) -> bool:
    return bool(type(instance).__dataclass_params__.frozen)
