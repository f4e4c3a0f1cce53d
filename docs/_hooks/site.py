"""MkDocs hooks of the spacealg site (named in mkdocs.yml).

- The notebooks of ``notebooks/`` and the repository's ``CHANGELOG.md`` become pages
  (``notebooks/<name>/`` and ``changelog/``) without being copied into ``docs/``: one source
  each. mkdocs-jupyter renders the notebooks from their committed outputs.
- A guide in ``docs/*.md`` that the nav of mkdocs.yml does not name is added to its
  "Guides" section, so a new guide is never left out of the site (and never breaks the
  strict build by being absent from the nav).
- A relative link to a file outside ``docs/`` (a source file, a benchmark script, a
  notebook) works on GitHub as written; on the site it points at the mounted page where
  there is one, else at the file in the repository (``repo_url``).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MOUNTED = {  # repository path -> path inside the site's docs
    **{f"notebooks/{path.name}": f"notebooks/{path.name}" for path in NOTEBOOKS},
    "CHANGELOG.md": "changelog.md",
}
LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def _named_in(nav: Any) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(_named_in(v) for v in nav.values())) if nav else set()
    if isinstance(nav, list):
        return set().union(*(_named_in(v) for v in nav)) if nav else set()
    return set()


def _title(path: Path) -> str:
    """A page's first heading as plain text (a nav entry shows no Markdown: `jit` is jit)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return re.sub(r"`([^`]*)`", r"\1", line[2:]).strip()
    return path.stem.replace("_", " ").capitalize()


def on_config(config: Any) -> Any:
    nav = config["nav"]
    named = _named_in(nav)
    missing = [p for p in sorted(DOCS.glob("*.md")) if p.name not in named]
    for section in nav:
        if isinstance(section, dict) and "Guides" in section:
            section["Guides"].extend({_title(p): p.name} for p in missing)
        if isinstance(section, dict) and "Notebooks" in section and isinstance(section["Notebooks"], str):
            section["Notebooks"] = [section["Notebooks"], *(f"notebooks/{p.name}" for p in NOTEBOOKS)]
    return config


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns .ipynb files into pages
def on_files(files: Files, config: Any) -> Files:
    for source, target in MOUNTED.items():
        if (ROOT / source).is_file() and files.get_file_from_path(target) is None:
            files.append(File(target, src_dir=str(ROOT), dest_dir=config["site_dir"],
                              use_directory_urls=config["use_directory_urls"]))
            files.get_file_from_path(target).abs_src_path = str(ROOT / source)
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    source = page.file.abs_src_path
    if source is None:
        return markdown
    here = Path(source).parent
    page_dir = posixpath.dirname(page.file.src_uri)
    repository = config.get("repo_url") or ""

    def rewrite(match: re.Match[str]) -> str:
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = (here / path).resolve()
        try:
            relative = resolved.relative_to(ROOT).as_posix()
        except ValueError:
            return match.group(0)
        if resolved.is_relative_to(DOCS):
            if Path(source).is_relative_to(DOCS):
                return match.group(0)  # a link between pages of docs/: MkDocs checks it
            new = posixpath.relpath(resolved.relative_to(DOCS).as_posix(), page_dir or ".")
        elif relative in MOUNTED:
            new = posixpath.relpath(MOUNTED[relative], page_dir or ".")
        else:
            kind = "tree" if resolved.is_dir() else "blob"
            new = f"{repository.rstrip('/')}/{kind}/main/{relative}"
        return f"{match.group(1)}{new}{'#' + anchor if anchor else ''}{match.group(3)}"

    return LINK.sub(rewrite, markdown)
