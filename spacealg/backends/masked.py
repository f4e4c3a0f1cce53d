"""``Masked``'s kind rules on torch and JAX, and masked sampling there: ``sample(space, size,
mask=..., rng=g)`` with a ``torch.Generator`` or a JAX key draws on that backend and device.

The masks are parsed, combined and drawn from by the one definition every backend shares
(:func:`spacealg.spaces.masked.restriction`, :func:`~spacealg.spaces.mask_blocks.draw_digits`
over the call's kernel); here the digits become values through the backends' leaf table
(``low + step * digit`` for integers, ``values[digit]`` for sets). Masks may be NumPy arrays
or arrays of the backend (a bool tensor on the GPU stays there), in every form
:class:`~spacealg.spaces.masked.Masked` accepts, with leading batch dimensions for one mask
per row.

``Masked``'s rules (:data:`RULES`, registered for the kind by :mod:`spacealg.backends` as any
kind registers its own, :func:`spacealg.core.arrays.register_kind_rule`): ``sample`` draws
on the backend; ``isin`` answers as NumPy's ``isin`` of the batch moved to the host, as a
bool array of the batch's backend and device; ``clamp``/``clamp_`` return members unchanged
(``clamp_``: ``x`` itself) and raise TypeError otherwise, as on NumPy (a mask has no
nearest-member rule). An array space or a product holding a ``Masked`` part reaches these
rules through its own (:mod:`~spacealg.backends.parts`).

Laws (tests/test_masks_backends.py, where torch and JAX are): every draw
is legal (``isin`` of the masked space after moving the batch to NumPy); the same
generator state (torch) or key (JAX) gives the same draws. An all-false row raises
ValueError on torch and on JAX outside ``jax.jit``; under ``jit`` it cannot be detected
and draws the row's first entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.backends.arrays import to_numpy
from spacealg.core.generic import as_space
from spacealg.core.image import image_of
from spacealg.core.kernel import Kernel, kernel_for
from spacealg.core.leaf import Members
from spacealg.core.plan import map_tree, plan_for, variant_of
from spacealg.core.protocol import isin
from spacealg.core.rng import no_extra
from spacealg.spaces.mask_factors import factors
from spacealg.spaces.masked import Masked, draw_digits, draw_shape, restriction
from spacealg.spaces.product import DictProduct, TupleProduct, assemble, parts_of

__all__ = ["RULES", "sample_masked_on"]


def sample_masked_on(name: str, space: Any, size: Any, mask: Any, probability: Any, rng: Any) -> Any:
    """The masked batch of ``space`` drawn with the torch generator or JAX key ``rng``."""
    return _draw(kernel_for(name, rng, rng), as_space(space), size, mask, probability)


def _draw(k: Kernel, space: Any, size: Any, mask: Any, probability: Any) -> Any:
    root, f, blocks = restriction(space, mask, probability, k)
    size, shape = draw_shape(blocks, f.sizes, size)
    digits = draw_digits(blocks, f.sizes, shape, k)
    return _values(k, root, digits, shape)


def _values(k: Any, space: Any, digits: Any, shape: tuple[int, ...]) -> Any:
    """The members of ``space`` whose digits (``(*shape, factors)``) are ``digits``: a kind
    with an image (OneHot) decodes the members of its image, a product with such a part goes
    part by part, and the rest is read through the backends' leaf table."""
    image = image_of(space)
    if image is not None and image.decode_on is not None:
        return image.decode_on(k, _values(k, image.space, digits, shape))
    if _holds_image(space):
        values, start = [], 0
        for part in parts_of(space).values():
            width = len(factors(part).sizes)
            values.append(_values(k, part, digits[..., start : start + width], shape))
            start += width
        return assemble(space, values)
    return _leaf_values(k, space, digits, shape)


def _holds_image(space: Any) -> bool:
    """Whether ``space`` is a product with a part (at any depth) of a kind with an image;
    decided once per space (a variant of its plan), not per draw."""
    if not isinstance(space, (TupleProduct, DictProduct)):
        return False
    return variant_of(space, "holds an image", _part_has_image)  # type: ignore[no-any-return]


def _part_has_image(space: Any) -> bool:
    return any(image_of(p) is not None or _holds_image(p) for p in parts_of(space).values())


def _leaf_values(k: Any, space: Any, digits: Any, shape: tuple[int, ...]) -> Any:
    """:func:`_values` of a space every leaf of which has a leaf model."""
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

    return map_tree(leaf_values, plan_for(space, k.name, "sample").tree)


def _sample_rule(k: Kernel, space: Masked, size: Any = None, *, rng: Any, **extra: Any) -> Any:
    no_extra(extra, k.name)
    return _draw(k, space, size, None, None)


def _inside(batch: Any, space: Masked) -> np.ndarray:
    return np.asarray(isin(to_numpy(batch), space))


def _isin_rule(k: Kernel, batch: Any, space: Masked) -> Any:
    return k.constant(_inside(batch, space), np.dtype(bool))


def _members(what: str, batch: Any, space: Masked) -> None:
    if not _inside(batch, space).all():
        raise TypeError(
            f"{what}: a masked space has no nearest-member rule ({space!r}) and the batch "
            "holds non-members; sample legal values with sample(space) or test them with isin"
        )


def _clamp_rule(k: Kernel, x: Any, space: Masked) -> Any:
    _members("clamp", x, space)
    return x.clone() if hasattr(x, "clone") else x  # JAX arrays are immutable


def _clamp_inplace_rule(k: Kernel, x: Any, space: Masked) -> Any:
    _members("clamp_", x, space)
    return x


#: operation -> ``Masked``'s rule on torch and JAX (NumPy's are the kind's own, :mod:`spacealg.spaces.masked`)
RULES: dict[str, Callable[..., Any]] = {"sample": _sample_rule, "isin": _isin_rule, "clamp": _clamp_rule,
                                        "clamp_": _clamp_inplace_rule}
