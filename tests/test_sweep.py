"""Whole registries as one job (issue 37): ``spacealg check`` over globs of every id form,
each environment in a process of its own (a crash, a hang, a missing package cost that row
only), ``--results`` resumable after ``kill -9`` with no row lost, repeated or half-written,
``spacealg report``, and the verdicts of a sweep equal to those of each ``spacealg check
ID`` alone. No timing assertions: the limits below only bound a hang."""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spacealg.adapters.envs import JAX_PREFIXES, MAKERS, REGISTRIES, jax_ids
from spacealg.cli import build_parser, main
from spacealg.cli.check import checking_argv
from spacealg.sweep import markdown, read, summary
from spacealg.sweep.report import section
from spacealg.sweep.results import append
from spacealg.testing.fanout import expand

TESTS = Path(__file__).parent
ROOT = TESTS.parent
FAST = ["-n", "5", "--no-progress"]


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "spacealg", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}


def _run(*args: str, timeout: float = 600) -> tuple[int, dict, str]:
    done = subprocess.run(_cli(*args), capture_output=True, text=True, env=_env(), cwd=TESTS, timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout) if "--json" in args else {}, done.stderr


def _missing_jax_prefix() -> str | None:
    """A JAX id prefix whose library is not installed here (None if all are)."""
    for prefix, (module, _, _) in MAKERS.items():
        if importlib.util.find_spec(module.partition(".")[0]) is None:
            return prefix
    return None


# --- point 1: globs over every id form -------------------------------------------------------


def test_every_jax_prefix_lists_its_ids_beside_its_maker():
    assert set(REGISTRIES) == set(MAKERS) == set(JAX_PREFIXES)
    with pytest.raises(ValueError, match="prefix"):
        jax_ids("nope")
    missing = _missing_jax_prefix()
    if missing is not None:
        with pytest.raises(ModuleNotFoundError):
            jax_ids(missing)


def test_globs_expand_over_gymnasium_jax_libraries_and_module_paths():
    assert expand(["CartPole-*"]) == ["CartPole-v0", "CartPole-v1"]
    assert expand(["envcorpus.*_envs:Corridor"]) == [
        f"envcorpus.{m}:Corridor" for m in sorted(p.stem for p in (TESTS / "envcorpus").glob("*_envs.py"))
    ]
    assert expand(["envcorpus.cli_envs:Blocks", "envcorpus.cli_envs:Blocks"]) == ["envcorpus.cli_envs:Blocks"]
    with pytest.raises(ValueError, match="matches no"):
        expand(["envcorpus.nothing_*:env"])
    if importlib.util.find_spec("pettingzoo") is not None:
        classic = expand(["pettingzoo.classic.*_v?:env"])
        assert "pettingzoo.classic.rps_v2:env" in classic and all(t.endswith("_v" + t[-5] + ":env") for t in classic)
    if importlib.util.find_spec("gymnax") is not None:
        import gymnax

        assert expand(["gymnax:*"]) == [f"gymnax:{name}" for name in gymnax.registered_envs]
        assert expand(["gymnax:*-MinAtar"]) == [f"gymnax:{n}" for n in gymnax.registered_envs if n.endswith("-MinAtar")]


# --- the results file: its laws --------------------------------------------------------------

ROWS = st.lists(
    st.fixed_dictionaries({"env_id": st.text(min_size=1, max_size=8), "status": st.sampled_from(["passed", "failed"]),
                           "note": st.text(max_size=30)}),
    min_size=1, max_size=6,
)


@given(rows=ROWS, cut=st.floats(0, 1, exclude_max=True))
def test_a_row_read_back_equals_the_row_appended_and_a_cut_last_line_is_redone(tmp_path_factory, rows, cut):
    with mock.patch("os.fsync"):  # what is read back does not depend on the disk's flush (slow here)
        _read_back_and_cut(str(tmp_path_factory.mktemp("results") / "r.jsonl"), rows, cut)


def _read_back_and_cut(path: str, rows: list[dict], cut: float) -> None:
    for row in rows:
        append(path, row)
    assert read(path) == rows
    *kept, last = rows
    size = os.path.getsize(path)
    line = len((json.dumps(last, sort_keys=True, ensure_ascii=False) + "\n").encode())
    with open(path, "r+b") as handle:  # a kill during the last write: some of its bytes, no newline
        handle.truncate(size - line + int(cut * (line - 1)))
    assert read(path) == kept  # the cut row is not returned ...
    append(path, last)  # ... and, checked again, its line starts cleanly
    assert read(path) == rows


