"""`spacealg describe`: the newcomer's first run, and describe() on any space."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest

import spacealg as sa
from spacealg.cli import main
from spacealg.describe import describe, describe_fields


def test_describe_cartpole(capsys):
    assert main(["describe", "CartPole-v1"]) == 0
    out = capsys.readouterr().out
    assert "observation space" in out and "action space" in out
    assert "ContinuousSpaceStyle(shape=(4,))" in out
    assert "FiniteSpaceStyle(shape=())" in out
    assert "cardinality  2" in out and "cardinality  ∞" in out


def test_describe_an_unknown_id_exits_with_status_2(capsys):
    assert main(["describe", "NoSuchEnv-v0"]) == 2
    assert "cannot make" in capsys.readouterr().err


def test_describe_as_a_module_command():
    done = subprocess.run(
        [sys.executable, "-m", "spacealg", "describe", "Blackjack-v1"], capture_output=True, text=True, check=True
    )
    assert "TupleProduct(range(0, 32), range(0, 11), range(0, 2))" in done.stdout
    assert "cardinality  704" in done.stdout


@pytest.mark.parametrize(
    ("space", "field", "expected"),
    [
        (sa.Interval(0, 1), "style", "ContinuousSpaceStyle(shape=())"),
        (("a", "b"), "cardinality", "2"),
        (sa.ArraySpace(bool, 2, 2), "elsize", "(2, 2)"),
        (sa.FiniteSet("a", "b"), "bounds", "—"),
        (sa.OneOf(range(2), sa.Interval(0, 1)), "elsize", "—"),
        (gymnasium.spaces.Discrete(3, start=1), "bounds", "(1, 3)"),
        (sa.Box(0, 1, shape=(3,), dtype=np.float32), "bounds", "(0.0 (all 3), 1.0 (all 3))"),
        (np.int64, "cardinality", "2^64 ≈ 1.84 × 10^19"),
    ],
)
def test_describe_fields(space, field, expected):
    assert describe_fields(space)[field] == expected


def test_describe_names_the_given_space_when_converted():
    text = describe(gymnasium.spaces.Discrete(3), title="action space")
    assert text.splitlines()[0] == "action space"
    assert "given" in text and "range(0, 3)" in text
