"""joint_space: the space of ``n`` agents' (or environments') joint values.

>>> import numpy as np
>>> from spacealg import ArraySpace, Box
>>> from spacealg.ops import joint_space
>>> joint_space(range(4), 3)                        # Discrete(4) -> MultiDiscrete([4, 4, 4])
ArraySpace(range(0, 4), 3)
>>> joint_space(ArraySpace(range(5), 2), 3)          # MultiDiscrete -> integer Box (3, 2)
Box(0, 4, shape=(3, 2), dtype=np.int64)

On a Gymnasium space the result is a Gymnasium space equal to
``gymnasium.vector.utils.batch_space(space, n)``, hence to PufferLib's ``joint_space`` on
Discrete, MultiDiscrete and Box. On a spacealg space it is the ``n``-fold power in the
representation whose Gymnasium image is ``batch_space``'s:
``to_gymnasium(joint_space(s, n)) == batch_space(to_gymnasium(s), n)``.
The rule table, one registration per kind (Gymnasium's classes in brackets):

==================================  ======================================  ==============================
space ``s``                         ``joint_space(s, n)``                   ``batch_space`` of the image
==================================  ======================================  ==============================
``range``, ``FiniteSet``,           ``ArraySpace(s, n)``                    Discrete → MultiDiscrete
scalar ``Categorical``              (a Categorical for Categoricals)
``Interval`` (closed or infinite    ``Box(low, high, (n,), float64)``       Box ``()`` → Box ``(n,)``
ends; open finite ends: ArraySpace)
``BOOL`` (``bool``)                 ``ArraySpace(range(2), n)``             Discrete(2) → MultiDiscrete
``ArraySpace(range(a, b), *d)``     ``Box(a, b - 1, (n, *d), int64)``       MultiDiscrete → Box
``ArraySpace(bool, *d)``            ``Box(0, 1, (n, *d), int8)``            MultiBinary → Box int8
array ``Categorical`` (dtype t)     ``Box(start, start + nvec - 1)`` tiled  MultiDiscrete → Box
``ArraySpace(labels, *d)``          ``ArraySpace(labels, n, *d)``           (see below)
``Box`` of shape ``d``              ``Box`` of shape ``(n, *d)``            Box → Box
``TupleProduct``/``DictProduct``    the product of the parts' joint spaces  Tuple/Dict recurse
a kind with its own array form      ``ArraySpace(s, n)``: that form (a          its image's ``batch_space``
(``array_of``; ``OneHot``)          ``OneHot`` with a batch axis)
``OneOf``, ``Text``, ...            ``TupleProduct`` of ``n`` copies        Tuple of ``n`` copies
==================================  ======================================  ==============================

Laws: a stack of ``n`` members of ``s`` (``numpy.stack``; a tuple of ``n`` members for the
product-of-copies rule) is a member of ``joint_space(s, n)``;
``to_gymnasium(joint_space(s, n)) == batch_space(to_gymnasium(s), n)`` wherever ``s`` has a
Gymnasium image whose values are its own. The one knowing exception: arrays of labels (or
of stepped ranges) map to Gymnasium by *position*, and ``batch_space`` of that image is an
integer Box of positions, which is not a set of labels; their joint space stays the array
of labels. ``n`` not a positive int raises ValueError naming ``n``. On a Gymnasium space the
result also carries ``batch_space``'s generator state (a copy of the space's generator at
every level; the copies of a Tuple-of-copies seeded as ``batch_space`` seeds them), so the
same seed samples the same joint values through either function.
"""

from __future__ import annotations

import copy
import numbers
from typing import Any

import gymnasium
import numpy as np

from spacealg.adapters.gymnasium import from_gymnasium, to_gymnasium
from spacealg.core.generic import as_space, generic
from spacealg.core.leaf import LeafModel, leaf
from spacealg.core.space import Space
from spacealg.spaces.array import ArraySpace, array_of
from spacealg.spaces.box import Box
from spacealg.spaces.finite import BOOL
from spacealg.spaces.product import DictProduct, TupleProduct

__all__ = ["joint_space"]


def _check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"joint_space: n must be a positive int (the number of agents), got n={n!r}")
    return int(n)


