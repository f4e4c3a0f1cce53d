"""The declared spaces of JAX environment libraries as spacealg spaces, and membership of
recorded batches in them (what :func:`~spacealg.testing.check_jax_env` asks of a batch).

:func:`converted` turns a declared space (gymnax space, Jumanji spec, spacealg space) into
the spacealg space equal to it as a set; :func:`members` decides, for a batch of values with
leading axes (examples, steps), which are members: the values (:func:`spacealg.isin` on the
converted space, leaf by leaf), the shapes, and the declared dtypes (JAX's dtype rule: a
64-bit declaration holds as its 32-bit form without x64). :func:`confirm` re-decides one
value with :func:`spacealg.contains` on the converted space and on the declared space as
the library reads it (gymnax's ``space.contains``, Jumanji's ``spec.validate``): the
evidence printed with a failure.

Laws: ``members(batch, space)[i]`` is True exactly when value ``i`` is in ``space`` with the
declared dtype; a value :func:`members` rejects is rejected by ``contains`` on the converted
space, or has another dtype than the declared one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from spacealg.core.cache import IdentityCache

__all__ = ["confirm", "converted", "dtype_problem", "is_member", "leaves", "members", "plain"]

_CONVERTED: IdentityCache[Any] = IdentityCache("JAX libraries' declared spaces, converted")


def converted(space: Any) -> Any:
    """The spacealg space equal to ``space`` (gymnax space, Jumanji spec, Craftax or JaxMARL
    space, or spacealg space), converted once per declared space (held by identity, as
    spacealg holds plans), so that a check's every example reads the same space and plan.
    Law: ``converted(s) is converted(s)`` while ``s`` lives."""
    return _CONVERTED.get_or_compute(space, _convert)


def _convert(space: Any) -> Any:
    roots = {c.__module__.partition(".")[0] for c in type(space).__mro__}
    if "gymnax" in roots:
        from spacealg.adapters.gymnax import from_gymnax

        return from_gymnax(space)
    if "jumanji" in roots:
        from spacealg.adapters.jumanji import from_jumanji

        return from_jumanji(space)
    from spacealg.adapters.lookalikes import from_lookalike, is_lookalike

    if is_lookalike(space):  # Craftax's and JaxMARL's copies of gymnax's spaces
        return from_lookalike(space)
    if isinstance(space, Mapping) and space and not _is_space(space):  # JaxMARL's spaces, one per agent
        from spacealg.spaces.product import DictProduct

        return DictProduct([(k, converted(v)) for k, v in space.items()])
    from spacealg.core.generic import as_space

    return as_space(space)


def _is_space(value: Any) -> bool:
    from spacealg.spaces.product import DictProduct

    return isinstance(value, DictProduct)


def _fields(value: Any, keys: Any) -> dict[Any, Any]:
    """``{k: value's field k}``: a mapping's item, else an attribute (a NamedTuple's, a
    dataclass's). KeyError or AttributeError where one is missing, whatever the key."""
    if isinstance(value, Mapping):
        return {k: value[k] for k in keys}
    if not all(isinstance(k, str) for k in keys):
        raise AttributeError(f"a {type(value).__name__} has no fields named {list(keys)!r}")
    return {k: getattr(value, k) for k in keys}


def plain(value: Any, space: Any) -> Any:
    """``value`` in the structure the converted ``space`` takes: dicts for named products
    (a NamedTuple or dataclass read by its field names), tuples, numpy arrays at the leaves.
    KeyError/AttributeError where a field is missing."""
    from spacealg.spaces.product import DictProduct, TupleProduct

    if isinstance(space, DictProduct):
        return {k: plain(v, space[k]) for k, v in _fields(value, space.keys()).items()}
    if isinstance(space, TupleProduct):
        return tuple(plain(v, s) for v, s in zip(value, space._spaces))
    return np.asarray(value)


def leaves(value: Any, space: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """``(path, leaf space, leaf value)`` of a :func:`plain` value, depth first."""
    from spacealg.spaces.product import DictProduct, TupleProduct

    if isinstance(space, DictProduct):
        for k in list(space.keys()):  # iterating a DictProduct gives its members
            yield from leaves(value[k], space[k], f"{path}.{k}" if path else str(k))
    elif isinstance(space, TupleProduct):
        for i, s in enumerate(space._spaces):
            yield from leaves(value[i], s, f"{path}[{i}]")
    else:
        yield path, space, value


def _declared_dtype(space: Any) -> np.dtype | None:
    dtype = getattr(space, "dtype", None)
    if dtype is None:
        return None
    from spacealg.adapters.jax_dtypes import jax_dtype

    return jax_dtype(dtype)


def dtype_problem(value: Any, space: Any, lead: int = 0) -> str:
    """"" where every leaf of ``value`` (with ``lead`` leading axes) has the dtype its leaf
    space declares (JAX's dtype rule applied), else a sentence naming the first that does not."""
    try:
        parts = list(leaves(plain(value, space), space))
    except (KeyError, AttributeError, TypeError):
        return ""  # a structure problem: observation-in-space reports it
    for path, leaf, array in parts:
        expected = _declared_dtype(leaf)
        if expected is not None and array.dtype != expected:
            return f"{path or 'the value'} has dtype {array.dtype}, the space declares {expected}"
    return ""


def members(batch: Any, space: Any, lead: tuple[int, ...], dtypes: bool = True) -> tuple[np.ndarray, str]:
    """``(ok, why)``: ``ok`` a bool array of shape ``lead`` (the batch's leading axes), True
    where the value is a member of the converted ``space`` (with its declared dtypes unless
    ``dtypes=False``); ``why`` names the first leaf at fault ("" if none)."""
    from spacealg.core.protocol import isin

    ok = np.ones(lead, bool)
    try:
        value = plain(batch, space)
    except (KeyError, AttributeError, TypeError) as error:
        return np.zeros(lead, bool), f"the value does not have the space's structure ({type(error).__name__}: {error})"
    why = ""
    for path, leaf, array in leaves(value, space):
        name = path or "the value"
        expected = _declared_dtype(leaf)
        shape = tuple(getattr(leaf, "shape", None) or ())
        if array.shape[len(lead):] != shape:
            ok[...] = False
            why = why or f"{name} has shape {array.shape[len(lead):]}, the space {shape}"
            continue
        if dtypes and expected is not None and array.dtype != expected:
            ok[...] = False
            why = why or f"{name} has dtype {array.dtype}, the space declares {expected}"
            continue
        try:
            inside = np.asarray(isin(array, leaf), bool).reshape(lead)
        except (ValueError, TypeError) as error:
            inside = np.zeros(lead, bool)
            why = why or f"{name}: {error}"
        if not inside.all() and not why:
            why = f"{name} is outside {leaf!r}"
        ok &= inside
    return ok, why


def confirm(value: Any, declared: Any) -> str:
    """The verdicts of :func:`spacealg.contains` on the converted space and of the library's
    own membership test on the declared one, as a sentence for a failure's detail."""
    from spacealg.core.protocol import contains

    if isinstance(declared, Mapping) and not _is_space(declared):  # one space per agent
        try:
            parts = _fields(value, list(declared))
        except (KeyError, AttributeError) as error:
            return f"the value is a {type(value).__name__} without the space's entries ({error})"
        wrong = [k for k in declared if not is_member(parts[k], declared[k])]
        return "; ".join(f"{k!r}: {confirm(parts[k], declared[k])}" for k in wrong[:3])
    space = converted(declared)
    try:
        ours = bool(contains(plain(value, space), space))
    except Exception as error:  # pragma: no cover - contains never raises by contract
        ours = f"raised {type(error).__name__}"  # type: ignore[assignment]
    roots = {c.__module__.partition(".")[0] for c in type(declared).__mro__}
    if "jumanji" in roots:
        try:
            declared.validate(value)
            theirs = "passes"
        except Exception as error:
            theirs = f"raises {type(error).__name__}: {str(error).splitlines()[0][:200]}"
        return f"spacealg.contains(value, {type(space).__name__}) is {ours}; Jumanji's spec.validate(value) {theirs}"
    library = next(iter(roots & {"gymnax", "craftax", "jaxmarl"}), None)
    if library is not None:
        try:
            theirs = str(bool(declared.contains(value)))
        except Exception as error:
            theirs = f"raises {type(error).__name__}"
        return (f"spacealg.contains(value, {type(space).__name__}) is {ours}; {library}'s space.contains(value) "
                f"is {theirs}")
    return f"spacealg.contains(value, space) is {ours}"


def is_member(value: Any, declared: Any) -> bool:
    """Whether one value is in the declared space (converted), with its declared dtypes: the
    test the reproduction snippets assert."""
    import jax

    batch = jax.tree.map(lambda a: np.asarray(a)[None], value)
    return bool(members(batch, converted(declared), (1,))[0].all())
