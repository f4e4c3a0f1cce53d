"""Execute the notebooks top to bottom and keep their outputs, so that the plots show
where people browse the repository (GitHub renders committed outputs).

    python notebooks/execute.py              # every notebook, written in place
    python notebooks/execute.py 01_tour      # some of them

``tests/test_notebooks.py`` runs the same execution (with a check that every plot has a
title, axis labels and a legend) and checks that the committed notebooks carry outputs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KERNEL = "python3"

#: Run before a notebook's first cell: every figure shown must teach (a title, axis
#: labels and a legend on each of its plots).
PLOT_CHECK = '''
import matplotlib.pyplot as _plt

_show = _plt.show


def _show_checked(*args, **kwargs):
    for number in _plt.get_fignums():
        figure = _plt.figure(number)
        suptitle = figure._suptitle.get_text() if figure._suptitle else ""
        for ax in figure.axes:
            if ax.get_label() == "<colorbar>":
                continue
            missing = [
                what
                for what, present in [
                    ("a title", ax.get_title() or suptitle),
                    ("an x label", ax.get_xlabel()),
                    ("a y label", ax.get_ylabel()),
                    ("a legend", ax.get_legend() is not None),
                ]
                if not present
            ]
            if missing:
                raise AssertionError(f"the plot {ax.get_title() or suptitle!r} lacks " + ", ".join(missing))
    return _show(*args, **kwargs)


_plt.show = _show_checked
'''


def ensure_kernel() -> None:
    """Register ipykernel's ``python3`` kernel for this interpreter if Jupyter lacks one."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(KERNEL)
    except NoSuchKernel:
        from ipykernel.kernelspec import install

        install(prefix=sys.prefix, kernel_name=KERNEL)


def execute(path: Path, *, check_plots: bool = True) -> Any:
    """The notebook at ``path``, executed in a fresh kernel (outputs filled in, not saved).

    Raises nbclient's CellExecutionError on the first failing cell, an unteaching plot
    included when ``check_plots``.
    """
    import nbclient
    import nbformat

    ensure_kernel()
    os.environ["PYTHONPATH"] = os.pathsep.join(  # the kernel imports this checkout's spacealg
        [str(HERE.parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    notebook = nbformat.read(path, as_version=4)
    if check_plots:
        notebook.cells.insert(0, nbformat.v4.new_code_cell(PLOT_CHECK))
    client = nbclient.NotebookClient(
        notebook, kernel_name=KERNEL, timeout=180, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    if check_plots:
        notebook.cells.pop(0)
        for number, cell in enumerate(c for c in notebook.cells if c.cell_type == "code"):
            cell.execution_count = number + 1
            for output in cell.outputs:
                if "execution_count" in output:
                    output["execution_count"] = number + 1
    return notebook


def main(names: list[str]) -> None:
    import nbformat

    os.environ.pop("MPLBACKEND", None)  # the kernel's inline backend renders PNGs
    paths = sorted(HERE.glob("*.ipynb"))
    if names:
        paths = [p for p in paths if p.stem in names or p.name in names]
    for path in paths:
        notebook = execute(path)
        nbformat.write(notebook, path)
        print(f"executed {path.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
