"""Dynamic: arrays of any length along some axes (TorchRL's ``-1`` dimensions).

>>> import numpy as np
>>> from spacealg import Dynamic, Box, cardinality, sample
>>> s = Dynamic(Box(0.0, 1.0, shape=(1, 2)), axes=0)          # TorchRL's Bounded(0, 1, shape=(-1, 2))
>>> np.zeros((5, 2), np.float32) in s, np.zeros((0, 2), np.float32) in s, np.zeros((5, 3), np.float32) in s
(True, True, False)
>>> sample(s, rng=0).shape[1], cardinality(s)
(2, inf)

``Dynamic(space, axes=0, lengths=(1, 4))``: ``space`` is an array space (``Box``,
``Categorical``, ``OneHot``, ``ArraySpace``, a ``Masked`` of one...) whose length along each
of ``axes`` is 1, the *template*; the members are the arrays that have ``space``'s shape
except along ``axes``, where any length ``n >= 0`` is allowed, and every slice of length 1
along those axes (``x[..., k:k+1, ...]``) is a member of ``space``. The template is
TorchRL's own convention (a spec's bounds, ``nvec`` and masks have length 1 along its
``-1`` dimensions), so every array kind keeps its constructor and its rules, and this kind
is written once over all of them: it moves the dynamic axes in front and asks the
template's own batched rule, on NumPy, torch and JAX alike. It is Gymnasium's
``Sequence(feature, stack=True)`` for an array ``feature`` (``Dynamic(feature ** 1)``
holds the same arrays) generalised to any axes; PufferLib has no variable-size space, and
its flattening (and spacealg's) needs a fixed width, which a ``Dynamic`` has not.

Laws:

* ``contains(x, s)`` iff ``x`` has the template's shape outside ``axes`` (any lengths along
  them, 0 included) and ``isin`` of its length-1 slices in the template is all True; for a
  torch tensor or JAX array the same rule runs on its backend;
* ``isin(batch, s)[i] == contains(batch[i], s)`` (a batch is one array: its rows share
  their lengths), and the batch's leading shape is its ``ndim`` minus the template's;
* ``sample(s, size, rng=...)`` draws each dynamic length uniformly from ``lengths``
  (``low <= n <= high``, inclusive; default ``(1, 4)``: never empty, as Gymnasium's and
  TorchRL's draws, and more than one row, so that code assuming one is caught), shared by
  the rows of one batch, then the slices from the template; same generator, same result,
  on every backend (a JAX key traced under ``jit`` cannot draw lengths: TypeError);
* ``clamp(x, s)`` clamps every slice into the template (lengths kept); members come back
  unchanged; ``clamp_`` does it in place (not on JAX);
* ``SpaceStyle(s)`` is ``UnknownSpaceStyle()`` (a style carries one shape, a ``Dynamic``
  has many), ``cardinality(s)`` is ``inf`` (``elements``/``index``/``element``: TypeError),
  ``elsize`` is a TypeError naming the dynamic axes, ``bounds(s)`` the template's, which
  broadcast against every member, ``eltype`` the template's;
* flattening (``flatdim``, ``flatten``, ``flatten_batch``, emulation) needs a fixed width:
  ValueError naming the space and its dynamic axes;
* ``==``/``hash`` compare ``space``, ``axes`` and ``lengths``; ``issubspace`` of two with the
  same axes is their templates'.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from spacealg.core.arrays import backend_name
from spacealg.core.catalog import register_space_class
from spacealg.core.generic import as_space
from spacealg.core.kernel import NUMPY, Kernel, kernel_for
from spacealg.core.protocol import bounds, cardinality, clamp, contains, elsize, eltype, isin, issubspace, sample
from spacealg.core.space import Space
from spacealg.core.styles import UnknownSpaceStyle
from spacealg.spaces._batch import normalize_size
from spacealg.spaces._kind import clamp_into, register, register_batched, register_infinite

__all__ = ["DEFAULT_LENGTHS", "Dynamic"]

DEFAULT_LENGTHS = (1, 4)
"""The lengths ``sample`` draws from when none are stated (inclusive)."""


def _axes_arg(axes: Any, ndim: int) -> tuple[int, ...]:
    values = [axes] if isinstance(axes, numbers.Integral) else axes
    try:
        items = list(values)
    except TypeError:
        raise TypeError(f"Dynamic: axes must be an int or a sequence of ints, got {axes!r}") from None
    if not items or any(isinstance(a, (bool, np.bool_)) or not isinstance(a, numbers.Integral) for a in items):
        raise TypeError(f"Dynamic: axes must be an int or a non-empty sequence of ints, got {axes!r}")
    if any(not -ndim <= a < ndim for a in items):
        raise ValueError(f"Dynamic: axes must be axes of the space's {ndim}-d members, got {axes!r}")
    normal = sorted(int(a) % ndim for a in items)
    if len(set(normal)) != len(normal):
        raise ValueError(f"Dynamic: axes must be distinct, got {axes!r}")
    return tuple(normal)


def _lengths_arg(lengths: Any) -> tuple[int, int]:
    try:
        low, high = lengths
    except (TypeError, ValueError):
        raise TypeError(f"Dynamic: lengths must be a pair (low, high) of ints, got {lengths!r}") from None
    if any(isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) for v in (low, high)):
        raise TypeError(f"Dynamic: lengths must be a pair (low, high) of ints, got {lengths!r}")
    if not 0 <= low <= high:
        raise ValueError(f"Dynamic: lengths must satisfy 0 <= low <= high, got {lengths!r}")
    return int(low), int(high)


class Dynamic(Space):
    """The arrays of ``space``'s shape with any length along ``axes`` (``space``: their slices)."""

    space: Any
    axes: tuple[int, ...]
    lengths: tuple[int, int]
    shape: tuple[int, ...]

    def __init__(self, space: Any, axes: Any = 0, lengths: Any = DEFAULT_LENGTHS) -> None:
        template = as_space(space)
        if isinstance(template, Dynamic):
            raise TypeError("Dynamic: space is already Dynamic; name every dynamic axis in one Dynamic")
        try:
            if eltype(template) is not np.ndarray:
                raise TypeError
            shape = tuple(int(d) for d in elsize(template))
        except TypeError:
            raise TypeError(f"Dynamic: space must be an array space (its members arrays of one shape), "
                            f"got {space!r}") from None
        if not shape:
            raise ValueError(f"Dynamic: space must have members of at least one axis, got {space!r} (0-d)")
        checked = _axes_arg(axes, len(shape))
        if any(shape[a] != 1 for a in checked):
            raise ValueError(f"Dynamic: space must have length 1 along the dynamic axes {checked} (its slices), "
                             f"got shape {shape}")
        if cardinality(template) == 0:
            raise ValueError(f"Dynamic: space has no member, got {space!r}")
        self._set(space=template, axes=checked, lengths=_lengths_arg(lengths), shape=shape)

    def _key(self) -> tuple[Any, ...]:
        return (self.space, self.axes, self.lengths)

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs: dict[str, Any] = {"axes": self.axes}
        if self.lengths != DEFAULT_LENGTHS:
            kwargs["lengths"] = self.lengths
        return (self.space,), kwargs

    @property
    def fixed(self) -> tuple[int, ...]:
        """The axes whose length is the template's."""
        return tuple(a for a in range(len(self.shape)) if a not in self.axes)


