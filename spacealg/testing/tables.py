"""The table of properties of each kind of check (one place to look them up)."""

from __future__ import annotations

from spacealg.testing.engine.errors import AEC_PROPERTIES, PARALLEL_PROPERTIES, PROPERTIES

__all__ = ["properties_of"]


def properties_of(kind: str) -> dict[str, str]:
    """The properties checked for ``kind`` ("gymnasium", "parallel", "aec", "vector", "match", "dm_env", "torchrl")."""
    if kind == "parallel":
        return PARALLEL_PROPERTIES
    if kind == "aec":
        return AEC_PROPERTIES
    if kind == "vector":
        from spacealg.testing.kinds.vector import VECTOR_PROPERTIES

        return VECTOR_PROPERTIES
    if kind in ("dm_env", "torchrl"):
        from spacealg.testing.kinds.foreign import DM_ENV_PROPERTIES, TORCHRL_PROPERTIES

        return DM_ENV_PROPERTIES if kind == "dm_env" else TORCHRL_PROPERTIES
    if kind == "match":
        from spacealg.testing.kinds.match import MATCH_PROPERTIES

        return MATCH_PROPERTIES
    return PROPERTIES
