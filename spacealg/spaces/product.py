"""Products: ``TupleProduct`` (elements are tuples), ``DictProduct`` (elements are dicts)
and ``product``, the associative Cartesian product.

>>> from spacealg import product, Interval, Box, TupleProduct, SpaceStyle
>>> product(Interval(-1, 1), Interval(0, 1))                 # intervals combine into a Box
Box(np.array([-1.0, 0.0], dtype=np.float64), np.array([1.0, 1.0], dtype=np.float64), dtype=np.float64)
>>> p = product(("cat", "dog"), range(3), Interval(0, 1))
>>> SpaceStyle(p)
HybridSpaceStyle(continuous_shape=(), finite_shape=(2,))
>>> product(position=Interval(0, 1), colour=("red", "blue"))  # a named product
DictProduct({'position': Interval(0, 1), 'colour': FiniteSet('red', 'blue')})

``product(*spaces)`` flattens nested ``TupleProduct`` arguments and merges each run of
two or more closed intervals or one-dimensional floating boxes (or a lone such Box)
into one ``Box``; what remains is a ``TupleProduct`` (or the Box itself, if that is all).
Laws: ``product(product(a, b), c) == product(a, product(b, c)) == product(a, b, c)``;
``cardinality`` multiplies; styles combine by the promotion table of
:mod:`spacealg.core.styles`. The explicit constructors keep nesting as written.

A batch of a product is the tuple (dict) of its components' batches. Its batched rules
(:data:`RULES`: ``isin``, ``sample``, ``clamp``) are written once over the kernel and serve NumPy,
torch and JAX alike (torch/JAX compile the product's plan instead where every leaf has a leaf
model: :mod:`spacealg.backends.parts`). Laws, on every backend: ``isin`` broadcasts the
components' batches as NumPy broadcasts, ``isin(batch)[i] == contains(row i of the broadcast
batch)`` (a component batch of one row, or one member, stands for every row), and component
batches that do not broadcast are a ValueError; ``clamp`` clamps each component batch as it is
(no broadcasting); ``sample`` draws each component in turn from the one generator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from spacealg.core import hooks
from spacealg.core.generic import as_space
from spacealg.core.kernel import Kernel
from spacealg.core.plan import components
from spacealg.core.protocol import (
    SpaceStyle,
    bounds,
    cardinality,
    check_position,
    clamp,
    clamp_,
    contains,
    element,
    elements,
    elsize,
    eltype,
    index,
    intersect,
    isin,
    issubspace,
    sample,
)
from spacealg.core.rng import no_extra
from spacealg.core.space import Space, format_value, nested_depth
from spacealg.core.styles import combine_styles
from spacealg.spaces._batch import has_nan, isin_objects
from spacealg.spaces._counting import count_product, lazy_product
from spacealg.spaces._kind import empty, on_numpy, register, register_batched, shown
from spacealg.spaces.array import ArraySpace, array_of
from spacealg.spaces.box import Box
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.inplace import write_through
from spacealg.spaces.interval import Interval

__all__ = ["RULES", "DictProduct", "SpaceTuple", "TupleProduct", "assemble", "has_parts", "parts_of", "product"]


class SpaceTuple(Space):
    """Base of the spaces built from a tuple of component spaces (products, OneOf)."""

    spaces: tuple[Any, ...]
    _spaces: tuple[Any, ...]

    def __init__(self, *spaces: Any) -> None:
        pairs = [shown(s) for s in spaces]
        depth = nested_depth(type(self).__name__, (p[1] for p in pairs))
        self._set(spaces=tuple(p[0] for p in pairs), _spaces=tuple(p[1] for p in pairs), _depth=depth)

    def _key(self) -> tuple[Any, ...]:
        return self._spaces

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.spaces, {}

    def __getitem__(self, i: int) -> Any:
        return self._spaces[i]


class TupleProduct(SpaceTuple):
    """The Cartesian product of ``spaces``, whose elements are tuples."""


class DictProduct(Space):
    """The named product: elements are dicts with exactly these keys, in this order.

    ``DictProduct({"a": s, "b": t})``, ``DictProduct(a=s, b=t)`` or
    ``DictProduct([("b", t), ("a", s)])`` (pairs keep any order). Equality, like that of
    dicts, ignores key order; iteration, sampling and conversions keep it.

    ``sort_keys`` is Gymnasium's flag (``Dict(..., sort_keys=False)``): a DictProduct never
    sorts its keys, but the flag travels through ``to_gymnasium``/``from_gymnasium``, JSON,
    ``repr`` and ``joint_space``, so that Gymnasium's ``batch_space`` of the converted space
    keeps (False) or sorts (True) the keys as the original would. Equality ignores it, as
    Gymnasium's does.
    """

    _shown: dict[Any, Any]
    _spaces: dict[Any, Any]
    sort_keys: bool

    def __init__(
        self,
        spaces: Mapping[Any, Any] | Iterable[tuple[Any, Any]] | None = None,
        /,
        *,
        sort_keys: bool = True,
        **named: Any,
    ) -> None:
        if not isinstance(sort_keys, (bool, np.bool_)):
            raise TypeError(f"DictProduct: sort_keys must be a bool, got {sort_keys!r}")
        if spaces is not None and named:
            raise TypeError("DictProduct: give the spaces either as one mapping/pairs or as keywords")
        items = list(named.items()) if spaces is None else list(
            spaces.items() if isinstance(spaces, Mapping) else spaces
        )
        keys = [k for k, _ in items]
        for k in keys:
            if has_nan(k):
                raise ValueError(f"DictProduct: the key {k!r} is (or holds) NaN, which no lookup finds")
        if len(set(keys)) != len(keys):
            raise ValueError(f"DictProduct: duplicate keys in {keys!r}")
        pairs = {k: shown(s) for k, s in items}
        self._set(
            sort_keys=bool(sort_keys),
            _depth=nested_depth("DictProduct", (p[1] for p in pairs.values())),
            _shown={k: p[0] for k, p in pairs.items()},
            _spaces={k: p[1] for k, p in pairs.items()},
        )

    @property
    def spaces(self) -> Mapping[Any, Any]:
        """The component spaces by key (read-only, in order)."""
        return MappingProxyType(self._spaces)

    def keys(self) -> Iterable[Any]:
        return self._spaces.keys()

    def __getitem__(self, key: Any) -> Any:
        return self._spaces[key]

    def _key(self) -> tuple[Any, ...]:
        return (frozenset(self._spaces.items()),)

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (dict(self._shown),), ({} if self.sort_keys else {"sort_keys": False})

    def __repr__(self) -> str:
        flag = "" if self.sort_keys else ", sort_keys=False"
        return f"DictProduct({format_value(self._shown)}{flag})"


# -- product() -------------------------------------------------------------------------


def _real_line(space: Any) -> bool:
    """Whether a factor merges into a Box: a closed interval or a 1-D floating Box."""
    if isinstance(space, Interval):
        return space.closed == "both"
    return isinstance(space, Box) and len(space.shape) == 1 and space.dtype.kind == "f"


def _merge(run: list[Any]) -> Box:
    lows: list[Any] = []
    highs: list[Any] = []
    dtypes: list[Any] = []
    for factor in run:
        if isinstance(factor, Interval):
            lows.append([float(factor.low)])
            highs.append([float(factor.high)])
            dtypes.append(np.dtype(np.float64))
        else:
            args, _ = factor._constructor_args()
            lows.append(np.broadcast_to(args[0], factor.shape))
            highs.append(np.broadcast_to(args[1], factor.shape))
            dtypes.append(factor.dtype)
    return Box(np.concatenate(lows), np.concatenate(highs), dtype=np.result_type(*dtypes))


def _flatten(spaces: Iterable[Any]) -> Iterator[Any]:
    for s in spaces:
        converted = as_space(s)
        if isinstance(converted, TupleProduct):
            yield from _flatten(converted.spaces)
        else:
            yield converted


def product(*spaces: Any, **named: Any) -> Any:
    """The Cartesian product (see the module docstring for the canonical form and laws).

    ``product(**spaces)`` is ``DictProduct(**spaces)``.
    """
    if named:
        if spaces:
            raise TypeError("product: give either positional spaces or keyword spaces, not both")
        return DictProduct(**named)
    factors: list[Any] = []
    run: list[Any] = []

    def close_run() -> None:
        if len(run) >= 2 or (run and isinstance(run[0], Box)):
            factors.append(_merge(run))
        else:
            factors.extend(run)
        run.clear()

    for factor in _flatten(spaces):
        if _real_line(factor):
            run.append(factor)
        else:
            close_run()
            factors.append(factor)
    close_run()
    if len(factors) == 1 and isinstance(factors[0], Box):
        return factors[0]
    return TupleProduct(*factors)


# -- the protocol of both products: a component by its key (a position, or a dict key) ----------


@components.register(TupleProduct)
@components.register(DictProduct)
def _components(space: TupleProduct | DictProduct) -> Any:
    return space._spaces  # the parts that plans walk (spacealg.core.plan)


def parts_of(space: TupleProduct | DictProduct) -> dict[Any, Any]:
    """The components by key: positions for a TupleProduct, the keys of a DictProduct."""
    return space._spaces if isinstance(space, DictProduct) else dict(enumerate(space._spaces))


def assemble(space: TupleProduct | DictProduct, values: Iterable[Any]) -> Any:
    """The member (or per-component value) of ``space`` made of ``values``, in component order."""
    return dict(zip(space._spaces, values)) if isinstance(space, DictProduct) else tuple(values)


def _like(space: TupleProduct | DictProduct, parts: dict[Any, Any]) -> Any:
    """The product of ``space``'s kind (and ``sort_keys``) of ``parts``, by ``space``'s keys."""
    if isinstance(space, DictProduct):
        return DictProduct(parts, sort_keys=space.sort_keys)
    return TupleProduct(*parts.values())


def has_parts(x: Any, space: TupleProduct | DictProduct) -> bool:
    """Whether ``x`` has the parts of a member (or of a batch): a tuple (or list) of one part
    per component, or a mapping with the keys of a DictProduct."""
    if isinstance(space, DictProduct):
        return isinstance(x, Mapping) and len(x) == len(space._spaces) and all(k in x for k in space._spaces)
    return isinstance(x, (tuple, list)) and len(x) == len(space._spaces)


def _contains(x: Any, space: TupleProduct | DictProduct) -> bool:
    try:
        return has_parts(x, space) and all(contains(x[k], s) for k, s in parts_of(space).items())
    except TypeError:  # unhashable key lookups and the like
        return False


def _check_parts(x: Any, space: TupleProduct | DictProduct, what: str) -> None:
    """ValueError naming ``what`` unless ``x`` has the parts of a member (the error of ``isin``
    and of the torch/JAX batches for the same structure)."""
    if has_parts(x, space):
        return
    if isinstance(space, DictProduct):
        raise ValueError(f"{what}: x must be a mapping with the keys {list(space._spaces)}")
    raise ValueError(f"{what}: x must be a tuple of {len(space._spaces)} components")


# -- the batched rules: one over the kernel, for NumPy, torch and JAX alike ----------------------------


def _sample_rule(k: Kernel, space: TupleProduct | DictProduct, size: Any = None, *, rng: Any, **extra: Any) -> Any:
    """Each component's batch drawn by its own rule, in order, from the kernel's generator (a new
    key for each on JAX)."""
    if extra:  # (no_extra's own call costs 3% of a small Dict's draw)
        no_extra(extra, k.name)
    spawn = k.spawn
    return assemble(space, [sample(s, size, rng=spawn()) for s in parts_of(space).values()])


def _isin_rule(k: Kernel, batch: Any, space: TupleProduct | DictProduct) -> Any:
    """The ``&`` of the components' answers, broadcast as NumPy broadcasts: a component batch of
    one row (or of none: one member) stands for every row, so that ``isin(batch)[i] ==
    contains(row i of the broadcast batch)``; answers that do not broadcast are a ValueError,
    whatever the backend. An object array of members (NumPy) is tested member by member."""
    if isinstance(batch, np.ndarray) and batch.dtype.kind == "O":
        return isin_objects(batch, space)
    _check_parts(batch, space, "isin")
    return k.all_of([k.xp.asarray(isin(batch[key], s)) for key, s in parts_of(space).items()], space)


def _clamp_rule(k: Kernel, x: Any, space: TupleProduct | DictProduct) -> Any:
    """Each component clamped by its own rule (component batches are not broadcast: each keeps
    its shape); a list stays a list."""
    _check_parts(x, space, "clamp")
    clamped = assemble(space, (clamp(x[key], s) for key, s in parts_of(space).items()))
    return list(clamped) if isinstance(x, list) else clamped


#: operation -> the products' batched rule, over the kernel of NumPy, torch or JAX
RULES: dict[str, Callable[..., Any]] = {"isin": _isin_rule, "sample": _sample_rule, "clamp": _clamp_rule}


def _clamp_inplace(x: Any, space: TupleProduct | DictProduct) -> Any:
    _check_parts(x, space, "clamp_")
    return write_through(x, lambda trial: _clamp_parts_inplace(trial, space))  # all or nothing


def _clamp_parts_inplace(x: Any, space: TupleProduct | DictProduct) -> None:
    """``clamp_`` of a product's parts, written as they are clamped (the caller stages ``x``)."""
    _check_parts(x, space, "clamp_")
    for key, s in parts_of(space).items():
        value = x[key]
        if isinstance(s, (TupleProduct, DictProduct)) and isinstance(value, (list, dict, tuple)):
            _clamp_parts_inplace(value, s)  # already inside the staged copy: not staged (copied) again
        elif isinstance(value, (np.ndarray, list, dict, tuple)):  # a tuple: clamped through its own parts
            clamp_(value, s)
        elif isinstance(x, (list, dict)):
            x[key] = clamp(value, s)
        else:
            raise TypeError(
                "clamp_: a product is clamped in place only through mutable parts "
                "(arrays, or a list/dict holding scalars)"
            )


