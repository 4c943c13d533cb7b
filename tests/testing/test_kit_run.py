"""The kit end to end, as a plugin author runs it: `pytest --pyargs ember.testing` in a
subprocess, from a folder outside the repository, on a handful of its tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: a few op tests, one stream API test, and one stream-semantics test that a synchronous
#: device skips
SUBSET = (
    "test_matmul_empty_inner_dimension_gives_zeros or test_mm_and_bmm_need_their_ranks "
    "or test_default_stream_is_one_object_per_device "
    "or test_wait_stream_orders_the_consumer_after_the_producer"
)
EMPTY_MATMUL = "ops/test_linalg.py::test_matmul_empty_inner_dimension_gives_zeros"


def run_kit(cwd: Path, *args: str, kit: str = "ember.testing") -> subprocess.CompletedProcess[str]:
    (cwd / "pytest.ini").write_text("[pytest]\n")  # keeps any ini file above cwd out of it
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EMBER_", "PYTEST_"))}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "ember.testing.plugin",
        "-p",
        "no:cacheprovider",
    ]
    command += ["--pyargs", kit, "-q", "-rs", "-k", SUBSET, *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_kit_runs_from_outside_the_repository(tmp_path: Path) -> None:
    result = run_kit(tmp_path, "--ember-device", "cpu")
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.stdout.split("ember.testing coverage", 1)[1]
    assert "cpu: " in report and "opencl" not in report
    assert "native kernels (" in report and "through composites (" in report
    assert "failed (0): -" in report
    assert "no asynchronous device under test (tested: cpu)" in result.stdout


def test_a_fixed_known_failure_fails_the_run(tmp_path: Path) -> None:
    ledger = tmp_path / "known_failures.toml"
    ledger.write_text(f'[cpu.tests]\n"{EMPTY_MATMUL}" = "pretend it fails"\n')
    # one module of the kit: collecting all of it again would only cost time
    options = ("--ember-device=cpu", f"--ember-known-failures={ledger}")
    result = run_kit(tmp_path, *options, kit="ember.testing.ops.test_linalg")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "XPASS(strict)" in result.stdout
    report = result.stdout.split("ember.testing coverage", 1)[1]
    assert f"failed (1): {EMPTY_MATMUL}" in report


def test_an_unavailable_device_is_a_usage_error(tmp_path: Path) -> None:
    result = run_kit(tmp_path, "--ember-device", "nosuch", kit="ember.testing.ops.test_linalg")
    assert result.returncode != 0
    assert "'nosuch', which is not available" in result.stdout + result.stderr


@pytest.mark.skipif(sys.version_info < (3, 11), reason="reads pyproject.toml with tomllib")
def test_the_plugin_is_declared_as_a_pytest11_entry_point() -> None:
    import tomllib

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    entry_points = project["project"]["entry-points"]["pytest11"]
    assert entry_points == {"ember.testing.plugin": "ember.testing.plugin"}
