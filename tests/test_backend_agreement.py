"""One call, one answer: NumPy, torch (CPU) and JAX (eager, and under ``jax.jit``) agree, by Hypothesis.

The laws of each batched operation are tested per backend in tests/test_backends.py; here the
backends are compared with each other on the same generated batches (members and near-misses)
and on bad input:

- ``isin``: the same bools, and for a bad batch the same answer (False or the same exception type);
- ``clamp``: the same values, and the result dtype that spacealg/backends/clamp.py's table gives
  on NumPy, carried by the backend's dtype policy (spacealg/backends/arrays.py); NaN raises
  ValueError everywhere but under jit;
- ``clamp_``: the same values written, or the same exception type with nothing written;
- ``flatten_batch``/``unflatten_batch``: the same flat values and dtype, the same values back;
- ``sample``: the policy's dtype and the same shape for a Generator, a torch.Generator and a
  JAX key, every row a member;
- the emulation codec's batches: the same rows and the same fields back;
- bad input (a complex, bool or float batch where other numbers are expected, a trailing
  dimension too many, rows that differ between parts, a tuple short of a part, a dict missing
  or adding a key): the same outcome on every backend;
- unions and differences (``isin``, ``sample``, ``clamp``, ``clamp_``: one rule each over a
  kernel, spacealg/spaces/union.py and difference.py) as the other kinds, JAX's draws and
  clamps eagerly (their rejection reads its flags: not traceable under ``jax.jit``).

JAX runs without x64: it is compared with NumPy's answer on the values JAX holds (float32,
int32), and spaces its dtype policy refuses (ValueError naming x64) are left to
tests/test_backends.py.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spacealg as sa
from spacealg.backends import to_numpy
from spacealg.backends.arrays import backend_named
from spacealg.ops import flatten_batch, unflatten_batch
from spacealg.strategies import spaces
from spacealg.strategies.spaces import LEAF_KINDS
from tests.helpers import member_at, same, stacks, to_backend
from tests.test_backends import canon, perturbed, rng

#: the backend law tests' spaces, with the catalogued kinds (OneHot) among their leaves
stacking_spaces = spaces(leaves=(*LEAF_KINDS, "catalogued"), composites=("tuple", "dict", "product"),
                         max_depth=2).filter(stacks)


def _set_stacks(space: Any) -> bool:
    """Whether a union's or difference's batches are arrays (its parts', or ``a``'s, stack into
    one shape of numbers: spacealg.spaces.union.stacked) and it has members to draw."""
    from spacealg.spaces.union import stacked

    if not isinstance(space, (sa.Union, sa.Difference)):
        return False
    parts = space._spaces if isinstance(space, sa.Union) else (space.a,)
    if not (stacked(space, parts) and all(stacks(p) for p in parts)):
        return False
    try:
        sa.sample(space, ROWS, rng=0)
    except ValueError:  # empty, or too thin to draw from (a difference of measure zero)
        return False
    return True


#: unions and differences of the same leaves whose batches stack
set_spaces = spaces(leaves=(*LEAF_KINDS, "catalogued"), composites=("union", "difference"), max_depth=1).filter(
    _set_stacks)

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

#: JAX compiles each generated space's programs (eager ops too): 8 spaces a law (6 Gymnasium spaces) keep
#: the file near 30 s on one core; the in-place law, which has no JAX program to build, takes 40
AGREE = settings(max_examples=8, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
IN_PLACE = settings(AGREE, max_examples=40)
GYMNASIUM = settings(AGREE, max_examples=6)
ROWS = 5
gymnasium_spaces = spaces(flavour="gymnasium", max_depth=2).filter(stacks)


def outcome(f: Callable[[], Any]) -> tuple[str, Any]:
    """``("ok", value)`` or ``(exception type name, message)``: what a call did, to compare."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's casts of NaN and complex, said once per backend
            return "ok", f()
    except (ValueError, TypeError) as e:
        return type(e).__name__, str(e)


