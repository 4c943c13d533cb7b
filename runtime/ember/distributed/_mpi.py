"""The MPI backend, on mpi4py: tensors' host memory goes straight into MPI (zero-copy).

mpi4py is imported when the backend builds its first communicator, never by `import ember`.
MPI has no float16 or bfloat16 reduction: those travel as float32 and are rounded back
(more accurate than a reduction in the narrow type, as NCCL's own bf16 reductions are not).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember._collective import CollectiveBackend, Communicator, ReduceOp
from ember._tensor import Tensor

__all__ = ["MPIBackend", "MPICommunicator"]

_NARROW_FLOATS = ("float16", "bfloat16")
_OP_NAMES = {
    ReduceOp.SUM: "SUM",
    ReduceOp.PRODUCT: "PROD",
    ReduceOp.MIN: "MIN",
    ReduceOp.MAX: "MAX",
    ReduceOp.BAND: "BAND",
    ReduceOp.BOR: "BOR",
    ReduceOp.BXOR: "BXOR",
}
# MPI reduces C bool only with the logical operations; PyTorch's bool SUM/MAX are "any",
# PRODUCT/MIN "all".
_BOOL_OP_NAMES = {
    ReduceOp.SUM: "LOR",
    ReduceOp.MAX: "LOR",
    ReduceOp.BOR: "LOR",
    ReduceOp.PRODUCT: "LAND",
    ReduceOp.MIN: "LAND",
    ReduceOp.BAND: "LAND",
    ReduceOp.BXOR: "LXOR",
}


def _array(tensor: Tensor) -> np.ndarray:
    """The tensor's host memory as a flat array (the runtime passes detached, contiguous
    tensors)."""
    return tensor.numpy().reshape(-1)


class MPICommunicator(Communicator):
    """A group on one MPI communicator (a duplicate, so user MPI traffic never mixes in)."""

    def __init__(self, comm: Any, mpi: Any) -> None:
        self._comm = comm
        self._mpi = mpi
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        # MPI's op objects by (is bool, ReduceOp), looked up once.
        self._ops = {
            flag: {op: getattr(mpi, name) for op, name in table.items()}
            for flag, table in ((False, _OP_NAMES), (True, _BOOL_OP_NAMES))
        }

    def _op(self, op: ReduceOp, tensor: Tensor) -> Any:
        return self._ops[tensor.dtype.name == "bool"][op]

    def all_reduce(self, tensor: Tensor, op: ReduceOp) -> None:
        array = _array(tensor)
        if tensor.dtype.name in _NARROW_FLOATS:
            wide = array.astype(np.float32)
            self._comm.Allreduce(self._mpi.IN_PLACE, wide, op=self._op(op, tensor))
            array[...] = wide.astype(array.dtype)
            return
        self._comm.Allreduce(self._mpi.IN_PLACE, array, op=self._op(op, tensor))

    def broadcast(self, tensor: Tensor, src: int) -> None:
        array = _array(tensor)
        self._comm.Bcast(_bytes(array), root=src)

    def all_gather(self, output: Tensor, tensor: Tensor) -> None:
        self._comm.Allgather(_bytes(_array(tensor)), _bytes(_array(output)))

    def reduce_scatter(self, output: Tensor, tensor: Tensor, op: ReduceOp) -> None:
        source, target = _array(tensor), _array(output)
        if tensor.dtype.name in _NARROW_FLOATS:
            wide = np.empty(target.shape, np.float32)
            wide_source = source.astype(np.float32)
            self._comm.Reduce_scatter_block(wide_source, wide, op=self._op(op, tensor))
            target[...] = wide.astype(target.dtype)
            return
        self._comm.Reduce_scatter_block(source, target, op=self._op(op, tensor))

    def barrier(self) -> None:
        self._comm.Barrier()

    def exchange(self, values: Sequence[int]) -> list[list[int]]:
        mine = np.asarray(values, dtype=np.int64)
        everyone = np.empty((self.size, mine.size), dtype=np.int64)
        self._comm.Allgather(mine, everyone)
        return [row.tolist() for row in everyone]

    def split(self, ranks: Sequence[int]) -> Communicator | None:
        member = self.rank in ranks
        color = 0 if member else self._mpi.UNDEFINED
        key = list(ranks).index(self.rank) if member else 0
        comm = self._comm.Split(color, key)
        if not member:
            return None
        return MPICommunicator(comm, self._mpi)

    def close(self) -> None:
        if self._comm != self._mpi.COMM_NULL:
            self._comm.Free()


def _bytes(array: np.ndarray) -> Any:
    """Data movement needs no datatype: every dtype (bfloat16 too) travels as bytes."""
    return array.view(np.uint8)


class MPIBackend(CollectiveBackend):
    """`backend="mpi"`: CPU tensors in place, others staged through host memory."""

    name = "mpi"
    reads_host_memory = True

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("mpi4py") is None:
            return "mpi4py is not installed (pip install 'ember[mpi]')"
        return None

    def world(self) -> Communicator:
        from mpi4py import MPI  # initialises MPI: only when a process group is made

        return MPICommunicator(MPI.COMM_WORLD.Dup(), MPI)
