"""A batch's first leaf array, and the table of what each kind's leaf model is on the backends
(the trees of leaf models are the plan's: :func:`spacealg.core.plan.plan_for` ``(...).tree``).

Every batched operation on torch and JAX (``sample``, ``isin``, ``clamp``,
``flatten_batch``, the emulation codec) is written once against the leaf model,
:class:`spacealg.core.leaf.LeafModel` (one registration per kind, at the end of the kind's
module in ``spacealg/spaces/``), read as NumPy's flattening and emulation read it:

===================================  ========  ================================================
space                                members   values (per entry)
===================================  ========  ================================================
``Box`` (float)                      REAL      ``low..high`` in its dtype
``Box`` (int, bool)                  INTEGERS  integers ``low..high``
``Interval``                         REAL      float64, open ends excluded
``range(a, b, step)``                INTEGERS  ``a + step * k``, int64
``Categorical`` (Discrete/MD forms)  INTEGERS  ``start..start+nvec-1``
``FiniteSet`` of numbers             NUMBERS   its items (their NumPy dtype)
``ArraySpace(base, *d)``             base's    the base's, on every entry
``TupleProduct``/``DictProduct``     tree      per component
OneOf, Sequence, Graph, Text,        —         TypeError naming the kind and the backend
FiniteSet of labels                            (their batches are object arrays)
===================================  ========  ================================================

Gymnasium and Gym spaces reach these rules through :func:`~spacealg.core.generic.as_space`,
keeping their own dtype.
"""

from __future__ import annotations

from typing import Any

__all__ = ["first_array"]


def first_array(batch: Any) -> Any:
    """The first leaf array of a batch (tuples, lists and dicts of arrays), depth first."""
    while isinstance(batch, (tuple, list, dict)):
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
    return batch
