"""Counting and enumerating finite spaces without hanging or materialising them.

``power``, ``count_product`` and ``geometric_count`` are exact integer arithmetic (never
``math.prod`` over a huge list, never a loop over a huge range), refusing with
OverflowError a count too large to write down (more than :data:`MAX_COUNT_BITS` bits),
and ``lazy_product`` enumerates a Cartesian product in C order (last factor fastest)
holding one element at a time: unlike ``itertools.product`` it never stores its inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["MAX_COUNT_BITS", "count_product", "geometric_count", "lazy_product", "power"]

MAX_COUNT_BITS = 2**24
"""The largest cardinality spacealg computes exactly has this many bits (about 5 million
decimal digits, a fraction of a second); larger counts raise OverflowError."""


def _check_bits(bits: float, what: str) -> None:
    if bits > MAX_COUNT_BITS:
        raise OverflowError(
            f"cardinality: {what} has about 2**{bits:.3g} elements, more than spacealg counts "
            f"exactly (2**{MAX_COUNT_BITS}); the space is finite but too large to count"
        )


def power(n: int | float, k: int) -> int | float:
    """``n ** k`` for a count ``n`` (an int or inf) and an exponent ``k >= 0``, exactly."""
    if k == 0:
        return 1
    if n == math.inf or n in (0, 1):
        return n
    _check_bits(k * math.log2(n), f"a power {n}**{k}")
    return int(n) ** k


def count_product(counts: Iterable[int | float]) -> int | float:
    """The product of counts (0 wins over inf; inf over any int), exactly."""
    values = list(counts)
    if any(c == 0 for c in values):
        return 0
    if any(c == math.inf for c in values):  # before multiplying: inf * a huge int overflows
        return math.inf
    _check_bits(sum(math.log2(c) for c in values), "a product")
    return math.prod(values)  # type: ignore[arg-type]


def geometric_count(k: int, low: int, high: int) -> int:
    """``sum(k ** n for n in range(low, high + 1))`` in closed form (0 if ``low > high``)."""
    if low > high:
        return 0
    if k == 0:
        return 1 if low == 0 else 0
    if k == 1:
        return high - low + 1
    _check_bits((high + 1) * math.log2(k), f"a sum of powers of {k} up to {high}")
    return (k ** (high + 1) - k**low) // (k - 1)


def lazy_product(factor: Callable[[int], Iterable[Any]], n: int) -> Iterator[tuple[Any, ...]]:
    """The tuples of ``itertools.product(factor(0), ..., factor(n - 1))``, in its order,
    re-iterating ``factor(i)`` (a fresh iterable each call) instead of storing it."""
    if n == 0:
        yield ()
        return
    iterators = [iter(factor(0))]
    values: list[Any] = []
    while iterators:
        depth = len(iterators)
        try:
            value = next(iterators[-1])
        except StopIteration:
            iterators.pop()
            if values:
                values.pop()
            continue
        if depth == n:
            yield (*values, value)
        else:
            values.append(value)
            iterators.append(iter(factor(depth)))
