"""``check_envs_match``: differential testing of two implementations of one environment.

A C or JAX port against its Python reference, a refactor against the old version: both
are built fresh for every example, reset with the same Hypothesis-drawn seed and stepped
with the same drawn actions (from ``a``'s action space, legal under ``a``'s published
mask); whenever ``a``'s episode ends both are reset without a seed and the run continues.
The first disagreement is shrunk by Hypothesis to the smallest seed and the shortest action
sequence after which they disagree, and raised as an :class:`EnvCheckError` whose property
(:data:`MATCH_PROPERTIES`) says what differed:

- ``spaces-match``: the declared observation and action spaces are equal;
- ``observations-match``: observations agree — exactly, or within ``atol``/``rtol`` for
  floating-point arrays and numbers (``numpy.isclose``; NaN equals NaN), structure, shape and
  dtype exactly;
- ``rewards-match`` (within the same tolerance), ``flags-match`` (terminated, truncated);
- ``infos-match`` (with ``infos=True``): infos agree (same tolerance);
- ``exceptions-match``: one raises where the other does not (both raising ends the example).

Law: ``check_envs_match(f, f)`` passes for any deterministic environment factory ``f``.
Gymnasium environments (single-agent API). The check is a kind (:data:`MATCH`, whose environment
is a :class:`Pair`, its episode :data:`API`'s) run by the engine every checker shares
(:func:`~spacealg.testing.engine.runner.check_kind`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spacealg.strategies.members import members
from spacealg.testing.engine.driver import DEFAULT_BUDGET, _as_numpy, describe_exception, snapshot
from spacealg.testing.engine.episode import Actor, Api, Episode, Plain, Stop, act_alone, plain_episode
from spacealg.testing.engine.errors import PropertyError, literal, short
from spacealg.testing.engine.resolve import EnvSource, resolve
from spacealg.testing.engine.runner import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_MAX_STEPS,
    MAX_BROKEN,
    STEPPED,
    CheckOptions,
    Declared,
    Draws,
    EnvCheckReport,
    EnvKind,
    check_kind,
    close,
)
from spacealg.testing.engine.snippets import SAME, reproduction

__all__ = ["MATCH_PROPERTIES", "check_envs_match", "close_enough"]

MATCH_PROPERTIES: dict[str, str] = {
    "spaces-match": "both declare equal observation and action spaces",
    "observations-match": "both return the same observations (within atol/rtol for floats)",
    "rewards-match": "both return the same rewards (within atol/rtol)",
    "flags-match": "both return the same terminated and truncated flags",
    "infos-match": "both return the same infos (within atol/rtol for floats)",
    "exceptions-match": "one raises only where the other raises too",
}


def close_enough(a: Any, b: Any, atol: float = 0.0, rtol: float = 0.0) -> bool:
    """Structural equality with a tolerance on floating-point arrays and numbers: shapes,
    dtypes, types, keys and lengths exactly; NaN equal to NaN. Never raises."""
    try:
        a, b = _as_numpy(a), _as_numpy(b)
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            if (
                not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray))
                or a.shape != b.shape
                or a.dtype != b.dtype
            ):
                return False
            if a.dtype.kind in "fc":
                return bool(np.isclose(a, b, atol=atol, rtol=rtol, equal_nan=True).all())
            if a.dtype.kind == "O":
                return all(close_enough(x, y, atol, rtol) for x, y in zip(a.ravel(), b.ravel()))
            return bool(np.array_equal(a, b))
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return list(a) == list(b) and all(close_enough(a[k], b[k], atol, rtol) for k in a)
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            return type(a) is type(b) and len(a) == len(b) and all(close_enough(x, y, atol, rtol) for x, y in zip(a, b))
        real = (float, np.floating, int, np.integer)
        if isinstance(a, real) and isinstance(b, real) and not isinstance(a, bool) and not isinstance(b, bool):
            if math.isnan(a) and math.isnan(b):
                return True
            return bool(a == b or abs(float(a) - float(b)) <= atol + rtol * abs(float(b)))
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def _call(env: Any, what: str, *args: Any, **kwargs: Any) -> tuple[Any, BaseException | None]:
    try:
        return getattr(env, what)(*args, **kwargs), None
    except Exception as error:
        return None, error


def _agree(pair: Pair, what: str, x: Any, y: Any, step: int | None, prop: str) -> None:
    if not close_enough(x, y, pair.atol, pair.rtol):
        raise PropertyError(prop, f"{what}: a returned {short(x)} and b {short(y)}", step)


def _both(pair: Pair, what: str, step: int | None, *args: Any, **kwargs: Any) -> tuple[Any, Any] | None:
    """``what`` called on both environments: both results; None where both raised;
    ``exceptions-match`` where only one did."""
    ra, ea = _call(pair.a, what, *args, **kwargs)
    rb, eb = _call(pair.b, what, *args, **kwargs)
    if ea is not None and eb is not None:
        return None
    if (ea is None) != (eb is None):
        which, error = ("a", ea) if ea is not None else ("b", eb)
        call = f"{what}({', '.join(literal(x) for x in args)})"
        raise PropertyError(
            "exceptions-match",
            f"{call}: only {which} raised {describe_exception(error)}",  # type: ignore[arg-type]
            step,
        )
    return ra, rb


def _reset(episode: Episode, done_at: int | None) -> None:
    """Both reset (with the seed; without one after the end at ``done_at``) and compared;
    ``a``'s observation and info kept for its mask (None: both raised, the run ends)."""
    pair = episode.env
    out = _both(pair, "reset", done_at, **({"seed": episode.seed} if done_at is None else {}))
    episode.last = None
    if out is None:
        return
    (oa, ia), (ob, ib) = out
    where = "reset" if done_at is None else f"the reset after step {done_at}"
    _agree(pair, f"{where}, observation", oa, ob, done_at, "observations-match")
    if pair.infos:
        _agree(pair, f"{where}, info", ia, ib, done_at, "infos-match")
    episode.last = oa, ia


