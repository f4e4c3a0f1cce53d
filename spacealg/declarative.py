"""Declaring spaces: ``space(obj)`` for literal forms, and dataclasses as named products.

>>> from typing import Annotated, Literal
>>> import numpy as np
>>> from spacealg import Box, Interval, space, spaceclass, sample, contains
>>> space({"speed": Interval(0, 1), "gear": range(1, 6), "lights": bool})
DictProduct({'speed': Interval(0, 1), 'gear': range(1, 6), 'lights': bool})
>>> @spaceclass
... class Observation:
...     position: Annotated[np.ndarray, Box(-1.0, 1.0, shape=(2,))]
...     colour: Literal["red", "green"]
...     speed: Annotated[float, Interval(0, 1)]
>>> S = space(Observation)
>>> obs = sample(S, rng=0)
>>> isinstance(obs, Observation), contains(obs, S)
(True, True)

``space(obj)`` reads the literal forms of the design: a spacealg space is itself; a
dict (any mapping) is the named product of its values, read recursively; tuples, lists
and sets are finite sets of their items (a tuple is a set, never a product); a range is
itself; ``bool``, ``float`` and numpy scalar types are what :func:`as_space` makes of
them; ``typing.Literal[a, b]`` is ``FiniteSet(a, b)``; ``Annotated[T, s]`` is
``space(s)``; a dataclass is a :class:`DataclassSpace`; a Gymnasium/Gym space is
converted by its adapter. Anything else raises TypeError naming where it was found.

A *dataclass space* declares a product by the field annotations of a dataclass. Each
field (with ``init=True``) is annotated with one of:

==================================  ===================================================
annotation                          field space
==================================  ===================================================
``Annotated[T, s]``                 ``space(s)`` (the first metadata item that is a space)
``Literal["a", "b"]``               ``FiniteSet("a", "b")``
``bool``, ``float``, numpy types    as :func:`as_space` (``float`` is the whole real line)
another declared dataclass          its :class:`DataclassSpace` (nesting)
==================================  ===================================================

Members are the instances of the class whose declared fields lie in their spaces.
Laws (checked in tests/test_declarative.py): ``isinstance(sample(S), S.cls)``;
``contains(x, S) == isinstance(x, S.cls) and contains(fields_of(x), S.fields)``; style,
cardinality, bounds, ``index``/``element`` are those of the named product ``S.fields``
(a :class:`DictProduct`), with instances in place of dicts; ``to_gymnasium(S)`` is the
``gymnasium.spaces.Dict`` of the fields (whose members are dicts, not instances;
``spacealg.encode``/``decode`` map an instance to its dict and back). A batch (``sample(S, n)``)
is one instance whose fields hold the component batches (a struct of arrays, built
without calling ``__init__``); ``isin`` also takes an object array of instances.
"""

from __future__ import annotations

