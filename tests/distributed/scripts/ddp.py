"""DistributedDataParallel on 2 ranks against single-process references; non-zero on a miss.

Run as `mpiexec -n 2 python -m mpi4py ddp.py FOLDER` (FOLDER: scratch space the ranks
share). Each check prints "rank R: <name> OK".
The references are computed on every rank by one process's worth of plain autograd on
the whole batch (float64, so agreement is to rounding)."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI

import ember
import ember.distributed as dist
from ember import nn
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DistributedSampler

F64 = ember.float64


def say(name: str) -> None:
    print(f"rank {dist.get_rank()}: {name} OK", flush=True)


def close(name: str, got: ember.Tensor | None, want: ember.Tensor | None, tol: float) -> None:
    assert got is not None and want is not None, f"{name}: a gradient is missing"
    a, b = got.detach().numpy(), want.detach().numpy()
    if not np.allclose(a, b, rtol=tol, atol=tol):
        raise AssertionError(f"{name}: rank {dist.get_rank()} got {a}, want {b}")


def mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3)
    ).to(F64)


def batch(rows: int, seed: int) -> tuple[ember.Tensor, ember.Tensor]:
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal((rows, 6))), ember.tensor(
        rng.standard_normal((rows, 3))
    )


def shard(t: ember.Tensor) -> ember.Tensor:
    rank, world = dist.get_rank(), dist.get_world_size()
    n = t.shape[0] // world
    return t[rank * n : (rank + 1) * n]


def gathered(value: Any) -> list[Any]:
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, value)
    return out


def counting(group: dist.ProcessGroup) -> tuple[list[str], Callable[[], None]]:
    """Record every collective the group queues; returns (log, undo)."""
    log: list[str] = []
    submit = group._submit

    def spy(name: str, *args: Any, **kwargs: Any) -> Any:
        log.append(name)
        return submit(name, *args, **kwargs)

    group._submit = spy  # type: ignore[method-assign]
    return log, lambda: setattr(group, "_submit", submit)


def parity_with_whole_batch_training(**options: Any) -> None:
    """3 SGD steps on shards == 3 steps on the whole batch, from rank 0's initial weights."""
    ember.manual_seed(100 + dist.get_rank())  # differently seeded ranks
    local = mlp()
    before = gathered(local[0].weight.detach().numpy().tolist())
    assert before[0] != before[1], "ranks should start different"
    model = DDP(local, **options)
    reference = copy.deepcopy(local)  # rank 0's weights, broadcast by the construction
    after = gathered(local[0].weight.detach().numpy().tolist())
    assert after[0] == after[1] == before[0], "construction must broadcast rank 0's weights"
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        x, y = batch(8, seed=step)
        opt.zero_grad()
        nn.functional.mse_loss(model(shard(x)), shard(y)).backward()
        opt.step()
        ref_opt.zero_grad()
        nn.functional.mse_loss(reference(x), y).backward()
        ref_opt.step()
    for (name, p), q in zip(local.named_parameters(), reference.parameters(), strict=True):
        close(f"parity {options} {name}", p, q, 1e-12)
    if options.get("gradient_as_bucket_view"):
        reducer = model.reducer
        assert all(p.grad is reducer._view(i) for i, p in enumerate(reducer._params))
    say(f"parity {sorted(options)}")


