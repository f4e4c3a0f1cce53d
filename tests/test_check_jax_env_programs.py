"""The JAX checker's compiled programs, shared by the checks of one process that compile the
same program (spacealg.testing.jax_env.programs): what an executable computes is what its
function computes, two programs share one only where they are the same program, and a second
check of an environment compiles nothing."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("hypothesis")

import jax
import jax.numpy as jnp
from hypothesis import given, settings
from hypothesis import strategies as st

from spacealg.testing.jax_env.programs import _PROGRAMS, MAX_PROGRAMS, compiled

FLOATS = st.floats(-4, 4, width=32)


def _scaled(constant: np.ndarray, offset: float):
    """A fresh jit function (JAX's own cache never serves it) closing over an array and a scalar."""
    return jax.jit(lambda x: x * constant + offset)


@settings(max_examples=12, deadline=None, database=None)
@given(st.lists(FLOATS, min_size=3, max_size=3), st.lists(FLOATS, min_size=3, max_size=3), FLOATS, FLOATS,
       st.booleans())
def test_an_executable_computes_what_its_function_does_and_is_shared_only_by_the_same_program(c1, c2, o1, o2, again):
    if again:  # the same constants, closed over by a second function
        c2, o2 = c1, o1
    x = np.arange(3, dtype=np.float32)
    first, second = _scaled(np.float32(c1), o1), _scaled(np.float32(c2), o2)
    one, other = compiled(first, x), compiled(second, x)
    assert np.array_equal(one(x), first(x)) and np.array_equal(other(x), second(x))
    same = np.float32(c1).tobytes() == np.float32(c2).tobytes() and np.float32(o1).tobytes() == np.float32(o2).tobytes()
    assert (one is other) == same  # (bit for bit: x * c + 0.0 and x * c - 0.0 are two programs)
    assert compiled(first, x[None]) is not one  # another shape: another program
    assert len(_PROGRAMS) <= MAX_PROGRAMS


def test_programs_that_call_different_python_functions_are_not_shared():
    def callback(value):
        return jax.pure_callback(lambda v: np.asarray(v) + 1, jax.ShapeDtypeStruct((), jnp.float32), value)

    def other_callback(value):
        return jax.pure_callback(lambda v: np.asarray(v) - 1, jax.ShapeDtypeStruct((), jnp.float32), value)

    x = np.float32(1)
    plus, minus = jax.jit(callback), jax.jit(other_callback)
    assert compiled(plus, x)(x) == 2 and compiled(minus, x)(x) == 0


def test_a_second_check_of_the_same_environment_compiles_no_rollout_again():
    """Two checks of fresh walks (new objects, JAX's cache cold for their functions) run
    the same executables; a walk with a defect in its step is another program."""
    from spacealg.adapters.jax_protocols import adapt
    from spacealg.testing.jax_env.check import _keys, _seeds
    from spacealg.testing.jax_env.rollout import Rollouts
    from tests.jax_toy_envs import make_walk

    seeds, keys = _seeds(7, 4), _keys(3, 4)
    runs = []
    for walk in (make_walk(), make_walk(), make_walk("observation-in-space")):
        rollouts = Rollouts(adapt(walk), 6, masks=True, illegal=False)
        out = jax.device_get(rollouts.drawn(seeds, keys))
        runs.append((rollouts, out))
    (first, out1), (second, out2), (buggy, _) = runs
    executables = [set(map(id, r._programs.values())) for r in (first, second, buggy)]
    assert executables[0] == executables[1] and not executables[0] & executables[2]
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(out1), jax.tree.leaves(out2)))
