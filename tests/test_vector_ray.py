"""Everything that starts Ray, in one file so that one worker starts it once (tests/conftest.py
groups this file's tests): actors each holding a vector environment, ``check_many``'s
Ray path, and a sweep (``spacealg check ... --ray-address``) as Ray tasks, on a local Ray
instance."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from vector_envs import SeededWalkers, Walker

from spacealg.emulation import GymnasiumPufferEnv
from spacealg.vector import GymnasiumVectorView

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parent.parent


def _walkers() -> GymnasiumVectorView:
    return GymnasiumVectorView(SeededWalkers(3))


def _emulated_cartpoles() -> SyncVectorEnv:
    return SyncVectorEnv([lambda: GymnasiumPufferEnv(gymnasium.make("CartPole-v1"))] * 2)


@pytest.fixture
def local_ray(ray_instance):
    """This module's local Ray instance (tests/conftest.py)."""
    return ray_instance


def test_actors_holding_vector_envs_equal_one_vector_env_of_all(local_ray) -> None:
    from spacealg.vector.ray_actors import reset_all, step_all, vector_env_actors

    actors = vector_env_actors(_walkers, 2, num_cpus=0.5)
    reference = SyncVectorEnv([Walker] * 6, autoreset_mode=AutoresetMode.SAME_STEP)
    results = reset_all(actors, seed=5)
    assert np.array_equal(np.concatenate([obs for obs, _ in results]), reference.reset(seed=5)[0])
    reference.action_space.seed(5)
    for _ in range(20):
        actions = reference.action_space.sample()
        got = step_all(actors, actions, sizes=[3, 3])
        want = reference.step(actions)
        for k in range(4):
            assert np.array_equal(np.concatenate([r[k] for r in got]), want[k].astype(got[0][k].dtype))
    emulated = vector_env_actors(_emulated_cartpoles, 1, num_cpus=0.5)
    (obs, _), = reset_all(emulated, seed=0)
    assert obs.shape == (2, 4)
    with pytest.raises(ValueError, match="rows"):
        step_all(actors, np.zeros(5, np.int64))
    ray.get([a.close.remote() for a in actors + emulated])


def test_vector_env_actors_rejects_bad_arguments() -> None:
    from spacealg.vector.ray_actors import vector_env_actors

    with pytest.raises(ValueError, match="num_actors"):
        vector_env_actors(_walkers, 0)
    with pytest.raises(TypeError, match="make_vector_env"):
        vector_env_actors(_walkers(), 1)


def test_the_ray_example_of_docs_vector_md_runs(local_ray) -> None:
    text = (ROOT / "docs" / "vector.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL) if "ray.init" in b]
    exec(compile(block, "docs/vector.md Ray example", "exec"), {"__name__": "docs_example"})


def test_check_many_runs_the_same_checks_on_ray_when_an_address_is_given(ray_instance):
    from spacealg.testing import check_many

    outcomes = check_many(
        ["envcorpus.gym_envs:IntTruncatedCorridor"], ray_address="local", progress=False, max_examples=8, max_steps=40
    )
    assert outcomes[0].status == "failed" and outcomes[0].property == "truncated-bool"


def test_a_sweep_on_ray_gives_the_rows_of_local_workers(ray_instance, capsys, tmp_path):
    """Issue 37 point 3: each environment still in a process of its own, on the node that
    runs its task; the rows are those of local workers, a crash included."""
    from spacealg.cli import main

    ids = ["envcorpus.gym_envs:Corridor", "envcorpus.gym_envs:LeakyCorridor", "envcorpus.cli_envs:Crashes"]
    options = ["-n", "5", "--budget", "0", "--timeout", "120", "--json", "--no-progress"]
    rows = {}
    for where in (["--ray-address", "local"], ["-j", "2"]):
        results = tmp_path / f"{where[0]}.jsonl"
        assert main(["check", *ids, *options, *where, "--results", str(results)]) == 2
        rows[where[0]] = json.loads(capsys.readouterr().out)["environments"]
        assert sorted(json.loads(line)["env_id"] for line in results.read_text().splitlines()) == sorted(ids)
    for on_ray, local in zip(rows["--ray-address"], rows["-j"]):
        assert (on_ray["env_id"], on_ray["status"], on_ray.get("verdicts")) == (
            local["env_id"], local["status"], local.get("verdicts"))
    assert [row["status"] for row in rows["--ray-address"]] == ["passed", "failed", "crashed"]