def kinds(outcomes: dict[str, tuple[str, Any]]) -> dict[str, str]:
    return {name: what for name, (what, _) in outcomes.items()}


def dtypes(batch: Any) -> Any:
    """The NumPy dtypes of a batch's leaves, in its structure (dict keys sorted)."""
    batch = canon(batch)
    if isinstance(batch, tuple):
        return tuple(dtypes(b) for b in batch)
    if isinstance(batch, dict):
        return {k: dtypes(b) for k, b in batch.items()}
    return np.asarray(batch).dtype


def on(name: str, host_dtypes: Any) -> Any:
    """The dtypes backend ``name`` holds for NumPy's ``host_dtypes`` (its documented policy)."""
    if isinstance(host_dtypes, tuple):
        return tuple(on(name, d) for d in host_dtypes)
    if isinstance(host_dtypes, dict):
        return {k: on(name, d) for k, d in host_dtypes.items()}
    if name == "numpy" or host_dtypes.kind == "O":  # objects (labels): NumPy's alone, compared by value
        return host_dtypes
    backend = backend_named(name)
    return backend.numpy_dtype(backend.dtype(host_dtypes))


def agree(got: Any, expected: Any) -> bool:
    """Whether dtypes ``got`` are ``expected`` (from :func:`on`), leaf by leaf; where NumPy holds
    objects (a set of labels mixing bools and numbers) a backend holds numbers."""
    if isinstance(expected, (tuple, dict)):
        keys = range(len(expected)) if isinstance(expected, tuple) else list(expected)
        return type(got) is type(expected) and len(got) == len(expected) and all(
            agree(got[k], expected[k]) for k in keys)
    return bool(expected.kind == "O" or got == expected)


def jax_refuses(space: Any) -> bool:
    """Whether JAX's dtype policy refuses ``space`` without x64 (tests/test_backends.py checks how),
    or XLA cannot hold its ends or items: subnormal floats, which it flushes to zero (a documented
    limit, spacealg/backends/ends.py and sets.py). Asked of a draw traced by ``jax.eval_shape``: an
    eager draw compiled the space's sample program for one row (0.3 to 1.5 s a space on the 2-core
    CPU), a program no law here runs again."""
    if _subnormal_ends(space):
        return True
    key = jax.random.key(0)
    try:  # a traced draw makes the policy's decisions as an eager one, and compiles nothing
        jax.eval_shape(lambda k: sa.sample(space, 1, rng=k), key)
        return False
    except ValueError as e:
        if "x64" in str(e):
            return True
    except jax.errors.ConcretizationTypeError:
        pass
    try:  # not decided by a trace (a union's or difference's draw reads its rejection's flags): drawn
        sa.sample(space, 1, rng=key)
    except ValueError as e:
        if "x64" in str(e):
            return True
        raise
    return False


def _subnormal_ends(space: Any) -> bool:
    from spacealg.core.leaf import leaf as leaf_model
    from spacealg.core.plan import plan_for

    tiny = np.finfo(np.float32).smallest_normal
    for leaf_space in plan_for(space).leaf_spaces():
        leaf = leaf_model(leaf_space)
        if leaf is None:  # a kind with its own rules (OneHot): bounds 0 and 1
            continue
        for values in (leaf.value_low, leaf.value_high, leaf.numbers):
            v = np.asarray(values if values is not None else [], dtype=np.float64)
            if ((v != 0) & (np.abs(v) < tiny)).any():
                return True
    return False


def near_misses(space: Any, seed: int) -> Any:
    """A NumPy batch of ``space``: members with some entries moved out (NaN among them)."""
    return perturbed(sa.sample(space, ROWS, rng=seed), seed)


def on_jax(host: Any) -> tuple[Any, Any]:
    """``host`` on JAX, and the values JAX holds moved back to NumPy (its reference input).

    Subnormal floats become 0 first: XLA flushes them to zero, so JAX's comparisons cannot
    see them (a documented limit: spacealg/backends/sets.py)."""
    held = to_backend("jax", _without_subnormals(host))
    return held, canon(to_numpy(held))


