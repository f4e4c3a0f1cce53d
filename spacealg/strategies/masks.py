"""Hypothesis strategies for masks: finite spaces that masks apply to, masks of every shape
users write (joint arrays, per-factor tuples, per-component tuples/dicts, ``None`` parts),
batches of masks, probability weights, the masked spaces themselves, Gymnasium-convention
masks (well-formed or spoiled), and ``members(Masked(...))``: the legal elements, shrinking
toward the first legal one.

>>> from hypothesis import given
>>> from spacealg.strategies.masks import masked_spaces
>>> @given(masked_spaces())
... def test_samples_are_legal(m): ...
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from hypothesis import strategies as st

from spacealg.core.protocol import cardinality, element
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.finite import BOOL, FiniteSet
from spacealg.spaces.masked import Factors, Masked, factors
from spacealg.spaces.onehot import OneHot
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.strategies.members import members

__all__ = ["gymnasium_masks", "mask_bases", "masked_spaces", "masks", "probabilities"]

_JOINT_LIMIT = 4096


@st.composite
def _leaf_bases(draw: Any) -> Any:
    kind = draw(st.sampled_from(["range", "finite", "categorical", "bool", "box", "onehot"]))
    if kind == "range":
        start, step, n = draw(st.integers(-5, 5)), draw(st.sampled_from([1, 1, 2, -1])), draw(st.integers(1, 5))
        return range(start, start + step * n, step)
    if kind == "finite":
        items = draw(
            st.lists(
                st.one_of(st.integers(-9, 9), st.text("abc", min_size=1, max_size=2)),
                min_size=1,
                max_size=4,
                unique_by=lambda v: (type(v) is str, v),
            )
        )
        return FiniteSet(*items)
    if kind == "categorical":
        n, start = draw(st.integers(1, 5)), draw(st.integers(-3, 3))
        return Categorical(
            n, start=start, dtype=draw(st.sampled_from([np.int64, np.int32, np.uint8])) if start >= 0 else np.int64
        )
    if kind == "bool":
        return BOOL
    if kind == "onehot":  # masks over the hot positions (its image)
        sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
        nvec = sizes[0] if len(sizes) == 1 and draw(st.booleans()) else sizes
        return OneHot(nvec, dtype=draw(st.sampled_from([np.bool_, np.float32, np.int64])))
    low = draw(st.integers(-3, 3))
    return Box(low, low + draw(st.integers(0, 3)), shape=(), dtype=np.int64)


@st.composite
def _array_bases(draw: Any) -> Any:
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    kind = draw(st.sampled_from(["multidiscrete", "uniform", "multibinary", "box"]))
    if kind == "multidiscrete":
        nvec = draw(st.lists(st.integers(1, 4), min_size=math.prod(shape), max_size=math.prod(shape)))
        return Categorical(np.array(nvec).reshape(shape), dtype=np.int64)
    if kind == "uniform":
        return ArraySpace(range(draw(st.integers(1, 4))), *shape)
    if kind == "multibinary":
        return ArraySpace(bool, *shape)
    return Box(0, draw(st.integers(0, 2)), shape=shape, dtype=np.int8)


def mask_bases(max_depth: int = 2) -> st.SearchStrategy[Any]:
    """Small finite spaces masks apply to: leaves (ranges, finite sets, Categorical, bool,
    integer Box, OneHot), arrays (MultiDiscrete forms, MultiBinary, integer boxes) and products."""
    leaves = st.one_of(_leaf_bases(), _array_bases())

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, min_size=1, max_size=3).map(lambda c: TupleProduct(*c)),
            st.dictionaries(st.sampled_from("abcd"), children, min_size=1, max_size=3).map(DictProduct),
        )

    return st.recursive(leaves, extend, max_leaves=4 if max_depth > 1 else 1).filter(
        lambda s: math.prod(factors(s).sizes) <= _JOINT_LIMIT
    )


def _values(draw: Any, shape: tuple[int, ...], what: str, density: float) -> np.ndarray:
    n = math.prod(shape)
    if what == "mask":
        bits = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
        return np.array([b < density for b in bits], dtype=bool).reshape(shape)
    weights = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n))
    return np.array(weights, dtype=np.float64).reshape(shape)


def _form(draw: Any, node: Any, what: str, batch: tuple[int, ...], density: float) -> Any:
    if not isinstance(node, Factors):
        if isinstance(node, Mapping):
            return {k: _form(draw, c, what, batch, density) for k, c in node.items()}
        return tuple(_form(draw, c, what, batch, density) for c in node)
    choices = ["joint"] + (["none"] if what == "mask" else []) + (["parts"] if node.children is not None else [])
    choice = draw(st.sampled_from(choices))
    if choice == "none":
        return None
    if choice == "parts":
        return _form(draw, node.children, what, batch, density)
    row_batch = batch if draw(st.booleans()) else ()
    return _values(draw, row_batch + node.sizes, what, density)


@st.composite
def masks(draw: Any, space: Any, batch: tuple[int, ...] = (), density: float | None = None) -> Any:
    """Masks of ``space`` in any of spacealg's forms; with ``batch``, arrays may carry that
    leading batch shape (one mask per row). ``density``: the chance of an entry being true."""
    p = draw(st.sampled_from([0.3, 0.6, 0.9])) if density is None else density
    return _form(draw, factors(space), "mask", batch, p)


@st.composite
def probabilities(draw: Any, space: Any, batch: tuple[int, ...] = ()) -> Any:
    """Probability weights of ``space`` (non-negative; normalised by ``sample``)."""
    return _form(draw, factors(space), "probability", batch, 1.0)


@st.composite
def masked_spaces(draw: Any, bases: st.SearchStrategy[Any] | None = None, nonempty: bool = False) -> Masked:
    """``Masked(space, mask)`` over generated bases and masks (``nonempty``: at least one member)."""
    space = draw(bases if bases is not None else mask_bases())
    masked = Masked(space, draw(masks(space)))
    if nonempty and masked.is_empty:
        masked = Masked(space, None)
    return masked


# -- Gymnasium's mask conventions ----------------------------------------------------------------


def _gym_leaf(draw: Any, shape: tuple[int, ...], what: str, values: tuple[int, ...] = (0, 1)) -> np.ndarray:
    n = math.prod(shape)
    if what == "mask":
        return np.array(draw(st.lists(st.sampled_from(values), min_size=n, max_size=n)), dtype=np.int8).reshape(shape)
    weights = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 5.0]), min_size=n, max_size=n)), dtype=np.float64)
    if n and not weights.sum():
        weights[0] = 1.0
    return (weights / weights.sum()).reshape(shape) if n else weights.reshape(shape)


def _gym_form(draw: Any, space: Any, what: str) -> Any:
    import gymnasium.spaces as gs

    def part(subspace: Any) -> Any:  # a subspace's mask, or None
        return draw(st.one_of(st.none(), st.just(subspace).map(lambda c: _gym_form(draw, c, what))))

    if isinstance(space, gs.Discrete):
        return _gym_leaf(draw, (int(space.n),), what)
    if isinstance(space, gs.MultiDiscrete):

        def nested(nvec: np.ndarray) -> Any:
            if nvec.ndim == 1:
                return tuple(_gym_leaf(draw, (int(n),), what) for n in nvec)
            return tuple(nested(row) for row in nvec)

        return nested(np.asarray(space.nvec))
    if isinstance(space, gs.MultiBinary):
        if what == "mask":
            return _gym_leaf(draw, tuple(space.shape), what, (0, 1, 2))
        n = math.prod(space.shape)
        return np.array(draw(st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=n, max_size=n))).reshape(space.shape)
    if isinstance(space, gs.Text):
        length = draw(st.one_of(st.none(), st.integers(space.min_length, space.max_length)))
        chars = draw(
            st.one_of(st.none(), st.just(None).map(lambda _: _gym_leaf(draw, (len(space.character_list),), what)))
        )
        return (length, chars)
    if isinstance(space, (gs.Tuple, gs.OneOf)):
        return tuple(part(s) for s in space.spaces)
    if isinstance(space, gs.Dict):
        return {k: part(s) for k, s in space.spaces.items()}
    if isinstance(space, gs.Sequence):
        length = draw(
            st.one_of(st.none(), st.integers(0, 3), st.lists(st.integers(0, 3), min_size=1, max_size=3).map(np.array))
        )
        return (length, part(space.feature_space))
    if isinstance(space, gs.Graph):
        return (None, None)
    return None  # Box: no mask


def _malform(draw: Any, mask: Any) -> Any:
    """One entry of ``mask`` spoiled: wrong dtype, shape, values, container type or length."""
    if isinstance(mask, np.ndarray):
        how = draw(st.sampled_from(["dtype", "shape", "values", "list"]))
        if how == "dtype":
            return mask.astype(draw(st.sampled_from([np.bool_, np.int64, np.float32])))
        if how == "shape":
            return np.concatenate([mask.reshape(-1), mask.reshape(-1)[:1]]) if mask.size else np.zeros(1, mask.dtype)
        if how == "values":
            spoiled = mask.copy()
            if spoiled.size:
                spoiled.reshape(-1)[0] = 7 if spoiled.dtype.kind in "iu" else -0.5
            return spoiled
        return mask.tolist()
    if isinstance(mask, tuple) and mask:
        how = draw(st.sampled_from(["inner", "length", "list"]))
        if how == "length":
            return mask[:-1]
        if how == "list":
            return list(mask)
        i = draw(st.integers(0, len(mask) - 1))
        return (*mask[:i], _malform(draw, mask[i]), *mask[i + 1 :])
    if isinstance(mask, dict) and mask:
        if draw(st.booleans()):
            return {**mask, "zz-extra": None}
        key = draw(st.sampled_from(sorted(mask)))
        return {**mask, key: _malform(draw, mask[key])}
    return draw(st.sampled_from(["bad", 3, np.zeros(2, dtype=np.int8)]))


@st.composite
def gymnasium_masks(draw: Any, space: Any, what: str = "mask", malformed: bool = False) -> Any:
    """A ``mask`` (or ``probability``) in Gymnasium's convention for the Gymnasium ``space``;
    ``malformed`` spoils one part of it (dtype, shape, values, container or length)."""
    mask = _gym_form(draw, space, what)
    return _malform(draw, mask) if malformed else mask


# -- members of a masked space: the legal elements, shrinking toward the first -------------------


@members.register(Masked)
def _masked_members(space: Masked) -> st.SearchStrategy[Any]:
    n = cardinality(space)
    if not n:
        return st.nothing()
    return st.integers(0, int(n) - 1).map(lambda i: element(i, space))
