"""A kind's image: the space whose members its own members stand for, one to one.

Some kinds hold the same information as a simpler space in another form: a one-hot vector
stands for the position of its hot entry. Such a kind registers :func:`image_of` in its own
module, and every derived operation without a rule of its own for the kind reads the image:

* ``to_gymnasium(s)`` is ``to_gymnasium(image.space)`` and ``encode``/``decode`` compose
  with ``image.encode``/``image.decode`` (the documented encoding policy: a kind with no
  Gymnasium class maps to the Gymnasium form of what its members stand for);
* flattening is the image's, applied to the encoded member (so a one-hot vector, whose
  image is a Discrete position, flattens to itself, as Gymnasium flattens that position).

Laws, for every member ``x`` of ``s`` and ``m = image_of(s)``: ``m.encode(x) in m.space``;
``m.decode(m.encode(x))`` equals ``x``; ``m.decode(y) in s`` for every ``y`` in
``m.space``. ``encode``/``decode`` also map batches (leading axes) of members.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from spacealg.core.generic import as_space, generic

__all__ = ["Image", "image_of"]


@dataclass(frozen=True, eq=False)
class Image:
    """``space``: what the members stand for; ``encode``/``decode``: the bijection (members
    or batches of members, NumPy arrays); ``decode_on(k, y)``: ``decode`` of a batch of
    ``space`` held by the backend of kernel ``k`` (torch, JAX), giving that backend's arrays
    (None where the kind has none: its masked draws are NumPy's only).

    Law: ``to_numpy(decode_on(k, y)) == decode(to_numpy(y))``."""

    space: Any
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]
    decode_on: Callable[[Any, Any], Any] | None = None


@generic(0)
def image_of(space: Any) -> Image | None:
    """The :class:`Image` of a kind that registered one; None for every other space."""
    try:
        converted = as_space(space)
    except TypeError:
        return None
    if converted is not space:
        return image_of(converted)  # type: ignore[no-any-return]
    return None
