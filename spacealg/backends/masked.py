"""Masked sampling on torch and JAX: ``sample(space, size, mask=..., rng=g)`` with a
``torch.Generator`` or a JAX key draws on that backend and device.

The same algorithm as NumPy's (:func:`spacealg.spaces.masked.choose`), in the backend's
array namespace: per block of factors, a cumulative sum of the row's mask (int32 counts)
or weights (floats), one uniform number per row from the generator, and an ``argmax`` of
the first cumulative count above it; the digits then become values through the backends'
leaf table (``low + step * digit`` for integers, ``values[digit]`` for sets). Masks may be
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

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from spacealg.backends.arrays import backend_name, backend_named, to_numpy
from spacealg.backends.kernel import Kernel
from spacealg.backends.leaves import map_tree, tree_for
from spacealg.backends.rng import rng_adapter
from spacealg.core.generic import as_space
from spacealg.core.leaf import Members
from spacealg.core.protocol import isin
from spacealg.spaces._batch import normalize_size
from spacealg.spaces.mask_blocks import _rescaled, combine, is_foreign_array
from spacealg.spaces.masked import Block, Masked, MaskError, factors, host_blocks, parse_blocks

__all__ = ["masked_on_backend", "sample_masked_on"]


def sample_masked_on(name: str, space: Any, size: Any, mask: Any, probability: Any, rng: Any) -> Any:
    """The masked batch of ``space`` drawn with the torch generator or JAX key ``rng``."""
    adapter = rng_adapter(rng, name)
    k = Kernel(adapter.backend, adapter.device, rng)
    base = as_space(space)
    inherited: list[Block] = []
    if isinstance(base, Masked):
        if base.is_empty:
            raise MaskError(f"sample: {base!r} is empty (the mask allows no element)")
        inherited = [(b.ndim, b) for b in base.blocks]
        base = base.root
    f = factors(base)
    given = [parse_blocks(mask, f, "mask")] if mask is not None else []
    given += [parse_blocks(probability, f, "probability")] if probability is not None else []
    parts = [p for p in ([inherited] if inherited else []) + given if p]
    if parts and not any(is_foreign_array(a) for p in parts for _, a in p):
        # all on the host: combined there in float64, each product row rescaled (as NumPy's
        # path does), so that neither 1e308 nor subnormal weights reach the device unscaled
        host = parts[0]
        for other in parts[1:]:
            host = combine(host, other, f.sizes)
        merged = _on_backend(k, [(w, _rescale_row(a, w)) for w, a in host], name)
    elif parts:
        merged = _combine_all(k, [_on_backend(k, p, name) for p in parts], f.sizes)
    else:
        merged = [(1, None)] * len(f.sizes)
    batch = _batch(merged)
    if size is None and batch:
        size = batch
    shape = normalize_size(size)
    if batch and batch != shape:
        raise MaskError(f"sample: a batch of masks of shape {batch} needs size={batch}, got size={size!r}")
    digits = _draw(k, adapter, merged, f.sizes, shape)
    return _values(k, base, name, digits, shape)


def _rescale_row(array: Any, width: int) -> Any:
    """Weights divided by each row's largest (bool masks unchanged)."""
    if array is None or array.dtype == bool:
        return array
    return _rescaled(array, width)


def _on_backend(k: Any, blocks: Sequence[Block], name: str) -> list[Block]:
    """The blocks as arrays of backend ``name`` on the generator's device (masks already
    there stay there; NumPy ones, or another backend's, are copied over)."""
    out: list[Block] = []
    for width, array in blocks:
        if array is not None and backend_name(array) != name:
            host = host_blocks([(width, array)])[0][1]
            boolean = host.dtype == bool
            array = k.backend.constant(host, _native(k, boolean), k.device)
        out.append((width, array))
    return out


def _native(k: Any, boolean: bool) -> Any:
    return k.backend.dtype(np.dtype(bool if boolean else np.float64), None, None, "mask")


def _batch(blocks: list[Block]) -> tuple[int, ...]:
    shapes = {tuple(a.shape[: a.ndim - w]) for w, a in blocks if a is not None} - {()}
    if len(shapes) > 1:
        raise MaskError(f"mask: the parts have different batch shapes {sorted(shapes)}")
    return shapes.pop() if shapes else ()


