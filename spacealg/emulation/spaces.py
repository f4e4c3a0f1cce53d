"""Emulation layouts: where each leaf of a space lives in PufferLib's flat buffers.

PufferLib stores an observation of any nested space in one flat array whose bytes are a
*structured* numpy dtype: one field per leaf, Tuples as fields ``f0, f1, ...``, Dicts as
fields named by their keys (in order), ``align=True``. spacealg keeps that layout
(``dtype_from_space`` equals PufferLib's on every space PufferLib handles) and fixes its
failures. The rule table, one registration of :func:`emulation_layout` per kind (products: the
plans' walk, :func:`spacealg.core.plan.components`):

==================================  ================  ==========  ===========================
space (its Gymnasium image)         field             discrete    ``nativize`` gives
==================================  ================  ==========  ===========================
``Box``                             its dtype, shape  if integer  the array (a view)
``range(a, b)`` (Discrete)          int64 ``()``      yes         a Python int
``Categorical`` (Discrete/MD)       its dtype, shape  yes         a Python int / an array
``ArraySpace(range(a, b), *d)``     int64 ``d``       yes         the array (MultiDiscrete)
``ArraySpace(bool, *d)``            int8 ``d``        yes         an int8 0/1 array (MultiBinary)
``FiniteSet``, stepped ``range``    int64 ``()``      yes         the label (stored: its index)
``ArraySpace(labels, *d)``          int64 ``d``       yes         an array of labels (indices)
``Interval``                        float64 ``()``    no          a Python float
``ArraySpace(open interval, *d)``   float64 ``d``     no          the array
``TupleProduct``/``DictProduct``    a nested struct   —           a tuple / dict
another finite kind of numeric      ``bounds``' dtype, yes         the array (``OneHot``: the
arrays (``OneHot``)                 ``elsize``                     one-hot vectors themselves)
``OneOf``, ``Text``, ``Sequence``,  ValueError naming the leaf's path (no fixed-size layout;
``Graph``                           flatten them with :mod:`spacealg.ops` instead)
==================================  ================================================================

Observations (:func:`emulate_observation_space`): a top-level Box is kept as is;
otherwise the flat Box has the leaves' common dtype (entries bounded by the leaves' own
bounds, concatenated) or, when dtypes differ, ``uint8`` bytes bounded by 0..255. Its
width is ``itemsize // flat_dtype.itemsize``, never zero for a non-empty space (a
top-level Discrete is a Box of shape ``(1,)``, not PufferLib's zero-width one), and every
field keeps its leaf's own dtype, so no int64 leaf meets an int32 field.

Actions (:func:`emulate_action_space`): a space whose Gymnasium image is a Discrete,
MultiDiscrete or Box is kept as is (PufferLib). Otherwise every entry of every leaf
becomes one entry of a flat action vector, and the struct has one field per leaf, all of
one dtype so that the action array *is* the struct's bytes:

* all leaves discrete: ``MultiDiscrete(nvec, start)`` with one entry per discrete value
  (a MultiBinary leaf gives ``n`` entries of 2 choices, a MultiDiscrete leaf one entry per
  component: PufferLib's mis-sizing and AttributeErrors are gone), int64 fields;
* some leaf continuous (a float Box or an Interval inside a Dict/Tuple): a float ``Box``
  whose discrete entries hold their (raw) values; its dtype is the promotion of the
  continuous leaves' dtypes, widened until every discrete value is exact. ``nativize``
  rounds discrete entries to the nearest value and clips them into range.

Values are raw (a Discrete with ``start=5`` stores 5..; ``MultiDiscrete.start`` says so),
except labels, stored as their index. Laws (tests/test_emulation.py): the emulated row
of a member lies in the emulated space; ``nativize(emulate(x)) == x``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np

from spacealg.adapters.gymnasium import to_gymnasium
from spacealg.adapters.native import gym_class_of
from spacealg.core.generic import as_space, generic
from spacealg.core.image import image_of
from spacealg.core.leaf import Form, LeafModel, widths
from spacealg.core.leaf import leaf as leaf_model
from spacealg.core.plan import components, variant_of
from spacealg.core.protocol import SpaceStyle, bounds
from spacealg.core.space import Space
from spacealg.core.styles import FiniteSpaceStyle
from spacealg.ops.leaves import flatten_space
from spacealg.spaces.box import Box
from spacealg.spaces.oneof import OneOf

__all__ = [
    "Layout",
    "Struct",
    "dtype_from_space",
    "emulate_action_space",
    "emulate_observation_space",
    "emulation_layout",
    "flatten_space",
    "layout_of",
]

_INT64 = np.dtype(np.int64)
_UINT8 = np.dtype(np.uint8)


@dataclass(frozen=True, eq=False)
class Struct:
    """A Tuple/Dict: the member's ``keys``, the struct's field ``names``, the ``parts`` (leaf
    models or structs) and the parts' ``paths`` (for messages: ``space['inventory'][2]``)."""

    keys: tuple[Any, ...]
    names: tuple[str, ...]
    parts: tuple[Any, ...]
    named: bool
    paths: tuple[str, ...] = ()


