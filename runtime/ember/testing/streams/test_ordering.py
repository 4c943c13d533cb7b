"""Ordering on a truly asynchronous device: the host runs ahead; streams order by events."""

from __future__ import annotations

import time

import numpy as np

import ember

from ._work import N, chain, idle

KERNELS = 60


def test_host_returns_from_enqueueing_long_before_the_device_finishes(
    async_device: ember.device,
) -> None:
    x = ember.ones(N, device=async_device)
    idle(async_device)
    start = ember.Event(async_device, enable_timing=True)
    end = ember.Event(async_device, enable_timing=True)
    start.record()
    began = time.perf_counter()
    acc = chain(x, KERNELS)
    end.record()
    host_ms = (time.perf_counter() - began) * 1e3
    still_running = not end.query()
    end.synchronize()
    device_ms = start.elapsed_time(end)
    assert still_running, "the device had finished when the host returned from enqueueing"
    assert host_ms < device_ms / 3, f"enqueueing took {host_ms:.1f} ms, the work {device_ms:.1f}"
    assert acc[N - 1].item() == KERNELS + 1.0


def test_wait_stream_orders_the_consumer_after_the_producer(async_device: ember.device) -> None:
    x = ember.ones(N, device=async_device)
    idle(async_device)
    produced = chain(x, KERNELS)  # the producer, on the default stream
    producer_done = ember.Event(async_device, enable_timing=True)
    producer_done.record()
    side = ember.Stream(async_device)
    side.wait_stream(ember.current_stream(async_device))
    with ember.stream(side):
        consumer_started = ember.Event(async_device, enable_timing=True)
        consumer_started.record()
        consumed = produced * 2.0
        consumer_done = side.record_event()
    producer_busy = not producer_done.query()
    consumer_done.synchronize()
    # A consumer that did not wait would have completed with the producer still running.
    assert producer_busy, "the producer was already done: the test shows nothing"
    assert producer_done.query()
    assert producer_done.elapsed_time(consumer_started) >= 0.0
    with ember.stream(side):
        values = consumed.numpy(force=True)
    np.testing.assert_array_equal(values, np.full(N, 2.0 * (KERNELS + 1), np.float32))


def test_wait_event_orders_a_stream_after_an_event(async_device: ember.device) -> None:
    x = ember.ones(N, device=async_device)
    idle(async_device)
    produced = chain(x, KERNELS)
    done = ember.Event(async_device)
    done.record()
    side = ember.Stream(async_device)
    side.wait_event(done)
    with ember.stream(side):
        total = produced.sum()
        consumer_done = side.record_event()
    producer_busy = not done.query()
    consumer_done.synchronize()
    assert producer_busy, "the producer was already done: the test shows nothing"
    assert done.query()
    with ember.stream(side):
        assert total.item() == float(N * (KERNELS + 1))


def test_a_host_read_waits_for_its_own_stream_only(async_device: ember.device) -> None:
    x = ember.ones(N, device=async_device)
    small = ember.arange(5, dtype=ember.float32, device=async_device)
    idle(async_device)
    side = ember.Stream(async_device)
    with ember.stream(side):
        busy = chain(x, KERNELS)
        side_done = side.record_event()
    assert small.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert (small * 2).sum().item() == 20.0
    # A whole-device synchronize would have waited for the side stream as well.
    assert not side_done.query(), "the read waited for the other stream's work"
    with ember.stream(side):
        assert busy[0].item() == KERNELS + 1.0


def test_synchronize_waits_for_every_stream(async_device: ember.device) -> None:
    x = ember.ones(N, device=async_device)
    idle(async_device)
    side = ember.Stream(async_device)
    with ember.stream(side):
        chain(x, KERNELS // 2)
        side_done = side.record_event()
    default_done = ember.current_stream(async_device).record_event()
    ember.synchronize(async_device)
    assert side_done.query() and default_done.query()
    assert side.query() and ember.current_stream(async_device).query()
