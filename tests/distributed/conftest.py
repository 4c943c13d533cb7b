"""Real MPI jobs for the distributed tests: `mpiexec -n N python -m mpi4py script`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def mpiexec() -> str:
    """The MPI launcher beside this Python (the `mpich` wheel), else the one on PATH."""
    beside = Path(sys.executable).with_name("mpiexec")
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec: pip install 'ember[mpi]'")
    return found


@pytest.fixture
def mpi_job() -> Callable[..., subprocess.CompletedProcess[str]]:
    """`mpi_job("script.py", *args, ranks=2)`: run a job, return its exit code and output."""
    return run_job


def run_job(
    script: str, *args: str, ranks: int = 2, timeout: float = 90, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run scripts/`script` on `ranks` processes; the job's exit code and output."""
    pytest.importorskip("mpi4py")
    command: Sequence[str] = [
        mpiexec(), "-n", str(ranks), sys.executable, "-m", "mpi4py", str(SCRIPTS / script), *args
    ]  # fmt: skip
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "EMBER_NUM_THREADS": "1", **(env or {})},
    )
