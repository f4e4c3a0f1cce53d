"""Guards for what a wrapped environment hands back: an observation outside its declared
space, or a reward that is no number, is refused before anything is written.

``observation_guard(space, owner)`` compiles, once per space, a function ``check(x)`` that
returns None for a member of ``space`` and raises :class:`~spacealg.env.APIUsageError`
naming the environment (``owner``), the field (``["pos"][1]``) and the value otherwise.
The rule is spacealg's membership by value (the right shape, values within the bounds,
integers where the space holds integers, whatever the storage dtype), decided by
:func:`spacealg.contains` on the converted space; the common case (an ndarray of the
field's exact shape and dtype, a Python or numpy int for a Discrete) takes a fast path that
compares only the bounds the dtype does not already imply (none for a uint8 image in
[0, 255]; two entries for CartPole). Because the whole observation is checked before the
buffer is touched, a failed step leaves no half-written row.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium.spaces as gs
import numpy as np

from spacealg.adapters.gymnasium import from_gymnasium
from spacealg.core.protocol import contains
from spacealg.env.errors import APIUsageError

__all__ = ["observation_guard", "reward_guard"]

Check = Callable[[Any], None]

_SMALL = 32  # up to this many entries, bounds are compared as Python numbers (no ufunc overhead)


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


def _box(space: gs.Box, owner: str, path: str) -> Check:
    shape, dtype = space.shape, space.dtype
    slow = _by_value(space, owner, path)
    if dtype.kind == "f":
        need_low, need_high = np.isfinite(space.low), np.isfinite(space.high)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)  # type: ignore[type-var]
        need_low, need_high = space.low > info.min, space.high < info.max
    else:  # bool: every value is in [0, 1]
        need_low = need_high = np.zeros(shape, dtype=bool)
    needed = need_low | need_high
    nan_free = dtype.kind == "f"
    if not needed.any() and not nan_free:
        def check_types(x: Any) -> None:
            if type(x) is not np.ndarray or x.shape != shape or x.dtype != dtype:
                slow(x)

        return check_types
    if needed.size <= _SMALL and _uniform_finite(space):
        lo, hi = float(space.low.flat[0]), float(space.high.flat[0])
        flat_1d = len(shape) == 1

        def check_uniform(x: Any) -> None:
            if type(x) is not np.ndarray or x.shape != shape or x.dtype != dtype:
                slow(x)
                return
            values = x.tolist() if flat_1d else x.ravel().tolist()
            if values:
                total = sum(values)  # NaN anywhere makes the sum NaN
                if not (lo <= min(values) and max(values) <= hi) or total != total:
                    slow(x)  # raises, naming the value

        return check_uniform
    if needed.size <= _SMALL:
        flat = [
            (i, float(lo) if nl else None, float(hi) if nh else None)
            for i, (lo, hi, nl, nh) in enumerate(
                zip(space.low.flat, space.high.flat, need_low.flat, need_high.flat)
            )
            if nl or nh or nan_free
        ]

        def check_entries(x: Any) -> None:
            if type(x) is not np.ndarray or x.shape != shape or x.dtype != dtype:
                slow(x)
                return
            values = x.ravel().tolist()
            for i, lo, hi in flat:
                v = values[i]
                if v != v or (lo is not None and v < lo) or (hi is not None and v > hi):
                    slow(x)  # raises, naming the value
                    return

        return check_entries
    low, high = space.low, space.high

    def check_arrays(x: Any) -> None:
        if type(x) is not np.ndarray or x.shape != shape or x.dtype != dtype:
            slow(x)
            return
        if not ((x >= low) & (x <= high)).all():  # NaN compares False: refused
            slow(x)

    return check_arrays


def _uniform_finite(space: gs.Box) -> bool:
    """Whether every entry has the same two finite bounds."""
    low, high = space.low, space.high
    return bool(
        low.size
        and np.isfinite(low.flat[0])
        and np.isfinite(high.flat[0])
        and (low == low.flat[0]).all()
        and (high == high.flat[0]).all()
    )


def _discrete(space: gs.Discrete, owner: str, path: str) -> Check:
    start, stop = int(space.start), int(space.start) + int(space.n)
    slow = _by_value(space, owner, path)
    fast_types = (int, np.int64, np.int32)

    def check(x: Any) -> None:
        if type(x) in fast_types and start <= x < stop:
            return
        slow(x)

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


_RULES: dict[type, Callable[[Any, str, str], Check]] = {
    gs.Box: _box,
    gs.Discrete: _discrete,
    gs.Tuple: _tuple,
    gs.Dict: _dict,
}


def _checker(space: Any, owner: str, path: str = "") -> Check:
    """The membership check of ``space`` node by node (precise errors; the slow path)."""
    rule = _RULES.get(type(space))
    if rule is None:
        return _by_value(space, owner, path)
    return rule(space, owner, path)


_UNROLL = 16  # leaves up to this many entries are compared entry by entry in generated code


class _Source:
    """Straight-line Python for the common case of one observation space."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"ndarray": np.ndarray, "INTS": (int, np.int64, np.int32)}

    def constant(self, value: Any) -> str:
        name = f"c{len(self.names)}"
        self.names[name] = value
        return name

    def emit(self, line: str) -> None:
        self.lines.append("        " + line)

    def node(self, space: Any, expression: str) -> bool:
        """Emit the checks of ``expression`` against ``space``; False if it has no fast form."""
        if isinstance(space, gs.Dict) and all(isinstance(k, str) for k in space.spaces):
            value = f"v{len(self.lines)}"
            self.emit(f"{value} = {expression}")
            self.emit(f"if type({value}) is not dict or len({value}) != {len(space.spaces)}: return full(ob)")
            return all(self.node(s, f"{value}[{k!r}]") for k, s in space.spaces.items())
        if isinstance(space, gs.Tuple):
            value = f"v{len(self.lines)}"
            self.emit(f"{value} = {expression}")
            self.emit(f"if type({value}) is not tuple or len({value}) != {len(space.spaces)}: return full(ob)")
            return all(self.node(s, f"{value}[{i}]") for i, s in enumerate(space.spaces))
        if isinstance(space, gs.Discrete):
            value = f"v{len(self.lines)}"
            start, stop = int(space.start), int(space.start) + int(space.n)
            self.emit(f"{value} = {expression}")
            self.emit(f"if type({value}) not in INTS or not {start} <= {value} < {stop}: return full(ob)")
            return True
        if isinstance(space, gs.Box):
            return self.box(space, expression)
        return False

    def box(self, space: gs.Box, expression: str) -> bool:
        value = f"v{len(self.lines)}"
        shape, dtype = self.constant(space.shape), self.constant(space.dtype)
        kind = space.dtype.kind
        self.emit(f"{value} = {expression}")
        if kind == "f" and len(space.shape) == 1 and 0 < space.shape[0] <= _UNROLL:
            # a float vector: unpacking checks the length, the comparisons check the values
            # (any real dtype is a member by value; other entries make them raise: slow path)
            self.emit(f"if type({value}) is not ndarray or {value}.ndim != 1: return full(ob)")
        else:
            self.emit(
                f"if type({value}) is not ndarray or {value}.shape != {shape} or {value}.dtype != {dtype}: "
                "return full(ob)"
            )
        if kind == "b":
            return True
        if kind in "iu":
            info = np.iinfo(space.dtype)  # type: ignore[type-var]
            need_low, need_high = space.low > info.min, space.high < info.max
        else:
            need_low, need_high = np.isfinite(space.low), np.isfinite(space.high)
        if kind != "f" and not (need_low.any() or need_high.any()):
            return True  # the dtype implies the bounds (a uint8 image in [0, 255])
        size = int(space.low.size)
        if size > _UNROLL:
            low, high = self.constant(space.low), self.constant(space.high)
            self.emit(f"if not (({value} >= {low}) & ({value} <= {high})).all(): return full(ob)")
            return True
        if size == 0:
            return True
        entries = [f"{value}e{i}" for i in range(size)]
        flat = f"{value}.tolist()" if len(space.shape) == 1 else f"{value}.ravel().tolist()"
        self.emit(f"{', '.join(entries)}{',' if size == 1 else ''} = {flat}")
        tests = []
        for entry, lo, hi, nl, nh in zip(
            entries, space.low.flat, space.high.flat, need_low.flat, need_high.flat
        ):
            lo_text, hi_text = repr(float(lo) if kind == "f" else int(lo)), repr(float(hi) if kind == "f" else int(hi))
            if nl and nh:
                tests.append(f"{lo_text} <= {entry} <= {hi_text}")
            elif nl:
                tests.append(f"{lo_text} <= {entry}")
            elif nh:
                tests.append(f"{entry} <= {hi_text}")
            elif kind == "f":
                tests.append(f"{entry} == {entry}")  # NaN is in no Box
        if tests:
            self.emit(f"if not ({' and '.join(tests)}): return full(ob)")
        return True


