"""Reproduction snippets for :class:`EnvCheckError`: Python that replays the failing seed
and actions and ends in an assertion, so that a snippet is a regression test: it fails
(an AssertionError or the environment's own exception, exit status 1) while the bug is
there and passes once it is fixed.

The common properties of a Gymnasium environment (membership, with the dtype shown;
reward, flag and info types; signatures; determinism; the probes) are asserted in plain
Python (numpy and the environment's own imports only), and so is every property of a dm_env
or TorchRL check (the actions replayed through that API); the others end in spacealg's
``replay`` (``replay_vector`` for a vector environment, with the changed row's actions
where the law compares two runs), which raises the property's EnvCheckError."""

from __future__ import annotations

import re
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
        "    result = env.reset(seed=SEED)",
        "    assert isinstance(result, tuple) and len(result) == 2, f'reset returned {result!r}'",
        "    trace = [result]  # resets: (observation, info); steps: the 5-tuple",
        "    for action in actions:",
        "        result = env.step(action)",
        "        assert isinstance(result, tuple) and len(result) == 5, f'step returned {result!r}'",
        "        trace.append(result)",
        "        observation, reward, terminated, truncated, info = result",
        "        if terminated or truncated:",
        "            trace.append(env.reset())",
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
        "    space = getattr(env, 'single_action_space', None)",
        "    space = env.action_space if space is None else space  # EnvPool's convention: no single space",
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
        *_SAME,
        "for a, b in zip(episode(env_a), episode(env_b)):  # they differ at the end",
        "    assert same(a, b), f'the implementations differ:\\n{a!r}\\n{b!r}'",
    ]


_SAME = [
    "def same(a, b):  # equal values, dtypes and shapes (NaN equal to NaN)",
    "    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):",
    "        a, b = np.asarray(a), np.asarray(b)",
    "        return a.dtype == b.dtype and a.shape == b.shape and bool(",
    "            np.array_equal(a, b, equal_nan=a.dtype.kind in 'fc'))",
    "    if isinstance(a, dict) and isinstance(b, dict):",
    "        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)",
    "    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):",
    "        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))",
    "    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:",
    "        return True",
    "    return type(a) is type(b) and bool(a == b)",
    "",
]

_RENDER_CHECK = [
    "def promised(mode, frame):  # what metadata['render_modes'] promises",
    "    frames = frame if mode.endswith('_list') else [frame]",
    "    base = mode[: -len('_list')] if mode.endswith('_list') else mode",
    "    for f in frames:",
    "        if base == 'rgb_array':",
    "            assert isinstance(f, np.ndarray) and f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3, (",
    "                f'{mode}: {type(f).__name__} of shape {getattr(f, \"shape\", None)} and dtype '",
    "                f'{getattr(f, \"dtype\", None)}, not an (H, W, 3) uint8 image')",
    "        elif base == 'depth_array':",
    "            assert isinstance(f, np.ndarray) and f.ndim == 2, f'{mode}: not a 2-D array'",
    "        elif base == 'ansi':",
    "            assert isinstance(f, str), f'{mode}: {type(f).__name__}, not a str'",
    "",
]

PROBES = {
    "reset-seed": [
        *_SAME,
        "firsts = [make().reset(seed=seed)[0] for seed in range(16)]",
        "env = make()",
        "env.reset(seed=0)",
        "unseeded = [env.reset()[0] for _ in range(8)]",
        "seeds_alike = all(same(firsts[0], first) for first in firsts[1:])",
        "resets_alike = all(same(unseeded[0], first) for first in unseeded[1:])",
        "assert not (seeds_alike and not resets_alike), 'reset(seed=s) gives the same start for every seed'",
    ],
    "reset-stream": [
        *_SAME,
        "firsts = [make().reset(seed=seed)[0] for seed in range(16)]",
        "env = make()",
        "env.reset(seed=0)",
        "unseeded = [env.reset()[0] for _ in range(8)]",
        "seeds_alike = all(same(firsts[0], first) for first in firsts[1:])",
        "resets_alike = all(same(unseeded[0], first) for first in unseeded[1:])",
        "assert seeds_alike or not resets_alike, 'reset() reseeds instead of continuing the random stream'",
    ],
    "reset-options": [
        "env = make()",
        "env.reset(seed=0)  # works",
        "env.reset(seed=0, options={})  # raises while the bug is there",
    ],
    "close-twice": ["env = make()", "env.reset(seed=0)", "env.close()", "env.close()  # raises while the bug is there"],
    "render-modes": [
        *_RENDER_CHECK,
        "built = make()",
        "modes = built.metadata.get('render_modes', [])",
        "assert getattr(built, 'render_mode', None) in (None, *modes), (",
        "    f'render_mode {built.render_mode!r} is not among metadata[\\'render_modes\\'] {modes!r}')",
        "for mode in modes:",
        "    if mode != 'human':",
        "        env = make_with(render_mode=mode)",
        "        env.reset(seed=0)",
        "        promised(mode, env.render())",
    ],
}

