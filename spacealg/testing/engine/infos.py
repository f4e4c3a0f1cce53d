"""Volatile infos: the info entries a replay comparison leaves out.

A replayed episode must return the same infos, except for entries that are volatile by
design (wall-clock time, a process id). ``ignore_info_keys`` (the checkers' option,
``--ignore-info KEY`` on the command line) names them: ``"elapsed"`` is ``info["elapsed"]``,
``"episode.t"`` is ``info["episode"]["t"]`` (a key that itself holds a dot is matched whole
first). Gymnasium's own timing entries are recognised without options
(:data:`GYMNASIUM_VOLATILE`): ``RecordEpisodeStatistics`` writes the episode's wall-clock
time to ``info["episode"]["t"]`` beside its return ``"r"`` and length ``"l"``.

Laws: :func:`strip` never changes its argument; it removes exactly the named entries (and
the recognised ones) and keeps every other entry, so every other info is still compared;
an info without the named entries is returned equal to itself.

The keys in force for a check are set with :func:`ignoring` around it (a context variable,
so concurrent checks in threads do not see each other's keys); episodes record their infos
through :func:`recorded` (one info) and :func:`recorded_per_agent` (PettingZoo's infos of
every agent).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from spacealg.testing.engine.driver import snapshot

__all__ = ["GYMNASIUM_VOLATILE", "current", "ignoring", "info_keys", "recorded", "recorded_per_agent", "strip"]

GYMNASIUM_VOLATILE = ("episode.t",)
"""Entries volatile by design in Gymnasium's own wrappers (recognised where the entry has
the wrapper's shape: ``info["episode"]`` a dict of ``"r"``, ``"l"`` and ``"t"``)."""

_KEYS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("ignore_info_keys", default=())


def info_keys(keys: Any) -> tuple[str, ...]:
    """``ignore_info_keys`` validated: a str or an iterable of str; a TypeError naming the
    argument otherwise."""
    if keys is None:
        return ()
    if isinstance(keys, str):
        return (keys,)
    if isinstance(keys, Iterable):
        out = tuple(keys)
        if all(isinstance(k, str) and k for k in out):
            return out
    raise TypeError(f"ignore_info_keys must be a str or an iterable of non-empty str, got {keys!r}")


@contextlib.contextmanager
def ignoring(keys: Iterable[str]) -> Iterator[None]:
    """Leave the info entries ``keys`` out of the replay comparisons run inside."""
    token = _KEYS.set(tuple(keys))
    try:
        yield
    finally:
        _KEYS.reset(token)


def current() -> tuple[str, ...]:
    """The info keys ignored by the check running now."""
    return _KEYS.get()


def _remove(info: dict[Any, Any], path: str) -> dict[Any, Any]:
    if path in info:
        return {k: v for k, v in info.items() if k != path}
    head, dot, rest = path.partition(".")
    if dot and isinstance(info.get(head), Mapping):
        return {**info, head: _remove(dict(info[head]), rest)}
    return info


def _timing(info: dict[Any, Any]) -> bool:
    episode = info.get("episode")
    return isinstance(episode, Mapping) and {"r", "l", "t"} <= set(episode)


def strip(info: Any, keys: Iterable[str] = ()) -> Any:
    """``info`` without the entries ``keys`` and the recognised volatile ones (a new dict;
    anything but a dict is returned as it is)."""
    if not isinstance(info, dict):
        return info
    out = info
    for key in keys:
        out = _remove(out, key)
    if _timing(out):
        for key in GYMNASIUM_VOLATILE:
            out = _remove(out, key)
    return out


def recorded(info: Any) -> Any:
    """A copy of ``info`` for a trace, without the entries ignored in this check."""
    return snapshot(strip(info, _KEYS.get()))


def recorded_per_agent(infos: Any) -> Any:
    """:func:`recorded` of each agent's info in PettingZoo's ``{agent: info}``."""
    if not isinstance(infos, dict):
        return snapshot(infos)
    keys = _KEYS.get()
    return snapshot({agent: strip(info, keys) for agent, info in infos.items()})
