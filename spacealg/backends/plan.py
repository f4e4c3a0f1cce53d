"""The per-space plans the torch/JAX operations compile into: :mod:`spacealg.core.plan`'s.

There is one plan per space (:func:`~spacealg.core.plan.plan_for`): the backends' kernels
are its variants, keyed ``(operation, dtypes, backend, device...)``, next to the flat codec
and the emulation codecs of the same space. Laws: those of :mod:`spacealg.core.plan`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spacealg.core.plan import Plan, plan_for

__all__ = ["Plan", "plan_for", "variant"]


def variant(space: Any, plan: Plan, key: Any, build: Callable[[], Any]) -> Any:
    """``plan.variant(key, build)``: the compiled function kept in ``space``'s plan."""
    return plan.variant(key, build)
