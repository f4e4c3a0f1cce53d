"""TorchRL adapters: ``from_torchrl`` and ``to_torchrl``, one rule per spec class.

Importing this module imports ``torch`` and ``torchrl``; spacealg does so on first sight of
a TorchRL spec (through :data:`spacealg.core.generic.ADAPTER_MODULES`), after which every
generic function takes a spec directly.

=============================================  ==========================================
TorchRL                                        spacealg (``from_torchrl``)
=============================================  ==========================================
``Bounded(low, high, shape, dtype)``           ``Box(low, high, shape, dtype)`` (integer
                                               dtypes too: TorchRL's ``BoundedDiscrete``)
``Unbounded(shape, dtype)``                    ``Box`` of every array of that shape and dtype
``Categorical(n, shape, dtype)``               ``Categorical(n, dtype=dtype)`` (0-d) or
                                               ``Categorical(full(shape, n), dtype=dtype)``;
                                               with dtype bool (done flags): ``Box`` of bool
``MultiCategorical(nvec, shape, dtype)``       ``Categorical(nvec, dtype=dtype)``
a ``mask`` on either                           ``Masked`` of that, per entry
a float-dtype ``Categorical``/``Binary``/...   TypeError (integers stored as floats)
``Binary(n, shape, dtype)``                    ``Box(0, 1, shape, dtype)``
``OneHot(n, shape=(*b, n), dtype)``            ``OneHot(n, shape, dtype)`` (the same vectors)
``MultiOneHot(nvec, shape=(*b, sum(nvec)))``   ``OneHot(nvec, shape, dtype)``
a ``mask`` on either                           ``Masked`` of that over the hot positions
a ``-1`` dimension in a leaf's shape            ``Dynamic(space, axes)``: ``space`` the leaf's
                                               space with length 1 there (TorchRL's safe
                                               shape), ``axes`` where the ``-1`` are
``Choice([spec, ...])`` of specs                ``Union`` of their spaces, as written (TorchRL's
                                               ``rand`` picks a choice uniformly, ``sample``
                                               weights finite parts by their sizes)
``Composite(key=spec, ..., shape=batch)``      ``DictProduct`` (key order kept; the entries'
                                               shapes include the batch shape; ``None``
                                               entries, which ``rand`` leaves out, left out)
``NonTensor``, stacked specs (``Stacked``,     TypeError (no spacealg set equals them)
``StackedComposite``), bfloat16
=============================================  ==========================================

``to_torchrl(space, device=None, *, batch_shape=())`` runs the table backwards (every leaf on
``device``; a ``Composite``'s shape is ``batch_shape``):

=============================================  ==========================================
spacealg                                       TorchRL (``to_torchrl``)
=============================================  ==========================================
``Box`` of bool                                ``Categorical(2, shape, dtype=bool)`` (done flags)
``Box`` of integers, entries 0..1              ``Binary(shape, dtype)`` (ndim >= 1)
``Box`` with no finite bound                   ``Unbounded(shape, dtype)``
other ``Box``                                  ``Bounded(low, high, shape, dtype)``
``Categorical`` from 0, one ``n``              ``Categorical(n, shape, dtype)``
``Categorical`` from 0, per-entry ``nvec``     ``MultiCategorical(nvec, shape, dtype)``
``OneHot(n)`` / ``OneHot(nvec)``                ``OneHot`` / ``MultiOneHot`` (shape, dtype kept)
``Categorical`` from 0 with ``one_hot=True``   ``OneHot``/``MultiOneHot`` of its one-hot encoding
``Categorical`` with ``start != 0``            ``Bounded(start, start + nvec - 1, dtype)``
                                               (TorchRL has no ``start``: the set is kept)
``ArraySpace(bool, *dims)``                    ``Categorical(2, shape=dims, dtype=bool)``
``Dynamic(space, axes)``                        ``space``'s spec with ``-1`` along ``axes``
``Masked`` of a ``Categorical``/``OneHot``     its spec with TorchRL's ``mask`` (a joint mask:
                                               TypeError)
``Union`` (parts of one shape and dtype)       ``Choice`` of the parts' specs, in order
``DictProduct``                                ``Composite`` (same key order)
``TupleProduct``                               encoding: ``Composite`` with keys ``"0"``, ``"1"``, ...
anything else                                  Gymnasium's encoding (``spacealg.encode``)
=============================================  ==========================================

Laws: ``to_torchrl(from_torchrl(spec), spec.device, batch_shape=spec.shape) == spec`` (TorchRL's
``==``: class, shape, bounds, dtype, device; a ``Categorical``/``MultiCategorical`` ``mask`` comes
back too) for every spec with a rule, except where the
set has two TorchRL names and the table picks one: ``Bounded(0, 1)`` of integers comes back
as ``Binary``, a ``Bounded`` spec spanning its dtype's whole range as ``Unbounded``,
bool ``Binary``/``Bounded``/``Unbounded`` specs as ``Categorical(2, dtype=bool)``, a
``MultiCategorical`` whose ``nvec`` is one ``n`` as ``Categorical(n, shape)``, a 0-d ``Binary``
as ``Bounded(0, 1)``, a ``Categorical`` of a shape with no entry (its set: the one empty
array, whatever ``n``) as ``Categorical(1, shape)``.
``OneHot``/``MultiOneHot`` specs round-trip without options (shape, batch axes and dtype
included), and ``contains(x, from_torchrl(spec)) == spec.is_in(x)`` on their vectors.
``one_hot=True`` is an encoding for the positions' spaces: a ``Categorical`` from 0 (one
``n``, or a 1-d ``nvec``) maps to the ``OneHot``/``MultiOneHot`` spec whose space ``o =
from_torchrl(spec)`` has that ``Categorical`` as its image, so ``decode(x, o)`` is the
vector standing for the position ``x`` and ``encode(v, o)`` the way back. ``contains(x, spec)`` is
``spec.is_in(x)`` for a tensor of exactly the spec's shape (``is_in`` itself also accepts
batches: use ``isin``; along a ``-1`` axis any length, 0 included) and free of NaN; it is
strict about dtype and device. Shapes are strict too: a tensor of another shape is in no spec
and in no converted space, even where ``is_in`` accepts it by broadcasting (``rand()`` of a
shape-``(1,)`` ``MultiCategorical`` returns a 0-d tensor, which ``is_in`` accepts:
``contains`` refuses it on the spec and on ``from_torchrl(spec)`` alike; reshaped to the
spec's shape it is a member of both). A ``Composite`` whose own shape has a ``-1`` ties its
entries' lengths, which no product of ``Dynamic`` spaces does: TypeError. Where ``is_in``
accepts a value the set lacks, ``contains``/``isin`` on the spec follow the set (a member of
both ``is_in`` and ``from_torchrl(spec)``): NaN, which TorchRL's float ``Unbounded`` accepts
and no spacealg space holds (a real set holds real numbers; ``±inf`` is a member of both),
and vectors that are not one-hot, which a masked ``OneHot``/``MultiOneHot``'s ``is_in``
accepts when any allowed position is set (all ones, say) and a float one's when its entries
sum to 1 in float arithmetic (``[-6e-08, 0, 1]`` in float16). ``sample(spec, ...)`` returns
tensors (a ``TensorDict`` for ``Composite``) of the spec's dtype on its device;
``to_torchrl_value``/``from_torchrl_value`` map values between the two sides (tensors <->
arrays, TensorDicts <-> dicts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
import torchrl.data as td
from tensordict import TensorDict, TensorDictBase

from spacealg.adapters.foreign import expressible, register_native
from spacealg.adapters.unbounded import is_unbounded, unbounded_box
from spacealg.core.generic import as_space, generic
from spacealg.core.protocol import contains
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.categorical import Categorical
from spacealg.spaces.dynamic import Dynamic
from spacealg.spaces.finite import BOOL, int64_run, range_length
from spacealg.spaces.masked import Masked
from spacealg.spaces.onehot import OneHot
from spacealg.spaces.product import DictProduct, TupleProduct
from spacealg.spaces.union import Union

__all__ = ["from_torchrl", "from_torchrl_value", "to_torchrl", "to_torchrl_value"]

Device = Any


@generic(0)
def from_torchrl(spec: Any) -> Any:
    """The spacealg space equal, as a set, to the TorchRL spec ``spec`` (see the table).

    Laws: ``to_torchrl(from_torchrl(spec), spec.device) == spec``;
    ``spec.is_in(to_torchrl_value(sample(from_torchrl(spec)), spec))``;
    ``contains(from_torchrl_value(v, spec), from_torchrl(spec)) == spec.is_in(v)``.
    Raises TypeError for anything that is not a TorchRL spec, or has no spacealg equal.
    """
    if isinstance(spec, td.TensorSpec):
        cls = type(spec)
        raise TypeError(
            f"from_torchrl: no adapter for the spec class {cls.__module__}.{cls.__qualname__}; register "
            f"one with @spacealg.from_torchrl.register({cls.__qualname__})"
        )
    raise TypeError(f"from_torchrl: {spec!r} (of type {type(spec).__qualname__}) is not a TorchRL spec")


@generic(0)
def to_torchrl(space: Any, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    """The TorchRL spec equal to ``space``, on ``device`` (TorchRL's default when None).

    ``batch_shape`` is the shape of the ``Composite`` specs; ``one_hot=True`` maps categorical
    spaces from 0 to the ``OneHot``/``MultiOneHot`` spec of their one-hot encoding (whose
    space has them as its image; see the module docstring). ``OneHot`` spaces need no flag.
    Plain objects are converted with :func:`spacealg.as_space` first; a space with no TorchRL
    class goes through Gymnasium's documented encoding (``spacealg.encode``). Raises
    TypeError naming the space where there is none.
    """
    converted = as_space(space)
    if converted is not space:
        return to_torchrl(converted, device, batch_shape=batch_shape, one_hot=one_hot)
    return expressible(space, "torchrl", lambda s: to_torchrl(s, device, batch_shape=batch_shape, one_hot=one_hot))


# -- dtypes -------------------------------------------------------------------------------


def numpy_dtype(dtype: torch.dtype, spec: Any) -> np.dtype:
    """The numpy dtype of a torch dtype; TypeError naming the spec for those numpy lacks."""
    try:
        return torch.empty((0,), dtype=dtype).numpy().dtype
    except TypeError:
        raise TypeError(f"from_torchrl: {spec!r} has the dtype {dtype}, which numpy cannot hold") from None


_TORCH_ARITHMETIC = frozenset(np.dtype(t) for t in (bool, np.uint8, np.int8, np.int16, np.int32, np.int64,
                                                     np.float16, np.float32, np.float64))


def torch_dtype(dtype: np.dtype, space: Any) -> torch.dtype:
    """The torch dtype of a numpy dtype; TypeError naming ``space`` for the unsigned dtypes
    wider than 8 bits, which torch stores but cannot compare (so TorchRL cannot check them)."""
    if np.dtype(dtype) not in _TORCH_ARITHMETIC:
        raise TypeError(f"to_torchrl: {space!r} has no TorchRL equivalent (torch cannot compare {dtype} tensors)")
    return torch.from_numpy(np.empty((0,), dtype=dtype)).dtype


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().numpy()


def _shape(spec: Any) -> tuple[int, ...]:
    """The spec's shape with length 1 along its dynamic (``-1``) axes: TorchRL's own ``_safe_shape``,
    the shape of its bounds, ``nvec`` and masks, and of the template of its ``Dynamic``."""
    return tuple(int(d) if d >= 0 else 1 for d in spec.shape)


def _fits(shape: Any, spec: Any) -> bool:
    """Whether an array of ``shape`` has the spec's shape (any length along a ``-1`` axis)."""
    return len(shape) == len(spec.shape) and all(d == s or s < 0 for d, s in zip(shape, spec.shape))


def _stretched(rule: Any) -> Any:
    """``rule`` for a leaf spec, made ``Dynamic`` along the spec's ``-1`` axes (the rule sees
    the template's shape, :func:`_shape`); a spacealg constructor's ValueError (a spec TorchRL
    builds and spacealg has no set for: a block of width 0) is a TypeError naming the spec."""

    def convert(spec: Any) -> Any:
        try:
            space = rule(spec)
        except ValueError as error:
            raise TypeError(f"from_torchrl: {spec!r} has no spacealg equal ({error})") from None
        axes = tuple(i for i, d in enumerate(spec.shape) if d < 0)
        if not axes:
            return space
        return Dynamic(space, axes)

    convert.__doc__ = rule.__doc__
    return convert


# -- from_torchrl: one rule per TorchRL class ----------------------------------------------


@from_torchrl.register(td.Bounded)
@_stretched
def _bounded_from(spec: Any) -> Box:
    if not (hasattr(spec.space, "low") and hasattr(spec.space, "high")):  # fields overwritten with another class's
        raise TypeError(f"from_torchrl: {spec!r} is a Bounded spec without bounds (its space is "
                        f"{type(spec.space).__name__}); no spacealg space equals it")
    dtype = numpy_dtype(spec.dtype, spec)
    return Box(_numpy(spec.space.low), _numpy(spec.space.high), shape=_shape(spec), dtype=dtype)


@from_torchrl.register(td.Unbounded)
@_stretched
def _unbounded_from(spec: Any) -> Box:
    return unbounded_box(_shape(spec), numpy_dtype(spec.dtype, spec))


def _integer_dtype(spec: Any) -> np.dtype:
    """The numpy dtype of a discrete spec; TypeError naming it for a float dtype (integers
    stored as floats: spacealg's discrete spaces have integer dtypes, and a float ``Box``
    would be the whole interval, not its integers)."""
    dtype = numpy_dtype(spec.dtype, spec)
    if dtype.kind == "f":
        raise TypeError(f"from_torchrl: {spec!r} stores its integers as {dtype}; no spacealg space equals it "
                        "(spacealg's discrete spaces hold integer dtypes)")
    return dtype


def _masked(space: Any, spec: Any, split: list[int] | None) -> Any:
    """``space`` restricted by the spec's ``mask``: TorchRL's per-entry masks, one row per
    entry of the leading axes; ``split``: the lengths a ``MultiCategorical``'s rows hold one
    after the other (a tuple of per-factor masks), None for a ``Categorical``'s one mask."""
    mask = getattr(spec, "mask", None)
    if mask is None:
        return space
    ends = np.cumsum([0, *(split or [])])

    def nested(rows: np.ndarray) -> Any:
        if rows.ndim > 1:
            return tuple(nested(row) for row in rows)
        return rows if split is None else tuple(rows[ends[i] : ends[i + 1]] for i in range(len(split)))

    return Masked(space, nested(_numpy(mask).astype(bool)))


@from_torchrl.register(td.Categorical)
@_stretched
def _categorical_from(spec: td.Categorical) -> Any:
    n = int(spec.space.n)
    shape = _shape(spec)
    if numpy_dtype(spec.dtype, spec).kind == "b":  # TorchRL's done flags: Categorical(2, dtype=bool)
        return Box(False, n > 1, shape=shape, dtype=np.dtype(bool))
    dtype = _integer_dtype(spec)
    space = Categorical(n, dtype=dtype) if shape == () else Categorical(np.full(shape, n), dtype=dtype)
    return _masked(space, spec, None)


@from_torchrl.register(td.MultiCategorical)
@_stretched
def _multicategorical_from(spec: td.MultiCategorical) -> Any:
    nvec = np.broadcast_to(_numpy(spec.nvec), _shape(spec))
    space = Categorical(np.array(nvec), dtype=_integer_dtype(spec))
    split = [int(n) for n in nvec.reshape(-1, nvec.shape[-1])[0]] if nvec.ndim else None
    return _masked(space, spec, split)


@from_torchrl.register(td.Binary)
@_stretched
def _binary_from(spec: td.Binary) -> Box:
    return Box(0, 1, shape=_shape(spec), dtype=_integer_dtype(spec))


@from_torchrl.register(td.OneHot)
@_stretched
def _onehot_from(spec: td.OneHot) -> Any:
    """The ``OneHot`` space; with a ``mask``, ``Masked`` over its hot positions (per entry)."""
    space = OneHot(int(spec.space.n), shape=_shape(spec), dtype=numpy_dtype(spec.dtype, spec))
    return _masked(space, spec, None)


def _blocks(spec: td.MultiOneHot) -> list[int]:
    return [int(box.n) for box in spec.space.boxes]


@from_torchrl.register(td.MultiOneHot)
@_stretched
def _multionehot_from(spec: td.MultiOneHot) -> Any:
    """The ``OneHot`` space of the blocks; with a ``mask``, ``Masked`` over each block's hot
    positions (a tuple of per-block masks per entry)."""
    space = OneHot(_blocks(spec), shape=_shape(spec), dtype=numpy_dtype(spec.dtype, spec))
    return _masked(space, spec, _blocks(spec))


@from_torchrl.register(td.Choice)
def _choice_from(spec: td.Choice) -> Union:
    """The untagged union of the choices' spaces, as written (one part per choice, in order)."""
    choices = spec._choices
    if not all(isinstance(c, td.TensorSpec) for c in choices):
        raise TypeError(f"from_torchrl: {spec!r} chooses among non-tensor data; no spacealg space equals it")
    return Union(*(from_torchrl(c) for c in choices))


@from_torchrl.register(td.Composite)
def _composite_from(spec: td.Composite) -> DictProduct:
    """The named product of the entries; ``None`` entries (TorchRL's placeholders, which
    ``rand``/``zero`` leave out and ``is_in`` ignores) are left out."""
    if any(d < 0 for d in spec.shape):
        raise TypeError(f"from_torchrl: {spec!r} has a -1 in its own shape, which ties its entries' lengths; "
                        "no spacealg space equals it (a product of Dynamic entries does not tie them)")
    return DictProduct([(k, from_torchrl(v)) for k, v in spec.items() if v is not None])


@from_torchrl.register(td.StackedComposite)
def _stacked_from(spec: Any) -> Any:
    raise TypeError(f"from_torchrl: {spec!r} stacks Composites that differ (keys or entries); no spacealg "
                    "space equals it (stack equal Composites, or convert each one)")


@from_torchrl.register(td.NonTensor)
def _nontensor_from(spec: td.NonTensor) -> Any:
    raise TypeError(f"from_torchrl: {spec!r} holds arbitrary Python objects; no spacealg space equals it")


# -- to_torchrl: one rule per spacealg kind ------------------------------------------------


@to_torchrl.register(td.TensorSpec)
def _already_torchrl(space: Any, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    return space


def _leaf_device(device: Device) -> dict[str, Any]:
    return {} if device is None else {"device": device}


@to_torchrl.register(Box)
def _box_to(space: Box, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    dtype, where = torch_dtype(space.dtype, space), _leaf_device(device)
    flags = space.integral and (space.low == 0).all() and (space.high == 1).all()
    if flags and space.dtype.kind == "b":  # as TorchRL's done specs
        return td.Categorical(2, shape=space.shape, dtype=torch.bool, **where)
    if flags and len(space.shape) >= 1:
        return td.Binary(shape=space.shape, dtype=dtype, **where)
    if is_unbounded(space):
        return td.Unbounded(shape=space.shape, dtype=dtype, **where)
    low, high = torch.as_tensor(np.array(space.low)), torch.as_tensor(np.array(space.high))
    return td.Bounded(low=low, high=high, shape=space.shape, dtype=dtype, **where)


def _integers(space: Any, shape: tuple[int, ...], dtype: np.dtype, low: np.ndarray, high: np.ndarray,
              device: Device, one_hot: bool) -> Any:
    """The spec of the integer arrays of ``shape`` with entries in ``[low, high]``."""
    where, torch_type = _leaf_device(device), torch_dtype(dtype, space)
    low, high = np.broadcast_to(low, shape), np.broadcast_to(high, shape)
    if low.size and not (low == 0).all():
        return td.Bounded(low=torch.as_tensor(np.array(low)), high=torch.as_tensor(np.array(high)), shape=shape,
                          dtype=torch_type, **where)
    nvec = np.array(high, dtype=np.int64) + 1
    uniform = nvec.size == 0 or (nvec == nvec.flat[0]).all()
    if one_hot:
        if uniform and nvec.size:
            return td.OneHot(int(nvec.flat[0]), shape=(*shape, int(nvec.flat[0])), **where)
        if len(shape) == 1:
            return td.MultiOneHot([int(n) for n in nvec], **where)
        raise TypeError(f"to_torchrl: one_hot=True needs one n, or a 1-d nvec; got nvec={nvec.tolist()}")
    if uniform:
        n = int(nvec.flat[0]) if nvec.size else 1
        return td.Categorical(n, shape=shape, dtype=torch_type, **where)
    return td.MultiCategorical(torch.as_tensor(nvec), shape=shape, dtype=torch_type, **where)


@to_torchrl.register(Categorical)
def _categorical_to(space: Categorical, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    return _integers(space, space.shape, space.dtype, space.low, space.high, device, one_hot)


@to_torchrl.register(range)
def _range_to(space: range, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    if int64_run(space):
        low, high = np.array(space.start), np.array(space.start + range_length(space) - 1)
        return _integers(space, (), np.dtype(np.int64), low, high, device, one_hot)
    return expressible(space, "torchrl", lambda s: to_torchrl(s, device, one_hot=one_hot))


@to_torchrl.register(ArraySpace)
def _array_to(space: ArraySpace, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    base = space.space
    if base == BOOL:
        return td.Categorical(2, shape=space.dims, dtype=torch.bool, **_leaf_device(device))
    if int64_run(base):
        n = range_length(base)
        low, high = np.full(space.dims, base.start), np.full(space.dims, base.start + n - 1)
        return _integers(space, space.dims, np.dtype(np.int64), low, high, device, one_hot)
    return expressible(space, "torchrl", lambda s: to_torchrl(s, device, one_hot=one_hot))


@to_torchrl.register(OneHot)
def _onehot_to(space: OneHot, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    where = {"shape": space.shape, "dtype": torch_dtype(space.dtype, space), **_leaf_device(device)}
    if space.scalar:
        return td.OneHot(space.nvec, **where)
    return td.MultiOneHot(list(space.sizes), **where)


@to_torchrl.register(Union)
def _union_to(space: Union, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    """A ``Choice`` of the parts' specs, in order (TorchRL: of one shape, dtype and device)."""
    specs = [to_torchrl(p, device, batch_shape=batch_shape, one_hot=one_hot) for p in space._spaces]
    try:
        return td.Choice(specs)
    except (TypeError, ValueError) as error:
        raise TypeError(f"to_torchrl: {space!r} has no TorchRL equivalent ({error})") from None


@to_torchrl.register(Masked)
def _masked_to(space: Masked, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    """The base's ``Categorical``/``MultiCategorical`` (or ``OneHot``/``MultiOneHot``, masked
    over its hot positions) with TorchRL's per-entry ``mask``; a joint mask (one not a
    product of per-entry masks) has no TorchRL form (TypeError)."""
    spec = to_torchrl(space.root, device, batch_shape=batch_shape)
    blocks = space.blocks
    onehot = isinstance(spec, (td.OneHot, td.MultiOneHot))
    if (not (onehot or isinstance(spec, (td.Categorical, td.MultiCategorical)))
            or (spec.dtype == torch.bool and not onehot) or space.is_empty
            or any(b.ndim != 1 for b in blocks) or len(blocks) != len(space._factors.sizes)):
        raise TypeError(f"to_torchrl: {space!r} has no TorchRL equivalent (TorchRL masks a Categorical or "
                        "MultiCategorical entry by entry)")
    rows = np.concatenate(blocks) if blocks else np.zeros(0, dtype=bool)
    if isinstance(spec, (td.MultiCategorical, td.OneHot, td.MultiOneHot)):  # masks along the last axis
        rows = rows.reshape((*_shape(spec)[:-1], -1))
    else:
        rows = rows.reshape((*_shape(spec), int(spec.space.n)))
    spec.update_mask(torch.as_tensor(rows, device=spec.device))
    return spec


@to_torchrl.register(Dynamic)
def _dynamic_to(space: Dynamic, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    """The template's spec with ``-1`` along the dynamic axes (TorchRL's ``make_neg_dim``)."""
    spec = to_torchrl(space.space, device, one_hot=one_hot)
    if isinstance(spec, td.Composite):  # the template went through an encoding: no leaf to stretch
        raise TypeError(f"to_torchrl: {space!r} has no TorchRL equivalent (its template is no TorchRL leaf)")
    for axis in space.axes:
        spec.make_neg_dim(axis)
    return spec


@to_torchrl.register(DictProduct)
@to_torchrl.register(TupleProduct)
def _product_to(space: Any, device: Device = None, *, batch_shape: Any = (), one_hot: bool = False) -> Any:
    """A ``Composite`` keyed by the keys as strings (a tuple's by ``"0"``, ``"1"``, ...)."""
    parts = space._spaces
    named = parts.items() if isinstance(space, DictProduct) else enumerate(parts)
    entries = {str(k): to_torchrl(s, device, batch_shape=batch_shape, one_hot=one_hot) for k, s in named}
    if len(entries) != len(parts):
        raise TypeError(f"to_torchrl: the keys of {space!r} are not distinct as strings")
    return td.Composite(entries, shape=batch_shape, device=device)


# -- values --------------------------------------------------------------------------------


@generic(1)
def to_torchrl_value(x: Any, spec: Any, batch_shape: Any = None) -> Any:
    """The TorchRL value of ``spec`` standing for the member ``x`` of ``from_torchrl(spec)``
    (or a batch of members, of shape ``batch_shape``, read from the entries when None): a
    tensor of the spec's dtype on its device, a ``TensorDict`` for ``Composite`` (from a
    dict, or a tuple for the tuple encoding).

    Law: ``from_torchrl_value(to_torchrl_value(x, spec), spec) == x``.
    """
    return torch.as_tensor(np.asarray(x, dtype=numpy_dtype(spec.dtype, spec)), device=spec.device)


@generic(1)
def from_torchrl_value(value: Any, spec: Any) -> Any:
    """The spacealg value (NumPy) that the TorchRL value ``value`` of ``spec`` stands for,
    so ``contains(from_torchrl_value(v, spec), from_torchrl(spec)) == spec.is_in(v)`` for
    tensors of the spec's shape and dtype.
    """
    return _numpy(value) if isinstance(value, torch.Tensor) else np.asarray(value)


@to_torchrl_value.register(td.Composite)
def _composite_value(x: Any, spec: td.Composite, batch_shape: Any = None) -> TensorDict:
    if isinstance(x, (tuple, list)):  # the tuple encoding: keys "0", "1", ...
        x = {str(i): v for i, v in enumerate(x)}
    entries = {k: to_torchrl_value(x[k], s, batch_shape) for k, s in spec.items() if s is not None}
    if batch_shape is None:
        first = next(iter(entries), None)
        batch_shape = _leading_dims(entries[first], spec[first]) if first is not None else []
    return TensorDict(entries, batch_size=[*batch_shape, *_shape(spec)], device=spec.device)


@from_torchrl_value.register(td.Composite)
def _composite_decode(value: Any, spec: td.Composite) -> dict[str, Any]:
    return {k: from_torchrl_value(value[k], s) for k, s in spec.items() if s is not None}


def _leading_dims(value: Any, spec: Any) -> list[int]:
    shape = list(value.batch_size if isinstance(value, TensorDictBase) else value.shape)
    return shape[: len(shape) - len(spec.shape)]


# -- the protocol on TorchRL specs (see spacealg.adapters.foreign) --------------------------


def _is_member(spec: Any, x: Any) -> bool:
    """``spec.is_in(x)`` for one element of the spec's set: a tensor of exactly the spec's shape
    that is also a member of ``from_torchrl(spec)``; for a ``Composite``, a dict or TensorDict
    with its keys whose entries are members."""
    if isinstance(spec, td.Composite):
        keys = {k for k, s in spec.items() if s is not None}  # None entries: placeholders, left out
        if not isinstance(x, (Mapping, TensorDictBase)) or set(x.keys()) != keys:
            return False
        if isinstance(x, TensorDictBase) and not _fits(tuple(x.batch_size), spec):
            return False
        return all(_is_member(s, x[k]) for k, s in spec.items() if s is not None)
    if not isinstance(x, torch.Tensor) or not _fits(tuple(x.shape), spec):
        return False
    # in both TorchRL's is_in and the spacealg set: is_in also takes what no set holds (NaN; a
    # vector that is not one-hot; see the module)
    return bool(spec.is_in(x)) and bool(contains(from_torchrl_value(x, spec), as_space(spec)))


def _leading(batch: Any, spec: Any) -> tuple[int, ...]:
    shape = tuple(batch.batch_size if isinstance(batch, TensorDictBase) else batch.shape)
    k = len(spec.shape)
    if len(shape) < k or not _fits(shape[len(shape) - k :], spec):
        raise ValueError(f"isin: a batch of shape {shape} is not a batch of {spec!r}")
    return shape[: len(shape) - k]


register_native(td.TensorSpec, from_torchrl, _is_member, to_torchrl_value, _leading)
