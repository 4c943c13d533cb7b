"""Gradients of mm, bmm and matmul against central finite differences in float64, and
second-order gradients (create_graph=True) of products."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .test_gradients_reduction import check_gradients, check_second_order

Shape = tuple[int, ...]


@pytest.mark.parametrize("noncontiguous", [False, True])
def test_mm(device: str, rng: np.random.Generator, noncontiguous: bool) -> None:
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    check_gradients(ember.mm, a, b, device=device, noncontiguous=noncontiguous)


def test_mm_with_one_operand_requiring_grad(device: str, rng: np.random.Generator) -> None:
    a = ember.tensor(rng.standard_normal((3, 4)), device=device).requires_grad_()
    b = ember.tensor(rng.standard_normal((4, 2)), device=device)
    product = ember.mm(a, b)
    # Only b is saved (dA = dC @ Bᵀ), so changing a in place is fine, as in PyTorch.
    with ember.no_grad():
        a.mul_(2.0)
    (g,) = ember.autograd.grad(product.sum(), a)
    expected = np.ones((3, 2)) @ b.numpy(force=True).T
    np.testing.assert_allclose(g.numpy(force=True), expected, rtol=1e-12)
    product = ember.mm(a, b)
    with ember.no_grad():
        b.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ember.autograd.grad(product.sum(), a)


def test_mm_with_empty_inner_dim(device: str) -> None:
    a = ember.zeros(3, 0, dtype=ember.float64, device=device).requires_grad_()
    b = ember.zeros(0, 2, dtype=ember.float64, device=device).requires_grad_()
    grad_a, grad_b = ember.autograd.grad(ember.mm(a, b).sum(), (a, b))
    assert tuple(grad_a.shape) == (3, 0) and tuple(grad_b.shape) == (0, 2)


@pytest.mark.parametrize("noncontiguous", [False, True])
def test_bmm(device: str, rng: np.random.Generator, noncontiguous: bool) -> None:
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 2))
    check_gradients(ember.bmm, a, b, device=device, noncontiguous=noncontiguous)


MATMUL_SHAPES: list[tuple[Shape, Shape]] = [
    ((4,), (4,)),  # dot
    ((3, 4), (4,)),  # matrix @ vector
    ((4,), (4, 2)),  # vector @ matrix
    ((3, 4), (4, 2)),  # mm
    ((2, 3, 4), (4, 2)),  # folded into one mm
    ((2, 3, 4), (4,)),  # folded, vector on the right
    ((4,), (2, 4, 3)),  # vector on the left of a batch
    ((2, 3, 4), (2, 4, 2)),  # bmm
    ((2, 1, 3, 4), (3, 4, 2)),  # broadcast batch dims (expand, summed back in backward)
    ((3, 4), (2, 4, 2)),  # a matrix broadcast against a batch
]


@pytest.mark.parametrize(("a_shape", "b_shape"), MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_matmul(
    device: str, rng: np.random.Generator, a_shape: Shape, b_shape: Shape, noncontiguous: bool
) -> None:
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    check_gradients(ember.matmul, a, b, device=device, noncontiguous=noncontiguous)


def test_matmul_operator_and_method(device: str, rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    check_gradients(lambda x, y: x @ y, a, b, device=device)
    check_gradients(lambda x, y: x.matmul(y.t().t()), a, b, device=device)


@pytest.mark.parametrize("op", ["mm", "bmm", "matmul"])
def test_out_with_grad_raises(device: str, op: str) -> None:
    shape = (2, 2) if op != "bmm" else (1, 2, 2)
    a = ember.ones(*shape, device=device).requires_grad_()
    b = ember.ones(*shape, device=device)
    out = ember.empty(*shape, device=device)
    with pytest.raises(RuntimeError, match=r"out=\.\.\. arguments don.t support automatic"):
        getattr(ember, op)(a, b, out=out)
    with ember.no_grad():
        getattr(ember, op)(a, b, out=out)
    assert out.tolist() == ember.full(shape, 2.0).tolist()


def test_no_grad_products_do_not_record(device: str) -> None:
    a = ember.ones(2, 2, device=device).requires_grad_()
    with ember.no_grad():
        assert ember.mm(a, a).grad_fn is None
    plain = ember.ones(2, 2, device=device)
    assert ember.mm(plain, plain)._autograd is None


# -- second order ----------------------------------------------------------------------------


def _tanh_mm(a: ember.Tensor, b: ember.Tensor) -> ember.Tensor:
    return ember.tanh(ember.mm(a, b))


def _sum_of_products(a: ember.Tensor, b: ember.Tensor) -> Any:
    product = ember.mm(a, b)
    return (product * product).sum(0) + (a * a).sum() * b.sum()


@pytest.mark.parametrize(
    "fn", [ember.mm, ember.bmm, _tanh_mm, _sum_of_products], ids=lambda f: f.__name__
)
def test_second_order(device: str, rng: np.random.Generator, fn: Any) -> None:
    if fn is ember.bmm:
        a, b = rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 3, 2))
    else:
        a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    check_second_order(fn, a, b, device=device)


def test_second_order_of_matmul_with_broadcast(device: str, rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((2, 1, 2, 3)), rng.standard_normal((2, 3, 2))
    check_second_order(lambda x, y: ember.tanh(x @ y), a, b, device=device)


def test_third_order_of_a_cubic(device: str) -> None:
    # f(a) = sum((a @ a) @ a) for a 1x1 matrix is a**3: derivatives 3a², 6a, 6.
    a = ember.tensor([[1.5]], dtype=ember.float64, device=device).requires_grad_()
    y = ember.mm(ember.mm(a, a), a).sum()
    (g1,) = ember.autograd.grad(y, a, create_graph=True)
    (g2,) = ember.autograd.grad(g1.sum(), a, create_graph=True)
    (g3,) = ember.autograd.grad(g2.sum(), a)
    assert (g1.item(), g2.item(), g3.item()) == (6.75, 9.0, 6.0)
