"""Infos between Gymnasium's vector form and PufferLib's list form.

Gymnasium's vector engines return one dict whose values are arrays over the environments,
each key ``k`` paired with a boolean mask ``_k`` saying which environments have it (nested
dicts likewise); PufferLib's return a list of dicts.
"""

from __future__ import annotations

from typing import Any

__all__ = ["info_rows"]


def info_rows(infos: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Gymnasium's vector infos as one dict per environment (``n`` dicts).

    Law: environment ``i``'s dict holds ``k: infos[k][i]`` exactly for the keys ``k`` (not
    starting with ``_``) whose mask ``infos["_" + k]`` is True at ``i``, or that have no mask;
    nested dicts recurse. Inverse of Gymnasium's ``VectorEnv._add_info`` on the keys it wrote
    (what ``gymnasium.wrappers.vector.DictInfoToList`` computes).
    """
    rows: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in infos.items():
        if key.startswith("_"):
            continue
        mask = infos.get(f"_{key}")
        per_env = info_rows(value, n) if isinstance(value, dict) else value
        for i in range(n):
            if mask is None or mask[i]:
                rows[i][key] = per_env[i]
    return rows
