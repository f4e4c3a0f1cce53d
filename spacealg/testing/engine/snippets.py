"""Reproduction snippets for :class:`EnvCheckError`: Python that replays the failing seed
and actions and ends in an assertion, so that a snippet is a regression test: it fails
(an AssertionError or the environment's own exception, exit status 1) while the bug is
there and passes once it is fixed.

The engine writes the frame (:func:`reproduction`: the construction, the seed, the actions,
an episode function, a tail that asserts) and the probes' snippets (:data:`PROBES`); each
kind's ``snippet`` (:attr:`~spacealg.testing.engine.runner.EnvKind.snippet`) gives its
episode and its tail: plain-Python assertions where it has them, else spacealg's own
``replay``, which raises the property's EnvCheckError."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from spacealg.testing.engine.literals import literal

__all__ = ["PROBES", "RENDER", "SAME", "SEEDING", "actions_source", "factory", "replay_tail", "reproduction"]


def actions_source(actions: list[Any]) -> list[str]:
    if not actions:
        return ["actions = []"]
    return ["actions = ["] + [f"    {literal(a)}," for a in actions] + ["]"]


SAME = [
    "def same(a, b):  # equal values, dtypes and shapes (NaN equal to NaN; torch and JAX arrays as numpy's)",
    "    a, b = (np.asarray(x) if hasattr(x, '__array__') and hasattr(x, 'shape')",
    "            and not isinstance(x, (np.ndarray, np.generic)) else x for x in (a, b))",
    "    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):",
    "        a, b = np.asarray(a), np.asarray(b)",
    "        return a.dtype == b.dtype and a.shape == b.shape and bool(",
    "            np.array_equal(a, b, equal_nan=a.dtype.kind in 'fc'))",
    "    if isinstance(a, dict) and isinstance(b, dict):",
    "        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)",
    "    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):",
    "        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))",
    "    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):",
    "        return bool(a == b or (a != a and b != b))",
    "    return type(a) is type(b) and bool(a == b)",
    "",
]

RENDER = [
    "def promised(mode, frame):  # what is wrong with frame, as metadata['render_modes'] promises (None: nothing)",
    "    base = mode[: -len('_list')] if mode.endswith('_list') else mode",
    "    if mode.endswith('_list') and not isinstance(frame, list):",
    "        return f'render() in {mode!r} mode returned a {type(frame).__name__}, not a list'",
    "    for item in frame if mode.endswith('_list') else [frame]:",
    "        image = isinstance(item, np.ndarray) and item.dtype == np.uint8 and item.ndim == 3 and item.shape[2] == 3",
    "        if base == 'rgb_array' and not image:",
    "            array = isinstance(item, np.ndarray)",
    "            what = f'an array of shape {item.shape} and dtype {item.dtype}' if array else type(item).__name__",
    "            return f'render() in {mode!r} mode returned {what}, not an (H, W, 3) uint8 image'",
    "        if base == 'depth_array' and not (isinstance(item, np.ndarray) and item.ndim == 2):",
    "            return f'render() in {mode!r} mode returned {type(item).__name__}, not a 2-D array'",
    "        if base == 'ansi' and not isinstance(item, str):",
    "            return f'render() in {mode!r} mode returned {type(item).__name__}, not a str'",
    "    return None",
    "",
    "def promised_rows(mode, frames, rows):  # a vector environment: one frame per sub-env, each as promised",
    "    if not isinstance(frames, (tuple, list)) or len(frames) != rows:",
    "        wrong = f'render() in {mode!r} mode returned {frames!r:.400}'",
    "        return f'{wrong}, not a tuple of {rows} frames (one per sub-env)'",
    "    for i, frame in enumerate(frames):",
    "        wrong = promised(mode, frame)",
    "        if wrong is not None:",
    "            return f'sub-env {i}: {wrong}'",
    "    return None",
    "",
]
"""What each render mode promises, in plain Python: the ``render-modes`` probe runs these lines
(:func:`~spacealg.testing.engine.episode.plain_checks`) and its snippet shows them."""

SEEDING = [
    "import copy",
    "",
    *SAME,
    "def keep(value):  # a copy of what the environment handed out (it may reuse its buffers)",
    "    try:",
    "        return copy.deepcopy(value)",
    "    except Exception:",
    "        return value",
    "",
    "def masked(observation, info):  # a mask published: the fixed actions may be illegal, the episode stops",
    "    return any(isinstance(held, dict) and 'action_mask' in held for held in (observation, info))",
    "",
    "def seeding(seeded, unseeded):  # what the seeded and the unseeded episodes show broken (None: nothing)",
    "    seeds_alike = all(same(seeded[0], episode) for episode in seeded[1:])",
    "    resets_alike = all(same(unseeded[0], episode) for episode in unseeded[1:])",
    "    if seeds_alike and not resets_alike:",
    "        return 'reset-seed', (",
    "            f'reset(seed=s) for the {len(seeded)} seeds 0..{len(seeded) - 1} (each on a fresh environment) gave '",
    "            'the same episode, but successive reset() calls of one environment give different ones: reset '",
    "            'ignores its seed, or does not reset all of the environment\\'s state')",
    "    if not seeds_alike and resets_alike:",
    "        as_seed = ' as reset(seed=0)' if same(unseeded[0], seeded[0]) else ''",
    "        return 'reset-stream', (",
    "            f'after reset(seed=0), {len(unseeded)} successive reset() calls gave the same episode{as_seed}, '",
    "            'while different seeds give different ones: reset() reseeds instead of continuing the random stream')",
    "    return None",
    "",
]
"""The ``reset-seed`` and ``reset-stream`` probe in plain Python: the probe runs these lines
with its kind's ``probe_episode(env, seed, actions)`` (the first observation, then a step for
each fixed action, stopping at an end or a published mask) and its snippet shows them, so
the snippet replays what the probe compared, as it compared it."""

SEEDS, UNSEEDED = 16, 8
"""The seeds of the ``reset-seed`` probe (each on a fresh environment), the unseeded resets
of its ``reset-stream`` probe (of one environment, after ``reset(seed=0)``)."""

_RESETS = [
    f"seeded = [probe_episode(make(), seed, actions) for seed in range({SEEDS})]  # each on a fresh environment",
    "env = make()",
    "probe_episode(env, 0, actions)",
    f"unseeded = [probe_episode(env, None, actions) for _ in range({UNSEEDED})]  # successive resets of one env",
    "found = seeding(seeded, unseeded)",
]

PROBES = {
    "reset-seed": [*_RESETS, "assert found is None or found[0] != 'reset-seed', found[1]"],
    "reset-stream": [*_RESETS, "assert found is None or found[0] != 'reset-stream', found[1]"],
    "reset-options": [
        "env = make()",
        "env.reset(seed=0)  # works",
        "env.reset(seed=0, options={})  # raises while the bug is there",
    ],
    "close-twice": ["env = make()", "env.reset(seed=0)", "env.close()", "env.close()  # raises while the bug is there"],
    "render-modes": [
        *RENDER,
        "built = make()",
        "modes = built.metadata.get('render_modes', [])",
        "assert getattr(built, 'render_mode', None) in (None, *modes), (",
        "    f'render_mode {built.render_mode!r} is not among metadata[\\'render_modes\\'] {modes!r}')",
        "for mode in modes:",
        "    if mode != 'human':",
        "        env = make_with(render_mode=mode)",
        "        env.reset(seed=0)",
        "        frame = env.render()",
        "        batched = hasattr(env, 'num_envs')  # a vector environment: one frame per sub-env",
        "        wrong = promised_rows(mode, frame, env.num_envs) if batched else promised(mode, frame)",
        "        assert wrong is None, wrong",
    ],
}


def factory(
    construction: str, names: tuple[str, ...] = ("make", "make_env", "build_env", "fresh_env"), avoid: str = ""
) -> tuple[str, list[str]]:
    """The name of a factory of the snippet's own and its definition (its ``def``, returning
    what ``construction`` builds, and a blank line): the first of ``names`` that neither the
    construction nor ``avoid`` (the snippet's other constructions) calls already (a user's
    factory), which the ``def`` would shadow: the factory would call itself, or another
    construction would call it."""
    name = next(n for n in names if not re.search(rf"\b{n}\b", f"{construction}\n{avoid}"))
    return name, [f"def {name}():", f"    {construction.replace('env = ', 'return ', 1)}", ""]


def replay_tail(error: Any) -> list[str]:
    """The general assertion: spacealg's own replay, which raises the EnvCheckError (an
    AssertionError) while a property breaks on these seed and actions."""
    name, defined = factory(error.construction)
    call = f"replay({name}, SEED, actions{_ignored(error)})  # raises (AssertionError) while the bug is there"
    return ["from spacealg.testing import replay", "", *defined, call]


def _ignored(error: Any) -> str:
    keys = tuple(getattr(error, "ignored_info", ()) or ())
    return f", ignore_info_keys={keys!r}" if keys else ""


def _probe(error: Any, episode: Sequence[str]) -> str:
    """The snippet of a failure of the one-off probes (no seed): ``reset-seed`` and
    ``reset-stream`` replay the probe's fixed actions (``error.context["probe_actions"]``)
    through the kind's ``episode`` (its ``probe_episode``, in plain Python) and
    :data:`SEEDING`, the lines the probe ran."""
    name, defined = factory(error.construction)
    lines = [f"# spacealg: property {error.property!r} failed", f"# law: {error.statement}", "import numpy as np",
             *error.imports, "", *defined]
    if error.property in ("reset-seed", "reset-stream"):
        lines += [*actions_source(error.context.get("probe_actions", [])), "", *SEEDING, *episode, ""]
    if error.property == "render-modes":
        call = error.construction.split("=", 1)[1].split("  #")[0].strip()
        call = call[:-1] + ("**kwargs)" if call.endswith("()") else ", **kwargs)")
        lines += ["def make_with(**kwargs):", f"    return {call}", ""]
    probe = PROBES.get(error.property, ["from spacealg.testing import replay", "replay(make, None, [])"])
    lines += [re.sub(r"\bmake\b(?!_)", name, line) for line in probe]
    lines += [f"# found: {line}" for line in error.detail.splitlines()]
    return "\n".join(lines) + "\n"


def reproduction(
    error: Any,
    episode: list[str] | None = None,
    tail: Callable[[Any], list[str]] | None = None,
    notes: Sequence[str] = (),
    probe_episode: Sequence[str] = (),
) -> str:
    """The snippet for ``error`` (an EnvCheckError): a failure of the probes replays them
    (:data:`PROBES`); otherwise the construction, the seed, the actions, the kind's
    ``episode`` function (its lines, as :func:`~spacealg.testing.engine.episode.plain_episode`
    writes them; None: none), then its ``tail`` (default: the trace, then spacealg's own
    :func:`~spacealg.testing.replay`, which raises while the property breaks), ``notes``
    heading it as comments (what an action stands for); ``probe_episode``: the kind's episode
    of the RNG probes in plain Python (:func:`_probe`)."""
    if error.seed is None and error.property in PROBES:
        return _probe(error, probe_episode)
    head = [
        f"# spacealg: property {error.property!r} failed {error._location()}",
        f"# law: {error.statement}",
        *(f"# {note}" for note in notes),
    ]
    if not error.reproducible:
        head.append("# the environment is not deterministic: the failure may need several runs")
    lines = [*head, "import numpy as np"]
    if any("GraphInstance" in literal(a) for a in error.actions):
        lines.append("from gymnasium.spaces import GraphInstance")
    lines += [*error.imports, "", error.construction, f"SEED = {error.seed}"]
    lines += actions_source(error.actions)
    lines += ["", *episode, ""] if episode is not None else [""]
    if tail is None:  # the trace of the kind's episode, if it has one, then spacealg's replay
        lines += ["trace = episode()", ""] if episode is not None else []
        lines += replay_tail(error)
    else:
        lines += tail(error)
    lines += [f"# expected: {error.statement}", *(f"# found: {line}" for line in error.detail.splitlines())]
    return "\n".join(lines) + "\n"
