"""A sweep's rows as a report a person reads: a Markdown table (one row per environment:
its verdict, broken properties, steps/s, seconds compiling and in all) and below it each
failure's message, or the same as a JSON summary; :func:`write_between_markers` puts the
Markdown into a page between two markers, so a docs page is generated from committed
results.

Laws: the report depends on the rows only (no clock, no machine): the same results file
gives the same text; rows are ordered by id (so the rows of one library stand together,
whatever order the workers finished them in), one per id (the last line of an id wins).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from spacealg.sweep.isolated import verdict_of

__all__ = ["BEGIN", "END", "STATUSES", "markdown", "ordered", "section", "summary", "write_between_markers"]

STATUSES = ("passed", "failed", "cannot make", "timeout", "crashed", "error")
"""The statuses of a row, in the order the summary counts them."""

BEGIN = "<!-- spacealg report {source}: generated, do not edit by hand -->"
END = "<!-- end of spacealg report -->"


def ordered(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per id (the last given), ordered by id."""
    last = {row["env_id"]: row for row in rows}
    return sorted(last.values(), key=lambda row: row["env_id"])


def _number(value: Any, digits: int) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows: Iterable[dict[str, Any]]) -> str:
    """The table, a line of counts, and each failure's message (see the module docstring)."""
    rows = ordered(rows)
    lines = [
        "| env | verdict | broken properties | steps/s | compile s | total s |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        broken = ", ".join(entry["property"] for entry in row.get("broken", []))
        lines.append(
            f"| {_cell(row['env_id'])} | {_cell(verdict_of(row))} | {_cell(broken)} | "
            f"{_number(row.get('steps_per_second'), 0)} | {_number(row.get('compile_seconds'), 1)} | "
            f"{_number(row.get('seconds'), 1)} |"
        )
    lines += ["", _counts(summary(rows)["counts"], len(rows))]
    for row in rows:
        for entry in row.get("broken", []):
            lines += ["", f"### {row['env_id']}: {entry['property']}", "", "```text", entry.get("message", "").rstrip(),
                      "```"]
        if row["status"] not in ("passed", "failed") and row.get("message"):
            lines += ["", f"### {row['env_id']}: {row['status']}", "", "```text", row["message"].rstrip(), "```"]
    return "\n".join(lines) + "\n"


def _counts(counts: dict[str, int], total: int) -> str:
    return ", ".join(f"{n} {status}" for status, n in counts.items() if n) + f" of {total} environments"


def summary(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The JSON summary: the counts by status, and per environment its status, verdict,
    broken properties, steps/s and seconds."""
    rows = ordered(rows)
    return {
        "counts": {status: sum(row["status"] == status for row in rows) for status in STATUSES},
        "environments": [
            {
                "env_id": row["env_id"],
                "status": row["status"],
                "verdict": verdict_of(row),
                "broken": [entry["property"] for entry in row.get("broken", [])],
                "steps_per_second": row.get("steps_per_second"),
                "compile_seconds": row.get("compile_seconds"),
                "seconds": row.get("seconds"),
            }
            for row in rows
        ],
    }


def write_between_markers(page: str, text: str, source: str) -> bool:
    """Replace what lies between the markers of ``source`` in the file ``page`` with
    ``text``; True when the page changed. ValueError when the page lacks the markers
    (``BEGIN`` with ``source``, then ``END``)."""
    with open(page, encoding="utf-8") as handle:
        old = handle.read()
    begin = BEGIN.format(source=source)
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(END), re.DOTALL)
    if not pattern.search(old):
        raise ValueError(f"{page} has no section between {begin!r} and {END!r}")
    new = pattern.sub(lambda _: f"{begin}\n\n{text.strip()}\n\n{END}", old, count=1)
    if new != old:
        with open(page, "w", encoding="utf-8") as handle:
            handle.write(new)
    return new != old


def section(page: str, source: str) -> str:
    """The text between the markers of ``source`` in ``page`` (what :func:`write_between_markers`
    wrote), stripped; ValueError without them."""
    with open(page, encoding="utf-8") as handle:
        text = handle.read()
    begin = BEGIN.format(source=source)
    match = re.search(re.escape(begin) + r"\n(.*?)" + re.escape(END), text, re.DOTALL)
    if match is None:
        raise ValueError(f"{page} has no section between {begin!r} and {END!r}")
    return match.group(1).strip()
