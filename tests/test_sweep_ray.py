"""A sweep as Ray tasks (issue 37 point 3): the same rows as on local workers, each
environment still in a process of its own on the node that runs its task."""

from __future__ import annotations

import json

import pytest

from spacealg.cli import main

pytestmark = pytest.mark.ray


def test_a_sweep_on_ray_gives_the_rows_of_local_workers(ray_session, capsys, tmp_path):
    ids = ["envcorpus.gym_envs:Corridor", "envcorpus.gym_envs:LeakyCorridor", "envcorpus.cli_envs:Crashes"]
    options = ["-n", "5", "--budget", "0", "--timeout", "120", "--json", "--no-progress"]
    rows = {}
    for where in (["--ray-address", "local"], ["-j", "2"]):
        results = tmp_path / f"{where[0]}.jsonl"
        assert main(["check", *ids, *options, *where, "--results", str(results)]) == 2
        rows[where[0]] = json.loads(capsys.readouterr().out)["environments"]
        assert [json.loads(line)["env_id"] for line in results.read_text().splitlines()] != []
    for on_ray, local in zip(rows["--ray-address"], rows["-j"]):
        assert (on_ray["env_id"], on_ray["status"], on_ray.get("verdicts")) == (
            local["env_id"], local["status"], local.get("verdicts"))
    assert [row["status"] for row in rows["--ray-address"]] == ["passed", "failed", "crashed"]
