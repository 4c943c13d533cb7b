"""Collective backends are plugins: a third party's engine through `ember_collective_backends`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

import ember
import ember.distributed as dist
from ember.plugins import hookimpl
from ember.plugins.sdk import CollectiveBackend, Communicator, ReduceOp, Tensor


class CountingCommunicator(Communicator):
    """Delegates to MPI's communicator and counts what it was asked to do."""

    def __init__(self, inner: Communicator, calls: list[str]) -> None:
        self._inner, self._calls = inner, calls
        self.rank, self.size = inner.rank, inner.size

    def all_reduce(self, tensor: Tensor, op: ReduceOp) -> None:
        self._calls.append(f"all_reduce {op.name} {tensor.dtype.name}{list(tensor.shape)}")
        self._inner.all_reduce(tensor, op)

    def broadcast(self, tensor: Tensor, src: int) -> None:
        self._calls.append(f"broadcast {src}")
        self._inner.broadcast(tensor, src)

    def all_gather(self, output: Tensor, tensor: Tensor) -> None:
        self._calls.append("all_gather")
        self._inner.all_gather(output, tensor)

    def reduce_scatter(self, output: Tensor, tensor: Tensor, op: ReduceOp) -> None:
        self._calls.append("reduce_scatter")
        self._inner.reduce_scatter(output, tensor, op)

    def barrier(self) -> None:
        self._calls.append("barrier")
        self._inner.barrier()

    def exchange(self, values: Sequence[int]) -> list[list[int]]:
        return self._inner.exchange(values)

    def split(self, ranks: Sequence[int]) -> Communicator | None:
        inner = self._inner.split(ranks)
        return None if inner is None else CountingCommunicator(inner, self._calls)


class CountingBackend(CollectiveBackend):
    name = "counting"
    reads_host_memory = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    def unavailable_reason(self) -> str | None:
        return dist.distributed_c10d._engines()["mpi"].unavailable_reason()

    def world(self) -> Communicator:
        return CountingCommunicator(dist.distributed_c10d._engines()["mpi"].world(), self.calls)


class CountingPlugin:
    def __init__(self) -> None:
        self.backend = CountingBackend()

    @hookimpl
    def ember_collective_backends(self) -> list[CollectiveBackend]:
        return [self.backend]


class BrokenPlugin:
    @hookimpl
    def ember_collective_backends(self) -> list[CollectiveBackend]:
        raise RuntimeError("this engine's library is missing")


@pytest.fixture
def counting() -> Iterator[CountingBackend]:
    pytest.importorskip("mpi4py")
    plugin = CountingPlugin()
    ember.plugins.register(plugin, name="counting-engine")
    try:
        yield plugin.backend
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
        ember.plugins.unregister("counting-engine")


def test_a_plugin_engine_serves_the_collectives(counting: CountingBackend) -> None:
    assert dist.is_backend_available("counting")
    dist.init_process_group("counting")
    assert dist.get_backend() == "counting"
    tensor = ember.ones(3)
    dist.all_reduce(tensor, op=ReduceOp.MAX)
    dist.broadcast(tensor, src=0)
    dist.barrier()
    # AVG reaches an engine as SUM (the runtime divides), as the SDK documents.
    dist.all_reduce(tensor, op=ReduceOp.AVG)
    assert counting.calls == [
        "all_reduce MAX float32[3]", "broadcast 0", "barrier", "all_reduce SUM float32[3]"
    ]  # fmt: skip


def test_unregistering_the_plugin_removes_its_engine() -> None:
    ember.plugins.register(CountingPlugin(), name="counting-engine")
    assert "counting" in dist.distributed_c10d._engines()
    ember.plugins.unregister("counting-engine")
    assert "counting" not in dist.distributed_c10d._engines()
    with pytest.raises(ValueError, match="unknown backend 'counting'"):
        dist.init_process_group("counting")


def test_a_broken_engine_plugin_is_reported_and_the_others_still_work() -> None:
    pytest.importorskip("mpi4py")
    status = ember.plugins.register(BrokenPlugin(), name="broken-engine")
    try:
        assert status.status == "failed" and "library is missing" in (status.error or "")
        assert not dist.is_backend_available("broken")
        dist.init_process_group("mpi")
        tensor = ember.ones(2)
        dist.all_reduce(tensor)
        assert tensor.tolist() == [1.0, 1.0]
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
        ember.plugins.unregister("broken-engine")


class ClashingPlugin:
    @hookimpl
    def ember_collective_backends(self) -> list[object]:
        return [CountingBackend(), "not a backend"]


def test_a_plugin_cannot_take_mpi_or_return_junk() -> None:
    status = ember.plugins.register(ClashingPlugin(), name="clashing-engine")
    try:
        assert status.status == "failed"
        assert "not a CollectiveBackend" in (status.error or "")
        assert not dist.is_backend_available("counting")
    finally:
        ember.plugins.unregister("clashing-engine")
