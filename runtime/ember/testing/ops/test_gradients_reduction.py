"""Gradients of the reductions against central finite differences in float64.

Also home of the finite-difference checkers that the linear-algebra and shape gradient
tests import: `check_gradients` (first order) and `check_second_order` (the gradient of a
first-order gradient taken with `create_graph=True`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import ember

EPS = 1e-6
RTOL = 1e-6
ATOL = 1e-7

Fn = Callable[..., Any]


# -- the checkers -------------------------------------------------------------------------


def _outputs(result: Any) -> list[ember.Tensor]:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _weights(fn: Fn, arrays: Sequence[np.ndarray], device: str) -> list[np.ndarray]:
    """Fixed random weights, one per output, so that every output element matters."""
    with ember.no_grad():
        outputs = _outputs(fn(*(ember.tensor(a, device=device) for a in arrays)))
    rng = np.random.default_rng(1234)
    return [rng.standard_normal(tuple(o.shape)) for o in outputs]


def _value(fn: Fn, arrays: Sequence[np.ndarray], weights: list[np.ndarray], device: str) -> float:
    with ember.no_grad():
        outputs = _outputs(fn(*(ember.tensor(a, device=device) for a in arrays)))
    pairs = zip(outputs, weights, strict=True)
    return float(sum(np.sum(o.numpy(force=True) * w) for o, w in pairs))


def _loss(outputs: list[ember.Tensor], weights: list[np.ndarray], device: str) -> ember.Tensor:
    total: Any = 0.0
    for o, w in zip(outputs, weights, strict=True):
        assert o.dtype == ember.float64, f"outputs must be float64, got {o.dtype}"
        total = (o * ember.tensor(w, device=device)).sum() + total
    return total


def _numeric(value: Callable[[list[np.ndarray]], float], arrays: list[np.ndarray]) -> list[Any]:
    """Central differences of `value` with respect to every element of every array."""
    grads = []
    for i, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            shifted = [x.copy() for x in arrays]
            shifted[i][j] = a[j] + EPS
            up = value(shifted)
            shifted[i][j] = a[j] - EPS
            grad[j] = (up - value(shifted)) / (2 * EPS)
        grads.append(grad)
    return grads


class _Inputs:
    """Leaves holding the arrays, and the (optionally non-contiguous) tensors fn receives."""

    def __init__(self, arrays: Sequence[np.ndarray], device: str, noncontiguous: bool) -> None:
        self.leaves: list[ember.Tensor] = []
        self.tensors: list[ember.Tensor] = []
        self.layouts: list[str] = []
        for a in arrays:
            if noncontiguous and a.ndim >= 2:
                # Stored transposed; fn sees the transpose back: same values, permuted strides.
                order = tuple(reversed(range(a.ndim)))
                leaf = ember.tensor(np.ascontiguousarray(a.transpose(order)), device=device)
                leaf.requires_grad_()
                self.tensors.append(leaf.permute(order))
                self.layouts.append("permuted")
            elif noncontiguous and a.ndim == 1:
                # Every other element of a (n, 2) leaf: stride 2.
                leaf = ember.tensor(np.stack([a, np.full_like(a, 7.0)], 1), device=device)
                leaf.requires_grad_()
                self.tensors.append(leaf.select(1, 0))
                self.layouts.append("strided")
            else:
                leaf = ember.tensor(a, device=device).requires_grad_()
                self.tensors.append(leaf)
                self.layouts.append("plain")
            self.leaves.append(leaf)
        if noncontiguous:
            assert not all(t.is_contiguous() for t in self.tensors if t.ndim >= 1 and t.numel() > 1)

    def unpack(self, grads: Sequence[ember.Tensor | None]) -> list[Any]:
        """Gradients with respect to the leaves, seen in the arrays' layout."""
        result: list[Any] = []
        for grad, leaf, layout in zip(grads, self.leaves, self.layouts, strict=True):
            g = np.zeros(tuple(leaf.shape)) if grad is None else grad.numpy(force=True)
            if grad is not None:
                assert tuple(grad.shape) == tuple(leaf.shape)
                assert grad.dtype == leaf.dtype
            if layout == "permuted":
                g = g.transpose(tuple(reversed(range(g.ndim))))
            elif layout == "strided":
                np.testing.assert_array_equal(g[:, 1], 0.0)
                g = g[:, 0]
            result.append(g)
        return result


