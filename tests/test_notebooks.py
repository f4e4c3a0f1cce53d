"""Every notebook in notebooks/ executes without error, and each of its plots renders.

Notebooks are committed without outputs; this test runs them top to bottom in a fresh
``python3`` kernel of the current interpreter (ipykernel's own kernelspec, registered into
``sys.prefix`` if Jupyter cannot find it) with matplotlib's inline backend, which renders
figures to PNG through Agg.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
KERNEL = "python3"


def _ensure_kernel() -> None:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(KERNEL)
    except NoSuchKernel:
        from ipykernel.kernelspec import install

        install(prefix=sys.prefix, kernel_name=KERNEL)


def test_there_are_notebooks() -> None:
    names = {path.stem for path in NOTEBOOKS}
    assert {"01_tour", "02_gymnasium_pufferlib", "03_check_env"} <= names, names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs, f"{path.name}: clear outputs before committing"
            assert cell.execution_count is None, f"{path.name}: clear execution counts before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _ensure_kernel()
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend renders PNGs
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name=KERNEL, timeout=120, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    for number, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "plt.show()" in cell.source:
            rendered = sum("image/png" in output.get("data", {}) for output in cell.outputs)
            assert rendered > 0, f"{path.name}: the plot of cell {number} did not render"
