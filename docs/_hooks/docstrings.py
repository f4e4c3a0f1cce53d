"""A griffe extension (named in mkdocs.yml) that lets spacealg's docstrings, written for
``help()`` and doctest, render as Markdown on the site without changing them in the code:

- a doctest block (``>>>`` lines, their ``...`` continuations and their output, up to a
  blank line) becomes a fenced ``pycon`` block;
- Sphinx roles (``:func:`x```, ``:class:`x```, ...) become inline code ``x``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj|const|py:\w+):`~?([^`]+)`")


def markdown_of(text: str) -> str:
    """The docstring ``text`` with doctest blocks fenced and Sphinx roles made code."""
    lines = text.splitlines()
    out: list[str] = []
    fence = False
    for line in lines:
        starts = line.lstrip().startswith(">>>")
        if starts and not fence:
            indent = line[: len(line) - len(line.lstrip())]
            if out and out[-1].strip():
                out.append("")
            out.append(f"{indent}```pycon")
            fence = True
        elif fence and not line.strip():
            out.append(f"{indent}```")
            fence = False
        out.append(line if fence else ROLE.sub(r"`\1`", line))
    if fence:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