def check_gradients(fn: Fn, *arrays: np.ndarray, device: str, noncontiguous: bool = False) -> None:
    """ember's gradients of fn at `arrays` (float64) against central finite differences."""
    values = [np.asarray(a, dtype=np.float64) for a in arrays]
    weights = _weights(fn, values, device)
    inputs = _Inputs(values, device, noncontiguous)
    loss = _loss(_outputs(fn(*inputs.tensors)), weights, device)
    grads = ember.autograd.grad(loss, inputs.leaves, allow_unused=True)
    numeric = _numeric(lambda xs: _value(fn, xs, weights, device), values)
    for i, (got, want) in enumerate(zip(inputs.unpack(grads), numeric, strict=True)):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"input {i}")


def _first_order(fn: Fn, arrays: Sequence[np.ndarray], weights: Any, device: str) -> list[Any]:
    leaves = [ember.tensor(a, device=device).requires_grad_() for a in arrays]
    loss = _loss(_outputs(fn(*leaves)), weights, device)
    grads = ember.autograd.grad(loss, leaves, allow_unused=True)
    return [
        np.zeros(a.shape) if g is None else g.numpy(force=True)
        for g, a in zip(grads, arrays, strict=True)
    ]


def check_second_order(fn: Fn, *arrays: np.ndarray, device: str) -> None:
    """The gradient of <grad fn, v> (built with create_graph=True) against finite
    differences of the first-order gradient."""
    values = [np.asarray(a, dtype=np.float64) for a in arrays]
    weights = _weights(fn, values, device)
    rng = np.random.default_rng(99)
    directions = [rng.standard_normal(a.shape) for a in values]

    def projected(xs: list[np.ndarray]) -> float:
        firsts = _first_order(fn, xs, weights, device)
        return float(sum(np.sum(g * v) for g, v in zip(firsts, directions, strict=True)))

    leaves = [ember.tensor(a, device=device).requires_grad_() for a in values]
    loss = _loss(_outputs(fn(*leaves)), weights, device)
    firsts = ember.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    total: Any = 0.0
    for g, v in zip(firsts, directions, strict=True):
        if g is not None and g.requires_grad:
            total = (g * ember.tensor(v, device=device)).sum() + total
    if not isinstance(total, ember.Tensor):
        got = [np.zeros(a.shape) for a in values]  # the first derivative is constant
    else:
        seconds = ember.autograd.grad(total, leaves, allow_unused=True)
        got = [
            np.zeros(a.shape) if s is None else s.numpy(force=True)
            for s, a in zip(seconds, values, strict=True)
        ]
    numeric = _numeric(projected, values)
    for i, (g, want) in enumerate(zip(got, numeric, strict=True)):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6, err_msg=f"input {i}")


def distinct(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Values with no ties and no two within 0.05 of each other (safe for max/min FD)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.1 + rng.uniform(-0.02, 0.02, n) - n * 0.05).reshape(shape)


# -- sum, mean and prod -------------------------------------------------------------------

SUM_DIMS = [None, 0, -1, (0, 2), [], (-1, 0)]