# -- the dynamic axes in front: the template's batched rules do the rest -----------------------


def _split(shape: tuple[int, ...], space: Dynamic, what: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(leading shape, lengths along the dynamic axes) of a batch; ValueError naming ``what``."""
    k = len(space.shape)
    if len(shape) >= k:
        lead, tail = shape[: len(shape) - k], shape[len(shape) - k :]
        if all(tail[a] == space.shape[a] for a in space.fixed):
            return lead, tuple(tail[a] for a in space.axes)
    wanted = tuple("n" if a in space.axes else d for a, d in enumerate(space.shape))
    raise ValueError(f"{what}: a batch of {space!r} has shape (*batch, {', '.join(map(str, wanted))}), got {shape}")


def _gather(ns: Kernel, x: Any, space: Dynamic, lead: tuple[int, ...], lengths: tuple[int, ...]) -> Any:
    """``x`` (``(*lead, member)``) as ``(*lead, N, *template)``: the ``N`` slices, in C order of the lengths."""
    m = len(lead)
    order = [*range(m), *(m + a for a in space.axes), *(m + a for a in space.fixed)]
    return ns.xp.reshape(ns.xp.permute_dims(x, tuple(order)), (*lead, math.prod(lengths), *space.shape))


def _scatter(ns: Kernel, y: Any, space: Dynamic, lead: tuple[int, ...], lengths: tuple[int, ...]) -> Any:
    """The inverse of :func:`_gather`: ``(*lead, N, *template)`` back to ``(*lead, member)``."""
    m = len(lead)
    moved = ns.xp.reshape(y, (*lead, *lengths, *(space.shape[a] for a in space.fixed)))
    position = {a: m + i for i, a in enumerate(space.axes)}
    position.update({a: m + len(space.axes) + i for i, a in enumerate(space.fixed)})
    return ns.xp.permute_dims(moved, (*range(m), *(position[a] for a in range(len(space.shape)))))


def _isin_rule(ns: Kernel, batch: Any, space: Dynamic) -> Any:
    lead, lengths = _split(tuple(batch.shape), space, "isin")
    if math.prod(lengths) == 0:  # no slice: every such array is a member
        return ns.constant(np.ones(lead, dtype=bool))
    return ns.xp.all(isin(_gather(ns, batch, space, lead, lengths), space.space), axis=-1)


def _draw_lengths(ns: Kernel, space: Dynamic) -> tuple[int, ...]:
    low, high = space.lengths
    drawn = ns.below(np.full(len(space.axes), high - low + 1), (len(space.axes),))
    try:
        return tuple(low + int(n) for n in np.asarray(drawn).reshape(-1).tolist())
    except TypeError:  # a JAX key traced under jit: the lengths would be traced values
        raise TypeError(f"sample: the lengths of {space!r} are drawn on the host; a traced key (under jit) "
                        "cannot draw them (draw outside jit, or sample a fixed-length space)") from None


def _sample_rule(ns: Kernel, space: Dynamic, size: Any = None, *, rng: Any = None, **extra: Any) -> Any:
    if any(v is not None for v in extra.values()):
        raise TypeError(f"sample: {sorted(extra)} are not supported for {space!r}")
    lead = normalize_size(size)
    lengths = _draw_lengths(ns, space)
    slices = sample(space.space, (*lead, math.prod(lengths)), rng=ns.spawn())
    return _scatter(ns, slices, space, lead, lengths)


def _clamp_rule(ns: Kernel, x: Any, space: Dynamic) -> Any:
    lead, lengths = _split(tuple(x.shape), space, "clamp")
    if math.prod(lengths) == 0:
        return x
    return _scatter(ns, clamp(_gather(ns, x, space, lead, lengths), space.space), space, lead, lengths)


def _no_fixed_width(ns: Kernel, values: Any, space: Dynamic) -> Any:
    raise no_fixed_width(space, "flatten_batch")


def no_fixed_width(space: Dynamic, what: str) -> ValueError:
    """The error of every operation that needs a fixed width (flattening, emulation)."""
    return ValueError(f"{what}: {space!r} has no fixed width (any length along its axes {space.axes}); "
                      "flattening needs one: fix the lengths (the template's shape with them) first")



# -- NumPy's entries: lists as arrays (sample and clamp_ are the rules over NumPy's kernel) ------


def _array(x: Any) -> np.ndarray | None:
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (str, bytes, dict)) or x is None:
        return None
    try:
        a = np.asarray(x)
    except Exception:  # ragged, or a hostile __array__
        return None
    return None if a.dtype == object else a


def _contains(x: Any, space: Dynamic) -> bool:
    name = backend_name(x)
    a = x if name is not None and hasattr(x, "shape") else _array(x)
    if a is None or len(a.shape) != len(space.shape):
        return False
    try:
        _split(tuple(a.shape), space, "contains")
    except ValueError:
        return False
    ns = kernel_for(name, a) if name is not None else NUMPY
    return bool(_isin_rule(ns, a[None], space)[0])


def _isin(batch: Any, space: Dynamic) -> np.ndarray:
    a = _array(batch)
    if a is None:
        raise ValueError(f"isin: {type(batch).__qualname__} is not a batch of {space!r}")
    return np.asarray(_isin_rule(NUMPY, a, space))


def _clamp(x: Any, space: Dynamic) -> Any:
    if contains(x, space):
        return x
    a = _array(x)
    if a is None:
        raise TypeError(f"clamp: x must be an array of {space!r}, got {type(x).__qualname__}")
    return np.asarray(_clamp_rule(NUMPY, a, space))


def _elsize(space: Dynamic) -> Any:
    raise TypeError(f"elsize: members of {space!r} have any length along the axes {space.axes}")


register(Dynamic, contains=_contains, SpaceStyle=lambda space: UnknownSpaceStyle(), elsize=_elsize,
         bounds=lambda space: bounds(space.space), eltype=lambda space: eltype(space.space))
register_batched(Dynamic, {"isin": _isin, "clamp": _clamp}, isin=_isin_rule, sample=_sample_rule, clamp=_clamp_rule,
                 clamp_=clamp_into, flatten_batch=_no_fixed_width, unflatten_batch=_no_fixed_width)
register_infinite(Dynamic, " (any length along its axes)")  # the template has a member: one array per length


@issubspace.register(Dynamic, Dynamic)
def _dynamic_subset(a: Dynamic, b: Dynamic) -> bool:
    return a.axes == b.axes and issubspace(a.space, b.space)  # type: ignore[no-any-return]


register_space_class(Dynamic, "dynamic", None)
