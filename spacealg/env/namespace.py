"""Namespace: a read-only record that answers both ``ns.key`` and ``ns["key"]``.

PufferLib's ``emulated`` metadata is such a record (``pufferlib.namespace``), so code
written against either access style keeps working.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["Namespace"]


class Namespace(Mapping[str, Any]):
    """A mapping whose keys are also attributes. Law: ``ns[k] == getattr(ns, k)`` for every key."""

    def __init__(self, **fields: Any) -> None:
        object.__setattr__(self, "_fields", dict(fields))

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__.get("_fields")
        try:
            return fields[name]  # type: ignore[index]
        except (KeyError, TypeError):
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Namespace is read-only; cannot set {name!r}")

    def __getitem__(self, key: str) -> Any:
        return self._fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        return "Namespace(" + ", ".join(f"{k}={v!r}" for k, v in self._fields.items()) + ")"

    def __getstate__(self) -> dict[str, Any]:
        return self._fields

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "_fields", state)
