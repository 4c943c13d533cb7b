"""Gradients of the view, shape, joining and conversion ops against central finite
differences in float64; second-order gradients through views; a 10k-op deep graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from .test_gradients_reduction import check_gradients, check_second_order

View = Callable[[ember.Tensor], Any]

VIEWS: dict[str, View] = {
    "view": lambda t: t.view(4, 6),
    "view-infer": lambda t: t.view(-1),
    "view_as": lambda t: t.view_as(ember.empty(6, 4)),
    "reshape": lambda t: t.reshape(3, -1, 2),
    "reshape_as": lambda t: t.reshape_as(ember.empty(24)),
    "permute": lambda t: t.permute(2, 0, 1),
    "permute-negative": lambda t: t.permute(-1, -3, -2),
    "transpose": lambda t: t.transpose(0, 2),
    "transpose-negative": lambda t: t.transpose(-1, -2),
    "T": lambda t: t.T,
    "mT": lambda t: t.mT,
    "movedim": lambda t: ember.movedim(t, 0, -1),
    "movedim-many": lambda t: ember.movedim(t, (0, 1), (2, 0)),
    "select": lambda t: t.select(1, 2),
    "select-negative": lambda t: t.select(-1, -1),
    "narrow": lambda t: t.narrow(1, 1, 2),
    "narrow-negative": lambda t: t.narrow(-1, -3, 2),
    "expand": lambda t: t.unsqueeze(1).expand(2, 3, 3, 4),
    "expand-new-dims": lambda t: t.select(0, 1).expand(2, 2, 3, 4),
    "expand_as": lambda t: t.narrow(2, 0, 1).expand_as(ember.empty(2, 3, 4)),
    "squeeze": lambda t: t.narrow(1, 0, 1).squeeze(),
    "squeeze-dim": lambda t: t.narrow(0, 1, 1).squeeze(0),
    "squeeze-dims": lambda t: t.narrow(0, 1, 1).narrow(2, 0, 1).squeeze((0, -1)),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "unsqueeze-negative": lambda t: t.unsqueeze(-1),
    "flatten": lambda t: t.flatten(),
    "flatten-range": lambda t: t.flatten(1, 2),
    "unflatten": lambda t: t.unflatten(2, (2, -1)),
    "t": lambda t: t.select(0, 0).t(),
    "t-1d": lambda t: t.select(0, 0).select(0, 1).t(),
    "clone": lambda t: t.clone(),
    "contiguous": lambda t: t.transpose(0, 1).contiguous(),
    "as_strided": lambda t: t.as_strided((3, 2), (2, 5)),
    "as_strided-overlapping": lambda t: t.as_strided((3, 3), (1, 1), 2),
}


# `view` needs strides that a view can express; as_strided addresses the storage itself.
CONTIGUOUS_ONLY = {"view", "view-infer", "view_as", "as_strided", "as_strided-overlapping"}
VIEW_CASES = [(name, False) for name in VIEWS] + [
    (name, True) for name in VIEWS if name not in CONTIGUOUS_ONLY
]


@pytest.mark.parametrize(("name", "noncontiguous"), VIEW_CASES, ids=str)
def test_view(device: str, rng: np.random.Generator, name: str, noncontiguous: bool) -> None:
    x = rng.standard_normal((2, 3, 4))
    check_gradients(VIEWS[name], x, device=device, noncontiguous=noncontiguous)


def test_reshape_that_copies(device: str, rng: np.random.Generator) -> None:
    # A transposed tensor cannot be viewed flat: reshape copies and still differentiates.
    check_gradients(lambda t: t.t().reshape(-1), rng.standard_normal((3, 4)), device=device)
    check_gradients(
        lambda t: t.reshape(12), rng.standard_normal((3, 4)), device=device, noncontiguous=True
    )


def test_flatten_of_0d_and_view_chains(device: str, rng: np.random.Generator) -> None:
    check_gradients(lambda t: t.flatten(), np.array(3.0), device=device)
    check_gradients(lambda t: t.reshape(()), np.array([2.0]), device=device)
    check_gradients(lambda t: t.unsqueeze(0).unsqueeze(0).squeeze(), np.array(2.0), device=device)


def test_as_strided_of_a_view(device: str, rng: np.random.Generator) -> None:
    # Storage positions read outside the input's own elements get no gradient (as in
    # PyTorch): here the view holds rows 1-2, and the window starts in row 0.
    x = ember.tensor(rng.standard_normal((4, 3)), device=device).requires_grad_()
    window = ember.as_strided(x.narrow(0, 1, 2), (2, 3), (3, 1), 1)
    weights = rng.standard_normal((2, 3))
    (g,) = ember.autograd.grad((window * ember.tensor(weights, device=device)).sum(), x)
    expect = np.zeros(12)
    expect[1:7] = weights.reshape(-1)
    expect[:3] = 0.0
    np.testing.assert_array_equal(g.numpy(force=True), expect.reshape(4, 3))
    check_gradients(
        lambda t: ember.as_strided(t.narrow(0, 1, 2), (2, 2), (1, 3), 4),
        rng.standard_normal((4, 3)),
        device=device,
    )


def test_as_strided_of_an_overlapping_input(device: str) -> None:
    # An expanded input: its storage elements are shared evenly (PyTorch's rule); the
    # expand's backward sums them back, so the leaf gets the plain gradient.
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64, device=device).requires_grad_()
    wide = x.expand(2, 3)
    (g,) = ember.autograd.grad(ember.as_strided(wide, (3,), (1,)).sum(), x)
    assert g.tolist() == [1.0, 1.0, 1.0]
    (g,) = ember.autograd.grad((ember.as_strided(wide, (2,), (1,), 1) * 2.0).sum(), wide)
    assert g.tolist() == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]


# -- joining and splitting --------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_cat(device: str, rng: np.random.Generator, dim: int, noncontiguous: bool) -> None:
    shapes = [(2, 3), (2, 3), (2, 3)]
    shapes[0] = tuple(4 if i == dim % 2 else n for i, n in enumerate(shapes[0]))
    arrays = [rng.standard_normal(s) for s in shapes]

    def fn(a: ember.Tensor, b: ember.Tensor, c: ember.Tensor) -> ember.Tensor:
        return ember.cat([a, b, c], dim)

    check_gradients(fn, *arrays, device=device, noncontiguous=noncontiguous)


def test_cat_edge_cases(device: str, rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(0)
    # The legacy rule skips 1-d empty tensors; they still get an (empty) gradient.
    check_gradients(lambda x, y: ember.cat([x, y, x]), a, b, device=device)
    check_gradients(lambda x: ember.cat([x, x], 0), rng.standard_normal(0), device=device)
    # The same tensor twice: both gradients add up.
    check_gradients(lambda x: ember.cat([x, x * 2.0], 1), a, device=device)


def test_cat_with_type_promotion(device: str) -> None:
    small = ember.ones(2, dtype=ember.float32, device=device).requires_grad_()
    wide = ember.ones(3, dtype=ember.float64, device=device).requires_grad_()
    joined = ember.cat([small, wide])
    assert joined.dtype == ember.float64
    weights = ember.arange(5, dtype=ember.float64, device=device)
    grad_small, grad_wide = ember.autograd.grad((joined * weights).sum(), (small, wide))
    assert grad_small.dtype == ember.float32 and grad_small.tolist() == [0.0, 1.0]
    assert grad_wide.tolist() == [2.0, 3.0, 4.0]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stack(device: str, rng: np.random.Generator, dim: int) -> None:
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    check_gradients(lambda x, y: ember.stack([x, y], dim), a, b, device=device, noncontiguous=True)


SPLITS: dict[str, View] = {
    "split": lambda t: t.split(2, 1),
    "split-sections": lambda t: ember.split(t, [1, 3, 0], -1),
    "chunk": lambda t: t.chunk(3, 0),
    "chunk-negative": lambda t: t.chunk(2, -1),
    "unbind": lambda t: t.unbind(1),
    "unbind-negative": lambda t: ember.unbind(t, -1),
}


@pytest.mark.parametrize("name", list(SPLITS))
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_split_pieces(
    device: str, rng: np.random.Generator, name: str, noncontiguous: bool
) -> None:
    # Every piece records its own node; all of them together rebuild the full gradient.
    x = rng.standard_normal((3, 4))
    check_gradients(SPLITS[name], x, device=device, noncontiguous=noncontiguous)


def test_one_piece_of_a_split(device: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4))
    check_gradients(lambda t: t.split(3, 1)[1], x, device=device)
    check_gradients(lambda t: t.unbind(0)[2].narrow(0, 1, 3) * t.unbind(1)[0], x, device=device)


# -- conversions and copies -------------------------------------------------------------------


def test_to_and_cast_back(device: str) -> None:
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, device=device).requires_grad_()
    y = x.to(ember.float32)
    assert y.requires_grad and y.grad_fn is not None
    (g,) = ember.autograd.grad((y * y).sum(), x)
    assert g.dtype == ember.float64 and g.tolist() == [2.0, 4.0]
    assert x.to(ember.float64) is x
    assert not x.to(ember.int64).requires_grad  # integer results are not differentiable
    assert x.to(device) is x
    copied = x.to(device, copy=True)
    assert copied.grad_fn.name() == "ToCopyBackward"
    check_gradients(lambda t: t.to(device, copy=True) * t, np.array([0.5, 1.5]), device=device)


def test_copy_into_a_graph_tensor(device: str, rng: np.random.Generator) -> None:
    def fn(src: ember.Tensor) -> ember.Tensor:
        target = ember.zeros(2, 3, dtype=ember.float64, device=device)
        return target.copy_(src) * 3.0

    check_gradients(fn, rng.standard_normal((2, 3)), device=device, noncontiguous=True)
    check_gradients(fn, rng.standard_normal(3), device=device)  # src broadcasts


def test_copy_replaces_the_old_history(device: str) -> None:
    old = ember.ones(2, dtype=ember.float64, device=device).requires_grad_()
    src = ember.full((2,), 5.0, dtype=ember.float64, device=device).requires_grad_()
    target = old * 2.0
    target.copy_(src)
    assert target.grad_fn.name() == "CopyBackwards"
    grad_old, grad_src = ember.autograd.grad((target * target).sum(), (old, src))
    assert grad_old.tolist() == [0.0, 0.0] and grad_src.tolist() == [10.0, 10.0]


def test_in_place_writes_into_a_leaf_raise(device: str) -> None:
    leaf = ember.ones(2, device=device).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.copy_(ember.zeros(2, device=device))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.fill_(0.0)
    with ember.no_grad():
        leaf.fill_(3.0)
    assert leaf.tolist() == [3.0, 3.0]


def test_fill_of_a_graph_tensor_zeroes_its_gradient(device: str) -> None:
    x = ember.ones(3, dtype=ember.float64, device=device).requires_grad_()
    y = x * 2.0
    y.fill_(4.0)
    z = (y + x).sum()
    (g,) = ember.autograd.grad(z, x)
    assert g.tolist() == [1.0, 1.0, 1.0]


# -- recording only where needed ------------------------------------------------------------


def test_views_of_plain_tensors_record_nothing(device: str) -> None:
    plain = ember.ones(2, 3, device=device)
    outputs = [plain.t(), plain.reshape(-1), plain.select(0, 1), plain.narrow(1, 0, 2),
               plain.expand(2, 2, 3), ember.cat([plain, plain]), *plain.split(1)]  # fmt: skip
    assert all(o._autograd is None for o in outputs)
    leaf = ember.ones(2, 3, device=device).requires_grad_()
    with ember.no_grad():
        assert all(o.grad_fn is None for o in (leaf.t(), leaf.select(0, 0), *leaf.unbind()))
    assert leaf.t().grad_fn.name() == "TransposeBackward"
    assert not leaf.t().is_leaf


# -- higher order and deep graphs -------------------------------------------------------------


def test_second_order_through_views(device: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4))

    def slices(t: ember.Tensor) -> ember.Tensor:
        return t.select(0, 1) * t.narrow(0, 0, 1).squeeze(0) * t.t().select(1, 2)

    def joined(t: ember.Tensor) -> ember.Tensor:
        pieces = t.chunk(2, 1)
        return ember.cat([pieces[0] * pieces[1], t.unbind(1)[0].unsqueeze(1)], 1).tanh()

    def strided(t: ember.Tensor) -> ember.Tensor:
        window = ember.as_strided(t, (3, 3), (1, 1))
        return (window * window).expand(2, 3, 3) * t.reshape(-1).narrow(0, 0, 3)

    for fn in (slices, joined, strided):
        check_second_order(fn, x, device=device)
    check_second_order(
        lambda t: ember.stack([t, t * t]).permute(2, 0, 1).cumsum(0), x, device=device
    )


def test_deep_chain_of_ten_thousand_ops(device: str) -> None:
    # The engine walks the graph iteratively, and freeing it must not recurse either.
    x = ember.ones(2, 2, dtype=ember.float64, device=device).requires_grad_()
    y = x
    for i in range(10_000):
        y = y.t() if i % 2 else y.narrow(0, 0, 2)
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    del y