_OBSERVATION = [
    "for entry in trace:",
    "    observation = entry[0]",
    "    kind = getattr(observation, 'dtype', type(observation).__name__)",
    "    assert env.observation_space.contains(observation), (",
    "        f'observation {observation!r} (dtype {kind}) is not in {env.observation_space}')",
]

_SINGLE_ASSERTIONS = {
    "observation-in-space": _OBSERVATION,
    "reward-finite-real": [
        "for entry in trace[1:]:",
        "    if len(entry) == 5:",
        "        reward = entry[1]",
        "        real = isinstance(reward, (int, float, np.integer, np.floating)) and not isinstance(",
        "            reward, (bool, np.bool_))",
        "        assert real and np.isfinite(reward), f'reward {reward!r} of type {type(reward).__name__}'",
    ],
    "terminated-bool": [
        "for entry in trace[1:]:",
        "    if len(entry) == 5:",
        "        assert isinstance(entry[2], (bool, np.bool_)), f'terminated {entry[2]!r}'",
    ],
    "truncated-bool": [
        "for entry in trace[1:]:",
        "    if len(entry) == 5:",
        "        assert isinstance(entry[3], (bool, np.bool_)), f'truncated {entry[3]!r}'",
    ],
    "info-dict": [
        "for entry in trace:",
        "    assert isinstance(entry[-1], dict), f'info {entry[-1]!r} of type {type(entry[-1]).__name__}'",
    ],
}


def _factory(
    construction: str, names: tuple[str, ...] = ("make", "make_env", "build_env", "fresh_env"), avoid: str = ""
) -> tuple[str, str]:
    """The name of a factory of the snippet's own and its one-line body: the first of
    ``names`` that neither the construction nor ``avoid`` (the snippet's other
    constructions) calls already (a user's factory), which the snippet's ``def`` would
    shadow: the factory would call itself, or another construction would call it."""
    name = next(n for n in names if not re.search(rf"\b{n}\b", f"{construction}\n{avoid}"))
    return name, construction.replace("env = ", "return ", 1)


def _replay_tail(error: Any) -> list[str]:
    """The general assertion: spacealg's own replay, which raises the EnvCheckError (an
    AssertionError) while a property breaks on these seed and actions."""
    name, construction = _factory(error.construction)
    return [
        "from spacealg.testing import replay",
        "",
        f"def {name}():",
        f"    {construction}",
        "",
        f"replay({name}, SEED, actions{_ignored(error)})  # raises (AssertionError) while the bug is there",
    ]


def _ignored(error: Any) -> str:
    keys = tuple(getattr(error, "ignored_info", ()) or ())
    return f", ignore_info_keys={keys!r}" if keys else ""


def _determinism(error: Any) -> list[str]:
    keys = tuple(getattr(error, "ignored_info", ()) or ())
    lines = [*_SAME]
    if keys:
        lines += [
            f"IGNORED = {keys!r}  # volatile info entries, left out as in the check",
            "",
            "def clean(entry):",
            "    return tuple({k: v for k, v in x.items() if k not in IGNORED} if isinstance(x, dict) else x",
            "                 for x in entry)",
            "",
        ]
    wrap = "clean" if keys else ""
    if error.property == "global-rng":  # the global generators seeded differently, as the check did
        lines += [
            "import random",
            "",
            "def seeded(seed):",
            "    random.seed(seed)",
            "    np.random.seed(seed)",
            "    return episode()",
            "",
        ]
    runs = "seeded(1), seeded(2)" if error.property == "global-rng" else "episode(), episode()"
    return [
        *lines,
        f"first, second = {runs}",
        "assert len(first) == len(second), f'{len(first)} entries, then {len(second)}'",
        "for i, (a, b) in enumerate(zip(first, second)):",
        f"    assert same({wrap}(a), {wrap}(b)), f'entry {{i}} differs between the runs:\\n{{a!r}}\\n{{b!r}}'",
    ]


