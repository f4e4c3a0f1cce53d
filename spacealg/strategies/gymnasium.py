"""Hypothesis strategies for arbitrary nested Gymnasium (and legacy Gym) spaces.

``gymnasium_spaces(max_depth=2)`` draws all ten Gymnasium classes: Boxes of every dtype
(bool, signed/unsigned integers, float16/32/64) with scalar or per-entry bounds, infinite
ends and 0-d to 3-d shapes; Discrete with any start and integer dtype; MultiDiscrete with
1-d or n-d ``nvec``, per-entry or no ``start`` and any integer dtype; MultiBinary of an int
or a shape; Text with random lengths and charsets (strings in any order, or sets);
Tuple, Dict (keys given as a dict or as pairs in any order), Sequence (``stack`` either
way), Graph (with or without an edge space) and OneOf, nested up to ``max_depth``.

``gym_spaces(max_depth=2)`` does the same for Gym 0.26 (no OneOf, no stacking, no dtypes
for Discrete, no start for MultiDiscrete, Box/Discrete graph features).

Gym 0.26 mishandles an infinite end of an integer Box, so ``gym_spaces`` gives int8 Boxes
(whose finite ends may lie near the dtype's limits) finite ends only: Gym stores the
infinite end as the dtype's limit moved in by 2 and its ``contains`` compares with that,
while its ``sample`` draws an exponential tail beyond it and casts with wrap-around, so
``Box(-inf, -123, (), int8).sample()`` can be 127, and -127 or -128 (members of the set
``from_gym`` reads from the boundedness flags, as Gymnasium 1.x does) fail ``g.contains``.

Two corners are left out on purpose, as Gymnasium itself mishandles them (see the tests):
a 0-d ``MultiDiscrete`` (its own samples are not members) and ``MultiBinary([n])``
(unequal to the same space ``MultiBinary(n)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

__all__ = ["GYMNASIUM_CLASSES", "gym_spaces", "gymnasium_spaces"]

GYMNASIUM_CLASSES = (
    "Box",
    "Discrete",
    "MultiDiscrete",
    "MultiBinary",
    "Text",
    "Tuple",
    "Dict",
    "Sequence",
    "Graph",
    "OneOf",
)
_LEAVES = ("Box", "Discrete", "MultiDiscrete", "MultiBinary", "Text")

_BOX_DTYPES = [
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.bool_,
]
_INT_DTYPES = [np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16]
_ALPHABET = "abcdefghxyzABC019 _-"
_KEYS = st.text(alphabet="abcdefxyz_", min_size=1, max_size=4)


def _shape(draw: Any, min_dims: int = 0, max_dims: int = 3, min_side: int = 0) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(min_side, 3), min_size=min_dims, max_size=max_dims)))


def _values(draw: Any, elements: st.SearchStrategy[Any], shape: tuple[int, ...]) -> np.ndarray:
    size = math.prod(shape)
    return np.array(draw(st.lists(elements, min_size=size, max_size=size)), dtype=object).reshape(shape)


@st.composite
def _box_arguments(
    draw: Any, dtypes: Sequence[Any] = _BOX_DTYPES, finite_dtypes: Sequence[Any] = ()
) -> tuple[Any, Any, tuple[int, ...], Any]:
    """(low, high, shape, dtype) for a Box: scalar or per-entry bounds, possibly infinite
    (never for ``finite_dtypes``)."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = _shape(draw)
    if dtype.kind == "b":
        return 0, 1, shape, dtype
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        elements: st.SearchStrategy[Any] = st.integers(max(int(info.min), -1000), min(int(info.max), 1000))
    else:
        elements = st.floats(-1e3, 1e3, allow_nan=False, width=16 if dtype.itemsize == 2 else 32)
    # no infinities for int64: batch_space (Graph, stacked Sequence) turns them into the
    # dtype's limits, which Gymnasium then cannot sample (it overflows)
    infinite_ok = dtype.kind == "f" or (dtype.kind == "i" and dtype != np.int64)
    infinite_ok = infinite_ok and dtype not in [np.dtype(d) for d in finite_dtypes]
    if draw(st.booleans()):  # scalar bounds (no -0.0: Gymnasium cannot sample Box(0.0, -0.0))
        low, high = sorted((draw(elements) + 0, draw(elements) + 0))
        if infinite_ok and draw(st.integers(0, 3)) == 0:
            low = -np.inf
        if infinite_ok and draw(st.integers(0, 3)) == 0:
            high = np.inf
        return low, high, shape, dtype
    a, b = _values(draw, elements, shape), _values(draw, elements, shape)
    kind = np.float64 if dtype.kind == "f" else np.int64
    low = np.asarray(np.minimum(a, b), dtype=kind) + 0  # + 0: no -0.0
    high = np.asarray(np.maximum(a, b), dtype=kind) + 0
    if infinite_ok and draw(st.booleans()):
        low = np.where(_values(draw, st.booleans(), shape).astype(bool), -np.inf, low)
        high = np.where(_values(draw, st.booleans(), shape).astype(bool), np.inf, high)
    return _bound(low, dtype), _bound(high, dtype), shape, dtype


