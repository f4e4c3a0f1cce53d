"""`spacealg describe`: the newcomer's first run, and describe() on any space."""

from __future__ import annotations

import math
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
        (range(10**14), "cardinality", "100,000,000,000,000"),
        # image spaces: beyond Python's int-to-str limit, as a power and in scientific form
        (sa.Box(0, 255, shape=(96, 96, 3), dtype=np.uint8), "cardinality", "256^27648 ≈ 1.04 × 10^66583"),
        (gymnasium.spaces.MultiDiscrete([7] * 30), "cardinality", "7^30 ≈ 2.25 × 10^25"),
        (sa.product(sa.Box(0, 255, (96, 96, 3), np.uint8), range(3)), "cardinality", "≈ 3.13 × 10^66583"),
        (range(10**20), "cardinality", "≈ 1.00 × 10^20"),
        (range(999_499_999_999_999_999), "cardinality", "≈ 9.99 × 10^17"),
        (range(999_999_999_999_999_999), "cardinality", "≈ 1.00 × 10^18"),
    ],
)
def test_describe_fields(space, field, expected):
    assert describe_fields(space)[field] == expected


def test_describe_names_the_given_space_when_converted():
    text = describe(gymnasium.spaces.Discrete(3), title="action space")
    assert text.splitlines()[0] == "action space"
    assert "given" in text and "range(0, 3)" in text


@settings(max_examples=60)
@given(base=st.integers(2, 300), entries=st.integers(1, 4000), extra=st.integers(0, 10**6))
def test_cardinality_text_is_exact_where_it_names_a_power(base, entries, extra):
    """Law: a printed power ``k^m`` equals the cardinality; the scientific form is within
    rounding of it; below 10^15 the number is printed whole."""
    from spacealg.describe import _cardinality_text

    for n, shape in [(base**entries, (entries,)), (base**entries + extra, (entries,)), (base**entries, None)]:
        text = _cardinality_text(n, shape)
        if n < 10**15:
            assert text == f"{n:,}"
            continue
        power, _, scientific = text.rpartition("≈ ")
        if power:
            k, m = (int(part) for part in power.strip().split("^"))
            assert k**m == n
        mantissa, exponent = scientific.split(" × 10^")
        assert 1 <= float(mantissa) < 10
        assert abs(math.log10(n) - (math.log10(float(mantissa)) + int(exponent))) < 0.003  # log10 of any int

