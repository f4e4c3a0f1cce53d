"""Guards for what a wrapped environment hands back: an observation outside its declared
space, or a reward that is no number, is refused before anything is written.

``observation_writer(space, owner, row)`` gives ``write(x)``, which checks the observation
while copying it into ``row``: the observation codec's generated writer
(:func:`checked`) reads every level and leaf of ``x``,
tests each once with cheap exact tests (a dict/tuple of the right length, an int in range,
an array of the field's exact dtype and shape, bounds the dtype does not already imply,
no NaN) and only then stores. A value failing a cheap test goes to the precise check,
which decides by value (spacealg's membership: the right shape, values within the
bounds, integers where the space holds integers, whatever the storage dtype) and raises
:class:`~spacealg.env.APIUsageError` naming the environment (``owner``), the field
(``["pos"][1]``) and the value; a member in an unusual form (a list, an int16 for a
Discrete) is then written as usual. ``observation_guard(space, owner)`` is the same check
without the write (PettingZoo checks every agent's observation before writing any row).
Either way a refused step leaves the buffers as they were.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

import gymnasium.spaces as gs
import numpy as np

from spacealg.adapters.gymnasium import from_gymnasium
from spacealg.core.codegen import Generator
from spacealg.core.leaf import Form
from spacealg.core.protocol import contains
from spacealg.emulation.codec import Codec, Field, codec_for, read_leaves
from spacealg.env.errors import APIUsageError
from spacealg.spaces.box import Box

__all__ = ["flag_guard", "observation_guard", "observation_writer", "reward_guard"]

Check = Callable[[Any], None]

def _describe(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__qualname__}>"
    return text if len(text) <= 200 else text[:197] + "..."


def _refuse(owner: str, path: str, value: Any, space: Any) -> APIUsageError:
    return APIUsageError(
        f"{owner}: the observation{path} = {_describe(value)} (a {type(value).__qualname__}) "
        f"is not in its declared space {space!r}"
    )


def _by_value(space: Any, owner: str, path: str) -> Check:
    """The general rule: spacealg's membership by value in the converted space."""
    try:
        converted = from_gymnasium(space)
    except TypeError:
        converted = space

    def check(x: Any) -> None:
        if not contains(x, converted):
            raise _refuse(owner, path, x, space)

    return check


def _tuple(space: gs.Tuple, owner: str, path: str) -> Check:
    parts = [_checker(s, owner, f"{path}[{i}]") for i, s in enumerate(space.spaces)]
    n = len(parts)

    def check(x: Any) -> None:
        if not isinstance(x, (tuple, list)) or len(x) != n:
            raise _refuse(owner, path, x, space)
        for part, value in zip(parts, x):
            part(value)

    return check


def _dict(space: gs.Dict, owner: str, path: str) -> Check:
    parts = [(k, _checker(s, owner, f"{path}[{k!r}]")) for k, s in space.spaces.items()]
    n = len(parts)

    def check(x: Any) -> None:
        if not isinstance(x, dict) or len(x) != n:  # n keys, each of them found: the same keys
            raise _refuse(owner, path, x, space)
        try:
            for k, part in parts:
                part(x[k])
        except KeyError:
            raise _refuse(owner, path, x, space) from None

    return check


def _checker(space: Any, owner: str, path: str = "") -> Check:
    """The precise check of ``space``, level by level (its errors name the field)."""
    rules: dict[type, Callable[[Any, str, str], Check]] = {gs.Tuple: _tuple, gs.Dict: _dict}
    return rules.get(type(space), _by_value)(space, owner, path)


# -- the fast path: cheap exact tests compiled into the codec's writer ----------------------