import dataclasses
import typing
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from spacealg.adapters.encoding import decode, encode
from spacealg.adapters.gym import to_gym
from spacealg.adapters.gymnasium import to_gymnasium
from spacealg.core.generic import as_space, delegate, generic
from spacealg.core.protocol import (
    SpaceStyle,
    bounds,
    cardinality,
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
from spacealg.core.rng import RngLike
from spacealg.core.space import Space
from spacealg.spaces._batch import isin_objects
from spacealg.spaces.finite import FiniteSet
from spacealg.spaces.inplace import write_through
from spacealg.spaces.product import DictProduct

__all__ = ["DataclassSpace", "declared_dataclass", "fields_of", "space", "spaceclass"]


# -- space(obj) ---------------------------------------------------------------------------


def space(obj: Any) -> Any:
    """The spacealg space that the literal form ``obj`` declares (see the module docstring).

    Laws: ``space(s) is s`` for a spacealg space; ``space(d) == DictProduct({k: space(v)})``
    for a dict; ``space(t) == as_space(t)`` for the tuples, lists, sets, ranges and types
    that :func:`as_space` knows. Raises TypeError naming the path of what is not a space.
    """
    return _declare(obj, "")


_PLAIN_TYPE_AS_SPACE = as_space.implementation_for(type)  # spacealg.spaces.finite's rule


@as_space.register(type)
def _type_as_space(obj: type) -> Any:
    """``as_space`` of a type: a dataclass declares the product of its fields; other types
    as :mod:`spacealg.spaces.finite` reads them (bool, float, numpy scalar types)."""
    if dataclasses.is_dataclass(obj):
        return space(obj)
    return _PLAIN_TYPE_AS_SPACE(obj)


@generic(0)
def _declare(obj: Any, path: str) -> Any:
    """The space ``obj`` declares (``path`` locates it for error messages)."""
    if isinstance(obj, Mapping):
        return _declare_mapping(obj, path)
    origin = typing.get_origin(obj)
    if origin is typing.Literal:
        return FiniteSet(*typing.get_args(obj))
    if origin is typing.Annotated:
        return _declare_annotated(obj, path)
    try:
        return as_space(obj)
    except TypeError as error:
        raise TypeError(f"space: {_where(path)}{error}") from None


def _where(path: str) -> str:
    return f"at {path}: " if path else ""


@_declare.register(dict)
def _declare_mapping(obj: Mapping[Any, Any], path: str) -> DictProduct:
    return DictProduct({k: _component(v, f"{path}[{k!r}]") for k, v in obj.items()})


def _component(obj: Any, path: str) -> Any:
    """A product component: types ``as_space`` knows stay types (so the repr shows them)."""
    if isinstance(obj, type) and not dataclasses.is_dataclass(obj):
        _declare(obj, path)  # validates
        return obj
    return _declare(obj, path)


@_declare.register(Space)
def _declare_space(obj: Space, path: str) -> Space:
    return obj


@_declare.register(type)
def _declare_type(obj: type, path: str) -> Any:
    if dataclasses.is_dataclass(obj):
        return DataclassSpace(obj)
    try:
        return as_space(obj)
    except TypeError:
        raise TypeError(
            f"space: {_where(path)}the type {obj.__qualname__} is not a space: spacealg knows bool, "
            "float, numpy scalar types and dataclasses; annotate with Annotated[T, space] "
            "(e.g. Annotated[int, range(10)]) or Literal[...]"
        ) from None


def _declare_annotated(obj: Any, path: str) -> Any:
    for item in obj.__metadata__:
        try:
            return _declare(item, path)
        except TypeError:
            continue
    raise TypeError(f"space: {_where(path)}{obj!r} has no space among its Annotated metadata")


# -- dataclass spaces ---------------------------------------------------------------------------

_DECLARED: dict[str, list[weakref.ref[type]]] = {}


def _register(cls: type) -> None:
    """Remember ``cls`` under ``module.QualName`` (weakly; the latest declaration last)."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    live = [ref for ref in _DECLARED.get(name, []) if ref() is not None and ref() is not cls]
    _DECLARED[name] = [*live, weakref.ref(cls)]


def declared_dataclass(name: str, fields: Mapping[str, Any] | None = None) -> type | None:
    """The dataclass declared as a space under ``module.QualName`` in this process, if any.

    Several live classes may share a name (a class redefined in a notebook, classes made by
    ``dataclasses.make_dataclass``); given ``fields``, the latest one whose annotations
    declare exactly those field spaces is preferred, otherwise the latest one.
    """
    classes = [cls for ref in reversed(_DECLARED.get(name, [])) if (cls := ref()) is not None]
    if fields is not None and len(classes) > 1:
        wanted = DictProduct(dict(fields))
        for cls in classes:
            try:
                if DictProduct(_declared_spaces(cls)) == wanted:
                    return cls
            except (TypeError, ValueError):
                continue
    return classes[0] if classes else None


def _init_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.init]


def _declared_spaces(cls: type) -> dict[str, Any]:
    """The space of each init field, read from the class's annotations."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as error:  # NameError, SyntaxError... from unresolvable annotations
        raise TypeError(f"space: cannot resolve the annotations of {cls.__qualname__}: {error}") from None
    return {f.name: _component(hints[f.name], f"{cls.__qualname__}.{f.name}") for f in _init_fields(cls)}


class DataclassSpace(Space):
    """The instances of the dataclass ``cls`` whose fields lie in their spaces.

    ``spaces`` overrides the spaces read from the annotations (it must name every init
    field); ``DataclassSpace(cls)`` is what ``space(cls)`` returns.
    """

    cls: type
    fields: DictProduct

    def __init__(self, cls: type, spaces: Mapping[str, Any] | None = None) -> None:
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            raise TypeError(f"DataclassSpace: cls must be a dataclass type, got {cls!r}")
        names = [f.name for f in _init_fields(cls)]
        if spaces is None:
            spaces = _declared_spaces(cls)
        else:
            missing = [n for n in names if n not in spaces]
            extra = [k for k in spaces if k not in names]
            if missing or extra:
                raise ValueError(
                    f"DataclassSpace: spaces must name exactly the init fields of {cls.__qualname__} "
                    f"{names}; missing {missing}, unexpected {extra}"
                )
            spaces = {n: _component(spaces[n], f"{cls.__qualname__}.{n}") for n in names}
        self._set(cls=cls, fields=DictProduct(spaces))
        _register(cls)

    def _key(self) -> tuple[Any, ...]:
        return (self.cls, self.fields)

    def _constructor_args(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        shown = dict(self.fields._constructor_args()[0][0])
        try:
            declared = DictProduct(_declared_spaces(self.cls))
        except TypeError:
            declared = None
        if declared == self.fields:
            return (self.cls,), {}
        return (self.cls, shown), {}

    def __reduce__(self) -> tuple[Any, ...]:
        return (DataclassSpace, (self.cls, dict(self.fields.spaces)))

    def __getitem__(self, name: str) -> Any:
        return self.fields[name]


def spaceclass(cls: type | None = None, /, **dataclass_options: Any) -> Any:
    """Class decorator: make ``cls`` a dataclass (if it is not one) and declare it a space.

    The annotations are checked at once (TypeError naming a field that is not a space),
    and the class becomes known to :func:`spacealg.from_json`. Options are passed to
    :func:`dataclasses.dataclass` (``@spaceclass(frozen=True)``). Returns the class.
    """

    def declare(c: type) -> type:
        if "__dataclass_fields__" not in c.__dict__:
            c = dataclasses.dataclass(c, **dataclass_options)
        elif dataclass_options:
            raise TypeError(
                f"spaceclass: {c.__qualname__} is already a dataclass; options {dataclass_options} unused"
            )
        DataclassSpace(c)
        return c

    return declare if cls is None else declare(cls)


def fields_of(x: Any, space: DataclassSpace) -> dict[str, Any]:
    """The values of ``space``'s fields in the instance ``x`` (shallow, unlike ``asdict``)."""
    return {name: getattr(x, name) for name in space.fields.spaces}


def _record(space: DataclassSpace, values: Mapping[str, Any]) -> Any:
    """An instance holding ``values`` without calling ``__init__`` (for batches)."""
    instance: Any = object.__new__(space.cls)
    for name, value in values.items():
        object.__setattr__(instance, name, value)
    return instance


def _is_frozen(cls: type) -> bool:
    params = getattr(cls, "__dataclass_params__", None)
    return bool(getattr(params, "frozen", False))


# -- the protocol, by delegation to the named product of the fields ------------------------------


@contains.register(DataclassSpace)
def _contains(x: Any, space: DataclassSpace) -> bool:
    if not isinstance(x, space.cls):
        return False
    try:
        values = fields_of(x, space)
    except AttributeError:  # a half-built instance
        return False
    return contains(values, space.fields)  # type: ignore[no-any-return]


@sample.register(DataclassSpace)
def _sample(space: DataclassSpace, size: Any = None, *, rng: RngLike = None) -> Any:
    values = sample(space.fields, size, rng=rng)
    if size is None:
        return space.cls(**values)
    return _record(space, values)


@isin.register(DataclassSpace)
def _isin(batch: Any, space: DataclassSpace) -> np.ndarray:
    if isinstance(batch, np.ndarray) and batch.dtype.kind == "O":
        return isin_objects(batch, space)
    if not isinstance(batch, space.cls):
        raise ValueError(
            f"isin: a batch of {space!r} is an instance of {space.cls.__qualname__} whose fields "
            "are batches, or an object array of instances"
        )
    return np.asarray(isin(fields_of(batch, space), space.fields))


@eltype.register(DataclassSpace)
def _eltype(space: DataclassSpace) -> type:
    return space.cls


# size, style, cardinality and bounds by field name (dicts: the ends need not be valid instances)
delegate(DataclassSpace, lambda space: space.fields, elsize, SpaceStyle, cardinality, bounds)


def _check_instance(x: Any, space: DataclassSpace, what: str) -> None:
    if not isinstance(x, space.cls):
        raise TypeError(
            f"{what}: x must be an instance of {space.cls.__qualname__}, got {type(x).__qualname__}"
        )


@clamp.register(DataclassSpace)
def _clamp(x: Any, space: DataclassSpace) -> Any:
    if contains(x, space):
        return x
    _check_instance(x, space, "clamp")
    return dataclasses.replace(x, **clamp(fields_of(x, space), space.fields))


@clamp_.register(DataclassSpace)
def _clamp_inplace(x: Any, space: DataclassSpace) -> Any:
    _check_instance(x, space, "clamp_")
    frozen = _is_frozen(type(x))

    def clamp_fields(trial: Any) -> None:
        for name, s in space.fields.spaces.items():
            value = getattr(trial, name)
            if isinstance(value, (np.ndarray, list, dict)) or isinstance(s, DataclassSpace):
                clamp_(value, s)
            elif not frozen:
                setattr(trial, name, clamp(value, s))
            elif not contains(value, s):
                raise TypeError(
                    f"clamp_: the field {name!r} of a frozen {type(x).__qualname__} holds an immutable "
                    "value; use clamp() for a clamped copy"
                )

    return write_through(x, clamp_fields)  # all or nothing


@elements.register(DataclassSpace)
def _elements(space: DataclassSpace) -> Iterator[Any]:
    return (space.cls(**values) for values in elements(space.fields))


@index.register(DataclassSpace)
def _index(x: Any, space: DataclassSpace) -> int:
    if not contains(x, space):
        raise ValueError(f"index: x={x!r} is not a member of {space!r}")
    return index(fields_of(x, space), space.fields)  # type: ignore[no-any-return]


@element.register(DataclassSpace)
def _element(i: Any, space: DataclassSpace) -> Any:
    return space.cls(**element(i, space.fields))


@issubspace.register(DataclassSpace, DataclassSpace)
def _subset(a: DataclassSpace, b: DataclassSpace) -> bool:
    return issubclass(a.cls, b.cls) and all(
        name in a.fields.spaces and issubspace(a.fields[name], s) for name, s in b.fields.spaces.items()
    )


@intersect.register(DataclassSpace, DataclassSpace)
def _intersect(a: DataclassSpace, b: DataclassSpace) -> Any:
    if a.cls is not b.cls:
        raise TypeError(
            f"intersect: spaces of different dataclasses ({a.cls.__qualname__}, {b.cls.__qualname__})"
        )
    common = intersect(a.fields, b.fields)
    if isinstance(common, FiniteSet):  # empty
        return common
    return DataclassSpace(a.cls, dict(common.spaces))


# -- adapters ------------------------------------------------------------------------------------


# to_gymnasium: a ``gymnasium.spaces.Dict`` of the fields (in declaration order); its members are the
# dicts of field values, and ``from_gymnasium`` of it is the plain DictProduct; to_gym: the legacy
# ``gym.spaces.Dict`` of the fields (TypeError without gym)
delegate(DataclassSpace, lambda space: space.fields, to_gymnasium, to_gym)


@encode.register(DataclassSpace)
def _encode(x: Any, space: DataclassSpace) -> dict[str, Any]:
    """The member of ``to_gymnasium(space)`` for the instance ``x``: the dict of encoded fields."""
    return encode(fields_of(x, space), space.fields)  # type: ignore[no-any-return]


@decode.register(DataclassSpace)
def _decode(y: Any, space: DataclassSpace) -> Any:
    """The instance for a member ``y`` of ``to_gymnasium(space)`` (inverse of ``encode``)."""
    return space.cls(**decode(y, space.fields))
