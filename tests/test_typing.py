"""The package is typed: mypy is clean on spacealg/ and py.typed ships with it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_py_typed_marker_is_packaged() -> None:
    import spacealg

    assert (Path(spacealg.__file__).parent / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'spacealg = ["py.typed"]' in pyproject  # [tool.setuptools.package-data]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_is_clean_on_the_package() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "spacealg"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
