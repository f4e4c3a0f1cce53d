"""The package's layers: the import-linter contracts of pyproject.toml hold, and the core's
registries (spacealg.core.arrays, spacealg.core.hooks) keep their laws.

``lint-imports`` checks every import, function-level ones included: the core imports no
subpackage above it, no subpackage is in an import cycle, and the light modules import
neither torch nor JAX. The second test plants a forbidden import in a copy of the package
and checks that the same command then fails, so the first one could fail too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spacealg.core import arrays, hooks

ROOT = Path(__file__).resolve().parent.parent
LINT = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [LINT, "--config", str(root / "pyproject.toml")],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )


needs_lint_imports = pytest.mark.skipif(not Path(LINT).is_file(),
                                        reason="lint-imports (import-linter) is not installed")


@needs_lint_imports
def test_contracts_hold() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@needs_lint_imports
@pytest.mark.parametrize(
    ("module", "planted", "broken"),
    [
        ("core/arrays.py", "spacealg.spaces import box", "spacealg.core.arrays -> spacealg.spaces.box"),
        # the checker's engine knows no kind; a kind does not read the registry (issue 35)
        ("testing/engine/runner.py", "spacealg.testing.kinds import aec",
         "spacealg.testing.engine.runner -> spacealg.testing.kinds.aec"),
        ("testing/kinds/parallel.py", "spacealg.testing import registry",
         "spacealg.testing.kinds.parallel -> spacealg.testing.registry"),
    ],
)
def test_an_import_upward_breaks_the_layers(tmp_path: Path, module: str, planted: str, broken: str) -> None:
    shutil.copytree(ROOT / "spacealg", tmp_path / "spacealg", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / "spacealg" / module
    path.write_text(path.read_text() + f"\n\ndef _upward() -> None:\n    from {planted}  # noqa: F401\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout and broken in result.stdout


@needs_lint_imports
def test_a_cycle_between_two_engine_modules_breaks_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "spacealg", tmp_path / "spacealg", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / "spacealg" / "testing" / "engine" / "literals.py"  # errors.py imports it
    back = "\n\ndef _back() -> None:\n    from spacealg.testing.engine import errors  # noqa: F401\n"
    path.write_text(path.read_text() + back)
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "No import cycle inside the checker" in result.stdout and "1 broken" in result.stdout


def test_import_spacealg_loads_no_array_library_nor_backend_operation() -> None:
    code = (
        "import sys, spacealg; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'jax', 'jaxlib') "
        "or m.startswith('spacealg.backends.') and m != 'spacealg.backends.arrays'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


# -- spacealg.core.arrays -------------------------------------------------------------------------

python_objects = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.binary(),
    hnp.arrays(hnp.scalar_dtypes(), hnp.array_shapes(min_dims=0, max_dims=3, max_side=3)),
)


@given(st.recursive(python_objects, lambda inner: st.lists(inner, max_size=3).map(tuple)
                    | st.dictionaries(st.text(max_size=2), inner, max_size=3), max_leaves=6))
def test_numpy_and_python_objects_belong_to_no_backend(obj: Any) -> None:
    assert arrays.backend_name(obj) is None


def test_a_registered_root_names_its_backend_through_tuples_and_dicts() -> None:
    arrays.register_array_root("fractions", "test-fractions")
    try:
        from fractions import Fraction

        x = Fraction(1, 3)
        assert arrays.backend_name(x) == "test-fractions"
        assert arrays.backend_name((x, 1)) == "test-fractions"
        assert arrays.backend_name({"a": [x]}) == "test-fractions"
        assert arrays.backend_name(np.zeros(2)) is None
    finally:
        del arrays._ROOTS["fractions"]
        arrays._ROOT_CACHE.clear()


def test_backend_implementations_load_once_and_are_found_by_function_and_backend() -> None:
    def function(x: Any) -> Any:
        return x

    loads: list[str] = []

    def load() -> None:
        loads.append("loaded")
        arrays.register_backend(function, "test-backend", lambda x: ("test-backend", x))

    arrays.register_backend_loader("test-backend", load)
    try:
        assert arrays.backend_implementation(function, "test-backend")(3) == ("test-backend", 3)
        assert arrays.backend_implementation(function, "test-backend")(4) == ("test-backend", 4)
        assert loads == ["loaded"]
        with pytest.raises(TypeError, match="no implementation for test-backend arrays"):
            arrays.backend_implementation(lambda: None, "test-backend")
        with pytest.raises(TypeError, match="function: no implementation for nowhere arrays"):
            arrays.backend_implementation(function, "nowhere")
    finally:
        arrays._IMPLEMENTATIONS.pop((function, "test-backend"), None)
        arrays._LOADERS.pop("test-backend", None)


def test_torch_calls_reach_the_implementations_the_backends_registered() -> None:
    torch = pytest.importorskip("torch")
    import spacealg as sa

    space = sa.Box(0, 1, (3,))
    assert sa.isin(torch.zeros(2, 3), space).tolist() == [True, True]  # loads the table
    from spacealg.backends.arrays import BACKEND_ROOTS
    from spacealg.backends.operations import FUNCTIONS, OPERATIONS
    from spacealg.core.plan import kept_plan

    assert set(OPERATIONS) == {"sample", "isin", "clamp", "clamp_", "flatten_batch", "unflatten_batch"}
    assert hooks.sample_with_mask in FUNCTIONS
    for name in set(BACKEND_ROOTS.values()):
        for function, implementation in FUNCTIONS.items():
            registered = arrays.backend_implementation(function, name)
            assert (registered.func, registered.args) == (implementation, (name,))
    assert sa.isin(torch.ones(1, 3), space).tolist() == [True]  # the first call loaded the kinds' rules
    assert (sa.isin, "torch") in kept_plan(space).routes  # type: ignore[union-attr]  # the route, kept
    assert (sa.isin, "numpy") not in kept_plan(space).routes  # type: ignore[union-attr]
    assert sa.isin(np.ones((1, 3)), space).tolist() == [True]
    assert (sa.isin, "numpy") in kept_plan(space).routes  # type: ignore[union-attr]  # NumPy's, the same way


# -- spacealg.core.hooks --------------------------------------------------------------------------


@given(st.lists(st.integers(), max_size=4))
def test_a_defined_hook_is_its_definition(args: list[int]) -> None:
    hook = hooks.Hook("total", "the sum of its arguments")
    hook.define(lambda *xs: sum(xs))
    assert hook(*args) == sum(args)


def test_an_undefined_hook_raises_naming_itself() -> None:
    with pytest.raises(RuntimeError, match="nothing"):
        hooks.Hook("nothing", "never defined")()


def test_the_spaces_define_the_core_hooks() -> None:
    import spacealg as sa

    a, b = sa.Interval(0, 1), range(3)
    assert a * b == sa.product(a, b)
    assert b * a == sa.product(b, a)
    assert a**2 == sa.ArraySpace(a, 2)
    assert a + b == sa.OneOf(a, b)
    assert hooks.sample_with_mask.implementation is not None


def test_a_kind_rule_registered_after_a_route_was_chosen_serves_the_next_call() -> None:
    """Law: after ``register_kind_rule(op, cls, rule)``, the next torch call of ``op`` on a
    space of ``cls`` returns the rule's answer, though the space's plan chose a route before."""
    torch = pytest.importorskip("torch")
    import spacealg as sa

    class Ones(sa.Box):
        pass

    space = Ones(0, 1, (2,))
    batch = torch.zeros(3, 2)
    assert sa.isin(batch, space).tolist() == [True] * 3  # the per-leaf plan's route, kept
    try:
        arrays.register_kind_rule("isin", Ones, lambda k, b, s: k.xp.all(b == 1, axis=-1))
        assert sa.isin(batch, space).tolist() == [False] * 3
    finally:
        arrays._KIND_RULES.pop(("isin", Ones), None)
        arrays._FOUND.clear()


def test_numpy_calls_take_the_route_the_kind_registered() -> None:
    """Law: on NumPy data a kind's NumPy entry answers (``register_kind_rule(..., numpy=)``);
    without one, its rule over NumPy's kernel; a subclass's own implementation of the protocol
    function answers before the entry it inherits. The route is kept in the space's plan."""
    import spacealg as sa
    from spacealg.core.kernel import Kernel
    from spacealg.core.plan import kept_plan

    class Halves:
        """A kind of the test's own: its members are the arrays of 0.5 (of any shape)."""

    seen: list[Any] = []

    def rule(k: Any, batch: Any, space: Any) -> Any:
        seen.append(k)
        return k.xp.all(batch == 0.5, axis=-1)

    sa.contains.register(Halves)(lambda x, space: bool(np.all(np.asarray(x) == 0.5)))
    space = Halves()
    try:
        arrays.register_kind_rule("isin", Halves, rule)
        assert sa.isin(np.array([[0.5, 0.5], [0.5, 1.0]]), space).tolist() == [True, False]
        assert type(seen[0]) is Kernel and (sa.isin, "numpy") in kept_plan(space).routes  # type: ignore[union-attr]
        arrays.register_kind_rule("isin", Halves, rule, numpy=lambda batch, space: "entry")
        assert sa.isin(np.zeros((1, 2)), space) == "entry"

        class Box2(sa.Box):
            pass

        sa.isin.register(Box2)(lambda batch, space: "own")
        assert sa.isin(np.zeros((1, 2)), Box2(0, 1, (2,))) == "own"
        assert sa.isin(np.zeros((1, 2)), sa.Box(0, 1, (2,))).tolist() == [True]
    finally:
        arrays._KIND_RULES.pop(("isin", Halves), None)
        arrays._NUMPY_ENTRIES.pop(("isin", Halves), None)
        arrays._FOUND.clear()