def _bounds(space: TupleProduct | DictProduct) -> tuple[Any, Any]:
    pairs = [bounds(s) for s in parts_of(space).values()]
    return assemble(space, (p[0] for p in pairs)), assemble(space, (p[1] for p in pairs))


def _elements(space: TupleProduct | DictProduct) -> Iterator[Any]:
    spaces = list(parts_of(space).values())
    return (assemble(space, combo) for combo in lazy_product(lambda i: elements(spaces[i]), len(spaces)))


def _index(x: Any, space: TupleProduct | DictProduct) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    position = 0  # the mixed-radix number of the components' indices
    for k, s in parts_of(space).items():
        position = position * int(cardinality(s)) + index(x[k], s)
    return position


def _element(i: Any, space: TupleProduct | DictProduct) -> Any:
    spaces = list(parts_of(space).values())
    i = check_position(i, count_product(cardinality(s) for s in spaces))
    values = []
    for s in reversed(spaces):
        i, digit = divmod(i, cardinality(s))
        values.append(element(digit, s))
    return assemble(space, values[::-1])


for _product in (TupleProduct, DictProduct):
    register(_product, contains=_contains, bounds=_bounds, elements=_elements, index=_index, element=_element,
             clamp_=_clamp_inplace,
             elsize=lambda space: assemble(space, (elsize(s) for s in parts_of(space).values())),
             SpaceStyle=lambda space: combine_styles(SpaceStyle(s) for s in parts_of(space).values()),
             cardinality=lambda space: count_product(cardinality(s) for s in parts_of(space).values()))
    register_batched(_product, on_numpy(**RULES), **RULES)  # torch/JAX: through spacealg.backends.parts
