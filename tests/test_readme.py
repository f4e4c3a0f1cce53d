"""The README's Python examples run as written (so the guide cannot drift from the code)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_readme_example_runs(number):
    exec(compile(BLOCKS[number], f"README.md example {number}", "exec"), {"__name__": "readme_example"})
