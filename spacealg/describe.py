"""``describe(space)``: the algebraic description of a space, as text.

The description lists, for the space and (for products) each component: the style with
its shapes, bounds, cardinality, element type and element size. Every entry is computed
by the protocol's generic functions, so it works for any registered space, Gymnasium's
included; an entry a space does not have reads ``—``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.core.generic import as_space
from spacealg.core.protocol import SpaceStyle, bounds, cardinality, elsize, eltype

__all__ = ["describe", "describe_fields"]


def _type_name(t: Any) -> str:
    if isinstance(t, type):
        return t.__module__ + "." + t.__qualname__ if t.__module__ not in ("builtins",) else t.__qualname__
    return str(t).replace("numpy.", "np.")


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.size and (value == value.flat[0]).all():
            return f"{value.flat[0].item()!r} (all {value.size})"
        with np.printoptions(threshold=8, edgeitems=2, linewidth=200):
            return np.array2string(value, separator=", ").replace("\n", "")
    if isinstance(value, tuple):
        return "(" + ", ".join(_short(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_short(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _attempt(function: Callable[[], Any], render: Callable[[Any], str] = _short) -> str:
    try:
        return render(function())
    except (TypeError, ValueError):
        return "—"


def _cardinality_text(n: Any) -> str:
    if n == math.inf:
        return "∞"
    return f"{n:,}" if n < 10**15 else f"about 10^{len(str(n)) - 1}"


def describe_fields(space: Any) -> dict[str, str]:
    """The description's entries, by name: space, style, bounds, cardinality, eltype, elsize."""
    converted = as_space(space)
    return {
        "space": repr(converted),
        "style": _attempt(lambda: SpaceStyle(converted), repr),
        "bounds": _attempt(lambda: bounds(converted)),
        "cardinality": _attempt(lambda: cardinality(converted), _cardinality_text),
        "eltype": _attempt(lambda: eltype(converted), _type_name),
        "elsize": _attempt(lambda: elsize(converted)),
    }


def describe(space: Any, title: str | None = None) -> str:
    """A multi-line text describing ``space`` (see the module docstring)."""
    fields = describe_fields(space)
    width = max(len(k) for k in fields)
    lines = [title] if title else []
    if title and not isinstance(space, type(as_space(space))):
        lines.append(f"  {'given':<{width}}  {space!r}")
    lines += [f"  {name:<{width}}  {value}" for name, value in fields.items()]
    return "\n".join(lines)