def _combine_all(k: Any, parts: list[list[Block]], sizes: tuple[int, ...]) -> list[Block]:
    cuts = set.intersection(*(set(_cuts(p)) for p in parts))
    merged = [_coarsen(k, p, sorted(cuts), sizes) for p in parts]
    result: list[Block] = []
    for column in zip(*merged):
        width = column[0][0]
        arrays = [a for _, a in column if a is not None]
        if not arrays:
            result.append((width, None))
            continue
        acc = arrays[0]
        for other in arrays[1:]:
            if _is_bool(k, acc) and _is_bool(k, other):
                acc = acc & other
            else:  # a product of weights rescaled per row, as on NumPy
                acc = _rescaled(_float(k, acc) * _float(k, other), width)
        result.append((width, acc))
    return result


def _cuts(blocks: list[Block]) -> list[int]:
    total, cuts = 0, []
    for width, _ in blocks:
        total += width
        cuts.append(total)
    return cuts


def _coarsen(k: Any, blocks: list[Block], cuts: list[int], sizes: tuple[int, ...]) -> list[Block]:
    result: list[Block] = []
    pending: list[Block] = []
    position = 0
    for width, array in blocks:
        pending.append((width, array))
        position += width
        if position in cuts:
            start = position - sum(w for w, _ in pending)
            result.append(_outer_run(k, pending, sizes[start:position]))
            pending = []
    return result


def _outer_run(k: Any, run: list[Block], sizes: tuple[int, ...]) -> Block:
    total = sum(w for w, _ in run)
    if len(run) == 1 or all(a is None for _, a in run):
        return (total, run[0][1] if len(run) == 1 else None)
    acc: Any = None
    acc_width = 0
    start = 0
    for width, array in run:
        part = array if array is not None else k.ones(sizes[start : start + width], _native(k, True))
        start += width
        if acc is None:
            acc, acc_width = part, width
            continue
        left = k.xp.reshape(acc, tuple(acc.shape) + (1,) * width)
        lead = tuple(part.shape[: part.ndim - width])
        right = k.xp.reshape(part, lead + (1,) * acc_width + tuple(part.shape[part.ndim - width :]))
        acc_width += width
        if _is_bool(k, left) and _is_bool(k, right):
            acc = left & right
        else:
            acc = _rescaled(_float(k, left) * _float(k, right), acc_width)
    return (total, acc)


def _is_bool(k: Any, x: Any) -> bool:
    return k.kind(x) == "b"


def _float(k: Any, x: Any) -> Any:
    return k.xp.astype(x, k.widest_float())


def _draw(k: Any, rng: Any, blocks: list[Block], sizes: tuple[int, ...], shape: tuple[int, ...]) -> list[Any]:
    """Per-factor digit arrays of ``shape``, drawn block by block."""
    xp = k.xp
    rows = math.prod(shape)
    columns: list[Any] = []
    start = 0
    for width, array in blocks:
        block_sizes = sizes[start : start + width]
        start += width
        m = math.prod(block_sizes)
        if array is None:
            flat = rng.below(np.asarray(m), (rows,))
        else:
            weights = xp.reshape(array, (-1, m))
            if weights.shape[0] == 1 and rows != 1:
                weights = xp.broadcast_to(weights, (rows, m))
            flat = _choose(k, rng, weights)
        digits = []
        for n in reversed(block_sizes):  # unravel the block's flat index, last factor fastest
            digits.append(flat % n)
            flat = flat // n
        columns.extend(reversed(digits))
    return [xp.reshape(c, shape) for c in columns]


def _choose(k: Any, rng: Any, weights: Any) -> Any:
    xp = k.xp
    integral = _is_bool(k, weights)
    if integral:
        counts = k.backend.dtype(np.dtype(np.int32), None, None, "counts")
        cumulative = xp.cumulative_sum(xp.astype(weights, counts), axis=-1)
    else:  # rescaled per row: a product of rescaled weights may be tiny again
        cumulative = xp.cumulative_sum(_rescaled(_float(k, weights), 1), axis=-1)
    total = cumulative[:, -1]
    if k.any_true(~(total > 0)):
        raise MaskError("sample: the mask of a row allows no element")
    u = rng.uniform((weights.shape[0],), k.widest_float())
    if integral:
        threshold = xp.astype(xp.floor(u * xp.astype(total, k.widest_float())), cumulative.dtype)
        hit = cumulative > threshold[:, None]
    else:
        hit = cumulative > (u * total)[:, None]
    return xp.argmax(xp.astype(hit, k.backend.dtype(np.dtype(np.int8), None, None, "hit")), axis=-1)


