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
Gymnasium environments (single-agent API).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from spacealg.strategies.members import members
from spacealg.testing.driver import DEFAULT_BUDGET, Budget, Focus, _as_numpy, describe_exception, snapshot
from spacealg.testing.errors import PropertyError, literal, short
from spacealg.testing.masks import MaskedAction, check_mask, find_mask
from spacealg.testing.resolve import EnvSource, resolve
from spacealg.testing.runner import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_MAX_STEPS,
    EnvCheckReport,
    _check_options,
    close,
    drawn_body,
    fail,
    probe,
    run_check,
)

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


class Lockstep:
    """Both environments driven side by side; raises at the first disagreement."""

    def __init__(self, a: Any, b: Any, atol: float, rtol: float, infos: bool) -> None:
        self.a, self.b, self.atol, self.rtol, self.infos = a, b, atol, rtol, infos
        self.steps = 0
        self.episodes = 1

    def _agree(self, what: str, x: Any, y: Any, step: int | None, prop: str) -> None:
        if not close_enough(x, y, self.atol, self.rtol):
            raise PropertyError(prop, f"{what}: a returned {short(x)} and b {short(y)}", step)

    def _both(self, what: str, step: int | None, *args: Any, **kwargs: Any) -> tuple[Any, Any] | None:
        ra, ea = _call(self.a, what, *args, **kwargs)
        rb, eb = _call(self.b, what, *args, **kwargs)
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

    def reset(self, seed: int | None, step: int | None) -> Any:
        out = self._both("reset", step, **({"seed": seed} if seed is not None else {}))
        if out is None:
            return None
        (oa, ia), (ob, ib) = out
        where = "reset" if step is None else f"the reset after step {step}"
        self._agree(f"{where}, observation", oa, ob, step, "observations-match")
        if self.infos:
            self._agree(f"{where}, info", ia, ib, step, "infos-match")
        return oa, ia

    def step(self, action: Any, k: int) -> tuple[bool, Any] | None:
        out = self._both("step", k, snapshot(action))
        if out is None:
            return None
        (oa, ra, ta, ua, ia), (ob, rb, tb, ub, ib) = out
        self.steps += 1
        self._agree(f"step {k}, observation", oa, ob, k, "observations-match")
        self._agree(f"step {k}, reward", ra, rb, k, "rewards-match")
        if (bool(ta), bool(ua)) != (bool(tb), bool(ub)):
            raise PropertyError(
                "flags-match",
                f"step {k}: a returned terminated={bool(ta)}, truncated={bool(ua)} and b "
                f"terminated={bool(tb)}, truncated={bool(ub)}",
                k,
            )
        if self.infos:
            self._agree(f"step {k}, info", ia, ib, k, "infos-match")
        return bool(ta or ua), (oa, ia)


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
        )
    atol = 0.0 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    if atol < 0 or rtol < 0:
        raise ValueError(f"atol and rtol must be >= 0, got atol={atol!r}, rtol={rtol!r}")
    _check_options(max_examples=max_examples, max_steps=max_steps, budget=budget)
    sa, sb = resolve(a), resolve(b)
    pair = _pair(sa, sb)

    def declared(env: Any) -> tuple[Any, Any]:
        return env.observation_space, env.action_space

    (obs_a, act_a), (obs_b, act_b) = probe(sa, declared), probe(sb, declared)
    for what, x, y in (("observation", obs_a, obs_b), ("action", act_a, act_b)):
        if x != y:
            violation = PropertyError("spaces-match", f"{what} spaces differ: a has {x!r}, b {y!r}")
            raise fail(violation, pair, True, 0, "match")
    actions = members(act_a)

    def make_body(source: EnvSource, stats: dict[str, int], clock: Budget, focus: Focus) -> Callable[[Any], None]:
        def run_pair(data: Any, seed: int, n: int, taken: list[Any]) -> None:
            env_a, env_b = sa.make(), sb.make()
            run = Lockstep(env_a, env_b, atol, rtol, infos)
            try:
                last = run.reset(seed, None)
                for k in range(1, n + 1):
                    if last is None:
                        break
                    mask = find_mask(*last)
                    factors = check_mask(mask, act_a, True, k - 1 or None) if mask is not None else None
                    action = MaskedAction(act_a).draw(data, factors, actions)[0] if factors else data.draw(actions)
                    taken.append(snapshot(action))
                    out = run.step(action, k)
                    if out is None:
                        break
                    done, last = out
                    if done:
                        last = run.reset(None, k)
                        run.episodes += 1
            finally:
                stats["steps"] += run.steps
                stats["episodes"] += run.episodes
                close(env_a, sa)
                close(env_b, sb)

        return drawn_body(run_pair, max_steps=max_steps, limit=None, clock=clock, focus=focus)

    skipped = {} if infos else {"infos-match": "infos=False: infos are not compared (pass infos=True)"}
    return run_check(
        pair,
        make_body,
        max_examples=max_examples,
        random_seed=random_seed,
        kind="match",
        properties=tuple(p for p in MATCH_PROPERTIES if p not in skipped),
        budget=budget,
        database=database,
        not_checked=skipped,
    )


def _pair(sa: EnvSource, sb: EnvSource) -> EnvSource:
    """The two sources as one, for the report and the reproduction: ``env_a`` and ``env_b``."""
    construction = "\n".join(
        [sa.construction.replace("env = ", "env_a = ", 1), sb.construction.replace("env = ", "env_b = ", 1)]
    )
    imports = tuple(dict.fromkeys([*sa.imports, *sb.imports]))
    return EnvSource(sa.make, f"{sa.name} vs {sb.name}", construction, imports)
