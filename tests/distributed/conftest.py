"""Real MPI jobs for the distributed tests: `mpiexec -n N python -m mpi4py script`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
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


@pytest.fixture
def launcher() -> Callable[..., tuple[subprocess.CompletedProcess[str], float]]:
    """`launcher(*args)`: `python -m ember.distributed.run --nproc-per-node 2 *args` run from
    the scripts folder; the result and how many seconds it took."""
    return launch


def launch(*args: str, timeout: float = 90) -> tuple[subprocess.CompletedProcess[str], float]:
    pytest.importorskip("mpi4py")
    mpiexec()  # skips without one
    command = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", *args]
    started = time.monotonic()
    job = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=SCRIPTS)
    return job, time.monotonic() - started


@pytest.fixture
def world() -> Iterator[object]:
    """A default process group of this one process (MPI's singleton start)."""
    pytest.importorskip("mpi4py")
    import ember.distributed as dist

    dist.init_process_group("mpi")
    yield dist.group.WORLD
    dist.destroy_process_group()
