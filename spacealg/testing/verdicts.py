"""What a check says about each property: held, broken (with its reproduction) or not
checked (with why).

Probes and checkers return their findings in one list (the probes' "warnings"): a plain
``str`` is a warning, a :class:`NotChecked` a property left unchecked and why, a
:class:`~spacealg.testing.errors.PropertyError` a broken property. :func:`partition`
separates them.

Laws: every property of a checker's table is in exactly one of ``held``, ``broken`` and
``not_checked`` of the verdict (:func:`verdicts`); a property is never reported held where
its check did not run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spacealg.testing.errors import PropertyError

__all__ = ["NotChecked", "partition", "verdicts"]


class NotChecked(str):
    """A property the check did not check, with why (a ``str``: ``"<property>: <why>"``)."""

    property: str
    why: str

    def __new__(cls, prop: str, why: str) -> NotChecked:
        self = super().__new__(cls, f"{prop} not checked: {why}")
        self.property, self.why = prop, why
        return self


def partition(findings: Iterable[Any]) -> tuple[list[str], dict[str, str], list[PropertyError]]:
    """(warnings, {property: why not checked}, broken properties) of a findings list."""
    warned: list[str] = []
    skipped: dict[str, str] = {}
    broken: list[PropertyError] = []
    for item in findings:
        if isinstance(item, PropertyError):
            broken.append(item)
        elif isinstance(item, NotChecked):
            skipped.setdefault(item.property, item.why)
        else:
            warned.append(str(item))
    return warned, skipped, broken


def verdicts(
    properties: Iterable[str], broken: Iterable[str], not_checked: Mapping[str, str]
) -> dict[str, str]:
    """Each property of ``properties`` as ``"held"``, ``"broken"`` or ``"not checked: <why>"``
    (broken wins over not checked: a probe may break a property it could not finish)."""
    out: dict[str, str] = {}
    bad = set(broken)
    for prop in properties:
        if prop in bad:
            out[prop] = "broken"
        elif prop in not_checked:
            out[prop] = f"not checked: {not_checked[prop]}"
        else:
            out[prop] = "held"
    return out
