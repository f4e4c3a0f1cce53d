"""Whether a difference between two runs of one step is rounding: the step's own sensitivity.

Compiled, batched and eager code round differently (XLA fuses and reorders sums and products
under ``jit`` and ``vmap``), and a step that iterates (a physics engine's substeps, its
constraint solver) can amplify those last-bit differences past any fixed tolerance within a
single step: Brax's ant, stepped under ``vmap`` and alone from the same state, differs by
2e-5 in its observation after one step, as much as moving every input by one part in 2**23
does. :func:`sensitivity` measures that amplification: it runs the compiled step from the
given state and from three copies of it whose floating-point leaves are moved by one relative
rounding unit (``x * (1 + eps)``, ``x * (1 - eps)``, and a fixed random choice of the two per
entry; zeros, integers, bools and keys are left as they are, so flags and counters keep their
meaning), and gives, per output leaf, the largest change each entry saw. :func:`within`
accepts a difference no larger than ``SLACK`` times that, plus the fixed tolerance.

Laws: ``within(a, a, s)`` for every ``a``; integer and bool leaves must be equal, whatever
the sensitivity; a step that does not amplify rounding (sensitivity about one unit of its
outputs) is held to the fixed tolerance ``rtol=1e-5, atol=1e-6``; a difference larger than
``SLACK`` times what one-unit input changes make is never rounding.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["SLACK", "sensitivity", "within"]

SLACK = 4.0
"""How many times the largest one-unit change a difference may be and still be rounding."""


def _moved(tree: Any, how: str) -> Any:
    rng = np.random.default_rng(0)

    def move(leaf: Any) -> Any:
        if not hasattr(leaf, "dtype") or not jnp.issubdtype(leaf.dtype, jnp.floating):
            return leaf
        eps = float(jnp.finfo(leaf.dtype).eps)
        signs = {"up": np.ones(()), "down": -np.ones(())}.get(how)
        if signs is None:
            signs = np.where(rng.random(np.shape(leaf)) < 0.5, 1.0, -1.0)
        return (leaf * jnp.asarray(1 + eps * signs, leaf.dtype)).astype(leaf.dtype)

    return jax.tree.map(move, tree)


def sensitivity(step: Any, state: Any, *args: Any) -> tuple[Any, Any]:
    """``(out, change)``: the output of ``step(state, *args)`` (the compiled step's second
    result) and, per leaf of it, the largest absolute change of each entry when the state's
    floating-point leaves move by one rounding unit (zeros for leaves that are not floats)."""
    out = jax.device_get(step(state, *args)[1])
    moved = [jax.device_get(step(_moved(state, how), *args)[1]) for how in ("up", "down", "random")]

    def change(base: Any, *others: Any) -> np.ndarray:
        base = np.asarray(base)
        if base.dtype.kind != "f":
            return np.zeros(base.shape)
        diffs = [np.abs(np.asarray(o, np.float64) - base.astype(np.float64)) for o in others]
        return np.nan_to_num(np.max(diffs, axis=0), nan=0.0, posinf=0.0)

    return out, jax.tree.map(change, out, *moved)


def within(first: Any, second: Any, change: Any, rtol: float, atol: float) -> bool:
    """Whether the pytrees ``first`` and ``second`` (``second`` the reference) differ by no
    more than rounding: equal structure, shapes and dtypes, equal integers and bools, and
    floats within ``atol + rtol * |second| + SLACK * change`` entry by entry."""
    shapes = {str(jax.tree.structure(tree)) for tree in (first, second, change)}
    if len(shapes) != 1:
        return False
    for a, b, c in zip(jax.tree.leaves(first), jax.tree.leaves(second), jax.tree.leaves(change)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind not in "fc":
            if not np.array_equal(a, b):
                return False
            continue
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
        allowed = atol + rtol * np.abs(b64) + SLACK * np.asarray(c, np.float64)
        if not np.all(same | (np.abs(a64 - b64) <= allowed)):
            return False
    return True
