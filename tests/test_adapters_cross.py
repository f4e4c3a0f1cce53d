"""Conversions through spacealg between ecosystems keep the set (issue 15): Gymnasium ->
TorchRL -> dm_env -> Gymnasium, and through gymnax and Jumanji, checked with Hypothesis on
members of either end."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.strategies import members
from tests.foreign_laws import gymnasium_leaves

pytest.importorskip("dm_env")
pytest.importorskip("torchrl")
from spacealg.adapters.dm_env import from_dm_env, to_dm_env
from spacealg.adapters.torchrl import from_torchrl, to_torchrl

gymnasium_spaces = sa.strategies.gymnasium_spaces(classes=(*gymnasium_leaves, "Dict")).filter(
    lambda g: bool(sa.flatten_space(g))
)


def _through(g, *steps):
    space = sa.from_gymnasium(g)
    for to, back in steps:
        space = back(to(space))
    return sa.to_gymnasium(space)


def _same_set(a, b, data) -> None:
    """Members of each are members of the other (the set is kept)."""
    x = data.draw(members(a), label="member of the start")
    assert sa.contains(x, b), f"{x!r} in {a!r} but not in {b!r}"
    y = data.draw(members(b), label="member of the end")
    assert sa.contains(y, a), f"{y!r} in {b!r} but not in {a!r}"


def _convertible(g, *targets) -> bool:
    try:
        space = sa.from_gymnasium(g)
        for to in targets:
            to(space)
        return True
    except TypeError:  # a dtype the target cannot hold (uint16 in torch, 64 bits in JAX)
        return False


@given(gymnasium_spaces, st.data())
def test_gymnasium_torchrl_dm_env_gymnasium_keeps_the_set(g, data):
    if not _convertible(g, to_torchrl):
        return
    end = _through(g, (to_torchrl, from_torchrl), (to_dm_env, from_dm_env))
    _same_set(sa.from_gymnasium(g), sa.from_gymnasium(end), data)


@settings(max_examples=12)  # JAX dispatches op by op: keep it short
@given(gymnasium_spaces, st.data())
def test_gymnasium_gymnax_jumanji_dm_env_keeps_the_set(g, data):
    pytest.importorskip("gymnax")
    pytest.importorskip("jumanji")
    from spacealg.adapters.gymnax import from_gymnax, to_gymnax
    from spacealg.adapters.jumanji import from_jumanji, to_jumanji

    if not _convertible(g, to_gymnax):
        return
    end = _through(g, (to_gymnax, from_gymnax), (to_jumanji, from_jumanji), (to_dm_env, from_dm_env))
    _same_set(sa.from_gymnasium(end), sa.from_gymnasium(_through(g, (to_gymnax, from_gymnax))), data)


def test_discrete_start_survives_torchrl_and_dm_env():
    import gymnasium

    g = gymnasium.spaces.Discrete(3, start=-1)
    end = _through(g, (to_torchrl, from_torchrl), (to_dm_env, from_dm_env))
    assert sa.contains(-1, sa.from_gymnasium(end)) and not sa.contains(2, sa.from_gymnasium(end))
