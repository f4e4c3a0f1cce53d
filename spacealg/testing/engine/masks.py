"""Action masks published by environments, checked and used to draw legal actions.

Where a mask is published (PettingZoo: ``observation["action_mask"]`` or
``info["action_mask"]``; Gymnasium: ``info["action_mask"]``) the checkers

- check the mask itself (``action-mask``): for a ``Discrete(n)`` action space an array of
  shape ``(n,)``; for ``MultiDiscrete(nvec)`` a tuple of such arrays, one per factor (or one
  array of shape ``(sum(nvec),)``) — Gymnasium's ``sample(mask=...)`` conventions; entries
  0/1 in dtype ``int8`` (Gymnasium's) or ``bool``; at least one legal action while the agent
  must act (not terminated or truncated);
- draw the action among the legal ones (shrinking toward the first legal action), so that
  an environment that rejects illegal moves is driven through real games, and a legal action
  must be accepted (``no-exception``);
- with ``illegal_actions=True``, draw some actions outside the mask too: the environment may
  reject one with a clear exception (ValueError, AssertionError, RuntimeError or Gymnasium's
  or PettingZoo's own error classes) or handle it like any step; any other exception breaks
  ``illegal-action``.

Masks of other action spaces are not interpreted (actions are drawn from the whole space).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from spacealg.testing.engine.errors import PropertyError

__all__ = ["MaskedAction", "check_mask", "find_mask", "is_rejection", "mask_kind"]

MASK_KEY = "action_mask"


def find_mask(observation: Any, info: Any) -> Any:
    """The published mask: ``observation["action_mask"]``, else ``info["action_mask"]``,
    else None."""
    for holder in (observation, info):
        if isinstance(holder, dict) and MASK_KEY in holder:
            return holder[MASK_KEY]
    return None


def mask_kind(space: Any) -> str | None:
    """ "discrete", "multidiscrete" or None (a space whose masks are not interpreted)."""
    name = type(space).__name__
    if name == "Discrete" and hasattr(space, "n"):
        return "discrete"
    if name == "MultiDiscrete" and getattr(getattr(space, "nvec", None), "ndim", 0) == 1:
        return "multidiscrete"
    return None


def _check_vector(mask: Any, size: int, what: str, step: int | None, who: str) -> np.ndarray:
    if not isinstance(mask, np.ndarray):
        raise PropertyError("action-mask", f"{who}{what} is a {type(mask).__name__}, not a numpy array", step)
    if mask.shape != (size,):
        raise PropertyError(
            "action-mask", f"{who}{what} has shape {mask.shape}; the action space needs ({size},)", step
        )
    if mask.dtype not in (np.int8, np.bool_):
        raise PropertyError(
            "action-mask", f"{who}{what} has dtype {mask.dtype}; masks are int8 (Gymnasium's) or bool", step
        )
    if not np.isin(mask, (0, 1)).all():
        raise PropertyError("action-mask", f"{who}{what} holds values other than 0 and 1: {mask.tolist()}", step)
    return mask.astype(bool)


def check_mask(mask: Any, space: Any, must_act: bool, step: int | None, who: str = "") -> list[np.ndarray] | None:
    """The mask as one bool vector per factor (None for a space whose masks are not
    interpreted); raises ``action-mask`` for a malformed mask, or an empty one while the
    agent must act."""
    kind = mask_kind(space)
    if kind is None:
        return None
    if kind == "discrete":
        factors = [_check_vector(mask, int(space.n), "the action mask", step, who)]
    else:
        nvec = [int(k) for k in space.nvec]
        if isinstance(mask, np.ndarray) and mask.ndim == 1 and mask.shape == (sum(nvec),):
            mask = tuple(np.split(mask, np.cumsum(nvec)[:-1]))
        if not isinstance(mask, tuple) or len(mask) != len(nvec):
            detail = f"{who}the action mask for MultiDiscrete({nvec}) is not a tuple of {len(nvec)} arrays"
            raise PropertyError("action-mask", detail, step)
        factors = [
            _check_vector(m, k, f"the action mask of factor {i}", step, who) for i, (m, k) in enumerate(zip(mask, nvec))
        ]
    if must_act:
        empty = [i for i, f in enumerate(factors) if not f.any()]
        if empty:
            where = "" if kind == "discrete" else f" (factor {empty[0]})"
            raise PropertyError(
                "action-mask", f"{who}the action mask allows no action{where} although the agent must act", step
            )
    return factors


_INDICES: dict[int, Any] = {}


def _indices(count: int) -> Any:
    """``integers(0, count - 1)``, built once per count (strategies are costly to build)."""
    if count not in _INDICES:
        _INDICES[count] = st.integers(0, count - 1)
    return _INDICES[count]


class MaskedAction:
    """Draw an action for a space from a checked mask (legal by default; with
    ``illegal`` a drawn flag may pick one outside it)."""

    def __init__(self, space: Any, illegal: bool = False) -> None:
        self.space, self.illegal = space, illegal
        self.kind = mask_kind(space)

    def draw(self, data: Any, factors: list[np.ndarray], unmasked: Any) -> tuple[Any, bool]:
        """(action, legal)."""
        some_illegal = self.illegal and not all(f.all() for f in factors)
        if some_illegal and data.draw(st.integers(0, 3), label="illegal") == 3:
            action = data.draw(unmasked)
            return action, self.is_legal(action, factors)
        picks = []
        for f in factors:
            legal = np.flatnonzero(f)
            picks.append(int(legal[data.draw(_indices(len(legal)))]))
        dtype = self.space.dtype
        if self.kind == "discrete":
            return dtype.type(int(self.space.start) + picks[0]), True
        start = np.asarray(getattr(self.space, "start", 0))
        return (np.asarray(picks) + start).astype(dtype), True

    def is_legal(self, action: Any, factors: list[np.ndarray]) -> bool:
        try:
            values = np.asarray(action).reshape(-1) - np.asarray(getattr(self.space, "start", 0)).reshape(-1)
            return all(0 <= int(v) < len(f) and bool(f[int(v)]) for v, f in zip(values, factors))
        except Exception:
            return False


REJECTIONS: tuple[type[BaseException], ...] = (ValueError, AssertionError, RuntimeError)


def is_rejection(error: BaseException) -> bool:
    """Whether an exception is a clear rejection of an illegal action."""
    if isinstance(error, REJECTIONS):
        return True
    module = type(error).__module__ or ""
    return module.startswith(("gymnasium.", "pettingzoo.", "gym."))
