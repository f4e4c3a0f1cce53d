"""Flat (PufferLib-style) action masks beside emulated actions (spacealg.emulation.masks)."""

from __future__ import annotations

import doctest

import gymnasium.spaces as gs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg import Masked
from spacealg.emulation import Codec, emulate_action_space
from spacealg.emulation.masks import action_mask_size, emulate_action_mask, nativize_action_mask
from spacealg.strategies.masks import mask_bases, masks


def _emulated_digits(x, space):
    """The digits of x's emulated action, read from the emulation itself (value - start)."""
    emulated, _ = emulate_action_space(space)
    action = np.asarray(Codec(space, role="action").emulate(x)).reshape(-1)
    start = np.asarray(getattr(emulated, "start", 0)).reshape(-1)
    return (action - start).astype(int), emulated


@given(st.data(), st.integers(0, 2**16))
@settings(max_examples=30)
def test_an_action_is_allowed_iff_each_emulated_entry_is_true_in_its_segment(data, seed):
    # a OneHot's action emulates to one two-choice entry per vector entry, not to its hot
    # positions, so its masks (over the positions) have no emulated form (docs/onehot.md, Not covered)
    space = data.draw(mask_bases().filter(lambda s: "OneHot" not in repr(s)))
    mask = data.draw(masks(space))
    emulated, _ = emulate_action_space(space)
    if not (hasattr(emulated, "nvec") or hasattr(emulated, "n")):  # a top-level integer Box stays a Box
        with pytest.raises(TypeError, match="not a Discrete/MultiDiscrete action"):
            emulate_action_mask(mask, space)
        return
    try:
        flat = emulate_action_mask(mask, space)
    except ValueError:  # a joint mask that couples factors has no flat form
        flat = emulate_action_mask(mask, space, marginal=True)
        assert Masked(space, mask) <= Masked(space, nativize_action_mask(flat, space))
        return
    assert flat.shape == (action_mask_size(space),) and flat.dtype == bool
    legal = Masked(space, mask)
    assert Masked(space, nativize_action_mask(flat, space)) == legal
    cuts = np.cumsum([0, *sa.spaces.masked.factors(space).sizes])
    for x in [sa.sample(space, rng=seed + i) for i in range(5)]:
        digits, _ = _emulated_digits(x, space)
        assert sa.contains(x, legal) == all(flat[cuts[i] + d] for i, d in enumerate(digits))


def test_gymnasium_dict_action_round_trip_and_batches():
    space = gs.Dict({"move": gs.Discrete(4), "target": gs.MultiDiscrete([3, 2]), "fire": gs.MultiBinary(1)})
    mask = {"move": np.array([0, 1, 1, 0], np.int8), "target": None, "fire": np.array([0], np.int8)}
    flat = emulate_action_mask(mask, space)
    assert flat.astype(int).tolist() == [1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1]  # fire: only 0; move: 1, 2
    back = nativize_action_mask(flat, space)
    assert Masked(space, back) == Masked(space, mask)
    batch = np.stack([flat, np.ones_like(flat)])
    rows = nativize_action_mask(batch, space)
    assert rows["move"].shape == (2, 4)
    drawn = sa.sample(sa.from_gymnasium(space), 2, mask=rows, rng=0)
    assert drawn["move"][0] in (1, 2) and drawn["fire"][0, 0] == 0
    assert (emulate_action_mask(rows, space) == batch).all()


def test_discrete_action_mask_is_the_mask_itself():
    flat = emulate_action_mask(np.array([1, 0, 1], np.int8), gs.Discrete(3, start=5))
    assert flat.tolist() == [True, False, True]


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="couples"):
        emulate_action_mask(np.eye(3, dtype=bool), sa.Categorical([3, 3]))
    with pytest.raises(ValueError, match="length 6"):
        nativize_action_mask(np.ones(5, dtype=bool), sa.Categorical([3, 3]))
    with pytest.raises(TypeError):
        emulate_action_mask(None, gs.Tuple((gs.Discrete(2), gs.Box(0, 1, (1,)))))


@pytest.mark.parametrize("module", ["spacealg.spaces.masked", "spacealg.emulation.masks"])
def test_module_examples_run(module):
    import importlib

    failures, _ = doctest.testmod(importlib.import_module(module))
    assert failures == 0
