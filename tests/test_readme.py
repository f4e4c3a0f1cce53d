"""Every code block of README.md and docs/*.md runs as written (so the guides cannot drift
from the code).

- ``python`` blocks run, each in a fresh namespace (a block must carry its own imports); a
  block written as a doctest (``>>>`` prompts) must also print what it shows.
- ``json`` blocks parse; ``bash`` blocks pass ``bash -n``; in ``console`` blocks every
  ``$ spacealg ...`` line parses with the real command line (so documented options exist)
  and every ``$ python path/to/script.py`` names a script that exists.
- Output samples (``text`` or no language) are not code.

A block that needs an optional package names the extra that installs it, from a clone, on a
comment line of its own (``tests`` checks it against the block's imports, both ways)::

    # needs: pip install '.[pettingzoo,check]'

Opt-out marker, on the line right above a block's fence, for a block that needs an optional
package CI does not install (the block runs wherever the packages are importable)::

    <!-- docs-test: requires jumanji, gymnax -->

and, for a fragment that cannot run on its own, with the reason (keep these rare)::

    <!-- docs-test: skip (the reason) -->
"""

from __future__ import annotations

import ast
import doctest
import json
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# a fenced block, at the margin or indented (inside a content tab of the site)
FENCE = re.compile(r"^([ \t]*)```([\w+-]*)[^\n]*\n(.*?)^\1```[ \t]*$", flags=re.DOTALL | re.MULTILINE)
MARKER = re.compile(r"<!--\s*docs-test:\s*(requires|skip)\b\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    code: str
    marker: tuple[str, str] | None

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        above = text[: match.start()].rstrip("\n").rpartition("\n")[2]
        marker = MARKER.search(above)
        code = textwrap.dedent(match.group(3))
        found.append(Block(path, line, match.group(2).lower(), code, marker.groups() if marker else None))
    return found


BLOCKS = [block for path in DOCUMENTS for block in _blocks(path)]
PYTHON = [block for block in BLOCKS if block.language in ("python", "py", "pycon")]


def _honour_marker(block: Block) -> None:
    if block.marker is None:
        return
    kind, detail = block.marker
    if kind == "skip":
        pytest.skip(f"{block.name}: {detail or 'marked skip'}")
    for package in re.split(r"[,\s]+", detail.strip()):
        if package:
            pytest.importorskip(package)


def test_the_documents_have_code_blocks():
    assert len([b for b in PYTHON if b.path.name == "README.md"]) >= 3
    assert {b.path.name for b in PYTHON} >= {"README.md", "ops.md", "gymnasium.md", "declarative.md"}


def test_markers_are_well_formed():
    for path in DOCUMENTS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("<!--") and "docs-test" in line:
                assert MARKER.search(line), f"{path.name}:{number}: malformed marker {line!r}"


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.name)
def test_python_block_runs(block: Block, tmp_path, monkeypatch):
    _honour_marker(block)
    for extra in sorted(extras_needed(block.code)):  # skipped, naming the package, without an extra
        for package in PACKAGES_OF[extra]:
            pytest.importorskip(package)
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    module = types.ModuleType("docs_example")  # a real module: dataclasses and pickle look classes up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    if re.search(r"^\s*>>> ", block.code, flags=re.MULTILINE):
        parser = doctest.DocTestParser()
        test = parser.get_doctest(block.code, module.__dict__, block.name, str(block.path), block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        failures: list[str] = []
        runner.run(test, out=failures.append)
        assert runner.failures == 0, "".join(failures)
    else:
        exec(compile(block.code, block.name, "exec"), module.__dict__)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.language == "json"], ids=lambda b: b.name)
def test_json_block_parses(block: Block):
    json.loads(block.code)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("block", [b for b in BLOCKS if b.language in ("bash", "sh", "shell")], ids=lambda b: b.name)
def test_bash_block_is_valid_shell(block: Block):
    done = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.language == "console"], ids=lambda b: b.name)
