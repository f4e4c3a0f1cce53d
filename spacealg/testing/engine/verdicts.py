"""What a check says about each property: held, broken (with its reproduction) or not
checked (with why).

Probes and checkers return their findings in one list (the probes' "warnings"): a plain
``str`` is a warning, a :class:`NotChecked` a property left unchecked and why, a
:class:`~spacealg.testing.engine.errors.PropertyError` a broken property. :func:`partition`
separates them.

Laws: every property of a checker's table is in exactly one of ``held``, ``broken`` and
``not_checked`` of the verdict (:func:`verdicts`); a property is never reported held where
its check did not run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from spacealg.testing.engine.errors import PropertyError, verdicts

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


def jsonable(value: Any) -> Any:
    """``value`` as JSON data: numpy arrays as nested lists, numpy scalars as numbers,
    tuples as lists, dict keys as strings; anything else JSON cannot hold as its repr."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def broken_entry(error: Any) -> dict[str, Any]:
    """One broken property of a failed check (an EnvCheckError): where, the seed and the
    actions, the message and the reproduction snippet."""
    from spacealg.testing.engine.literals import literal

    return {
        "property": error.property,
        "where": error._location(),
        "seed": error.seed,
        "actions": jsonable(error.actions),
        "actions_literal": literal(error.actions),
        "message": error._message(),
        "reproduction": error.reproduction(),
    }


def report_document(report: Any) -> dict[str, Any]:
    """A passed check (an EnvCheckReport) as JSON data: each property's verdict, the
    warnings and how much ran (a JAX check: ``setup_seconds`` compiling and probing,
    ``rollout_seconds`` inside the compiled rollouts, ``raw_steps_per_second`` of the
    environment's own rollout and the search's ``raw_ratio`` of it)."""
    return {
        "status": "passed",
        "properties": list(report.properties),
        "verdicts": report.verdicts(),
        "not_checked": dict(report.not_checked),
        "warnings": list(report.warnings),
        "examples": report.examples,
        "steps": report.steps,
        "episodes": report.episodes,
        "seconds": round(report.seconds, 3),
        "steps_per_second": round(report.steps_per_second, 1),
        "speed": report.speed(),  # the figure in the words of the report's summary line
        "out_of_time": report.out_of_time,
        **{name: round(getattr(report, name), 3)
           for name in ("setup_seconds", "rollout_seconds", "raw_steps_per_second", "raw_ratio")
           if hasattr(report, name)},
    }


def error_document(error: Any) -> dict[str, Any]:
    """A failed check (an EnvCheckError) as JSON data: the first broken property's fields
    at the top, every broken one in ``broken``, each property's verdict, the warnings."""
    first = broken_entry(error)
    return {
        "status": "failed",
        **first,
        "message": str(error),
        "broken": [first, *(broken_entry(e) for e in error.also)],
        "properties": list(error.held),
        "verdicts": error.verdicts(),
        "not_checked": dict(error.not_checked),
        "warnings": list(error.warnings),
        "examples": error.examples,
        "steps": error.steps,
        "episodes": error.episodes,
    }
