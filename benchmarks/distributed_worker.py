"""One rank of the distributed suite's jobs: `mpiexec -n N python -m mpi4py -m
benchmarks.distributed_worker {bandwidth,training} --output FILE [--quick]`.

Rank 0 writes the results as JSON to FILE, again after each part, so that a job that
fails later still leaves what it measured (the suite reports the failure beside it). Each
rank runs one intra-op thread: the ranks share the machine's cores. Under `python -m
mpi4py` an exception on any rank aborts the whole job, so no rank is left waiting in a
collective the failed one will never join.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

from mpi4py import MPI
from threadpoolctl import (  # type: ignore[import-untyped]  # ships no type information
    threadpool_limits,
)

import ember
import ember.distributed
from benchmarks.distributed_allreduce import measure_bandwidth, profile_overhead
from benchmarks.distributed_training import MODELS, measure_training

__all__ = ["main"]

SIZES_MIB: Final = (1, 4, 16, 64)
_TORCH_TIMEOUT: Final = timedelta(seconds=30)


def main(argv: list[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    threadpool_limits(limits=1)  # the suite's environment says so too, before any import
    ember.set_num_threads(1)
    document: dict[str, Any] = {
        "ranks": MPI.COMM_WORLD.Get_size(),
        "mpi": MPI.Get_library_version().strip(),
    }
    output = Path(arguments.output)
    if arguments.part == "bandwidth":
        ember.distributed.init_process_group("mpi")
        sizes = SIZES_MIB[:1] if arguments.quick else SIZES_MIB
        document["bandwidth"] = measure_bandwidth(ember, sizes, arguments.quick)
        _write(output, document)
        document["profile"] = profile_overhead(ember, sizes[0], arguments.quick)
        ember.distributed.destroy_process_group()
    else:
        kinds = ("mlp",) if arguments.quick else tuple(MODELS)
        document["training"] = {}
        for name, start in (("ember", _ember), ("torch", _torch)):
            document["training"][name] = _library_rows(start, kinds, arguments.quick)
            _write(output, document)
    _write(output, document)
    return 0


def _library_rows(
    start: Callable[[], tuple[Any, Any, Any]], kinds: tuple[str, ...], quick: bool
) -> dict[str, Any]:
    """The library's rows, or why it could not start (the same on every rank: no collective
    has run when `start` fails)."""
    try:
        lib, wrap, group = start()
    except Exception as error:  # reported in the table: the library's DDP is unavailable
        return {"error": f"{type(error).__name__}: {error}".strip()}
    return {
        "version": str(lib.__version__),
        "rows": measure_training(lib, wrap, group, kinds, quick),
    }


def _ember() -> tuple[Any, Any, Any]:
    parallel = importlib.import_module("ember.nn.parallel")
    ember.distributed.init_process_group("mpi")
    world = ember.distributed.group.WORLD
    return ember, parallel.DistributedDataParallel, world.allreduce


def _torch() -> tuple[Any, Any, Any]:
    import torch  # optional: the reference column is left out without it
    import torch.distributed as dist

    torch.set_num_threads(1)
    threadpool_limits(limits=1)
    comm = MPI.COMM_WORLD
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:
        raise RuntimeError("MASTER_PORT is not set (the suite sets it for gloo)")
    dist.init_process_group(
        "gloo",
        init_method="env://",
        rank=comm.Get_rank(),
        world_size=comm.Get_size(),
        timeout=_TORCH_TIMEOUT,
    )

    def allreduce(tensor: Any) -> Any:
        return dist.all_reduce(tensor, async_op=True)

    return torch, torch.nn.parallel.DistributedDataParallel, allreduce


def _write(path: Path, document: dict[str, Any]) -> None:
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(document, indent=1))
    partial.replace(path)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchmarks.distributed_worker", description=__doc__)
    parser.add_argument("part", choices=("bandwidth", "training"))
    parser.add_argument("--output", required=True)
    parser.add_argument("--quick", action="store_true")
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
