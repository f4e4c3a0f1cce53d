# The protocol's signatures as type checkers see them (the laws are in protocol.py).
#
# At run time every name below is a GenericFunction, a multipledispatch Dispatcher with
# its registration API (``sample.register(MyType)``); this stub gives each one the
# parameters of its declaration and, where the result's type follows the argument,
# overloads: ``sample(Interval(0, 1))`` is a float, ``sample(("a", "b"))`` a str,
# ``clamp(x_array, box)`` an array. The last overload of each is the declaration itself,
# so any registered space type is accepted. ``rng`` is spacealg's RngLike in the precise
# overloads and ``Any`` in the general one, so foreign generators (a torch.Generator, a JAX
# key) type-check and give ``Any``. tests/test_typing.py checks this stub against the
# runtime declarations and checks that wrong calls fail ``mypy --strict``.

from collections.abc import Iterator
from typing import Any, Protocol, TypeVar, overload

import gymnasium
import numpy as np
import numpy.typing as npt

from spacealg.core.generic import GenericFunction
from spacealg.core.generic import as_space as as_space
from spacealg.core.rng import RngLike
from spacealg.core.styles import Style
from spacealg.spaces import product as _product  # a module import: product.py imports this module
from spacealg.spaces.array import ArraySpace
from spacealg.spaces.box import Box
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.interval import Interval

TupleProduct = _product.TupleProduct
DictProduct = _product.DictProduct

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

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)
_X = TypeVar("_X")

Size = int | tuple[int, ...]
Array = npt.NDArray[Any]
Labels = tuple[_T, ...] | list[_T] | set[_T] | frozenset[_T]  # plain collections as finite sets
FiniteKinds = range | tuple[Any, ...] | list[Any] | set[Any] | frozenset[Any] | FiniteSet

class _Sample(Protocol):
    @overload
    def __call__(
        self,
        space: Box | ArraySpace,
        /,
        size: Size | None = None,
        *,
        rng: RngLike = None,
        mask: Any = None,
        probability: Any = None,
    ) -> Array: ...
    @overload
    def __call__(
        self,
        space: Interval | range | FiniteSet,
        /,
        size: Size,
        *,
        rng: RngLike = None,
        mask: Any = None,
        probability: Any = None,
    ) -> Array: ...
    @overload
    def __call__(
        self,
        space: Interval,
        /,
        size: None = None,
        *,
        rng: RngLike = None,
        mask: Any = None,
        probability: Any = None,
    ) -> float: ...
    @overload
    def __call__(
        self, space: range, /, size: None = None, *, rng: RngLike = None, mask: Any = None, probability: Any = None
    ) -> int: ...
    @overload
    def __call__(
        self, space: type[bool], /, size: None = None, *, rng: RngLike = None, mask: Any = None, probability: Any = None
    ) -> bool: ...
    @overload
    def __call__(
        self,
        space: Labels[_T],
        /,
        size: None = None,
        *,
        rng: RngLike = None,
        mask: Any = None,
        probability: Any = None,
    ) -> _T: ...
    @overload
    def __call__(
        self,
        space: TupleProduct,
        /,
        size: Size | None = None,
        *,
        rng: RngLike = None,
        mask: Any = None,
        probability: Any = None,
    ) -> tuple[Any, ...]: ...
    @overload
    def __call__(
        self,
        space: DictProduct | dict[Any, Any],
        /,
        size: Size | None = None,
        *,
        rng: RngLike = None,
        mask: Any = None,
        probability: Any = None,
    ) -> dict[Any, Any]: ...
    @overload
    def __call__(
        self,
        space: gymnasium.spaces.Space[_T_co],
        /,
        size: None = None,
        *,
        rng: RngLike = None,
        mask: Any = None,
        probability: Any = None,
    ) -> _T_co: ...
    @overload
    def __call__(
        self, space: object, /, size: Size | None = None, *, rng: Any = None, mask: Any = None, probability: Any = None
    ) -> Any: ...

class _Contains(Protocol):
    def __call__(self, x: object, space: object, /) -> bool: ...

class _Isin(Protocol):
    def __call__(self, batch: Any, space: object, /) -> npt.NDArray[np.bool_]: ...

class _OfSpace(Protocol[_T_co]):
    def __call__(self, space: object, /) -> _T_co: ...

class _Bounds(Protocol):
    @overload
    def __call__(self, space: Box | ArraySpace, /) -> tuple[Array, Array]: ...
    @overload
    def __call__(self, space: Interval, /) -> tuple[int | float, int | float]: ...
    @overload
    def __call__(self, space: range, /) -> tuple[int, int]: ...
    @overload
    def __call__(self, space: object, /) -> tuple[Any, Any]: ...

class _Clamp(Protocol):
    @overload
    def __call__(self, x: Array, space: Box | ArraySpace, /) -> Array: ...
    @overload
    def __call__(self, x: float, space: Interval, /) -> float: ...
    @overload
    def __call__(self, x: float, space: range, /) -> int: ...
    @overload
    def __call__(self, x: Any, space: object, /) -> Any: ...

class _ClampInPlace(Protocol):
    def __call__(self, x: _X, space: object, /) -> _X: ...

class _Cardinality(Protocol):
    @overload
    def __call__(self, space: FiniteKinds, /) -> int: ...
    @overload
    def __call__(self, space: object, /) -> int | float: ...

class _Elements(Protocol):
    @overload
    def __call__(self, space: range, /) -> Iterator[int]: ...
    @overload
    def __call__(self, space: Labels[_T], /) -> Iterator[_T]: ...
    @overload
    def __call__(self, space: object, /) -> Iterator[Any]: ...

class _Index(Protocol):
    def __call__(self, x: object, space: object, /) -> int: ...

class _Element(Protocol):
    @overload
    def __call__(self, i: int | np.integer[Any], space: range, /) -> int: ...
    @overload
    def __call__(self, i: int | np.integer[Any], space: Labels[_T], /) -> _T: ...
    @overload
    def __call__(self, i: int | np.integer[Any], space: object, /) -> Any: ...

class _Relation(Protocol):
    def __call__(self, a: object, b: object, /) -> bool: ...

class _Intersect(Protocol):
    def __call__(self, a: object, b: object, /) -> Any: ...

contains: GenericFunction[_Contains]
sample: GenericFunction[_Sample]
isin: GenericFunction[_Isin]
eltype: GenericFunction[_OfSpace[Any]]
elsize: GenericFunction[_OfSpace[Any]]
SpaceStyle: GenericFunction[_OfSpace[Style]]
bounds: GenericFunction[_Bounds]
clamp: GenericFunction[_Clamp]
clamp_: GenericFunction[_ClampInPlace]
cardinality: GenericFunction[_Cardinality]
elements: GenericFunction[_Elements]
index: GenericFunction[_Index]
element: GenericFunction[_Element]
issubspace: GenericFunction[_Relation]
intersect: GenericFunction[_Intersect]

def check_position(i: Any, n: int | float) -> int: ...
