"""Release hygiene: ``python -m build`` makes an sdist and a wheel that pass ``twine check``,
carry the metadata (one version, from ``spacealg/__init__.py``; URLs; classifiers; the
README as the description) and install: the wheel's own files import and run ``spacealg
--version``.

Built once per session. Skipped, saying why, where ``build`` or ``twine`` is not installed
(the ``test`` extra has both).
"""

from __future__ import annotations

import email.parser
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import spacealg

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [
    pytest.mark.release,
    pytest.mark.skipif(importlib.util.find_spec("build") is None, reason="needs build: pip install build"),
    pytest.mark.skipif(importlib.util.find_spec("twine") is None, reason="needs twine: pip install twine"),
]


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, built from a copy of the sources. Without build isolation
    where setuptools is installed (no download); isolated otherwise, as a release would."""
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source") / "spacealg"  # setuptools writes egg-info beside the sources
    junk = shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "build", "dist", "site", "resources")
    shutil.copytree(ROOT, source, ignore=junk)
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-isolation"]
    done = subprocess.run(
        [sys.executable, "-m", "build", *isolation, "--outdir", str(out), str(source)],
        capture_output=True, text=True, cwd=out,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, f"{pattern}: {found}"
    return found[0]


def test_twine_check_passes(dist: Path) -> None:
    files = [str(_one(dist, "*.whl")), str(_one(dist, "*.tar.gz"))]
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_metadata_has_one_version_urls_and_classifiers(dist: Path) -> None:
    wheel = _one(dist, "*.whl")
    assert wheel.name.startswith(f"spacealg-{spacealg.__version__}-")
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(name).decode())
    assert metadata["Version"] == spacealg.__version__
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload().lstrip().startswith("# spacealg")  # the README
    urls = dict(value.split(", ", 1) for value in metadata.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Repository", "Changelog"} <= set(urls)
    classifiers = metadata.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and metadata["License-Expression"] == "MIT"
    assert any(c.startswith("Programming Language :: Python :: 3.") for c in classifiers)


def test_the_wheel_and_the_sdist_hold_the_package(dist: Path) -> None:
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "spacealg").rglob("*") if p.suffix in (".py", ".pyi")}
    sources.add("spacealg/py.typed")
    with zipfile.ZipFile(_one(dist, "*.whl")) as archive:
        in_wheel = set(archive.namelist())
    assert sources <= in_wheel, sorted(sources - in_wheel)
    assert not any(name.startswith(("tests/", "benchmarks/", "docs/")) for name in in_wheel)
    with tarfile.open(_one(dist, "*.tar.gz")) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert sources <= in_sdist, sorted(sources - in_sdist)
    assert {"README.md", "pyproject.toml", "LICENSE", "CHANGELOG.md"} <= in_sdist


def test_the_wheel_installs_imports_and_runs(dist: Path, tmp_path: Path) -> None:
    """Installed on its own (its dependencies are this environment's), the wheel's copy of
    spacealg imports, not this checkout's, and its console script prints the version."""
    target = tmp_path / "installed"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(target),
         str(_one(dist, "*.whl"))],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "PYTHONPATH": str(target)}
    probe = "import spacealg, spacealg.testing, spacealg.emulation; print(spacealg.__file__, spacealg.__version__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    where, version = done.stdout.split()
    assert Path(where).is_relative_to(target) and version == spacealg.__version__
    script = subprocess.run([str(target / "bin" / "spacealg"), "--version"], capture_output=True, text=True, env=env,
                            cwd=tmp_path)
    assert script.returncode == 0, script.stderr
    assert script.stdout.strip() == f"spacealg {spacealg.__version__}"
