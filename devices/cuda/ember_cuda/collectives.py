"""The NCCL collective backend (`init_process_group("nccl")`), on CuPy's NCCL bindings.

cuda tensors go to NCCL in place: the communicator reads device addresses
(`Storage.handle` plus the tensor's byte offset) and enqueues on the calling thread's
current stream, so the collective is ordered after the kernels that produced the tensor
and before those that read it, as in PyTorch. The job is bootstrapped over MPI: rank 0
makes the NCCL unique id and broadcasts it, and MPI carries the control path (the
runtime's agreement check, group splits, barriers). Other devices' tensors go to the MPI
engine of a mixed group (`backend=None`, or `"cpu:mpi,cuda:nccl"`).

NOT YET RUN ON A GPU: written against CuPy's `cupy_backends.cuda.libs.nccl` API on a
machine without one; benchmarks/gpu/run.sh runs it (world size 1 on the one-GPU machine,
which exercises every call without a peer).
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import ember
from ember.distributed import MPIBackend
from ember.plugins.sdk import (
    CollectiveBackend,
    Communicator,
    ReduceOp,
    Tensor,
    current_native_stream,
)
from ember_cuda.backend import BACKEND

__all__ = ["NCCLBackend", "NCCLCommunicator", "nccl_dtype", "nccl_op"]

_ID_BYTES: Final = 128  # NCCL_UNIQUE_ID_BYTES
NCCL_HINT: Final = "pip install 'ember-cuda[nccl13]' (or [nccl12]) and 'ember[mpi]'"
# ncclDataType_t and ncclRedOp_t, as in nccl.h (CuPy exposes the same numbers).
_DTYPES: Final = {
    "int8": 0, "uint8": 1, "int32": 2, "int64": 4, "float16": 6, "float32": 7,
    "float64": 8, "bfloat16": 9, "bool": 1,
}  # fmt: skip
_OPS: Final = {
    ReduceOp.SUM: 0, ReduceOp.PRODUCT: 1, ReduceOp.MAX: 2, ReduceOp.MIN: 3, ReduceOp.AVG: 4
}  # fmt: skip


def nccl_dtype(tensor: Tensor) -> int:
    """NCCL's datatype for the tensor (bool travels as uint8)."""
    code = _DTYPES.get(tensor.dtype.name)
    if code is None:
        raise TypeError(f"nccl: no NCCL datatype for {tensor.dtype.name}")
    return code


def nccl_op(op: ReduceOp, tensor: Tensor) -> int:
    """NCCL's reduction; bool SUM/MAX is MAX (any) and PRODUCT/MIN is MIN (all) on uint8."""
    if tensor.dtype.name == "bool":
        op = {ReduceOp.SUM: ReduceOp.MAX, ReduceOp.PRODUCT: ReduceOp.MIN}.get(op, op)
    code = _OPS.get(op)
    if code is None:
        raise ValueError(f"nccl: {op!r} is not an NCCL reduction (SUM, PRODUCT, MIN, MAX, AVG)")
    return code


def _address(tensor: Tensor) -> int:
    return int(tensor.untyped_storage().handle) + tensor.storage_offset() * tensor.element_size()


def _stream(tensor: Tensor) -> int:
    return int(current_native_stream(tensor.device).handle)


def _preload_nccl() -> None:
    """Load libnccl.so.2 from the nvidia-nccl wheel, where CuPy looks only on the loader path."""
    spec = importlib.util.find_spec("nvidia.nccl")
    if spec is None or not spec.submodule_search_locations:
        return
    for folder in spec.submodule_search_locations:
        library = Path(folder) / "lib" / "libnccl.so.2"
        if library.exists():
            ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
            return


def _nccl() -> Any:
    try:
        return importlib.import_module("cupy_backends.cuda.libs.nccl")
    except ImportError:
        _preload_nccl()
        return importlib.import_module("cupy_backends.cuda.libs.nccl")


class NCCLCommunicator(Communicator):
    """An NCCL communicator for the data, beside the MPI communicator that bootstrapped it
    and carries the control path."""

    def __init__(self, nccl: Any, control: Communicator) -> None:
        self._nccl = nccl
        self._control = control
        self.rank, self.size = control.rank, control.size
        # The unique id (128 chars) travels from rank 0 as an int64 cpu tensor over MPI.
        identity = ember.zeros(_ID_BYTES, dtype=ember.int64)
        if self.rank == 0:
            identity.copy_(ember.tensor(list(nccl.get_unique_id()), dtype=ember.int64))
        control.broadcast(identity, 0)
        self._comm = nccl.NcclCommunicator(self.size, tuple(identity.tolist()), self.rank)

    def all_reduce(self, tensor: Tensor, op: ReduceOp) -> None:
        address = _address(tensor)
        self._comm.allReduce(
            address, address, tensor.numel(), nccl_dtype(tensor), nccl_op(op, tensor),
            _stream(tensor),
        )  # fmt: skip

    def broadcast(self, tensor: Tensor, src: int) -> None:
        address = _address(tensor)
        self._comm.broadcast(
            address, address, tensor.numel(), nccl_dtype(tensor), src, _stream(tensor)
        )

    def all_gather(self, output: Tensor, tensor: Tensor) -> None:
        self._comm.allGather(
            _address(tensor), _address(output), tensor.numel(), nccl_dtype(tensor),
            _stream(tensor),
        )  # fmt: skip

    def reduce_scatter(self, output: Tensor, tensor: Tensor, op: ReduceOp) -> None:
        self._comm.reduceScatter(
            _address(tensor), _address(output), output.numel(), nccl_dtype(tensor),
            nccl_op(op, tensor), _stream(tensor),
        )  # fmt: skip

    def barrier(self) -> None:
        self._control.barrier()

    def exchange(self, values: Sequence[int]) -> list[list[int]]:
        return self._control.exchange(values)

    def split(self, ranks: Sequence[int]) -> Communicator | None:
        control = self._control.split(ranks)
        return None if control is None else NCCLCommunicator(self._nccl, control)

    def close(self) -> None:
        self._comm.destroy()
        self._control.close()


class NCCLBackend(CollectiveBackend):
    """`backend="nccl"`: cuda tensors on NVIDIA's collective library."""

    name = "nccl"
    device_types = frozenset({"cuda"})

    def unavailable_reason(self) -> str | None:
        reason = BACKEND.unavailable_reason()
        if reason is not None:
            return f"no cuda device ({reason})"
        if importlib.util.find_spec("mpi4py") is None:
            return f"NCCL is bootstrapped over MPI and mpi4py is missing ({NCCL_HINT})"
        try:
            _nccl()
        except ImportError as error:
            return f"CuPy's NCCL bindings do not load ({error}); {NCCL_HINT}"
        return None

    def world(self) -> Communicator:
        return NCCLCommunicator(_nccl(), MPIBackend().world())


BACKEND_NCCL: Final = NCCLBackend()