def _probe(error: Any) -> str:
    """The snippet of a failure of the one-off probes (no seed, no actions)."""
    name, construction = _factory(error.construction)
    lines = [
        f"# spacealg: property {error.property!r} failed",
        f"# law: {error.statement}",
        "import numpy as np",
        *error.imports,
        "",
        f"def {name}():",
        f"    {construction}",
        "",
    ]
    if error.property == "render-modes":
        call = error.construction.split("=", 1)[1].split("  #")[0].strip()
        call = call[:-1] + ("**kwargs)" if call.endswith("()") else ", **kwargs)")
        lines += ["def make_with(**kwargs):", f"    return {call}", ""]
    probe = PROBES.get(error.property, ["from spacealg.testing import replay", "replay(make, None, [])"])
    lines += [re.sub(r"\bmake\b(?!_)", name, line) for line in probe]
    lines += [f"# found: {line}" for line in error.detail.splitlines()]
    return "\n".join(lines) + "\n"


_DM_ENV_REPLAY = [
    "",
    "import dm_env",
    "",
    "SPECS = {name: getattr(env, f'{name}_spec')() for name in ('observation', 'action', 'reward', 'discount')}",
    "",
    "def validates(spec, value):  # dm_env membership, leaf by leaf",
    "    if isinstance(spec, dict):",
    "        return isinstance(value, dict) and value.keys() == spec.keys() and all(",
    "            validates(s, value[k]) for k, s in spec.items())",
    "    if isinstance(spec, (tuple, list)):",
    "        return isinstance(value, (tuple, list)) and len(value) == len(spec) and all(",
    "            validates(s, v) for s, v in zip(spec, value))",
    "    try:",
    "        spec.validate(value)",
    "        return True",
    "    except (ValueError, TypeError):",
    "        return False",
    "",
    "def shown(value):  # a value with its dtype and shape",
    "    return f'{value!r} (dtype {getattr(value, \"dtype\", type(value).__name__)}, shape {np.shape(value)})'",
    "",
    "def observe(step, k):  # k: the step number; None after a reset",
    "    assert isinstance(step, dm_env.TimeStep), f'step {k}: {type(step).__qualname__}, not a dm_env.TimeStep'",
    "    assert validates(SPECS['observation'], step.observation), (",
    "        f'step {k}: observation {shown(step.observation)} fails {SPECS[\"observation\"]!r}')",
    "    if k is None:",
    "        assert step.first() and step.reward is None and step.discount is None, (",
    "            f'reset: step_type={step.step_type}, reward={step.reward!r}, discount={step.discount!r}')",
    "        return False",
    "    assert step.mid() or step.last(), f'step {k}: step_type={step.step_type}'",
    "    assert validates(SPECS['reward'], step.reward), (",
    "        f'step {k}: reward {shown(step.reward)} fails {SPECS[\"reward\"]!r}')",
    "    discount = np.asarray(step.discount)",
    "    assert validates(SPECS['discount'], step.discount) and bool(np.all((discount >= 0) & (discount <= 1))), (",
    "        f'step {k}: discount {shown(step.discount)} fails {SPECS[\"discount\"]!r} or [0, 1]')",
    "    return step.last()",
    "",
    "observe(env.reset(), None)",
    "for k, action in enumerate(ACTIONS, 1):",
    "    if observe(env.step(np.asarray(action, dtype=SPECS['action'].dtype)), k):",
    "        observe(env.reset(), None)  # the reset after the episode ended",
]

_TORCHRL_REPLAY = [
    "",
    "import torch",
    "",
    "def shown(value):  # a tensor with its dtype and shape",
    "    return f'{value!r} (dtype {value.dtype}, shape {tuple(value.shape)})'",
    "",
    "def observe(td, k):  # k: the step number; None after a reset",
    "    for key, spec in env.full_observation_spec.items(True, True):",
    "        value = td.get(key)",
    "        assert tuple(value.shape) == tuple(spec.shape) and bool(spec.is_in(value)), (",
    "            f'step {k}: observation {key!r} = {shown(value)} is not in {spec!r}')",
    "    ended = False",
    "    for key, spec in env.full_done_spec.items(True, True):",
    "        value = td.get(key)",
    "        assert value.dtype == torch.bool and tuple(value.shape) == tuple(spec.shape), (",
    "            f'step {k}: {key!r} = {shown(value)} does not match {spec!r}')",
    "        ended = ended or (key == 'done' and bool(value.any()))",
    "    return ended",
    "",
    "batch, shape = tuple(env.batch_size), tuple(env.reward_spec.shape)",
    "assert shape[: len(batch)] == batch, f'reward_spec.shape {shape} does not start with the batch size {batch}'",
    "for key, spec in env.full_done_spec.items(True, True):",
    "    assert tuple(spec.shape) == shape, f'done spec {key!r} has shape {tuple(spec.shape)}, reward_spec {shape}'",
    "env.set_seed(SEED)",
    "observe(env.reset(), None)  # the check resets twice, as here",
    "td = env.reset()",
    "for k, action in enumerate(ACTIONS, 1):",
    "    td.set('action', torch.tensor(action, dtype=env.action_spec.dtype))",
    "    following = env.step(td).get('next')",
    "    reward, spec = following.get('reward'), env.reward_spec",
    "    ok = tuple(reward.shape) == tuple(spec.shape) and reward.dtype == spec.dtype and bool(spec.is_in(reward))",
    "    assert ok, (",
    "        f'step {k}: reward {shown(reward)} does not match {spec!r}')",
    "    if observe(following, k):",
    "        td = env.reset()",
    "        observe(td, k)  # the reset after the episode ended",
    "    else:",
    "        td = following.clone()",
]

