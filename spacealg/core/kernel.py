"""The one array vocabulary of the batched rules: a :class:`Kernel` per backend, NumPy's here.

Every batched rule (a leaf's flattening in :mod:`spacealg.ops.flatten`, emulation's decoding
in :mod:`spacealg.emulation.codec`, masked draws in :mod:`spacealg.spaces.mask_blocks`, a
kind's own rules such as :mod:`spacealg.spaces.onehot`'s, the per-leaf rules of
:mod:`spacealg.backends`) is written once over a kernel ``k``:

* arrays: ``k.xp`` an array-API namespace; ``k.name`` (``"numpy"``, ``"torch"``, ``"jax"``),
  ``k.device``, ``k.traced`` (values cannot be read: under ``jax.jit``, torch's meta tensors);
* dtypes: ``k.dtype(d)`` the library's dtype for NumPy dtype ``d``, ``k.native(model, d)``
  the same for a leaf's values (within its bounds, by the backend's policy),
  ``k.widest_int()``/``k.widest_float()``, ``k.kind(x)`` (``"b"``, ``"i"``, ``"f"``);
* constants: ``k.constant(a, d)`` an array of ``a``'s values where the batch lives,
  ``k.const(model, tag, make, d)`` the same cached on a leaf model; ``k.zeros``, ``k.ones``;
* what the Array API lacks: ``k.onehot``, ``k.ordered(x)`` (an order-keeping view torch can
  compare), ``k.any_true(flags)`` (False for values that cannot be read);
* draws from the call's generator: ``k.below(widths, shape)`` integers ``0 <= k < widths``,
  ``k.uniform(shape)`` floats in ``[0, 1)``; ``k.spawn()`` a generator for another rule's draw.

NumPy's kernel is this module's :class:`Kernel` (:data:`NUMPY`, or :func:`numpy_kernel` with
a generator); torch's and JAX's subclass it in :mod:`spacealg.backends.kernel`, which
registers them (:func:`register_kernel`) so that :func:`kernel_for` finds them without the
core importing either library.

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

__all__ = ["NUMPY", "Kernel", "kernel_for", "numpy_kernel", "register_kernel"]


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
    traced = False
    #: whether the kernel's compiled variants run as one program (eager JAX; :meth:`compiled`)
    program = False
    device: Any = None

    def __init__(self, rng: Any = None) -> None:
        self.rng = rng

    # -- dtypes ----------------------------------------------------------------------------
    def dtype(self, dtype: Any) -> Any:
        """The backend's dtype for NumPy ``dtype``."""
        return np.dtype(dtype)

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


NUMPY = Kernel()
"""NumPy's kernel for rules that draw nothing."""


def numpy_kernel(rng: Any = None) -> Kernel:
    """NumPy's kernel drawing from ``rng`` (a ``numpy.random.Generator``, a seed, or None)."""
    return Kernel(rng)


#: backend -> its kernel for a call, ``make(probe, rng)``; registered by spacealg.backends
_KERNELS: dict[str, Callable[[Any, Any], Kernel]] = {}


def register_kernel(backend: str, make: Callable[[Any, Any], Kernel]) -> None:
    """``make(probe, rng)`` builds ``backend``'s kernel for a call whose batch (or generator)
    is ``probe`` and whose generator is ``rng`` (None for a batch operation)."""
    _KERNELS[backend] = make


def kernel_for(backend: str | None, probe: Any, rng: Any = None) -> Kernel:
    """The kernel for a call on ``backend``'s data (None or ``"numpy"``: NumPy's). Raises
    TypeError when the backend registered none."""
    if backend is None or backend == "numpy":
        return NUMPY if rng is None else Kernel(rng)
    make = _KERNELS.get(backend)
    if make is None:
        arrays.load_backend(backend)
        make = _KERNELS.get(backend)
        if make is None:
            raise TypeError(f"no array kernel for {backend} arrays is registered")
    return make(probe, rng)