def buckets_launch_early_one_collective_each() -> None:
    ember.manual_seed(0)
    model = DDP(mlp(), bucket_cap_mb=0.0005)  # ~0.5 KiB buckets: several of them
    count = model.reducer.bucket_count
    assert count >= 3, f"expected several buckets, got {count}"
    first_layer = model.module[0].weight
    seen_at_launch: list[bool] = []
    group = model.process_group
    allreduce = group.allreduce

    def spy(tensor: Any, op: Any = dist.ReduceOp.SUM) -> Any:
        seen_at_launch.append(first_layer.grad is None)
        return allreduce(tensor, op)

    group.allreduce = spy  # type: ignore[method-assign]
    log, undo = counting(group)
    x, y = batch(8, seed=5)
    nn.functional.mse_loss(model(shard(x)), shard(y)).backward()
    undo()
    del group.allreduce
    assert log == ["all_reduce"] * count, f"{count} buckets but collectives {log}"
    assert seen_at_launch[0], "the first bucket must launch before layer 0 has a gradient"
    assert not seen_at_launch[-1], "the last bucket holds layer 0's gradient"
    say(f"{count} buckets, {len(log)} collectives, first launched early")


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4).to(F64)
        self.b = nn.Linear(4, 4).to(F64)
        self.never = nn.Linear(4, 4).to(F64)

    def forward(self, x: ember.Tensor, use_b: bool) -> ember.Tensor:
        y = self.a(x)
        return y + self.b(x) if use_b else y


def unused_parameters() -> None:
    rank = dist.get_rank()
    ember.manual_seed(7)
    local = Branchy()
    reference = copy.deepcopy(local)
    model = DDP(local, find_unused_parameters=True)
    x = ember.tensor(np.random.default_rng(3).standard_normal((4, 4)))
    model(shard(x), use_b=rank == 0).pow(2).sum().backward()
    # The reference: the mean of the ranks' losses, rank 0's shard using b and rank 1's not.
    halves = x[:2], x[2:]
    total = reference(halves[0], True).pow(2).sum() + reference(halves[1], False).pow(2).sum()
    (total / 2).backward()
    for name in ("a.weight", "a.bias", "b.weight", "b.bias"):
        mine = local.get_parameter(name).grad
        close(f"find_unused {name}", mine, reference.get_parameter(name).grad, 1e-12)
    assert local.never.weight.grad is None, "a parameter no rank used keeps grad None"
    say("find_unused_parameters")

    plain = copy.deepcopy(reference)
    plain.never.requires_grad_(False)
    strict = DDP(plain)
    try:
        strict(shard(x), use_b=rank == 0).pow(2).sum().backward()
    except RuntimeError as error:
        message = str(error)
    else:
        raise AssertionError("an unused parameter without find_unused_parameters must raise")
    if rank == 1:
        assert "module.b.weight (index 2)" in message and "find_unused_parameters=True" in message
    else:
        assert "another rank's backward did not produce gradients" in message, message
    dist.barrier()
    # The group and the model still work: a step where every rank uses everything.
    plain.zero_grad()
    strict(shard(x), use_b=True).sum().backward()
    reference.zero_grad()
    (reference(x, True).sum() / 2).backward()
    close("after the error", plain.b.weight.grad, reference.b.weight.grad, 1e-12)
    say(f"unused without detection raises: {message[:40]}")


def no_sync_accumulates_then_averages() -> None:
    ember.manual_seed(11)
    local = mlp()
    model = DDP(local)
    reference = copy.deepcopy(local)
    log, undo = counting(model.process_group)
    micro = [batch(4, seed=20 + k) for k in range(3)]
    with model.no_sync():
        for x, y in micro[:2]:
            nn.functional.mse_loss(model(shard(x)), shard(y)).backward()
    assert log == [], f"no_sync must communicate nothing, got {log}"
    x, y = micro[2]
    nn.functional.mse_loss(model(shard(x)), shard(y)).backward()
    undo()
    assert log and set(log) == {"all_reduce"}
    for x, y in micro:  # each rank's shard loss averaged == the whole micro-batch's loss
        nn.functional.mse_loss(reference(x), y).backward()
    for (name, p), q in zip(local.named_parameters(), reference.parameters(), strict=True):
        close(f"no_sync {name}", p.grad, q.grad, 1e-12)
    say("no_sync")


