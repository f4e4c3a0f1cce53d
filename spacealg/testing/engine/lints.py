"""Declaration lints: space declarations that are legal but usually a mistake. They are
reported as warnings (:class:`EnvCheckWarning`, and in the report), never as failures; for
Gymnasium's own environments (whose declarations the user did not write) only with
``lint=True`` (``--lint``):

- an observation ``Box`` with infinite bounds (normalisation and clipping cannot use them);
- a ``Box`` with ``low == high`` in some entry (a constant entry);
- a continuous action ``Box`` that is not normalised to ``[-1, 1]`` (SB3's advice);
- an image-shaped observation ``Box`` (H x W x C or C x H x W with C in 1, 3, 4 and H, W >= 8)
  whose dtype is not uint8.

Declaration *faults* are not lints: :func:`space_fault` finds a declared space that is not
a well-formed set (a ``Box`` whose ``low``/``high`` shape is not its shape, a space whose own
``sample()`` is not a member, as a ``MultiDiscrete`` whose shape disagrees with its ``nvec``);
the checkers report it as the broken property ``declared-spaces``, and the lints pass over
what it finds instead of failing on it.
"""

from __future__ import annotations

import copy
import os
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from spacealg.testing.engine.literals import short

__all__ = ["EnvCheckWarning", "Lint", "own_gymnasium", "quiet_for", "space_fault", "space_lints", "warn_all"]


class EnvCheckWarning(UserWarning):
    """A declaration lint or API-hygiene remark of an environment check (not a failure)."""


class Lint(str):
    """A declaration lint (a warning that :func:`quiet_for` may leave out)."""


def own_gymnasium(env: Any) -> bool:
    """Whether ``env`` is one of Gymnasium's own environments (its unwrapped class lives in
    ``gymnasium.envs``): their declarations are Gymnasium's, not the user's."""
    try:
        return type(env.unwrapped).__module__.startswith("gymnasium.envs.")
    except Exception:
        return False


def quiet_for(findings: list[Any]) -> list[Any]:
    """``findings`` without the declaration lints (:class:`Lint`)."""
    return [f for f in findings if not isinstance(f, Lint)]


def _boxes(space: Any, path: str) -> Iterator[tuple[str, Any]]:
    name = type(space).__name__
    if name == "Box" and hasattr(space, "low") and hasattr(space, "high"):
        yield path, space
    elif name == "Dict" and hasattr(space, "spaces"):
        for key, sub in space.spaces.items():
            yield from _boxes(sub, f"{path}[{key!r}]")
    elif name == "Tuple" and hasattr(space, "spaces"):
        for i, sub in enumerate(space.spaces):
            yield from _boxes(sub, f"{path}[{i}]")


def _malformed(box: Any) -> str | None:
    """What is wrong with a Box's bounds (None: ``low`` and ``high`` have its shape)."""
    try:
        shape = tuple(box.shape)
        low, high = np.shape(box.low), np.shape(box.high)
    except Exception as error:
        return f"its shape and bounds cannot be read ({type(error).__name__}: {error})"
    if low != shape or high != shape:
        return f"its low has shape {low} and its high {high}, but its shape is {shape}"
    return None


def _sound(box: Any) -> bool:
    return _malformed(box) is None


SAMPLES = 4
"""Draws of a declared space's own ``sample()`` that :func:`space_fault` checks for membership."""


