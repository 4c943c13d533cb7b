"""requires_grad, detach, and the grad modes: no_grad, enable_grad, inference_mode,
set_grad_enabled (thread-local, as in PyTorch)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ember

from ._helpers import leaf, values


def test_requires_grad_on_leaves() -> None:
    x = ember.ones(2)
    assert not x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x.requires_grad_() is x
    assert x.requires_grad and x.is_leaf
    x.requires_grad = False
    assert not x.requires_grad
    assert not (x * 2.0).requires_grad


def test_requires_grad_errors() -> None:
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.ones(2, dtype=ember.int64).requires_grad_()
    y = leaf([1.0]) * 2.0
    assert not y.is_leaf
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad_(False)
    y.requires_grad_(True)  # a no-op on a non-leaf, as in PyTorch


def test_results_require_grad_when_an_input_does() -> None:
    x, c = leaf([1.0]), ember.ones(1, dtype=ember.float64)
    y = x * c
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward"
    assert not (c * c).requires_grad
    assert not (x > 0).requires_grad  # comparisons are not differentiable


def test_detach_shares_data_and_version_but_not_history() -> None:
    x = leaf([1.0, 2.0])
    y = x * 2.0
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.data_ptr() == y.data_ptr()
    version = y._version
    d.add_(1.0)
    assert y._version == version + 1
    np.testing.assert_array_equal(values(y), [3.0, 5.0])


def test_detach_in_place() -> None:
    x = leaf([1.0])
    y = x * 2.0
    assert y.detach_() is y
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_no_grad_as_context_and_decorator() -> None:
    x = leaf([1.0])
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        assert not (x * 2.0).requires_grad
    assert ember.is_grad_enabled()

    @ember.no_grad()
    def double(t: ember.Tensor) -> ember.Tensor:
        return t * 2.0

    assert not double(x).requires_grad
    assert (x * 2.0).requires_grad


def test_no_grad_allows_in_place_updates_of_leaves() -> None:
    """What an optimizer step does: leaves that require grad, updated under no_grad."""
    w = leaf([1.0, 2.0])
    with ember.no_grad():
        w.sub_(ember.tensor([0.5, 0.5], dtype=ember.float64))
    assert w.requires_grad and w.is_leaf
    np.testing.assert_array_equal(values(w), [0.5, 1.5])


def test_enable_grad_inside_no_grad() -> None:
    x = leaf([1.0])
    with ember.no_grad():
        with ember.enable_grad():
            assert (x * 2.0).requires_grad
        assert not (x * 2.0).requires_grad


def test_set_grad_enabled_as_call_and_context() -> None:
    x = leaf([1.0])
    with ember.set_grad_enabled(False):
        assert not (x * 2.0).requires_grad
    assert ember.is_grad_enabled()
    ember.set_grad_enabled(False)
    try:
        assert not ember.is_grad_enabled()
    finally:
        ember.set_grad_enabled(True)
    assert (x * 2.0).requires_grad


def test_inference_mode() -> None:
    x = leaf([1.0])
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled() and not ember.is_grad_enabled()
        assert not (x * 2.0).requires_grad
    assert not ember.is_inference_mode_enabled() and ember.is_grad_enabled()
    with ember.inference_mode(False):
        assert (x * 2.0).requires_grad


def test_modes_restore_after_exceptions() -> None:
    with pytest.raises(ValueError), ember.no_grad():
        raise ValueError
    assert ember.is_grad_enabled()


def test_grad_mode_is_thread_local() -> None:
    """A thread inside no_grad does not switch recording off in another thread."""
    entered, release = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def worker() -> None:
        with ember.no_grad():
            entered.set()
            release.wait(5)
            seen["worker"] = (leaf([1.0]) * 2.0).requires_grad

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert entered.wait(5)
        assert ember.is_grad_enabled()
        assert (leaf([1.0]) * 2.0).requires_grad
    finally:
        release.set()
        thread.join()
    assert seen == {"worker": False}


def test_new_thread_starts_with_grad_enabled() -> None:
    seen: list[bool] = []
    with ember.no_grad():
        thread = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]
