"""The documentation site builds with ``mkdocs build --strict`` (no broken link or anchor, no
warning from the API reference), and its API reference documents every public name.

Public names: ``__all__`` of ``spacealg`` and of the public subpackages (DESIGN.md), and the
``to_``/``from_`` functions of the optional adapters. Each must appear in the built API pages
(an anchor of its own) and have a docstring as the site reads it (griffe, with the site's
docstring extension). Skipped, saying why, where MkDocs and its plugins are not installed
(``pip install '.[docs]'``; the ``test`` extra has them).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE_PACKAGES = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "mkdocs_jupyter", "griffe")
MISSING = [name for name in SITE_PACKAGES if importlib.util.find_spec(name.split(".")[0]) is None]
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"the docs site needs {', '.join(MISSING)}: pip install '.[docs]'"
)

# module -> its page of the API reference (docs/api/<page>.md)
API_PAGES = {
    "spacealg": "spacealg",
    "spacealg.strategies": "strategies",
    "spacealg.testing": "testing",
    "spacealg.ops": "ops",
    "spacealg.emulation": "emulation",
    "spacealg.env": "env",
    "spacealg.wrappers": "wrappers",
    "spacealg.vector": "vector",
    "spacealg.compat": "compat",
    "spacealg.backends": "backends",
    "spacealg.serialize": "serialize",
}
ADAPTERS = ("dm_env", "torchrl", "gymnax", "jumanji")


def public_names() -> list[tuple[str, str, str]]:
    """(module, name, API page) for every public name."""
    names = []
    for module, page in API_PAGES.items():
        for name in importlib.import_module(module).__all__:
            names.append((module, name, page))
    for target in ADAPTERS:  # imported lazily: by name, without importing their packages
        for direction in ("from", "to"):
            names.append((f"spacealg.adapters.{target}", f"{direction}_{target}", "adapters"))
    return names


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once per session with --strict (any warning fails the build)."""
    where = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(where)],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    assert done.returncode == 0, "mkdocs build --strict failed:\n" + "\n".join(warnings or [done.stderr[-3000:]])
    return where


def test_the_site_builds_strictly(site: Path) -> None:
    assert (site / "index.html").is_file()
    for guide in sorted((ROOT / "docs").glob("*.md")):
        page = site / ("index.html" if guide.stem == "index" else f"{guide.stem}/index.html")
        assert page.is_file(), f"docs/{guide.name} is not a page of the site"


def test_the_notebooks_and_the_changelog_are_pages(site: Path) -> None:
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = (site / "notebooks" / notebook.stem / "index.html").read_text(encoding="utf-8")
        assert "data:image/png" in page or "<img" in page or notebook.stem != "01_tour", notebook.name
    assert "Changelog" in (site / "changelog" / "index.html").read_text(encoding="utf-8")


def test_every_public_name_is_in_the_api_reference(site: Path) -> None:
    pages = {page: (site / "api" / page / "index.html").read_text(encoding="utf-8") for page in set(API_PAGES.values())}
    pages["adapters"] = (site / "api" / "adapters" / "index.html").read_text(encoding="utf-8")
    missing = []
    for module, name, page in public_names():
        if f"{module}.{name}" in API_PAGES:  # a public subpackage: its own page
            continue
        anchors = set(re.findall(r'id="(spacealg[\w.]*)"', pages[page]))
        if f"{module}.{name}" not in anchors and not any(anchor.endswith(f".{name}") for anchor in anchors):
            missing.append(f"{module}.{name} (docs/api/{page}.md)")
    assert not missing, "public names missing from the API reference: " + ", ".join(missing)


def test_every_public_name_has_a_docstring() -> None:
    """As the site reads the code: statically, stubs merged, through the site's extension."""
    import griffe

    extension = griffe.load_extensions(f"{ROOT / 'docs' / '_hooks' / 'docstrings.py'}:DoctestBlocks")
    package = griffe.load("spacealg", search_paths=[str(ROOT)], extensions=extension, resolve_aliases=True,
                          resolve_external=False)
    undocumented = []
    for module, name, _ in public_names():
        path = f"{module}.{name}".split(".", 1)[1]
        value = getattr(importlib.import_module(module), name) if module in API_PAGES else None
        target = package[path] if path in _paths(package, path) else None
        if target is None or (target.is_module and not inspect.ismodule(value)):
            # exported through a module __getattr__, or named like its module: where it is defined
            target = package[f"{value.__module__}.{name}".split(".", 1)[1]]
        docstring = target.docstring
        if docstring is None or not docstring.value.strip():
            undocumented.append(f"{module}.{name}")
    assert not undocumented, "public names without a docstring: " + ", ".join(undocumented)


