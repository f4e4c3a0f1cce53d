"""The laws checked on recorded trajectories (numpy, leading axes rows x steps).

:func:`first_violation` returns the earliest broken law of a batch of rollouts: the row, the
step (``None``: at the first reset; ``k``: by the ``k``-th step, 1-based), the property and a
detail; the earliest step wins, and at one step the order of :data:`ORDER`. Each law is
a function of ``(protocol, out0, trajectory, n)`` returning a bool array ``ok`` of shape
(rows, 1 + n) (column 0: the reset) and a detail for a failing entry.

The laws of :data:`SCREENED` are also checked inside the compiled rollout (:func:`screen`,
traced per row): the search reads each row's first failing column of each, a few integers,
and runs the law itself on the one failing row, for its detail; the rows and steps that pass
are never read on the host.

Laws: a trajectory of a sound environment passes every law; an entry fails a law only if
the value recorded there breaks it (so a failure's reproduction replays to the same value);
:func:`screen` and the law agree on every row (the same predicate, traced: spacealg's ``isin``
on JAX arrays equals its NumPy ``isin``), and where they do not on a failing row, the law
is run on the whole batch.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.adapters.jax_protocols import Protocol
from spacealg.adapters.jax_spaces import confirm, converted, dtype_problem, leaves, members
from spacealg.testing.engine.errors import short

__all__ = ["ORDER", "SCREENED", "Found", "first_illegal", "first_violation", "is_legal", "limit_reached",
           "mask_factors", "screen"]

Found = tuple[int, int | None, str, str]  # row, step, property, detail


def _pick(tree: Any, index: tuple[int, ...]) -> Any:
    import jax

    return jax.tree.map(lambda a: np.asarray(a)[index], tree)


def _columns(rows: int, n: int, reset: np.ndarray | None, steps: np.ndarray | None) -> np.ndarray:
    ok = np.ones((rows, 1 + n), bool)
    if reset is not None:
        ok[:, 0] = reset
    if steps is not None:
        ok[:, 1:] = steps[:, :n]
    return ok


Law = Callable[[Protocol, dict[str, Any], dict[str, Any], int], tuple[np.ndarray, Callable[[int, int], str]]]


def _observations(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    space = converted(p.observation_space)
    lead0 = (_rows(out0),)
    at_reset, why0 = members(out0["observation"], space, lead0, dtypes=False)
    seen, why1 = members(traj["observation"], space, (lead0[0], _horizon(traj)), dtypes=False)
    final, why2 = (
        members(traj["final_observation"], space, (lead0[0], _horizon(traj)), dtypes=False)
        if "final_observation" in traj
        else (np.ones_like(seen), "")
    )
    ok = _columns(lead0[0], n, at_reset, seen & final)

    def ended(row: int, column: int) -> bool:
        return "done" in traj and bool(np.asarray(traj["done"])[row, column - 1])

    def detail(row: int, column: int) -> str:
        """What failed at ``column``, naming the step where the episode really ended (the
        final observation) apart from one that merely put a final observation in ``info``."""
        if column == 0:
            value, why = _pick(out0["observation"], (row,)), why0
            said = "the observation at reset"
        elif not final[row, column - 1] and (ended(row, column) or seen[row, column - 1]):
            # the step's own observation: the episode's final one only where it ended at this step
            # (gymnax 1.x puts it in info["final_observation"] at every step)
            value, why = _pick(traj["final_observation"], (row, column - 1)), why2
            said = (
                f"the final observation of the episode that ended at step {column}"
                if ended(row, column)
                else f"the observation returned by step {column} (info['final_observation']; no episode ended there)"
            )
        else:
            value, why = _pick(traj["observation"], (row, column - 1)), why1
            said = (
                f"the observation {'of the reset after the episode ended at' if ended(row, column) else 'after'} "
                f"step {column}"
            )
        evidence = confirm(value, p.observation_space)
        return f"{said} is not in the observation space: {why}\nvalue: {short(value)}\n{evidence}"

    return ok, detail


def _dtypes(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    space = converted(p.observation_space)
    rows = _rows(out0)
    ok = np.ones((rows, 1 + n), bool)
    problem = dtype_problem(out0["observation"], space)
    if problem:
        ok[:, 0] = False
    elif n:
        problem = dtype_problem(traj["observation"], space)
        ok[:, 1] = not problem
    return ok, lambda r, c: f"the observation {'at reset' if c == 0 else 'after step 1'}: {problem}"


def _rows(out0: dict[str, Any]) -> int:
    import jax

    return int(np.shape(jax.tree.leaves(out0["observation"])[0])[0])


def _horizon(traj: dict[str, Any]) -> int:
    return int(np.shape(traj["elapsed"])[1])


def _actions(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    rows = _rows(out0)
    if p.sample_action is None:  # drawn by spacealg: nothing of the library's to check
        return np.ones((rows, 1 + n), bool), lambda r, c: ""
    inside, why = members(traj["action"], converted(p.action_space), (rows, _horizon(traj)))
    ok = _columns(rows, n, None, inside)

    def detail(row: int, column: int) -> str:
        value = _pick(traj["action"], (row, column - 1))
        return (
            f"the action {short(value)} drawn by the action space's own sample() for step {column} is not in it: "
            f"{why}\n{confirm(value, p.action_space)}"
        )

    return ok, detail


def _reward(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    import jax

    rows = _rows(out0)
    if p.reward_space is not None:
        inside, why = members(traj["reward"], converted(p.reward_space), (rows, _horizon(traj)))
    else:  # undeclared: a real scalar (per agent for JaxMARL's dict; pgx: one per player)
        inside = np.ones((rows, _horizon(traj)), bool)
        why = ""
        for leaf in jax.tree.leaves(traj["reward"]):
            reward = np.asarray(leaf)
            expected = () if p.style != "pgx" else reward.shape[2:]
            if reward.shape[2:] != expected or reward.dtype.kind not in "iuf":
                inside[...] = False
                why = why or f"a reward of shape {reward.shape[2:]} and dtype {reward.dtype}, not a real scalar"
    ok = _columns(rows, n, None, inside)
    return ok, lambda r, c: f"the reward of step {c} is {short(_pick(traj['reward'], (r, c - 1)))}: {why}"


def _discount(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    rows = _rows(out0)
    if "discount" not in traj:
        return np.ones((rows, 1 + n), bool), lambda r, c: ""
    discount = np.asarray(traj["discount"])
    start = np.asarray(out0["discount"])
    unit = ((discount >= 0) & (discount <= 1)).reshape(rows, _horizon(traj), -1).all(-1)
    unit0 = ((start >= 0) & (start <= 1)).reshape(rows, -1).all(-1)
    why = "not in [0, 1]"
    if p.discount_space is not None:
        space = converted(p.discount_space)
        inside, why_in = members(traj["discount"], space, (rows, _horizon(traj)))
        inside0, _ = members(out0["discount"], space, (rows,))
        unit, unit0 = unit & inside, unit0 & inside0
        why = why_in or why
    ok = _columns(rows, n, np.asarray(unit0), np.asarray(unit))

    def detail(r: int, c: int) -> str:
        value = start[r] if c == 0 else discount[r, c - 1]
        return f"the discount {'at reset' if c == 0 else f'of step {c}'} is {short(value)}: {why}"

    return ok, detail


def _floats(tree: Any, lead: int) -> np.ndarray:
    import jax

    flags = None
    for leaf in jax.tree.leaves(tree):
        a = np.asarray(leaf)
        if a.dtype.kind not in "fc" or np.isfinite(a.sum(dtype=np.float64 if a.dtype.kind == "f" else None)):
            continue  # (a NaN or an infinity spoils the sum: a finite sum is all the whole leaf needs)
        finite = np.isfinite(a).reshape((*a.shape[:lead], -1)).all(-1)
        flags = finite if flags is None else flags & finite
    return flags if flags is not None else True  # type: ignore[return-value]


def _finite(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    rows, horizon = _rows(out0), _horizon(traj)
    at_reset = np.broadcast_to(_floats(out0["observation"], 1), (rows,))
    steps = np.broadcast_to(
        _floats({k: traj[k] for k in ("observation", "final_observation", "reward") if k in traj}, 2), (rows, horizon)
    )
    ok = _columns(rows, n, at_reset, steps)

    def detail(r: int, c: int) -> str:
        if c == 0:
            return f"the observation at reset holds NaN or infinity: {short(_pick(out0['observation'], (r,)))}"
        parts = {k: _pick(traj[k], (r, c - 1)) for k in ("observation", "final_observation", "reward") if k in traj}
        bad = [k for k, v in parts.items() if not np.all(_floats(v, 0))]
        return "; ".join(f"the {k} of step {c} holds NaN or infinity: {short(parts[k])}" for k in bad)

    return ok, detail


def _constant(text: str) -> Callable[[int, int], str]:
    return lambda row, column: text


def _episode_end(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    rows, horizon = _rows(out0), _horizon(traj)
    ok = np.ones((rows, 1 + n), bool)
    problems: dict[tuple[int, int], str] = {}

    def flag(column_ok: np.ndarray, offset: int, text: Callable[[int, int], str]) -> None:
        bad = ~column_ok
        ok[:, offset : offset + column_ok.shape[1]] &= column_ok
        for r, c in zip(*np.nonzero(bad)):
            problems.setdefault((int(r), int(c) + offset), text(int(r), int(c) + offset))

    for name in ("done", "terminated", "truncated"):
        if name in traj:
            value = np.asarray(traj[name])
            if value.dtype != np.bool_ or value.shape[2:] != ():
                said = f"{name} is not a bool scalar: dtype {value.dtype}, shape {value.shape[2:]}"
                flag(np.zeros((rows, n), bool), 1, _constant(said))
    if p.style in ("jumanji", "xminigrid"):  # dm_env's step types: FIRST 0, MID 1, LAST 2
        first = np.asarray(out0["step_type"]).reshape(rows, 1) == 0
        flag(first, 0, lambda r, c: f"reset returned step_type {int(np.asarray(out0['step_type'])[r])}, not FIRST (0)")
        kind = np.asarray(traj["step_type"])[:, :n]
        flag((kind == 1) | (kind == 2), 1, lambda r, c: f"step {c} returned step_type {int(kind[r, c - 1])}, not MID "
             "(1) or LAST (2)")
        again = np.asarray(traj["next_step_type"])[:, :n]
        ended = np.asarray(traj["done"])[:, :n]
        flag(~ended | (again == 0), 1, lambda r, c: f"the reset after the episode ended at step {c} returned "
             f"step_type {int(again[r, c - 1])}, not FIRST (0)")
    del horizon
    return ok, lambda r, c: problems.get((r, c), "")


def _limit(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    """``max-episode-steps``: an episode's step number ``limit`` (the library's promise) ends it:
    the episode clock (steps since the last end) stays below the limit."""
    rows = _rows(out0)
    if p.max_steps is None:
        return np.ones((rows, 1 + n), bool), lambda r, c: ""
    elapsed = np.asarray(traj["elapsed"])[:, :n]
    limit = "params.max_steps_in_episode" if p.style == "gymnax" else "params.max_steps"
    return _columns(rows, n, None, elapsed < p.max_steps), lambda r, c: (
        f"step {c} is step {int(elapsed[r, c - 1])} of its episode and did not end it, though {limit} = {p.max_steps}")


def limit_reached(p: Protocol, traj: dict[str, Any], n: int) -> bool:
    """Whether some episode of the first ``n`` steps ran to the library's episode limit
    (what ``max-episode-steps`` needs to have been put to the test)."""
    if p.max_steps is None or not n:
        return False
    elapsed = np.asarray(traj["elapsed"])[:, :n]
    before = np.concatenate([np.zeros_like(elapsed[:, :1]), elapsed[:, :-1]], axis=1)  # the clock before each step
    return bool((before + 1 >= p.max_steps).any())


def _info(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    rows = _rows(out0)
    if "info_is_dict" not in traj:  # a protocol without an info of its own
        return np.ones((rows, 1 + n), bool), lambda r, c: ""
    is_dict = np.broadcast_to(np.asarray(traj["info_is_dict"], bool), (rows, _horizon(traj)))
    ok = _columns(rows, n, None, is_dict)
    return ok, lambda r, c: f"step {c} returned an info that is not a dict"


def mask_factors(mask: np.ndarray, space: Any, lead: int) -> tuple[np.ndarray, str]:
    """``(nonempty, why)``: per entry of the leading axes, whether the mask allows at least one
    action (where the mask has one row per factor of a Categorical, as one row per agent in
    Jumanji's multi-agent environments, at least one row allows one: a finished agent's
    row is empty by design, MMST's); ``why`` names a shape the action space does not
    explain."""
    from spacealg.spaces.categorical import Categorical

    shape = mask.shape[lead:]
    flat = mask.reshape((*mask.shape[:lead], -1))
    if isinstance(space, Categorical) and space.shape:
        nvec = (np.asarray(space.high).astype(np.int64) - np.asarray(space.low) + 1)
        if shape == (*space.shape, int(nvec.max())):  # one row per factor
            rows = mask.reshape((*mask.shape[:lead], -1, shape[-1]))
            return np.asarray(rows.any(-1).any(-1)), ""
        if shape == tuple(int(v) for v in nvec.reshape(-1)):
            return np.asarray(flat.any(-1)), ""
        return np.zeros(mask.shape[:lead], bool), f"a mask of shape {shape} for {space!r}"
    if isinstance(space, Categorical):
        n = int(np.asarray(space.high)) - int(np.asarray(space.low)) + 1
        if shape != (n,):
            return np.zeros(mask.shape[:lead], bool), f"a mask of shape {shape} for {space!r}"
    return np.asarray(flat.any(-1)), ""


def is_legal(mask: np.ndarray, action: Any, space: Any) -> bool:
    """Whether ``action`` (a member of the Categorical ``space``) is allowed by ``mask`` (a
    joint mask, or one row per factor); True where the mask cannot be read that way."""
    mask, action = np.asarray(mask), np.asarray(action)
    low = np.asarray(getattr(space, "low", 0))
    index = (action - low).astype(np.int64)
    try:
        if mask.ndim == index.ndim + 1 and mask.shape[:-1] == index.shape and index.ndim:  # per factor
            return bool(np.take_along_axis(mask, index[..., None], -1).all())
        return bool(mask[tuple(index.reshape(-1))])
    except (IndexError, ValueError):
        return True


def _per_agent(mask: Any, action: Any, space: Any) -> list[tuple[Any, Any, Any]]:
    """``(mask, action, space)`` per agent of a dict mask (JaxMARL), or the one triple."""
    if isinstance(mask, dict):
        return [(mask[k], action[k], space[k]) for k in mask]
    return [(mask, action, space)]


def first_illegal(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], row: int, steps: int) -> int | None:
    """The first step (1-based) among the first ``steps`` of ``row`` whose action the mask
    in force forbade (for a dict of masks, one agent's); None if none did (or no mask is
    published)."""
    if "mask" not in out0:
        return None
    space = converted(p.action_space)
    for t in range(steps):
        mask = _pick(out0["mask"], (row,)) if t == 0 else _pick(traj["mask"], (row, t - 1))
        action = _pick(traj["action"], (row, t))
        if not all(is_legal(m, a, s) for m, a, s in _per_agent(mask, action, space)):
            return t + 1
    return None


def _nonempty(mask: Any, space: Any, lead: int) -> tuple[np.ndarray, str]:
    """:func:`mask_factors` of a mask, or of a dict of masks (one per agent, as JaxMARL's
    ``get_avail_actions``): allowed where some agent has a legal action (an agent out of
    the game may have none)."""
    if not isinstance(mask, dict):
        return mask_factors(np.asarray(mask), space, lead)
    parts = [mask_factors(np.asarray(mask[k]), space[k], lead) for k in mask]
    return np.any([ok for ok, _ in parts], axis=0), next((why for _, why in parts if why), "")


def _masks(p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int) -> Any:
    import jax

    rows = _rows(out0)
    if "mask" not in out0:
        return np.ones((rows, 1 + n), bool), lambda r, c: ""
    space = converted(p.action_space)
    m0, m = out0["mask"], traj["mask"]
    kinds = {np.asarray(leaf).dtype for leaf in jax.tree.leaves(m0)}
    if kinds != {np.dtype(np.bool_)}:
        bad = np.zeros((rows, 1 + n), bool)
        return bad, lambda r, c: f"{p.mask_of} has dtype {sorted(map(str, kinds))}, not bool"
    first, why0 = _nonempty(m0, space, 1)
    later, why1 = _nonempty(m, space, 2)
    ok = _columns(rows, n, first, later)

    def detail(r: int, c: int) -> str:
        value = _pick(m0, (r,)) if c == 0 else _pick(m, (r, c - 1))
        where = "at reset" if c == 0 else f"after step {c} (the episode goes on)"
        return f"{p.mask_of} {where} allows no action: {short(value)}" + (f" ({why0 or why1})" if why0 or why1 else "")

    return ok, detail


ORDER: tuple[tuple[str, Law], ...] = (
    ("episode-end", _episode_end),
    ("max-episode-steps", _limit),
    ("info-dict", _info),
    ("observation-in-space", _observations),
    ("declared-dtypes", _dtypes),
    ("finite-values", _finite),
    ("action-in-space", _actions),
    ("reward-in-space", _reward),
    ("discount-in-space", _discount),
    ("action-mask", _masks),
)


SCREENED = ("observation-in-space", "finite-values", "max-episode-steps")
"""The laws :func:`screen` checks in the compiled graph."""


def _traced_plain(value: Any, space: Any) -> Any:
    """:func:`~spacealg.adapters.jax_spaces.plain` inside a traced function (JAX arrays at the leaves)."""
    import jax.numpy as jnp

    from spacealg.adapters.jax_spaces import _fields
    from spacealg.spaces.product import DictProduct, TupleProduct

    if isinstance(space, DictProduct):
        return {k: _traced_plain(v, space[k]) for k, v in _fields(value, space.keys()).items()}
    if isinstance(space, TupleProduct):
        return tuple(_traced_plain(v, s) for v, s in zip(value, space._spaces))
    return jnp.asarray(value)


def _inside(value: Any, space: Any, lead: tuple[int, ...]) -> Any:
    """Traced :func:`~spacealg.adapters.jax_spaces.members` (values and shapes, not dtypes)."""
    import jax.numpy as jnp

    from spacealg.core.protocol import isin

    ok = jnp.ones(lead, bool)
    try:
        for _, leaf, array in leaves(_traced_plain(value, space), space):
            if array.shape[len(lead):] != tuple(getattr(leaf, "shape", None) or ()):
                return jnp.zeros(lead, bool)
            ok &= jnp.reshape(isin(array, leaf), lead)
    except (KeyError, AttributeError, TypeError, ValueError):
        return jnp.zeros(lead, bool)
    return ok


def _all_finite(tree: Any, lead: tuple[int, ...]) -> Any:
    import jax
    import jax.numpy as jnp

    ok = jnp.ones(lead, bool)
    for leaf in jax.tree.leaves(tree):
        if jnp.issubdtype(leaf.dtype, jnp.inexact):
            ok &= jnp.isfinite(leaf).reshape((*lead, -1)).all(-1)
    return ok


def screen(p: Protocol, out0: dict[str, Any], traj: dict[str, Any]) -> dict[str, Any]:
    """Traced, on one row (``traj``'s leaves lead with the horizon): for each law of
    :data:`SCREENED` that applies, the first column (0: the reset; ``k``: step ``k``) where
    the row breaks it, or the horizon + 1 where it breaks it nowhere. A law whose predicate
    cannot be traced on this environment's values is left out (the host checks it)."""
    import jax.numpy as jnp

    horizon, steps = int(traj["elapsed"].shape[0]), (int(traj["elapsed"].shape[0]),)
    space = converted(p.observation_space)
    observed = [k for k in ("observation", "final_observation") if k in traj]
    predicates = {
        "observation-in-space": lambda: (_inside(out0["observation"], space, ()), functools.reduce(
            jnp.logical_and, [_inside(traj[k], space, steps) for k in observed])),
        "finite-values": lambda: (_all_finite(out0["observation"], ()), _all_finite(
            {k: traj[k] for k in (*observed, "reward") if k in traj}, steps)),
        "max-episode-steps": lambda: (True, traj["elapsed"] < p.max_steps),
    }
    found = {}
    for name, predicate in predicates.items():
        if name == "max-episode-steps" and p.max_steps is None:
            continue
        with contextlib.suppress(Exception):
            at_reset, at_steps = predicate()
            ok = jnp.concatenate([jnp.reshape(at_reset, (1,)), at_steps])
            found[name] = jnp.where(ok.all(), horizon + 1, jnp.argmin(ok)).astype(jnp.int32)
    return found


def _located(
    p: Protocol, law: Law, out0: dict[str, Any], traj: dict[str, Any], n: int, firsts: np.ndarray
) -> tuple[int, int, Callable[[int, int], str]] | None:
    """``(row, column, detail)`` of a screened law's earliest failure within ``n`` steps,
    the law run on the failing row alone; the whole batch where the law does not confirm it."""
    import jax

    row = int(np.argmin(firsts))
    if firsts[row] > n:
        return None
    out1, traj1 = jax.tree.map(lambda a: np.asarray(a[row : row + 1]), (out0, traj))
    ok, detail = law(p, out1, traj1, n)
    if not ok[0, firsts[row]]:
        return row, int(firsts[row]), lambda r, c: detail(0, c)
    ok, detail = law(p, out0, traj, n)  # (never, by the module's law)
    return _earliest(ok, detail)


def _earliest(ok: np.ndarray, detail: Callable[[int, int], str]) -> tuple[int, int, Callable[[int, int], str]] | None:
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    column = int(bad[:, 1].min())
    return int(bad[bad[:, 1] == column][0, 0]), column, detail


def first_violation(
    p: Protocol, out0: dict[str, Any], traj: dict[str, Any], n: int, checked: set[str],
    screened: dict[str, Any] | None = None,
) -> Found | None:
    """The earliest broken law among ``checked`` in the first ``n`` steps (see the module);
    ``screened``: :func:`screen`'s first failing columns, one per row, for its laws."""
    best: tuple[int, int, int, str, Callable[[int, int], str]] | None = None
    for rank, (name, law) in enumerate(ORDER):
        if name not in checked:
            continue
        if screened is not None and name in screened:
            found = _located(p, law, out0, traj, n, np.asarray(screened[name]))
        else:
            found = _earliest(*law(p, out0, traj, n))
        if found is None:
            continue
        row, column, detail = found
        if best is None or (column, rank) < (best[1], best[2]):
            best = (row, column, rank, name, detail)
    if best is None:
        return None
    row, column, _, name, detail = best
    return row, (None if column == 0 else column), name, detail(row, column)