def _bound(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Bounds in the Box's dtype, or float64 where they hold infinities (for integer Boxes)."""
    return values if np.isinf(values.astype(np.float64)).any() and dtype.kind != "f" else values.astype(dtype)


def _fits(dtype: np.dtype, low: int, high: int) -> bool:
    info = np.iinfo(dtype)
    return int(info.min) <= low and high <= int(info.max)


@st.composite
def _discrete_arguments(draw: Any, dtypes: Sequence[Any] = _INT_DTYPES) -> tuple[int, int, Any]:
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    n = draw(st.integers(1, 12))
    start = draw(st.one_of(st.just(0), st.integers(-20, 20), st.integers(-(2**40), 2**40)))
    if not _fits(dtype, start, start + n - 1):
        start = 0
    return n, start, dtype


@st.composite
def _multidiscrete_arguments(
    draw: Any, dtypes: Sequence[Any] = _INT_DTYPES, starts: bool = True
) -> tuple[Any, Any, Any]:
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = _shape(draw, min_dims=1, max_dims=3, min_side=1)
    if draw(st.booleans()):
        nvec = np.full(shape, draw(st.integers(1, 5)), dtype=np.int64)
    else:
        nvec = _values(draw, st.integers(1, 5), shape).astype(np.int64)
    start = None
    if starts and draw(st.booleans()):
        low = 0 if dtype.kind == "u" else -10
        if draw(st.booleans()):
            start = np.full(shape, draw(st.integers(low, 10)), dtype=np.int64)
        else:
            start = _values(draw, st.integers(low, 10), shape).astype(np.int64)
        if not _fits(dtype, int(start.min()), int((start + nvec - 1).max())):
            start = None
    return nvec.astype(dtype), None if start is None else start.astype(dtype), dtype


@st.composite
def _multibinary_argument(draw: Any) -> Any:
    if draw(st.booleans()):
        return draw(st.integers(1, 6))
    return list(_shape(draw, min_dims=2, max_dims=3, min_side=1))


@st.composite
def _text_arguments(draw: Any) -> tuple[int, int | None, Any]:
    max_length = draw(st.integers(0, 6))
    min_length = draw(st.one_of(st.none(), st.integers(0, max_length)))
    if min_length is None and max_length < 1:
        max_length = 1
    kind = draw(st.sampled_from(["default", "string", "set"]))
    if kind == "default":
        return max_length, min_length, None
    chars = draw(st.lists(st.sampled_from(_ALPHABET), min_size=1, max_size=8, unique=True))
    return max_length, min_length, "".join(chars) if kind == "string" else frozenset(chars)


def _text(module: Any, arguments: tuple[int, int | None, Any]) -> Any:
    max_length, min_length, charset = arguments
    kwargs: dict[str, Any] = {}
    if min_length is not None:
        kwargs["min_length"] = min_length
    if charset is not None:
        kwargs["charset"] = charset
    return module.Text(max_length, **kwargs)


@st.composite
def _dict_space(draw: Any, module: Any, children: st.SearchStrategy[Any], max_width: int) -> Any:
    keys = draw(st.lists(_KEYS, min_size=0, max_size=max_width, unique=True))
    pairs = [(k, draw(children)) for k in keys]
    form = draw(st.sampled_from(["pairs", "dict", "keywords"]))
    if form == "pairs":  # any order, kept
        return module.Dict(pairs)
    if form == "dict":  # sorted by Gymnasium
        return module.Dict(dict(pairs))
    return module.Dict(**dict(pairs))


def _stackable(gs: Any, children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Spaces Gymnasium can stack (Graph features, stacked Sequences): no empty Tuple/Dict,
    whose stacks Gymnasium cannot iterate."""
    return children.filter(lambda s: not (isinstance(s, (gs.Tuple, gs.Dict)) and len(s.spaces) == 0))


def _nested(
    leaf: st.SearchStrategy[Any],
    composites: dict[str, Callable[[st.SearchStrategy[Any]], st.SearchStrategy[Any]]],
    max_depth: int,
) -> st.SearchStrategy[Any]:
    strategy = leaf
    for _ in range(max_depth):
        children = strategy
        strategy = st.one_of(leaf, *[build(children) for build in composites.values()])
    return strategy


def _check_classes(classes: Sequence[str], allowed: Sequence[str], function: str) -> None:
    unknown = set(classes) - set(allowed)
    if unknown:
        raise ValueError(f"{function}: unknown classes {sorted(unknown)}; choose from {list(allowed)}")
    if not set(classes) & set(_LEAVES):
        raise ValueError(f"{function}: classes must include at least one of {list(_LEAVES)}")


def gymnasium_spaces(
    max_depth: int = 2, *, classes: Sequence[str] = GYMNASIUM_CLASSES, max_width: int = 3
) -> st.SearchStrategy[Any]:
    """Arbitrary Gymnasium spaces of the given ``classes``, nested up to ``max_depth``."""
    import gymnasium.spaces as gs

    _check_classes(classes, GYMNASIUM_CLASSES, "gymnasium_spaces")
    leaves = {
        "Box": _box_arguments().map(lambda a: gs.Box(a[0], a[1], shape=a[2], dtype=a[3])),
        "Discrete": _discrete_arguments().map(lambda a: gs.Discrete(a[0], start=a[1], dtype=a[2])),
        "MultiDiscrete": _multidiscrete_arguments().map(
            lambda a: gs.MultiDiscrete(a[0], dtype=a[2], start=a[1])
        ),
        "MultiBinary": _multibinary_argument().map(gs.MultiBinary),
        "Text": _text_arguments().map(lambda a: _text(gs, a)),
    }
    leaf = st.one_of(*[leaves[c] for c in classes if c in leaves])

    def parts(children: st.SearchStrategy[Any], min_size: int = 0) -> st.SearchStrategy[list[Any]]:
        return st.lists(children, min_size=min_size, max_size=max_width)

    composites = {
        "Tuple": lambda c: parts(c).map(gs.Tuple),
        "Dict": lambda c: _dict_space(gs, c, max_width),
        "Sequence": lambda c: st.one_of(
            c.map(gs.Sequence), _stackable(gs, c).map(lambda s: gs.Sequence(s, stack=True))
        ),
        "Graph": lambda c: st.builds(gs.Graph, _stackable(gs, c), st.one_of(st.none(), _stackable(gs, c))),
        "OneOf": lambda c: parts(c, min_size=1).map(gs.OneOf),
    }
    chosen = {k: v for k, v in composites.items() if k in classes}
    return _nested(leaf, chosen, max_depth) if chosen else leaf


GYM_CLASSES = GYMNASIUM_CLASSES[:-1]


def gym_spaces(
    max_depth: int = 2, *, classes: Sequence[str] = GYM_CLASSES, max_width: int = 3
) -> st.SearchStrategy[Any]:
    """Arbitrary legacy Gym (0.26) spaces of the given ``classes``, nested up to ``max_depth``.

    Needs ``gym``; raises ImportError without it.
    """
    from spacealg.adapters.gym import gym_spaces as gs

    if gs is None:
        raise ImportError("gym_spaces: the gym package is not installed")
    _check_classes(classes, GYM_CLASSES, "gym_spaces")
    box_dtypes = [np.float32, np.float64, np.int8, np.int32, np.uint8]
    leaves = {
        # int8: finite ends only (Gym's infinite integer ends, see the module docstring)
        "Box": _box_arguments(box_dtypes, finite_dtypes=[np.int8]).map(lambda a: _gym_box(gs, a)),
        "Discrete": _discrete_arguments([np.int64]).map(lambda a: gs.Discrete(a[0], start=a[1])),
        "MultiDiscrete": _multidiscrete_arguments(_INT_DTYPES, starts=False).map(
            lambda a: gs.MultiDiscrete(a[0], dtype=a[2])
        ),
        "MultiBinary": _multibinary_argument().map(gs.MultiBinary),
        "Text": _text_arguments().map(lambda a: _text(gs, (a[0], a[1], _ordered(a[2])))),
    }
    leaf = st.one_of(*[leaves[c] for c in classes if c in leaves])
    # Gym's Graph samples Discrete features from 0, whatever their start
    graph_leaves = {**leaves, "Discrete": st.integers(1, 12).map(gs.Discrete)}
    features = st.one_of(*[graph_leaves[c] for c in ("Box", "Discrete") if c in classes] or [st.nothing()])
    composites = {
        "Tuple": lambda c: st.lists(c, max_size=max_width).map(gs.Tuple),
        "Dict": lambda c: _dict_space(gs, c, max_width).filter(lambda d: len(d.spaces) > 0),
        "Sequence": lambda c: c.map(gs.Sequence),
        "Graph": lambda c: st.builds(gs.Graph, features, st.one_of(st.none(), features)),
    }
    chosen = {k: v for k, v in composites.items() if k in classes}
    return _nested(leaf, chosen, max_depth) if chosen else leaf


def _ordered(charset: Any) -> Any:
    """Gym keeps a set's (hash-dependent) iteration order: give it strings only."""
    return "".join(sorted(charset)) if isinstance(charset, frozenset) else charset


def _gym_box(gs: Any, arguments: tuple[Any, Any, tuple[int, ...], Any]) -> Any:
    low, high, shape, dtype = arguments
    with np.errstate(invalid="ignore"):  # Gym casts infinities before replacing them
        return gs.Box(low, high, shape=shape, dtype=dtype)
