"""unbind's and split's single backward nodes (UnbindBackward0, SplitBackward0): the
pieces' gradients stacked or concatenated once, zeros where a piece got none; equal to
PyTorch's, through views, double backward and an in-place change of a piece."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gradients_match_torch_with_unused_pieces(dim: int) -> None:
    x = RNG.normal(size=(4, 3, 5))
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        pieces = t.unbind(dim)
        assert type(pieces[0].grad_fn).__name__ == "UnbindBackward0"
        loss = (pieces[0] * 2).sum() + (pieces[-1] ** 2).sum()
        loss.backward()
        results.append(np.asarray(t.grad.numpy()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_no_piece_used_gives_no_gradient_and_the_node_is_shared() -> None:
    t = ember.tensor(RNG.normal(size=(3, 2)), requires_grad=True)
    a, b, c = (t * 1).unbind(0)
    assert a.grad_fn is b.grad_fn is c.grad_fn
    (grad,) = ember.autograd.grad(b.sum(), t)
    np.testing.assert_array_equal(grad.numpy(), [[0, 0], [1, 1], [0, 0]])


def test_double_backward_and_gradcheck() -> None:
    t = ember.tensor(RNG.normal(size=(3, 4)), dtype=ember.float64, requires_grad=True)

    def f(x: ember.Tensor) -> ember.Tensor:
        a, _, c = x.unbind(0)
        return (a * c).sum() + (c**3).sum()

    assert ember.autograd.gradcheck(f, (t,))
    assert ember.autograd.gradgradcheck(f, (t,))


def test_in_place_change_of_a_piece_of_a_non_leaf() -> None:
    x = RNG.normal(size=(3, 4))
    grads = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        base = t * 2
        piece = base[1]  # a plain view, then pieces of the same base
        piece.mul_(3)
        first, second, third = base.unbind(0)
        (first + second * second + third).sum().backward()
        grads.append(np.asarray(t.grad.numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_no_grad_and_plain_tensors_record_nothing() -> None:
    with ember.no_grad():
        pieces = ember.ones(2, 3, requires_grad=True).unbind(1)
    assert all(p.grad_fn is None for p in pieces)
    assert ember.ones(2, 3).unbind(0)[0].grad_fn is None


@pytest.mark.parametrize(("sizes", "dim"), [(2, 0), ([1, 0, 3], 1), ([4], -1)])
def test_split_gradients_match_torch_with_unused_and_empty_pieces(sizes: object, dim: int) -> None:
    x = RNG.normal(size=(4, 4))
    results = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        pieces = t.split(sizes, dim)
        (pieces[0] * 3).sum().backward()
        results.append(np.asarray(t.grad.numpy()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_split_double_backward_and_chunk() -> None:
    t = ember.tensor(RNG.normal(size=(6, 2)), dtype=ember.float64, requires_grad=True)

    def f(x: ember.Tensor) -> ember.Tensor:
        a, b, c = x.chunk(3, 0)
        return (a * c).sum() + (b**3).sum()

    assert ember.autograd.gradcheck(f, (t,))
    assert ember.autograd.gradgradcheck(f, (t,))