def _paths(package, path: str) -> set[str]:
    try:
        package[path]
    except KeyError:
        return set()
    return {path}


def test_every_api_page_is_generated_from_the_code() -> None:
    """The reference is written by mkdocstrings from the modules, not by hand, so a name
    added to a module's ``__all__`` appears on its page without editing the page."""
    for module, page in API_PAGES.items():
        text = (ROOT / "docs" / "api" / f"{page}.md").read_text(encoding="utf-8")
        assert re.search(rf"^::: {re.escape(module)}$", text, flags=re.MULTILINE), f"docs/api/{page}.md"


# -- generic functions render as functions; the nav shows plain titles (issue 36.6, 36.8) --------


def _generic_functions() -> list[tuple[str, object]]:
    """The generic functions among the top-level names (multipledispatch GenericFunction
    objects: ``sample``, ``contains``, ``clamp``, ...)."""
    import spacealg
    from spacealg.core.generic import GenericFunction

    found = [(name, getattr(spacealg, name)) for name in spacealg.__all__]
    return [(name, value) for name, value in found if isinstance(value, GenericFunction)]


def _heading(page: str, anchor: str) -> str:
    """The HTML of one object's entry on an API page: from its heading to the next one."""
    start = page.index(f'id="{anchor}"')
    end = page.find('<div class="doc doc-object', start)
    return page[start: end if end != -1 else len(page)]


def _text(html: str) -> str:
    import html as html_module

    return " ".join(html_module.unescape(re.sub(r"<[^>]+>", "", html)).split())


def test_generic_functions_are_functions_with_signatures_and_laws(site: Path) -> None:
    """``clamp`` and the other generic functions, which the stub declares as typed attributes
    for mypy, show as functions: the function symbol, the signature of their definition,
    the docstring with its laws, and no "module-attribute" label."""
    page = (site / "api" / "spacealg" / "index.html").read_text(encoding="utf-8")
    generic = _generic_functions()
    assert {"sample", "contains", "clamp", "isin", "bounds", "cardinality"} <= {name for name, _ in generic}
    for name, function in generic:
        entry = _heading(page, f"spacealg.{name}")
        assert "doc-symbol-function" in entry.split("</h2>")[0], f"{name} is not shown as a function"
        assert "module-attribute" not in entry and "GenericFunction" not in entry, name
        signature = _text(entry.split('<div class="doc-signature highlight">', 1)[1].split("</code>", 1)[0])
        parameters = list(inspect.signature(function).parameters)  # its definition's
        assert signature.startswith(f"{name}(") and all(p in signature for p in parameters), (name, signature)
        shown = _text(entry)
        for paragraph in inspect.getdoc(function).split("\n\n"):  # the docstring, laws and all
            if ">>>" not in paragraph:  # (a doctest becomes a code block)
                plain = re.sub(r":\w+:`~?([^`]+)`", r"\1", paragraph).replace("`", "")
                assert " ".join(plain.split()) in shown, f"{name}: not on its page: {paragraph!r}"


def test_the_navigation_shows_plain_titles(site: Path) -> None:
    """No nav entry shows Markdown (the JAX guide's title has `jit` in code)."""
    page = (site / "index.html").read_text(encoding="utf-8")
    nav = re.findall(r'<span class="md-ellipsis">\s*(.*?)\s*</span>', page, flags=re.DOTALL)
    assert "JAX environments" in nav and "JAX sweeps" in nav
    assert not [title for title in nav if "`" in title], nav


def test_the_jax_guide_is_short_and_its_sweeps_have_a_page(site: Path) -> None:
    guide = (ROOT / "docs" / "jax_envs.md").read_text(encoding="utf-8")
    assert len(guide.splitlines()) < 200 and "](jax_sweep.md" in guide
    assert "## The sweep" not in guide  # the sweeps' tables are on their own page
    sweeps = (site / "jax_sweep" / "index.html").read_text(encoding="utf-8")
    assert "gymnax" in sweeps and "Jumanji" in sweeps
