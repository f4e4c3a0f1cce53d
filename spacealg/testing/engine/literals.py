"""Literals: Python source for a value (numpy as np), for the checker's messages and snippets.

Law: ``eval(literal(x))`` equals ``x`` (with ``numpy as np``), numpy dtypes included, for
numbers, numpy arrays and scalars, and tuples, lists and dicts of them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["literal", "short"]


def _number(value: float) -> str:
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


def _nested(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    if isinstance(value, float):
        return _number(value)
    return repr(value)


def short(value: Any) -> str:
    """:func:`literal` for a report's detail: a large array by its shape and dtype, and at
    most 400 characters."""
    text = (
        literal(value)
        if not isinstance(value, np.ndarray) or value.size <= 32
        else (f"array of shape {value.shape} and dtype {value.dtype}")
    )
    return text if len(text) <= 400 else text[:400] + " ..."


def literal(value: Any) -> str:
    """Python source that evaluates (with ``numpy as np``) to a value equal to ``value``,
    dtypes of numpy arrays and scalars included."""
    if isinstance(value, np.ndarray):
        dtype = f"np.{value.dtype.name}" if value.dtype.kind in "biuf" else repr(value.dtype.str)
        return f"np.array({_nested(value.tolist())}, dtype={dtype})"
    if isinstance(value, np.generic):
        item = value.item()
        inner = _number(item) if isinstance(item, float) else repr(item)
        return f"np.{type(value).__name__}({inner})"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    if type(value).__name__ == "GraphInstance":
        return (
            f"GraphInstance(nodes={literal(value.nodes)}, edges={literal(value.edges)}, "
            f"edge_links={literal(value.edge_links)})"
        )
    return repr(value)