def _actors(episode: Episode, k: int) -> list[Actor]:
    """The one actor: ``a``'s last observation and info (its published mask), ``a``'s action space."""
    if episode.last is None:  # both raised at the last reset
        raise Stop
    observation, info = episode.last
    return [Actor(None, observation, info, lambda at: episode.env.a.action_space)]


def _step_both(pair: Pair, action: Any, k: int, illegal: bool, said: str) -> tuple[Any, None]:
    """Both stepped with ``action``; both raising ends the run."""
    out = _both(pair, "step", k, snapshot(action))
    if out is None:
        raise Stop
    return out, None


def _returned(episode: Episode, k: int, out: Any) -> bool:
    """Both steps' results compared; whether ``a``'s episode ended."""
    pair = episode.env
    (oa, ra, ta, ua, ia), (ob, rb, tb, ub, ib) = out
    _agree(pair, f"step {k}, observation", oa, ob, k, "observations-match")
    _agree(pair, f"step {k}, reward", ra, rb, k, "rewards-match")
    if (bool(ta), bool(ua)) != (bool(tb), bool(ub)):
        detail = (f"step {k}: a returned terminated={bool(ta)}, truncated={bool(ua)} and b "
                  f"terminated={bool(tb)}, truncated={bool(ub)}")
        raise PropertyError("flags-match", detail, k)
    if pair.infos:
        _agree(pair, f"step {k}, info", ia, ib, k, "infos-match")
    episode.last = oa, ia
    return bool(ta or ua)


API = Api(
    reset=_reset,
    actors=_actors,
    act=act_alone,
    returned=_returned,
    plain=Plain(
        "env.reset({seed})[0]",
        [
            "observation, reward, terminated, truncated, info = env.step(action)",
            "trace.append((observation, reward, terminated, truncated))",
        ],
        "terminated or truncated",
    ),
    call=_step_both,
)
"""Both environments of a :class:`Pair` driven side by side by the one episode driver
(:class:`~spacealg.testing.engine.episode.Episode`): the actions drawn legal under ``a``'s
published mask; the first disagreement raises; both raising ends the run."""


@dataclass
class Pair:
    """The two environments of one example (built by :func:`_pair`'s source), with the
    comparison's tolerances; closing it closes those the checker built."""

    a: Any
    b: Any
    sources: tuple[EnvSource, EnvSource]
    atol: float
    rtol: float
    infos: bool

    def close(self) -> None:
        close(self.a, self.sources[0])
        close(self.b, self.sources[1])


def _declared(pair: Pair) -> Declared:
    """``spaces-match`` (equal declared spaces), then actions drawn from ``a``'s action space."""
    for what in ("observation", "action"):
        x, y = getattr(pair.a, f"{what}_space"), getattr(pair.b, f"{what}_space")
        if x != y:
            raise PropertyError("spaces-match", f"{what} spaces differ: a has {x!r}, b {y!r}")
    space = pair.a.action_space
    actions = members(space)

    def draw(draws: Draws, factors: list[np.ndarray] | None) -> Any:
        return draws.action(None, factors, lambda: space, lambda: actions)

    return draw, None