def test_console_commands_exist(block: Block):
    from spacealg.cli import build_parser

    for line in block.code.splitlines():
        if not line.startswith("$ "):
            continue
        words = shlex.split(line[2:], comments=True)  # as a shell reads it
        if words[0] == "spacealg":
            build_parser().parse_args(words[1:])  # SystemExit(2) for an undocumented option
        elif words[0] in ("python", "python3") and words[1].endswith(".py"):
            assert (ROOT / words[1]).is_file(), f"{block.name}: no script {words[1]}"


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_tables_are_well_formed(path: Path):
    """Every row of a Markdown table has the header's cells, and no cell is cut off at an
    escaped pipe (a cell ending in a backslash)."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    for table in re.findall(r"(?:^\|.*\|[ \t]*\n)+", text, flags=re.MULTILINE):
        rows = table.strip("\n").splitlines()
        width = len(_cells(rows[0]))
        for row in rows:
            cells = _cells(row)
            assert len(cells) == width, f"{path.name}: {row!r} has {len(cells)} cells, the header {width}"
            assert not any(cell.endswith("\\") for cell in cells), f"{path.name}: a cell is cut off in {row!r}"


def _install_steps(command: str) -> list[str]:
    """The install commands of a line or script, as typed without ``python -m`` and ``--quiet``."""
    steps = []
    for step in command.replace(" && ", "\n").splitlines():
        words = [w for w in step.split() if w != "--quiet"]
        if words[:2] == ["python", "-m"]:
            words = words[2:]
        if words[:2] == ["pip", "install"] or words[:3] == ["uv", "pip", "install"]:
            steps.append(" ".join(words))
    return steps


CPU_ONLY = "--torch-backend cpu"  # uv's switch to torch's CPU-only build (issue 36.1)


def test_the_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    two = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    install, test, cpu = [line for line in two.splitlines() if line.startswith("python3 -m venv")]
    # the CPU-only line is the test command with torch's CPU build, and nothing else changed
    cpu_steps, test_steps = _install_steps(cpu), _install_steps(test)
    assert CPU_ONLY not in test and [step.replace(f" {CPU_ONLY}", "") for step in cpu_steps] == test_steps
    assert [step for step in cpu_steps if CPU_ONLY in step] == [next(s for s in cpu_steps if "'.[test]'" in s)]
    assert cpu.rpartition(" && ")[2] == test.rpartition(" && ")[2]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = test.rpartition(" && ")[2]
    assert ci.rstrip().splitlines()[-1] == test_command
    # CI installs with the README's commands, in their order: the project from its own files
    steps = _install_steps(test)
    assert any("'.[test]'" in step for step in steps) and _install_steps(ci) == steps
    assert "'.[check]'" in install  # spacealg check works after the first command
    for document in ("docs/install.md",):  # the other page that states the two commands
        text = (ROOT / document).read_text(encoding="utf-8")
        assert {install, test, cpu} <= set(text.splitlines()), document


# -- every block names the extras it needs (issue 26.4) ------------------------------------------
# module (or module prefix) a block imports -> the extra of pyproject.toml that installs it
EXTRA_OF = {
    "hypothesis": "check",
    "spacealg.testing": "check",
    "spacealg.strategies": "check",
    "pettingzoo": "pettingzoo",
    "gym": "gym",
    "torch": "torch",
    "spacealg.backends": None,  # the backend's own import names its extra
    "jax": "jax",
    "dm_env": "dm_env",
    "spacealg.adapters.dm_env": "dm_env",
    "torchrl": "torchrl",
    "tensordict": "torchrl",
    "spacealg.adapters.torchrl": "torchrl",
    "gymnax": "gymnax",
    "spacealg.adapters.gymnax": "gymnax",
    "jumanji": "jumanji",
    "spacealg.adapters.jumanji": "jumanji",
    "pgx": "pgx",
    "ray.rllib": "rllib",
    "ray": "ray",
    "spacealg.vector.ray_actors": "ray",
    "matplotlib": "notebooks",
}
# extra -> the packages whose import shows it is installed (a block needing it skips without them)
PACKAGES_OF = {
    "check": ("hypothesis",),
    "pettingzoo": ("pettingzoo",),
    "gym": ("gym",),
    "torch": ("torch",),
    "jax": ("jax",),
    "dm_env": ("dm_env",),
    "torchrl": ("torchrl", "tensordict"),
    "gymnax": ("gymnax",),
    "jumanji": ("jumanji",),
    "pgx": ("pgx",),
    "rllib": ("ray.rllib",),
    "ray": ("ray",),
    "notebooks": ("matplotlib",),
}
NEEDS = re.compile(r"^\s*(?:>>> )?# needs: pip install '\.\[([\w,-]+)\]'\s*$", flags=re.MULTILINE)


def _imported(code: str) -> set[str]:
    if re.search(r"^\s*>>> ", code, flags=re.MULTILINE):  # a doctest: its source lines only
        code = "\n".join(line.strip()[4:] for line in code.splitlines() if line.strip()[:4] in (">>> ", "... "))
    source = code
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            reference = re.fullmatch(r"([A-Za-z_][\w.]*):[A-Za-z_]\w*", node.value)  # "module:factory"
            if reference:
                names.add(reference.group(1))
            jax_id = re.fullmatch(r"(gymnax|jumanji|pgx):\S+", node.value)  # an id of a JAX env library
            if jax_id:
                names.add(jax_id.group(1))
    return names


def extras_needed(code: str) -> set[str]:
    """The extras a block's imports need: for each imported module, the longest prefix of
    :data:`EXTRA_OF` that names it."""
    needed = set()
    for name in _imported(code):
        prefixes = [key for key in EXTRA_OF if name == key or name.startswith(key + ".")]
        if prefixes and (extra := EXTRA_OF[max(prefixes, key=len)]) is not None:
            needed.add(extra)
    return needed


def test_the_extras_named_are_extras_of_the_project():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11's")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {extra for extra in EXTRA_OF.values() if extra} <= set(extras)
    assert {extra for extra in EXTRA_OF.values() if extra} == set(PACKAGES_OF)
    for block in PYTHON:
        for named in NEEDS.findall(block.code):
            assert set(named.split(",")) <= set(extras), f"{block.name}: no such extra in {named!r}"


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: b.name)
def test_a_block_names_the_extras_it_needs(block: Block):
    """A reader who installed one extra knows before running a block whether it will import:
    a block whose imports need extras says which in one ``# needs:`` line, and one that
    needs none (``pip install .``) says nothing."""
    needed = extras_needed(block.code)
    named = NEEDS.findall(block.code)
    assert len(named) <= 1, f"{block.name}: one '# needs:' line, not {len(named)}"
    stated = set(named[0].split(",")) if named else set()
    want = f"# needs: pip install '.[{','.join(sorted(needed))}]'" if needed else "no '# needs:' line"
    assert stated == needed, f"{block.name}: its imports need {sorted(needed)}; write {want}"


def test_the_extras_rule_reads_imports():
    code = "import numpy as np\nfrom pettingzoo.classic import tictactoe_v3\nfrom spacealg.testing import check\n"
    assert extras_needed(code) == {"pettingzoo", "check"}
    assert extras_needed(">>> import torch\n>>> 1\n1\n") == {"torch"}
    assert extras_needed("from ray.rllib.algorithms.ppo import PPOConfig\n") == {"rllib"}
    assert extras_needed("import spacealg.adapters.torchrl\n") == {"torchrl"}
    assert extras_needed("import gymnasium\nimport spacealg\n") == set()
    assert extras_needed("check('pettingzoo.classic.tictactoe_v3:env')") == {"pettingzoo"}


def test_install_advice_works_from_a_clone():
    """``pip install 'spacealg[x]'`` needs spacealg on an index; a clone installs ``'.[x]'``."""
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        found = re.findall(r"pip install [\"']?spacealg\[", text)
        assert not found, f"{path.name}: write pip install '.[extra]' (from the clone), not {found[0]!r}"
