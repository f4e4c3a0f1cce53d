"""PufferLib's trainer path on device: flat emulated rows <-> structured batches of tensors.

A trainer receives observations as one ``(n, width)`` tensor of the emulated dtype (or its
bytes) and needs the structured dict/tuple of per-leaf tensors; its policy emits one for
actions. :func:`nativize_tensor` and :func:`emulate_tensor` (and a
:class:`~spacealg.emulation.Codec`'s ``nativize_batch``/``emulate_batch`` given a torch or
JAX buffer) do this with the codec's layout:

* a field stored in the row's own dtype is a *view* of the row tensor (a slice, reshaped);
  a field of another dtype inside byte rows is a view too on torch (``Tensor.view(dtype)``
  reinterprets the bytes, as ``pufferlib.pytorch.nativize_tensor``); JAX arrays are values,
  so there every field is a slice (fused away under ``jax.jit``).
* fields whose stored values need decoding copy: discrete values held in float actions
  (rounded, clipped), a leaf stored in another dtype, finite sets of numbers (stored as
  their index; labels have no tensor form: TypeError naming the leaf).

Laws: ``nativize_tensor(emulate_tensor(xs, s), s) == xs``; both equal the NumPy codec's
``nativize_batch``/``emulate_batch`` value for value after moving to NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spacealg.backends.arrays import backend_name
from spacealg.backends.kernel import BackendKernel
from spacealg.core.arrays import first_leaf
from spacealg.core.leaf import Form
from spacealg.emulation.codec import codec_for

__all__ = ["emulate_batch_on", "emulate_tensor", "nativize_batch_on", "nativize_tensor"]


def nativize_tensor(buf: Any, space: Any, role: str = "observation", copy: bool = False) -> Any:
    """The structured batch stored in the rows of the torch/JAX array ``buf``.

    ``buf`` is ``(n, width)`` of the emulated dtype, ``(n, itemsize)`` bytes, or (for a space
    kept as is) ``(n, *shape)``. Fields are views of ``buf`` where a view suffices (torch),
    unless ``copy``.
    """
    return nativize_batch_on(_name(buf, "nativize_tensor"), codec_for(space, role), buf, copy)


def emulate_tensor(xs: Any, space: Any, role: str = "observation", out: Any = None) -> Any:
    """The ``(n, width)`` rows holding the torch/JAX batch ``xs`` (written into ``out`` if given)."""
    codec = codec_for(space, role)
    name = _name(first_leaf(xs), "emulate_tensor")
    if out is None:
        return _emulate_new(name, codec, xs)
    return emulate_batch_on(name, codec, out, xs)


def _name(x: Any, what: str) -> str:
    name = backend_name(x)
    if name is None:
        raise TypeError(f"{what}: expected a torch tensor or a JAX array, got {type(x).__qualname__}")
    return name


# -- field access ---------------------------------------------------------------------------


def _rows(k: BackendKernel, codec: Any, buf: Any) -> Any:
    """``buf`` as ``(n, width)`` rows of the flat dtype (a view)."""
    if len(buf.shape) < 1:
        raise ValueError("emulation: expected a buffer of rows, (n, width)")
    n = int(buf.shape[0])
    flat = k.backend.dtype(codec.flat_dtype, None, None, codec.space)
    rows = k.xp.reshape(buf, (n, -1)) if len(buf.shape) != 2 else buf
    if rows.dtype != flat:
        if k.kind(rows) in "if" and codec.uniform and int(rows.shape[1]) == codec.width:
            return k.xp.astype(rows, flat)  # e.g. int32 actions for int64 fields: a cast, as on NumPy
        raise ValueError(f"emulation: expected a buffer of {codec.flat_dtype} rows, got {rows.dtype}")
    if int(rows.shape[1]) != codec.width:
        raise ValueError(f"emulation: expected rows of {codec.width} entries, got shape {tuple(buf.shape)}")
    return rows


def _field_view(k: BackendKernel, field: Any, rows: Any) -> Any:
    """The ``(n, *shape)`` stored values of ``field`` (a view on torch)."""
    n = int(rows.shape[0])
    if field.uniform:
        part = rows[:, field.start : field.start + field.size]
    else:
        stored = k.backend.dtype(field.dtype, None, None, field.path)
        part = rows[:, field.offset : field.offset + field.nbytes]
        if k.name == "torch":
            part = part.view(stored)
        else:
            part = _jax_from_bytes(k, field, part.reshape(n, field.size, field.dtype.itemsize), stored)
    return k.xp.reshape(part, (n, *field.shape))


def _narrowed(k: BackendKernel, field: Any, stored: Any) -> bool:
    """Whether JAX holds this 8-byte field in 4 bytes (no x64); floats cannot be narrowed."""
    narrowed = np.dtype(stored).itemsize < field.dtype.itemsize
    if narrowed and field.dtype.kind == "f":
        raise ValueError(f"jax: {field.path} is stored as {field.dtype}, which JAX has only with x64 enabled")
    return narrowed


def _jax_from_bytes(k: BackendKernel, field: Any, raw: Any, stored: Any) -> Any:
    """``(n, size, itemsize)`` bytes as values: an 8-byte integer's low word where JAX lacks x64."""
    import jax

    if _narrowed(k, field, stored):
        raw = raw[..., : np.dtype(stored).itemsize]  # little-endian: the low word holds the value
    if np.dtype(stored) == np.bool_:  # no bitcast to bool: its byte is 0 or 1, as NumPy stores it
        return raw[..., 0] != 0
    return jax.lax.bitcast_convert_type(raw, stored)


