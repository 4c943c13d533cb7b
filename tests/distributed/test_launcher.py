"""`python -m ember.distributed.run`: real jobs (variables, argv, failures, the deadline)
and the command lines it builds for MPICH's Hydra and Open MPI."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ember.distributed import run
from ember.distributed._launch import (
    NO_MPIEXEC_EXIT_CODE,
    TIMEOUT_EXIT_CODE,
    LaunchError,
    hostfile_hosts,
    mpiexec_command,
)

Launch = Callable[..., tuple[subprocess.CompletedProcess[str], float]]


@pytest.mark.parametrize("program", [["launch_env.py"], ["-m", "launch_env"]])
def test_each_rank_gets_torchruns_variables_and_the_programs_argv(
    program: list[str], launcher: Launch
) -> None:
    job, _ = launcher(*program, "a", "--lr", "0.1")
    assert job.returncode == 0, job.stderr
    for rank in (0, 1):
        line = f"RANK={rank} WORLD_SIZE=2 LOCAL_RANK={rank} LOCAL_WORLD_SIZE=2"
        assert f"{line} argv=['a', '--lr', '0.1'] main=True" in job.stdout


def test_a_ranks_exit_status_is_the_jobs(launcher: Launch) -> None:
    job, _ = launcher("launch_env.py", "--exit", "3")
    assert job.returncode == 3, job.stdout + job.stderr


def test_a_rank_raising_inside_ddp_backward_ends_the_job_with_its_traceback(
    launcher: Launch,
) -> None:
    job, seconds = launcher("--timeout", "60", "ddp_fail.py")
    assert job.returncode not in (0, TIMEOUT_EXIT_CODE), job.stdout + job.stderr
    assert "ValueError: rank 1 fails inside backward" in job.stderr
    assert 'File "ddp_fail.py"' in job.stderr  # the failing rank's traceback
    assert "did not stop the job" not in job.stdout
    assert seconds < 30, f"the job took {seconds:.1f} s to end"


def test_a_stalled_rank_is_ended_by_the_timeout(launcher: Launch) -> None:
    job, seconds = launcher("--timeout", "3", "launch_env.py", "--stall")
    assert job.returncode == TIMEOUT_EXIT_CODE, job.stderr
    assert "ran past --timeout 3 s and was killed" in job.stderr
    assert seconds < 20


def test_bad_launches_say_why() -> None:
    assert run.main(["--mpiexec", "/nonexistent/mpiexec", "x.py"]) == NO_MPIEXEC_EXIT_CODE
    with pytest.raises(SystemExit) as exit_info:
        run.main(["--nproc-per-node", "0", "x.py"])
    assert exit_info.value.code == 2


def test_command_lines_for_hydra_and_open_mpi(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("# cluster\nnode1:4\nnode2 slots=4\n\nnode1\n")
    assert hostfile_hosts(str(hosts)) == ["node1", "node2"]
    assert mpiexec_command("mpiexec", 3, ["py", "t.py"]) == ["mpiexec", "-n", "3", "py", "t.py"]
    hydra = mpiexec_command("mpiexec", 4, ["py"], hostfile=str(hosts), flavour="hydra")
    assert hydra == ["mpiexec", "-f", str(hosts), "-ppn", "4", "-n", "8", "py"]
    ompi = mpiexec_command("mpiexec", 2, ["py"], hostfile=str(hosts), flavour="openmpi")
    assert ompi == ["mpiexec", "--hostfile", str(hosts), "--map-by", "ppr:2:node", "-n", "4", "py"]
    (tmp_path / "empty").write_text("# nothing\n")
    with pytest.raises(LaunchError, match="lists no hosts"):
        hostfile_hosts(str(tmp_path / "empty"))


def test_the_digits_demo_trains_data_parallel_on_two_ranks(
    launcher: Launch, tmp_path: Path
) -> None:
    job, _ = launcher("-m", "ember.examples.digits", "--epochs", "5", "--out", str(tmp_path))
    assert job.returncode == 0, job.stdout + job.stderr
    assert "(batch 32, 2 ranks of batch 16," in job.stdout
    assert job.stdout.count("test accuracy:") == 1  # rank 0 reports, once
    accuracy = float(job.stdout.split("test accuracy: ")[1].split("%")[0])
    assert accuracy >= 97.0
    assert (tmp_path / "digits.ckpt").exists() and (tmp_path / "digits-curve.png").exists()
