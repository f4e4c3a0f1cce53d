"""The batched rules: every batched operation on torch (CPU and CUDA) and JAX arrays, and
``isin``/``sample``/``clamp``/``clamp_`` of the leaf kinds on NumPy (:mod:`~spacealg.backends.host`):
one rule per leaf kind, three backends.

The data decides the backend. ``sample(space, size, rng=g)`` gives NumPy arrays for ``g``
None, an int or a ``numpy.random.Generator``; torch tensors on ``g.device`` for a
``torch.Generator``; JAX arrays for a JAX PRNG key (``jax.random.key(k)`` or
``jax.random.PRNGKey(k)``). ``isin``, ``clamp``, ``clamp_``, ``flatten_batch``,
``unflatten_batch`` and the emulation codec's ``emulate_batch``/``nativize_batch`` take
batches of any backend and answer in that backend, on that device.

The core knows none of this package: loading it registers torch's and JAX's package names
with the core's recogniser (:func:`spacealg.core.arrays.backend_name`: types are recognised
by their package's name, so neither library is imported until one of its objects arrives)
and a loader that, at the first torch/JAX call, imports the operations' modules and
registers each one's implementation for its generic function
(:func:`spacealg.core.arrays.register_backend`: ``sample``, ``isin``, ``clamp``, ``clamp_``,
``sample(mask=...)``, ``flatten_batch``, ``unflatten_batch`` and the emulation codec's batch
methods). One module per operation, each written once against
the leaf model (:mod:`spacealg.core.leaf`, the per-kind table) and the per-space plan
(:mod:`spacealg.core.plan`, which walks products into trees of leaf models):

==================  ==================================================================
module              operation
==================  ==================================================================
``arrays``          backends, their dtype policy, ``to_numpy``
``rng``             one RNG adapter per backend (torch Generator, JAX key splitting)
``leaves``          a batch's first leaf array
``kernel``          torch's and JAX's kernels: the rules' one array vocabulary
``shapes``          a batch's leaf dtypes and shapes, checked
``ends``            a leaf's ends as the nearest floats of a batch's dtype
``integers``        integer batches compared and clipped exactly in their own dtype
``sets``            batches meeting a set's items that their dtype holds exactly
``sample``          ``sample``
``isin``            ``isin``
``clamp``           ``clamp``, ``clamp_``
``flatten``         ``flatten_batch``, ``unflatten_batch``
``masked``          ``Masked``'s rules; ``sample`` with ``mask=``/``probability=``
``parts``           the rules of ``TupleProduct``, ``DictProduct`` and ``ArraySpace``: their
                    compiled plan, or part by part where a leaf has rules of its own
``emulation``       ``nativize_tensor``, ``emulate_tensor`` and the codec's batch operations
``operations``      the table: which function of each module serves which generic function
                    for a space whose kind has no rule of its own
``host``            the kind rules of ``Box``, ``Interval``, ``Categorical``, ``FiniteSet`` and
                    ``range`` (their plans on every backend) and their NumPy entries (registered
                    for those kinds at load, the rules imported at the first call)
==================  ==================================================================

See docs/backends.md for the laws, the dtype policy and measured speed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from spacealg.backends.arrays import BACKEND_ROOTS, RNG_FORMS, backend_name, backend_of, is_backend_array, to_numpy
from spacealg.core.arrays import register_array_root, register_backend_loader, register_kind_rule
from spacealg.core.rng import register_rng_form

__all__ = [
    "backend_name",
    "backend_of",
    "emulate_tensor",
    "is_backend_array",
    "nativize_tensor",
    "to_numpy",
]


def _register_operations() -> None:
    """Load :mod:`spacealg.backends.operations`, whose import registers every operation for
    torch and JAX. Run by the core at the first torch/JAX call
    (:func:`~spacealg.core.arrays.register_backend_loader`): the operations load the leaf
    tables, plans and codecs, which ``import spacealg`` never needs."""
    from spacealg.backends import kernel, operations  # noqa: F401


for _root, _name in BACKEND_ROOTS.items():
    register_array_root(_root, _name)
    register_backend_loader(_name, _register_operations)
for _name, _form in RNG_FORMS.items():
    register_rng_form(_name, _form)


def _first_call(module: str, operation: str, cls: type, entry: bool) -> Any:
    """What answers ``operation`` for spaces of class ``cls`` until the first call: it loads
    the module of this package holding the kind's rules (with the plans and leaf tables,
    which ``import spacealg`` does not load), which registers them in its place (``host``: its
    import; the others: here), and runs the rule (``entry`` False) or NumPy's entry."""

    def first_call(*args: Any, **kwargs: Any) -> Any:
        loaded = importlib.import_module(f"spacealg.backends.{module}")
        if module != "host":
            for kind in _kinds()[module]:
                for name, rule in loaded.RULES.items():
                    register_kind_rule(name, kind, rule)
        answer: Callable[..., Any] = loaded.ENTRIES[cls][operation] if entry else loaded.RULES[operation]
        return answer(*args, **kwargs)

    return first_call


def _kinds() -> dict[str, tuple[type, ...]]:
    """module of this package -> the kinds whose batched rules it holds (its ``RULES``; ``host``
    with NumPy's ``ENTRIES``: the other kinds' NumPy rules are their own)."""
    from spacealg.spaces.array import ArraySpace
    from spacealg.spaces.box import Box
    from spacealg.spaces.categorical import Categorical
    from spacealg.spaces.finite import FiniteSet
    from spacealg.spaces.interval import Interval
    from spacealg.spaces.masked import Masked
    from spacealg.spaces.product import DictProduct, TupleProduct

    return {"host": (Box, Interval, Categorical, FiniteSet, range), "masked": (Masked,),
            "parts": (TupleProduct, DictProduct, ArraySpace)}


def _register_rules() -> None:
    """The batched rules of the kinds whose rules this package holds, registered with the core
    for each kind, as any kind registers its own (:func:`spacealg.core.arrays.register_kind_rule`)."""
    operations = {"host": _OWN, "masked": _OWN, "parts": (*_OWN, "flatten_batch", "unflatten_batch")}
    for module, kinds in _kinds().items():
        for cls in kinds:
            for operation in operations[module]:
                register_kind_rule(operation, cls, _first_call(module, operation, cls, False),
                                   numpy=_first_call(module, operation, cls, True) if module == "host" else None)


_OWN = ("isin", "sample", "clamp", "clamp_")
_register_rules()


def __getattr__(name: str) -> Any:
    # the emulation helpers load the emulation package, which ``import spacealg`` does not
    if name in ("emulate_tensor", "nativize_tensor"):
        from spacealg.backends import emulation

        return getattr(emulation, name)
    raise AttributeError(f"module 'spacealg.backends' has no attribute {name!r}")
