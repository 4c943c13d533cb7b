"""ember.distributed's plugin contract: `CollectiveBackend`, its `Communicator`, `ReduceOp`.

A plugin returns backends from the `ember_collective_backends` hook (see
docs/plugins/collective-backends.md). The runtime owns everything device-agnostic around
them: argument checks, the cross-rank agreement check, staging tensors of devices the
engine cannot read through host memory, AVG, the communication thread and `Work`. A
communicator's methods are blocking and run on that thread, in submission order; they get
contiguous tensors on a device the backend accepts and write results in place.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ember._tensor import Tensor

__all__ = ["CollectiveBackend", "Communicator", "ReduceOp"]


class ReduceOp(enum.Enum):
    """SUM, AVG (SUM divided by the group's size, floating dtypes), PRODUCT, MIN, MAX and
    the bitwise BAND, BOR, BXOR (integer and bool dtypes)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"ReduceOp.{self.name}"


# PyTorch spells the enum both ways: `ReduceOp.SUM` and `ReduceOp.RedOpType.SUM`.
ReduceOp.RedOpType = ReduceOp  # type: ignore[attr-defined]


class Communicator(ABC):
    """One group of ranks on one engine; every member calls each method in the same order."""

    #: this process's rank in the group, and the group's size
    rank: int
    size: int

    @abstractmethod
    def all_reduce(self, tensor: Tensor, op: ReduceOp) -> None:
        """Combine `tensor` across ranks with `op` (never AVG: the runtime divides), in place."""

    @abstractmethod
    def broadcast(self, tensor: Tensor, src: int) -> None:
        """Overwrite `tensor` with group rank `src`'s."""

    @abstractmethod
    def all_gather(self, output: Tensor, tensor: Tensor) -> None:
        """Write every rank's `tensor` into `output` (size * numel elements), in rank order."""

    @abstractmethod
    def reduce_scatter(self, output: Tensor, tensor: Tensor, op: ReduceOp) -> None:
        """Reduce `tensor` (size * numel(output) elements) and keep block `rank` in `output`."""

    @abstractmethod
    def barrier(self) -> None:
        """Return once every rank of the group has called it."""

    @abstractmethod
    def exchange(self, values: Sequence[int]) -> list[list[int]]:
        """All-gather a few integers on the control path: every rank's `values`, in rank
        order. The runtime checks that ranks agree on a collective with it."""

    @abstractmethod
    def split(self, ranks: Sequence[int]) -> Communicator | None:
        """A communicator of the members `ranks` (group ranks, in their new order); every
        member of this group calls it, and the ranks not listed get None."""

    def close(self) -> None:  # noqa: B027 - most engines have nothing to release
        """Release the engine's resources for this group."""


class CollectiveBackend(ABC):
    """A communication engine: its name (`init_process_group(backend=name)`) and how it
    builds the communicator of all processes."""

    #: the name users pass to `init_process_group`: lower-case letters, digits, underscores
    name: str
    #: device types whose tensors it reads in place (`cuda` for NCCL)
    device_types: frozenset[str] = frozenset()
    #: whether it reads host memory: then tensors of any host-accessible device go in place
    #: and those of other devices are staged through a cpu copy by the runtime
    reads_host_memory: bool = False

    @abstractmethod
    def unavailable_reason(self) -> str | None:
        """None when usable in this process, else why not (a missing package, no device)."""

    @abstractmethod
    def world(self) -> Communicator:
        """The communicator of every process of the job (rank and size from the launcher)."""
