"""The Stream and Event API, as PyTorch's torch.cuda.Stream/Event behave, on every device."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ember


def test_default_stream_is_one_object_per_device(device: ember.device) -> None:
    default = ember.default_stream(device)
    assert ember.default_stream(device) is default
    assert ember.current_stream(device) is default
    assert default.device is device
    assert "default" in repr(default)


def test_streams_compare_by_identity(device: ember.device) -> None:
    default = ember.default_stream(device)
    a, b = ember.Stream(device), ember.Stream(device)
    assert a == a and a != b and a != default
    assert len({a, b, default, a}) == 3
    assert a.device is device and a.priority == 0
    assert ember.Stream(device, priority=-1).priority == -1


def test_stream_context_sets_and_restores_the_current_stream(device: ember.device) -> None:
    outer, inner = ember.Stream(device), ember.Stream(device)
    with ember.stream(outer) as entered:
        assert entered is outer
        assert ember.current_stream(device) is outer
        with ember.stream(inner):
            assert ember.current_stream(device) is inner
        assert ember.current_stream(device) is outer
    assert ember.current_stream(device) is ember.default_stream(device)


def test_stream_context_restores_after_an_exception(device: ember.device) -> None:
    s = ember.Stream(device)
    with pytest.raises(ZeroDivisionError), ember.stream(s):
        1 / 0  # noqa: B018 - raising inside the block is the point
    assert ember.current_stream(device) is ember.default_stream(device)


def test_stream_none_is_a_no_op(device: ember.device) -> None:
    s = ember.Stream(device)
    with ember.stream(s), ember.stream(None) as entered:
        assert entered is None
        assert ember.current_stream(device) is s


def test_current_stream_is_thread_local(device: ember.device) -> None:
    s = ember.Stream(device)
    seen: list[ember.Stream] = []
    with ember.stream(s):
        worker = threading.Thread(target=lambda: seen.append(ember.current_stream(device)))
        worker.start()
        worker.join()
        assert ember.current_stream(device) is s
    assert seen == [ember.default_stream(device)]
    assert seen[0] is ember.default_stream(device)


def test_set_stream(device: ember.device) -> None:
    s = ember.Stream(device)
    ember.set_stream(s)
    try:
        assert ember.current_stream(device) is s
    finally:
        ember.set_stream(ember.default_stream(device))
    assert ember.current_stream(device) is ember.default_stream(device)


def test_work_on_a_side_stream_computes_the_same_values(device: ember.device) -> None:
    x = ember.arange(12, dtype=ember.float32, device=device)
    s = ember.Stream(device)
    s.wait_stream(ember.current_stream(device))
    with ember.stream(s):
        y = (x * 2 + 1).sum()
    ember.current_stream(device).wait_stream(s)
    assert y.item() == float(np.sum(np.arange(12) * 2 + 1))
    s.synchronize()
    assert s.query()


def test_unrecorded_event() -> None:
    e = ember.Event()
    assert e.device is None
    assert e.query()
    e.synchronize()  # nothing to wait for
    e.wait()  # a no-op too
    assert "unrecorded" in repr(e)


def test_event_takes_the_device_of_its_first_stream(device: ember.device) -> None:
    e = ember.Event()
    e.record(ember.Stream(device))
    assert e.device is device
    e.synchronize()
    assert e.query()
    assert "recorded" in repr(e)


def test_record_event_and_wait_event(device: ember.device) -> None:
    producer, consumer = ember.Stream(device), ember.Stream(device)
    x = ember.ones(64, device=device)
    producer.wait_stream(ember.current_stream(device))
    with ember.stream(producer):
        x.mul_(3)
    done = producer.record_event()
    assert isinstance(done, ember.Event) and done.device is device
    consumer.wait_event(done)
    with ember.stream(consumer):
        total = x.sum()
    ember.current_stream(device).wait_stream(consumer)
    assert total.item() == 192.0
    mine = ember.Event()
    assert consumer.record_event(mine) is mine


def test_elapsed_time_needs_enable_timing(device: ember.device) -> None:
    start, end = ember.Event(), ember.Event()
    start.record(ember.current_stream(device))
    end.record(ember.current_stream(device))
    end.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing"):
        start.elapsed_time(end)
    timed = ember.Event(enable_timing=True)
    timed.record(ember.current_stream(device))
    with pytest.raises(RuntimeError, match="enable_timing"):
        timed.elapsed_time(end)


def test_elapsed_time_needs_recorded_events(device: ember.device) -> None:
    start = ember.Event(enable_timing=True)
    end = ember.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="recorded"):
        start.elapsed_time(end)
    start.record(ember.current_stream(device))
    with pytest.raises(RuntimeError, match="recorded"):
        start.elapsed_time(end)


def test_elapsed_time_measures_the_work_between(device: ember.device) -> None:
    start = ember.Event(device, enable_timing=True)
    end = ember.Event(device, enable_timing=True)
    x = ember.ones(1 << 16, device=device)
    start.record()
    for _ in range(20):
        x = x * 1.0
    end.record()
    end.synchronize()
    elapsed = start.elapsed_time(end)
    assert isinstance(elapsed, float)
    assert elapsed > 0.0
    assert end.elapsed_time(start) < 0.0


def test_events_and_streams_do_not_mix_devices(async_device: ember.device) -> None:
    cpu = ember.device("cpu")
    e = ember.Event(device=async_device)
    assert e.device is async_device
    with pytest.raises(RuntimeError, match="belongs to"):
        e.record(ember.default_stream(cpu))
    e.record(ember.default_stream(async_device))
    with pytest.raises(RuntimeError, match="recorded on"):
        ember.default_stream(cpu).wait_event(e)


def test_wait_stream_on_itself_is_a_no_op(device: ember.device) -> None:
    s = ember.Stream(device)
    s.wait_stream(s)
    s.synchronize()
    assert s.query()


def test_synchronize_device(device: ember.device) -> None:
    s = ember.Stream(device)
    with ember.stream(s):
        y = ember.ones(256, device=device) + 1
    ember.synchronize(device)
    assert s.query() and ember.default_stream(device).query()
    assert y.sum().item() == 512.0
