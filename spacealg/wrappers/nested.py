"""``unroll_nested_dict``: the leaves of nested info dicts under slash-joined keys."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["unroll_nested_dict"]


def unroll_nested_dict(d: Any) -> Iterator[tuple[Any, Any]]:
    """Yield ``(key, leaf)`` for every non-mapping leaf of ``d``, depth first, in order.

    A leaf at path ``k1, k2, ..., kn`` gets the key ``"k1/k2/.../kn"`` (a top-level key is
    yielded as is). Laws: nothing is lost — a non-mapping ``d`` yields the single pair
    ``("", d)`` (PufferLib's version yields nothing); the values yielded are exactly the
    leaves of ``d`` in depth-first order.
    """
    if not isinstance(d, Mapping):
        yield "", d
        return
    for key, value in d.items():
        if isinstance(value, Mapping):
            for inner, leaf in unroll_nested_dict(value):
                yield f"{key}/{inner}", leaf
        else:
            yield key, value
