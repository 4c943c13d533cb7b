"""Activations, softmax and log-softmax: values against NumPy float64, gradients against
finite differences, parity with PyTorch."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ._helpers import check_gradients, tensor

_erf = np.vectorize(math.erf)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


# name -> (ember function, NumPy float64 reference)
ELEMENTWISE: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], np.ndarray]]] = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
    "hardtanh": (F.hardtanh, lambda x: np.clip(x, -1, 1)),
    "leaky_relu": (F.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x)),
    "leaky_relu_0.2": (
        lambda x: F.leaky_relu(x, negative_slope=0.2),
        lambda x: np.where(x > 0, x, 0.2 * x),
    ),
    "elu": (F.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": (
        lambda x: F.gelu(x, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (F.tanh, np.tanh),
    "softplus": (F.softplus, lambda x: np.log1p(np.exp(x))),
    "softplus_beta": (
        lambda x: F.softplus(x, beta=2.0, threshold=3.0),
        lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2),
    ),
    "logsigmoid": (F.logsigmoid, lambda x: -np.log1p(np.exp(-x))),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=str)
def test_elementwise_values(device: str, name: str, dtype: ember.dtype, rng: Any) -> None:
    fn, reference = ELEMENTWISE[name]
    x = rng.standard_normal((3, 5)) * 3
    result = fn(tensor(x, device, dtype))
    assert result.dtype == dtype and result.shape == (3, 5)
    tolerance = 1e-5 if dtype == ember.float32 else 1e-12
    np.testing.assert_allclose(
        result.numpy(force=True), reference(x), rtol=tolerance, atol=tolerance
    )


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_gradients(device: str, name: str, rng: Any) -> None:
    fn, _ = ELEMENTWISE[name]
    # Away from the kinks at 0 (and at ±1, 6, 1.5), where the one-sided slopes differ.
    x = rng.uniform(0.1, 0.9, (2, 3)) * rng.choice([-1.0, 1.0], (2, 3)) * 2.0
    x[np.abs(np.abs(x) - 1.0) < 0.05] += 0.2
    check_gradients(fn, [x], device)


@pytest.mark.parametrize("inplace_fn", [F.relu_, F.leaky_relu_])
def test_inplace_activations_write_into_input(device: str, inplace_fn: Any) -> None:
    x = tensor([-2.0, 0.5, 3.0], device)
    result = inplace_fn(x)
    assert result is x
    assert x.numpy(force=True)[1:].tolist() == [0.5, 3.0] and x.numpy(force=True)[0] <= 0.0


def test_gelu_rejects_unknown_approximation(device: str) -> None:
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(tensor([1.0], device), approximate="fast")


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("fn,reference", [(F.softmax, _softmax), (F.log_softmax, _log_softmax)])
def test_softmax_values(device: str, dim: int, fn: Any, reference: Any, rng: Any) -> None:
    x = rng.standard_normal((3, 4, 5))
    np.testing.assert_allclose(
        fn(tensor(x, device), dim).numpy(force=True), reference(x, dim), atol=1e-12
    )


@pytest.mark.parametrize("fn,reference", [(F.softmax, _softmax), (F.log_softmax, _log_softmax)])
def test_softmax_is_stable_for_large_logits(device: str, fn: Any, reference: Any) -> None:
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]])
    result = fn(tensor(x, device, ember.float32), 1).numpy(force=True)
    assert np.isfinite(result).all()
    np.testing.assert_allclose(result, reference(x, 1), rtol=1e-5, atol=1e-5)


def test_softmax_dtype_argument_and_non_contiguous_input(device: str, rng: Any) -> None:
    x = rng.standard_normal((4, 3))
    t = tensor(x, device, ember.float32).t()
    result = F.softmax(t, 0, dtype=ember.float64)
    assert result.dtype == ember.float64
    np.testing.assert_allclose(
        result.numpy(force=True), _softmax(x.T.astype(np.float32), 0), atol=1e-7
    )


def test_softmax_implicit_dim_warns(device: str) -> None:
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        result = F.softmax(tensor(np.zeros((2, 3)), device))
    np.testing.assert_allclose(result.numpy(force=True), np.full((2, 3), 1 / 3))


def test_softmax_rejects_integer_input(device: str) -> None:
    with pytest.raises(RuntimeError, match="softmax"):
        F.softmax(ember.tensor([1, 2, 3], device=device), 0)


def test_softmax_of_empty_input(device: str) -> None:
    assert F.softmax(ember.zeros(0, 3, device=device), 1).shape == (0, 3)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax, F.softmin])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_gradients(device: str, fn: Any, dim: int, rng: Any) -> None:
    check_gradients(lambda x: fn(x, dim), [rng.standard_normal((3, 4))], device)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_second_derivatives(device: str, fn: Any, rng: Any) -> None:
    """create_graph=True: the backward formula is itself differentiable."""
    w = tensor(rng.standard_normal((2, 3)), device)

    def first_derivative(x: Any) -> Any:
        (g,) = ember.autograd.grad([fn(x, 1) * w], [x], [ember.ones_like(w)], create_graph=True)
        return g

    check_gradients(
        first_derivative, [rng.standard_normal((2, 3))], device, atol=1e-5, graph_inside=True
    )


def test_activations_match_torch(device: str, rng: Any) -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = rng.standard_normal((4, 6)).astype(np.float32) * 4
    pairs = [
        (F.gelu(tensor(x, device, ember.float32)), tf.gelu(torch.tensor(x))),
        (
            F.gelu(tensor(x, device, ember.float32), approximate="tanh"),
            tf.gelu(torch.tensor(x), approximate="tanh"),
        ),
        (F.silu(tensor(x, device, ember.float32)), tf.silu(torch.tensor(x))),
        (F.elu(tensor(x, device, ember.float32), 0.5), tf.elu(torch.tensor(x), 0.5)),
        (
            F.softplus(tensor(x, device, ember.float32), 2.0, 5.0),
            tf.softplus(torch.tensor(x), 2, 5),
        ),
        (F.logsigmoid(tensor(x, device, ember.float32)), tf.logsigmoid(torch.tensor(x))),
        (F.softmax(tensor(x, device, ember.float32), 0), tf.softmax(torch.tensor(x), 0)),
        (F.log_softmax(tensor(x, device, ember.float32), 1), tf.log_softmax(torch.tensor(x), 1)),
        (F.softmin(tensor(x, device, ember.float32), 1), tf.softmin(torch.tensor(x), 1)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(
            ours.numpy(force=True), theirs.numpy(force=True), rtol=1e-5, atol=1e-6
        )