# =====================================================================================
# the rule table
# =====================================================================================


@generic(0)
def emulation_layout(space: Any, path: str = "space") -> LeafModel | Struct:
    """The layout of ``space`` (its :class:`~spacealg.core.leaf.LeafModel` or a
    :class:`Struct`); see the module's table.

    Raises ValueError naming ``path`` (e.g. ``space['inventory'][2]``) for a part with no
    fixed-size layout (OneOf, Text, Sequence, Graph, unknown kinds).
    """
    try:
        converted = as_space(space)
    except TypeError:
        converted = space
    if converted is not space:
        return emulation_layout(converted, path)  # type: ignore[no-any-return]
    model = leaf_model(space)
    if model is not None and model.items != ():
        return model
    if model is not None:
        raise ValueError(f"emulation: {path} = {space!r} is empty")
    parts = components(space)  # a product: the walk every plan makes
    if parts is not None:
        return _struct(parts, path)
    stored = _numeric_arrays(space)
    if stored is not None:
        low, high = stored
        integral = low.dtype.kind in "biu"
        bound = object if integral else np.float64
        return LeafModel("MultiDiscrete" if integral else "Box", low.dtype, low.shape, low.astype(bound),
                         high.astype(bound), integral=integral, space=space)
    raise ValueError(
        f"emulation: {path} = {space!r} has no fixed-size structured layout (variable-size "
        "spaces such as Sequence, Graph and Text, and OneOf, cannot be emulated); flatten it "
        "with spacealg.ops.flatten or change the space"
    )


