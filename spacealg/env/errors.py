"""The environment layer's errors (PufferLib's ``pufferlib.exceptions`` names).

``APIUsageError`` is a RuntimeError and ``InvalidAgentError`` a ValueError, as in PufferLib,
so ``except`` clauses written for PufferLib keep working after switching imports.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["APIUsageError", "InvalidAgentError"]


class APIUsageError(RuntimeError):
    """An environment was defined or driven against the API (e.g. step() before reset())."""

    def __init__(self, message: str = "API usage error.") -> None:
        self.message = message
        super().__init__(message)


class InvalidAgentError(ValueError):
    """An agent id that the environment does not have; the message lists the valid ids."""

    def __init__(self, agent_id: Any, agents: Iterable[Any]) -> None:
        self.agent_id = agent_id
        self.agents = list(agents)
        super().__init__(f"Invalid agent/team {agent_id!r}; valid agents: {self.agents}")
