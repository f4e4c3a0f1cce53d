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


def _aec_episode() -> list[str]:
    return [
        "def episode():",
        "    env.reset(seed=SEED)",
        "    trace = []",
        "    for action in actions:  # None: the selected agent has ended and is stepped with None",
        "        if not env.agents:",
        "            env.reset()",
        "        agent = env.agent_selection",
        "        observation, reward, terminated, truncated, info = env.last()",
        "        env.step(action)",
        "        trace.append((agent, observation, reward, terminated, truncated, info))",
        "        if not env.agents:",
        "            env.reset()",
        "    return trace",
    ]


def _vector_episode() -> list[str]:
    return [
        "from gymnasium.vector.utils import concatenate, create_empty_array",
        "",
        "def episode():",
        "    observations, infos = env.reset(seed=SEED)",
        "    trace = [observations]",
        "    space = env.single_action_space",
        "    for rows in actions:",
        "        batch = concatenate(space, rows, create_empty_array(space, len(rows)))",
        "        trace.append(env.step(batch))",
        "    return trace",
    ]


def _match_episode() -> list[str]:
    return [
        "def episode(env):",
        "    observation, info = env.reset(seed=SEED)",
        "    trace = [observation]",
        "    for action in actions:",
        "        observation, reward, terminated, truncated, info = env.step(action)",
        "        trace.append((observation, reward, terminated, truncated))",
        "        if terminated or truncated:",
        "            observation, info = env.reset()",
        "            trace.append(observation)",
        "    return trace",
        "",
        "for a, b in zip(episode(env_a), episode(env_b)):  # they differ at the end",
        "    print(a, b, sep='\\n', end='\\n\\n')",
    ]


PROBES = {
    "reset-seed": [
        "firsts = [make().reset(seed=seed)[0] for seed in range(16)]  # all the same",
        "env = make()",
        "env.reset(seed=0)",
        "print(firsts[0], [env.reset()[0] for _ in range(8)], sep='\\n')  # these differ",
    ],
    "reset-stream": [
        "env = make()",
        "env.reset(seed=0)",
        "print([env.reset()[0] for _ in range(8)])  # all the same: reset() reseeds",
    ],
    "reset-options": ["env = make()", "env.reset(seed=0, options={})"],
    "close-twice": ["env = make()", "env.reset(seed=0)", "env.close()", "env.close()"],
    "render-modes": [
        "for mode in make().metadata.get('render_modes', []):",
        "    if mode != 'human':",
        "        env = make_with(render_mode=mode)",
        "        env.reset(seed=0)",
        "        frame = env.render()",
        "        print(mode, type(frame), getattr(frame, 'shape', None), getattr(frame, 'dtype', None))",
    ],
}


def _probe(error: Any) -> str:
    """The snippet of a failure of the one-off probes (no seed, no actions)."""
    construction = error.construction.replace("env = ", "return ", 1)
    lines = [
        f"# spacealg: property {error.property!r} failed",
        f"# law: {error.statement}",
        "import numpy as np",
        *error.imports,
        "",
        "def make():",
        f"    {construction}",
        "",
    ]
    if error.property == "render-modes":
        call = error.construction.split("=", 1)[1].split("  #")[0].strip()
        call = call[:-1] + ("**kwargs)" if call.endswith("()") else ", **kwargs)")
        lines += ["def make_with(**kwargs):", f"    return {call}", ""]
    lines += PROBES.get(error.property, ["from spacealg.testing import replay", "replay(make, None, [])"])
    lines += [f"# found: {line}" for line in error.detail.splitlines()]
    return "\n".join(lines) + "\n"


def reproduction(error: Any) -> str:
    """The snippet for ``error`` (an EnvCheckError)."""
    if error.seed is None and error.property in PROBES:
        return _probe(error)
    head = [
        f"# spacealg: property {error.property!r} failed {error._location()}",
        f"# law: {error.statement}",
    ]
    if error.parallel:
        head.append("# actions[k] is the dict of actions of the live agents at step k + 1")
    if error.kind == "vector":
        head.append("# actions[k] holds one action per sub-environment (row) at step k + 1")
    if not error.reproducible:
        head.append("# the environment is not deterministic: the failure may need several runs")
    lines = [*head, "import numpy as np"]
    if any("GraphInstance" in literal(a) for a in error.actions):
        lines.append("from gymnasium.spaces import GraphInstance")
    lines += [*error.imports, "", error.construction, f"SEED = {error.seed}"]
    lines += _actions_source(error.actions)
    lines.append("")
    if error.kind == "match":
        lines += _match_episode()
        lines += [f"# expected: {error.statement}", *(f"# found: {line}" for line in error.detail.splitlines())]
        return "\n".join(lines) + "\n"
    episodes = {"aec": _aec_episode, "vector": _vector_episode, "parallel": _parallel_episode}
    lines += episodes.get(error.kind, _single_episode)()
    lines.append("")
    if error.property.endswith("determinism") or error.property == "global-rng":
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