@pytest.mark.parametrize("dim", SUM_DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum(device: str, rng: np.random.Generator, dim: Any, keepdim: bool) -> None:
    x = rng.standard_normal((2, 3, 2))
    if dim is None:
        check_gradients(lambda t: t.sum(), x, device=device)
    else:
        check_gradients(lambda t: ember.sum(t, dim, keepdim), x, device=device, noncontiguous=True)


def test_sum_of_0d_and_dtype(device: str) -> None:
    x = ember.tensor(2.5, device=device).requires_grad_()
    (g,) = ember.autograd.grad(x.sum(), x)
    assert g.shape == () and g.item() == 1.0
    y = ember.ones(2, 3, device=device).requires_grad_()
    total = ember.sum(y, 1, dtype=ember.float64)
    assert total.dtype == ember.float64
    (g,) = ember.autograd.grad(total.sum(), y)
    assert g.dtype == ember.float32 and g.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("dim", [None, 1, (0, -1)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean(device: str, rng: np.random.Generator, dim: Any, keepdim: bool) -> None:
    x = rng.standard_normal((3, 2, 2))
    check_gradients(lambda t: ember.mean(t, dim, keepdim), x, device=device, noncontiguous=True)


@pytest.mark.parametrize("dim", [None, 0, -1], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod(device: str, rng: np.random.Generator, dim: Any, keepdim: bool) -> None:
    x = rng.uniform(0.5, 1.5, (3, 4)) * rng.choice([-1, 1], (3, 4))
    if dim is None:
        check_gradients(lambda t: t.prod(), x, device=device, noncontiguous=True)
    else:
        check_gradients(lambda t: ember.prod(t, dim, keepdim), x, device=device, noncontiguous=True)


def test_prod_with_zeros(device: str, rng: np.random.Generator) -> None:
    # Rows with no zero, one zero and two zeros: prod is multilinear, so central
    # differences are exact there and the formula must be too.
    x = rng.uniform(0.5, 1.5, (3, 4))
    x[1, 2] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    check_gradients(lambda t: ember.prod(t, 1), x, device=device)
    check_gradients(lambda t: ember.prod(t, 0, keepdim=True), x, device=device)
    check_gradients(lambda t: t.prod(), x[:2], device=device)
    check_gradients(lambda t: t.prod(), x[1:], device=device)


def test_prod_with_one_zero_is_exact(device: str) -> None:
    x = ember.tensor([2.0, 0.0, 3.0, 4.0], device=device).requires_grad_()
    (g,) = ember.autograd.grad(x.prod(), x)
    assert g.tolist() == [0.0, 24.0, 0.0, 0.0]


# -- extremes -------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("dim", [(), 1, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin(device: str, rng: np.random.Generator, op: str, dim: Any, keepdim: bool) -> None:
    fn = getattr(ember, op)
    x = distinct(rng, 2, 3, 2)
    check_gradients(lambda t: fn(t, dim, keepdim), x, device=device, noncontiguous=True)


@pytest.mark.parametrize("op", ["amax", "amin", "max", "min"])
def test_extreme_ties_share_the_gradient(device: str, op: str) -> None:
    x = ember.tensor([[1.0, 5.0, 5.0], [-2.0, -2.0, -2.0]], dtype=ember.float64, device=device)
    x.requires_grad_()
    if op in ("max", "min"):
        y = getattr(ember, op)(x)  # the whole tensor: ties split evenly, as PyTorch's max()
        (g,) = ember.autograd.grad(y, x)
        expect = [[0, 0.5, 0.5], [0, 0, 0]] if op == "max" else [[0, 0, 0], [1 / 3] * 3]
    else:
        y = getattr(ember, op)(x, 1)
        (g,) = ember.autograd.grad(y.sum(), x)
        first = [0, 0.5, 0.5] if op == "amax" else [1.0, 0, 0]
        expect = [first, [1 / 3] * 3]
    np.testing.assert_allclose(g.numpy(force=True), expect, rtol=1e-15)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_along_dim(
    device: str, rng: np.random.Generator, op: str, dim: int, keepdim: bool
) -> None:
    fn = getattr(ember, op)
    x = distinct(rng, 3, 4)
    check_gradients(lambda t: fn(t, dim, keepdim).values, x, device=device, noncontiguous=True)
    result = fn(ember.tensor(x, device=device).requires_grad_(), dim, keepdim)
    assert result.values.requires_grad and not result.indices.requires_grad


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_along_dim_ties_go_to_the_index(device: str, op: str) -> None:
    x = ember.tensor([[3.0, 3.0, 1.0], [1.0, 1.0, 1.0]], device=device).requires_grad_()
    values, indices = getattr(ember, op)(x, 1)
    (g,) = ember.autograd.grad(values.sum(), x)
    expect = np.zeros((2, 3))
    expect[[0, 1], indices.tolist()] = 1.0
    np.testing.assert_array_equal(g.numpy(force=True), expect)


def test_max_min_of_0d_and_full(device: str, rng: np.random.Generator) -> None:
    check_gradients(lambda t: ember.max(t, 0).values, np.array(1.5), device=device)
    check_gradients(lambda t: ember.min(t), distinct(rng, 3, 2), device=device)
    check_gradients(lambda t: t.max(), distinct(rng, 4), device=device, noncontiguous=True)


@pytest.mark.parametrize("op", ["argmax", "argmin", "any", "all"])
def test_non_differentiable_reductions_never_record(device: str, op: str) -> None:
    x = ember.tensor([[1.0, 0.0], [2.0, 3.0]], device=device).requires_grad_()
    for result in (getattr(ember, op)(x), getattr(ember, op)(x, 1)):
        assert not result.requires_grad and result.grad_fn is None


# -- cumsum ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum(device: str, rng: np.random.Generator, dim: int) -> None:
    x = rng.standard_normal((3, 4))
    check_gradients(lambda t: ember.cumsum(t, dim), x, device=device, noncontiguous=True)


def test_cumsum_small_shapes(device: str, rng: np.random.Generator) -> None:
    check_gradients(lambda t: ember.cumsum(t, 0), np.array(0.7), device=device)
    check_gradients(lambda t: ember.cumsum(t, 0), rng.standard_normal((1, 3)), device=device)
    check_gradients(lambda t: ember.cumsum(t, -1), rng.standard_normal(5), device=device)


# -- composites -----------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("dim", [None, 0, (0, -1)], ids=str)
@pytest.mark.parametrize("correction", [0, 1])
def test_var_std(device: str, rng: np.random.Generator, op: str, dim: Any, correction: int) -> None:
    fn = getattr(ember, op)
    x = rng.standard_normal((3, 2, 2))

    def f(t: ember.Tensor) -> ember.Tensor:
        return fn(t, dim, correction=correction, keepdim=True)

    check_gradients(f, x, device=device, noncontiguous=True)


@pytest.mark.parametrize("dim", [0, -1, (0, 1)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp(device: str, rng: np.random.Generator, dim: Any, keepdim: bool) -> None:
    x = rng.standard_normal((3, 4)) * 3
    check_gradients(
        lambda t: ember.logsumexp(t, dim, keepdim), x, device=device, noncontiguous=True
    )


def test_logsumexp_of_large_values(device: str, rng: np.random.Generator) -> None:
    # The max shift keeps exp() finite in the gradient too: softmax, exactly. (Finite
    # differences lose their digits to rounding at this magnitude.)
    x = rng.standard_normal((3, 4)) + 800.0
    t = ember.tensor(x, device=device).requires_grad_()
    (g,) = ember.autograd.grad(ember.logsumexp(t, 1).sum(), t)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(g.numpy(force=True), e / e.sum(1, keepdims=True), rtol=1e-12)


# -- broadcast (stride-0) inputs ------------------------------------------------------------

BROADCAST_REDUCTIONS = {
    "sum": lambda t: ember.sum(t, 1),
    "prod": lambda t: ember.prod(t, 0, keepdim=True),
    "mean": lambda t: ember.mean(t, (0, 1)),
    "cumsum": lambda t: ember.cumsum(t, 0),
    "logsumexp": lambda t: ember.logsumexp(t, -1),
    "max-dim": lambda t: ember.max(t, 1).values,
}


@pytest.mark.parametrize("name", list(BROADCAST_REDUCTIONS))
def test_reductions_of_expanded_inputs(device: str, rng: np.random.Generator, name: str) -> None:
    # The input reaches the reduction with stride 0 along the expanded dim; the expand's
    # backward then sums the gradient over it.
    reduce = BROADCAST_REDUCTIONS[name]
    row = distinct(rng, 4) if name == "max-dim" else rng.uniform(0.5, 1.5, 4)
    check_gradients(lambda t: reduce(t.expand(3, 4)), row, device=device)
    # A (3, 1) column broadcast against a row inside the reduced expression.
    offsets = ember.tensor(row * 0.5, device=device)
    column = rng.uniform(0.5, 1.5, (3, 1))
    check_gradients(lambda t: reduce(t + offsets), column, device=device)


# -- higher order ---------------------------------------------------------------------------


def test_second_order_of_reductions(device: str, rng: np.random.Generator) -> None:
    x = rng.uniform(0.5, 1.5, (3, 4))
    check_second_order(lambda t: ember.prod(t, 1), x, device=device)
    zeros = x.copy()
    zeros[0, 1] = 0.0
    zeros[1, 0] = zeros[1, 2] = 0.0
    check_second_order(lambda t: t.prod(), zeros[:1], device=device)
    check_second_order(lambda t: ember.prod(t, 1), zeros, device=device)
    check_second_order(lambda t: ember.cumsum(t, 1) * t, x, device=device)
    check_second_order(lambda t: ember.logsumexp(t, 1), x, device=device)
    check_second_order(lambda t: ember.var(t, 0), x, device=device)
    check_second_order(
        lambda t: ember.amax(t, 1) * ember.sum(t * t, 1), distinct(rng, 3, 4), device=device
    )
    check_second_order(
        lambda t: ember.max(t, 0).values * ember.min(t, 0).values,
        distinct(rng, 3, 4),
        device=device,
    )
