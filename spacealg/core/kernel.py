"""The one array vocabulary of the batched rules: a :class:`Kernel` per backend, NumPy's here.

Every batched rule (a leaf's flattening in :mod:`spacealg.ops.flatten`, emulation's decoding
in :mod:`spacealg.emulation.codec`, masked draws in :mod:`spacealg.spaces.mask_blocks`, a
kind's own rules such as :mod:`spacealg.spaces.onehot`'s, the per-leaf rules of
:mod:`spacealg.backends`) is written once over a kernel ``k``:

* arrays: ``k.xp`` an array-API namespace; ``k.name`` (``"numpy"``, ``"torch"``, ``"jax"``),
  ``k.device``, ``k.traced`` (values cannot be read: under ``jax.jit``, torch's meta tensors);
* dtypes: ``k.dtype(d)`` the library's dtype for NumPy dtype ``d``, ``k.native(model, d)``
  the same for a leaf's values (within its bounds, by the backend's policy),
  ``k.numpy_dtype(native)`` the way back, ``k.widest_int()``/``k.widest_float()``,
  ``k.kind(x)``/``k.kind_of(native)`` (``"b"``, ``"i"``, ``"f"``); ``k.module`` the library;
* constants: ``k.constant(a, d)`` an array of ``a``'s values where the batch lives,
  ``k.const(model, tag, make, d)`` the same cached on a leaf model; ``k.zeros``, ``k.ones``;
* what the Array API lacks: ``k.onehot``, ``k.ordered(x)`` (an order-keeping view torch can
  compare), ``k.any_true(flags)`` (False for values that cannot be read), ``k.clipper(d, lo,
  hi)``, ``k.words(rows, word)`` (bool rows read as integers), ``k.from_host(a)``, ``k.to_host(x)``;
* draws from the call's generator: ``k.below(widths, shape)`` integers ``0 <= k < widths``,
  ``k.uniform(shape)`` floats in ``[0, 1)``; ``k.spawn()`` a generator for another rule's draw.

NumPy's kernel is this module's :class:`Kernel` (:data:`NUMPY`, or :func:`numpy_kernel` with
a generator), the only one NumPy calls run on; torch's and JAX's subclass it in
:mod:`spacealg.backends.kernel`, which registers the class (:func:`register_kernel`) so that
:func:`kernel_class` and :func:`kernel_for` find it without the core importing either library.
A rule compiled per backend asks the backend's class for its kernel (``for_parts``,
``for_program``, ``on_device``) and for what its variants are keyed by (``key_of``).

Law: a rule called with NumPy's kernel on NumPy arrays gives what it gives on torch or JAX
arrays of the same values with their kernel, moved to NumPy (dtypes as each backend's
policy has them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spacealg.core import arrays
from spacealg.core.leaf import LeafModel

__all__ = ["NUMPY", "Kernel", "kernel_class", "kernel_for", "numpy_kernel", "register_kernel"]


class _NumpyArrays:
    """NumPy as an array-API namespace; the functions the hot rules call are NumPy's array
    methods (NumPy's module functions wrap them in Python: ``np.astype`` alone cost 1.3 us of
    the 1.7 us a 256-row Box(3) ``flatten_batch`` took). Any other name is NumPy's own."""

    @staticmethod
    def astype(x: np.ndarray, dtype: Any, copy: bool = True) -> np.ndarray:
        return x.astype(dtype, copy=copy)

    @staticmethod
    def reshape(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return x.reshape(shape)

    @staticmethod
    def round(x: np.ndarray) -> np.ndarray:
        return x.round()

    @staticmethod
    def clip(x: np.ndarray, low: Any, high: Any) -> np.ndarray:
        return x.clip(low, high)

    @staticmethod
    def argmax(x: np.ndarray, axis: int | None = None) -> Any:
        return x.argmax(axis)

    @staticmethod
    def any(x: np.ndarray, axis: int | None = None) -> Any:
        return x.any(axis)

    @staticmethod
    def all(x: np.ndarray, axis: int | None = None) -> Any:
        return x.all(axis)

    concat = staticmethod(np.concatenate)

    def __getattr__(self, name: str) -> Any:
        value = getattr(np, name)
        setattr(self, name, value)  # found once, then an attribute
        return value


_INT64 = np.dtype(np.int64)
_FLOAT64 = np.dtype(np.float64)
_XP = _NumpyArrays()


class Kernel:
    """One backend's arrays as the rules see them (see the module); this class is NumPy's."""

    name = "numpy"
    xp: Any = _XP
    module: Any = np
    traced = False
    #: whether the kernel's compiled variants run as one program (eager JAX; :meth:`compiled`)
    program = False
    #: whether operations are queued (a GPU runs them while the host goes on), not run at once
    queued = False
    #: whether an array can be read as another dtype in place (:meth:`words`)
    views = True
    device: Any = None

    def __init__(self, rng: Any = None) -> None:
        self.rng = rng

    # -- the kernel of a call (a backend's class answers for its arrays) -------------------
    @classmethod
    def for_call(cls, name: str, probe: Any, rng: Any = None) -> Kernel:
        """The kernel of a call whose batch (or generator) is ``probe``, drawing from ``rng``."""
        return NUMPY if rng is None else cls(rng)

    @classmethod
    def for_parts(cls, name: str, parts: tuple[Any, ...]) -> Kernel:
        """The kernel of a batch's leaf arrays ``parts``."""
        return NUMPY

    @classmethod
    def for_program(cls, name: str, parts: tuple[Any, ...]) -> Kernel:
        """:meth:`for_parts`, as one compiled program where the backend runs one (:meth:`compiled`)."""
        return NUMPY

    @classmethod
    def on_device(cls, name: str, device: Any) -> Kernel:
        """The kernel of draws on ``device`` (a generator's adapter draws; the kernel builds constants)."""
        return NUMPY

    @staticmethod
    def key_of(name: str, parts: tuple[Any, ...]) -> tuple[Any, ...]:
        """What a compiled plan variant for ``parts`` depends on besides the space and the dtypes."""
        return _KEY

    # -- dtypes ----------------------------------------------------------------------------
    def dtype(self, dtype: Any, low: Any = None, high: Any = None, what: Any = None) -> Any:
        """The backend's dtype for NumPy ``dtype`` holding values within ``low..high`` (None: any);
        ``what`` is named where the backend has none."""
        return np.dtype(dtype)

    def numpy_dtype(self, native: Any) -> np.dtype:
        """The NumPy dtype of the backend's dtype ``native``."""
        return np.dtype(native)

    def native(self, model: LeafModel | None, dtype: Any = None) -> Any:
        """The native dtype of ``model``'s values (or of NumPy ``dtype`` for them)."""
        return dtype if dtype is not None or model is None else model.value_dtype  # NumPy takes it as it is

    def widest_int(self) -> Any:
        return _INT64

    def widest_float(self) -> Any:
        return _FLOAT64

    def kind(self, x: Any) -> str:
        """``"b"``, ``"i"`` (signed or unsigned integers), ``"f"`` or ``"c"``/other."""
        kind = x.dtype.kind
        return "i" if kind in "iu" else kind

    def kind_of(self, dtype: Any) -> str:
        """:meth:`kind` of an array of native ``dtype``."""
        kind = np.dtype(dtype).kind
        return "i" if kind in "iu" else "f" if kind == "f" else "b" if kind == "b" else "c"

    # -- constants -------------------------------------------------------------------------
    def constant(self, array: Any, dtype: Any = None) -> Any:
        """An array of ``array``'s values (NumPy ``dtype``, or its own) on :attr:`device`."""
        return np.asarray(array, dtype=dtype)

    def const(self, model: LeafModel, tag: Any, make: Callable[[], Any], dtype: Any) -> Any:
        """An array of ``make()`` in native ``dtype`` on this device (cached on ``model`` where
        building it costs a copy: not on NumPy)."""
        return np.asarray(make(), dtype)

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return np.zeros(shape, dtype)

    def ones(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return np.ones(shape, dtype)

    def all_of(self, answers: list[Any], described: Any, fresh: bool = False) -> Any:
        """The ``&`` of a product's component answers (bool arrays of this backend), broadcast
        as NumPy broadcasts: an answer of one row (or a 0-d one: one member) stands for every row.
        ``True`` (0-d) for no answers; ValueError naming ``described`` where they do not broadcast.
        ``fresh``: the answers are the caller's own, so answers of one shape are and-ed into the
        first in place (a new array on JAX, whose arrays are immutable)."""
        if not answers:
            return self.ones((), self.dtype(np.dtype(bool)))
        inside = answers[0]
        for answer in answers[1:]:
            if answer.shape != inside.shape:  # the broadcast check only here
                try:
                    np.broadcast_shapes(tuple(inside.shape), tuple(answer.shape))
                except ValueError:
                    why = f"isin: the component batches of {described} have different batch shapes"
                    raise ValueError(why) from None
                inside = inside & answer
            elif fresh:
                inside &= answer
            else:
                inside = inside & answer
        return inside

    # -- what the Array API lacks ------------------------------------------------------------
    def onehot(self, positions: Any, dim: int, dtype: Any) -> Any:
        """``(n, dim)`` zeros with a 1 at each row's ``positions`` (``(n, k)`` int array)."""
        out = np.zeros((positions.shape[0], dim), dtype=dtype)
        np.put_along_axis(out, positions, 1, axis=1)
        return out

    def ordered(self, x: Any) -> Any:
        """``x``, or an array ordered as ``x`` in a dtype the backend compares (``argmax``, ``<``)."""
        return x

    def clipper(self, dtype: Any, low: Any, high: Any) -> Callable[[Any], Any]:
        """``clip(x)``: ``x`` (of native ``dtype``) clipped to ``low..high``, into a new array."""
        return lambda x: x.clip(low, high)

    def every(self, width: int) -> Callable[[Any], Any]:
        """``reduce(rows)``: whether every entry of each row of the bool ``rows`` ``(*lead, width)``
        is True (``xp.all(rows, axis=-1)``), decided once per backend and width.

        Where the kernel has :attr:`views`, short rows are read as words (int64, int32 or int16:
        up to eight entries per compare) and-ed together, and rows of a few entries entry by
        entry: NumPy's and torch's per-row reductions are several times slower for short rows.
        """
        key = (self.name, width)
        reduce = _EVERY.get(key)
        if reduce is None:
            reduce = _EVERY[key] = self._every(width)
        return reduce

    def _every(self, width: int) -> Callable[[Any], Any]:
        xp = self.xp
        size = next((s for s in (8, 4, 2) if width % s == 0), 0) if width else 0
        if self.views and size and width // size <= (64 if size == 8 else 8):
            module = self.module
            word, ones = {8: (module.int64, 0x0101010101010101), 4: (module.int32, 0x01010101),
                          2: (module.int16, 0x0101)}[size]
            count, words = width // size, self.words

            def by_words(rows: Any) -> Any:
                w = words(rows, word)
                if w is None:
                    return xp.all(rows, axis=-1)
                if count == 1:
                    return w[..., 0] == ones
                acc = w[..., 0] & w[..., 1]
                for j in range(2, count):
                    acc &= w[..., j]
                return acc == ones

            return by_words
        if self.views and 0 < width < 8:  # a few entries: one & per entry

            def by_entries(rows: Any) -> Any:
                result = rows[..., 0]
                for j in range(1, width):
                    result = result & rows[..., j]
                return result

            return by_entries
        return lambda rows: xp.all(rows, axis=-1)

    @staticmethod
    def words(rows: Any, word: Any) -> Any:
        """The bool ``rows`` (last axis a multiple of ``word``'s size) read as ``word`` integers
        (every 8-bit entry one byte of a word), or None where they are not contiguous
        (a kernel without :attr:`views` has none)."""
        return rows.view(word) if rows.flags.c_contiguous else None

    def from_host(self, array: np.ndarray) -> Any:
        """A native array of the NumPy ``array``'s values (its memory where the library can share it)."""
        return array

    def to_host(self, x: Any) -> np.ndarray:
        """The NumPy array of the native array ``x``'s values (law: ``to_host(from_host(a)) == a``)."""
        return np.asarray(x)

    def is_traced(self, x: Any) -> bool:
        """Whether ``x`` is abstract (a JAX tracer, a meta tensor): no value to read."""
        return False

    def any_true(self, flags: Any) -> bool:
        """Whether any entry is True; False where values cannot be read (:attr:`traced`)."""
        return bool(flags.any())

    def compiled(self, run: Callable[..., Any]) -> Callable[..., Any]:
        """``run``, as one compiled program where the backend runs one (:attr:`program`)."""
        return run

    # -- draws -----------------------------------------------------------------------------
    def below(self, widths: Any, shape: tuple[int, ...]) -> Any:
        """int64 integers ``0 <= k < widths`` (broadcast to ``shape``) from the call's generator."""
        return self._generator().integers(0, np.asarray(widths, dtype=np.int64), size=shape, dtype=np.int64)

    def uniform(self, shape: tuple[int, ...]) -> Any:
        """Floats uniform on ``[0, 1)`` of ``shape``, in the widest float dtype, from the call's generator."""
        return self._generator().random(shape)

    def spawn(self) -> Any:
        """A generator for a further draw (another rule's, through the protocol) independent of
        this kernel's own: a NumPy or torch generator is itself (its state advances), a JAX key
        is split."""
        return self._generator()

    def _generator(self) -> np.random.Generator:
        return self.rng if isinstance(self.rng, np.random.Generator) else np.random.default_rng(self.rng)


_KEY = ("numpy",)
# (backend, row width) -> its row reduction; kept beside the plans (core/cache.py) because widths, not
# spaces, key it: a few entries, 0.15 us a lookup against 1.6 us to build the reduction per call
_EVERY: dict[tuple[str, int], Callable[[Any], Any]] = {}
NUMPY = Kernel()
"""NumPy's kernel for rules that draw nothing."""


def numpy_kernel(rng: Any = None) -> Kernel:
    """NumPy's kernel drawing from ``rng`` (a ``numpy.random.Generator``, a seed, or None)."""
    return Kernel(rng)


#: backend -> its kernel class; torch's and JAX's registered by spacealg.backends
_KERNELS: dict[str, type[Kernel]] = {"numpy": Kernel}


def register_kernel(backend: str, cls: type[Kernel]) -> None:
    """``cls`` is ``backend``'s kernel class: its classmethods build the kernel of a call."""
    _KERNELS[backend] = cls


def kernel_class(backend: str | None) -> type[Kernel]:
    """The kernel class of ``backend``'s data (None: NumPy's, :class:`Kernel`). Raises
    TypeError when the backend registered none."""
    try:
        return _KERNELS[backend or "numpy"]
    except KeyError:
        arrays.load_backend(backend)  # type: ignore[arg-type]
        try:
            return _KERNELS[backend]  # type: ignore[index]
        except KeyError:
            raise TypeError(f"no array kernel for {backend} arrays is registered") from None


def kernel_for(backend: str | None, probe: Any, rng: Any = None) -> Kernel:
    """The kernel for a call on ``backend``'s data (None or ``"numpy"``: NumPy's) whose batch
    (or generator) is ``probe`` and whose generator is ``rng`` (None for a batch operation).
    Raises TypeError when the backend registered none."""
    return kernel_class(backend).for_call(backend or "numpy", probe, rng)
