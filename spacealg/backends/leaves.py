"""A batch's first leaf array (the per-kind table of leaf models is :mod:`spacealg.core.leaf`'s)."""

from __future__ import annotations

from typing import Any

__all__ = ["first_array"]


def first_array(batch: Any) -> Any:
    """The first leaf array of a batch (tuples, lists and dicts of arrays), depth first."""
    while isinstance(batch, (tuple, list, dict)):
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    return batch
