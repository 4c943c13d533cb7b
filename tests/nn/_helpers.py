"""Shared helpers of the nn tests: conversions and a float64 finite-difference gradient check."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember


def tensor(array: Any, device: str, dtype: ember.dtype = ember.float64, grad: bool = False) -> Any:
    """An ember tensor on `device` from array-like data."""
    t = ember.tensor(np.asarray(array), dtype=dtype, device=device)
    return t.requires_grad_() if grad else t


def check_gradients(
    fn: Callable[..., Any],
    arrays: Sequence[np.ndarray],
    device: str,
    *,
    eps: float = 1e-6,
    atol: float = 1e-6,
    rtol: float = 1e-5,
    seed: int = 0,
    graph_inside: bool = False,
) -> None:
    """Compare autograd's gradients of `fn` (of float64 tensors) with central differences.

    The output is contracted with fixed random weights, so every element's gradient counts.
    `graph_inside`: fn differentiates internally (a first derivative), so the finite
    differences evaluate it on tensors that require grad, with grad mode on.
    """
    inputs = [tensor(a, device, grad=True) for a in arrays]
    out = fn(*inputs)
    weights = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    ember.autograd.backward([out], [tensor(weights, device)])

    def objective(values: list[np.ndarray]) -> float:
        with ember.set_grad_enabled(graph_inside):
            result = fn(*[tensor(v, device, grad=graph_inside) for v in values])
        return float(np.sum(result.numpy(force=True) * weights))

    for position, (t, array) in enumerate(zip(inputs, arrays, strict=True)):
        assert t.grad is not None, f"input {position} got no gradient"
        analytic = t.grad.numpy(force=True)
        numeric = np.zeros_like(array, dtype=np.float64)
        values = [np.array(a, dtype=np.float64) for a in arrays]
        for index in np.ndindex(array.shape):
            original = values[position][index]
            values[position][index] = original + eps
            plus = objective(values)
            values[position][index] = original - eps
            minus = objective(values)
            values[position][index] = original
            numeric[index] = (plus - minus) / (2 * eps)
        np.testing.assert_allclose(
            analytic, numeric, atol=atol, rtol=rtol, err_msg=f"gradient of input {position}"
        )