def check_envs_match(
    a: Any,
    b: Any,
    *,
    atol: float | None = None,
    rtol: float | None = None,
    infos: bool = False,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
    max_steps: int = DEFAULT_MAX_STEPS,
    random_seed: int | None = 0,
    budget: float | None = DEFAULT_BUDGET,
    database: Any = None,
    max_broken: int = MAX_BROKEN,
    bridge: Any = None,
    resync: bool = True,
    policy: Callable[[Any], Any] | None = None,
) -> EnvCheckReport:
    """Drive ``a`` and ``b`` (ids, ``module:factory`` paths, factories or instances) with
    the same seeds and actions (see the module docstring); returns a report, or raises an
    :class:`EnvCheckError` with the shortest sequence after which they disagree.

    With ``bridge=(to_reference, to_port)``, ``a`` is a JAX port (a gymnax ``(env, params)``
    pair, env, or ``"gymnax:<id>"``) and ``b`` its Gymnasium reference (an env or an id),
    compared episode by episode (``max_examples`` episodes, seeds from ``random_seed``)
    through the state bridge, each step from the reference's state unless ``resync=False``,
    with actions drawn from ``b``'s space or chosen by ``policy(observation)``; ``atol`` and
    ``rtol`` default to 1e-5 there (0 otherwise). See
    :mod:`spacealg.testing.jax_env.ports`."""
    if bridge is not None:
        from spacealg.testing.jax_env.ports import check_port_matches_ids

        return check_port_matches_ids(
            a,
            b,
            bridge=bridge,
            atol=1e-5 if atol is None else atol,
            rtol=1e-5 if rtol is None else rtol,
            episodes=max_examples,
            max_steps=max_steps,
            random_seed=random_seed or 0,
            resync=resync,
            policy=policy,
            laws=MATCH_PROPERTIES,
        )
    atol = 0.0 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    if atol < 0 or rtol < 0:
        raise ValueError(f"atol and rtol must be >= 0, got atol={atol!r}, rtol={rtol!r}")
    sa, sb = resolve(a), resolve(b)
    why = {} if infos else {"infos-match": "infos=False: infos are not compared (pass infos=True)"}
    kind = dataclasses.replace(MATCH, unchecked=lambda pair: why)
    options: CheckOptions = {"max_examples": max_examples, "max_steps": max_steps, "random_seed": random_seed,
                             "budget": budget, "database": database, "determinism": False, "hygiene": False,
                             "max_broken": max_broken}
    return check_kind(kind, _pair(sa, sb, atol, rtol, infos), options)


def _pair(sa: EnvSource, sb: EnvSource, atol: float, rtol: float, infos: bool) -> EnvSource:
    """The two sources as one that builds a :class:`Pair`, for the check, the report and the
    reproduction (``env_a`` and ``env_b``)."""
    construction = "\n".join(
        [sa.construction.replace("env = ", "env_a = ", 1), sb.construction.replace("env = ", "env_b = ", 1)]
    )
    imports = tuple(dict.fromkeys([*sa.imports, *sb.imports]))

    def make() -> Pair:
        return Pair(sa.make(), sb.make(), (sa, sb), atol, rtol, infos)

    return EnvSource(make, f"{sa.name} vs {sb.name}", construction, imports)


EPISODE = [
    *plain_episode(API.plain, "env"),
    "",
    *SAME,
    "for a, b in zip(episode(env_a), episode(env_b)):  # they differ at the end",
    "    assert same(a, b), f'the implementations differ:\\n{a!r}\\n{b!r}'",
]
"""Both environments driven in plain Python, compared at the end, for the snippet."""


def snippet(error: Any) -> str:
    """The reproduction of a disagreement: both environments driven in plain Python."""
    return reproduction(error, EPISODE, lambda error: [])


MATCH = EnvKind(
    "match",
    MATCH_PROPERTIES,
    check_envs_match,
    {"rewards-match": (STEPPED,), "flags-match": (STEPPED,)},
    snippet=snippet,
    episode=API.episode,
    declared=_declared,
)
"""The kind of :func:`check_envs_match` (its environment: a :class:`Pair`; recognised by no
instance: it is asked for by name)."""
