"""How a sweep runs its checks (issue 37, the speed-up): forked from one warm process
(spacealg/sweep/warm.py) that ends as the command run afresh does, and started longest
first (spacealg/sweep/schedule.py). The laws of the rows themselves (a sweep's verdicts are
those of each check alone, whatever the order) are in tests/test_sweep.py. No timing
assertions: the limits below only bound a hang."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spacealg.sweep import longest_first, seconds_of
from spacealg.sweep.schedule import JAX_SECONDS, OTHER_SECONDS, static_seconds
from spacealg.sweep.warm import Forks, WarmProcessGoneError

TESTS = Path(__file__).parent
ROOT = TESTS.parent


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}


# --- the order: longest first ----------------------------------------------------------------

IDS = st.lists(st.sampled_from(["CartPole-v1", "Taxi-v4", "gymnax:Pendulum-v1", "jumanji:Snake-v1",
                                "envcorpus.gym_envs:Corridor", "m:f", "Blackjack-v1"]), unique=True, max_size=7)


@given(ids=IDS, data=st.data())
def test_longest_first_is_a_permutation_by_estimate_with_ties_in_the_order_given(ids, data):
    known = data.draw(st.dictionaries(st.sampled_from(ids) if ids else st.nothing(),
                                      st.sampled_from([0.0, 1.5, OTHER_SECONDS, 30.0, JAX_SECONDS, 90.0])))
    order = longest_first(ids, known)
    assert sorted(order) == sorted(ids)
    estimate = {i: known.get(i, static_seconds(i)) for i in ids}
    for earlier, later in itertools.pairwise(order):
        assert estimate[earlier] > estimate[later] or (
            estimate[earlier] == estimate[later] and ids.index(earlier) < ids.index(later))


def test_without_an_earlier_row_a_jax_environment_is_estimated_longer():
    assert static_seconds("gymnax:Pendulum-v1") == JAX_SECONDS > static_seconds("Pendulum-v1") == OTHER_SECONDS
    assert longest_first(["a:b", "CartPole-v1", "jumanji:Snake-v1", "gymnax:Pendulum-v1"], {}) == [
        "jumanji:Snake-v1", "gymnax:Pendulum-v1", "a:b", "CartPole-v1"]


def test_the_estimates_are_the_seconds_of_each_ids_last_row_that_has_them():
    rows = [{"env_id": "a", "seconds": 3.0}, {"env_id": "b", "seconds": None}, {"env_id": "a", "seconds": 5},
            {"env_id": "c", "seconds": True}, {"env_id": "d"}, {"env_id": "e", "seconds": -1.0}]
    assert seconds_of(rows) == {"a": 5.0}


# --- the warm process: a forked command ends as the command run afresh -----------------------

COMMANDS = [
    ["report", "no-such-results.jsonl"],  # exit 2, a message on stderr
    ["check", "envcorpus.cli_envs:Crashes", "--json", "--no-progress", "-n", "3", "--budget", "0"],  # SIGSEGV
    ["check", "envcorpus.cli_envs:Exits", "--json", "--no-progress", "-n", "3", "--budget", "0"],  # cannot make
    ["check", "envcorpus.cli_envs:Chatty", "-n", "2", "--budget", "0", "--no-progress", "--seed", "1"],  # the report
]  # a failed check's JSON document: tests/test_sweep.py compares a sweep's rows with each check alone


def _comparable(out: str) -> object:
    """A command's stdout without its clock (the seconds of a JSON document)."""
    try:
        document = json.loads(out)
    except ValueError:
        return re.sub(r"[\d.,]+ (s|steps/s)\b", "#", out)
    return {k: v for k, v in document.items() if "seconds" not in k}


