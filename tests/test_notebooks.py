"""Every notebook in notebooks/ executes without error, every plot teaches, and the
committed notebooks carry their outputs (so the plots show where people browse).

The notebooks run top to bottom in a fresh ``python3`` kernel of the current interpreter
(``notebooks/execute.py``, the script that also writes the published outputs) with
matplotlib's inline backend, which renders figures to PNG; a check run before the first
cell fails any ``plt.show()`` whose plots lack a title, axis labels or a legend.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

FOLDER = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))


def _executor():
    spec = importlib.util.spec_from_file_location("notebooks_execute", FOLDER / "execute.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _plot_cells(notebook) -> list[int]:
    return [
        number for number, cell in enumerate(notebook.cells) if cell.cell_type == "code" and "plt.show()" in cell.source
    ]


def test_there_are_notebooks() -> None:
    names = {path.stem for path in NOTEBOOKS}
    assert {"01_tour", "02_gymnasium_pufferlib", "03_check_env"} <= names, names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_published_executed(path: Path) -> None:
    """Committed with the outputs of one run top to bottom: every code cell ran, in order,
    and every plot is there as a PNG (regenerate with ``python notebooks/execute.py``)."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1)), (
        f"{path.name}: run python notebooks/execute.py to publish it executed"
    )
    for number in _plot_cells(notebook):
        outputs = notebook.cells[number].outputs
        assert any("image/png" in output.get("data", {}) for output in outputs), f"{path.name}: cell {number}"
    for cell in code:
        assert not any(output.get("output_type") == "error" for output in cell.outputs), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_and_its_plots_teach(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend renders PNGs
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    monkeypatch.setenv("PYTHONPATH", "")  # execute() puts this checkout first; restored after
    executed = _executor().execute(path)  # CellExecutionError on a failing cell or an unteaching plot
    plots = _plot_cells(executed)
    assert plots or path.stem != "01_tour"
    for number in plots:
        rendered = sum("image/png" in output.get("data", {}) for output in executed.cells[number].outputs)
        assert rendered > 0, f"{path.name}: the plot of cell {number} did not render"


def test_the_plot_check_refuses_a_plot_without_labels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("PYTHONPATH", "")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2])\nax.set_title('t')\nplt.show()"
        )
    ]
    path = tmp_path / "bare.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="lacks an x label, a y label, a legend"):
        _executor().execute(path)
