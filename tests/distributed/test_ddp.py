"""DistributedDataParallel and DistributedSampler: a real 2-rank job against whole-batch
references (scripts/ddp.py), and the single-process behaviour and errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import numpy as np
import pytest

import ember
from ember import nn
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.nn.parallel._reducer import assign_buckets
from ember.utils.data import DistributedSampler

CHECKS = (
    "parity []",
    "parity ['bucket_cap_mb', 'gradient_as_bucket_view']",
    "3 buckets, 3 collectives, first launched early",
    "find_unused_parameters",
    "unused without detection raises",
    "no_sync",
    "comm hooks",
    "broadcast_buffers",
    "mismatched models refused",
    "DistributedSampler",
    "docs recipe",
)


def test_two_ranks_train_as_one_process_on_the_whole_batch(
    mpi_job: Callable[..., CompletedProcess[str]], tmp_path: Path
) -> None:
    job = mpi_job("ddp.py", str(tmp_path), ranks=2)
    assert job.returncode == 0, job.stdout + job.stderr
    for rank in (0, 1):
        for check in CHECKS:
            assert f"rank {rank}: {check}" in job.stdout, (check, job.stdout + job.stderr)


def test_buckets_follow_pytorchs_assignment() -> None:
    # Reverse order, one dtype per bucket, closed on reaching the limit (first limit, then
    # the second), ordered by their first member's position in reverse order.
    params = [
        ember.zeros(100),
        ember.zeros(100, dtype=ember.float64),
        ember.zeros(300),
        ember.zeros(10),
        ember.zeros(10, dtype=ember.float64),
    ]
    assert assign_buckets(params, [400, 1200]) == [[4, 1], [3, 2], [0]]
    assert assign_buckets(params, [40, 1200]) == [[4], [3], [2], [1], [0]]
    assert assign_buckets(params, [10**6, 10**6]) == [[4, 1], [3, 2, 0]]


@pytest.mark.parametrize("cap", [400, 1200, 10**6])
def test_bucket_assignment_is_torchs(cap: int) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("mpi4py")
    shapes = [(100,), (30, 3), (300,), (10,), (7, 2), (64,), (5,)]
    dtypes = ["float32", "float64", "float32", "float32", "float64", "float32", "float64"]
    ours = [ember.zeros(s, dtype=getattr(ember, d)) for s, d in zip(shapes, dtypes, strict=True)]
    theirs = [torch.zeros(s, dtype=getattr(torch, d)) for s, d in zip(shapes, dtypes, strict=True)]
    reverse = theirs[::-1]  # DDP hands torch its parameters in reverse order
    groups, _ = torch.distributed._compute_bucket_assignment_by_size(reverse, [cap])
    expected = [[len(theirs) - 1 - i for i in group] for group in groups]
    assert assign_buckets(ours, [cap, cap]) == expected


def test_ddp_needs_a_process_group_and_trainable_parameters() -> None:
    with pytest.raises(RuntimeError, match="default process group has not been initialized"):
        DDP(nn.Linear(2, 2))


@pytest.mark.usefixtures("world")
def test_a_world_of_one_trains_exactly_as_the_plain_module() -> None:
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 2)).to(ember.float64)
    plain = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 2)).to(ember.float64)
    plain.load_state_dict(model.state_dict())
    ddp = DDP(model, bucket_cap_mb=0.0001)
    assert ddp.reducer.bucket_count == 2
    assert list(ddp.state_dict()) == [f"module.{k}" for k in plain.state_dict()]
    x = ember.tensor(np.random.default_rng(0).standard_normal((4, 5)))
    ddp(x).square().sum().backward()
    plain(x).square().sum().backward()
    for p, q in zip(model.parameters(), plain.parameters(), strict=True):
        assert p.grad is not None and q.grad is not None
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-14)
    with ember.no_grad():  # no backward follows: the hooks stay disarmed
        ddp(x)
    with ddp.no_sync():  # accumulates onto the synced gradients, as the plain module does
        ddp(x).sum().backward()
    plain(x).sum().backward()
    for p, q in zip(model.parameters(), plain.parameters(), strict=True):
        assert p.grad is not None and q.grad is not None
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-14)


@pytest.mark.usefixtures("world")
def test_bad_arguments_get_pytorchs_errors() -> None:
    with pytest.raises(TypeError, match=r"expects an ember\.nn\.Module, got list"):
        DDP([nn.Linear(2, 2)])  # type: ignore[arg-type]
    frozen = nn.Linear(2, 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a grad"):
        DDP(frozen)
    with pytest.raises(ValueError, match=r"device_ids and output_device .* got device_ids \[0\]"):
        DDP(nn.Linear(2, 2), device_ids=[0])
    with pytest.raises(ValueError, match="bucket_cap_mb must be positive"):
        DDP(nn.Linear(2, 2), bucket_cap_mb=0)
    ddp = DDP(nn.Linear(2, 2))
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    with pytest.raises(RuntimeError, match="already registered; it can be registered only once"):
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)


@pytest.mark.usefixtures("world")
def test_a_parameter_reached_twice_in_one_backward_is_refused() -> None:
    layer = nn.Linear(3, 3)
    ddp = DDP(layer)
    out = ddp(ember.ones(1, 3))
    layer.weight.grad = ember.zeros(3, 3)
    # As a reentrant backward would: the weight marked ready before backward reaches it.
    out.register_hook(lambda grad: ddp.reducer._mark_ready(0, layer.weight))
    with pytest.raises(RuntimeError, match=r"module.weight \(index 0\) received a gradient twice"):
        out.sum().backward()


def test_distributed_sampler_matches_pytorchs_partition() -> None:
    data = list(range(10))
    shares = [list(DistributedSampler(data, 3, r, shuffle=False)) for r in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded from the start
    dropped = [
        list(DistributedSampler(data, 3, r, shuffle=False, drop_last=True)) for r in range(3)
    ]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert len(DistributedSampler(data, 3, 0, drop_last=True)) == 3
    assert len(DistributedSampler(data, 3, 0)) == 4
    tiny = [list(DistributedSampler([0, 1], 5, r, shuffle=False)) for r in range(5)]
    assert tiny == [[0], [1], [0], [1], [0]]  # padding longer than the data repeats it
    first = DistributedSampler(data, 2, 0, seed=5)
    again = DistributedSampler(data, 2, 0, seed=5)
    assert list(first) == list(again)  # the same seed and epoch: the same order
    other = DistributedSampler(data, 2, 1, seed=5)
    assert sorted(list(first) + list(other)) == data
    first.set_epoch(1)
    assert list(first) != list(again)


def test_distributed_sampler_errors_are_pytorchs() -> None:
    with pytest.raises(
        ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"
    ):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(range(4))