def observation_guard(space: Any, owner: str, path: str = "") -> Check:
    """The compiled membership check of ``space`` (see the module docstring).

    The common case runs straight-line generated code (the space's structure, shapes,
    dtypes and bounds inlined); anything it does not accept at once goes to the node-by-node
    check, which decides by value and raises naming the field.
    """
    full = _checker(space, owner, path)
    source = _Source()
    if not source.node(space, "ob"):
        return full
    code = "def check(ob):\n    try:\n" + "\n".join(source.lines) + "\n    except Exception:\n        return full(ob)\n"
    namespace = {**source.names, "full": full}
    exec(compile(code, f"<observation guard of {space!r}>", "exec"), namespace)
    return namespace["check"]  # type: ignore[no-any-return]


_REWARD_TYPES = (float, int, np.float32, np.float64, np.int64, np.int32)


def reward_guard(owner: str) -> Check:
    """``check(reward)``: a real number (Python or numpy, not a bool or a string), or APIUsageError."""

    def check(reward: Any) -> None:
        if type(reward) in _REWARD_TYPES:
            return
        if isinstance(reward, (np.integer, np.floating)) or (
            isinstance(reward, np.ndarray) and reward.shape in ((), (1,)) and reward.dtype.kind in "iuf"
        ):
            return
        raise APIUsageError(
            f"{owner}: the reward {_describe(reward)} (a {type(reward).__qualname__}) is not a number"
        )

    return check
