"""Which kind of Gymnasium (or legacy Gym) space a native environment declared.

PufferEnv accepts a Box observation space and a Discrete, MultiDiscrete or Box action
space. The legacy ``gym`` package is never imported here (see
:func:`spacealg.adapters.native.native_kind`, the one place that tells the families apart).
"""

from __future__ import annotations

from typing import Any

from spacealg.adapters.native import native_kind

__all__ = ["space_kind"]

_KINDS = ("Box", "Discrete", "MultiDiscrete")


def space_kind(space: Any) -> str | None:
    """``"Box"``, ``"Discrete"`` or ``"MultiDiscrete"`` for those Gymnasium/Gym spaces, else None."""
    kind = native_kind(space)
    return kind[1] if kind is not None and kind[1] in _KINDS else None
