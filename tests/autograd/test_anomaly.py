"""Anomaly detection: the node whose backward returned NaN is named, with the forward
stack that created it."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest

import ember
from ember.autograd import detect_anomaly, set_detect_anomaly

from ._helpers import leaf

NAN_IN_SQRT = r"Function 'SqrtBackward' returned nan values in its 0th output\."


def _nan_in_backward() -> ember.Tensor:
    x = leaf([0.0, 1.0])
    return (x.sqrt() * 0.0).sum()  # sqrt's backward: 0 / (2 * sqrt(0)) = nan


def test_detect_anomaly_names_the_node_and_shows_the_forward_stack() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with detect_anomaly():
            assert ember.autograd.is_anomaly_enabled()
            loss = _nan_in_backward()
            with pytest.raises(RuntimeError, match=NAN_IN_SQRT):
                loss.backward()
    assert not ember.autograd.is_anomaly_enabled()
    messages = [str(w.message) for w in caught]
    assert any("Anomaly Detection has been enabled" in m for m in messages)
    traces = [m for m in messages if m.startswith("Error detected in SqrtBackward")]
    assert traces and "_nan_in_backward" in traces[0] and "x.sqrt()" in traces[0]


def test_without_anomaly_mode_nan_propagates_silently() -> None:
    x = leaf([0.0, 1.0])
    (x.sqrt() * 0.0).sum().backward()
    assert math.isnan(x.grad.tolist()[0])


def test_check_nan_false_skips_the_check() -> None:
    with pytest.warns(UserWarning, match="Anomaly Detection"), detect_anomaly(check_nan=False):
        _nan_in_backward().backward()


def test_set_detect_anomaly_as_call_and_context() -> None:
    with set_detect_anomaly(True):
        assert ember.autograd.is_anomaly_enabled()
        with pytest.raises(RuntimeError, match=NAN_IN_SQRT), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _nan_in_backward().backward()
    assert not ember.autograd.is_anomaly_enabled()
    set_detect_anomaly(True)
    try:
        assert ember.autograd.is_anomaly_enabled()
        assert ember.autograd.is_anomaly_check_nan_enabled()
    finally:
        set_detect_anomaly(False)
    assert not ember.autograd.is_anomaly_enabled()


def test_errors_in_backward_report_the_forward_stack() -> None:
    class Broken(ember.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: ember.Tensor) -> ember.Tensor:
            return x * 1.0

        @staticmethod
        def backward(ctx: Any, grad: ember.Tensor) -> ember.Tensor:
            raise ValueError("boom")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with set_detect_anomaly(True):
            y = Broken.apply(leaf([1.0]))
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    assert any(str(w.message).startswith("Error detected in BrokenBackward") for w in caught)


def test_decorator_form() -> None:
    with pytest.warns(UserWarning, match="Anomaly Detection"):

        @detect_anomaly()
        def run() -> bool:
            return ember.autograd.is_anomaly_enabled()

    assert run() is True
    assert not ember.autograd.is_anomaly_enabled()
