"""All-reduce bandwidth, worker side: `ember.distributed.all_reduce` against raw mpi4py.

Both sides reduce the same float32 buffer in place (an Ember tensor and its `.numpy()`
view): Ember through its public, checked, synchronous `all_reduce`, the reference through
`comm.Allreduce(MPI.IN_PLACE, array)` on `MPI.COMM_WORLD`. Bandwidth as NCCL-tests defines
it: algbw = bytes / time, busbw = algbw * 2(n-1)/n. The buffers hold zeros while timed
(a sum that stays finite), after one checked call on each side with rank-dependent values.

Then, at the smallest size, where Ember's fixed costs weigh most, a breakdown of them: the
floor of a checked call (the agreement check's small raw all-gather, then the raw
all-reduce), the same raw call handed to a communication thread like Ember's (`Channel`,
which `async_op=True` and DDP's buckets go through), and the unchecked asynchronous fast
path (`ProcessGroup.allreduce`) next to the checked blocking call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
from mpi4py import MPI

from benchmarks.distributed_timing import Samples, interleaved

__all__ = ["measure_bandwidth", "profile_overhead"]

_MIB: Final = 1 << 20
_SIGNATURE_LENGTH: Final = 11  # the integers each rank contributes to Ember's check


def _repetitions(mib: int, quick: bool) -> int:
    """Enough repetitions that the median settles, within about a second per size."""
    if quick:
        return 3
    return max(5, 40 // mib)


def measure_bandwidth(ember: Any, sizes_mib: Sequence[int], quick: bool) -> list[dict[str, Any]]:
    """One entry per size: both sides' times, bus bandwidths and Ember's ratio."""
    comm = MPI.COMM_WORLD
    dist = ember.distributed
    results = []
    for mib in sizes_mib:
        elements = mib * _MIB // 4
        tensor = ember.zeros(elements, dtype=ember.float32)
        array = tensor.numpy()
        statements = _sides(dist, comm, tensor, array)
        errors = {name: _check(statement, array, comm) for name, statement in statements.items()}
        array[...] = 0.0
        samples = interleaved(
            comm, statements, repetitions=_repetitions(mib, quick), warmup=1 if quick else 3
        )
        results.append(_entry(mib * _MIB, comm.Get_size(), samples, errors))
    return results


def _sides(dist: Any, comm: Any, tensor: Any, array: np.ndarray) -> dict[str, Callable[[], object]]:
    """Ember's public call and raw mpi4py's, on the same memory."""
    return {
        "ember": lambda: dist.all_reduce(tensor),
        "raw": lambda: comm.Allreduce(MPI.IN_PLACE, array),
    }


def _check(statement: Callable[[], object], array: np.ndarray, comm: Any) -> str | None:
    """Run once on rank-dependent values; the error text if the sum is wrong anywhere."""
    size, rank = comm.Get_size(), comm.Get_rank()
    array[...] = rank + 1.0
    array[::7] = 0.5 * (rank + 1)
    statement()
    total = size * (size + 1) / 2
    expected = np.full(array.shape, total, dtype=np.float32)
    expected[::7] = 0.5 * total
    wrong = int(np.count_nonzero(array != expected))
    failed = comm.allreduce(wrong, op=MPI.SUM)
    return None if failed == 0 else f"{failed} wrong elements across the ranks"


def _entry(
    nbytes: int, ranks: int, samples: dict[str, Samples], errors: dict[str, str | None]
) -> dict[str, Any]:
    factor = 2 * (ranks - 1) / ranks
    entry: dict[str, Any] = {"bytes": nbytes, "ranks": ranks}
    for name, sample in samples.items():
        side: dict[str, Any] = {"error": errors[name], **sample.as_json()}
        for key, best in (("busbw_gbs", False), ("busbw_gbs_from_min", True)):
            algbw = nbytes / sample.per_call(best=best) / 1e9
            side[key] = algbw * factor
        side["algbw_gbs"] = nbytes / sample.per_call() / 1e9
        entry[name] = side
    return entry


def profile_overhead(ember: Any, mib: int, quick: bool) -> dict[str, Any]:
    """Median microseconds of each piece of Ember's call at `mib` MiB (on the slowest rank).

    Uses two private names of ember.distributed (`_work.Channel`, `_work.Work`) to time a
    bare hand-off to a communication thread, and the runtime's entry point
    `ProcessGroup.all_reduce_work` to time the blocking call without its agreement check;
    any failure is returned as `error`.
    """
    try:
        from ember.distributed._work import Channel, Work  # private: this profile only
    except ImportError as error:
        return {"error": f"ember.distributed internals moved: {error}"}
    comm = MPI.COMM_WORLD
    dist = ember.distributed
    group = dist.group.WORLD
    tensor = ember.zeros(mib * _MIB // 4, dtype=ember.float32)
    array = tensor.numpy()
    signature = np.zeros(_SIGNATURE_LENGTH, dtype=np.int64)
    gathered = np.zeros((comm.Get_size(), _SIGNATURE_LENGTH), dtype=np.int64)
    channel = Channel("benchmark-profile")

    def through_thread(run: Callable[[], object]) -> Callable[[], object]:
        return lambda: channel.submit(Work("profile"), run).wait()

    def raw() -> None:
        comm.Allreduce(MPI.IN_PLACE, array)

    statements: dict[str, Callable[[], object]] = {
        "raw_allreduce": raw,
        "raw_signature_allgather": lambda: comm.Allgather(signature, gathered),
        "raw_allgather_then_allreduce": lambda: (comm.Allgather(signature, gathered), raw()),
        "thread_noop": through_thread(lambda: None),
        "thread_raw_allreduce": through_thread(raw),
        "group_allreduce_unchecked": lambda: group.allreduce(tensor).wait(),
        "blocking_unchecked": lambda: group.all_reduce_work(
            tensor, dist.ReduceOp.SUM, check=False, blocking=True
        ),
        "all_reduce_checked": lambda: dist.all_reduce(tensor),
    }
    try:
        samples = interleaved(
            comm, statements, repetitions=5 if quick else 40, warmup=2 if quick else 5
        )
    except TypeError as error:  # the same on every rank, before any collective of its own
        return {"error": f"ember.distributed internals changed: {error}"}
    finally:
        channel.close()
    micros = {name: sample.per_call() * 1e6 for name, sample in samples.items()}
    return {"bytes": mib * _MIB, "median_us": micros, **_shares(micros)}


def _shares(us: dict[str, float]) -> dict[str, float]:
    """The differences that name where the time goes."""
    return {
        "check_collective_us": us["raw_allgather_then_allreduce"] - us["raw_allreduce"],
        "python_us": us["all_reduce_checked"] - us["raw_allgather_then_allreduce"],
        "check_us": us["all_reduce_checked"] - us["blocking_unchecked"],
        "unchecked_blocking_overhead_us": us["blocking_unchecked"] - us["raw_allreduce"],
        "total_overhead_us": us["all_reduce_checked"] - us["raw_allreduce"],
        "thread_handoff_us": us["thread_raw_allreduce"] - us["raw_allreduce"],
        "async_unchecked_overhead_us": us["group_allreduce_unchecked"] - us["raw_allreduce"],
    }