def test_a_forked_command_ends_as_the_same_command_run_afresh(tmp_path):
    afresh = [subprocess.Popen([sys.executable, "-m", "spacealg", *words], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=_env(), cwd=tmp_path) for words in COMMANDS]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        forks = Forks(_env())
    finally:
        os.chdir(cwd)
    try:
        for number, (words, process) in enumerate(zip(COMMANDS, afresh)):
            out, err = tmp_path / f"{number}.out", tmp_path / f"{number}.err"
            status, killed = forks.run(words, str(out), str(err), timeout=300)
            expected_out, expected_err = process.communicate(timeout=300)
            assert (status, killed) == (process.returncode, False), words
            assert _comparable(out.read_text()) == _comparable(expected_out), words
            if words[0] == "report":
                assert err.read_text() == expected_err
    finally:
        forks.close()
    assert [p.returncode for p in afresh][:3] == [2, -11, 2]


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return [int(word) for word in handle.read().split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rpartition(")")[2].split()[0] != "Z"


BLOCKS = ["check", "envcorpus.cli_envs:Blocks", "-n", "3", "--budget", "0", "--no-progress"]


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads a process's children from /proc")
def test_a_timeout_kills_the_child_and_the_warm_process_ends_with_its_children(tmp_path):
    """A step that blocks forever: the timeout kills that child (SIGKILL to its group);
    closing the warm process (as when the sweep is killed: its stdin ends) kills the
    children still running, and a command waiting on one is told. The step never returns, so
    any timeout ends in the kill: 2 s, enough for the child to reach the step."""
    forks = Forks(_env())
    out, err = str(tmp_path / "o"), str(tmp_path / "e")
    assert forks.run(BLOCKS, out, err, timeout=2) == (-9, True)
    raised: list[BaseException] = []

    def waits() -> None:
        try:
            forks.run(BLOCKS, out, err, timeout=None)
        except BaseException as error:
            raised.append(error)

    thread = threading.Thread(target=waits)
    thread.start()
    waited = 0.0
    while not _children(forks.process.pid) and waited < 120:
        time.sleep(0.05)
        waited += 0.05
    (child,) = _children(forks.process.pid)
    forks.close()
    thread.join(timeout=60)
    assert not thread.is_alive() and len(raised) == 1 and isinstance(raised[0], WarmProcessGoneError)
    assert forks.process.returncode == 0 and not _alive(child)
    with pytest.raises(WarmProcessGoneError):
        forks.run(BLOCKS, out, err, timeout=1)


def test_a_ray_task_forks_from_its_worker_processs_one_warm_process():
    """check_isolated (what a Ray task runs) forks from this process's warm process, started
    once and kept for the next task; its row is the check's."""
    from spacealg.sweep.isolated import check_isolated, shared_forks

    forks = shared_forks()
    try:
        rows = [check_isolated(env_id, ["-n", "3", "--budget", "0", "--seed", "1"], 300, None)
                for env_id in ("envcorpus.gym_envs:LeakyCorridor", "envcorpus.gym_envs:Corridor")]
        assert shared_forks() is forks is not None
        assert [row["status"] for row in rows] == ["failed", "passed"]
        assert rows[0]["broken"][0]["property"] == "observation-in-space"
    finally:
        forks.close()
    assert forks.process.returncode == 0


def test_a_warm_process_with_a_threaded_library_imported_forks_nothing(tmp_path):
    """As if a plugin had imported JAX into it: it ends at once, and a sweep's check is then
    started afresh, with the same row."""
    from spacealg.sweep.isolated import Isolated

    serve = ("import sys, types; sys.modules['jax'] = types.ModuleType('jax');"
             " import spacealg.sweep.warm as w; w.serve()")
    done = subprocess.run([sys.executable, "-c", serve], input=b'0 {"words": ["--version"], "out": "o", "err": "e"}\n',
                          capture_output=True, env=_env(), cwd=tmp_path, timeout=120)
    assert (done.returncode, done.stdout) == (0, b"") and not (tmp_path / "o").exists()
    forks = Forks(_env())
    forks.close()  # gone, as the threaded one is
    isolated = Isolated(["-n", "3", "--budget", "0"], 300, None, forks=forks)
    try:
        row = isolated("envcorpus.gym_envs:Corridor")
    finally:
        isolated.close()
    assert row["status"] == "passed"
