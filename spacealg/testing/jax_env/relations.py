"""The laws that compare runs: compile once, batching, purity, jit against eager, global RNG.

:func:`compile_once` is a one-off probe on abstract values (``jax.eval_shape``): the pytree
structure, shapes, dtypes and weak-type flags of reset's and step's states and observations
agree, observations carry no weak type, and the scan body traced once.
:func:`trace_purity` traces reset and step twice (same and different global random states) and
compares the programs. :func:`compare_row` checks one row of a batched rollout against the unbatched replay of its
actions (batching), that replay against a second one (purity), and its first steps against
eager execution (jit-eager); a difference found eagerly is classified by re-running eagerly:
with the same global random state (a difference: purity), with another one (a difference:
global-rng), else jit-eager, confirmed from identical inputs (the eager state) step by step.
An eager step that changes the state it was given in place (:func:`.rollout.changed`) fails
purity too, even where the trajectory stays the same.

Floating-point results of compiled code may differ from eager or batched code in the last
bits. Two runs are told apart at the first step where they differ: integers and bools must be
equal, floats within ``rtol=1e-5, atol=1e-6`` there, or, at a step (not at reset), within
what the step itself makes of rounding: ``SLACK`` times the change that moving the state
before it by one rounding unit causes (:mod:`.rounding`; a physics engine's substeps amplify
last-bit differences past any fixed tolerance in one step). Later steps are not compared
(rounding differences grow in chaotic dynamics, and are no defect).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from spacealg.adapters.jax_protocols import Protocol
from spacealg.testing.engine.driver import global_rng
from spacealg.testing.engine.errors import PropertyError, short
from spacealg.testing.jax_env.rollout import Rollouts, row_keys
from spacealg.testing.jax_env.rounding import sensitivity, within

__all__ = ["compare_row", "compile_once", "difference"]

RTOL, ATOL = 1e-5, 1e-6


def _avals(tree: Any) -> tuple[Any, list[tuple[tuple[int, ...], str, bool]]]:
    leaves, structure = jax.tree.flatten(tree)
    return structure, [(tuple(a.shape), str(a.dtype), bool(getattr(a, "weak_type", False))) for a in leaves]


def _paths(tree: Any) -> list[str]:
    return [jax.tree_util.keystr(path) for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]


def _describe_types(name: str, first: Any, second: Any, said: tuple[str, str]) -> str | None:
    s1, a1 = _avals(first)
    s2, a2 = _avals(second)
    if s1 != s2:
        return f"{name}: {said[0]} has the pytree structure {s1}, {said[1]} {s2}"
    for path, x, y in zip(_paths(first), a1, a2):
        if x != y:
            fmt = "shape {}, dtype {}, weak_type {}"
            return f"{name}{path}: {said[0]} has {fmt.format(*x)}; {said[1]} has {fmt.format(*y)}"
    return None


def compile_once(protocol: Protocol, rollouts: Rollouts) -> None:
    """Raise ``compile-once`` where reset's and step's abstract outputs disagree, an
    observation leaf is weakly typed, or the scan body traced more than once; ``no-exception``
    where reset or step cannot be traced."""
    key = jax.random.key(0)
    try:
        state0, out0 = jax.eval_shape(protocol.reset, key)
        action = jax.eval_shape(rollouts.draw, key, out0.get("mask"))  # the mask as an argument, abstract
        state1, out1 = jax.eval_shape(protocol.step, state0, action, key, key)
    except Exception as error:
        from spacealg.testing.engine.driver import describe_exception

        raise PropertyError("no-exception", f"tracing reset and step raised {describe_exception(error)}") from error
    said = ("reset's", "step's")
    problem = _describe_types("state", state0, state1, said) or _describe_types(
        "observation", out0["observation"], out1["observation"], said
    )
    if problem is None:
        for path, (_shape, dtype, weak) in zip(_paths(out1["observation"]), _avals(out1["observation"])[1]):
            if weak:
                problem = f"observation{path} is weakly typed ({dtype}): its dtype follows whatever it meets"
                break
    if problem is not None:
        raise PropertyError("compile-once", problem)


def _jaxprs(protocol: Protocol, rollouts: Rollouts) -> list[Any]:
    key = jax.random.key(0)
    state, out = jax.eval_shape(protocol.reset, key)
    action = jax.eval_shape(rollouts.draw, key, out.get("mask"))
    # fresh functions: JAX caches traces by function, and a cached trace would hide the change
    return [
        jax.make_jaxpr(lambda k: protocol.reset(k))(key),
        jax.make_jaxpr(lambda *args: protocol.step(*args))(state, action, key, key),
    ]


def _same_jaxprs(first: list[Any], second: list[Any]) -> bool:
    for a, b in zip(first, second):
        if str(a.jaxpr) != str(b.jaxpr) or len(a.consts) != len(b.consts):
            return False
        for x, y in zip(a.consts, b.consts):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
                return False
    return True


def trace_purity(protocol: Protocol, rollouts: Rollouts) -> None:
    """Raise ``purity`` where tracing reset and step twice, under the same global random
    state, gives different programs (the environment reads Python state it changes), and
    ``global-rng`` where tracing under another global random state does (it reads
    ``random``/``numpy.random`` while tracing)."""
    with global_rng(1):
        first = _jaxprs(protocol, rollouts)
    with global_rng(1):
        again = _jaxprs(protocol, rollouts)
    if not _same_jaxprs(first, again):
        raise PropertyError(
            "purity",
            "tracing reset and step twice gives two different programs: the environment reads Python state "
            "that changes between calls (a counter, a cache), so a compiled rollout depends on when it was traced",
        )
    with global_rng(2):
        other = _jaxprs(protocol, rollouts)
    if not _same_jaxprs(first, other):
        raise PropertyError(
            "global-rng",
            "tracing reset and step under two different global random states (random, numpy.random) gives two "
            "different programs: the environment draws from the global state while tracing, so its compiled "
            "rollouts bake in whatever that state held",
        )


def scan_traced_once(rollouts: Rollouts, traces: int) -> None:
    if traces > 1:
        raise PropertyError(
            "compile-once",
            f"lax.scan traced the step {traces} times for one compilation: the state step returns does "
            "not keep the type (dtype or weak type) of the state it was given",
        )


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
    return bool(np.array_equal(a, b))


def _equal(first: Any, second: Any) -> bool:
    a, b = jax.tree.leaves(first), jax.tree.leaves(second)
    return str(jax.tree.structure(first)) == str(jax.tree.structure(second)) and all(
        np.asarray(x).shape == np.asarray(y).shape
        and np.array_equal(np.asarray(x), np.asarray(y), equal_nan=np.asarray(x).dtype.kind in "fc")
        for x, y in zip(a, b)
    )


def difference(first: Any, second: Any, steps: int) -> tuple[int, str, bool] | None:
    """The first step (0: reset; ``k``: step k) where two recorded runs ``(out0, traj)``
    differ, the path, and whether the difference is beyond rounding (see the module)."""
    (o1, t1), (o2, t2) = first, second
    if _equal(o1, o2) and _equal(jax.tree.map(lambda a: np.asarray(a)[:steps], t1),
                                 jax.tree.map(lambda a: np.asarray(a)[:steps], t2)):
        return None
    for column in range(steps + 1):
        worst: tuple[int, str, bool] | None = None
        tree1 = o1 if column == 0 else jax.tree.map(lambda a, c=column: np.asarray(a)[c - 1], t1)
        tree2 = o2 if column == 0 else jax.tree.map(lambda a, c=column: np.asarray(a)[c - 1], t2)
        if column == 0:
            keys = sorted(set(tree1) & set(tree2))
            tree1, tree2 = {k: tree1[k] for k in keys}, {k: tree2[k] for k in keys}
        flat1, flat2 = jax.tree_util.tree_flatten_with_path(tree1)[0], jax.tree.leaves(tree2)
        for (path, a), b in zip(flat1, flat2):
            a, b = np.asarray(a), np.asarray(b)
            if a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                continue
            beyond = not _close(a, b)
            name = jax.tree_util.keystr(path)
            if worst is None or (beyond and not worst[2]):
                worst = (column, f"{name}: {short(a)} and {short(b)}", beyond)
        if worst is not None:
            return worst
    return None


def _outs(seen: list[Any]) -> tuple[Any, Any]:
    """Eager ``[(state, out), ...]`` as ``(out0, trajectory)`` with a time axis."""
    out0 = seen[0][1]
    steps = [out for _, out in seen[1:]]
    traj = jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *steps) if steps else {}
    return out0, traj


def _common(traj: Any, reference: Any) -> Any:
    return {k: traj[k] for k in reference if k in traj}


def compare_row(
    rollouts: Rollouts,
    seed: int,
    batched: tuple[Any, Any],
    actions: Any,
    n: int,
    eager_steps: int,
    checked: set[str],
) -> None:
    """Raise batching, purity, global-rng or jit-eager for one row (see the module)."""
    if not {"batching", "purity", "jit-eager", "global-rng"} & checked:
        return
    seed32 = np.uint32(seed)
    with global_rng(0):  # the state the batched rollout was compiled in (see check.py)
        replay = jax.device_get(rollouts.replay(seed32, actions))
    if "batching" in checked:
        found = difference(batched, replay, n)
        if found is not None and found[2] and found[0] > 0 and _rounding(rollouts, seed32, batched, replay, actions,
                                                                          found[0]):
            found = None
        if found is not None and found[2]:
            column, what, _ = found
            raise PropertyError(
                "batching",
                f"row {seed} of the vmapped rollout and the unbatched rollout with the same key and actions differ "
                f"{'at reset' if column == 0 else f'at step {column}'}: {what}",
                column or None,
            )
    if "purity" in checked:
        with global_rng(0):
            again = jax.device_get(rollouts.replay(seed32, actions))
        found = difference(replay, again, n)
        if found is not None:
            column = found[0]
            raise PropertyError(
                "purity", f"two compiled runs with the same key and actions differ: {found[1]}", column or None
            )
    m = min(n, eager_steps)
    if eager_steps == 0:
        return
    wanted = {"jit-eager", "purity", "global-rng"} & checked
    if not wanted:
        return
    with global_rng(1):
        eager = rollouts.eager(seed, actions, m)
    if "purity" in checked and rollouts.in_place is not None:
        step, where = rollouts.in_place
        raise PropertyError(
            "purity",
            f"step {step}, run eagerly, changes the state it is given in place ({where}): a caller keeping that "
            f"state (to replay or branch from it) finds it changed",
            step,
        )
    out0, traj = _outs(eager)
    found = difference((_common(replay[0], out0), _common(replay[1], traj)), (out0, traj), m)
    if found is None or not found[2]:
        return
    column, what, _ = found
    with global_rng(1):
        same_globals = _outs(rollouts.eager(seed, actions, column))
    if "purity" in checked and difference((out0, traj), same_globals, column) is not None:
        raise PropertyError(
            "purity",
            f"two eager runs with the same key, actions and global random state differ: the environment keeps "
            f"state outside its state pytree ({what})",
            column or None,
        )
    with global_rng(2):
        other_globals = _outs(rollouts.eager(seed, actions, column))
    if "global-rng" in checked and difference((out0, traj), other_globals, column) is not None:
        raise PropertyError(
            "global-rng",
            f"eager runs with the same key and actions but different global random states differ: {what}",
            column or None,
        )
    if "jit-eager" in checked and _one_step_differs(rollouts, eager, actions, seed, column):
        raise PropertyError(
            "jit-eager",
            f"the compiled and the eager run differ {'at reset' if column == 0 else f'at step {column}'}, "
            f"from the same inputs: {what}",
            column or None,
        )


def _one_step_differs(rollouts: Rollouts, eager: list[Any], actions: Any, seed: int, column: int) -> bool:
    """Whether the compiled reset (column 0) or step ``column`` differs beyond rounding from
    the eager one on the eager run's own inputs."""
    k_reset, k_steps, k_resets = row_keys(np.uint32(seed))
    expected = eager[column][1]
    if column == 0:
        compiled = rollouts.one_reset(k_reset)[1]
        return any(not _close(np.asarray(a), np.asarray(b))
                   for a, b in zip(jax.tree.leaves(compiled), jax.tree.leaves(expected)))
    t = column - 1
    action = jax.tree.map(lambda a: a[t], actions)
    compiled, change = sensitivity(rollouts.one_step, eager[t][0], action, jax.random.fold_in(k_steps, t),
                                   jax.random.fold_in(k_resets, t))
    return not within(compiled, jax.device_get(expected), change, RTOL, ATOL)


