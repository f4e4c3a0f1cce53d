"""Guards for what a wrapped environment hands back: an observation outside its declared
space, or a reward that is no number, is refused before anything is written.

``observation_writer(space, owner, row)`` gives ``write(x)``, which checks the observation
while copying it into ``row``: the observation codec's generated writer
(:meth:`~spacealg.emulation.codec.Codec.checked`) reads every level and leaf of ``x``,
tests each once with cheap exact tests (a dict/tuple of the right length, an int in range,
an array of the field's exact dtype and shape, bounds the dtype does not already imply,
no NaN) and only then stores. A value failing a cheap test goes to the precise check,
which decides by value (spacealg's membership: the right shape, values within the
bounds, integers where the space holds integers, whatever the storage dtype) and raises
:class:`~spacealg.env.APIUsageError` naming the environment (``owner``), the field
(``["pos"][1]``) and the value; a member in an unusual form (a list, an int16 for a
Discrete) is then written as usual. ``observation_guard(space, owner)`` is the same check
without the write (PettingZoo checks every agent's observation before writing any row).
Either way a refused step leaves the buffers as they were.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium.spaces as gs
import numpy as np

from spacealg.adapters.gymnasium import from_gymnasium
from spacealg.core.protocol import contains
from spacealg.emulation.codec import codec_for
from spacealg.env.errors import APIUsageError

__all__ = ["observation_guard", "observation_writer", "reward_guard"]

Check = Callable[[Any], None]

def _describe(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__qualname__}>"
    return text if len(text) <= 200 else text[:197] + "..."


def _refuse(owner: str, path: str, value: Any, space: Any) -> APIUsageError:
    return APIUsageError(
        f"{owner}: the observation{path} = {_describe(value)} (a {type(value).__qualname__}) "
        f"is not in its declared space {space!r}"
    )


def _by_value(space: Any, owner: str, path: str) -> Check:
    """The general rule: spacealg's membership by value in the converted space."""
    try:
        converted = from_gymnasium(space)
    except TypeError:
        converted = space

    def check(x: Any) -> None:
        if not contains(x, converted):
            raise _refuse(owner, path, x, space)

    return check


def _tuple(space: gs.Tuple, owner: str, path: str) -> Check:
    parts = [_checker(s, owner, f"{path}[{i}]") for i, s in enumerate(space.spaces)]
    n = len(parts)

    def check(x: Any) -> None:
        if not isinstance(x, (tuple, list)) or len(x) != n:
            raise _refuse(owner, path, x, space)
        for part, value in zip(parts, x):
            part(value)

    return check


def _dict(space: gs.Dict, owner: str, path: str) -> Check:
    parts = [(k, _checker(s, owner, f"{path}[{k!r}]")) for k, s in space.spaces.items()]
    n = len(parts)

    def check(x: Any) -> None:
        if not isinstance(x, dict) or len(x) != n:  # n keys, each of them found: the same keys
            raise _refuse(owner, path, x, space)
        try:
            for k, part in parts:
                part(x[k])
        except KeyError:
            raise _refuse(owner, path, x, space) from None

    return check


def _checker(space: Any, owner: str, path: str = "") -> Check:
    """The precise check of ``space``, level by level (its errors name the field)."""
    rules: dict[type, Callable[[Any, str, str], Check]] = {gs.Tuple: _tuple, gs.Dict: _dict}
    return rules.get(type(space), _by_value)(space, owner, path)


def observation_guard(space: Any, owner: str) -> Check:
    """``check(x)``: None for a member of ``space``, else APIUsageError (see the module docstring)."""
    precise = _checker(space, owner)
    try:
        return codec_for(space, "observation").checked(precise)
    except ValueError:  # no fixed-size layout (Text, Sequence, ...): the precise check alone
        return precise


def observation_writer(space: Any, owner: str, row: np.ndarray) -> Callable[[Any], Any]:
    """``write(x)``: ``x`` checked and written into ``row`` (see the module docstring)."""
    codec, precise = codec_for(space, "observation"), _checker(space, owner)
    try:
        return codec.checked(precise, row)
    except ValueError:  # a row numpy cannot see as flat (a strided user buffer): check, then copy
        check = codec.checked(precise)

        def write(x: Any) -> Any:
            check(x)
            if codec.layout.native:
                row[...] = x
                return row
            return codec.emulate_into(row, x)

        return write


REWARD_TYPES = (float, int, np.float32, np.float64, np.int64, np.int32)


def reward_guard(owner: str) -> Check:
    """``check(reward)``: a real number (Python or numpy, not a bool or a string), or APIUsageError."""

    def check(reward: Any) -> None:
        if type(reward) in REWARD_TYPES:
            return
        if isinstance(reward, (np.integer, np.floating)) or (
            isinstance(reward, np.ndarray) and reward.shape in ((), (1,)) and reward.dtype.kind in "iuf"
        ):
            return
        raise APIUsageError(
            f"{owner}: the reward {_describe(reward)} (a {type(reward).__qualname__}) is not a number"
        )

    return check