_FOREIGN_REPLAYS = {"dm_env": _DM_ENV_REPLAY, "torchrl": _TORCHRL_REPLAY}
"""The replays of a dm_env or TorchRL failure: the check's own episode in plain Python,
each property an assertion (values shown with their dtype and shape)."""


def _foreign(error: Any) -> str:
    """A dm_env or TorchRL failure: the actions replayed through that API, each step's
    properties asserted (an AssertionError or the environment's own exception while the bug
    is there)."""
    lines = [
        f"# spacealg: property {error.property!r} failed {error._location()}",
        f"# law: {error.statement}",
        "import numpy as np",
        *error.imports,
        "",
        error.construction,
        f"SEED = {(error.seed or 0) % 2**31}",
        f"ACTIONS = {literal(error.actions)}",
    ]
    if error.kind == "dm_env":
        lines += _DM_ENV_REPLAY[:5]
        if error.property == "declared-specs":  # spacealg reads the specs as spaces: raises while the bug is there
            lines += [
                "from spacealg.adapters.dm_env import from_dm_env",
                "",
                "from_dm_env(SPECS['action']), from_dm_env(SPECS['observation'])",
                "",
            ]
        lines += _DM_ENV_REPLAY[5:]
    else:
        lines += _FOREIGN_REPLAYS[error.kind]
    lines += [f"# found: {line}" for line in error.detail.splitlines()]
    return "\n".join(lines) + "\n"


def reproduction(error: Any) -> str:
    """The snippet for ``error`` (an EnvCheckError)."""
    if error.kind in _FOREIGN_REPLAYS:
        return _foreign(error)
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
    kind = error.kind or ("parallel" if error.parallel else "gymnasium")
    if kind == "gymnasium" and error.property in ("step-determinism", "reset-determinism", "global-rng"):
        lines += _determinism(error)
    elif kind == "gymnasium" and error.property in _SINGLE_ASSERTIONS:
        lines += ["trace = episode()", *_SINGLE_ASSERTIONS[error.property]]
    elif kind == "vector":
        lines += _vector_tail(error)
    else:
        lines += ["trace = episode()", "", *_replay_tail(error)]
    lines += [f"# expected: {error.statement}", *(f"# found: {line}" for line in error.detail.splitlines())]
    return "\n".join(lines) + "\n"


def _vector_tail(error: Any) -> list[str]:
    """A vector failure: spacealg's replay of the example (:func:`~spacealg.testing.vector.replay_vector`;
    a changed row's actions where the law compares two runs; the implementation compared with for
    ``sync-async-agree``), which raises while the bug is there."""
    other = error.compared_with if error.changed is None and error.property == "sync-async-agree" else ""
    name, construction = _factory(error.construction, avoid=other)
    lines = [
        "trace = episode()",
        "",
        "from spacealg.testing import replay_vector",
        "",
        f"def {name}():",
        f"    {construction}",
        "",
    ]
    extra = ""
    if error.changed is not None:
        row, changes = error.changed
        extra = f", row={row}, changes={literal(changes)}"
    elif other:  # the implementation it was compared with
        other_name, other_body = _factory(other, ("make_other", "make_compared", "build_other"), error.construction)
        lines += [f"def {other_name}():", f"    {other_body}", ""]
        extra = f", compare={other_name}"
    return [*lines, f"replay_vector({name}, SEED, actions{extra})  # raises (AssertionError) while the bug is there"]
