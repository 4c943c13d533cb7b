"""Rank 0 writes checkpoints while rank 1 reads the same path: every read is whole.

`ember.save` to a path writes a temporary file beside it and renames it over the old one,
so a reader on another rank sees the previous checkpoint or the new one, never a torn
file; only rank 0 writes (the recipe of docs/distributed.md)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import ember
import ember.distributed as dist

VERSIONS = 15


def main() -> None:
    folder = Path(sys.argv[1])
    path = folder / "model.ckpt"
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    if rank == 0:
        ember.save({"step": -1, "weight": ember.full((1 << 18,), -1.0)}, path)
    dist.barrier()
    reads = 0
    if rank == 0:
        for step in range(VERSIONS):
            ember.save({"step": step, "weight": ember.full((1 << 18,), float(step))}, path)
    else:
        deadline = time.monotonic() + 20
        last = -1
        while last < VERSIONS - 1 and time.monotonic() < deadline:
            state = ember.load(path)  # a torn file would fail its digest check here
            step, weight = state["step"], state["weight"]
            assert bool((weight == float(step)).all()), f"mixed checkpoint at step {step}"
            assert step >= last, f"went back from {last} to {step}"
            last, reads = step, reads + 1
    dist.barrier()
    final = ember.load(path)
    assert final["step"] == VERSIONS - 1
    leftovers = sorted(p.name for p in folder.iterdir())
    assert leftovers == ["model.ckpt"], leftovers
    print(f"rank {rank}: checkpoints whole ({reads} concurrent reads)")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
