"""docs/layout.md is true to the tree.

Laws: every module the layout names (``name.py`` in a package's entry of its tree, and
``package/name.py`` anywhere in the page) is a file of that package; every package of
``spacealg`` (a folder with an ``__init__.py``, at any depth) is named, a top-level one by its
own entry (``  core/``) and a nested one in its parent's (``jax_env/``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "spacealg"
LAYOUT = ROOT / "docs" / "layout.md"


def _tree() -> list[str]:
    """The lines of the layout's tree (its first fenced block)."""
    text = LAYOUT.read_text()
    start = text.index("```\n") + 4
    return text[start : text.index("```", start)].splitlines()


def _entries() -> dict[str, str]:
    """Each ``spacealg`` entry of the tree (``core``, ``declarative.py``) -> its text."""
    entries: dict[str, str] = {}
    current = None
    for line in _tree():
        head = re.match(r"^  (\w+(?:/|\.py))", line)
        if head:
            current = head.group(1).rstrip("/")
            entries[current] = line[len(head.group(0)) :]
        elif line.startswith("   ") and current is not None:
            entries[current] += "\n" + line
        else:  # a line at the margin: spacealg/ itself, or tests/, benchmarks/...
            current = None
    return entries


def test_every_module_the_tree_names_exists() -> None:
    entries = _entries()
    missing = []
    for entry, text in entries.items():
        if entry.endswith(".py"):
            if not (PACKAGE / entry).is_file():
                missing.append(entry)
            continue
        assert (PACKAGE / entry / "__init__.py").is_file(), f"docs/layout.md names a package {entry}/ that is not one"
        for name in re.findall(r"(?<![\w/.])(\w+(?:/\w+)*\.pyi?)\b", text):
            path = ROOT / name if name.startswith("spacealg/") else PACKAGE / entry / name
            if not path.is_file():
                missing.append(f"{entry}/{name}")
        for name in re.findall(r"(?<![\w/.])(\w+)/(?=[\s,;:)(])", text):
            if not (PACKAGE / entry / name / "__init__.py").is_file():
                missing.append(f"{entry}/{name}/")
    assert not missing, f"docs/layout.md names modules the tree lacks: {missing}"


def test_every_path_the_page_names_exists() -> None:
    text = LAYOUT.read_text()
    packages = "|".join(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    named = re.findall(rf"(?<![\w/])((?:spacealg/)?(?:{packages})/[\w/]+\.pyi?)\b", text)
    missing = sorted({n for n in named if not (ROOT / n if n.startswith("spacealg/") else PACKAGE / n).is_file()})
    assert named and not missing, f"docs/layout.md names modules the tree lacks: {missing}"


def test_every_package_is_named() -> None:
    entries = _entries()
    unnamed = []
    for init in PACKAGE.rglob("__init__.py"):
        package = init.parent.relative_to(PACKAGE)
        if package == Path("."):
            continue
        top, *rest = package.parts
        if top not in entries or (rest and not re.search(rf"(?<![\w/]){re.escape('/'.join(rest))}/", entries[top])):
            unnamed.append(str(package))
    assert not unnamed, f"docs/layout.md does not name the packages {unnamed}"


def test_the_checks_fail_on_a_layout_that_is_not_true(monkeypatch, tmp_path) -> None:
    """The laws above can fail: a layout naming a module that is gone, or leaving a package out."""
    import pytest

    page = LAYOUT.read_text()
    wrong = tmp_path / "layout.md"
    wrong.write_text(page.replace("plan.py", "plans.py", 1))
    monkeypatch.setattr(sys.modules[__name__], "LAYOUT", wrong)
    with pytest.raises(AssertionError, match=r"plans\.py"):
        test_every_module_the_tree_names_exists()
    wrong.write_text(re.sub(r"^  serialize/.*$", "  nothing.py", page, flags=re.M))
    with pytest.raises(AssertionError, match="serialize"):
        test_every_package_is_named()
