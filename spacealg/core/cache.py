"""One cache policy for everything spacealg derives from a space (or a buffer) and keeps.

>>> from spacealg.core.cache import IdentityCache
>>> import spacealg as sa
>>> sizes = IdentityCache("sizes", max_entries=2)
>>> b = sa.Box(0, 1, shape=(3,))
>>> sizes.get_or_compute(b, lambda s: s.shape)
(3,)
>>> b in sizes, len(sizes)
(True, 1)
>>> del b; len(sizes)                     # the entry dies with its key
0

The rule, the same for every cache (the plans of :mod:`spacealg.core.plan`, which hold a
space's codecs and compiled variants; Gymnasium conversions, buffer views, generated writers):

* **Keyed by identity.** A key that takes weak references (spacealg and Gymnasium spaces,
  numpy arrays) is held weakly: its entry is dropped when the key is collected, so a
  cache never keeps a space alive (unless the value itself references its key, as a plan
  holding an emulation ``Codec`` does its space: such entries live until the bounds below evict them).
  Other keys (``range``, tuples) are held in the entry,
  and a hit checks ``entry_key is key``. A ``by_value=True`` cache keys by ``==``/``hash``
  instead (numpy dtypes), holding its keys.
* **Bounded.** At most ``max_entries`` entries and ``max_bytes`` bytes, as :func:`footprint`
  weighs a value (and a strongly held key); past either bound the oldest entries are
  dropped first (first in, first out). A value heavier than ``max_bytes`` is returned but
  not kept (and an entry kept before under its key is dropped).
* **Never for mutable containers.** ``dict``, ``list`` and ``set`` keys (plain objects
  standing for spaces) are never cached: their content can change under one identity.

Laws: ``get_or_compute(k, f) == f(k)``; ``len(cache) <= max_entries``;
``cache.nbytes <= max_bytes``; an entry never outlives a weakly held key. Thread-safe:
lookups read one dict entry; every change (keeping, evicting, a key's death) holds the
cache's lock, so threads sharing a full cache never see it change during an eviction.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import numpy as np

__all__ = ["IdentityCache", "footprint"]

V = TypeVar("V")

_WEAK = object()  # the key marker of an entry whose key is held weakly
_MUTABLE = (dict, list, set, bytearray)


def footprint(value: Any, depth: int = 4) -> int:
    """An estimate of the bytes ``value`` keeps alive: its numpy arrays (object arrays at
    64 bytes an entry), found through attributes, tuples, lists and dicts ``depth`` deep,
    plus 64 bytes per object visited."""
    seen: set[int] = set()

    def walk(x: Any, level: int) -> int:
        if id(x) in seen or level < 0:
            return 0
        seen.add(id(x))
        if isinstance(x, np.ndarray):
            base = x if x.base is None else x.base
            if isinstance(base, np.ndarray) and base is not x:
                return walk(base, level)
            return int(x.size * 64 if x.dtype.kind == "O" else x.nbytes)
        if isinstance(x, (str, bytes, int, float, type, np.dtype)) or (callable(x) and not hasattr(x, "__dict__")):
            return 64
        parts: Any = ()
        if isinstance(x, (tuple, list, frozenset, set)):
            parts = x
        elif isinstance(x, dict):
            parts = list(x.values())
        elif hasattr(x, "__dict__"):
            parts = list(vars(x).values())
        return 64 + sum(walk(p, level - 1) for p in parts)

    return walk(value, depth)


def _getter(data: dict[Any, Any], by_value: bool) -> Callable[[Any], Any]:
    """The lookup of an :class:`IdentityCache`'s entries ``data``: a closure, since a bound
    method's attribute loads cost as much as the lookup itself."""
    if by_value:
        def get_by_value(key: Any) -> Any:
            entry = data.get(key)
            return None if entry is None else entry[1]

        return get_by_value

    def get(key: Any, _id: Callable[[Any], int] = id, _weak: object = _WEAK) -> Any:
        entry = data.get(_id(key))
        if entry is not None and (entry[0] is _weak or entry[0] is key):
            return entry[1]
        return None

    return get


class IdentityCache(Generic[V]):
    """Values computed from key objects, kept under the module's one eviction rule."""

    def __init__(
        self,
        name: str,
        max_entries: int = 1024,
        max_bytes: int = 64 << 20,
        weigh: Callable[[Any], int] = footprint,
        by_value: bool = False,
    ) -> None:
        self.name = name
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.by_value = by_value
        self._weigh = weigh
        self._data: dict[Any, tuple[Any, V, int, Any]] = {}  # key -> (held key or _WEAK, value, bytes, ref)
        self.nbytes = 0
        self._lock = threading.RLock()  # re-entrant: a key's death may drop its entry inside put
        self.get: Callable[[Any], V | None] = _getter(self._data, by_value)
        """``get(key)``: the value kept for ``key``, or None (a closure: the hot path of every cache)."""

    def __repr__(self) -> str:
        return (f"<IdentityCache {self.name}: {len(self._data)}/{self.max_entries} entries, "
                f"{self.nbytes}/{self.max_bytes} bytes>")

    def _key(self, key: Any) -> Any:
        return key if self.by_value else id(key)

    def __contains__(self, key: Any) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return len(self._data)

    def put(self, key: Any, value: V) -> V:
        """Keeps ``value`` for ``key`` (unless the key is a mutable container or the value
        alone outweighs ``max_bytes``); returns ``value``."""
        if isinstance(key, _MUTABLE):
            return value
        held: Any = key
        ref = None
        k = self._key(key)
        size = self._weigh(value)
        if not self.by_value:
            try:
                ref = weakref.ref(key, self._dead_callback(k))
                held = _WEAK
            except TypeError:  # no weak references: the entry holds the key
                size += self._weigh(key)
        if size > self.max_bytes:
            self._drop(k)  # a value kept before under this key is stale now
            return value
        with self._lock:  # threads share the caches: evicting iterates over the entries
            self._drop(k)
            while self._data and (len(self._data) >= self.max_entries or self.nbytes + size > self.max_bytes):
                self._drop(self._oldest())
            self._data[k] = (held, value, size, ref)
            self.nbytes += size
        return value

    def _oldest(self) -> Any:
        """The key of the oldest entry. A weak key's death may drop an entry from the garbage
        collector, in this thread, in the middle of the iteration: then it is read again."""
        while True:
            try:
                return next(iter(self._data))
            except RuntimeError:  # "dictionary changed size during iteration"
                continue

    def _dead_callback(self, k: Any) -> Callable[[Any], None]:
        data = weakref.ref(self)

        def dead(ref: Any) -> None:  # the key died: drop its entry (if it is still this one)
            cache = data()
            if cache is not None:
                entry = cache._data.get(k)
                if entry is not None and entry[3] is ref:
                    cache._drop(k)

        return dead

    def values(self) -> list[V]:
        """The values kept now."""
        with self._lock:
            return [entry[1] for entry in self._data.values()]

    def get_or_compute(self, key: Any, compute: Callable[[Any], V]) -> V:
        """The kept value for ``key``, else ``compute(key)`` (kept under the rule)."""
        value = self.get(key)
        return value if value is not None else self.put(key, compute(key))

    def discard(self, key: Any) -> None:
        """Drops the entry of ``key``, if there is one."""
        self._drop(self._key(key))

    def _drop(self, k: Any) -> None:
        with self._lock:
            entry = self._data.pop(k, None)
            if entry is not None:
                self.nbytes -= entry[2]

    def clear(self) -> None:
        """Drops every entry."""
        with self._lock:
            self._data.clear()
            self.nbytes = 0
