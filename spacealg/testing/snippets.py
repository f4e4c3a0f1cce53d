"""Reproduction snippets for :class:`EnvCheckError`: self-contained Python (numpy and the
environment's own imports only) that replays the failing seed and actions."""

from __future__ import annotations

from typing import Any

from spacealg.testing.errors import literal

__all__ = ["reproduction"]


def _actions_source(actions: list[Any]) -> list[str]:
    if not actions:
        return ["actions = []"]
    return ["actions = ["] + [f"    {literal(a)}," for a in actions] + ["]"]


def _single_episode() -> list[str]:
    return [
        "def episode():",
        "    observation, info = env.reset(seed=SEED)",
        "    trace = [observation]",
        "    for action in actions:",
        "        observation, reward, terminated, truncated, info = env.step(action)",
        "        trace.append((observation, reward, terminated, truncated, info))",
        "        if terminated or truncated:",
        "            observation, info = env.reset()",
        "            trace.append(observation)",
        "    return trace",
    ]


def _parallel_episode() -> list[str]:
    return [
        "def episode():",
        "    observations, infos = env.reset(seed=SEED)",
        "    trace = [(observations, list(env.agents))]",
        "    for action in actions:",
        "        observations, rewards, terminations, truncations, infos = env.step(action)",
        "        trace.append((observations, rewards, terminations, truncations, infos, list(env.agents)))",
        "        if not env.agents:",
        "            observations, infos = env.reset()",
        "            trace.append((observations, list(env.agents)))",
        "    return trace",
    ]


def reproduction(error: Any) -> str:
    """The snippet for ``error`` (an EnvCheckError)."""
    head = [
        f"# spacealg: property {error.property!r} failed {error._location()}",
        f"# law: {error.statement}",
    ]
    if error.parallel:
        head.append("# actions[k] is the dict of actions of the live agents at step k + 1")
    if not error.reproducible:
        head.append("# the environment is not deterministic: the failure may need several runs")
    lines = [*head, "import numpy as np"]
    if any("GraphInstance" in literal(a) for a in error.actions):
        lines.append("from gymnasium.spaces import GraphInstance")
    lines += [*error.imports, "", error.construction, f"SEED = {error.seed}"]
    lines += _actions_source(error.actions)
    lines.append("")
    lines += _parallel_episode() if error.parallel else _single_episode()
    lines.append("")
    if error.property.endswith("determinism"):
        lines += [
            "first, second = episode(), episode()",
            "print(len(first), len(second))",
            "for a, b in zip(first, second):  # the entries differ from the failing step on",
            "    print(a, b, sep='\\n', end='\\n\\n')",
        ]
    else:
        lines += [
            "trace = episode()",
            "print(trace[-1])",
        ]
    lines += [f"# expected: {error.statement}", *(f"# found: {line}" for line in error.detail.splitlines())]
    return "\n".join(lines) + "\n"