def test_a_file_that_is_not_a_results_file_is_refused(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"env_id": "a"}\nnot json\n{"env_id": "b"}\n')
    with pytest.raises(ValueError, match="line 2"):
        read(str(path))
    assert main(["report", str(path)]) == 2


# --- the options a sweep passes on -----------------------------------------------------------


@pytest.mark.parametrize("options", [
    [],
    ["-n", "7", "--max-steps", "9", "--seed", "3", "--budget", "0.5", "--no-determinism"],
    ["--random", "--ignore-info", "a.b", "--ignore-info", "c", "--env-kwarg", "x=1", "--lint", "--no-hygiene"],
    ["--vector", "--num-envs", "2", "--shard", "1/3", "--database", "db"],
    ["--match", "m:f", "--atol", "0.1", "--rtol", "0.01", "--illegal-actions", "--no-masks"],
])
def test_a_sweep_passes_each_check_exactly_its_checking_options(options):
    parser = build_parser()
    sweep_only = ["-j", "2", "--results", "r.jsonl", "--timeout", "9", "--report", "--no-progress"]
    arguments = parser.parse_args(["check", "a", "b", *options, *sweep_only])
    words = checking_argv(arguments)
    again = parser.parse_args(["check", "a", *words])
    sweep_dests = {"jobs", "ray_address", "results", "timeout", "report", "no_progress", "partial", "env_id"}
    for name, value in vars(arguments).items():
        if name not in sweep_dests and not callable(value):
            assert getattr(again, name) == value, name
    assert not {w for w in sweep_only if w.startswith("-")} & set(words)


# --- point 2: resumable after kill -9 --------------------------------------------------------


