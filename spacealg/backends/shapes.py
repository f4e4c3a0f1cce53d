"""What every batched operation checks of a batch's leaf arrays: their dtypes and shapes.

Laws: ``lead_checker(leaf, what)(b)`` is ``b.shape`` without the element's shape, and
raises ValueError naming ``what`` unless ``b``'s shape ends in it; ``leaf_dtypes`` gives
the native dtype of every leaf array (ValueError naming ``what`` for one that is no array).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spacealg.core.leaf import LeafModel
from spacealg.core.plan import Plan

__all__ = ["lead_checker", "leaf_dtypes"]


def leaf_dtypes(plan: Plan, parts: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    """The native dtype of every leaf batch; ValueError naming ``what`` for one that is not an array."""
    try:
        return tuple([p.dtype for p in parts])
    except AttributeError:
        for leaf, p in zip(plan.leaves, parts):
            lead_checker(leaf, what)(p)
        raise  # lead_checker raises first for the part that is no array


def lead_checker(leaf: LeafModel, what: str) -> Callable[[Any], Any]:
    """``lead(b)``: the batch shape of ``b`` (its shape without the element's); ValueError
    naming ``what`` unless ``b`` has a shape ending in the element shape."""
    element, n = leaf.shape, len(leaf.shape)

    def fail(b: Any, shape: Any) -> None:
        raise ValueError(
            f"{what}: {type(b).__qualname__} of shape {shape} is not a batch of {leaf.space!r} "
            f"(elements of shape {element})"
        )

    if not n:
        def lead(b: Any) -> Any:
            try:
                return b.shape
            except AttributeError:
                fail(b, None)

        return lead

    def lead_of(b: Any) -> Any:
        shape: Any = getattr(b, "shape", None)
        if shape is None or len(shape) < n or tuple(shape[len(shape) - n:]) != element:
            fail(b, None if shape is None else tuple(shape))
        return shape[: len(shape) - n]

    return lead_of