def test_kinds_supply_numpy_code_only_through_their_kind_rules() -> None:
    """Law: every kind with batched rules (the leaf kinds, OneHot, Union, Difference, Dynamic)
    supplies its NumPy code one way, as a ``numpy=`` entry of its kind rule: the protocol
    function has no implementation of the class's own, and a NumPy call takes the route the
    kind registered (its entry, else its rule over NumPy's kernel), kept in the space's plan."""
    import functools

    import spacealg as sa
    from spacealg.core.kernel import NUMPY
    from spacealg.core.plan import interned, kept_plan
    from spacealg.spaces.dynamic import Dynamic

    spaces = [sa.Box(0.0, 1.0, (2,)), sa.Interval(0, 1), sa.Categorical([3, 4]), sa.FiniteSet(1, 5), range(4),
              sa.OneHot(3), sa.union(sa.Box(0, 1, (2,)), sa.Box(3, 4, (2,))),
              sa.difference(sa.Box(0, 4, (2,)), sa.Box(1, 2, (2,))), Dynamic(sa.Box(0, 1, (1, 2)), axes=0)]
    for space in spaces:
        for _ in range(2):  # the first call may load the backends' rules, which chooses the routes again
            x = sa.sample(space, 3, rng=0)
            sa.isin(x, space), sa.clamp(x, space), sa.clamp_(np.array(x, copy=True), space)
        # a range's plan is kept for the one range of its value (an earlier test's range(4), maybe)
        cls, routes = type(space), kept_plan(interned(space)).routes  # type: ignore[union-attr]
        for function in (sa.isin, sa.sample, sa.clamp, sa.clamp_):
            assert function.implementation_for(cls) is function.implementation_for(object), (cls, function.name)
            rule, found = arrays.kind_rule(function.name, cls), arrays.numpy_entry(function.name, cls)
            run = routes[function, "numpy"]
            if found is not None:
                assert run is found[0], (cls, function.name)
            elif function.name == "sample":
                assert run.__closure__ is not None and rule in [c.cell_contents for c in run.__closure__]
            else:
                assert isinstance(run, functools.partial) and (run.func, run.args) == (rule, (NUMPY,))