def _jax_to_bytes(k: BackendKernel, field: Any, value: Any) -> Any:
    """The little-endian bytes of ``value`` as the field's dtype (sign-extended when narrowed)."""
    import jax

    jnp = k.backend.module
    if value.dtype == jnp.bool_:  # no bitcast from bool: its byte is 0 or 1, as NumPy stores it
        return jnp.astype(value, jnp.uint8)[..., None]
    raw = jax.lax.bitcast_convert_type(value, jnp.uint8)
    if _narrowed(k, field, value.dtype):
        width = field.dtype.itemsize - np.dtype(value.dtype).itemsize
        sign = jnp.where(value < 0, jnp.uint8(255), jnp.uint8(0))[..., None]
        raw = jnp.concatenate([raw, jnp.broadcast_to(sign, (*value.shape, width))], axis=-1)
    return raw


def _decode(k: BackendKernel, field: Any, stored: Any, copy: bool) -> Any:
    """The field's values from its stored ones: the codec's own rule (``Field.decode``)."""
    if field.decodes or stored.dtype != k.native(field.leaf, field.value_dtype):
        return field.decode(stored, k)
    if copy:
        return stored.clone() if k.name == "torch" else stored
    return stored


def nativize_batch_on(name: str, codec: Any, buf: Any, copy: bool = False) -> Any:
    """The codec's ``nativize_batch`` for a torch/JAX buffer."""
    k = BackendKernel.for_array(name, buf)
    rows = _rows(k, codec, buf)
    return codec.assemble([_decode(k, f, _field_view(k, f, rows), copy) for f in codec.fields])


# -- writing ----------------------------------------------------------------------------------


def _encode(k: BackendKernel, field: Any, value: Any, n: int, stored: Any) -> Any:
    """The stored form ``(n, *shape)`` of the leaf batch ``value`` in native dtype ``stored``."""
    xp = k.xp
    if backend_name(value) != k.name:
        raise TypeError(f"emulation: {field.path} is a {type(value).__qualname__}, expected a {k.name} array")
    if field.form in (Form.LABEL, Form.LABELS):
        items = field.numeric_items()
        floating = k.kind(value) == "f" or items.dtype.kind == "f"
        work = k.widest_float() if floating else k.widest_int()
        hits = xp.astype(value, work)[..., None] == k.backend.constant(items, work, k.device)
        if k.any_true(~xp.any(hits, axis=-1)):
            raise ValueError(f"emulate: a value is not a member of {field.path} = {field.leaf.space!r}")
        value = xp.argmax(xp.astype(hits, k.backend.dtype(np.dtype(np.int8))), axis=-1)
    return xp.reshape(xp.astype(value, stored), (n, *field.shape))


def emulate_batch_on(name: str, codec: Any, buf: Any, xs: Any) -> Any:
    """The codec's ``emulate_batch`` into a torch buffer (JAX arrays are immutable: TypeError)."""
    if name != "torch":
        raise TypeError("emulate_batch: JAX arrays are immutable; use emulate_tensor(xs, space), "
                        "which returns the rows")
    k = BackendKernel.for_array(name, buf)
    rows = _rows(k, codec, buf)
    if rows.data_ptr() != buf.data_ptr() or rows.dtype != buf.dtype:
        raise ValueError("emulate_batch: the buffer must be contiguous rows of the emulated dtype")
    n = int(rows.shape[0])
    for field, value in zip(codec.fields, codec.parts(xs, "emulate_batch")):
        view = _field_view(k, field, rows)
        view.copy_(_encode(k, field, value, n, view.dtype))
    return buf


def _emulate_new(name: str, codec: Any, xs: Any) -> Any:
    """New rows holding ``xs``, of the shape of NumPy's ``codec.new_buffer(n)``: ``(n, width)``,
    or ``(n, *shape)`` for a space kept as is (``(n,)`` for a scalar Box)."""
    first = first_leaf(xs)
    k = BackendKernel.for_array(name, first)
    n = int(first.shape[0]) if len(first.shape) else 1
    flat = k.backend.dtype(codec.flat_dtype, None, None, codec.space)
    shape = codec.new_buffer(0).shape[1:]
    if name == "torch":
        out = k.backend.module.zeros((n, *shape), dtype=flat, device=k.device)
        return emulate_batch_on(name, codec, out, xs)
    return k.backend.module.reshape(_jax_rows(k, codec, xs, n, flat), (n, *shape))


def _jax_rows(k: BackendKernel, codec: Any, xs: Any, n: int, flat: Any) -> Any:
    """``(n, width)`` JAX rows holding ``xs``, assembled field by field (JAX arrays are immutable)."""
    jnp = k.backend.module
    pieces, at = [], 0
    for field, value in zip(codec.fields, codec.parts(xs, "emulate_tensor")):  # in storage order
        stored = k.backend.dtype(field.dtype, None, None, field.path)  # pad the gaps, then the field's
        value = _encode(k, field, value, n, stored)
        if field.uniform:
            start, piece = field.start, jnp.reshape(value, (n, field.size))
        else:
            start = field.offset
            piece = jnp.reshape(_jax_to_bytes(k, field, value), (n, field.nbytes))
        if start > at:
            pieces.append(jnp.zeros((n, start - at), flat))
        pieces.append(piece)
        at = start + int(piece.shape[1])
    if at < codec.width:
        pieces.append(jnp.zeros((n, codec.width - at), flat))
    return jnp.concatenate(pieces, axis=1) if len(pieces) > 1 else pieces[0]

