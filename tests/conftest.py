"""Hypothesis profiles: deterministic and time-bounded everywhere (``ci`` under CI=true)."""

import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    derandomize=True,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("deep", derandomize=True, max_examples=300, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("SPACEALG_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray instance for the whole test session (tests/test_vector_ray.py, and any test
    that asks for ``ray_session``): few CPUs, no dashboard; skipped where Ray is not installed.
    Its workers import this checkout's spacealg and the tests' environments (by reference)."""
    ray = pytest.importorskip("ray")
    root = pathlib.Path(__file__).resolve().parent.parent
    paths = [str(root), str(root / "tests"), os.environ.get("PYTHONPATH", "")]
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
                 runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}})
    yield ray
    ray.shutdown()