def _without_subnormals(batch: Any) -> Any:
    if isinstance(batch, tuple):
        return tuple(_without_subnormals(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _without_subnormals(b) for k, b in batch.items()}
    a = np.asarray(batch)
    if a.dtype.kind != "f":
        return a
    tiny = np.finfo(np.float32).smallest_normal  # JAX holds float64 as float32 (no x64)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(a) < tiny, np.zeros_like(a), a)


# -- isin ---------------------------------------------------------------------------------------


@AGREE
@given(space=stacking_spaces, seed=st.integers(0, 2**16))
def test_isin_gives_the_same_bools_on_every_backend(space: Any, seed: int) -> None:
    host = near_misses(space, seed)
    expected = np.asarray(sa.isin(host, space))
    assert np.array_equal(to_numpy(sa.isin(to_backend("torch", host), space)), expected)
    if jax_refuses(space):
        return
    held, reference = on_jax(host)
    expected = np.asarray(sa.isin(reference, space))
    assert np.array_equal(to_numpy(sa.isin(held, space)), expected)
    assert np.array_equal(to_numpy(jax.jit(lambda b: sa.isin(b, space))(held)), expected)


# -- clamp and clamp_ ----------------------------------------------------------------------------


def _agrees_with(reference: tuple[str, Any], got: tuple[str, Any], name: str, exact: bool = True) -> None:
    """``got`` (backend ``name``) is ``reference`` (NumPy's): the same error type, or the same
    values (where ``exact``; else members) in the policy's dtypes."""
    assert got[0] == reference[0], (name, reference, got)
    if got[0] != "ok":
        return
    expected, result = canon(to_numpy(reference[1])), canon(to_numpy(got[1]))
    assert agree(dtypes(result), on(name, dtypes(expected))), name
    if exact:
        assert same(result, expected) if name != "jax" else same_on_xla(result, expected), name


def same_on_xla(result: Any, expected: Any) -> bool:
    """``same``, but for entries that differ only as XLA's floats may: where NumPy's answer is
    subnormal (or an end is), JAX's is the nearest float XLA keeps, 0 or the smallest normal
    (spacealg/backends/ends.py)."""
    if isinstance(expected, (tuple, dict)):
        keys = range(len(expected)) if isinstance(expected, tuple) else list(expected)
        return all(same_on_xla(result[k], expected[k]) for k in keys)
    a, b = np.asarray(result), np.asarray(expected)
    if same(a, b) or a.shape != b.shape or a.dtype.kind != "f":
        return same(a, b)
    tiny = np.finfo(a.dtype).smallest_normal
    apart = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    return bool((np.abs(a[apart]) <= tiny).all() and (np.abs(b[apart]) <= tiny).all())


def _dtype_kept(host_dtypes: Any, name: str) -> bool:
    """Whether backend ``name`` holds every one of ``host_dtypes`` as it is (then its values are
    NumPy's to the bit; a narrower float steps open ends by its own spacing)."""
    return bool(on(name, host_dtypes) == host_dtypes)


@AGREE
@given(space=stacking_spaces, seed=st.integers(0, 2**16))
def test_clamp_gives_the_same_values_and_dtypes_on_every_backend(space: Any, seed: int) -> None:
    host = near_misses(space, seed)
    reference = outcome(lambda: sa.clamp(host, space))
    _agrees_with(reference, outcome(lambda: sa.clamp(to_backend("torch", host), space)), "torch")
    if jax_refuses(space):
        return
    held, values = on_jax(host)
    reference = outcome(lambda: sa.clamp(values, space))
    exact = reference[0] != "ok" or _dtype_kept(dtypes(reference[1]), "jax")
    got = outcome(lambda: sa.clamp(held, space))
    _agrees_with(reference, got, "jax", exact)
    if got[0] == "ok":
        assert bool(to_numpy(sa.isin(got[1], space)).all())
        jitted = jax.jit(lambda b: sa.clamp(b, space))(held)
        assert same(canon(jitted), canon(got[1])) and dtypes(jitted) == dtypes(got[1])


@GYMNASIUM
@given(space=gymnasium_spaces, seed=st.integers(0, 2**16))
def test_a_gymnasium_spaces_clamp_and_sample_agree_on_every_backend(space: Any, seed: int) -> None:
    """On Gymnasium spaces (their NumPy path is Gymnasium's: adapters/native.py) clamp gives
    the same values in the space's dtypes, and sample the policy's dtypes."""
    test_clamp_gives_the_same_values_and_dtypes_on_every_backend.hypothesis.inner_test(space, seed)
    test_sample_has_the_policy_dtypes_and_shapes_and_members_on_every_backend.hypothesis.inner_test(space, seed)


@IN_PLACE
@given(space=stacking_spaces, seed=st.integers(0, 2**16), data=st.data())
def test_clamp_in_place_writes_the_same_values_or_raises_alike_writing_nothing(
        space: Any, seed: int, data: Any) -> None:
    host = data.draw(st.sampled_from([near_misses(space, seed), *bad_batches(near_misses(space, seed))]))
    written, raised = {}, {}
    for name in ("numpy", "torch"):
        batch = to_backend(name, host)
        before = canon(to_numpy(batch))
        raised[name] = outcome(lambda: sa.clamp_(batch, space))[0]  # noqa: B023 - called at once
        written[name] = canon(to_numpy(batch))
        if raised[name] != "ok":
            assert same(written[name], before), (name, "wrote before raising")
    assert raised["numpy"] == raised["torch"]
    assert same(written["numpy"], written["torch"])
    held = to_backend("jax", host)
    if sa.backends.backend_name(held) == "jax":  # (a tuple/dict without parts is no JAX batch)
        with pytest.raises(TypeError, match="immutable"):  # JAX: never in place
            sa.clamp_(held, space)


# -- flatten_batch / unflatten_batch, sample ------------------------------------------------------


def _draw(name: str, space: Any, seed: int) -> Any:
    return sa.sample(space, ROWS, rng=rng(name, seed))


def _batch_on(name: str, space: Any, seed: int) -> Any:
    """A batch of members of ``space`` on backend ``name``, for the laws that are not about
    drawing: the backend's own draw on NumPy and torch; on JAX, NumPy's draw held by JAX
    (:func:`on_jax`), in the policy's dtypes as JAX's draws are. A JAX draw compiles the space's
    sample program (0.3 to 1.5 s a space on the 2-core CPU, where the whole law costs less); JAX's
    draws have their laws in the sample tests above and below, under ``jit`` too."""
    if name != "jax":
        return _draw(name, space, seed)
    held, _ = on_jax(_draw("numpy", space, seed))
    return held


@AGREE
@given(space=stacking_spaces, seed=st.integers(0, 2**16))
def test_sample_has_the_policy_dtypes_and_shapes_and_members_on_every_backend(space: Any, seed: int) -> None:
    host = _draw("numpy", space, seed)
    names = ["torch"] if jax_refuses(space) else ["torch", "jax"]
    for name in names:
        batch = _draw(name, space, seed)
        empty = not _has_leaf(batch)  # a product without leaves: (), {}, {"_": ()} everywhere
        assert sa.backends.backend_name(batch) == (None if empty else name)
        assert agree(dtypes(batch), on(name, dtypes(host))), name
        assert same(_shapes(canon(to_numpy(batch))), _shapes(canon(host))), name
        moved = canon(to_numpy(batch))
        if dtypes(moved) == dtypes(canon(host)):  # (a Gymnasium space's contains refuses a promoted dtype)
            assert all(sa.contains(member_at(moved, i), space) for i in range(ROWS)), name
    if "jax" in names:
        jitted = jax.jit(lambda key: sa.sample(space, ROWS, rng=key))(rng("jax", seed))
        assert same(canon(jitted), canon(_draw("jax", space, seed)))


def _has_leaf(batch: Any) -> bool:
    if isinstance(batch, (tuple, dict)):
        return any(_has_leaf(b) for b in (batch.values() if isinstance(batch, dict) else batch))
    return True


def _shapes(batch: Any) -> Any:
    if isinstance(batch, tuple):
        return tuple(_shapes(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _shapes(b) for k, b in batch.items()}
    return np.asarray(np.shape(batch))


@AGREE
@given(space=stacking_spaces, seed=st.integers(0, 2**16))
def test_flatten_and_unflatten_batch_agree_on_every_backend(space: Any, seed: int) -> None:
    """Flat values and dtype equal NumPy's; unflattening gives NumPy's values in the policy's
    dtypes, the same as ``sample``'s (a round trip keeps dtypes)."""
    names = ["numpy", "torch"] if jax_refuses(space) else ["numpy", "torch", "jax"]
    for name in names:
        batch = _batch_on(name, space, seed)
        host = canon(to_numpy(batch))
        expected = flatten_batch(host, space)
        flat = flatten_batch(batch, space)
        assert np.array_equal(to_numpy(flat), expected) and to_numpy(flat).dtype == on(name, expected.dtype)
        back = unflatten_batch(flat, space)
        reference = unflatten_batch(expected, space)
        assert same(canon(to_numpy(back)), canon(reference)), name
        assert agree(dtypes(back), on(name, dtypes(reference))), name
        if name == "jax":
            jitted = jax.jit(lambda b: unflatten_batch(flatten_batch(b, space), space))(batch)
            assert same(canon(jitted), canon(back))


# -- the emulation codec --------------------------------------------------------------------------


@AGREE
@given(space=stacking_spaces, seed=st.integers(0, 2**16))
def test_emulated_rows_and_their_fields_agree_on_every_backend(space: Any, seed: int) -> None:
    from spacealg.backends import emulate_tensor, nativize_tensor
    from spacealg.emulation import Codec

    codec = Codec(space)
    for name in ("torch", "jax"):
        if name == "jax" and jax_refuses(space):
            continue
        batch = _batch_on(name, space, seed)
        host = canon(to_numpy(batch))
        expected = codec.new_buffer(ROWS)
        codec.emulate_batch(expected, host)
        made = outcome(lambda: emulate_tensor(batch, space))  # noqa: B023 - called at once
        if name == "jax" and made[0] == "ValueError" and "x64" in made[1]:
            continue  # a float64 field: JAX holds it only with x64 (its documented policy)
        assert made[0] == "ok", made
        rows = made[1]
        assert np.array_equal(to_numpy(rows), expected), name
        native = nativize_tensor(rows, space)
        fields = codec.nativize_batch(expected)
        assert same(canon(to_numpy(native)), canon(fields)), name
        assert agree(dtypes(native), on(name, dtypes(fields))), name


# -- unions and differences ---------------------------------------------------------------------


@AGREE
@given(space=set_spaces, seed=st.integers(0, 2**16))
def test_unions_and_differences_isin_clamp_and_sample_agree_on_every_backend(space: Any, seed: int) -> None:
    """The same bools (JAX under jit too); the same clamped values in the policy's dtypes, or
    the same exception type (a difference's nearest member in ``b`` is not decided anywhere);
    draws in the policy's dtypes and shapes, every row a member, the same seed the same draws."""
    host = near_misses(space, seed)
    expected = np.asarray(sa.isin(host, space))
    assert np.array_equal(to_numpy(sa.isin(to_backend("torch", host), space)), expected)
    _agrees_with(outcome(lambda: sa.clamp(host, space)),
                 outcome(lambda: sa.clamp(to_backend("torch", host), space)), "torch")
    names = ["torch"] if jax_refuses(space) else ["torch", "jax"]
    if "jax" in names:
        held, values = on_jax(host)
        expected = np.asarray(sa.isin(values, space))
        assert np.array_equal(to_numpy(sa.isin(held, space)), expected)
        assert np.array_equal(to_numpy(jax.jit(lambda b: sa.isin(b, space))(held)), expected)
        reference = outcome(lambda: sa.clamp(values, space))
        exact = reference[0] != "ok" or _dtype_kept(dtypes(reference[1]), "jax")
        _agrees_with(reference, outcome(lambda: sa.clamp(held, space)), "jax", exact)
    drawn = _draw("numpy", space, seed)
    for name in names:
        batch = _draw(name, space, seed)
        assert sa.backends.backend_name(batch) == name
        assert agree(dtypes(batch), on(name, dtypes(drawn))), name
        moved = canon(to_numpy(batch))
        assert moved.shape == np.shape(drawn), name
        assert all(sa.contains(member_at(moved, i), space) for i in range(ROWS)), name
        assert same(canon(to_numpy(_draw(name, space, seed))), moved), name


@AGREE
@given(space=set_spaces, seed=st.integers(0, 2**16), data=st.data())
def test_unions_and_differences_clamp_in_place_alike_writing_nothing_on_error(space: Any, seed: int, data: Any) -> None:
    test_clamp_in_place_writes_the_same_values_or_raises_alike_writing_nothing.hypothesis.inner_test(space, seed, data)


# -- bad input ------------------------------------------------------------------------------------


def bad_batches(host: Any) -> list[Any]:
    """Batches that are not batches of the space ``host`` is a batch of, or hold other numbers:
    complex, bool and float entries, a trailing dimension too many, parts with different rows,
    a tuple short of a part, a dict missing or adding a key."""
    def leaves(batch: Any, f: Callable[[np.ndarray], np.ndarray]) -> Any:
        if isinstance(batch, tuple):
            return tuple(leaves(b, f) for b in batch)
        if isinstance(batch, dict):
            return {k: leaves(b, f) for k, b in batch.items()}
        return f(np.asarray(batch))

    bad = [leaves(host, lambda a: a.astype(np.complex128)), leaves(host, lambda a: a != 0),
           leaves(host, lambda a: a.astype(np.float64)), leaves(host, lambda a: a[..., None])]
    if isinstance(host, tuple):
        bad.append(host[:-1])
        if not isinstance(host[0], (tuple, dict)):
            bad.append((np.asarray(host[0])[:2], *host[1:]))
    if isinstance(host, dict):
        first = next(iter(host))
        bad.append({k: b for k, b in host.items() if k != first})
        bad.append({**host, "zz_not_a_key": host[first]})
    return bad


@AGREE
@given(space=stacking_spaces, seed=st.integers(0, 2**16), data=st.data())
def test_bad_input_has_the_same_outcome_on_every_backend(space: Any, seed: int, data: Any) -> None:
    """isin, clamp and flatten_batch of a bad batch: False (isin), a value, or the same
    exception type, whichever backend holds it; JAX compared on the values it holds."""
    host = data.draw(st.sampled_from(bad_batches(near_misses(space, seed))))
    jax_too = not jax_refuses(space)
    for f in (sa.isin, sa.clamp, flatten_batch):
        reference = outcome(lambda: f(host, space))  # noqa: B023 - called at once
        _agrees_with(reference, outcome(lambda: f(to_backend("torch", host), space)), "torch")  # noqa: B023
        if jax_too:
            held, values = on_jax(host)
            reference = outcome(lambda: f(values, space))  # noqa: B023
            exact = reference[0] != "ok" or _dtype_kept(dtypes(reference[1]), "jax")
            _agrees_with(reference, outcome(lambda: f(held, space)), "jax", exact)  # noqa: B023


# -- the defects these tests found, each as it was -------------------------------------------------



@pytest.mark.parametrize("name", ["numpy", "torch", "jax"])
@pytest.mark.parametrize("function", [sa.isin, sa.clamp, sa.clamp_, flatten_batch], ids=lambda f: f.__name__)
def test_a_batch_without_the_products_parts_is_a_value_error_on_every_backend(name: str, function: Any) -> None:
    """NumPy's clamp/clamp_ of a product raised TypeError for a dict missing a key or a tuple
    short of a part, where isin (NumPy's too) and every torch/JAX operation raise ValueError."""
    space = sa.DictProduct(a=sa.Interval(0, 1), b=sa.TupleProduct(range(3), sa.Box(0.0, 1.0, (2,))))
    host = sa.sample(space, 4, rng=0)
    for bad in ({"a": host["a"]}, {**host, "c": host["a"]}, {"a": host["a"], "b": host["b"][:1]}):
        if function is sa.clamp_ and name == "jax":
            continue  # JAX: TypeError, immutable (tested above)
        with pytest.raises(ValueError):
            function(to_backend(name, bad), space)


@pytest.mark.parametrize("name", ["numpy", "torch"])
def test_clamp_in_place_of_an_array_space_checks_the_trailing_shape(name: str) -> None:
    """NumPy's clamp_ of an ArraySpace clamped a (n, 2, 1) batch of ArraySpace(range(3), 2)
    entry by entry (its clamp, and torch's clamp_, raise ValueError)."""
    space = sa.TupleProduct(sa.Interval(0, 1), sa.ArraySpace(range(3), 2))
    batch = to_backend(name, (np.full((4, 1), 5.0), np.full((4, 2, 1), 7)))
    before = canon(to_numpy(batch))
    with pytest.raises(ValueError, match="shape"):
        sa.clamp_(batch, space)
    assert same(canon(to_numpy(batch)), before)  # nothing written


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # (isin of complex: NumPy says it drops 0j)
@pytest.mark.parametrize("space", [sa.FiniteSet(1.5, 2), bool, sa.FiniteSet(False, True)], ids=repr)
def test_a_complex_batch_flattens_alike_on_every_backend(space: Any) -> None:
    """torch's flatten_batch of a complex batch of a finite set raised KeyError (torch.complex128
    had no NumPy dtype in the backend's table); NumPy and JAX read the values."""
    host = np.asarray(sa.sample(space, 4, rng=0)).astype(np.complex128)
    expected = flatten_batch(host, space)
    assert np.array_equal(to_numpy(flatten_batch(to_backend("torch", host), space)), expected)
    assert np.array_equal(to_numpy(flatten_batch(to_backend("jax", host), space)), expected)


@pytest.mark.parametrize("space", [sa.FiniteSet(False, True), bool, sa.DictProduct(a=sa.FiniteSet(True, False))],
                         ids=repr)
def test_bool_items_come_back_as_bools_on_every_backend(space: Any) -> None:
    """NumPy's unflatten_batch and nativize_batch of a set of bools gave an object array (the
    leaf's item array excluded bools), torch and JAX bools, as sample does everywhere."""
    from spacealg.emulation import Codec

    for name in ("numpy", "torch", "jax"):
        batch = _draw(name, space, 3)
        assert _leaf_kinds(unflatten_batch(flatten_batch(batch, space), space)) == {"b"}, name
    codec = Codec(space)
    rows = codec.new_buffer(4)
    codec.emulate_batch(rows, sa.sample(space, 4, rng=1))
    assert _leaf_kinds(codec.nativize_batch(rows)) == {"b"}


def _leaf_kinds(batch: Any) -> set[str]:
    found = dtypes(batch)
    leaves = found.values() if isinstance(found, dict) else [found]
    return {d.kind for d in leaves}


@pytest.mark.parametrize("name", ["torch", "jax"])
@pytest.mark.parametrize("space", [sa.Box(False, True, (), np.bool_), sa.Box(0.0, 1.0, (2, 3), np.float32),
                                   sa.TupleProduct(sa.Box(False, True, (2,), np.bool_), range(3))], ids=repr)
def test_emulated_rows_have_numpys_shape_and_bytes(name: str, space: Any) -> None:
    """emulate_tensor gave (n, width) rows for a space kept as is, where NumPy's buffer is
    (n, *shape) ((n,) for a scalar Box); and JAX could not bitcast a bool field to bytes."""
    from spacealg.backends import emulate_tensor, nativize_tensor
    from spacealg.emulation import Codec

    codec = Codec(space)
    batch = _draw(name, space, 5)
    expected = codec.new_buffer(ROWS)
    codec.emulate_batch(expected, canon(to_numpy(batch)))
    rows = emulate_tensor(batch, space)
    assert to_numpy(rows).shape == expected.shape and np.array_equal(to_numpy(rows), expected)
    assert same(canon(to_numpy(nativize_tensor(rows, space))), canon(codec.nativize_batch(expected)))


@pytest.mark.parametrize("name", ["numpy", "torch", "jax"])
def test_flatten_batch_checks_every_parts_shape_on_every_backend(name: str) -> None:
    """NumPy's flatten_batch read a product's batch shape off its first part and reshaped the
    others by their size: parts with other rows, or a trailing dimension too many, flattened."""
    space = sa.TupleProduct(sa.Interval(0, 1), sa.ArraySpace(bool, 2))
    for bad in ((np.zeros((4, 1)), np.zeros((4, 2, 1), bool)), (np.zeros(4), np.zeros((2, 2), bool)),
                np.zeros((4, 0, 0, 3, 1), np.int8)):
        target = space if isinstance(bad, tuple) else sa.Box(0, 0, (0, 0, 3), np.int8)
        with pytest.raises(ValueError):
            flatten_batch(to_backend(name, bad), target)


@pytest.mark.parametrize("name", ["numpy", "torch", "jax"])
def test_an_empty_product_samples_its_one_member_on_every_backend(name: str) -> None:
    """torch and JAX raised IndexError sampling a product without parts (the plan has no
    leaf); NumPy gives its one member, () or {}, alone or as a part."""
    import gymnasium.spaces as gs

    for space, empty in ((sa.TupleProduct(), ()), (sa.DictProduct(), {}), (gs.Tuple(()), ()), (gs.Dict({}), {})):
        assert sa.sample(space, 3, rng=rng(name, 0)) == empty
        assert sa.sample(space, rng=rng(name, 0)) == empty
    part = sa.sample(sa.TupleProduct(sa.DictProduct(), range(3)), 4, rng=rng(name, 0))
    assert part[0] == {} and tuple(part[1].shape) == (4,)


@pytest.mark.parametrize("name", ["torch", "jax"])
def test_a_gymnasium_spaces_clamp_is_in_its_dtype_on_every_backend(name: str) -> None:
    """clamp of a Gymnasium space answers in the space's dtype on NumPy (adapters/native.py);
    torch and JAX answered in the table's dtype of a spacealg space (a MultiBinary clamp was
    int64 for an int64 batch, a float16 Box's float64 for a float64 batch)."""
    import gymnasium.spaces as gs

    space = gs.Dict(mb=gs.MultiBinary(2), box=gs.Box(0.0, 1.0, (2,), np.float16),
                    md=gs.MultiDiscrete([3, 4], dtype=np.int16), d=gs.Discrete(3, start=1))
    for entries in (np.array([[0, 3], [1, -1]]), np.array([[0.2, 3.0], [1.0, -1.5]])):
        host = {"mb": entries, "box": entries.astype(np.float64), "md": entries, "d": entries[:, 0]}
        expected = sa.clamp(host, space)
        got = sa.clamp(to_backend(name, host), space)
        for key in host:
            assert to_numpy(got[key]).dtype == on(name, expected[key].dtype), key
            assert np.array_equal(to_numpy(got[key]), expected[key]), key
