"""The laws every foreign adapter (dm_env, TorchRL, gymnax, Jumanji) obeys, as Hypothesis
checks shared by their test modules. An ecosystem is described by a :class:`Kit`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

import spacealg as sa
from spacealg.adapters.unbounded import unbounded_box
from spacealg.strategies import members
from spacealg.strategies.spaces import spaces

#: spacealg spaces that every adapter converts (or refuses with a TypeError).
convertible_spaces = spaces(
    leaves=("box", "range", "finite", "array", "interval"), composites=("tuple", "dict", "product"), max_depth=2
)
#: Gymnasium spaces of the classes every ecosystem has (Box, Discrete, MultiDiscrete, MultiBinary, Dict).
gymnasium_leaves = ("Box", "Discrete", "MultiDiscrete", "MultiBinary")


def from_gymnasium_spaces(to: Callable[[Any], Any], classes: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """Native specs: ``to(from_gymnasium(g))`` for random Gymnasium spaces ``g`` that ``to``
    converts (those it refuses with TypeError are tested with the spacealg spaces)."""

    def convert(g: Any) -> Any:
        if not sa.flatten_space(g):
            return None  # no leaf at all: its batches have no shape to check
        try:
            return to(sa.from_gymnasium(g))
        except TypeError:
            return None

    return sa.strategies.gymnasium_spaces(classes=classes).map(convert).filter(lambda s: s is not None)


class Shown:
    """A native spec with a plain ``repr`` (Hypothesis's pretty printer fails on some, such as
    TorchRL's Composite, and would hide the failure it reports)."""

    def __init__(self, spec: Any) -> None:
        self.spec = spec

    def __repr__(self) -> str:
        return repr(self.spec)


@dataclass(frozen=True)
class Kit:
    """An ecosystem: its adapters, its value mapping and its own membership test."""

    name: str
    from_: Callable[[Any], Any]
    to: Callable[[Any], Any]
    value: Callable[[Any, Any], Any]  # spacealg value (or encoded value) -> native value of spec
    valid: Callable[[Any, Any], bool]  # the ecosystem's own membership test: valid(spec, v)
    equal: Callable[[Any, Any], bool]  # equality of two native specs (class included)
    decode: Callable[[Any, Any], Any] = lambda v, spec: v  # native value of spec -> spacealg value


def wider(space: Any) -> Any:
    """A space of the same shapes and dtypes holding ``space``: its non-members are near misses."""
    if isinstance(space, sa.DictProduct):
        return sa.DictProduct([(k, wider(s)) for k, s in space._spaces.items()])
    if isinstance(space, sa.TupleProduct):
        return sa.TupleProduct(*(wider(s) for s in space._spaces))
    if isinstance(space, range):
        return unbounded_box((), np.dtype(np.int64))
    if isinstance(space, (sa.Box, sa.Categorical)):
        return unbounded_box(space.shape, space.dtype)
    if isinstance(space, sa.ArraySpace) and isinstance(space.space, range):
        return unbounded_box(space.dims, np.dtype(np.int64))
    return space


def target(kit: Kit, spec: Any) -> Any:
    """What the generic functions take for ``spec``: a plain tuple or list is a finite set of
    its items to spacealg, so a nest of specs in one goes through ``from_`` first."""
    return kit.from_(spec) if _holds_sequence(spec) else spec


def _holds_sequence(spec: Any) -> bool:
    """Whether a nest of specs has a tuple or list anywhere (to spacealg, a finite set)."""
    if isinstance(spec, (tuple, list)):
        return True
    return isinstance(spec, dict) and any(_holds_sequence(v) for v in spec.values())


def check_roundtrip(kit: Kit, spec: Any) -> None:
    """``to(from_(spec))`` equals ``spec``."""
    back = kit.to(kit.from_(spec))
    assert kit.equal(back, spec), f"{kit.name}: {spec!r} came back as {back!r}"


def check_membership(kit: Kit, spec: Any, data: st.DataObject) -> None:
    """``contains(v, spec)`` agrees with the ecosystem's own test and with the converted space,
    on members and near misses of the spec's shapes and dtypes."""
    space = kit.from_(spec)
    x = data.draw(members(space), label="member")
    v = kit.value(x, spec)
    assert kit.valid(spec, v), f"{kit.name}: a member {x!r} of {space!r} fails {spec!r}"
    assert sa.contains(v, target(kit, spec))
    y = data.draw(members(wider(space)), label="candidate")
    w = kit.value(y, spec)
    inside = sa.contains(y, space)
    assert kit.valid(spec, w) == inside, f"{kit.name}: {y!r}: {spec!r} says {not inside}, {space!r} {inside}"
    assert sa.contains(w, target(kit, spec)) == inside


def check_sample(kit: Kit, spec: Any, seed: int) -> None:
    """Samples of the spec and of the converted space pass the ecosystem's test."""
    drawn = sa.sample(target(kit, spec), rng=seed)
    v = drawn if target(kit, spec) is spec else kit.value(drawn, spec)
    assert kit.valid(spec, v) and sa.contains(v, target(kit, spec))
    assert kit.valid(spec, kit.value(sa.sample(kit.from_(spec), rng=seed), spec))
    space = kit.from_(spec)
    if isinstance(spec, (tuple, list, dict)) or (isinstance(space, (sa.DictProduct, sa.TupleProduct)) and not len(
        space._spaces
    )):
        return  # spacealg's products (and empty ones, whose batches have no shape): tested with them
    batch = sa.sample(spec, 3, rng=seed)
    assert sa.isin(batch, spec).shape == (3,) and sa.isin(batch, spec).all()


def check_from_spacealg(kit: Kit, space: Any, data: st.DataObject) -> None:
    """``to(space)`` is a spec holding every (encoded) member, whose conversion back holds
    them too; or a TypeError naming the space and the ecosystem."""
    try:
        spec = kit.to(space)
    except TypeError as error:
        assert str(error).startswith(f"to_{kit.name}: ") and "equivalent" in str(error), str(error)
        return
    x = data.draw(members(space), label="member")
    encoded = sa.encode(x, space)
    assert kit.valid(spec, kit.value(encoded, spec)), f"{kit.name}: {encoded!r} not in {spec!r} from {space!r}"
    assert sa.contains(kit.decode(kit.value(encoded, spec), spec), kit.from_(spec))


def nested_value(leaf: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A value mapping for plain nests (dicts, tuples, lists) of leaf specs."""

    def value(x: Any, spec: Any) -> Any:
        if isinstance(spec, Mapping):
            return {k: value(x[k], s) for k, s in spec.items()}
        if isinstance(spec, (tuple, list)):
            return type(spec)(value(v, s) for v, s in zip(x, spec))
        return leaf(x, spec)

    return value
