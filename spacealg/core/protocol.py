"""The space protocol: every generic function, declared once, with its laws.

Each function dispatches on the space's type (``issubspace`` and ``intersect`` on both
spaces). Implementations live beside each space's class in ``spacealg/spaces/<kind>.py``;
plain Python objects and Gymnasium/Gym spaces reach them through :func:`as_space`.

Batches. Where a function takes a batch, a batch of a space with array elements of shape
``elsize`` is an array of shape ``(*batch_shape, *elsize)``; a batch of a scalar space is
an array of shape ``batch_shape``; a batch of a product is the tuple (or dict) of its
components' batches; a batch of a space whose elements do not stack (OneOf, Sequence,
Graph, Text) is an object array of elements.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

from spacealg.core import hooks
from spacealg.core.arrays import backend_implementation, backend_name
from spacealg.core.generic import AdapterUnavailableError, GenericFunction, NotASpaceError, as_space, coerce, generic
from spacealg.core.plan import forget_routes, interned, kept_plan, route
from spacealg.core.rng import RngLike
from spacealg.core.styles import Style, UnknownSpaceStyle

__all__ = [
    "SpaceStyle",
    "as_space",
    "bounds",
    "cardinality",
    "check_position",
    "clamp",
    "clamp_",
    "contains",
    "element",
    "elements",
    "elsize",
    "eltype",
    "index",
    "intersect",
    "isin",
    "issubspace",
    "sample",
]


class _Routed(GenericFunction):
    """A generic function whose every call takes the space's one route
    (:func:`spacealg.core.plan.route`: chosen once per space and backend, kept in its plan).

    ``sample`` looks at the type of its ``rng``, the batch operations at the type of their
    batch (a tensor, a JAX array or tracer, or a tuple/dict of them: torch, JAX; anything
    else: NumPy). A plain ``dict``, ``list``, ``tuple`` or set standing for a space is made a
    space first (:func:`as_space`, by the declaration's fallback). On NumPy the function's
    guard answers for what the route raises, as for any generic function.
    """

    def __init__(self, declaration: Any, positions: tuple[int, ...], by_rng: bool, guard: Any = None) -> None:
        super().__init__(declaration, positions, guard)
        self.by_rng = by_rng

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        position = self.positions[0]
        if len(args) <= position or type(args[position]) in _PLAIN:
            return GenericFunction.__call__(self, *args, **kwargs)
        space = args[position]
        if type(space) is range:  # the one range of its value, whose plan is kept (core.plan.interned)
            space = interned(space)
            args = (*args[:position], space, *args[position + 1:])
        probe = kwargs.get("rng") if self.by_rng else args[0]
        name = None if probe is None else backend_name(probe)
        if name is not None:
            return route(self, name, space, args, kwargs)
        try:  # NumPy's: the kept route read here (the hot path: sample(Box(16)) is 3 us)
            plan = kept_plan(space)
            run = None if plan is None else plan.routes.get((self, "numpy"))
            if run is not None:
                return run(*args, **kwargs)
            return route(self, "numpy", space, args, kwargs)
        except NotASpaceError:
            raise
        except Exception as error:  # one rule for every implementation, as GenericFunction's
            if self.guard is None:
                raise
            return self.guard(error, args)

    def add(self, signature: Any, func: Any) -> None:
        """Registers ``func`` (multipledispatch's ``add``); the kept routes of the spaces it
        dispatches on are chosen again."""
        super().add(signature, func)
        forget_routes(signature[0] if signature else object)  # the one position a routed function dispatches on


#: the plain objects standing for spaces whose plans are not kept (a fresh object each call)
_PLAIN = frozenset({dict, list, tuple, set, frozenset})


def _routed(position: int, by_rng: bool = False, guard: Any = None) -> Any:
    """:func:`generic` for a protocol function that the array backends serve too."""

    def declare(declaration: Any) -> _Routed:
        function = _Routed(declaration, (position,), by_rng, guard)
        function.add((object,), declaration)
        return function

    return declare


def _not_a_member(error: Exception, args: tuple[Any, ...]) -> bool:
    if isinstance(error, AdapterUnavailableError):  # the space's adapter cannot load: say so
        raise error
    return False  # whatever x does (a raising __eq__, __hash__, __array__...), it is no member


def _not_a_batch(error: Exception, args: tuple[Any, ...]) -> Any:
    if isinstance(error, ValueError):
        raise error
    raise ValueError(
        f"isin: {type(args[0]).__qualname__} is not a batch of {args[1]!r} "
        f"({type(error).__name__}: {error})"
    ) from error


@generic(1, guard=_not_a_member)
def contains(x: Any, space: Any) -> bool:
    """Whether ``x`` is a member of ``space`` (also ``x in space``).

    Laws: never raises for any ``x`` (a wrongly typed value, or one whose ``__eq__``,
    ``__hash__``, ``__len__``, ``__iter__`` or ``__array__`` raises, is not a member: every
    implementation runs under one guard); TypeError only when ``space`` is not a space;
    ``contains(sample(space), space)``; ``contains(clamp(x, space), space)``.
    For a Gymnasium/Gym space ``g``, ``contains(x, g) == g.contains(x)``, which also checks
    the storage dtype: a float64 array within the bounds is in ``Box(0, 1, (2,))`` but not in
    the float32 ``gymnasium.spaces.Box(0, 1, (2,))``, though each is a subspace of the other.
    """
    return coerce(contains, (x, space), {})


def _sample(
    space: Any,
    size: int | tuple[int, ...] | None = None,
    *,
    rng: RngLike = None,
    mask: Any = None,
    probability: Any = None,
) -> Any:
    """A random element (``size=None``) or a stacked batch of shape ``size``.

    Laws: ``contains(sample(s), s)``; ``isin(sample(s, n), s).all()``; the same int
    ``rng`` gives the same result. Uniform on bounded and finite sets; on unbounded reals
    standard normal, on half-bounded reals a shifted exponential (Gymnasium's rule).
    Raises ValueError for an empty space. ``rng=None`` draws from the space's own
    generator where it has one (a Gymnasium/Gym space's ``np_random``, so ``g.seed(0)``
    makes ``sample(g)`` reproducible), else from spacealg's shared generator.

    ``mask=`` / ``probability=`` (see :mod:`spacealg.spaces.masked`): on a finite spacealg
    space, ``sample(s, size, mask=m) == sample(Masked(s, m), size)`` in law (every draw in
    ``Masked(s, m)``, uniform over it), and ``probability`` weights the draws; a mask with
    leading batch dimensions ``size`` gives one draw per row. On a Gymnasium space they
    are Gymnasium's own arguments, with its meaning and its errors for malformed masks.
    """
    return coerce(sample, (space, size), {"rng": rng})


class _Sample(_Routed):
    """``sample``'s dispatcher: ``mask=``/``probability=`` go to
    :data:`spacealg.core.hooks.sample_with_mask` (``spacealg.spaces.masked.sample_masked``,
    dispatched on the space in turn; a backend's own for a torch generator or JAX key), and
    ``rng=None`` becomes the space's own generator where its class has ``np_random``."""

    def __call__(  # type: ignore[override]
        self, *args: Any, rng: RngLike = None, mask: Any = None, probability: Any = None, **kwargs: Any
    ) -> Any:
        if rng is None and args and _has_own_generator(type(args[0])):
            rng = args[0].np_random
        if (mask is None and probability is None) or not args:  # not args: the positional-space error
            return _Routed.__call__(self, *args, rng=rng, **kwargs)
        space, size = args[0], (args[1] if len(args) > 1 else kwargs.pop("size", None))
        if len(args) > 2 or kwargs:
            raise TypeError(f"sample() got unexpected arguments {args[2:]} {list(kwargs)}")
        backend = backend_name(rng) if rng is not None else None
        if backend is not None:  # a torch generator or a JAX key: the masked draw on that backend
            return backend_implementation(hooks.sample_with_mask, backend)(space, size, mask, probability, rng=rng)
        return hooks.sample_with_mask(space, size, mask, probability, rng=rng)


_OWN_GENERATOR: dict[type, bool] = {}


def _has_own_generator(cls: type) -> bool:
    """Whether instances of ``cls`` carry their own ``np_random`` (Gymnasium and Gym spaces)."""
    try:
        return _OWN_GENERATOR[cls]
    except KeyError:
        found = isinstance(getattr(cls, "np_random", None), property)
        _OWN_GENERATOR[cls] = found
        return found


_sample.__name__ = _sample.__qualname__ = "sample"
sample = _Sample(_sample, (0,), by_rng=True)
sample.add((object,), _sample)


@_routed(1, guard=_not_a_batch)
def isin(batch: Any, space: Any) -> np.ndarray:
    """Vectorised membership: a bool array of the batch's shape (cf. ``numpy.isin``).

    Laws: ``isin(sample(s, n), s).all()``; ``isin(b, s)[i] == contains(b[i], s)``.
    Raises ValueError (only ValueError, whatever the implementation met) when ``batch`` is
    not shaped as a batch of ``space`` at all; TypeError when ``space`` is not a space.
    """
    return coerce(isin, (batch, space), {})


@generic(0)
def eltype(space: Any) -> Any:
    """The type of the elements (``float``, ``int``, ``str``, ``numpy.ndarray``, ``tuple[...]``, ``dict``).

    Law: ``isinstance(sample(s), typing.get_origin(eltype(s)) or eltype(s))``.
    """
    return coerce(eltype, (space,), {})


@generic(0)
def elsize(space: Any) -> Any:
    """The shape of array-valued elements; ``()`` for scalars.

    For products, the tuple (or dict) of the components' elsizes.
    Law: ``numpy.shape(sample(s)) == elsize(s)`` for array and scalar spaces.
    """
    return coerce(elsize, (space,), {})


@generic(0)
def SpaceStyle(space: Any) -> Style:
    """The trait: Finite, Continuous, Hybrid or Unknown, with shapes.

    Laws: the style follows the set (an integer Box is finite); products combine their
    components' styles by :func:`spacealg.core.styles.combine_styles`;
    ``cardinality(s) < inf`` iff the style is Finite. A space that registers no style of
    its own (Sequence, Graph, a user's type), and any object that is not a space at all, is
    ``UnknownSpaceStyle()``, as in Julia (``SpaceStyle(::Any)``); it never raises.
    """
    try:
        converted = as_space(space)
    except NotASpaceError:  # Julia's SpaceStyle(::Any): an object that is no space is Unknown
        return UnknownSpaceStyle()
    if converted is space:
        return UnknownSpaceStyle()
    return SpaceStyle(converted)


@generic(0)
def bounds(space: Any) -> tuple[Any, Any]:
    """``(low, high)``: the smallest box enclosing the space (continuous and numeric finite).

    Laws: every member ``x`` has ``low <= x <= high``; interval ends keep their type.
    Raises TypeError for a space without bounds (labels, OneOf, Sequence, ...).
    """
    return coerce(bounds, (space,), {})


@_routed(1)
def clamp(x: Any, space: Any) -> Any:
    """The member of ``space`` nearest to ``x``; works elementwise on batches.

    Laws: ``contains(clamp(x, s), s)`` for ``x`` of the element's shape; members are
    returned unchanged (equal in value); ``clamp`` is idempotent. Open ends clamp to the
    nearest representable float inside. Products clamp per component.
    """
    return coerce(clamp, (x, space), {})


@_routed(1)
def clamp_(x: Any, space: Any) -> Any:
    """In-place :func:`clamp` of a mutable array ``x`` (Julia's ``clamp!``); returns ``x``.

    Laws: ``clamp_(x.copy(), s) == clamp(x, s)``; raises TypeError if ``x`` is not a
    writable array (or a list/dict of them, for products).
    """
    return coerce(clamp_, (x, space), {})


@generic(0)
def cardinality(space: Any) -> int | float:
    """The number of elements: an int, or ``math.inf``.

    Laws: ``cardinality(product(a, b)) == cardinality(a) * cardinality(b)``;
    ``cardinality(OneOf(a, b)) == cardinality(a) + cardinality(b)``;
    ``len(list(elements(s))) == cardinality(s)`` for finite ``s``.
    """
    return coerce(cardinality, (space,), {})


@generic(0)
def elements(space: Any) -> Iterator[Any]:
    """Lazy iteration over a finite space, in the order of :func:`index`.

    Laws: every element is a member; no element repeats; there are ``cardinality(s)`` of
    them. Raises TypeError for a space that is not finite.
    """
    return coerce(elements, (space,), {})


@generic(1)
def index(x: Any, space: Any) -> int:
    """The position of member ``x`` in :func:`elements` (tabular encodings).

    Laws: ``element(index(x, s), s) == x``; ``0 <= index(x, s) < cardinality(s)``.
    Raises ValueError if ``x`` is not a member.
    """
    return coerce(index, (x, space), {})


@generic(1)
def element(i: int, space: Any) -> Any:
    """The ``i``-th element of a finite space: the inverse of :func:`index`.

    Laws: ``index(element(i, s), s) == i`` for ``0 <= i < cardinality(s)``; ValueError
    (naming ``i``) outside that range.
    """
    return coerce(element, (i, space), {})


def check_position(i: Any, n: int | float) -> int:
    """``i`` as an int if it is a valid argument of :func:`element` for ``n`` elements.

    Raises ValueError naming ``i`` otherwise (bools and non-integers included).
    """
    if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < n:  # type: ignore[operator]
        raise ValueError(f"element: i must be an int in range({n}), got {i!r}")
    return int(i)


@generic(0, 1)
def issubspace(a: Any, b: Any) -> bool:
    """Inclusion ``a ⊆ b`` (also ``a <= b``), decided for intervals, boxes, finite sets,
    arrays, products and OneOf.

    Laws: reflexive; transitive; if ``issubspace(a, b)`` then every sample of ``a`` is in
    ``b``. Raises TypeError where inclusion is not decided for the pair of kinds.
    """
    return coerce(issubspace, (a, b), {})


@generic(0, 1)
def intersect(a: Any, b: Any) -> Any:
    """The intersection ``a ∩ b`` (also ``a & b``) where it has a closed form.

    Laws: ``x in a & b`` iff ``x in a and x in b``; ``a & b <= a``; commutative up to
    ordering of finite sets. An empty intersection is the empty ``FiniteSet()``.
    Raises TypeError for pairs of kinds with no closed form.
    """
    return coerce(intersect, (a, b), {})
