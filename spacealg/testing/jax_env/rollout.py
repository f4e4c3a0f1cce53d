"""Compiled rollouts: ``lax.scan`` over steps, ``vmap`` over keys, actions drawn in-graph.

:func:`drawer` builds the in-graph action draw of a :class:`~spacealg.adapters.jax_protocols.Protocol`: the
library's own sampler where it has one (gymnax spaces), else a uniform draw from the
converted action space (Categorical, Box, products of them), legal under a published mask
(a joint mask of the action space's shape, or one row per factor; for a DictProduct, a
dict of such masks, one per entry), with ``illegal`` one
draw in four ignoring the mask. :class:`Rollouts` compiles, once per check:

- ``drawn(seeds, action_keys)``: the batched rollout of ``horizon`` steps, one row per seed:
  ``(out0, trajectory, firsts)``, ``firsts`` each row's first failing column of each law the
  graph checks (:func:`.laws.screen`), what the search reads before any trajectory;
- ``replay(seed, actions)``: the unbatched rollout of one row, feeding recorded actions;
- ``one_reset`` and ``one_step``: a reset and a single step, compiled alone, to confirm a
  difference step by step (floating-point results of fused code may differ in
  the last bits; only a difference from identical inputs is a defect);
- ``raw(seeds, action_keys)``: ``drawn`` recording nothing (the final states, and a sum of
  every output, so that no output's work is compiled away): the environment's own speed under
  ``jit(vmap(scan(step)))``, timed by :meth:`Rollouts.throughput`;

and runs ``eager(seed, actions)``, the same steps without ``jit`` (``jax.disable_jit``).
A program compiled before in the process for another check of the same program is run
again rather than compiled again (:mod:`.programs`).

Laws: row ``i`` of ``drawn`` depends only on ``seeds[i]`` and ``action_keys[i]``; the
``actions`` it records, fed to ``replay`` with ``seeds[i]``, give the same trajectory for a
pure, batchable environment. ``traces`` counts how often the scan body was traced (1 for an
environment whose step keeps its carry's types).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from spacealg.adapters.jax_protocols import Protocol
from spacealg.adapters.jax_spaces import converted
from spacealg.testing.engine.driver import same
from spacealg.testing.jax_env.programs import compiled, signature

__all__ = ["Rollouts", "drawer", "row_keys"]


def row_keys(seed: Any) -> tuple[Any, Any, Any]:
    """``(k_reset, k_steps, k_resets)`` of a row (see :mod:`spacealg.adapters.jax_protocols`)."""
    k_reset, k_steps, k_resets = jax.random.split(jax.random.key(seed), 3)
    return k_reset, k_steps, k_resets


# -- drawing actions -------------------------------------------------------------------------


def _leaf_draw(space: Any) -> Callable[[Any, Any], Any]:
    from spacealg.spaces.box import Box
    from spacealg.spaces.categorical import Categorical
    from spacealg.spaces.product import DictProduct, TupleProduct

    if isinstance(space, DictProduct):
        parts = {k: _leaf_draw(s) for k, s in space.spaces.items()}

        def draw_dict(key: Any, mask: Any) -> Any:  # a dict of masks: one per entry (JaxMARL's agents)
            keys = jax.random.split(key, len(parts))
            masks = mask if isinstance(mask, dict) else {}
            return {k: d(kk, masks.get(k)) for (k, d), kk in zip(parts.items(), keys)}

        return draw_dict
    if isinstance(space, TupleProduct):
        items = [_leaf_draw(s) for s in space._spaces]

        def draw_tuple(key: Any, mask: Any) -> Any:
            keys = jax.random.split(key, len(items))
            return tuple(d(kk, None) for d, kk in zip(items, keys))

        return draw_tuple
    if isinstance(space, Categorical):
        return _categorical_draw(np.asarray(space.low), np.asarray(space.high), np.dtype(space.dtype))
    if isinstance(space, Box):
        low, high, dtype = np.asarray(space.low), np.asarray(space.high), np.dtype(space.dtype)
        if dtype.kind == "b":
            return lambda key, mask: jax.random.bernoulli(key, 0.5, space.shape)
        if dtype.kind in "iu":
            return _categorical_draw(low, high, dtype)
        finite_low, finite_high = np.where(np.isfinite(low), low, -1e3), np.where(np.isfinite(high), high, 1e3)

        def draw_box(key: Any, mask: Any) -> Any:
            u = jax.random.uniform(key, space.shape, jnp.float32)
            value = finite_low + u * (finite_high - finite_low)
            return jnp.clip(value, low, high).astype(dtype)

        return draw_box
    raise TypeError(f"cannot draw actions from {space!r}: not a Categorical, a Box or a product of them")


def _categorical_draw(low: np.ndarray, high: np.ndarray, dtype: np.dtype) -> Callable[[Any, Any], Any]:
    shape = low.shape
    nvec = (high.astype(np.int64) - low.astype(np.int64) + 1).reshape(shape)

    def draw(key: Any, mask: Any) -> Any:
        if mask is None:
            return jax.random.randint(key, shape, low, high.astype(np.int64) + 1).astype(dtype)
        mask = jnp.asarray(mask, bool)
        if mask.shape == (*shape, int(nvec.max())) and shape:  # one row per factor
            logits = jnp.where(mask, 0.0, -jnp.inf)
            picks = jax.random.categorical(key, logits.reshape(-1, logits.shape[-1])).reshape(shape)
            return (picks + low).astype(dtype)
        flat = jnp.where(mask.reshape(-1), 0.0, -jnp.inf)  # a joint mask over the whole space
        index = jax.random.categorical(key, flat)
        if not shape:
            return (index + low).astype(dtype)
        return (jnp.stack(jnp.unravel_index(index, mask.shape)).reshape(shape) + low).astype(dtype)

    return draw


def drawer(protocol: Protocol, masks: bool, illegal: bool) -> Callable[[Any, Any], Any]:
    """The in-graph draw ``draw(key, mask)`` of an action (see the module docstring)."""
    if protocol.sample_action is not None:
        own = protocol.sample_action
        return lambda key, mask: own(key)
    draw = _leaf_draw(converted(protocol.action_space))
    if not masks:
        return lambda key, mask: draw(key, None)
    if not illegal:
        return draw

    def maybe_illegal(key: Any, mask: Any) -> Any:
        k_coin, k_draw = jax.random.split(key)
        legal, anything = draw(k_draw, mask), draw(k_draw, None)
        coin = jax.random.bernoulli(k_coin, 0.25)
        return jax.tree.map(lambda a, b: jnp.where(coin, a, b), anything, legal)

    return maybe_illegal


# -- rollouts --------------------------------------------------------------------------------


class Rollouts:
    """The compiled rollouts of one check (see the module docstring)."""

    def __init__(self, protocol: Protocol, horizon: int, masks: bool, illegal: bool) -> None:
        self.protocol, self.horizon = protocol, horizon
        self.draw = drawer(protocol, masks, illegal)
        self.traces = 0
        self.in_place: tuple[int, str] | None = None  # set by eager
        self._drawn = jax.jit(jax.vmap(self._screened_row))
        self._replay_jit = jax.jit(self._replay)
        self.one_reset = jax.jit(protocol.reset)
        self.one_step = jax.jit(protocol.step)
        self._raw = jax.jit(jax.vmap(self._raw_row))
        self._programs: dict[tuple[str, ...], Any] = {}  # (name, *signature) -> its executable

    def _run(self, name: str, function: Any, *args: Any) -> Any:
        """``function(*args)`` through its executable (:func:`.programs.compiled`: shared
        with every rollout of this process that compiles the same program)."""
        key = (name, *signature(args))
        program = self._programs.get(key)
        if program is None:
            program = self._programs[key] = compiled(function, *args)
        return program(*args)

    def drawn(self, seeds: Any, action_keys: Any) -> tuple[Any, Any, Any]:
        """The batched, screened rollout of these rows (see the module docstring)."""
        return self._run("drawn", self._drawn, seeds, action_keys)

    def raw(self, seeds: Any, action_keys: Any) -> Any:
        """The raw rollout of these rows (see the module docstring)."""
        return self._run("raw", self._raw, seeds, action_keys)

    def replay(self, seed: Any, actions: Any) -> tuple[Any, Any]:
        """The unbatched rollout of row ``seed`` feeding ``actions`` (see the module docstring)."""
        return self._run("replay", self._replay_jit, seed, actions)

    def _body(self, k_steps: Any, k_resets: Any, actions: Callable[[Any, Any], Any]) -> Callable[..., Any]:
        step = self.protocol.step

        def body(carry: Any, t: Any) -> Any:
            self.traces += 1  # at trace time only
            state, out, elapsed = carry
            action = actions(t, out.get("mask"))
            state, new = step(state, action, jax.random.fold_in(k_steps, t), jax.random.fold_in(k_resets, t))
            elapsed = jnp.where(new["done"], 0, elapsed + 1) if "done" in new else elapsed + 1
            record = {**new, "action": action, "elapsed": elapsed}
            kept = {k: v for k, v in new.items() if k in out}
            return (state, kept, elapsed), record

        return body

    def _scan(self, seed: Any, actions: Callable[[Any, Any], Any]) -> tuple[Any, Any]:
        k_reset, k_steps, k_resets = row_keys(seed)
        state, out = self.protocol.reset(k_reset)
        carry = (state, {"mask": out["mask"]} if "mask" in out else {}, jnp.zeros((), jnp.int32))
        _, trajectory = jax.lax.scan(self._body(k_steps, k_resets, actions), carry, jnp.arange(self.horizon))
        return out, trajectory

    def _row(self, seed: Any, action_key: Any) -> tuple[Any, Any]:
        return self._scan(seed, lambda t, mask: self.draw(jax.random.fold_in(action_key, t), mask))

    def _screened_row(self, seed: Any, action_key: Any) -> tuple[Any, Any, Any]:
        from spacealg.testing.jax_env.laws import screen

        out0, trajectory = self._row(seed, action_key)
        return out0, trajectory, screen(self.protocol, out0, trajectory)

    def _raw_row(self, seed: Any, action_key: Any) -> Any:
        k_reset, k_steps, k_resets = row_keys(seed)
        state, out = self.protocol.reset(k_reset)

        def body(carry: Any, t: Any) -> Any:
            state, mask, used = carry
            action = self.draw(jax.random.fold_in(action_key, t), mask)
            state, new = self.protocol.step(state, action, jax.random.fold_in(k_steps, t),
                                            jax.random.fold_in(k_resets, t))
            # every output used, as a training loop uses them (else the compiler drops their work)
            used = used + sum(jnp.sum(leaf).astype(jnp.float32) for leaf in jax.tree.leaves(new) if not _is_key(leaf))
            return (state, new.get("mask"), used), None

        carry = (state, out.get("mask"), jnp.zeros((), jnp.float32))
        return jax.lax.scan(body, carry, jnp.arange(self.horizon))[0][::2]

    def throughput(self, seeds: Any, action_keys: Any, seconds: float = 0.25) -> float:
        """Steps per second of :attr:`raw` on these rows: compiled first, then run again and
        again for ``seconds`` (at least five times), the median run's (as disturbed by other
        work on the machine as a typical example of the search)."""
        jax.block_until_ready(self.raw(seeds, action_keys))
        runs: list[float] = []
        started = time.perf_counter()
        while len(runs) < 5 or time.perf_counter() - started < seconds:
            begun = time.perf_counter()
            jax.block_until_ready(self.raw(seeds, action_keys))
            runs.append(time.perf_counter() - begun)
        return len(seeds) * self.horizon / sorted(runs)[len(runs) // 2]

    def _replay(self, seed: Any, actions: Any) -> tuple[Any, Any]:
        return self._scan(seed, lambda t, mask: jax.tree.map(lambda a: a[t], actions))

    def eager(self, seed: int, actions: Any, steps: int) -> list[Any]:
        """``[reset's (state, out), then each step's (state, out)]`` for the first ``steps``
        recorded ``actions`` (a pytree with a leading time axis), run without ``jit``. Each
        recorded state is a copy of its containers taken before the next step runs, so it is
        the state that step was given even where the step changes it in place (navix's
        ``State.set_player`` assigns into the state's own dict). ``in_place`` is then
        ``(step, what)`` for the first step (1-based) whose given state no longer equals its
        copy afterwards (:func:`changed`), else None. Outputs are recorded as JAX arrays
        (:func:`_typed`)."""
        self.in_place = None
        with jax.disable_jit():
            k_reset, k_steps, k_resets = row_keys(np.uint32(seed))
            state, out = self.protocol.reset(k_reset)
            seen = [(_copied(state), _typed(out))]
            for t in range(steps):
                action = jax.tree.map(lambda a, t=t: a[t], actions)
                given = state
                state, out = self.protocol.step(
                    state, action, jax.random.fold_in(k_steps, t), jax.random.fold_in(k_resets, t)
                )
                what = changed(given, seen[-1][0]) if self.in_place is None else None
                if what is not None:
                    self.in_place = (t + 1, what)
                seen.append((_copied(state), _typed(out)))
        return seen


def _typed(out: Any) -> Any:
    """``out`` with each leaf that is not a JAX array (a Python or NumPy scalar or array,
    which eager code may return where compiled code returns an array) as the JAX array that
    ``jit`` would make of it (``jnp.asarray``: a Python int is int32, a float float32, NumPy's
    64-bit types 32-bit without x64), so that eager and compiled runs compare by JAX's types."""
    return jax.tree.map(_as_jax, out)


def _as_jax(a: Any) -> Any:
    if isinstance(a, jax.Array):
        return a
    try:
        return jnp.asarray(a)
    except TypeError:  # not an array type (left to the laws that read it)
        return a


def changed(tree: Any, copy: Any) -> str | None:
    """Where ``tree`` no longer equals ``copy`` (its :func:`_copied` copy, taken earlier):
    ``"its pytree structure"`` or the path of the first leaf whose shape, dtype or values
    differ; None if it equals it. A leaf that is a new object of equal value is unchanged
    (a node may rebuild its leaves when flattened)."""
    paths = jax.tree_util.tree_flatten_with_path(tree)[0]
    leaves, structure_copy = jax.tree.flatten(copy)
    structure: Any = jax.tree.structure(tree)  # PyTreeDef's stubs declare no comparison
    if structure != structure_copy:
        return "its pytree structure"
    for (path, a), b in zip(paths, leaves):
        if a is not b and not _equal_values(a, b):
            return jax.tree_util.keystr(path) or "the state"
    return None


def _is_key(x: Any) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and bool(jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key))


def _equal_values(a: Any, b: Any) -> bool:
    if _is_key(a) or _is_key(b):
        if not (_is_key(a) and _is_key(b)):
            return False
        a, b = jax.random.key_data(a), jax.random.key_data(b)
    return same(np.asarray(a), np.asarray(b))


def _copied(tree: Any) -> Any:
    """``tree`` with new containers (and copies of NumPy leaves): what a later in-place
    change of the original cannot reach."""
    return jax.tree.map(lambda a: np.array(a, copy=True) if isinstance(a, np.ndarray) else a, tree)