def comm_hooks() -> None:
    for hook, tol in (
        (default_hooks.allreduce_hook, 1e-5),
        (default_hooks.fp16_compress_hook, 2e-3),
    ):
        ember.manual_seed(13)
        local = nn.Linear(6, 3)
        reference = copy.deepcopy(local)
        model = DDP(local)
        model.register_comm_hook(None, hook)
        try:
            model.register_comm_hook(None, hook)
        except RuntimeError as error:
            assert "only once" in str(error)
        else:
            raise AssertionError("a second comm hook must be refused")
        x, y = batch(8, seed=9)
        x, y = x.float(), y.float()
        nn.functional.mse_loss(model(shard(x)), shard(y)).backward()
        nn.functional.mse_loss(reference(x), y).backward()
        for p, q in zip(local.parameters(), reference.parameters(), strict=True):
            close(f"{hook.__name__}", p.grad, q.grad, tol)
    say("comm hooks")


def buffers_follow_rank_0() -> None:
    rank = dist.get_rank()
    ember.manual_seed(17)
    local = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).to(F64)
    model = DDP(local)
    local[1].running_mean.fill_(float(rank + 1))  # ranks drift apart
    x = ember.tensor(np.random.default_rng(rank).standard_normal((6, 3)))
    with ember.no_grad():
        batch_mean = local[0](x).mean(0)
    model(x)
    want = 0.9 * 1.0 + 0.1 * batch_mean  # rank 0's running mean (1.0), then this batch
    close("broadcast_buffers", local[1].running_mean, want, 1e-12)
    say("broadcast_buffers")


def mismatched_models_are_refused() -> None:
    rank = dist.get_rank()
    try:
        DDP(nn.Linear(4, 4 + rank))
    except RuntimeError as error:
        assert "same model on every rank" in str(error) and "rank 1: 2 parameters" in str(error)
    else:
        raise AssertionError("different models across ranks must be refused")
    say("mismatched models refused")


def sampler_shards() -> None:
    dataset = list(range(11))
    shares = []
    for epoch in (0, 1):
        sampler = DistributedSampler(dataset, shuffle=True, seed=3)
        sampler.set_epoch(epoch)
        assert sampler.num_replicas == 2 and sampler.rank == dist.get_rank() and len(sampler) == 6
        shares.append(gathered(list(sampler)))
    for everyone in shares:
        flat = sorted(everyone[0] + everyone[1])
        assert set(flat) == set(dataset) and len(flat) == 12, everyone  # one index padded
    assert shares[0] != shares[1], "set_epoch must reshuffle"
    say("DistributedSampler")


def docs_recipe_runs(folder: str) -> None:
    """docs/distributed.md's DDP recipe, as written, on a small model and dataset."""

    text = (Path(__file__).parents[3] / "docs" / "distributed.md").read_text()
    section = text.split("## Training with DistributedDataParallel", 1)[1]
    recipe = section.split("```python\n", 1)[1].split("```", 1)[0]
    x, y = batch(64, seed=1)
    names: dict[str, Any] = {
        "build_model": lambda: nn.Linear(6, 3),
        "dataset": ember.utils.data.TensorDataset(x.float(), y.argmax(1)),
        "epochs": 2,
    }
    here = os.getcwd()
    os.chdir(folder)  # shared by the ranks: rank 0 writes the checkpoint, all read it
    try:
        exec(compile(recipe, "docs/distributed.md", "exec"), names)
        state = ember.load("model.ckpt")
    finally:
        os.chdir(here)
    assert set(state) == {"weight", "bias"}, state.keys()
    print(f"rank {MPI.COMM_WORLD.Get_rank()}: docs recipe OK", flush=True)


def main() -> None:
    dist.init_process_group("mpi")
    assert dist.get_world_size() == 2
    parity_with_whole_batch_training()
    parity_with_whole_batch_training(bucket_cap_mb=0.001, gradient_as_bucket_view=True)
    buckets_launch_early_one_collective_each()
    unused_parameters()
    no_sync_accumulates_then_averages()
    comm_hooks()
    buffers_follow_rank_0()
    mismatched_models_are_refused()
    sampler_shards()
    dist.destroy_process_group()
    docs_recipe_runs(sys.argv[1])


if __name__ == "__main__":
    main()
