"""``sample(g, size, mask=..., probability=...)`` on Gymnasium spaces, with Gymnasium's conventions.

One rule per Gymnasium class, each accepting exactly the ``mask``/``probability`` that
``g.sample`` accepts, with the same meaning and the same exception types for malformed
ones (:class:`~spacealg.spaces.masked.MaskError` and ``MaskTypeError`` are also
AssertionErrors, as Gymnasium raises; a mask for a ``Box`` raises an error that is both a
TypeError and ``gymnasium.error.Error``):

=============  =======================================================================
class          mask (``probability``: the same with float64 weights summing to 1)
=============  =======================================================================
Discrete       int8 array ``(n,)`` of 0/1; all zero draws ``start``
MultiDiscrete  a tuple (nested like ``nvec``) of int8 arrays ``(nvec[i],)``; an all-zero
               entry draws its ``start``
MultiBinary    int8 array of ``shape``: 0 or 1 fixes the bit, 2 draws it (probability:
               the chance of each bit being 1)
Text           ``(length or None, int8 array over the charset or None)``
Tuple / Dict   a tuple / dict of the components' masks (None: unmasked)
OneOf          a tuple of the components' masks (the drawn component's is used)
Sequence       ``(length: None, int or int array to choose from, the feature's mask)``
Graph          ``(node mask, edge mask)``: masks of the batched node and edge spaces
Box            rejected, as Gymnasium does
=============  =======================================================================

Beyond Gymnasium: with ``size``, every array of the mask may carry leading dimensions
``size`` (one mask per draw, vectorised); without them one mask serves every draw. Draws
come from ``rng`` (default: the space's own ``np_random``), in the space's value types.
Law: every draw is in ``g``; ``g.sample(mask=m)`` raises exactly when ``sample(g, mask=m)``
raises, with an exception of the same class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import gymnasium.spaces as gs
import numpy as np

from spacealg.core.kernel import numpy_kernel
from spacealg.core.protocol import sample
from spacealg.core.rng import RngLike, as_generator
from spacealg.spaces._batch import normalize_size
from spacealg.spaces.graph import NUM_NODES
from spacealg.spaces.masked import MaskError, MaskTypeError, choose, from_native_mask, sample_masked
from spacealg.spaces.sequence import GEOMETRIC_P, object_batch, stacked

__all__ = ["MaskIndexError", "MaskUnsupportedError"]


class MaskUnsupportedError(TypeError, gymnasium.error.Error):
    """A mask or probability for a space that takes none (Gymnasium's Box)."""


class MaskIndexError(MaskError, IndexError):
    """A Sequence mask with fewer than two parts (Gymnasium indexes it: IndexError)."""


def _only_one(mask: Any, probability: Any) -> tuple[Any, str]:
    if mask is not None and probability is not None:
        raise ValueError("sample: give either mask= or probability=, not both (Gymnasium's rule)")
    return (mask, "mask") if mask is not None else (probability, "probability")


def _array(
    value: Any, what: str, dtype: type, trailing: tuple[int, ...], shape: tuple[int, ...], path: str = ""
) -> np.ndarray:
    """A Gymnasium mask array: an ndarray of ``dtype`` and shape ``trailing`` (or ``shape + trailing``)."""
    if not isinstance(value, np.ndarray):
        raise MaskTypeError(f"{what}{path}: expected a numpy array, got {type(value).__qualname__}")
    if value.shape not in (trailing, shape + trailing):
        expected = f"{trailing}" + (f" or {shape + trailing}" if shape else "")
        raise MaskError(f"{what}{path}: expected shape {expected}, got {value.shape}")
    if value.dtype != dtype:
        raise MaskError(f"{what}{path}: expected dtype {np.dtype(dtype)}, got {value.dtype}")
    return value


def _distribution(value: Any, what: str, n: int, shape: tuple[int, ...], path: str = "") -> np.ndarray:
    """Checked weights over ``n`` choices: 0/1 int8 for masks, probabilities summing to 1."""
    if what == "mask":
        array = _array(value, what, np.int8, (n,), shape, path)
        if not np.isin(array, (0, 1)).all():
            raise MaskError(f"mask{path}: entries must be 0 or 1, got {np.unique(array)}")
        return array == 1
    array = _array(value, what, np.float64, (n,), shape, path)
    if not ((array >= 0) & (array <= 1)).all():
        raise MaskError(f"probability{path}: entries must lie in [0, 1]")
    if not np.isclose(array.sum(axis=-1), 1).all():
        raise MaskError(f"probability{path}: must sum to 1, got {array.sum(axis=-1)}")
    return array


def _draw_or_first(weights: np.ndarray, shape: tuple[int, ...], generator: np.random.Generator) -> np.ndarray:
    """:func:`choose`, except that a row allowing nothing draws 0 (Gymnasium's ``start``)."""
    if weights.ndim == 1:
        if not weights.any():
            return np.zeros(shape, dtype=np.int64)
        return choose(weights, shape, numpy_kernel(generator))
    empty = ~weights.any(axis=-1)
    if empty.any():
        weights = weights.copy()
        weights[empty, 0] = 1
    return choose(weights, shape, numpy_kernel(generator))


@sample_masked.register(gs.Box)
def _box(space: gs.Box, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    what = "a mask" if mask is not None else "a probability"
    raise MaskUnsupportedError(f"sample: {space} takes no mask or probability, got {what} (as gymnasium.spaces.Box)")


@sample_masked.register(gs.Discrete)
def _discrete(space: gs.Discrete, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)
    shape = normalize_size(size)
    weights = _distribution(value, what, int(space.n), shape)
    drawn = _draw_or_first(weights, shape, as_generator(rng))
    if size is None:
        return space.start + space.dtype.type(drawn)
    return (space.start + drawn).astype(space.dtype)


def _entries(value: Any, nvec: np.ndarray, what: str, path: str = "") -> list[tuple[Any, str]]:
    """The per-entry masks of a MultiDiscrete, checked like Gymnasium: tuples nested like nvec."""
    if nvec.ndim == 0:
        return [(value, path)]
    _tuple_of(value, len(nvec), what, path)
    return [e for i, v in enumerate(value) for e in _entries(v, nvec[i], what, f"{path}[{i}]")]


def _tuple_of(value: Any, n: int, what: str, path: str = "") -> tuple[Any, ...]:
    """``value``, checked like Gymnasium to be a tuple of ``n`` masks (or weights)."""
    if not isinstance(value, tuple):
        raise MaskTypeError(f"{what}{path}: expected a tuple of {n} masks, got {type(value).__qualname__}")
    if len(value) != n:
        raise MaskError(f"{what}{path}: expected {n} masks, got {len(value)}")
    return value


@sample_masked.register(gs.MultiDiscrete)
def _multidiscrete(space: gs.MultiDiscrete, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)
    shape = normalize_size(size)
    generator = as_generator(rng)
    nvec = np.asarray(space.nvec)
    parts = _entries(value, nvec, what)
    columns = []
    for (part, path), n in zip(parts, nvec.reshape(-1)):
        weights = _distribution(part, what, int(n), shape, path)
        columns.append(_draw_or_first(weights, shape, generator))
    drawn = np.stack(columns, axis=-1) if columns else np.zeros((*shape, 0), dtype=np.int64)
    start = np.asarray(space.start).reshape(-1)
    return (start + drawn).reshape((*shape, *nvec.shape)).astype(space.dtype)


@sample_masked.register(gs.MultiBinary)
def _multibinary(space: gs.MultiBinary, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)
    shape = normalize_size(size)
    generator = as_generator(rng)
    full = shape + tuple(space.shape)
    if what == "mask":
        array = _array(value, what, np.int8, tuple(space.shape), shape)
        if not np.isin(array, (0, 1, 2)).all():
            raise MaskError(f"mask: entries must be 0, 1 or 2, got {np.unique(array)}")
        coins = generator.integers(0, 2, size=full, dtype=space.dtype)
        return np.where(array == 2, coins, array).astype(space.dtype)
    array = _array(value, what, np.float64, tuple(space.shape), shape)
    if not ((array >= 0) & (array <= 1)).all():
        raise MaskError("probability: entries must lie in [0, 1]")
    return (generator.random(full) <= array).astype(space.dtype)


def _text_draw(space: gs.Text, value: Any, what: str, generator: np.random.Generator) -> str:
    if not isinstance(value, tuple):
        raise MaskTypeError(f"{what}: expected a tuple (length, charset {what}), got {type(value).__qualname__}")
    if len(value) != 2:
        raise MaskError(f"{what}: expected a tuple of two parts (length, charset {what}), got {len(value)}")
    length, chars = value
    if length is not None:
        if not np.issubdtype(type(length), np.integer):
            raise MaskTypeError(f"{what}[0]: the length must be an integer, got {type(length).__qualname__}")
        if not space.min_length <= length <= space.max_length:
            raise MaskError(f"{what}[0]: the length must lie in [{space.min_length}, {space.max_length}], got {length}")
    k = len(space.character_list)
    weights = None if chars is None else _distribution(chars, what, k, (), "[1]")
    if length is None:
        length = int(generator.integers(space.min_length, space.max_length + 1))
    if weights is None:
        weights = np.ones(k, dtype=bool)
    if not weights.any():
        if space.min_length == 0:
            return ""
        raise MaskError(f"sample: the charset {what} allows no character but {space} needs at least {space.min_length}")
    picks = choose(weights, (int(length),), numpy_kernel(generator))
    return "".join(space.character_list[i] for i in picks)


@sample_masked.register(gs.Text)
def _text(space: gs.Text, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)
    generator = as_generator(rng)
    if size is None:
        return _text_draw(space, value, what, generator)
    drawn = object_batch(lambda g: _text_draw(space, value, what, g), size, generator)
    return drawn.astype(str) if drawn.size else np.zeros(drawn.shape, dtype="<U1")


def _keyword(what: str, value: Any) -> dict[str, Any]:
    return {what: value}


@sample_masked.register(gs.Tuple)
def _tuple(space: gs.Tuple, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)
    parts = _tuple_of(value, len(space.spaces), what)
    generator = as_generator(rng)
    return tuple(sample(s, size, rng=generator, **_keyword(what, v)) for s, v in zip(space.spaces, parts))


@sample_masked.register(gs.Dict)
def _dict(space: gs.Dict, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)
    if not isinstance(value, dict):
        raise MaskTypeError(
            f"{what}: expected a dict with the keys {list(space.spaces)}, got {type(value).__qualname__}"
        )
    if value.keys() != space.spaces.keys():
        raise MaskError(f"{what}: expected the keys {list(space.spaces)}, got {list(value)}")
    generator = as_generator(rng)
    return {k: sample(s, size, rng=generator, **_keyword(what, value[k])) for k, s in space.spaces.items()}


@sample_masked.register(gs.OneOf)
def _oneof(space: gs.OneOf, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)

    def draw(generator: np.random.Generator) -> tuple[Any, Any]:
        i = generator.integers(0, len(space.spaces), dtype=np.int64)
        parts = _tuple_of(value, len(space.spaces), what)
        return i, sample(space.spaces[int(i)], rng=generator, **_keyword(what, parts[int(i)]))

    return object_batch(draw, size, as_generator(rng))


def _sequence_length(length: Any, what: str, generator: np.random.Generator) -> int:
    if length is None:
        return int(generator.geometric(GEOMETRIC_P))
    if np.issubdtype(type(length), np.integer):
        if length < 0:
            raise MaskError(f"{what}[0]: the length must be non-negative, got {length}")
        return int(length)
    if isinstance(length, np.ndarray):
        if length.ndim != 1:
            raise MaskError(f"{what}[0]: the lengths to choose from must be a 1-d array, got shape {length.shape}")
        if not (length >= 0).all():
            raise MaskError(f"{what}[0]: the lengths to choose from must be non-negative")
        if not np.issubdtype(length.dtype, np.integer):
            raise MaskError(f"{what}[0]: the lengths to choose from must be integers, got dtype {length.dtype}")
        return int(generator.choice(length))
    raise MaskTypeError(
        f"{what}[0]: the length must be None, an integer or an integer array, got {type(length).__qualname__}"
    )


@sample_masked.register(gs.Sequence)
def _sequence(space: gs.Sequence, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)
    length = _part(value, 0, what)

    def draw(generator: np.random.Generator) -> Any:
        n = _sequence_length(length, what, generator)
        # the feature's mask is read only when a feature is drawn (as Gymnasium does)
        keyword = _keyword(what, _part(value, 1, what)) if n else {}
        if space.stack:
            return stacked(sample(space.feature_space, (n,), rng=generator, **keyword))
        return tuple(sample(space.feature_space, rng=generator, **keyword) for _ in range(n))

    return object_batch(draw, size, as_generator(rng))


def _part(value: Any, i: int, what: str) -> Any:
    try:
        return value[i]
    except (TypeError, KeyError):
        raise MaskTypeError(
            f"{what}: expected a tuple (length, feature {what}), got {type(value).__qualname__}"
        ) from None
    except IndexError:
        raise MaskIndexError(f"{what}: expected a tuple of two parts (length, feature {what})") from None


@sample_masked.register(gs.Graph)
def _graph(space: gs.Graph, size: Any, mask: Any, probability: Any, *, rng: RngLike = None) -> Any:
    value, what = _only_one(mask, probability)
    node_mask, edge_mask = value
    batch_space = gymnasium.vector.utils.batch_space

    def draw(generator: np.random.Generator) -> gs.GraphInstance:
        n = NUM_NODES
        m = int(generator.integers(n * (n - 1))) if n > 1 else 0
        edges_mask = None if edge_mask is None else tuple(edge_mask for _ in range(m))
        nodes = sample(batch_space(space.node_space, n), rng=generator, **_keyword(what, node_mask))
        if m == 0 or space.edge_space is None:
            return gs.GraphInstance(nodes, None, None)
        edges = sample(batch_space(space.edge_space, m), rng=generator, **_keyword(what, edges_mask))
        return gs.GraphInstance(nodes, edges, generator.integers(0, n, size=(m, 2), dtype=np.int32))

    return object_batch(draw, size, as_generator(rng))


# -- Masked(g, mask): Gymnasium's mask forms where spacealg's differ --------------------------------


@from_native_mask.register(gs.MultiBinary)
def _multibinary_mask(space: gs.MultiBinary, mask: Any) -> Any:
    """Gymnasium's 0/1/2 MultiBinary mask (shape ``space.shape``) as per-bit masks."""
    if not isinstance(mask, np.ndarray) or mask.shape != tuple(space.shape) or mask.dtype.kind not in "iu":
        return mask
    if not np.isin(mask, (0, 1, 2)).all():
        raise MaskError(f"mask: a MultiBinary mask has entries 0, 1 or 2, got {np.unique(mask)}")
    allowed = np.stack([mask != 1, mask != 0], axis=-1)
    return _nest(allowed, tuple(space.shape))


def _nest(pairs: np.ndarray, shape: tuple[int, ...]) -> Any:
    if not shape:
        return pairs
    return tuple(_nest(pairs[i], shape[1:]) for i in range(shape[0]))


@from_native_mask.register(gs.Tuple)
def _tuple_mask(space: gs.Tuple, mask: Any) -> Any:
    if isinstance(mask, tuple) and len(mask) == len(space.spaces):
        return tuple(from_native_mask(s, m) for s, m in zip(space.spaces, mask))
    return mask


@from_native_mask.register(gs.Dict)
def _dict_mask(space: gs.Dict, mask: Any) -> Any:
    if isinstance(mask, Mapping) and set(mask) == set(space.spaces):
        return {k: from_native_mask(space.spaces[k], mask[k]) for k in space.spaces}
    return mask
