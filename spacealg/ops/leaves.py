"""``flatten_space``: PufferLib's list of leaf spaces (not Gymnasium's ``flatten_space``).

>>> import spacealg as sa
>>> from spacealg.ops import flatten_space
>>> flatten_space(sa.DictProduct(pos=sa.Box(-1.0, 1.0, shape=(2,)), dir=range(4)))
[Box(-1.0, 1.0, shape=(2,), dtype=np.float32), range(0, 4)]

The name means two things in the ecosystem. Here (and at ``spacealg.flatten_space``,
``spacealg.emulation.flatten_space``) it is ``pufferlib.emulation.flatten_space``: the
leaves of nested Tuples/Dicts, depth first. Gymnasium's
``gymnasium.spaces.utils.flatten_space`` (the Box that ``flatten`` maps into) is
:func:`spacealg.ops.flattened_box`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spacealg.adapters.native import gym_class_of
from spacealg.core.generic import as_space, generic
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = ["flatten_space"]


@generic(0)
def flatten_space(space: Any) -> list[Any]:
    """The leaf spaces of nested products, depth first, in key order (PufferLib's meaning).

    Laws: a space that is not a TupleProduct/DictProduct (or a Gymnasium/Gym Tuple/Dict, or
    a plain dict of spaces) is its own only leaf;
    ``flatten_space(TupleProduct(a, b)) == flatten_space(a) + flatten_space(b)``;
    Gymnasium and Gym spaces give their own leaves. These are the fields of
    :func:`spacealg.emulation.dtype_from_space`, in order.
    """
    gym_class = gym_class_of(space)
    if gym_class is not None and gym_class[1] in ("Tuple", "Dict"):
        return _product_leaves(space)
    if gym_class is None and isinstance(space, Mapping):  # a plain dict of spaces is a product
        return flatten_space(as_space(space))  # type: ignore[no-any-return]
    return [space]


@flatten_space.register(TupleProduct)
@flatten_space.register(DictProduct)
def _product_leaves(space: Any) -> list[Any]:
    """The leaves of the parts (``.spaces``, as Gymnasium's and Gym's Tuple and Dict have them)."""
    parts = space.spaces.values() if isinstance(space.spaces, Mapping) else space.spaces
    return [leaf for part in parts for leaf in flatten_space(part)]
