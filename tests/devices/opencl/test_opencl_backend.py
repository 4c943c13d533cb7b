"""The OpenCL backend: buffers, regions, copies with offsets, streams, events, timeline."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import ember
from ember_opencl import _launch, profiling
from ember_opencl.backend import OpenCLBackend, OpenCLStream

DEVICE = "opencl:0"

# Enough work to keep PoCL busy for a few milliseconds, so that timing and ordering show.
BUSY = """
__kernel void busy(__global float* out, long n, long rounds) {
    const long i = get_global_id(0);
    if (i >= n) return;
    float x = out[i];
    for (long r = 0; r < rounds; r++) x = x * 0.999f + 1.0f;
    out[i] = x;
}
"""


@pytest.fixture
def dev() -> ember.device:
    return ember.device(DEVICE)


@pytest.fixture
def backend(dev: ember.device) -> OpenCLBackend:
    b = dev._backend
    assert isinstance(b, OpenCLBackend)
    return b


def _queue() -> OpenCLStream:
    """The native stream that the backend's copies are enqueued on here."""
    native: OpenCLStream = ember.default_stream(DEVICE).native
    return native


def _busy(dev: ember.device, buffer: object, n: int, rounds: int) -> None:
    k = _launch.kernel(dev, BUSY, "busy")
    _launch.launch(dev, k, _launch.global_size_for(n), [buffer, n, rounds], (_launch.LOCAL_SIZE,))


def test_contract_flags(backend: OpenCLBackend) -> None:
    assert backend.type == "opencl"
    assert backend.synchronous is False and backend.host_accessible is False
    assert backend.device_count() >= 1 and backend.unavailable_reason() is None


def test_copies_at_byte_offsets(backend: OpenCLBackend) -> None:
    handle, address = backend.allocate(4096, 0)
    assert isinstance(address, int) and address != 0
    source = np.arange(100, dtype=np.float32)
    backend.copy_from_host(handle, 1024, source, 0, _queue(), False)
    target = np.zeros(40, dtype=np.float32)
    backend.copy_to_host(handle, 1024 + 4 * 10, target, 0, _queue(), False)
    np.testing.assert_array_equal(target, source[10:50])


def test_allocations_have_distinct_addresses(backend: OpenCLBackend) -> None:
    blocks = [backend.allocate(1024, 0) for _ in range(4)]
    assert len({address for _, address in blocks}) == 4


def test_region_is_a_window_on_the_allocation(backend: OpenCLBackend) -> None:
    handle, address = backend.allocate(8192, 0)
    backend.copy_from_host(handle, 0, np.zeros(2048, np.float32), 0, _queue(), False)
    sub, sub_address = backend.region(handle, 4096, 1024, 0)
    assert sub_address == address + 4096
    backend.copy_from_host(sub, 8, np.array([1.5, 2.5], np.float32), 0, _queue(), False)
    whole = np.empty(2048, np.float32)
    backend.copy_to_host(handle, 0, whole, 0, _queue(), False)
    assert whole[1024 + 2] == 1.5 and whole[1024 + 3] == 2.5
    assert np.count_nonzero(whole) == 2


def test_oversize_allocation_raises_memory_error(backend: OpenCLBackend) -> None:
    too_big = backend.cl_device(0).global_mem_size + 1
    with pytest.raises(MemoryError, match=f"opencl:0.*{too_big} bytes"):
        backend.allocate(too_big, 0)


def test_non_blocking_upload_outlives_its_source(dev: ember.device, backend: OpenCLBackend) -> None:
    n = 1 << 20
    handle, _ = backend.allocate(4 * n, 0)
    backend.copy_from_host(handle, 0, np.zeros(n, np.float32), 0, _queue(), False)
    _busy(dev, handle, n, 200)  # the upload below queues behind this
    source = np.full(n, 3.0, np.float32)
    backend.copy_from_host(handle, 0, source, 0, _queue(), True)
    del source
    gc.collect()
    np.full(n, -1.0, np.float32)  # likely reuses the freed memory if it was freed
    ember.synchronize(DEVICE)
    result = np.empty(n, np.float32)
    backend.copy_to_host(handle, 0, result, 0, _queue(), False)
    assert np.all(result == 3.0)


