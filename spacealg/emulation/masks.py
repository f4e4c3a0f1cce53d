"""PufferLib-style flat action masks: a structured action space's mask laid out beside its
emulated (MultiDiscrete) action, and back.

>>> import numpy as np
>>> import gymnasium.spaces as gs
>>> from spacealg.emulation import emulate_action_space
>>> from spacealg.emulation.masks import emulate_action_mask, nativize_action_mask
>>> space = gs.Dict({"move": gs.Discrete(4), "target": gs.MultiDiscrete([3, 2])})
>>> emulate_action_space(space)[0]
MultiDiscrete([4 3 2])
>>> flat = emulate_action_mask({"move": np.array([1, 1, 0, 0], np.int8), "target": None}, space)
>>> flat.astype(int)
array([1, 1, 0, 0, 1, 1, 1, 1, 1])
>>> nativize_action_mask(flat, space)["move"]
array([ True,  True, False, False])

The flat mask of an action space whose emulated action is ``MultiDiscrete(nvec)`` (or
``Discrete(n)``) is a bool vector of ``sum(nvec)`` entries: the allowed values of emulated
action entry 0, then of entry 1, and so on (what PufferLib's trainers and SB3-contrib's
MaskablePPO read for a MultiDiscrete action). Entry ``i``'s segment is indexed by the
value's digit (its offset from the entry's ``start``, its position in a finite set), in
the order of :func:`~spacealg.emulation.emulate_action_space` — Gymnasium's Dict key order.

A flat mask is per factor: a joint mask that couples factors (a 15x15 board mask) has no
flat form, and :func:`emulate_action_mask` raises ValueError for it unless
``marginal=True`` (then each factor keeps the values some legal action uses: a superset).

Laws (tests/test_masks_emulation.py): ``nativize_action_mask(emulate_action_mask(m, s), s)``
allows the same set as ``m`` for per-factor masks; an action ``x`` is allowed by ``m`` iff
every entry of its emulated action is true in its segment of the flat mask; leading batch
dimensions are kept (one flat mask per row).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spacealg.core.generic import as_space
from spacealg.emulation.spaces import emulate_action_space
from spacealg.spaces.masked import (
    NUMPY,
    Factors,
    MaskError,
    coarsen,
    factors,
    from_native_mask,
    parse_blocks,
    placed,
)

__all__ = ["action_mask_size", "emulate_action_mask", "nativize_action_mask"]


def _factors(space: Any) -> Factors:
    """The factors of ``space``, checked against its emulated action's entries."""
    emulated, _ = emulate_action_space(space)
    f = factors(as_space(space))
    if hasattr(emulated, "nvec"):
        sizes = tuple(int(n) for n in np.ravel(emulated.nvec))
    elif hasattr(emulated, "n"):
        sizes = (int(emulated.n),)
    else:
        raise TypeError(f"action masks: {space!r} emulates to {emulated}, not a Discrete/MultiDiscrete action")
    if sizes != f.sizes:
        raise TypeError(
            f"action masks: the emulated action {emulated} does not match the factors {f.sizes} of {space!r}"
        )
    return f


def action_mask_size(space: Any) -> int:
    """The length of the flat action mask of ``space``: ``sum(nvec)`` of its emulated action."""
    return int(sum(_factors(space).sizes))


def emulate_action_mask(mask: Any, space: Any, *, marginal: bool = False) -> np.ndarray:
    """The flat bool mask ``(*batch, sum(nvec))`` of ``mask`` (any form :class:`Masked`
    accepts, Gymnasium's included) over the action space ``space``.

    Raises ValueError for a joint mask that couples factors (no flat form) unless
    ``marginal``; TypeError for a space whose actions are not all discrete.
    """
    f = _factors(space)
    blocks = placed(parse_blocks(from_native_mask(space, mask), f), NUMPY)
    batch = _batch(blocks)
    segments: list[np.ndarray] = []
    start = 0
    for width, array in blocks:
        sizes = f.sizes[start : start + width]
        if array is None:
            segments.extend(np.ones((*batch, n), dtype=bool) for n in sizes)
        else:
            segments.extend(_marginals(array, sizes, batch, marginal, start))
        start += width
    if not segments:
        return np.zeros((*batch, 0), dtype=bool)
    return np.concatenate(segments, axis=-1)


def _batch(blocks: Sequence[tuple[int, Any]]) -> tuple[int, ...]:
    shapes = {a.shape[: a.ndim - w] for w, a in blocks if a is not None} - {()}
    if len(shapes) > 1:
        raise MaskError(f"mask: the parts have different batch shapes {sorted(shapes)}")
    return shapes.pop() if shapes else ()


def _marginals(
    array: np.ndarray, sizes: tuple[int, ...], batch: tuple[int, ...], marginal: bool, first: int
) -> list[np.ndarray]:
    array = np.broadcast_to(array, (*batch, *sizes))
    lead = len(batch)
    width = len(sizes)
    parts = [
        np.asarray(array.any(axis=tuple(lead + j for j in range(width) if j != i))) if width > 1 else np.asarray(array)
        for i in range(width)
    ]
    if width > 1 and not marginal:
        rebuilt = coarsen([(1, p) for p in parts], [width], sizes)[0][1]
        if not np.array_equal(rebuilt, array):
            raise MaskError(
                f"mask: the joint mask over factors {first}..{first + width - 1} couples them, and a flat "
                "(per-factor) action mask cannot express it; pass marginal=True for the per-factor "
                "superset, or sample with the joint mask (spacealg.sample(space, mask=...))"
            )
    return parts


def nativize_action_mask(flat: Any, space: Any) -> Any:
    """The per-factor mask of ``space`` (tuples/dicts of bool arrays, like ``space``'s
    structure) that the flat mask ``(*batch, sum(nvec))`` stands for; the inverse of
    :func:`emulate_action_mask` on per-factor masks. Raises ValueError for a wrong length."""
    f = _factors(space)
    array = np.asarray(flat)
    total = sum(f.sizes)
    if array.ndim < 1 or array.shape[-1] != total:
        raise MaskError(f"flat: expected a flat action mask of length {total} (last axis), got shape {array.shape}")
    if array.dtype.kind not in "biu" or (array.dtype.kind != "b" and not np.isin(array, (0, 1)).all()):
        raise MaskError(f"flat: expected bools or 0/1 integers, got {array.dtype}")
    cuts = np.cumsum((0, *f.sizes))
    segments = [array[..., cuts[i] : cuts[i + 1]].astype(bool) for i in range(len(f.sizes))]
    return _shape_like(f, iter(segments))


def _shape_like(node: Any, segments: Any) -> Any:
    if isinstance(node, Factors):
        if node.children is None:
            if len(node.sizes) != 1:
                raise TypeError("action masks: a leaf with several factors has no per-factor form")
            return next(segments)
        return _shape_like(node.children, segments)
    if isinstance(node, dict):
        return {k: _shape_like(c, segments) for k, c in node.items()}
    return tuple(_shape_like(c, segments) for c in node)
