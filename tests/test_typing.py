"""The package is typed, and its types help users.

- mypy is clean on spacealg/ and py.typed ships with it;
- the generic functions and constructors have real signatures: ``mypy --strict`` rejects
  wrong calls (``sample(b, size="ten")``, ``contains(b)``, ``Box("a", 1)``,
  ``Interval(0, 1, closed="bogus")``, ...) and accepts right ones, with result types that
  follow the argument (checked with ``assert_type``);
- the stub ``spacealg/core/protocol.pyi`` agrees with the runtime declarations;
- at run time the generic functions are still multipledispatch Dispatchers.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest
from multipledispatch import Dispatcher

import spacealg
from spacealg.core import protocol

ROOT = Path(__file__).resolve().parents[1]
needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")


def test_py_typed_marker_is_packaged() -> None:
    assert (Path(spacealg.__file__).parent / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'spacealg = ["py.typed", "*.pyi", "**/*.pyi"]' in pyproject  # [tool.setuptools.package-data]


@needs_mypy
def test_mypy_is_clean_on_the_package(mypy_run: MypyRun) -> None:
    assert mypy_run.status in (0, 1), mypy_run.output  # 2: mypy itself failed
    errors = [line for line in mypy_run.output.splitlines() if line.startswith("spacealg") and ": error:" in line]
    assert not errors, mypy_run.output


# --- what users' type checkers see ---------------------------------------------------

# Each line marked ``# E: code`` must get a mypy --strict error of that code; no other
# line may get one.
WRONG = '''
import numpy as np
import spacealg as sa
from spacealg import ArraySpace, Box, Interval

b = Box(0, 1, (2,))
sa.sample(b, size="ten")  # E: call-overload
sa.sample()  # E: call-overload
sa.contains(b)  # E: call-arg
sa.contains(np.zeros(2), b, 3)  # E: call-arg
sa.isin(b)  # E: call-arg
sa.clamp(np.zeros(2))  # E: call-overload
sa.element("first", range(3))  # E: call-overload
sa.issubspace(b)  # E: call-arg
Box("a", 1)  # E: arg-type
Box(0, 1, shape="2")  # E: arg-type
Box(0, 1, (2,), dtype=3)  # E: arg-type
Interval(0, 1, closed="bogus")  # E: arg-type
Interval("0", 1)  # E: arg-type
ArraySpace(range(3), "2")  # E: arg-type
x: str = sa.sample(range(3))  # E: assignment
y: int = sa.sample(Interval(0, 1))  # E: assignment
z: bool = sa.cardinality(b)  # E: assignment
'''

RIGHT = '''
from typing import Any, Callable, Iterator
import gymnasium
import numpy as np
import numpy.typing as npt
import spacealg as sa
from spacealg import ArraySpace, Box, Interval
from spacealg.core.protocol import sample as protocol_sample
from spacealg.core.styles import Style
from typing_extensions import assert_type

b = Box(0, 1, (2,), dtype=np.float64)
Box(np.zeros(3), np.ones(3))
Box([0, 0], [1.5, 2])
Box(0, 255, shape=(96, 96, 3), dtype=np.uint8)
Box(0, 255, (2, 2), "uint8")
Interval(0, 1)
Interval(0.5, np.float32(2), closed="left")
Interval(np.int64(0), 10, "neither")
ArraySpace(range(3), 2, np.int64(3))
rng = np.random.default_rng(0)
foreign: Any = object()  # a torch.Generator or a JAX key: the result is Any

assert_type(sa.sample(b), npt.NDArray[Any])
assert_type(sa.sample(b, 10, rng=0), npt.NDArray[Any])
assert_type(sa.sample(Interval(0, 1)), float)
assert_type(sa.sample(Interval(0, 1), (3, 2), rng=rng), npt.NDArray[Any])
assert_type(sa.sample(range(3)), int)
assert_type(sa.sample(("a", "b")), str)
assert_type(sa.sample(["a", "b"], rng=np.int64(3)), str)
assert_type(sa.sample(bool), bool)
assert_type(sa.sample(gymnasium.spaces.Discrete(3)), np.int64)
assert_type(sa.sample(sa.TupleProduct(range(2), b)), tuple[Any, ...])
assert_type(sa.sample(sa.DictProduct(a=range(2)), 4), dict[Any, Any])
assert_type(sa.sample(b, rng=foreign), Any)
assert_type(sa.sample(b, 5, mask=None), npt.NDArray[Any])
assert_type(protocol_sample(range(3)), int)
assert_type(sa.contains(np.zeros(2), b), bool)
assert_type(0.5 in Interval(0, 1), bool)
assert_type(sa.isin(np.zeros((3, 2)), b), npt.NDArray[np.bool_])
assert_type(sa.clamp(np.zeros(2), b), npt.NDArray[Any])
assert_type(sa.clamp(5.0, Interval(0, 1)), float)
assert_type(sa.clamp(7, range(3)), int)
buffer: npt.NDArray[np.float64] = np.zeros(2)
assert_type(sa.clamp_(buffer, b), npt.NDArray[np.float64])
low, high = sa.bounds(b)
assert_type(low, npt.NDArray[Any])
assert_type(sa.bounds(range(3)), tuple[int, int])
assert_type(sa.bounds(Interval(0, 1)), tuple[int | float, int | float])
assert_type(sa.cardinality(range(3)), int)
assert_type(sa.cardinality(("a", "b")), int)
assert_type(sa.cardinality(b), int | float)
assert_type(sa.elements(("x", "y")), Iterator[str])
assert_type(sa.elements(range(3)), Iterator[int])
assert_type(sa.element(1, range(3)), int)
assert_type(sa.element(np.int64(1), ["a", "b"]), str)
assert_type(sa.index(1, range(3)), int)
assert_type(sa.SpaceStyle(b), Style)
assert_type(sa.issubspace(b, b), bool)
assert_type(sa.cardinality(sa.Categorical(3)), int | float)
for n in range(sa.cardinality(range(4))):
    pass

@sa.contains.register(complex)  # the registration API is unchanged, and keeps types
def _(x: object, space: complex) -> bool:
    return x == space

registered: Callable[[object, complex], bool] = _  # the decorator keeps the type
'''

#: what ``mypy --strict`` switches on, as per-module options: the snippets are checked
#: strictly in the same mypy run that checks the package with its own options (pyproject.toml's
#: [tool.mypy]), so that the package is analysed once (a cold run costs about 30 s of CPU)
STRICT = (
    "disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls", "disallow_untyped_defs",
    "disallow_incomplete_defs", "check_untyped_defs", "disallow_untyped_decorators", "warn_unused_ignores",
    "warn_return_any", "strict_equality", "extra_checks",
)


def _config() -> str:
    """pyproject.toml's [tool.mypy] (its overrides included) for everything, and --strict's options for the snippets."""
    import tomllib

    options = dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"])
    overrides = options.pop("overrides", [])
    lines = ["[mypy]", "show_error_codes = True"]
    lines += [f"{key} = {value}" for key, value in options.items()]
    for override in overrides:  # [[tool.mypy.overrides]] tables: one [mypy-a,b] section each
        override = dict(override)
        modules = override.pop("module")
        lines += [f"[mypy-{','.join([modules] if isinstance(modules, str) else modules)}]"]
        lines += [f"{key} = {value}" for key, value in override.items()]
    lines += ["[mypy-wrong_calls,right_calls]", "implicit_reexport = False"]
    lines += [f"{flag} = True" for flag in STRICT]
    return "\n".join(lines) + "\n"


class MypyRun(NamedTuple):
    """What the one mypy run found: file (a path under spacealg/, or a snippet's name) ->
    line -> error codes; its whole output; its exit status."""

    errors: dict[str, dict[int, set[str]]]
    output: str
    status: int


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory: pytest.TempPathFactory) -> MypyRun:
    """One mypy run over the package (its own options) and both snippets (strictly):
    see :class:`MypyRun`."""
    pytest.importorskip("mypy")
    where = tmp_path_factory.mktemp("typing")
    (where / "wrong_calls.py").write_text(WRONG)
    (where / "right_calls.py").write_text(RIGHT)
    (where / "mypy.ini").write_text(_config())
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-error-summary",
            "--config-file",
            str(where / "mypy.ini"),
            "spacealg",
            str(where / "wrong_calls.py"),
            str(where / "right_calls.py"),
        ],
        cwd=ROOT,  # so that mypy checks this checkout's spacealg, with its usual cache
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "error: Cannot find implementation or library stub" not in done.stdout, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    errors: dict[str, dict[int, set[str]]] = {"wrong_calls.py": {}, "right_calls.py": {}}
    for match in re.finditer(r"^(.*?\.pyi?):(\d+): error: (.*?)\s+\[([\w-]+)\]$", done.stdout, re.MULTILINE):
        path, line, _, code = match.groups()
        name = path if path.startswith("spacealg") else Path(path).name
        errors.setdefault(name, {}).setdefault(int(line), set()).add(code)
    return MypyRun(errors, done.stdout + done.stderr, done.returncode)


@needs_mypy
def test_mypy_strict_rejects_wrong_calls(mypy_run: MypyRun) -> None:
    output = mypy_run.output
    found = mypy_run.errors["wrong_calls.py"]
    for number, line in enumerate(WRONG.splitlines(), 1):
        expected = re.search(r"# E: ([\w-]+)", line)
        if expected:
            assert expected.group(1) in found.get(number, set()), f"no {expected.group(1)} error for {line!r}\n{output}"
        else:
            assert number not in found, f"unexpected error on {line!r}\n{output}"


@needs_mypy
def test_mypy_strict_accepts_right_calls_with_precise_results(
    mypy_run: MypyRun,
) -> None:
    assert mypy_run.errors["right_calls.py"] == {}, mypy_run.output


# --- the stub agrees with the runtime --------------------------------------------------


def _stub_signatures() -> dict[str, list[tuple[str, str]]]:
    """name -> parameters (name, kind) of the last (most general) __call__ in the stub."""
    tree = ast.parse((ROOT / "spacealg" / "core" / "protocol.pyi").read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    found: dict[str, list[tuple[str, str]]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotation = ast.unparse(node.annotation)
            inner = re.fullmatch(r"GenericFunction\[(\w+)(?:\[.*\])?\]", annotation)
            assert inner, f"{node.target.id}: {annotation}"
            calls = [f for f in classes[inner.group(1)].body if isinstance(f, ast.FunctionDef)]
            last = calls[-1].args
            parameters = [(a.arg, "positional") for a in last.posonlyargs[1:]]
            parameters += [(a.arg, "any") for a in last.args]
            parameters += [(a.arg, "keyword") for a in last.kwonlyargs]
            found[node.target.id] = parameters
        elif isinstance(node, ast.FunctionDef):
            found[node.name] = [(a.arg, "any") for a in node.args.args]
    return found


def test_the_stub_declares_every_protocol_function_with_its_parameters() -> None:
    stub = _stub_signatures()
    for name in protocol.__all__:
        if name == "as_space":
            continue
        assert name in stub, f"spacealg/core/protocol.pyi does not declare {name}"
        runtime = getattr(protocol, name)
        declaration = getattr(runtime, "__wrapped__", runtime)
        parameters = inspect.signature(declaration).parameters
        stub_names = [n for n, _ in stub[name]]
        positions = getattr(runtime, "positions", ())
        for index, (parameter_name, parameter) in enumerate(parameters.items()):
            assert parameter_name in stub_names, f"{name}: the stub lacks the parameter {parameter_name!r}"
            kind = dict(stub[name])[parameter_name]
            if index in positions or any(p > index for p in positions):
                assert kind == "positional", f"{name}: {parameter_name!r} is dispatched, so positional-only"
            elif parameter.kind is inspect.Parameter.KEYWORD_ONLY:
                assert kind == "keyword", f"{name}: {parameter_name!r} is keyword-only"
        extra = [n for n, kind in stub[name] if n not in parameters]
        assert all(dict(stub[name])[n] == "keyword" for n in extra), f"{name}: {extra} are not in the declaration"


@pytest.mark.parametrize("name", [n for n in protocol.__all__ if n != "check_position"])
def test_generic_functions_stay_dispatchers(name: str) -> None:
    function = getattr(protocol, name)
    assert isinstance(function, Dispatcher) and callable(function.register)
    assert function.name == name


def test_registration_still_works_at_runtime() -> None:
    class Point:
        """A one-element space."""

    @spacealg.contains.register(Point)
    def _(x: object, space: Point) -> bool:
        return x is space

    point = Point()
    assert spacealg.contains(point, point) and not spacealg.contains(1, point)
    assert textwrap.dedent(spacealg.sample.__doc__ or "").startswith("A random element")
