"""DDP training steps, worker side: steps/s and the communication hidden behind backward.

The models, initial weights and batch are bench_training.py's MLP and CNN (batch 64 of
random inputs, SGD lr 0.01, cross-entropy). The global batch stays 64: each of n ranks
trains on its 64/n rows. `library` is `ember` or `torch` (with its gloo backend); both
run the same measurements:

- steps/s of whole steps (zero_grad, forward, backward, step): one process without DDP (at
  one rank only), and DDP at the job's world size;
- at two ranks and more, per step: (a) backward with DDP's all-reduces, (b) backward under
  `no_sync()`, (c) the all-reduces of the same buckets alone (flat float32 buffers of the
  buckets' sizes, launched asynchronously back to back and waited, as DDP does).
  hidden = 1 - ((a) - (b)) / (c), clipped to [0, 1]: 1 when communication costs backward
  nothing, 0 when it is all added on top.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
from mpi4py import MPI

from benchmarks.bench_training import _cnn, _cnn_inputs, _mlp, _mlp_inputs
from benchmarks.distributed_timing import interleaved

__all__ = ["MODELS", "bucket_sizes", "measure_training"]

_GLOBAL_BATCH: Final = 64
_DEFAULT_CAP_MB: Final = 25.0
_LR: Final = 0.01
MODELS: Final = {"mlp": (_mlp, _mlp_inputs), "cnn": (_cnn, _cnn_inputs)}
# Whole steps per timed repetition: about 50-100 ms of work at batch 64 on one thread.
_STEPS: Final = {"mlp": 20, "cnn": 4}


def bucket_sizes(numels: Sequence[int], cap_mb: float = _DEFAULT_CAP_MB) -> list[int]:
    """Elements per bucket of float32 parameters of `numels`, as DDP assigns them (Ember's
    assignment, which is PyTorch's: reverse order, a bucket closed once it reaches its cap,
    1 MiB for the first under the default cap)."""
    import ember
    from ember.nn.parallel._reducer import FIRST_BUCKET_BYTES, assign_buckets

    cap = int(cap_mb * (1 << 20))
    first = FIRST_BUCKET_BYTES if cap_mb == _DEFAULT_CAP_MB else cap
    params = [ember.empty(n) for n in numels]
    return [sum(numels[i] for i in members) for members in assign_buckets(params, [first, cap])]


class _Setup:
    """One library's model, optimizer and this rank's shard of the batch."""

    def __init__(self, lib: Any, kind: str, rank: int, ranks: int) -> None:
        build, make_inputs = MODELS[kind]
        inputs = make_inputs(np.random.default_rng(0))
        rows = _GLOBAL_BATCH // ranks
        shard = slice(rank * rows, (rank + 1) * rows)
        self.lib = lib
        self.x = lib.from_numpy(np.ascontiguousarray(inputs["x"][shard]))
        self.y = lib.from_numpy(np.ascontiguousarray(inputs["y"][shard]))
        self.model = build(lib)
        with lib.no_grad():
            for index, parameter in enumerate(self.model.parameters()):
                parameter.copy_(lib.from_numpy(inputs[f"p{index}"]))
        self.numels = [int(p.numel()) for p in self.model.parameters()]
        self.loss_function = lib.nn.CrossEntropyLoss()
        self.rows = rows

    def step(self, module: Any) -> Callable[[], object]:
        """One whole training step of `module` (the model, or DDP around it)."""
        optimizer = self.lib.optim.SGD(module.parameters(), lr=_LR)

        def run() -> None:
            optimizer.zero_grad()
            self.loss_function(module(self.x), self.y).backward()
            optimizer.step()

        return run


def measure_training(
    lib: Any, wrap: Callable[..., Any], group: Any, kinds: Sequence[str], quick: bool
) -> list[dict[str, Any]]:
    """Rows for each model: `wrap(model, **options)` makes the library's DDP module;
    `group` all-reduces a flat tensor asynchronously (`group(t)` returns a waitable)."""
    comm = MPI.COMM_WORLD
    rank, ranks = comm.Get_rank(), comm.Get_size()
    rows = []
    for kind in kinds:
        setup = _Setup(lib, kind, rank, ranks)
        count = 2 if quick else _STEPS[kind]
        repetitions = 3 if quick else 5
        statements: dict[str, Callable[[], object]] = {}
        if ranks == 1:
            statements["single"] = setup.step(setup.model)
        ddp = wrap(setup.model)
        statements["ddp"] = setup.step(ddp)
        samples = interleaved(comm, statements, repetitions=repetitions, warmup=1, calls=count)
        row: dict[str, Any] = {
            "model": kind,
            "ranks": ranks,
            "rows_per_rank": setup.rows,
            "steps_per_s": {name: 1 / s.per_call() for name, s in samples.items()},
            "steps_per_s_from_min": {
                name: 1 / s.per_call(best=True) for name, s in samples.items()
            },
        }
        if ranks > 1:
            row["overlap"] = _overlap(setup, ddp, group, 3 if quick else 15)
        rows.append(row)
    return rows


def _overlap(setup: _Setup, ddp: Any, group: Any, repetitions: int) -> dict[str, Any]:
    """Median milliseconds of (a), (b), (c) and the hidden share (see the module's doc)."""
    comm = MPI.COMM_WORLD
    lib = setup.lib
    sizes = bucket_sizes(setup.numels)
    buffers = [lib.zeros(size, dtype=lib.float32) for size in sizes]
    pending: dict[str, Any] = {}

    def forward(synchronised: bool) -> Callable[[], object]:
        def prepare() -> None:
            ddp.zero_grad(set_to_none=True)
            stack = contextlib.ExitStack()
            if not synchronised:
                stack.enter_context(ddp.no_sync())
            pending["stack"] = stack
            pending["loss"] = setup.loss_function(ddp(setup.x), setup.y)

        return prepare

    def backward() -> None:
        pending["loss"].backward()

    def buckets_alone() -> None:
        for work in [group(buffer) for buffer in buffers]:
            work.wait()

    statements = {"with_allreduce": backward, "no_sync": backward, "allreduce_alone": buckets_alone}
    prepares = {"with_allreduce": forward(True), "no_sync": forward(False)}
    samples = interleaved(
        comm,
        statements,
        repetitions=repetitions,
        warmup=2,
        prepare=prepares,
        finish=lambda: _close(pending),
    )
    ms = {name: s.per_call() * 1e3 for name, s in samples.items()}
    communication = ms["allreduce_alone"]
    added = ms["with_allreduce"] - ms["no_sync"]
    hidden = 1.0 - added / communication if communication > 0 else 0.0
    return {
        "median_ms": ms,
        "bucket_elements": sizes,
        "hidden_share": min(1.0, max(0.0, hidden)),
        "hidden_share_unclipped": hidden,
    }


def _close(pending: dict[str, Any]) -> None:
    stack = pending.pop("stack", None)
    if stack is not None:
        stack.close()
    pending.pop("loss", None)
