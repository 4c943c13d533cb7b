"""Host reads and host<->device copies on an asynchronous device, following PyTorch's rules.

Each test first puts a long chain of kernels on the stream, so that a read or copy that
did not wait for it (or waited when it must not) is caught.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from ._work import N, chain, idle

KERNELS = 40
_calls = itertools.count(1)


def _pending_result(async_device: ember.device) -> tuple[ember.Tensor, np.ndarray, ember.Event]:
    """A small (2, 3) result that only exists once a long chain has run, its expected
    values (new ones at every call, so that a stale read can't match by chance) and the
    event that completes with it."""
    big = chain(ember.ones(N, device=async_device), KERNELS)  # keeps the stream busy
    scale = float(next(_calls))
    small = ember.arange(6, dtype=ember.float32, device=async_device).reshape(2, 3) * scale
    result = chain(small, KERNELS) * big[:6].reshape(2, 3) / (KERNELS + 1)
    expected = np.arange(6, dtype=np.float32).reshape(2, 3) * scale * (KERNELS + 1)
    return result, expected, ember.current_stream(async_device).record_event()


READERS: dict[str, Callable[[ember.Tensor], Any]] = {
    "numpy": lambda t: t.numpy(force=True),
    "array": np.asarray,
    "tolist": lambda t: np.array(t.tolist(), np.float32),
    "item": lambda t: np.array([[t[i, j].item() for j in range(3)] for i in range(2)]),
    "cpu": lambda t: t.cpu().numpy(),
    "float64": lambda t: t.to("cpu", ember.float64).numpy(),
    "transposed": lambda t: t.t().cpu().numpy().T,
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_host_reads_wait_for_the_values(async_device: ember.device, reader: str) -> None:
    idle(async_device)
    result, expected, done = _pending_result(async_device)
    assert not done.query(), "the chain had finished before the read: the test shows nothing"
    np.testing.assert_array_equal(READERS[reader](result), expected)


def test_repr_waits_for_the_values(async_device: ember.device) -> None:
    idle(async_device)
    result, expected, done = _pending_result(async_device)
    assert not done.query()
    on_host = repr(ember.from_numpy(expected))
    name = f"{async_device.type}:{async_device.index}"
    assert repr(result) == on_host[:-1] + f", device='{name}')"


@pytest.mark.parametrize("convert", [bool, float, int])
def test_python_numbers_wait_for_the_values(async_device: ember.device, convert: type) -> None:
    idle(async_device)
    result, expected, done = _pending_result(async_device)
    last = result[1, 2] - float(expected[1, 2] - 1)  # 1.0 once computed
    assert not done.query()
    assert convert(last) == convert(1.0)


def test_non_blocking_upload_returns_at_once_and_keeps_the_source(
    async_device: ember.device,
) -> None:
    idle(async_device)
    busy = chain(ember.ones(N, device=async_device), KERNELS)
    source = ember.arange(1 << 16, dtype=ember.float32)
    uploaded = source.to(async_device, non_blocking=True)
    assert not ember.current_stream(async_device).record_event().query(), "the upload waited"
    # Dropping the source hands its host block back; a new tensor of that size refills it.
    del source
    ember.full((1 << 16,), -1.0)
    np.testing.assert_array_equal(uploaded.cpu().numpy(), np.arange(1 << 16, dtype=np.float32))
    assert busy[0].item() == KERNELS + 1.0


def test_blocking_upload_does_not_wait_but_copies_the_source_first(
    async_device: ember.device,
) -> None:
    idle(async_device)
    chain(ember.ones(N, device=async_device), KERNELS)
    source = ember.arange(1 << 16, dtype=ember.float32)
    uploaded = source.to(async_device)
    copied_into = ember.empty(1 << 16, device=async_device).copy_(source)
    assert not ember.current_stream(async_device).record_event().query(), "the upload waited"
    source.fill_(-1.0)  # allowed right after a blocking copy, as in PyTorch
    expected = np.arange(1 << 16, dtype=np.float32)
    np.testing.assert_array_equal(uploaded.cpu().numpy(), expected)
    np.testing.assert_array_equal(copied_into.cpu().numpy(), expected)


def test_upload_into_a_strided_destination(async_device: ember.device) -> None:
    target = ember.zeros(3, 4, device=async_device)
    values = np.arange(6, dtype=np.float64).reshape(3, 2)
    target[:, 1::2].copy_(ember.from_numpy(values), non_blocking=True)
    expected = np.zeros((3, 4), np.float32)
    expected[:, 1::2] = values
    np.testing.assert_array_equal(target.cpu().numpy(), expected)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.int64])
def test_non_blocking_download_arrives_once_the_stream_is_synchronized(
    async_device: ember.device, dtype: ember.dtype
) -> None:
    idle(async_device)
    result, expected, _ = _pending_result(async_device)
    downloaded = result.to("cpu", dtype, non_blocking=True)
    into = ember.empty(2, 3, dtype=dtype).copy_(result, non_blocking=True)
    pending = not ember.current_stream(async_device).record_event().query()
    assert downloaded.device == ember.device("cpu") and downloaded.dtype is dtype
    ember.current_stream(async_device).synchronize()
    assert pending, "the download waited for the device"
    np.testing.assert_array_equal(downloaded.numpy(), expected.astype(dtype.numpy))
    np.testing.assert_array_equal(into.numpy(), expected.astype(dtype.numpy))


def test_non_blocking_download_on_a_side_stream_with_an_event(async_device: ember.device) -> None:
    idle(async_device)
    result, expected, _ = _pending_result(async_device)
    side = ember.Stream(async_device)
    side.wait_stream(ember.current_stream(async_device))
    with ember.stream(side):
        downloaded = result.to("cpu", non_blocking=True)
        arrived = side.record_event()
    arrived.synchronize()
    np.testing.assert_array_equal(downloaded.numpy(), expected)


def test_to_parses_pytorch_signatures(async_device: ember.device) -> None:
    x = ember.arange(4, dtype=ember.float32)
    y = x.to(async_device, ember.float64, True)  # device, dtype, non_blocking
    assert y.device == async_device and y.dtype is ember.float64
    assert x.to(ember.float32, False, True) is not x  # dtype, non_blocking, copy
    assert x.to(y, non_blocking=True).device == async_device
    with pytest.raises(TypeError, match="unexpected keyword"):
        x.to(async_device, blocking=True)
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]
