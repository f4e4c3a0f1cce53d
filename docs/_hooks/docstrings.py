"""A griffe extension (named in mkdocs.yml) that lets spacealg's docstrings, written for
``help()`` and doctest, render as Markdown on the site without changing them in the code:

- a doctest block (``>>>`` lines, their ``...`` continuations and their output, up to a
  blank line) becomes a fenced ``pycon`` block;
- Sphinx roles (``:func:`x```, ``:class:`x```, ...) become inline code ``x``;
- a function that a stub file (``.pyi``) declares as a typed attribute (the generic
  functions of ``spacealg/core/protocol.pyi``, typed for mypy: ``clamp:
  GenericFunction[_Clamp]``) is documented as the function its ``.py`` file defines: its
  signature, return type and docstring (its laws), labelled ``generic`` (a multipledispatch
  function that dispatches on its arguments' types), where the stub alone would make it a
  "module-attribute" without either. ``tests/test_docs_site.py`` checks the built pages.
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
            code = source.read_text(encoding="utf-8")
            defined = _definitions(griffe.visit(module.name, filepath=source, code=code), ast.parse(code))
            for name, definition in defined.items():
                member = module.members.get(name)
                if member is None or member.is_alias or not member.is_attribute:
                    continue
                docstring = definition.docstring.value if definition.docstring else ""
                function = griffe.Function(
                    name,
                    lineno=definition.lineno,
                    endlineno=definition.endlineno,
                    parameters=definition.parameters,
                    returns=definition.returns,
                )
                function.docstring = griffe.Docstring(markdown_of(docstring), parent=function)
                function.labels = {"generic"}
                module.set_member(name, function)


def _definitions(visited: griffe.Module, tree: ast.Module) -> dict[str, griffe.Function]:
    """The functions a module defines at its top level, by the name they are bound to: a
    decorated ``def name`` as ``name``, and ``name = Wrapper(function, ...)`` as ``name``."""
    found = {name: member for name, member in visited.members.items() if not member.is_alias and member.is_function}
    for node in tree.body:  # ``name = Wrapper(function, ...)``: the function documents the name
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and node.value.args
                and isinstance(node.value.args[0], ast.Name) and node.value.args[0].id in found):
            found.setdefault(node.targets[0].id, found[node.value.args[0].id])
    return found  # type: ignore[return-value]


def _modules(module: griffe.Module) -> list[griffe.Module]:
    found = [module]
    for member in module.members.values():
        if not member.is_alias and member.is_module:
            found.extend(_modules(member))  # type: ignore[arg-type]
    return found
