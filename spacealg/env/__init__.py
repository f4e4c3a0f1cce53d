"""PufferLib's native environment layer: ``PufferEnv``, ``set_buffers`` and the errors."""

from spacealg.env.buffers import set_buffers
from spacealg.env.errors import APIUsageError, InvalidAgentError
from spacealg.env.puffer_env import PufferEnv

__all__ = ["APIUsageError", "InvalidAgentError", "PufferEnv", "set_buffers"]