register(TupleProduct, eltype=lambda space: tuple[tuple(eltype(s) for s in space._spaces)])  # type: ignore[misc]
register(DictProduct, eltype=lambda space: dict)


@issubspace.register(TupleProduct, TupleProduct)
@issubspace.register(DictProduct, DictProduct)
def _product_subset(a: TupleProduct | DictProduct, b: TupleProduct | DictProduct) -> bool:
    parts, others = parts_of(a), parts_of(b)
    return parts.keys() == others.keys() and all(issubspace(s, others[k]) for k, s in parts.items())


@intersect.register(TupleProduct, TupleProduct)
@intersect.register(DictProduct, DictProduct)
def _product_intersect(a: TupleProduct | DictProduct, b: TupleProduct | DictProduct) -> Any:
    parts, others = parts_of(a), parts_of(b)
    if parts.keys() != others.keys():
        return FiniteSet()
    common = {k: intersect(s, others[k]) for k, s in parts.items()}
    return FiniteSet() if any(empty(p) for p in common.values()) else _like(a, common)


@array_of.register(TupleProduct)
@array_of.register(DictProduct)
def _product_array(space: TupleProduct | DictProduct, dims: tuple[int, ...], base: Any) -> Any:
    shown_parts = space._shown if isinstance(space, DictProduct) else dict(enumerate(space.spaces))
    return _like(space, {k: ArraySpace(s, *dims) for k, s in shown_parts.items()})  # stacked batches


@as_space.register(dict)
def _dict_as_space(obj: dict[Any, Any]) -> DictProduct:
    return DictProduct(obj)

hooks.product.define(product)  # ``a * b`` on spacealg's spaces