_PACK = {("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q", ("u", 1): "B", ("u", 2): "H", ("u", 4): "I",
         ("u", 8): "Q", ("f", 2): "e", ("f", 4): "f", ("f", 8): "d", ("b", 1): "?"}  # struct codes by (kind, size)


class _Miss(Exception):  # noqa: N818 - not an error: the signal to take the slow path
    """A cheap test failed: the generated code takes the slow, precise way."""


def _pack_code(field: Field) -> str | None:
    """The struct code packing the field's entries: up to 16 entries of a native dtype."""
    small = field.size <= 16 and field.dtype.isnative and field.form is not Form.LABELS
    return _PACK.get((field.dtype.kind, field.dtype.itemsize)) if small else None


def _exact_code(field: Field) -> Callable[[Any], int]:
    """The position of a label that is an item of the same type (else ``_Miss``)."""
    lookup, items = field.lookup, field.items

    def code(x: Any) -> int:
        i = lookup[x]
        if type(items[i]) is not type(x):
            raise _Miss
        return i  # type: ignore[no-any-return]

    return code


def _in_bounds(entry: str, low: float, high: float, le: str) -> str | None:
    """The test of one float entry (False for NaN); None when nothing is to test."""
    if low == -math.inf and high == math.inf:
        return f"{entry} == {entry}" if le == "<=" else f"-inf < {entry} < inf"
    if low == -math.inf and le == "<=":
        return f"{entry} <= {high!r}"
    if high == math.inf and le == "<=":
        return f"{low!r} <= {entry}"
    return f"{low!r} {le} {entry} {le} {high!r}"


def _tests(field: Field, gen: Generator, a: str) -> tuple[list[str], list[str] | None]:
    """Lines raising ``_Miss`` unless ``a`` is surely a member in its usual form: an exact int
    in range, a float strictly inside, a label of its item's exact type (``a`` becomes its
    position), an array of the exact dtype and shape within the bounds its dtype does not
    imply and free of NaN (compared as Python numbers up to 16 entries, by numpy beyond);
    and the locals holding its values for ``struct.pack_into`` (None: stored by numpy)."""
    leaf, code = field.leaf, _pack_code(field)
    member, kind = field.form, leaf.dtype.kind
    packed = [a] if code else None
    if member is Form.INT:
        return [f"if type({a}) not in _INTS or not {int(field.low)} <= {a} <= {int(field.high)}: raise _Miss"], packed
    if member is Form.FLOAT:
        lo, hi = float(field.low), float(field.high)
        return [f"if type({a}) is not float or not {lo!r} < {a} < {hi!r}: raise _Miss"], packed
    if member is Form.LABEL:
        return [f"{a} = {gen.bind(_exact_code(field))}({a})"], packed
    if member is Form.LABELS:
        return ["raise _Miss"], None
    lines = [f"if type({a}) is not _ndarray or {a}.dtype is not {gen.bind(leaf.dtype)}"]
    low, high = field.low.reshape(-1), field.high.reshape(-1)
    if kind in "iu":
        info = np.iinfo(leaf.dtype)  # type: ignore[type-var]
        need = [lo > info.min or hi < info.max for lo, hi in zip(low, high)]  # none for a uint8 image
    else:
        need = [kind == "f"] * field.size
    le = "<=" if kind in "iu" or isinstance(leaf.space, Box) else "<"  # open intervals: strictly
    if code is None or not field.size or not field.shape or not all(need):  # shape not implied by unpacking
        lines[0] += f" or {a}.shape != {field.shape!r}"
    lines[0] += ": raise _Miss"
    if code is None:
        if any(need):
            below, above = (gen.bind(b.astype(leaf.dtype if kind in "iu" else np.float64)) for b in (low, high))
            lines.append(f"if not (({below} {le} {a}) & ({a} {le} {above})).all(): raise _Miss")
        return lines, None
    if not field.size:
        return lines, []
    entries = [f"{a}e{i}" for i in range(field.size)]
    names = iter(entries)

    def target(shape: tuple[int, ...]) -> str:  # nested like tolist(): unpacking checks the shape
        return next(names) if not shape else "(" + "".join(target(shape[1:]) + ", " for _ in range(shape[0])) + ")"

    lines.append(f"{target(field.shape)} = {a}.tolist()")
    if kind in "iu":
        tests = [f"{int(lo)} <= {e} <= {int(hi)}" for e, lo, hi, n in zip(entries, low, high, need) if n]
    else:
        floats = (_in_bounds(e, float(lo), float(hi), le) for e, lo, hi, n in zip(entries, low, high, need) if n)
        tests = [t for t in floats if t]
    return [*lines, *([f"if not ({' and '.join(tests)}): raise _Miss"] if tests else [])], entries


def _compile_checked(codec: Codec, write: bool) -> Callable[..., Any]:
    """``_make(_slow, out, _bytes, *views)`` returning :func:`checked`'s function: all tests,
    then the small fields' values packed into the row's bytes by one ``struct.pack_into``
    (gaps padded with zeros, written over by the numpy stores that follow), the others
    stored by numpy."""
    gen = Generator(f"{'writing' if write else 'checking'} {codec.space!r} ({codec.role})")
    gen.namespace.update(_Miss=_Miss, _INTS=(int, np.int64, np.int32), _ndarray=np.ndarray, inf=math.inf)
    fields = codec.fields
    tested = [_tests(fields[k], gen, f"a{k}") for k in range(len(fields))]
    body = read_leaves(gen, codec.layout.tree, lambda k, a: tested[k][0])
    stores, fmt, values, start, end = [], "=", [], None, 0
    for k, (field, (_, entries)) in enumerate(zip(fields, tested)):
        if entries is None:
            stores.append(f"v{k}[()] = a{k}")
            continue
        start = field.offset if start is None else start
        fmt += f"{field.offset - max(end, start)}x{field.size}{_pack_code(field)}"
        values += entries
        end = field.offset + field.nbytes
    if values:
        stores.insert(0, f"{gen.bind(struct.Struct(fmt).pack_into)}(_bytes, {start}, {', '.join(values)})")
    views = "".join(f", v{k}" for k in range(len(fields)))
    lines = ["def checked(x):", "    try:", *("        " + line for line in body),
             "    except Exception:", "        pass", "    else:", *("        " + line for line in stores * write),
             "        return out", "    return _slow(x)", "return checked"]
    return gen.function(f"def _make(_slow, out, _bytes{views if write else ''}):", lines)


def checked(codec: Codec, refuse: Callable[[Any], Any], out: Any = None) -> Callable[[Any], Any]:
    """``f(x)``: writes ``x`` into the row ``out`` (without ``out``, only checks it) when every
    level and leaf passes a cheap exact test (:func:`_tests`), after all of them and before
    any store; otherwise calls ``refuse(x)``, the precise check (it raises, naming the
    field, for a non-member), and then ``codec.emulate_into``. Law: the row changes only
    when ``refuse`` accepts ``x``.
    """
    make = codec.compiled(("checked", out is not None), lambda c: _compile_checked(c, out is not None))
    if out is None:
        return make(refuse, None, None)  # type: ignore[no-any-return]
    flat = codec.as_row(out, writing=True)
    if not flat.flags.c_contiguous:
        raise ValueError("emulation: a row to write checked must be contiguous")

    def slow(x: Any) -> Any:
        refuse(x)
        return codec.emulate_into(out, x)

    row_bytes = memoryview(flat).cast("B")  # type: ignore[arg-type]
    return make(slow, out, row_bytes, *(f.view(flat) for f in codec.fields))  # type: ignore[no-any-return]


def observation_guard(space: Any, owner: str) -> Check:
    """``check(x)``: None for a member of ``space``, else APIUsageError (see the module docstring)."""
    precise = _checker(space, owner)
    try:
        return checked(codec_for(space, "observation"), precise)
    except ValueError:  # no fixed-size layout (Text, Sequence, ...): the precise check alone
        return precise


def observation_writer(space: Any, owner: str, row: np.ndarray) -> Callable[[Any], Any]:
    """``write(x)``: ``x`` checked and written into ``row`` (see the module docstring)."""
    codec, precise = codec_for(space, "observation"), _checker(space, owner)
    try:
        return checked(codec, precise, row)
    except ValueError:  # a row numpy cannot see as flat (a strided user buffer): check, then copy
        check = checked(codec, precise)

        def write(x: Any) -> Any:
            check(x)
            if codec.layout.native:
                row[...] = x
                return row
            return codec.emulate_into(row, x)

        return write


REWARD_TYPES = (float, int, np.float32, np.float64, np.int64, np.int32)


def reward_guard(owner: str) -> Check:
    """``check(reward)``: a real number (Python or numpy, not a bool or a string) that is not
    NaN, or APIUsageError (a NaN reward would poison every return it enters)."""

    def check(reward: Any) -> None:
        if type(reward) in REWARD_TYPES or isinstance(reward, (np.integer, np.floating)) or (
            isinstance(reward, np.ndarray) and reward.shape in ((), (1,)) and reward.dtype.kind in "iuf"
        ):
            if not np.isnan(reward).any():
                return
            raise APIUsageError(f"{owner}: the reward is NaN")
        raise APIUsageError(
            f"{owner}: the reward {_describe(reward)} (a {type(reward).__qualname__}) is not a number"
        )

    return check


FLAG_TYPES = (bool, np.bool_)


def flag_guard(owner: str) -> Callable[[Any, str], None]:
    """``check(flag, name)``: a bool (Python or numpy), as Gymnasium's step API asserts for
    ``terminated``/``truncated``, or APIUsageError: ``"no"`` is not True, ``None`` not False."""

    def check(flag: Any, name: str) -> None:
        if type(flag) not in FLAG_TYPES:
            raise APIUsageError(f"{owner}: {name} = {_describe(flag)} (a {type(flag).__qualname__}) is not a bool")

    return check
