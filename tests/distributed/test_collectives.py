"""ember.distributed's collectives: real 2- and 3-rank MPI jobs, and the single-process API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from subprocess import CompletedProcess

import pytest

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp


@pytest.mark.parametrize(("ranks", "device"), [(1, "cpu"), (2, "cpu"), (3, "cpu"), (2, "opencl")])
def test_collectives_match_numpy_on_every_rank(
    ranks: int, device: str, mpi_job: Callable[..., CompletedProcess[str]]
) -> None:
    if not ember.is_available(device):
        pytest.skip(f"{device} is not available")
    job = mpi_job("collectives.py", device, ranks=ranks)
    assert job.returncode == 0, job.stdout + job.stderr
    for rank in range(ranks):
        assert f"rank {rank}: collectives OK on {device}" in job.stdout


def test_calls_before_init_process_group_are_refused() -> None:
    assert not dist.is_initialized()
    for call in (
        lambda: dist.all_reduce(ember.ones(2)),
        lambda: dist.get_rank(),
        lambda: dist.get_world_size(),
        lambda: dist.barrier(),
    ):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()


@pytest.fixture
def world() -> Iterator[object]:
    pytest.importorskip("mpi4py")
    dist.init_process_group("mpi")
    yield dist.group.WORLD
    dist.destroy_process_group()


@pytest.mark.usefixtures("world")
def test_a_single_process_group_behaves_as_pytorchs() -> None:
    assert dist.get_rank() == 0 and dist.get_world_size() == 1
    assert dist.get_backend() == "mpi" and dist.is_mpi_available()
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("mpi")
    tensor = ember.tensor([1.0, 2.0])
    dist.all_reduce(tensor, op=ReduceOp.AVG)
    assert tensor.tolist() == [1.0, 2.0]
    work = dist.all_reduce(tensor, async_op=True)
    assert work is not None and work.wait() and work.is_completed()
    assert work.get_future().wait()[0] is tensor
    out = ember.empty(2)
    dist.all_gather_into_tensor(out, tensor)
    assert out.tolist() == [1.0, 2.0]


@pytest.mark.usefixtures("world")
def test_bad_arguments_get_pytorchs_errors_and_change_nothing() -> None:
    tensor = ember.tensor([1, 2])
    with pytest.raises(ValueError, match=r"all_reduce: ReduceOp.AVG needs a floating dtype"):
        dist.all_reduce(tensor, op=ReduceOp.AVG)
    with pytest.raises(TypeError, match=r"all_reduce: tensor must be a Tensor, got list"):
        dist.all_reduce([1.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"src=3 is not a rank of the group \[0\]"):
        dist.broadcast(tensor, src=3)
    with pytest.raises(ValueError, match=r"output int64\[3\] on cpu must hold world_size"):
        dist.all_gather_into_tensor(ember.empty(3, dtype=ember.int64), tensor)
    with pytest.raises(ValueError, match="same dtype and device"):
        dist.all_gather_into_tensor(ember.empty(2), tensor)
    with pytest.raises(ValueError, match="unknown backend 'smoke'"):
        dist.new_group(backend="smoke")
    assert tensor.tolist() == [1, 2]


def test_unknown_and_gloo_backends_are_refused_clearly() -> None:
    with pytest.raises(ValueError, match="unknown backend 'smoke'"):
        dist.init_process_group("smoke")
    with pytest.raises(RuntimeError, match="no gloo backend; use backend='mpi'"):
        dist.init_process_group("gloo")
    assert not dist.is_initialized()


def test_importing_ember_distributed_does_not_start_mpi() -> None:
    import subprocess
    import sys

    code = "import sys, ember.distributed; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
