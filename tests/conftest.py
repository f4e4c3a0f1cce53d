"""Hypothesis profiles: deterministic and time-bounded everywhere (``ci`` under CI=true)."""

import functools
import multiprocessing
import os
import pathlib
import re
import sys

import pytest

# Bytecode caches: the suite runs in many processes (two pytest-xdist workers, the CLI tests'
# and the sweep's subprocesses, pytester runs, the forkserver), and each compiles spacealg, its
# tests and, to rewrite their assertions, the packages of the pytest plugins (spacealg's and
# Hypothesis's) again where PYTHONDONTWRITEBYTECODE forbids writing what it compiled: 13 s of
# CPU more per pytest process on the 2-core machine (`pytest --collect-only`: 27 s, 14 s once
# cached), 0.4 s per CLI process. The suite's processes may write them (into __pycache__
# folders, as Python does by default): the variable is dropped for this session and its children.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

from hypothesis import HealthCheck, settings

# The README's command runs 40 examples a law, as CI always has: 60 (the old local default) took
# a third more CPU on the generated-space law files (14 files, serial: 113 s against 75 s).
# Both are deterministic; `deep` (300) and `thorough` (1000) are for a longer look.
for _name in ("ci", "dev"):
    settings.register_profile(
        _name,
        derandomize=True,
        max_examples=40,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
settings.register_profile("deep", derandomize=True, max_examples=300, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("SPACEALG_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

# JAX: the suite's programs are tiny and compiled once each, so XLA's backend (LLVM)
# optimisation costs more than it saves: without it tests/test_check_jax_env.py takes 58 s of
# CPU instead of 90 (serial, same tests, same results). What is computed is unchanged; set
# JAX_DISABLE_MOST_OPTIMIZATIONS=0 to test with JAX's defaults. Set before any test imports
# JAX, and inherited by the subprocesses the CLI tests start.
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")


def _compile_xla_cpu_programs_cheaply() -> None:
    """XLA's older elementwise code generator in place of its fusion emitters, for the suite's
    many small CPU programs, each compiled once: a small program drawing a Box and a range and
    clamping a batch compiled in 170 ms, now 84 ms; tests/test_check_jax_env.py with
    tests/test_backend_agreement.py, serially, took 83 s, now 55 s. Only on jaxlib 0.10, where
    the flag is known (XLA aborts on a flag it does not know); an XLA_FLAGS of your own that
    names it wins. The JAX test files pass with JAX's defaults too (JAX_DISABLE_MOST_OPTIMIZATIONS=0
    XLA_FLAGS=--xla_cpu_use_fusion_emitters=true). Not added: one LLVM module per program
    (--xla_cpu_parallel_codegen_split_count=1, 60 ms): with it, a jitted and an eager draw of
    one generated space differed in the last bit, which tests/test_backend_agreement.py refuses."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        if not version("jaxlib").startswith("0.10."):
            return
    except PackageNotFoundError:
        return
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_cpu_use_fusion_emitters" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_cpu_use_fusion_emitters=false".strip()


_compile_xla_cpu_programs_cheaply()

# Worker processes (Gymnasium's AsyncVectorEnv, the checker's sync-async comparison): TorchRL,
# which test modules import, makes every later process start by "spawn" (torchrl/__init__.py), so
# that each worker imports NumPy, Gymnasium and spacealg again (about 0.7 s a worker: the async
# engine tests of tests/test_vector_engines.py took 10.8 s beside a TorchRL test module, 1.2 s
# alone). "forkserver" forks each worker from one clean server process that has loaded them: as
# cheap as a fork, and safe beside JAX's and torch's threads (a fork of a threaded process is
# not). A worker's task is pickled as under "spawn", so factories must still be picklable.
if "forkserver" in multiprocessing.get_all_start_methods():
    multiprocessing.set_start_method("forkserver", force=True)
    multiprocessing.set_forkserver_preload(["numpy", "gymnasium", "pytest", "hypothesis", "spacealg",
                                            "spacealg.emulation", "spacealg.vector", "spacealg.strategies",
                                            "spacealg.testing"])


@pytest.fixture(scope="module")
def ray_instance():
    """A local Ray instance for the tests of one module that asks for ``ray_instance``
    (tests/test_vector_ray.py), shut down when its last test ends: few CPUs, no dashboard;
    skipped where Ray is not installed. Its workers import this checkout's spacealg and the
    tests' environments (by reference). Not kept for the session: Ray's daemons and idle
    workers take CPU for as long as they live (2.6 s a minute here, idle), and a run hands the
    Ray tests out early, so an instance kept to the session's end cost about 30 s of CPU.
    The workers find those modules on the PYTHONPATH they inherit from Ray's daemons, which
    inherit this process's environment at ``ray.init``: a job-wide ``runtime_env`` setting it
    instead made Ray start workers of their own for the job (the first tasks waited 2.6 to 3.9 s
    for them, one process more)."""
    ray = pytest.importorskip("ray")
    root = pathlib.Path(__file__).resolve().parent.parent
    paths = [str(root), str(root / "tests"), os.environ.get("PYTHONPATH", "")]
    if not ray.is_initialized():
        with pytest.MonkeyPatch.context() as patch:  # the daemons' environment; this process's is restored
            patch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


# --- How much the suite checks: ``python -m pytest --count-checks`` ---------------------------
# Prints, at the end, the number of Hypothesis runs and of their passing test cases (every
# phase: explicit, reuse, generate, shrink; from Hypothesis's own run statistics, so the
# searches inside check_env count too), and the number of environment checks that ended
# (an EnvCheckReport made or an EnvCheckError raised) with the episode examples and steps their
# reports state. Counts made in subprocesses (the CLI's worker processes, Ray actors) are not
# seen, nor Hypothesis cases run while a fixture is set up (only test calls are wrapped).
# Under pytest-xdist each worker counts and the controller adds the counts up.

_COUNTS: dict[str, int] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--count-checks", action="store_true", default=False,
                     help="count Hypothesis test cases and environment checks and print the totals")


def _count(key: str, amount: int = 1) -> None:
    _COUNTS[key] = _COUNTS.get(key, 0) + amount


def _note_hypothesis_run(stats: dict) -> None:
    _count("hypothesis runs")
    for name, phase in stats.items():
        if name.endswith("-phase") and isinstance(phase, dict):
            cases = phase.get("test-cases", [])
            _count("hypothesis passing test cases", sum(case.get("status") == "valid" for case in cases))
            if name == "generate-phase":
                _count("hypothesis generated test cases", len(cases))


def _count_env_checks() -> None:
    try:
        from spacealg.testing import EnvCheckError, EnvCheckReport
    except ImportError:  # hypothesis is not installed: nothing to count
        return

    def counted(cls: type, what: str) -> None:
        init = cls.__init__

        def __init__(self, *args, **kwargs):  # noqa: N807
            init(self, *args, **kwargs)
            _count(what)
            if what == "env checks passed":
                _count("env check examples", int(getattr(self, "examples", 0) or 0))
                _count("env check steps", int(getattr(self, "steps", 0) or 0))

        cls.__init__ = __init__

    counted(EnvCheckReport, "env checks passed")
    counted(EnvCheckError, "env checks failed (EnvCheckError)")


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist workers must collect the same test ids, and ids that show a set (a
    # parametrized frozenset({'a', 'b'})) follow the string hash seed: the workers, started
    # after this hook, share one seed (a serial run is unaffected).
    if not os.environ.get("PYTHONHASHSEED") and not hasattr(config, "workerinput"):
        os.environ["PYTHONHASHSEED"] = "0"
    if not hasattr(config, "workerinput") and "JAX_COMPILATION_CACHE_DIR" not in os.environ:
        _share_jax_compilations(config)
    if config.getoption("--count-checks", default=False):
        _count_env_checks()
        config.pluginmanager.register(_CheckCounter(), "spacealg-check-counter")


def _share_jax_compilations(config: pytest.Config) -> None:
    """One JAX compilation cache for the whole run, empty at its start and removed at its end:
    the workers, and the subprocesses the CLI tests start, compile each XLA program once
    between them (the same eager op at the same shape, the same check of the same toy
    environment). What runs is unchanged: the cache keys a program by its whole HLO and
    compile options. On the 2-core machine, two runs of the README's command back to back
    took 322 s without it and 302 s with it. A JAX_COMPILATION_CACHE_DIR of your own is used as it is, and kept."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="spacealg-tests-jax-")
    os.environ.update({"JAX_COMPILATION_CACHE_DIR": folder, "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                       "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"})
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


class _CheckCounter:
    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item):
        from hypothesis.statistics import collector

        outer = collector.value

        def note(stats: dict) -> None:
            _note_hypothesis_run(stats)
            if outer is not None:
                outer(stats)

        with collector.with_value(note):
            yield

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: send the counts to the controller
            workeroutput["spacealg_counts"] = dict(_COUNTS)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:  # xdist controller
        for key, amount in getattr(node, "workeroutput", {}).get("spacealg_counts", {}).items():
            _count(key, amount)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if getattr(terminalreporter.config, "workeroutput", None) is not None:
            return
        terminalreporter.section("what the suite checked (--count-checks)")
        for key in sorted(_COUNTS):
            terminalreporter.write_line(f"{key}: {_COUNTS[key]:,}")


# --- Parallel runs (pytest-xdist, -n auto in pyproject.toml) -----------------------------------
# Tests go one by one to whichever worker is free, except:
# - the tests of a file that defines a module-, package- or session-scoped fixture (the mypy run
#   over the typing snippets, the docs site build, the sdist/wheel build) or that starts Ray:
#   those run on one worker together, so that each such fixture is made once, as in a serial run;
# - the tests of a file that says ``XDIST_SCOPE = "parameter"`` (tests/test_check_env.py, whose
#   tests share one check of each corpus case, made on first use): the tests with the same
#   parameter id run on one worker together, different ids on any worker.
# Groups with more tests are handed out first. (A scheduler of our own: pytest-xdist 3.8's
# --dist loadgroup writes its groups into a node attribute that pytest 9 no longer reads, so
# xdist_group marks are silently ignored.)
_SHARED = re.compile(r"@pytest\.fixture\(\s*scope=[\"'](?:module|package|session)[\"']|pytest\.mark\.ray\b")
_BY_PARAMETER = re.compile(r"^XDIST_SCOPE = [\"']parameter[\"']", re.MULTILINE)


@functools.cache
def _grouping(path: str) -> str:
    """How the tests of a file are grouped: "file", "parameter" or "test"."""
    file = pathlib.Path(__file__).resolve().parent.parent / path
    if file.suffix != ".py" or not file.is_file():
        return "test"
    source = file.read_text(encoding="utf-8")
    return "file" if _SHARED.search(source) else "parameter" if _BY_PARAMETER.search(source) else "test"


def _scope(nodeid: str) -> str:
    """The group of a test: its file, its file and parameter id, or the test alone."""
    path, _, name = nodeid.partition("::")
    grouping = _grouping(path)
    if grouping == "file":
        return path
    if grouping == "parameter" and name.endswith("]") and "[" in name:
        return f"{path}::[{name.split('[', 1)[1]}"
    return nodeid


def pytest_xdist_make_scheduler(config: pytest.Config, log):  # a pytest-xdist hook
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    return SharedFixtureScheduling(config, log)