@generic(0)
def joint_space(space: Any, n: int) -> Any:
    """The space of ``n`` joint values of ``space`` (see the module's table and laws).

    Leaves follow their leaf model (:mod:`spacealg.core.leaf`); unregistered spacealg kinds
    (OneOf, Text, Sequence, Graph, ...) give the ``TupleProduct`` of ``n`` copies; plain
    objects go through :func:`spacealg.as_space`.
    """
    n = _check_n(n)
    converted = as_space(space)
    if converted is not space:
        return joint_space(converted, n)
    model = leaf(space)
    if model is not None:
        return _leaf_joint(space, model, n)
    if isinstance(space, Space):
        if array_of.dispatch(type(space)) is not array_of.dispatch(object):  # the kind's own array form
            return ArraySpace(space, n)
        return TupleProduct(*([space] * n))
    raise TypeError(f"joint_space: {space!r} is not a space")


def _leaf_joint(space: Any, model: LeafModel, n: int) -> Any:
    """Discrete -> MultiDiscrete (an array of ``n``); a closed interval -> a float64 Box;
    MultiDiscrete/MultiBinary -> an integer Box ``(n, *shape)`` (as ``batch_space``);
    Boxes, labels and open intervals -> the array of ``n`` (a Box for a Box)."""
    if space == BOOL:  # Discrete(2) in Gymnasium: the joint space is MultiDiscrete([2] * n)
        return ArraySpace(range(2), n)
    if model.scalar and model.image == "Box":  # closed, or open only at infinite ends
        return Box(float(model.low), float(model.high), shape=(n,), dtype=np.float64)
    if model.image in ("MultiDiscrete", "MultiBinary") and model.stacks:
        shape = (n, *model.shape)
        low = np.broadcast_to(np.asarray(model.low, dtype=model.dtype), shape)
        high = np.broadcast_to(np.asarray(model.high, dtype=model.dtype), shape)
        return Box(low, high, dtype=model.dtype)
    return ArraySpace(space, n)  # canonical form of a Box: the Box of shape (n, *shape)


@joint_space.register(TupleProduct)
def _tuple_joint(space: TupleProduct, n: int) -> TupleProduct:
    n = _check_n(n)
    return TupleProduct(*(joint_space(space[i], n) for i in range(len(space.spaces))))


@joint_space.register(DictProduct)
def _dict_joint(space: DictProduct, n: int) -> DictProduct:
    n = _check_n(n)
    pairs = [(k, joint_space(part, n)) for k, part in space.spaces.items()]
    return DictProduct(pairs, sort_keys=space.sort_keys)


@joint_space.register(gymnasium.spaces.Space)
def _gymnasium_joint(space: gymnasium.spaces.Space, n: int) -> gymnasium.spaces.Space:
    n = _check_n(n)
    try:
        single = from_gymnasium(space)
    except TypeError:  # a Space subclass spacealg does not know: batch_space's rule for it, n copies
        batched = gymnasium.spaces.Tuple(tuple(copy.deepcopy(space) for _ in range(n)))
    else:
        batched = to_gymnasium(joint_space(single, n))
    _carry_generators(batched, space, n)
    return batched


_STACKED = (gymnasium.spaces.Box, gymnasium.spaces.Discrete, gymnasium.spaces.MultiDiscrete,
            gymnasium.spaces.MultiBinary)


def _carry_generators(batched: Any, single: Any, n: int) -> None:
    """Gives ``batched`` (and its parts) the generator state ``batch_space`` gives them: a copy
    of ``single``'s generator at every level; the ``n`` parts of a space batched as a Tuple of
    copies (Graph, Sequence, Text, OneOf, ...) seeded with ``n`` ints drawn from another copy
    of it. So the same seed samples the same joint values through either function."""
    batched._np_random = copy.deepcopy(single.np_random)
    if type(single) is gymnasium.spaces.Tuple:
        for b, s in zip(batched.spaces, single.spaces):
            _carry_generators(b, s, n)
    elif type(single) is gymnasium.spaces.Dict:
        for key, s in single.spaces.items():
            _carry_generators(batched.spaces[key], s, n)
    elif not isinstance(single, _STACKED):
        seeds = copy.deepcopy(single.np_random).integers(0, 10**8, n)
        batched.seed([int(seed) for seed in seeds])
