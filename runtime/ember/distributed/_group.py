"""`ProcessGroup`: a set of ranks, the engines that serve its tensors, and its thread.

Every collective goes through `_submit`: route each tensor to an engine (in place when the
engine reads that memory, else through a contiguous or host copy written back afterwards),
then queue one blocking step on the group's channel. The step optionally starts with an
agreement check — every rank all-gathers a short signature of the call (collective, op,
dtype, shape) and every rank raises the same clear error if they differ — so a mismatch is
an exception on all ranks instead of a hang or a silently corrupted result.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from ember._collective import CollectiveBackend, Communicator, ReduceOp
from ember._dtype import BY_NAME as DTYPES
from ember._tensor import Tensor
from ember.distributed._errors import DistError
from ember.distributed._work import Channel, Work

__all__ = ["ProcessGroup", "Routed"]

_SHAPE_SLOTS: Final = 6  # dimensions carried in a signature; the rest are folded into a hash


@dataclass
class Routed:
    """One tensor as an engine sees it, and how its result gets back to the caller's."""

    comm: Communicator
    engine: CollectiveBackend
    target: Tensor  # contiguous, on memory the engine reads
    original: Tensor
    copied: bool  # target is a copy: write it back into `original` afterwards

    def write_back(self) -> None:
        if self.copied:
            self.original.detach().copy_(self.target)


def describe(tensor: Tensor) -> str:
    """`float32[4, 3] on cpu`, for error messages."""
    return f"{tensor.dtype.name}{list(tensor.shape)} on {tensor.device}"


def _code(text: str) -> int:
    return zlib.crc32(text.encode())


_COLLECTIVES: Final = (
    "all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier", "exchange",
    "new_group",
)  # fmt: skip
_NAMES: Final = {_code(n): n for n in (*_COLLECTIVES, *(op.name for op in ReduceOp), *DTYPES)}
_CODES: Final = {name: code for code, name in _NAMES.items()}


def _decode(row: list[int]) -> str:
    """A signature as words: `all_reduce(SUM) of float32[4, 3]`."""
    kind, op, dtype, _numel, ndim, *slots = row
    text = _NAMES.get(kind, "?")
    if op:
        text += f"({_NAMES.get(op, '?')})"
    if ndim >= 0 and dtype:
        dims = slots[: min(ndim, _SHAPE_SLOTS)]
        shape = ", ".join(map(str, dims)) + (", ..." if ndim > _SHAPE_SLOTS else "")
        text += f" of {_NAMES.get(dtype, '?')}[{shape}]"
    if kind == _code("broadcast"):
        text += f" from group rank {slots[-1]}"
    return text


