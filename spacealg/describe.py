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
from spacealg.core.leaf import all_equal
from spacealg.core.protocol import SpaceStyle, bounds, cardinality, elsize, eltype

__all__ = ["describe", "describe_fields"]


def _type_name(t: Any) -> str:
    if isinstance(t, type):
        return t.__module__ + "." + t.__qualname__ if t.__module__ not in ("builtins",) else t.__qualname__
    return str(t).replace("numpy.", "np.")


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.size and all_equal(value):
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


def _log10(n: int) -> float:
    """log10 of a positive int of any size (``math.log10`` of the leading 64 bits)."""
    shift = max(0, n.bit_length() - 64)
    return math.log10(n >> shift) + shift * math.log10(2)


def _scientific(n: int) -> str:
    """``1.16 × 10^66585``: three significant digits of an int of any size."""
    exponent = math.floor(_log10(n))
    mantissa = round(10 ** (_log10(n) - exponent), 2)
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2f} × 10^{exponent}"


def _root(n: int, m: int) -> int | None:
    """The int ``k`` with ``k ** m == n``, if there is one."""
    guess = round(10 ** (_log10(n) / m))
    return next((k for k in (guess - 1, guess, guess + 1) if k > 1 and k**m == n), None)


def _power(n: int, entries: int | None) -> str | None:
    """``n`` as ``k^m``: ``m`` the number of entries of an array space (``256^27648`` for a
    96×96×3 uint8 image), or else a power of two (``2^64``)."""
    if entries is not None and entries > 1:
        k = _root(n, entries)
        if k is not None:
            return f"{k}^{entries}"
    if n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return None


def _cardinality_text(n: Any, shape: Any = None) -> str:
    """Exact below 10^15 (``1,024``); above, a power where the number is one and the
    scientific form (``256^27648 ≈ 1.16 × 10^66585``), never digits beyond Python's
    int-to-str limit."""
    if n == math.inf:
        return "∞"
    if n < 10**15:
        return f"{n:,}"
    entries = math.prod(shape) if isinstance(shape, tuple) and all(isinstance(d, int) for d in shape) else None
    power = _power(int(n), entries)
    return f"{power} ≈ {_scientific(int(n))}" if power else f"≈ {_scientific(int(n))}"


def _shape(space: Any) -> Any:
    try:
        return elsize(space)
    except (TypeError, ValueError):
        return None


def describe_fields(space: Any) -> dict[str, str]:
    """The description's entries, by name: space, style, bounds, cardinality, eltype, elsize."""
    converted = as_space(space)
    return {
        "space": repr(converted),
        "style": _attempt(lambda: SpaceStyle(converted), repr),
        "bounds": _attempt(lambda: bounds(converted)),
        "cardinality": _attempt(lambda: _cardinality_text(cardinality(converted), _shape(converted)), str),
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