def test_non_blocking_download_completes_by_synchronize(backend: OpenCLBackend) -> None:
    handle, _ = backend.allocate(4096, 0)
    backend.copy_from_host(handle, 0, np.arange(1024, dtype=np.float32), 0, _queue(), False)
    target = np.zeros(1024, np.float32)
    backend.copy_to_host(handle, 0, target, 0, _queue(), True)
    ember.synchronize(DEVICE)
    np.testing.assert_array_equal(target, np.arange(1024, dtype=np.float32))


def test_streams_are_in_order_queues_with_profiling(dev: ember.device) -> None:
    import pyopencl as cl

    s = ember.Stream(dev)
    assert isinstance(s.native, OpenCLStream)
    props = s.native.queue.properties
    assert props & cl.command_queue_properties.PROFILING_ENABLE
    assert not props & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
    with ember.stream(s):
        assert _launch.queue_for(dev) is s.native.queue
    assert _launch.queue_for(dev) is ember.default_stream(dev).native.queue


def test_events_time_device_work(dev: ember.device, backend: OpenCLBackend) -> None:
    n = 1 << 16
    handle, _ = backend.allocate(4 * n, 0)
    start, end = ember.Event(enable_timing=True), ember.Event(enable_timing=True)
    start.record(ember.current_stream(dev))
    _busy(dev, handle, n, 2000)
    end.record(ember.current_stream(dev))
    end.synchronize()
    assert start.query() and end.query()
    elapsed = start.elapsed_time(end)
    assert 0.05 < elapsed < 60_000


def test_query_sees_pending_work(dev: ember.device, backend: OpenCLBackend) -> None:
    n = 1 << 18
    handle, _ = backend.allocate(4 * n, 0)
    s = ember.Stream(dev)
    with ember.stream(s):
        _busy(dev, handle, n, 20000)
    assert not s.query()  # the host returned long before the device finished
    s.synchronize()
    assert s.query()


def test_wait_event_orders_streams(dev: ember.device) -> None:
    producer, consumer = ember.Stream(dev), ember.Stream(dev)
    a = ember.zeros(1 << 18, device=dev)
    ember.synchronize(dev)
    rounds = 3000
    with ember.stream(producer):
        _busy(dev, a._storage.handle, a.numel(), rounds)
        done = producer.record_event()
    with ember.stream(consumer):
        consumer.wait_event(done)
        b = a * 2.0
        values = b.cpu().numpy()
    x = 0.0
    for _ in range(rounds):
        x = x * 0.999 + 1.0
    np.testing.assert_allclose(values, 2 * x, rtol=1e-3)


def test_synchronize_finishes_every_stream(dev: ember.device, backend: OpenCLBackend) -> None:
    n = 1 << 16
    handle, _ = backend.allocate(4 * n, 0)
    streams = [ember.Stream(dev) for _ in range(3)]
    for s in streams:
        with ember.stream(s):
            _busy(dev, handle, n, 3000)
    ember.synchronize(dev)
    assert all(s.query() for s in streams)


def test_timeline_records_host_and_device_intervals(dev: ember.device) -> None:
    a = ember.ones(1 << 16, device=dev)
    with profiling.timeline() as tl:
        b = a + a
        _ = (b * 2).cpu()
    spans = tl.spans()
    names = [s.name for s in spans]
    assert any(name.startswith("add_float32") for name in names)
    assert "copy_to_host" in names
    assert tl.alignment_error_ns >= 0
    for span in spans:
        assert span.host_start_ns <= span.host_end_ns
        assert span.device_start_ns <= span.device_end_ns
        # A command can't finish on the device before the host started enqueueing it.
        assert span.device_end_ns >= span.host_start_ns - tl.alignment_error_ns
    assert profiling.ACTIVE is None
