"""Masked sampling on torch and JAX: ``sample(space, size, mask=..., rng=g)`` with a
``torch.Generator`` or a JAX key draws on that backend and device.

The masks are parsed, combined and drawn from by the one definition every backend shares
(:func:`spacealg.spaces.masked.restriction`, :func:`~spacealg.spaces.mask_blocks.draw_digits`
over the backend's :class:`~spacealg.backends.kernel.BackendKernel`); here the
digits become values through the backends' leaf table (``low + step * digit`` for
integers, ``values[digit]`` for sets). Masks may be
NumPy arrays or arrays of the backend (a bool tensor on the GPU stays there), in every
form :class:`~spacealg.spaces.masked.Masked` accepts, with leading batch dimensions for
one mask per row.

Laws (tests/test_masks_backends.py, where torch and JAX are): every draw
is legal (``isin`` of the masked space after moving the batch to NumPy); the same
generator state (torch) or key (JAX) gives the same draws. An all-false row raises
ValueError on torch and on JAX outside ``jax.jit``; under ``jit`` it cannot be detected
and draws the row's first entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spacealg.backends.arrays import backend_named, to_numpy
from spacealg.backends.kernel import BackendKernel
from spacealg.backends.leaves import first_array
from spacealg.core.generic import as_space
from spacealg.core.leaf import Members
from spacealg.core.plan import map_tree, plan_for
from spacealg.core.protocol import isin
from spacealg.spaces._batch import normalize_size
from spacealg.spaces.masked import Masked, draw_digits, draw_shape, restriction

__all__ = ["masked_on_backend", "sample_masked_on"]


def sample_masked_on(name: str, space: Any, size: Any, mask: Any, probability: Any, rng: Any) -> Any:
    """The masked batch of ``space`` drawn with the torch generator or JAX key ``rng``."""
    k = BackendKernel.for_call(name, rng, rng)
    root, f, blocks = restriction(as_space(space), mask, probability, k)
    size, shape = draw_shape(blocks, f.sizes, size)
    digits = draw_digits(blocks, f.sizes, shape, k)
    return _values(k, root, name, digits, shape)


def _values(k: Any, space: Any, name: str, digits: Any, shape: tuple[int, ...]) -> Any:
    """The members of ``space`` whose digits (``(*shape, factors)``) are ``digits``, through
    the backends' leaf table."""
    xp, start = k.xp, 0

    def leaf_values(leaf: Any) -> Any:  # the leaves' factors follow one another, depth first
        nonlocal start
        d = xp.reshape(digits[..., start : start + leaf.size], shape + leaf.shape)
        start += leaf.size
        if leaf.members is Members.NUMBERS:
            values = k.const(leaf, "values", lambda: leaf.numbers, k.native(leaf))
            return values[d]
        if leaf.items is not None:  # a stepped range: the digit is the item's position
            items = k.const(leaf, "items", lambda: np.asarray(leaf.items, dtype=np.int64), k.native(leaf))
            return items[d]
        low = k.const(leaf, "low", lambda: leaf.value_low, k.widest_int())
        return xp.astype(low + leaf.step * xp.astype(d, k.widest_int()), k.native(leaf))

    return map_tree(leaf_values, plan_for(space, name, "sample").tree)


def masked_on_backend(operation: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``sample``/``isin``/``clamp``/``clamp_`` of a ``Masked`` space (or an array space of
    one) on torch/JAX; a product holding one goes leaf by leaf (its route,
    :func:`~spacealg.backends.parts.by_leaves`), each leaf here or by its plan.

    ``sample`` draws on the backend: a ``Masked`` space by :func:`sample_masked_on`, an array
    space of one as draws of its entry (:func:`_sample_holding`); ``isin``
    answers as NumPy's ``isin`` of the batch moved to the host, as a bool array of the
    batch's backend and device; ``clamp``/``clamp_`` return members unchanged (``clamp_``:
    ``x`` itself) and raise TypeError otherwise, as on NumPy (a mask has no nearest-member rule).
    """
    if operation == "sample":
        space, size = args[0], (args[1] if len(args) > 1 else kwargs.get("size"))
        extra = {key: value for key, value in kwargs.items() if key != "rng" and value is not None}
        if extra:
            raise TypeError(f"sample: {sorted(extra)} are not supported with a {name} rng")
        return _sample_holding(name, space, size, kwargs["rng"])
    batch, space = args[0], args[1]
    inside = np.asarray(isin(to_numpy(batch), space))
    if operation == "isin":
        backend = backend_named(name)
        return backend.constant(inside, backend.dtype(np.dtype(bool)), backend.device(first_array(batch)))
    if not inside.all():
        raise TypeError(
            f"{operation}: a masked space has no nearest-member rule ({space!r}) and the batch "
            "holds non-members; sample legal values with sample(space) or test them with isin"
        )
    if operation == "clamp":
        return map_tree(_copy, batch)
    return batch


def _sample_holding(name: str, space: Any, size: Any, rng: Any) -> Any:
    """A batch of a ``Masked`` space (or an array space of one, drawn as ``size + dims``
    draws of its entry) on the backend of ``rng``; a product holding one is drawn leaf by
    leaf (:func:`~spacealg.backends.parts.by_leaves`)."""
    from spacealg.core.protocol import sample
    from spacealg.spaces.array import ArraySpace

    if isinstance(space, Masked):
        return sample_masked_on(name, space, size, None, None, rng)
    if isinstance(space, ArraySpace):
        return _sample_holding(name, space.space, (*normalize_size(size), *space.dims), rng)
    return sample(space, size, rng=rng)


def _copy(array: Any) -> Any:
    return array.clone() if hasattr(array, "clone") else array  # JAX arrays are immutable