def _values(k: Any, space: Any, name: str, digits: list[Any], shape: tuple[int, ...]) -> Any:
    tree = tree_for(space, name, "sample")
    columns = iter(digits)

    def leaf_values(leaf: Any) -> Any:
        xp = k.xp
        entries = [next(columns) for _ in range(leaf.size)]
        d = xp.stack(entries, axis=-1) if entries else k.zeros((*shape, 0), k.widest_int())
        d = xp.reshape(d, shape + leaf.shape)
        if leaf.members is Members.NUMBERS:
            values = k.const(leaf, "values", lambda: leaf.numbers, k.native(leaf))
            return values[d]
        if leaf.items is not None:  # a stepped range: the digit is the item's position
            items = k.const(leaf, "items", lambda: np.asarray(leaf.items, dtype=np.int64), k.native(leaf))
            return items[d]
        low = k.const(leaf, "low", lambda: leaf.value_low, k.widest_int())
        return xp.astype(low + leaf.step * xp.astype(d, k.widest_int()), k.native(leaf))

    return map_tree(leaf_values, tree)


def masked_on_backend(operation: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``sample``/``isin``/``clamp``/``clamp_`` of a space holding a mask on torch/JAX.

    ``sample`` draws on the backend: a ``Masked`` space by :func:`sample_masked_on`, a product
    or array space holding one part by part (:func:`_sample_holding`); ``isin``
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
        return backend.constant(inside, backend.dtype(np.dtype(bool)), backend.device(_first_leaf(batch)))
    if not inside.all():
        raise TypeError(
            f"{operation}: a masked space has no nearest-member rule ({space!r}) and the batch "
            "holds non-members; sample legal values with sample(space) or test them with isin"
        )
    if operation == "clamp":
        return _copy(batch)
    return batch


def _sample_holding(name: str, space: Any, size: Any, rng: Any) -> Any:
    """A batch of a space holding ``Masked`` parts, drawn on the backend of ``rng``: each
    ``Masked`` part by :func:`sample_masked_on`, every other part by the backend's ``sample``,
    a product part by part, an array space as ``size + dims`` draws of its entry. A JAX key
    is split into one key per part (no key is used twice); a torch generator advances."""
    from spacealg.core.protocol import sample
    from spacealg.spaces.array import ArraySpace
    from spacealg.spaces.masked import holds_masked
    from spacealg.spaces.product import DictProduct, TupleProduct

    if isinstance(space, Masked):
        return sample_masked_on(name, space, size, None, None, rng)
    if not holds_masked(space):
        return sample(space, size, rng=rng)
    if isinstance(space, ArraySpace):
        return _sample_holding(name, space.space, (*normalize_size(size), *space.dims), rng)
    parts = list(space._spaces.values()) if isinstance(space, DictProduct) else list(space._spaces)
    keys = _split(name, rng, len(parts))
    drawn = [_sample_holding(name, part, size, key) for part, key in zip(parts, keys)]
    if isinstance(space, DictProduct):
        return dict(zip(space._spaces, drawn))
    if isinstance(space, TupleProduct):
        return tuple(drawn)
    raise TypeError(f"sample: {space!r} holds a masked part in a form the {name} backend does not draw")


def _split(name: str, rng: Any, n: int) -> list[Any]:
    """``n`` generators for ``n`` parts: the torch generator itself, or ``n`` new JAX keys."""
    if name != "jax":
        return [rng] * n
    import jax

    return list(jax.random.split(rng, n)) if n else []


def _first_leaf(batch: Any) -> Any:
    if isinstance(batch, (tuple, list)):
        return _first_leaf(batch[0])
    if isinstance(batch, Mapping):
        return _first_leaf(next(iter(batch.values())))
    return batch


def _copy(batch: Any) -> Any:
    if isinstance(batch, tuple):
        return tuple(_copy(b) for b in batch)
    if isinstance(batch, Mapping):
        return {k: _copy(v) for k, v in batch.items()}
    return batch.clone() if hasattr(batch, "clone") else batch  # JAX arrays are immutable