def space_fault(space: Any, what: str) -> str | None:
    """What makes the declared ``space`` (named ``what`` in the message) not a well-formed
    set, or None. Laws: None for every space Gymnasium's constructors build (sound spaces
    raise no false alarm); a message for what is not a space at all (None, a string), for
    a Box (nested in Dict/Tuple) whose ``low`` or ``high`` shape is not its shape, and for a
    space whose own ``sample()`` (on a copy seeded with 0, so the environment's space is
    left as it was) raises or returns a value its ``contains`` rejects. Never raises."""
    for path, box in _boxes(space, what):
        wrong = _malformed(box)
        if wrong is not None:
            return f"{path} is a malformed Box: {wrong}"
    from spacealg.core.generic import NotASpaceError, as_space

    try:
        as_space(space)
    except NotASpaceError:
        return f"{what} is {short(space)} (of type {type(space).__name__}), not a space"
    except Exception as error:
        return f"{what} cannot be read as a space: {type(error).__name__}: {error}"
    if not (hasattr(space, "sample") and hasattr(space, "contains")):
        return None  # not a Gymnasium-style space: its members are drawn by spacealg's own rules
    try:
        own = copy.deepcopy(space)
    except Exception:
        return None  # cannot be drawn from without disturbing the environment's space
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Gymnasium's remarks on its own samples are not the user's
            if hasattr(own, "seed"):
                own.seed(0)
            for _ in range(SAMPLES):
                value = own.sample()
                if not _contains(space, value):
                    return f"{what}.sample() returned {short(value)}, which {what}.contains rejects: {space!r}"
    except Exception as error:
        return f"{what}.sample() raised {type(error).__name__}: {error}"
    return None


def _contains(space: Any, value: Any) -> bool:
    try:
        return bool(space.contains(value))
    except Exception:
        return False


def _is_image(shape: tuple[int, ...]) -> bool:
    if len(shape) != 3:
        return False
    return (shape[2] in (1, 3, 4) and min(shape[:2]) >= 8) or (shape[0] in (1, 3, 4) and min(shape[1:]) >= 8)


def space_lints(observation_space: Any, action_space: Any, who: str = "") -> list[str]:
    """The lints of one agent's declared spaces (Gymnasium Box spaces, nested in Dict/Tuple;
    a malformed Box is :func:`space_fault`'s, not a lint's: passed over)."""
    found: list[str] = []
    observation_boxes = [(p, b) for p, b in _boxes(observation_space, f"{who}observation space") if _sound(b)]
    action_boxes = [(p, b) for p, b in _boxes(action_space, f"{who}action space") if _sound(b)]
    for path, box in observation_boxes:
        low, high = np.asarray(box.low), np.asarray(box.high)
        if np.isinf(low).any() or np.isinf(high).any():
            count = int((np.isinf(low) | np.isinf(high)).sum())
            found.append(f"{path}: {count} of {low.size} entries have infinite bounds")
        if _is_image(tuple(box.shape)) and box.dtype != np.uint8:
            found.append(f"{path}: an image of shape {tuple(box.shape)} in {box.dtype}, not uint8")
    for path, box in [*observation_boxes, *action_boxes]:
        equal = np.asarray(box.low) == np.asarray(box.high)
        if equal.any():
            found.append(f"{path}: low == high in {int(equal.sum())} of {equal.size} entries")
    for path, box in action_boxes:
        if np.dtype(box.dtype).kind == "f":
            low, high = np.asarray(box.low), np.asarray(box.high)
            if not (np.all(low == -1) and np.all(high == 1)):
                found.append(
                    f"{path}: a continuous action Box not normalised to [-1, 1] "
                    f"(low {_range(low)}, high {_range(high)})"
                )
    return [Lint(remark) for remark in found]


def _range(values: np.ndarray) -> str:
    lo, hi = float(values.min()), float(values.max())
    return f"{lo:g}" if lo == hi else f"{lo:g}..{hi:g}"


def caller_level() -> int:
    """The ``stacklevel`` of the first frame outside spacealg (the caller's line), counted
    from the function that calls :func:`warnings.warn`'s caller: a warning points at the
    user's code, not at spacealg's."""
    import spacealg

    package = os.path.dirname(os.path.abspath(spacealg.__file__)) + os.sep
    frame = sys._getframe(2)  # the caller of warn_all
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def warn_all(name: str, remarks: list[str]) -> None:
    """Issue each remark as an :class:`EnvCheckWarning`, attributed to the caller's line
    (the first frame outside spacealg)."""
    level = caller_level()
    for remark in remarks:
        warnings.warn(f"{name}: {remark}", EnvCheckWarning, stacklevel=level)
