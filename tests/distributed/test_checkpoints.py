"""Checkpoints in a data-parallel job: written by rank 0 only, atomically."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess


def test_rank_zero_writes_and_other_ranks_never_see_a_torn_file(
    tmp_path: Path, mpi_job: Callable[..., CompletedProcess[str]]
) -> None:
    job = mpi_job("checkpoint.py", str(tmp_path))
    assert job.returncode == 0, job.stdout + job.stderr
    assert "rank 0: checkpoints whole" in job.stdout
    assert "rank 1: checkpoints whole" in job.stdout
    reads = int(job.stdout.split("rank 1: checkpoints whole (")[1].split()[0])
    assert reads >= 1
