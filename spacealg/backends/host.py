"""NumPy, the third backend: ``isin``, ``sample``, ``clamp`` and ``clamp_`` of the leaf kinds
on NumPy arrays, by the same per-leaf rules as torch and JAX (:mod:`~spacealg.backends.isin`,
:mod:`~spacealg.backends.sample`, :mod:`~spacealg.backends.clamp`, over NumPy's array-API
namespace and :class:`~spacealg.backends.rng.NumpyRng`).

Layers: the spaces (below this package) define the kinds and their scalar ``contains``;
this package holds the batched rules, so it registers their NumPy implementations with the
protocol's generic functions for each kind it serves (``spacealg.backends``, at load), as it registers
torch's and JAX's with the core (:func:`spacealg.core.arrays.register_backend`). What NumPy
takes that no tensor is, is settled here before the rule runs: lists and Python numbers
become arrays (:func:`~spacealg.spaces._batch.as_real_array`), a batch of non-numbers has no
member, ``rng`` becomes a ``numpy.random.Generator``, and ``clamp`` of a member is the
member itself.

Laws: ``isin(b, s)[i] == contains(b[i], s)``; ``isin(sample(s, n, rng=g), s).all()``;
``contains(clamp(x, s), s)`` and ``clamp(x, s) is x`` for a member ``x``; ``clamp_(x, s)``
writes ``clamp(x, s)`` into ``x`` (a writable array whose dtype holds it) or raises
TypeError leaving ``x`` unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spacealg.backends.clamp import clamp_inplace_on, clamp_on
from spacealg.backends.isin import isin_on
from spacealg.backends.rng import NumpyRng
from spacealg.backends.sample import draws_for
from spacealg.core.cache import IdentityCache
from spacealg.core.protocol import clamp, clamp_, contains, elsize, eltype, isin, sample
from spacealg.core.rng import RngLike, as_generator
from spacealg.spaces._batch import as_real_array, normalize_size

__all__ = ["IMPLEMENTATIONS", "host_clamp", "host_clamp_", "host_isin", "host_sample"]


def host_isin(batch: Any, space: Any) -> Any:
    """``isin`` of a NumPy batch (or a list, or a number) of a leaf space."""
    a = as_real_array(batch)
    if a is None:
        element = elsize(space)
        if isinstance(batch, np.ndarray) and batch.ndim >= len(element):
            return np.zeros(batch.shape[: batch.ndim - len(element)], dtype=bool)  # no number: no member
        raise ValueError(f"isin: {type(batch).__qualname__} is not a batch of {space!r}")
    return isin_on("numpy", a, space)


def host_sample(space: Any, size: Any = None, *, rng: RngLike = None) -> Any:
    """``sample`` of a leaf space with a NumPy generator (or a seed, or None); one element
    of a scalar kind (``size=None``) is its ``eltype``: a float, an int, a NumPy scalar."""
    kept = _DRAWS.get(space)
    adapter = NumpyRng(as_generator(rng))
    if kept is None:  # the rule's draw of the space's one leaf, kept per space
        kept = _DRAWS.put(space, (draws_for(space, adapter)[1][0], _scalar_type(space)))
    draw, scalar = kept
    drawn = draw(adapter, () if size is None else normalize_size(size))
    if size is None and scalar is not None:
        return scalar(drawn)
    return drawn if type(drawn) is np.ndarray else np.asarray(drawn)  # a 0-d array, not a NumPy scalar


#: leaf space -> (its draw, the plan's (:mod:`~spacealg.backends.sample`); its scalar type):
#: one lookup per call, where the plan's variants take four (a sample of one Box(16): 7.3 us
#: at ef41173, 9.3 us through sample_with, 7.3 us through this)
_DRAWS: IdentityCache[Any] = IdentityCache("NumPy draws of leaf spaces", max_entries=4096, weigh=lambda kept: 64)


def _scalar_type(space: Any) -> Any:
    """The type of an element of a scalar kind (an Interval's float, a range's int, a
    Discrete Categorical's NumPy integer), None for a kind whose elements are arrays."""
    kind = eltype(space)
    return None if kind is np.ndarray else kind


def host_clamp(x: Any, space: Any) -> Any:
    """``clamp`` of a NumPy array (or a list, or a number): ``x`` itself when a member; a
    Python number into a scalar kind gives its ``eltype``."""
    if contains(x, space):
        return x
    a = as_real_array(x)
    if a is None or isinstance(x, (str, bytes)):
        raise TypeError(f"clamp: x must be a real number or array, got {type(x).__qualname__}")
    clamped = clamp_on("numpy", a, space)
    if a.ndim == 0 and not isinstance(x, np.ndarray):
        scalar = _scalar_type(space)
        if scalar is not None:
            return scalar(clamped)
    return clamped


def host_clamp_(x: Any, space: Any) -> Any:
    """``clamp_`` of a writable NumPy array: the clamp written into ``x``."""
    if not isinstance(x, np.ndarray) or not x.flags.writeable:
        raise TypeError("clamp_: x must be a writable numpy array")
    return clamp_inplace_on("numpy", x, space)


#: generic function -> its NumPy implementation for the leaf kinds
IMPLEMENTATIONS: dict[Any, Any] = {isin: host_isin, sample: host_sample, clamp: host_clamp, clamp_: host_clamp_}
