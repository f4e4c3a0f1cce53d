"""A griffe extension (named in mkdocs.yml) that lets spacealg's docstrings, written for
``help()`` and doctest, render as Markdown on the site without changing them in the code:

- a doctest block (``>>>`` lines, their ``...`` continuations and their output, up to a
  blank line) becomes a fenced ``pycon`` block;
- Sphinx roles (``:func:`x```, ``:class:`x```, ...) become inline code ``x``;
- a function that a stub file (``.pyi``) declares as a typed attribute (the generic
  functions of ``spacealg/core/protocol.pyi``, typed for mypy) keeps the docstring and the
  signature of its definition in the ``.py`` file, which the stub would otherwise hide.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
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

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for module in _modules(pkg):
            source = Path(str(module.filepath)) if module.filepath else None
            if source is None or source.suffix != ".py" or not source.with_suffix(".pyi").is_file():
                continue
            body = ast.parse(source.read_text(encoding="utf-8")).body
            defined = {node.name: node for node in body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
            for node in body:  # ``name = Wrapper(function, ...)``: the function documents the name
                if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                        and isinstance(node.value, ast.Call) and node.value.args
                        and isinstance(node.value.args[0], ast.Name) and node.value.args[0].id in defined):
                    defined.setdefault(node.targets[0].id, defined[node.value.args[0].id])
            for name, node in defined.items():
                if name not in module.members:
                    continue
                member = module.members[name]
                docstring = ast.get_docstring(node)
                if member.is_alias or member.docstring is not None or not docstring:
                    continue
                returns = f" -> {ast.unparse(node.returns)}" if getattr(node, "returns", None) else ""
                head = f"{name}({ast.unparse(node.args)}){returns}" if isinstance(node, ast.FunctionDef) else ""
                text = f"```python\n{head}\n```\n\n{docstring}" if head else docstring
                member.docstring = griffe.Docstring(markdown_of(text), parent=member)


def _modules(module: griffe.Module) -> list[griffe.Module]:
    found = [module]
    for member in module.members.values():
        if not member.is_alias and member.is_module:
            found.extend(_modules(member))  # type: ignore[arg-type]
    return found