class ProcessGroup:
    """Ranks that run collectives together, as `torch.distributed.ProcessGroup`."""

    def __init__(
        self,
        engines: Sequence[tuple[CollectiveBackend, Communicator]],
        ranks: Sequence[int],
        timeout: timedelta,
        name: str,
    ) -> None:
        self._engines = list(engines)
        self._ranks = list(ranks)  # global ranks, in group-rank order
        self._timeout = timeout
        self._name = name
        self._channel = Channel(name)
        first = self._engines[0][1]
        self._rank = first.rank
        self._size = first.size

    # -- what it is -----------------------------------------------------------------------

    def rank(self) -> int:
        """This process's rank in the group."""
        return self._rank

    def size(self) -> int:
        """How many ranks the group has."""
        return self._size

    def name(self) -> str:
        return self._name

    @property
    def group_name(self) -> str:
        return self._name

    def backend_names(self) -> list[str]:
        return [engine.name for engine, _ in self._engines]

    def ranks(self) -> list[int]:
        """The global ranks of the members, in group-rank order."""
        return list(self._ranks)

    def __repr__(self) -> str:
        engines = ",".join(self.backend_names())
        return f"ProcessGroup({self._name}, backend={engines}, rank={self._rank}/{self._size})"

    # -- PyTorch's low-level collectives: asynchronous, in place, no agreement check -------

    def allreduce(self, tensor: Tensor | Sequence[Tensor], op: ReduceOp = ReduceOp.SUM) -> Work:
        """Reduce `tensor` in place across the group (the fast path DDP's buckets use)."""
        return self.all_reduce_work(_one(tensor, "allreduce"), op, check=False)

    def broadcast(self, tensor: Tensor | Sequence[Tensor], src: int = 0) -> Work:
        """Overwrite `tensor` with group rank `src`'s."""
        return self.broadcast_work(_one(tensor, "broadcast"), src, check=False)

    def barrier(self) -> Work:
        return self._submit("barrier", [], lambda routed: self._engines[0][1].barrier(), None)

    # -- the runtime's entry points --------------------------------------------------------

    def all_reduce_work(
        self, tensor: Tensor, op: ReduceOp, check: bool, blocking: bool = False
    ) -> Work:
        size = self._size

        def step(routed: list[Routed]) -> None:
            item = routed[0]
            if op is ReduceOp.AVG:
                item.comm.all_reduce(item.target, ReduceOp.SUM)
                item.target.div_(size)
            else:
                item.comm.all_reduce(item.target, op)
            item.write_back()

        signature = self._signature(check, op, tensor)
        return self._submit("all_reduce", [tensor], step, signature, blocking)

    def broadcast_work(self, tensor: Tensor, src: int, check: bool, blocking: bool = False) -> Work:
        def step(routed: list[Routed]) -> None:
            routed[0].comm.broadcast(routed[0].target, src)
            routed[0].write_back()

        signature = self._signature(check, None, tensor, src)
        return self._submit("broadcast", [tensor], step, signature, blocking)

    def all_gather_work(
        self, output: Tensor, tensor: Tensor, check: bool, blocking: bool = False
    ) -> Work:
        def step(routed: list[Routed]) -> None:
            out, item = routed
            out.comm.all_gather(out.target, item.target)
            out.write_back()

        signature = self._signature(check, None, tensor)
        return self._submit("all_gather", [output, tensor], step, signature, blocking)

    def reduce_scatter_work(
        self, output: Tensor, tensor: Tensor, op: ReduceOp, check: bool, blocking: bool = False
    ) -> Work:
        size = self._size

        def step(routed: list[Routed]) -> None:
            out, item = routed
            wire = ReduceOp.SUM if op is ReduceOp.AVG else op
            out.comm.reduce_scatter(out.target, item.target, wire)
            if op is ReduceOp.AVG:
                out.target.div_(size)
            out.write_back()

        signature = self._signature(check, op, tensor)
        return self._submit("reduce_scatter", [output, tensor], step, signature, blocking)

    def barrier_work(self, check: bool, blocking: bool = False) -> Work:
        def step(routed: list[Routed]) -> None:
            self._engines[0][1].barrier()

        signature = self._signature(check, None, None)
        return self._submit("barrier", [], step, signature, blocking)

    def exchange(self, values: Sequence[int]) -> list[list[int]]:
        """All-gather a few integers (blocking, in order with the queued collectives)."""
        box: list[list[list[int]]] = []

        def step(routed: list[Routed]) -> None:
            box.append(self._engines[0][1].exchange(values))

        self._submit("exchange", [], step, None, blocking=True)
        return box[0]

    def wait(self, work: Work) -> None:
        """Wait for `work` within the group's timeout."""
        work.wait(self._timeout)

    def close(self) -> None:
        self._channel.close()
        for _, comm in self._engines:
            comm.close()

    # -- plumbing ---------------------------------------------------------------------------

    def _signature(
        self, check: bool, op: ReduceOp | None, tensor: Tensor | None, extra: int = 0
    ) -> list[int] | None:
        if not check or self._size == 1:
            return None
        if tensor is None:
            return [0, 0, 0, -1] + [-1] * _SHAPE_SLOTS + [extra]
        shape = list(tensor.shape)
        slots = (shape + [-1] * _SHAPE_SLOTS)[:_SHAPE_SLOTS]
        if len(shape) > _SHAPE_SLOTS:
            slots[-1] = _code(repr(shape[_SHAPE_SLOTS - 1 :]))
        op_code = 0 if op is None else _CODES[op.name]
        return [op_code, _CODES[tensor.dtype.name], tensor.numel(), len(shape), *slots, extra]

    def _submit(
        self,
        name: str,
        tensors: list[Tensor],
        step: Callable[[list[Routed]], None],
        signature: list[int] | None,
        blocking: bool = False,
    ) -> Work:
        routed = [self._route(name, t) for t in tensors]
        work = Work(name, [r.original for r in routed])
        if self._size == 1:
            # A group of one: nothing to exchange, but AVG and copies still apply.
            step(routed)
            work._finish(None)
            return work
        full = [_CODES[name], *signature] if signature is not None else None

        def run() -> None:
            if full is not None:
                self._agree(name, full, tensors)
            step(routed)

        if blocking:
            self._channel.run(work, run, self._timeout)
            return work
        return self._channel.submit(work, run)

    def _agree(self, name: str, signature: list[int], tensors: list[Tensor]) -> None:
        rows = self._engines[0][1].exchange(signature)
        if all(row == rows[0] for row in rows):
            return
        kinds = {row[0] for row in rows}
        what = "different collectives" if len(kinds) > 1 else "different arguments"
        calls = "; ".join(f"rank {r}: {_decode(row)}" for r, row in enumerate(rows))
        raise DistError(
            f"ember.distributed.{name}: the ranks called {what} ({calls}). Every rank must "
            "call the same collectives, in the same order, with tensors of the same shape "
            "and dtype."
        )

    def _route(self, name: str, tensor: Tensor) -> Routed:
        device_type = tensor.device.type
        for engine, comm in self._engines:
            if device_type in engine.device_types:
                return _in_place(comm, engine, tensor)
        host_accessible = tensor._device._backend.host_accessible
        for engine, comm in self._engines:
            if engine.reads_host_memory:
                if host_accessible:
                    return _in_place(comm, engine, tensor)
                staged = tensor.detach().to("cpu").contiguous()
                return Routed(comm, engine, staged, tensor, copied=True)
        names = ", ".join(self.backend_names())
        raise DistError(
            f"ember.distributed.{name}: backend {names} cannot move {device_type} tensors; "
            f"use a backend that serves them (for example 'cpu:mpi,cuda:nccl')"
        )


def _in_place(comm: Communicator, engine: CollectiveBackend, tensor: Tensor) -> Routed:
    if tensor.is_contiguous():
        return Routed(comm, engine, tensor.detach(), tensor, copied=False)
    return Routed(comm, engine, tensor.detach().contiguous(), tensor, copied=True)


def _one(tensors: Tensor | Sequence[Tensor], name: str) -> Tensor:
    if isinstance(tensors, Tensor):
        return tensors
    items = list(tensors)
    if len(items) != 1 or not isinstance(items[0], Tensor):
        raise ValueError(f"ProcessGroup.{name} takes one tensor (or a list of one)")
    return items[0]
