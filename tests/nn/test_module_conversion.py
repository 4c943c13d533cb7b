"""`Module.to` / `float` / `double` / `cpu` convert in place, keeping Parameter identity."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import nn


def _model() -> nn.Module:
    m = nn.Module()
    m.weight = nn.Parameter(ember.tensor([[1.5, -2.0]]))
    m.register_buffer("count", ember.tensor([3]))  # an integer buffer keeps its dtype
    m.register_buffer("mean", ember.tensor([0.25]))
    m.child = nn.Module()
    m.child.bias = nn.Parameter(ember.tensor([0.5]))
    return m


def test_to_dtype_keeps_parameter_objects_and_converts_grads() -> None:
    m = _model()
    weight, bias = m.weight, m.child.bias
    (m.weight * 2.0).backward(ember.ones(1, 2))
    assert m.to(ember.float64) is m
    assert m.weight is weight and m.child.bias is bias  # optimizers keep their references
    assert weight.dtype is ember.float64 and weight.requires_grad and weight.is_leaf
    assert bias.dtype is ember.float64
    assert weight.grad is not None and weight.grad.dtype is ember.float64
    assert m.count.dtype is ember.int64 and m.mean.dtype is ember.float64
    np.testing.assert_array_equal(weight.detach().numpy(), [[1.5, -2.0]])
    m.float()
    assert weight.dtype is ember.float32 and m.count.dtype is ember.int64
    m.double()
    assert bias.dtype is ember.float64


def test_converted_parameters_still_train() -> None:
    m = _model().double()
    (m.weight * m.weight).backward(ember.ones(1, 2, dtype=ember.float64))
    np.testing.assert_array_equal(m.weight.grad.numpy(), [[3.0, -4.0]])


def test_to_rejects_integer_dtypes() -> None:
    with pytest.raises(TypeError, match=r"nn\.Module\.to only accepts floating point or complex"):
        _model().to(ember.int32)


def test_to_device_and_back(device: str) -> None:
    """Runs on every device under test (the kit's `device` parametrization)."""
    m = _model()
    weight = m.weight
    m.to(device)
    assert weight.device == ember.device(device) and m.count.device == ember.device(device)
    m.to(device=device, dtype=ember.float64)
    assert weight.dtype is ember.float64
    m.to(ember.zeros(1, dtype=ember.float32))  # like another tensor: its device and dtype
    assert weight.dtype is ember.float32 and weight.device == ember.device("cpu")
    m.cpu()
    assert m.child.bias.device == ember.device("cpu")
    np.testing.assert_array_equal(weight.detach().numpy(), [[1.5, -2.0]])