def test_a_registration_forgets_only_the_routes_of_its_class() -> None:
    """Law: registering a kind rule (or a protocol implementation) for class ``C`` makes the
    kept plans of ``C``'s instances, subclasses' included, choose their routes again, and
    leaves every other plan's routes as they were."""
    import spacealg as sa
    from spacealg.core.plan import kept_plan

    class Halves:
        """A kind of the test's own, with a subclass."""

    class Quarters(Halves):
        pass

    spaces = [sa.Box(0.0, 1.0, (2,)), Halves(), Quarters()]
    try:
        arrays.register_kind_rule("isin", Halves, lambda k, batch, space: k.xp.all(batch == 0.5, axis=-1))
        for space in spaces:
            for _ in range(2):
                sa.isin(np.full((1, 2), 0.5), space)
        plans = [kept_plan(space) for space in spaces]
        assert all((sa.isin, "numpy") in plan.routes for plan in plans)  # type: ignore[union-attr]
        arrays.register_kind_rule("isin", Halves, lambda k, batch, space: k.xp.any(batch == 0.5, axis=-1))
        assert [(sa.isin, "numpy") in plan.routes for plan in plans] == [True, False, False]  # type: ignore[union-attr]
        assert sa.isin(np.array([[0.5, 1.0]]), spaces[2]).tolist() == [True]  # the new rule answers
        sa.isin(np.full((1, 2), 0.5), spaces[1])
        sa.isin.register(Quarters)(lambda batch, space: "own")
        assert [(sa.isin, "numpy") in plan.routes for plan in plans] == [True, True, False]  # type: ignore[union-attr]
        assert sa.isin(np.zeros((1, 2)), spaces[2]) == "own"
    finally:
        arrays._KIND_RULES.pop(("isin", Halves), None)
        arrays._FOUND.clear()
