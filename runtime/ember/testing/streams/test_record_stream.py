"""A block freed on one stream while another still reads it is not handed out too early."""

from __future__ import annotations

import numpy as np

import ember

from ._work import N, chain, idle

KERNELS = 60


def test_without_record_stream_the_block_is_reused_at_once(async_device: ember.device) -> None:
    # What record_stream guards against: the allocator only knows the stream a block was
    # allocated on, so a block freed there is free for that stream's next allocation.
    idle(async_device)
    t = ember.ones(N, device=async_device)
    side = ember.Stream(async_device)
    side.wait_stream(ember.current_stream(async_device))
    with ember.stream(side):
        chain(t, KERNELS)
        side_done = side.record_event()
    address = t.data_ptr()
    del t
    reused = ember.empty(N, device=async_device)
    assert not side_done.query(), "the side stream was already done: the test shows nothing"
    assert reused.data_ptr() == address
    side.synchronize()


def test_record_stream_defers_reuse_until_the_stream_passes(async_device: ember.device) -> None:
    idle(async_device)
    t = ember.ones(N, device=async_device)
    side = ember.Stream(async_device)
    side.wait_stream(ember.current_stream(async_device))
    with ember.stream(side):
        result = chain(t, KERNELS)
        side_done = side.record_event()
    t.record_stream(side)
    address = t.data_ptr()
    del t
    # The default stream is idle: without record_stream this would overwrite t at once.
    other = ember.empty(N, device=async_device).fill_(-1000.0)
    assert not side_done.query(), "the side stream was already done: the test shows nothing"
    with ember.stream(side):
        values = result.numpy(force=True)
    np.testing.assert_array_equal(values, np.full(N, KERNELS + 1.0, np.float32))
    assert other.data_ptr() != address
    # Once the side stream has passed its recorded event the block is free again.
    side.synchronize()
    again = ember.empty(N, device=async_device)
    assert again.data_ptr() == address
    assert other[0].item() == -1000.0


def test_record_stream_on_the_allocating_stream_changes_nothing(async_device: ember.device) -> None:
    idle(async_device)
    t = ember.ones(N, device=async_device)
    t.record_stream(ember.current_stream(async_device))
    address = t.data_ptr()
    del t
    assert ember.empty(N, device=async_device).data_ptr() == address


def test_record_stream_on_cpu_is_accepted() -> None:
    t = ember.ones(8)
    t.record_stream(ember.Stream("cpu"))
    t.record_stream(ember.current_stream("cpu"))
    assert t.sum().item() == 8.0
