"""The generated sections of a Markdown page that a benchmark's ``--write`` refreshes: the
text between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``, replaced whole.

Laws: after ``write_section(path, name, text)`` the section holds ``text`` and everything
outside the markers is as it was (so writing twice leaves the second text); a page without
the markers is left untouched and named in a SystemExit."""

from __future__ import annotations

from pathlib import Path

__all__ = ["markers", "write_section"]


def markers(name: str) -> tuple[str, str]:
    """The begin and end markers of section ``name``."""
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def write_section(path: Path, name: str, text: str) -> None:
    """Replace the text between the markers of section ``name`` of ``path`` with ``text``."""
    begin, end = markers(name)
    document = path.read_text()
    if begin not in document or end not in document:
        raise SystemExit(f"{path} has no {begin} ... {end} markers")
    head, rest = document.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{text}\n{end}{tail}")
