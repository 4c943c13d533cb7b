"""Every collective on 2+ ranks against NumPy float64 references; exits non-zero on a miss.

Run as `mpiexec -n N python -m mpi4py collectives.py [device]`."""

from __future__ import annotations

import sys

import numpy as np

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "cpu"


def rank_values(r: int, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    rng = np.random.default_rng(100 + r)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int") or dtype == "uint8":
        return rng.integers(1, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check(name: str, got: ember.Tensor, want: np.ndarray, tol: float = 1e-6) -> None:
    value = got.cpu().numpy().astype(np.float64)
    if not np.allclose(value, want.astype(np.float64), rtol=tol, atol=tol):
        raise AssertionError(f"{name}: rank {dist.get_rank()} got {value}, want {want}")


def main() -> None:
    # cuda tensors go to NCCL under the default (by device) backend; the rest to MPI.
    dist.init_process_group(None if DEVICE == "cuda" else "mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized()
    assert dist.get_backend() == ("cuda:nccl,cpu:mpi" if DEVICE == "cuda" else "mpi")
    everyone = [rank_values(r, (3, 4), "float64") for r in range(world)]
    reducers = {
        ReduceOp.SUM: lambda a: np.sum(a, 0),
        ReduceOp.PRODUCT: lambda a: np.prod(a, 0),
        ReduceOp.MIN: lambda a: np.min(a, 0),
        ReduceOp.MAX: lambda a: np.max(a, 0),
        ReduceOp.AVG: lambda a: np.mean(a, 0),
    }
    for dtype, tol in (("float32", 1e-5), ("float64", 1e-12), ("bfloat16", 3e-2)):
        for op, reference in reducers.items():
            tensor = ember.tensor(everyone[rank], dtype=getattr(ember, dtype), device=DEVICE)
            dist.all_reduce(tensor, op=op)
            check(f"all_reduce {op} {dtype}", tensor, reference(np.stack(everyone)), tol)
    ints = [rank_values(r, (5,), "int64") for r in range(world)]
    for op, reference in {
        ReduceOp.SUM: lambda a: np.sum(a, 0),
        ReduceOp.MAX: lambda a: np.max(a, 0),
        ReduceOp.BAND: lambda a: np.bitwise_and.reduce(a, 0),
        ReduceOp.BXOR: lambda a: np.bitwise_xor.reduce(a, 0),
    }.items():
        tensor = ember.tensor(ints[rank], device=DEVICE)
        dist.all_reduce(tensor, op=op)
        check(f"all_reduce {op} int64", tensor, reference(np.stack(ints)))
    flags = [rank_values(r, (6,), "bool") for r in range(world)]
    tensor = ember.tensor(flags[rank], device=DEVICE)
    dist.all_reduce(tensor, op=ReduceOp.SUM)  # PyTorch: bool SUM is "any"
    check("all_reduce bool", tensor, np.any(np.stack(flags), 0))

    # Non-contiguous input: written back through a contiguous copy.
    base = ember.tensor(everyone[rank], dtype=ember.float32, device=DEVICE)
    view = base.t()
    dist.all_reduce(view)
    check("all_reduce non-contiguous", base, np.sum(np.stack(everyone), 0), 1e-5)

    # Asynchronous: Work.wait / is_completed / get_future.
    tensor = ember.full((1000,), float(rank + 1), device=DEVICE)
    work = dist.all_reduce(tensor, async_op=True)
    assert work is not None
    future = work.get_future()
    assert work.wait() is True and work.is_completed() and work.is_success()
    check("async all_reduce", tensor, np.full(1000, world * (world + 1) / 2))
    check("future value", future.wait()[0], np.full(1000, world * (world + 1) / 2))

    for src in range(world):
        tensor = ember.tensor(everyone[rank], dtype=ember.float32, device=DEVICE)
        dist.broadcast(tensor, src=src)
        check(f"broadcast src={src}", tensor, everyone[src], 1e-6)

    mine = ember.tensor(everyone[rank], dtype=ember.float32, device=DEVICE)
    gathered = ember.empty((world * 3, 4), device=DEVICE)
    dist.all_gather_into_tensor(gathered, mine)
    check("all_gather_into_tensor", gathered, np.concatenate(everyone), 1e-6)
    stacked = ember.empty((world, 3, 4), device=DEVICE)
    dist.all_gather_into_tensor(stacked, mine)
    check("all_gather_into_tensor stacked", stacked, np.stack(everyone), 1e-6)
    pieces = [ember.empty((3, 4), device=DEVICE) for _ in range(world)]
    dist.all_gather(pieces, mine)
    for r, piece in enumerate(pieces):
        check(f"all_gather piece {r}", piece, everyone[r], 1e-6)

    big = [rank_values(r, (world * 2, 3), "float64") for r in range(world)]
    out = ember.empty((2, 3), device=DEVICE)
    dist.reduce_scatter_tensor(out, ember.tensor(big[rank], dtype=ember.float32, device=DEVICE))
    check("reduce_scatter_tensor", out, np.sum(np.stack(big), 0)[2 * rank : 2 * rank + 2], 1e-5)
    dist.reduce_scatter_tensor(
        out, ember.tensor(big[rank], dtype=ember.float32, device=DEVICE), op=ReduceOp.AVG
    )
    check("reduce_scatter AVG", out, np.mean(np.stack(big), 0)[2 * rank : 2 * rank + 2], 1e-5)

    objects: list[object] = [None] * world
    dist.all_gather_object(objects, {"rank": rank, "name": "x" * rank})
    assert objects == [{"rank": r, "name": "x" * r} for r in range(world)], objects
    sent = [rank, "payload"] if rank == world - 1 else [None, None]
    dist.broadcast_object_list(sent, src=world - 1)
    assert sent == [world - 1, "payload"], sent

    # A subgroup of the odd ranks only; the others get NON_GROUP_MEMBER and skip.
    odd = dist.new_group([r for r in range(world) if r % 2 == 1])
    if rank % 2 == 1:
        assert isinstance(odd, dist.ProcessGroup)
        tensor = ember.ones(2, device=DEVICE)
        dist.all_reduce(tensor, group=odd)
        check("subgroup all_reduce", tensor, np.full(2, len(range(1, world, 2))))
        assert dist.get_rank(odd) == rank // 2
    else:
        assert odd == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(odd) == -1
        assert dist.all_reduce(ember.ones(2), group=odd) is None

    if world > 1:
        disagree(rank)
    tensor = ember.ones(2, device=DEVICE)
    dist.all_reduce(tensor)
    check("all_reduce after errors", tensor, np.full(2, world))

    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"rank {rank}: collectives OK on {DEVICE}")


def disagree(rank: int) -> None:
    """Ranks that disagree get the same clear error, and the group stays usable."""
    try:
        dist.all_reduce(ember.ones(3 + rank, device=DEVICE))
    except dist.DistError as error:
        assert "float32[3]" in str(error) and "float32[4]" in str(error), error
    else:
        raise AssertionError("a shape mismatch across ranks was not reported")
    try:
        if rank == 0:
            dist.all_reduce(ember.ones(3, device=DEVICE))
        else:
            dist.broadcast(ember.ones(3, device=DEVICE), src=0)
    except dist.DistError as error:
        assert "different collectives" in str(error), error
    else:
        raise AssertionError("different collectives across ranks were not reported")


if __name__ == "__main__":
    main()