def test_a_sweep_killed_with_sigkill_resumes_with_no_row_lost_repeated_or_half_written(tmp_path, capsys):
    """The first sweep has no time limit (--budget 0, no --timeout): Blocks, the second, blocks
    until the kill, however loaded the machine. The second gives each environment 8 s
    (--timeout, a sweep's option: not one of the checking options a row records) and runs
    them at once (-j 3): Blocks is then a timeout; the others took 3 s at most at load 9."""
    results = tmp_path / "results.jsonl"
    ids = ["envcorpus.gym_envs:Corridor", "envcorpus.cli_envs:Blocks", "envcorpus.gym_envs:LeakyCorridor",
           "envcorpus.cli_envs:Chatty"]
    options = ["-n", "5", "--budget", "0", "-j", "1", "--results", str(results)]
    process = subprocess.Popen(_cli("check", *ids, *options, "--no-progress"), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=_env(), cwd=TESTS)
    waited = 0.0
    while not (results.exists() and results.read_bytes().endswith(b"\n")) and waited < 600:
        time.sleep(0.05)
        waited += 0.05
    process.send_signal(signal.SIGKILL)  # during Blocks, the second, which blocks for good
    process.wait(timeout=60)
    first = results.read_text()
    assert [json.loads(line)["env_id"] for line in first.splitlines()] == ids[:1]
    with results.open("a") as handle:  # and as if the kill had come in the middle of writing a row
        handle.write('{"env_id": "envcorpus.cli_envs:Blocks", "stat')
    status, _, err = _run("check", *ids, *options, "-j", "3", "--timeout", "8")  # with the progress bar this time
    assert status == 2  # Blocks: a timeout
    assert "left 0" in err and "done 4" in err
    text = results.read_text()
    assert text.startswith(first)  # the row finished before the kill is kept, not redone
    rows = [json.loads(line) for line in text.splitlines()]  # every line whole
    assert sorted(row["env_id"] for row in rows) == sorted(ids)  # none lost, none twice
    statuses = {row["env_id"]: row["status"] for row in rows}
    assert statuses == {ids[0]: "passed", ids[1]: "timeout", ids[2]: "failed", ids[3]: "passed"}
    # a third run has nothing left to do; other checking options are refused, not mixed
    assert main(["check", *ids, *options, "--no-progress", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["exit_status"] == 2
    assert results.read_text() == text
    assert main(["check", *ids, *options, "--seed", "1", "--no-progress"]) == 2
    assert "other options" in capsys.readouterr().err and results.read_text() == text


# --- point 5: the verdicts of one check ------------------------------------------------------


def test_a_sweep_gives_each_env_the_verdicts_of_its_check_alone(tmp_path, capsys, monkeypatch):
    """The sweep runs in a process of its own; meanwhile each ``spacealg check ID`` runs here,
    in this process (the command alone, with no sweep around it)."""
    ids = ["CartPole-v1", "envcorpus.gym_envs:LeakyCorridor", "envcorpus.checks_envs:TimedCorridor"]
    if importlib.util.find_spec("pettingzoo") is not None:
        ids += ["pettingzoo.classic.rps_v2:env", "envcorpus.parallel_envs:MarshalRace"]
    if importlib.util.find_spec("gymnax") is not None:
        ids += ["gymnax:Pendulum-v1"]
    options = ["-n", "4", "--max-steps", "20", "--budget", "0", "--seed", "2", "--json", "--no-progress"]
    estimates = tmp_path / "earlier.jsonl"  # an earlier sweep where the last took longest: started first now
    for seconds, env_id in enumerate(ids):
        append(str(estimates), {"env_id": env_id, "seconds": float(seconds)})
    swept = subprocess.Popen(_cli("check", *ids, *options, "-j", "2", "--estimates", str(estimates)),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=TESTS)
    monkeypatch.chdir(TESTS)
    alone = {}
    for env_id in ids:
        status = main(["check", env_id, *options])
        alone[env_id] = (status, _json_of(capsys))
    out, err = swept.communicate(timeout=600)
    assert "Traceback" not in err, err
    rows = {row["env_id"]: row for row in json.loads(out)["environments"]}
    assert list(rows) == ids  # in the order given, whatever the order they ran in
    for env_id, (status, document) in alone.items():
        assert (rows[env_id]["status"], rows[env_id]["verdicts"]) == (document["status"], document["verdicts"]), env_id
        assert rows[env_id]["exit_status"] == document["exit_status"] == status
        assert [b["property"] for b in rows[env_id].get("broken", [])] == [
            b["property"] for b in document.get("broken", [])]
    assert {rows[i]["status"] for i in ids} == {"passed", "failed"}


def _json_of(capsys) -> dict:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    return json.loads(captured.out)


# --- point 4: the report ---------------------------------------------------------------------

REPORT_ROWS = [
    {"env_id": "b:two", "status": "failed", "exit_status": 1, "steps_per_second": 1234.5,
     "compile_seconds": 2.25, "seconds": 9.0,
     "broken": [{"property": "observation-in-space", "message": "obs 11 | not in Box(0, 10)"},
                {"property": "compile-once", "message": "traced twice"}]},
    {"env_id": "a:one", "status": "passed", "exit_status": 0, "steps_per_second": None,
     "compile_seconds": None, "seconds": 1.0},
    {"env_id": "c:three", "status": "timeout", "exit_status": 2, "limit_seconds": 40.0, "seconds": 40.2,
     "message": "the process did not end within 40 s", "broken": [{"property": "purity", "message": "p"}]},
    {"env_id": "d:four", "status": "cannot make", "exit_status": 2, "seconds": 0.5,
     "message": "cannot make 'd:four': needs the optional package 'pgx'"},
    {"env_id": "e:five", "status": "crashed", "crash": "SIGSEGV", "exit_status": 2, "seconds": 3.0,
     "message": "crashed: SIGSEGV\nFatal Python error"},
]


def test_the_report_is_one_table_row_per_env_with_the_failures_below(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    for row in REPORT_ROWS:
        append(str(path), row)
    append(str(path), {**REPORT_ROWS[1], "seconds": 2.0})  # a later line of the same id wins
    text = markdown(read(str(path)))
    table = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| env ")]
    assert table == [
        "| a:one | passed |  |  |  | 2.0 |",
        "| b:two | failed | observation-in-space, compile-once | 1,234 | 2.2 | 9.0 |",
        "| c:three | timed out after 40 s, properties broken before it: purity | purity |  |  | 40.2 |",
        "| d:four | not run: cannot make 'd:four': needs the optional package 'pgx' |  |  |  | 0.5 |",
        "| e:five | crashed: SIGSEGV |  |  |  | 3.0 |",
    ]
    assert "1 passed, 1 failed, 1 cannot make, 1 timeout, 1 crashed of 5 environments" in text
    assert "### b:two: observation-in-space\n\n```text\nobs 11 | not in Box(0, 10)\n```" in text
    assert "### e:five: crashed\n\n```text\ncrashed: SIGSEGV\nFatal Python error\n```" in text
    assert main(["report", str(path)]) == 2
    assert capsys.readouterr().out == text
    assert main(["report", str(path), "--json"]) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["counts"] == summary(read(str(path)))["counts"] and document["counts"]["passed"] == 1
    assert [e["env_id"] for e in document["environments"]] == ["a:one", "b:two", "c:three", "d:four", "e:five"]
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\n<!-- spacealg report {path}: generated, do not edit by hand -->\nold\n"
                    "<!-- end of spacealg report -->\n\nAfter.\n")
    assert main(["report", str(path), "--write", str(page)]) == 2
    assert section(str(page), str(path)) == text.strip()
    assert page.read_text().startswith("# Title\n\n") and page.read_text().endswith("\n\nAfter.\n")
    (tmp_path / "bare.md").write_text("no markers\n")
    assert main(["report", str(path), "--write", str(tmp_path / "bare.md")]) == 2
    assert "no section" in capsys.readouterr().err


def test_the_committed_sweep_page_is_the_report_of_the_committed_results():
    source = "docs/results/jax_sweep.jsonl"
    assert section(str(ROOT / "docs/jax_sweep.md"), source) == markdown(read(str(ROOT / source))).strip()


def _imports(snippet: str) -> list[tuple[str, list[str]]]:
    """The modules a snippet imports, each with the names it takes from it."""
    found = []
    for node in ast.walk(ast.parse(snippet)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


@pytest.mark.parametrize("results", sorted(p.name for p in (ROOT / "docs/results").glob("*.jsonl")))
def test_every_committed_reproduction_compiles_and_imports_spacealg_modules_that_exist(results):
    """A reproduction snippet in a committed results file outlives the code that wrote it:
    each compiles, and each spacealg module it imports exists with the names it takes (the
    other libraries' need not be installed here)."""
    snippets = 0
    for row in read(str(ROOT / "docs/results" / results)):
        for where in (row, *row.get("broken", [])):
            snippet = where.get("reproduction")
            if not snippet:
                continue
            snippets += 1
            compile(snippet, f"{row['env_id']}: reproduction", "exec")
            for module, names in _imports(snippet):
                if module.partition(".")[0] != "spacealg":
                    continue
                assert importlib.util.find_spec(module) is not None, (row["env_id"], module)
                imported = importlib.import_module(module)
                for name in names:
                    assert hasattr(imported, name) or importlib.util.find_spec(f"{module}.{name}"), (
                        row["env_id"], module, name)
    assert snippets


def test_check_report_prints_the_markdown_of_the_sweep(tmp_path, capsys):
    results = tmp_path / "r.jsonl"
    assert main(["check", "envcorpus.gym_envs:Corridor", "--report", "--results", str(results), *FAST]) == 0
    swept = capsys.readouterr().out
    assert main(["report", str(results)]) == 0
    report = capsys.readouterr().out
    assert "| envcorpus.gym_envs:Corridor | passed |" in report and swept.endswith(report)


def test_sweep_options_are_checked(capsys):
    for bad in (["--jobs", "0"], ["--timeout", "0"]):
        assert main(["check", "a", "b", *bad]) == 2
        assert bad[0] in capsys.readouterr().err
    assert isinstance(build_parser().parse_args(["report", "x"]), argparse.Namespace)


def test_a_results_file_another_sweep_is_writing_is_refused(tmp_path, capsys):
    from spacealg.sweep.results import locked

    path = str(tmp_path / "r.jsonl")
    with locked(path):
        assert main(["check", "envcorpus.gym_envs:Corridor", "--results", path, *FAST]) == 2
    assert "another sweep" in capsys.readouterr().err
    assert read(path) == []


def test_a_listener_hears_each_broken_property_as_the_check_finds_it():
    from spacealg.testing import EnvCheckError, check
    from spacealg.testing.engine.errors import on_broken

    heard: list = []
    with on_broken(heard.append), pytest.raises(EnvCheckError) as raised:
        check("envcorpus.gym_envs:LeakyCorridor", max_examples=5, budget=None)
    assert [e.property for e in heard] == [e.property for e in (raised.value, *raised.value.also)]
    with pytest.raises(EnvCheckError):  # outside, nothing is heard
        check("envcorpus.gym_envs:LeakyCorridor", max_examples=5, budget=None)
    assert len(heard) == 1 + len(raised.value.also)


def test_the_old_jax_sweep_script_is_a_thin_call_of_the_cli():
    spec = importlib.util.spec_from_file_location("sweep_jax_envs", ROOT / "benchmarks" / "sweep_jax_envs.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.command(["--only", "gymnax:", "--examples", "5", "--json", "r.jsonl"]) == [
        "check", "gymnax:*", "--report", "--results", "r.jsonl", "--examples", "5"]
    assert script.command(["jumanji:Snake-v1", "--ray-address", "ray://head:10001"]) == [
        "check", "jumanji:Snake-v1", "--report", "--ray-address", "ray://head:10001"]
    assert script.command([])[1:-1] == [f"{prefix}:*" for prefix in JAX_PREFIXES]
    for words in (script.command([]), script.command(["--only", "pgx:"])):
        build_parser().parse_args(words)  # words the command line takes
    with pytest.raises(SystemExit, match="batch"):
        script.command(["--batch", "32"])


# --- point 1: isolation (last: its sweeps, started with the module's first test, end meanwhile) --

CRASH_IDS = ["envcorpus.cli_envs:Crashes", "envcorpus.cli_envs:Blocks", "envcorpus.cli_envs:Exits"]
HANG_IDS = ["envcorpus.cli_envs:LeaksThenBlocks", "envcorpus.gym_envs:Corridor"]


def _isolation_ids() -> list[str]:
    missing = _missing_jax_prefix()
    return [*CRASH_IDS, *([f"{missing}:*"] if missing else []), "envcorpus.gym_envs:Corridor"]


@pytest.fixture(scope="module", autouse=True)
def isolation_sweeps(request) -> Iterator[dict[str, subprocess.Popen]]:
    """The two sweeps of :func:`test_a_crash_a_hang_and_a_missing_package_cost_their_row_only`
    (where it is selected), started with the module's first test: they wait out their limits
    while the module's other tests compute (tests/conftest.py gives this module's tests to one
    worker)."""
    runs = {}
    if "test_a_crash_a_hang_and_a_missing_package_cost_their_row_only" in {i.name for i in request.session.items}:
        runs = {
            "budget": subprocess.Popen(
                _cli("check", *_isolation_ids(), "--budget", "0.2", "-j", "2", "--json", *FAST),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=TESTS),
            "timeout": subprocess.Popen(
                _cli("check", *HANG_IDS, "--budget", "0", "--timeout", "10", "-j", "2", "--json", *FAST),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=TESTS),
        }
    yield runs
    for process in runs.values():
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_a_crash_a_hang_and_a_missing_package_cost_their_row_only(isolation_sweeps):
    """Two sweeps at once (:func:`isolation_sweeps`). Under a budget a step that blocks ends at
    the check's own limit (3 x 0.2 + 10 s); without one, --timeout kills the process, and the
    property it had found broken before it hung stays in the row. Both limits are waited out
    whole, computing nothing; --timeout 10 is no longer than the first: LeaksThenBlocks finds
    its bug and blocks within about 1 s of its start, and the row beside it, Corridor's
    check, took 1.7 s at load 11 on the 2-core machine."""
    ids, hangs = _isolation_ids(), HANG_IDS
    missing = _missing_jax_prefix()
    documents = {}
    for name, process in isolation_sweeps.items():
        out, err = process.communicate(timeout=600)
        assert process.returncode == 2 and "Traceback" not in err, (name, err)
        documents[name] = {row["env_id"]: row for row in json.loads(out)["environments"]}
    rows = documents["budget"]
    assert list(rows) == ids
    assert (rows[ids[0]]["status"], rows[ids[0]]["verdict"]) == ("crashed", "crashed: SIGSEGV")
    assert (rows[ids[1]]["status"], rows[ids[1]]["verdict"]) == ("timeout", "timed out after 11 s")
    assert rows[ids[2]]["status"] == "cannot make"
    assert rows[ids[2]]["verdict"].startswith("not run: ") and "sys.exit(0)" in rows[ids[2]]["verdict"]
    if missing:
        assert rows[f"{missing}:*"]["status"] == "cannot make"
        assert "optional package" in rows[f"{missing}:*"]["verdict"]
    assert rows["envcorpus.gym_envs:Corridor"]["status"] == "passed"
    assert {row["exit_status"] for row in rows.values()} == {0, 2}
    rows = documents["timeout"]
    assert list(rows) == hangs
    hung = rows["envcorpus.cli_envs:LeaksThenBlocks"]
    assert hung["status"] == "timeout" and hung["exit_status"] == 2
    assert hung["verdict"] == "timed out after 10 s, properties broken before it: observation-in-space"
    assert hung["broken"][0]["property"] == "observation-in-space" and "LeaksThenBlocks" in hung["broken"][0][
        "reproduction"]
    assert rows["envcorpus.gym_envs:Corridor"]["status"] == "passed"