def _rounding(rollouts: Rollouts, seed: Any, batched: tuple[Any, Any], replay: tuple[Any, Any], actions: Any,
              column: int) -> bool:
    """Whether the batched row and the unbatched replay, equal before step ``column``, differ
    there by no more than rounding amplified by the step itself (:mod:`.rounding`), measured
    from the compiled unbatched state before that step."""
    k_reset, k_steps, k_resets = row_keys(seed)
    state = rollouts.one_reset(k_reset)[0]
    for t in range(column - 1):
        state = rollouts.one_step(state, jax.tree.map(lambda a, t=t: a[t], actions), jax.random.fold_in(k_steps, t),
                                  jax.random.fold_in(k_resets, t))[0]
    t = column - 1
    out, change = sensitivity(rollouts.one_step, state, jax.tree.map(lambda a: a[t], actions),
                              jax.random.fold_in(k_steps, t), jax.random.fold_in(k_resets, t))
    at = {key: jax.tree.map(lambda a: np.asarray(a)[t], value) for key, value in batched[1].items()}
    again = {key: jax.tree.map(lambda a: np.asarray(a)[t], value) for key, value in replay[1].items()}
    if set(at) != set(again) or not set(out) <= set(at):
        return False
    rest = [key for key in at if key not in out]  # the recorded action and episode clock: equal or not rounding
    return _equal({k: at[k] for k in rest}, {k: again[k] for k in rest}) and within(
        {k: at[k] for k in out}, {k: again[k] for k in out}, change, RTOL, ATOL)