def _numeric_arrays(space: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """A finite kind whose members are numeric arrays of one shape: its ``bounds``, whose dtype
    and shape its members are stored in (None for any other space)."""
    style = SpaceStyle(space)
    if not isinstance(space, Space) or not isinstance(style, FiniteSpaceStyle) or not style.shape:
        return None
    try:
        low, high = (np.asarray(b) for b in bounds(space))
    except TypeError:
        return None
    if low.shape != style.shape or low.dtype != high.dtype or low.dtype.kind not in "biuf":
        return None
    return low, high


def _struct(parts: Any, path: str) -> Struct:
    """The layout of a product whose parts (:func:`spacealg.core.plan.components`) are ``parts``."""
    named = not isinstance(parts, tuple)
    keys = tuple(parts) if named else tuple(range(len(parts)))
    names = tuple(k if isinstance(k, str) else str(k) for k in keys) if named else tuple(f"f{i}" for i in keys)
    if len(set(names)) != len(names):
        raise ValueError(f"emulation: {path} has keys whose field names collide: {list(keys)!r}")
    paths = tuple(f"{path}[{k!r}]" for k in keys)
    return Struct(keys, names, tuple(emulation_layout(parts[k], p) for k, p in zip(keys, paths)), named=named,
                  paths=paths)


@emulation_layout.register(OneOf)
def _oneof_layout(space: OneOf, path: str = "space") -> LeafModel:
    raise ValueError(
        f"emulation: {path} = {space!r} is a OneOf, whose members have no common layout; "
        "flatten it with spacealg.ops.flatten (Gymnasium's [index, *value] encoding) instead"
    )


# =====================================================================================
# layouts in the two roles
# =====================================================================================


def _walk(tree: LeafModel | Struct, keys: tuple[Any, ...] = (), names: tuple[str, ...] = (),
          path: str = "space") -> list[Any]:
    if isinstance(tree, LeafModel):
        return [(keys, names, tree, path)]
    found = []
    for key, name, part, where in zip(tree.keys, tree.names, tree.parts, tree.paths):
        found += _walk(part, (*keys, key), (*names, name), where)
    return found


def _struct_dtype(tree: LeafModel | Struct, field_dtype: Any) -> np.dtype:
    if isinstance(tree, LeafModel):
        dtype = field_dtype(tree)
        return np.dtype((dtype, tree.shape), align=True) if tree.shape else np.dtype(dtype)
    fields = [(name, _struct_dtype(part, field_dtype)) for name, part in zip(tree.names, tree.parts)]
    return np.dtype(fields, align=True)


_EXACT_INTEGERS = {np.dtype(np.float16): 2**11, np.dtype(np.float32): 2**24, np.dtype(np.float64): 2**53}
_WIDER = {np.dtype(np.float16): np.dtype(np.float32), np.dtype(np.float32): np.dtype(np.float64)}


def _leaf_offsets(dtype: np.dtype, base: int = 0) -> list[int]:
    """The byte offset of every leaf field of a structured dtype, depth first."""
    if dtype.names is None:
        return [base]
    fields: Any = dtype.fields
    return [o for name in dtype.names for o in _leaf_offsets(fields[name][0], base + fields[name][1])]


class Layout:
    """The structured layout of ``space`` in one ``role`` ("observation" or "action").

    Attributes: ``tree`` (LeafModel/Struct), ``leaves`` (``(keys, names, LeafModel, path)``
    depth first),
    ``field_dtypes`` (the storage dtype of each leaf's field), ``field_offsets`` (its byte
    offset in a row), ``struct_dtype``,
    ``flat_dtype``, ``width`` (entries of ``flat_dtype`` per member), ``emulated_space`` (a
    Gymnasium space) and ``native`` (the space is kept as is: a row holds a member's entries).
    """

    def __init__(self, space: Any, role: str = "observation") -> None:
        if role not in ("observation", "action"):
            raise ValueError(f"Layout: role must be 'observation' or 'action', got {role!r}")
        self.space = space
        self.role = role
        self.tree = emulation_layout(space)
        self.leaves = _walk(self.tree)
        if not self.leaves:
            raise ValueError(f"emulation: {space!r} has no leaves; there is nothing to emulate")
        self.native = False
        if role == "observation":
            self._observation()
        else:
            self._action()
        if not hasattr(self, "width"):
            itemsize = self.struct_dtype.itemsize
            if itemsize % self.flat_dtype.itemsize:  # the invariant align=True keeps
                raise AssertionError(f"layout of {space!r}: itemsize {itemsize} is not a multiple")
            self.width = itemsize // self.flat_dtype.itemsize
        self.field_offsets = [0] if self.native else _leaf_offsets(self.struct_dtype)

    def _set_fields(self, field_dtype: Any) -> None:
        self.field_dtypes = tuple(field_dtype(leaf) for _, _, leaf, _ in self.leaves)
        self.struct_dtype = _struct_dtype(self.tree, field_dtype)

    # -- observations ------------------------------------------------------------------
    def _observation(self) -> None:
        leaves = [leaf for _, _, leaf, _ in self.leaves]
        self._set_fields(lambda leaf: leaf.dtype)
        uniform = len({leaf.dtype for leaf in leaves}) == 1
        self.flat_dtype = leaves[0].dtype if uniform else _UINT8
        if _is_native(self.space, ("Box",)):
            self.native = True
            self.emulated_space = self.space
        elif isinstance(self.space, Box):
            self.native = True
            self.emulated_space = to_gymnasium(self.space)
        elif uniform:
            low, high = _concatenated_bounds(leaves, self.flat_dtype)
            self.emulated_space = _gym_box(low, high, low.size, self.flat_dtype)
        else:
            self.emulated_space = _gym_box(0, 255, self.struct_dtype.itemsize, _UINT8)

    # -- actions ---------------------------------------------------------------------------
    def _action(self) -> None:
        leaves = [leaf for _, _, leaf, _ in self.leaves]
        paths = {id(leaf): path for _, _, leaf, path in self.leaves}  # this layout's own models
        native = self._native_action()
        if native is not None:
            self.native = True
            self.emulated_space = native
            self.flat_dtype = np.dtype(native.dtype)
            self.field_dtypes = (self.flat_dtype,)
            self.struct_dtype = self.flat_dtype  # PufferLib returns the space's dtype here
            self.width = math.prod(native.shape)
            return
        continuous = [leaf for leaf in leaves if not leaf.integral]
        if continuous:
            self.flat_dtype = _float_for(continuous, leaves, paths)
            low, high = _concatenated_bounds(leaves, self.flat_dtype)
            self.emulated_space = _gym_box(low, high, low.size, self.flat_dtype)
        else:
            self.flat_dtype = _INT64
            for leaf in leaves:
                if not leaf.size:
                    continue
                if np.min(leaf.stored_low) < _INT64_MIN or np.max(leaf.stored_high - leaf.stored_low) >= _INT64_MAX:
                    raise ValueError(
                        f"emulation: {paths[id(leaf)]} = {leaf.space!r} is too wide for MultiDiscrete "
                        "entries (its range does not fit int64)"
                    )
            low, high = _concatenated_bounds(leaves, _INT64)
            nvec = np.asarray(widths(low, high), dtype=np.int64)
            self.emulated_space = gymnasium.spaces.MultiDiscrete(nvec, start=low)
        self._set_fields(lambda leaf: self.flat_dtype)

    def _native_action(self) -> Any:
        """The space itself where PufferLib keeps it: a Discrete, MultiDiscrete or Box image."""
        if _is_native(self.space, ("Discrete", "MultiDiscrete", "Box")):
            return self.space
        if not isinstance(self.tree, LeafModel) or self.tree.form is Form.FLOAT:
            return None
        try:
            image = to_gymnasium(self.space)
        except TypeError:
            return None
        kinds = (gymnasium.spaces.Discrete, gymnasium.spaces.MultiDiscrete, gymnasium.spaces.Box)
        stored_as_image = image_of(self.space) is None  # a kind with an image stores its own values
        return image if isinstance(image, kinds) and stored_as_image else None


_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def _float_for(continuous: list[LeafModel], leaves: list[LeafModel], paths: dict[int, str]) -> np.dtype:
    """The continuous leaves' promoted float dtype, widened until every discrete value is exact."""
    dtype: Any = np.result_type(*[leaf.dtype for leaf in continuous])
    for leaf in leaves:
        if leaf.integral and leaf.size:
            largest = max(abs(int(np.min(leaf.stored_low))), abs(int(np.max(leaf.stored_high))))
            while largest > _EXACT_INTEGERS[dtype]:
                if dtype not in _WIDER:
                    raise ValueError(
                        f"emulation: {paths[id(leaf)]} = {leaf.space!r} has integers too large to hold "
                        "exactly in a float action Box"
                    )
                dtype = _WIDER[dtype]
    return dtype


def _concatenated_bounds(leaves: list[LeafModel], dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    low = np.concatenate([leaf.stored_low.reshape(-1) for leaf in leaves])
    high = np.concatenate([leaf.stored_high.reshape(-1) for leaf in leaves])
    if dtype.kind in "iub":
        return low.astype(dtype), high.astype(dtype)
    return low.astype(np.float64).astype(dtype), high.astype(np.float64).astype(dtype)


def _gym_box(low: Any, high: Any, width: int, dtype: np.dtype) -> gymnasium.spaces.Box:
    return gymnasium.spaces.Box(low=low, high=high, shape=(width,), dtype=dtype)


def _is_native(space: Any, names: tuple[str, ...]) -> bool:
    """Whether ``space`` is a Gymnasium (or Gym) space of one of the classes ``names``."""
    gym_class = gym_class_of(space)
    return gym_class is not None and gym_class[1] in names


# =====================================================================================
# PufferLib's functions
# =====================================================================================

_LAYOUT_KEYS = {role: ("emulation layout", "numpy", role) for role in ("observation", "action")}


def layout_of(space: Any, role: str = "observation") -> Layout:
    """The :class:`Layout` of ``space`` in ``role``, a variant of the space's plan (:mod:`spacealg.core.plan`)."""
    key = _LAYOUT_KEYS.get(role)
    if key is None:
        return Layout(space, role)  # raises the ValueError naming role
    return variant_of(space, key, lambda s: Layout(s, role))  # type: ignore[no-any-return]


def dtype_from_space(space: Any) -> np.dtype:
    """The structured dtype of ``space``'s observations (PufferLib's, ``align=True``).

    Laws: Tuples give fields ``f0, f1, ...``, Dicts their keys in order, leaves
    ``(dtype, shape)`` with the dtype of the table in :mod:`spacealg.emulation.spaces`;
    a leaf space gives its own ``(dtype, shape)``.
    """
    return layout_of(space, "observation").struct_dtype


def emulate_observation_space(space: Any) -> tuple[gymnasium.spaces.Box, np.dtype]:
    """``(flat Box, struct dtype)`` for ``space``'s observations (PufferLib's signature).

    A Box is returned as is. Law: the emulated row of every member lies in the Box.
    """
    layout = layout_of(space, "observation")
    return layout.emulated_space, layout.struct_dtype


def emulate_action_space(space: Any) -> tuple[Any, np.dtype]:
    """``(emulated action space, struct dtype)`` for ``space``'s actions (PufferLib's signature).

    Discrete, MultiDiscrete and Box images are returned as is with their dtype; others
    become a MultiDiscrete (all leaves discrete) or a float Box (some leaf continuous).
    Raises ValueError naming the leaf's path for leaves with no layout.
    """
    layout = layout_of(space, "action")
    return layout.emulated_space, layout.struct_dtype
