"""Gradients of the indexing ops against central finite differences, in float64.

Reading ops (t[index], gather, index_select, take) send gradients back to the positions
read, adding up over repeated indices; writing ops (t[index] = v, scatter, masked_fill,
fill_) give the written values the gradient at their positions and the overwritten
elements none. Checked with `ember.autograd.gradcheck` on every device, second
derivatives with `gradgradcheck`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

F64 = ember.float64


def leaf(values: Any, device: str) -> ember.Tensor:
    return ember.tensor(np.asarray(values, dtype=np.float64), device=device).requires_grad_()


def index(values: Any, device: str, dtype: ember.dtype = ember.int64) -> ember.Tensor:
    return ember.tensor(values, dtype=dtype, device=device)


# -- t[index] ------------------------------------------------------------------------------

#: name -> index builder (given the device); every index applies to a (3, 4, 2) tensor
READS: dict[str, Callable[[str], Any]] = {
    "int": lambda d: 1,
    "negative_int": lambda d: -1,
    "slice": lambda d: slice(1, None),
    "step": lambda d: (slice(None), slice(0, 4, 2)),
    "none_ellipsis": lambda d: (None, Ellipsis, 1),
    "int_and_slice": lambda d: (2, slice(1, 3)),
    "index_tensor": lambda d: index([2, 0, 2, 1], d),
    "index_tensor_int32": lambda d: index([[0, 1], [1, 1]], d, ember.int32),
    "list": lambda d: [0, 2, 0],
    "second_dim": lambda d: (slice(None), index([3, 3, 0], d)),
    "two_adjacent": lambda d: (index([0, 2, 2], d), index([1, 1, 3], d)),
    "two_apart": lambda d: (index([0, 2], d), slice(None), index([1, 1], d)),
    "broadcast_indices": lambda d: (index([[0], [2]], d), index([1, 3, 3], d)),
    "mask": lambda d: index([True, False, True], d, ember.bool),
    "mask_2d": lambda d: index([[True, False, True, True]] * 3, d, ember.bool),
    "bool_scalar": lambda d: True,
    "zero_d_index": lambda d: index(1, d),
    "empty": lambda d: index([], d),
}


@pytest.mark.parametrize("case", sorted(READS))
def test_getitem_gradient(case: str, device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4, 2)), device)
    item = READS[case](device)
    assert gradcheck(lambda t: t[item], (x,))


@pytest.mark.parametrize("case", ["int", "step", "two_adjacent", "mask"])
def test_getitem_second_derivative(case: str, device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4, 2)), device)
    item = READS[case](device)
    assert gradgradcheck(lambda t: t[item] * t[item], (x,))


def test_getitem_repeated_indices_accumulate(device: str) -> None:
    x = leaf([1.0, 2.0, 3.0], device)
    x[index([0, 0, 2, 0], device)].backward(ember.ones(4, dtype=F64, device=device))
    np.testing.assert_array_equal(x.grad.numpy(force=True), [3.0, 0.0, 1.0])


def test_getitem_names_the_node(device: str) -> None:
    x = leaf(np.zeros((3, 4)), device)
    assert x[0].grad_fn.name() == "SelectBackward"
    assert x[1:].grad_fn.name() == "SliceBackward"
    assert x[None].grad_fn.name() == "UnsqueezeBackward"
    assert x[index([0, 1], device)].grad_fn.name() == "IndexBackward"


def test_iteration_and_chained_views(device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    assert gradcheck(lambda t: t[1:][:, ::2][0], (x,))


# -- t[index] = value -----------------------------------------------------------------------

#: name -> (index builder, shape of the value written into a (3, 4) tensor)
WRITES: dict[str, tuple[Callable[[str], Any], tuple[int, ...]]] = {
    "row": (lambda d: 1, (4,)),
    "broadcast_row": (lambda d: 1, (1,)),
    "leading_ones": (lambda d: 0, (1, 4)),
    "slice": (lambda d: (slice(None), slice(1, 3)), (3, 2)),
    "column_broadcast": (lambda d: (slice(None), 0), ()),
    "index_tensor": (lambda d: index([2, 0], d), (2, 4)),
    "two_indices": (lambda d: (index([0, 2], d), index([3, 1], d)), (2,)),
    "mask": (lambda d: index([[True, False, False, True]] * 3, d, ember.bool), (6,)),
}


@pytest.mark.parametrize("case", sorted(WRITES))
def test_setitem_gradient(case: str, device: str, rng) -> None:
    """Gradients reach both the overwritten tensor (zero where written) and the value."""
    build, value_shape = WRITES[case]
    item = build(device)

    def fn(x: ember.Tensor, v: ember.Tensor) -> ember.Tensor:
        y = x * 2.0
        y[item] = v
        return y

    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    v = leaf(rng.uniform(-1, 1, value_shape), device)
    assert gradcheck(fn, (x, v))


def test_setitem_scalar_value(device: str, rng) -> None:
    def fn(x: ember.Tensor) -> ember.Tensor:
        y = x.sin() + 1.0  # (exp would save y itself, which the write then invalidates)
        y[1:, 2] = 5.0
        return y

    assert gradcheck(fn, (leaf(rng.uniform(-1, 1, (3, 4)), device),))


def test_setitem_into_constant(device: str, rng) -> None:
    """Writing a value that requires grad into a constant makes the constant a graph node."""

    def fn(v: ember.Tensor) -> ember.Tensor:
        y = ember.zeros(3, 4, dtype=F64, device=device)
        y[index([0, 2], device), 1:3] = v
        assert y.grad_fn is not None and not y.is_leaf
        return y

    assert gradcheck(fn, (leaf(rng.uniform(-1, 1, (2, 2)), device),))


def test_setitem_second_derivative(device: str, rng) -> None:
    def fn(x: ember.Tensor, v: ember.Tensor) -> ember.Tensor:
        y = x * x
        y[0] = v * v
        return y

    x, v = leaf(rng.uniform(-1, 1, (2, 3)), device), leaf(rng.uniform(-1, 1, (3,)), device)
    assert gradgradcheck(fn, (x, v))


def test_setitem_on_leaf_raises(device: str) -> None:
    x = leaf(np.zeros(3), device)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[0] = 1.0


# -- gather, scatter, index_select, take -------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_gradient(dim: int, device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    positions = index(rng.integers(0, x.shape[dim], (3, 3)), device)
    assert gradcheck(lambda t: ember.gather(t, dim, positions), (x,))
    assert gradgradcheck(lambda t: t.gather(dim, positions) ** 2, (x,))


@pytest.mark.parametrize("method", ["scatter", "scatter_add"])
def test_scatter_gradient(method: str, device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    src = leaf(rng.uniform(-1, 1, (2, 4)), device)
    # Distinct rows per column: scatter's result then does not depend on write order.
    positions = index(np.stack([rng.permutation(3)[:2] for _ in range(4)], axis=1), device)
    assert gradcheck(lambda t, s: getattr(t, method)(0, positions, s), (x, src))
    assert gradgradcheck(lambda t, s: getattr(t, method)(0, positions, s * s), (x, src))


@pytest.mark.parametrize("method", ["scatter", "scatter_add"])
def test_scatter_src_larger_than_index(method: str, device: str, rng) -> None:
    """src elements outside index's shape are never read: their gradient is zero."""
    x = leaf(rng.uniform(-1, 1, (3, 3)), device)
    src = leaf(rng.uniform(-1, 1, (3, 3)), device)
    positions = index([[0, 1]], device)
    assert gradcheck(lambda t, s: getattr(ember, method)(t, 0, positions, s), (x, src))


def test_scatter_add_repeated_indices(device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (2, 3)), device)
    src = leaf(rng.uniform(-1, 1, (4, 3)), device)
    positions = index([[0, 1, 1], [0, 0, 1], [1, 1, 1], [0, 1, 0]], device)
    assert gradcheck(lambda t, s: t.scatter_add(0, positions, s), (x, src))


def test_scatter_scalar_src(device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    positions = index([[0, 2, 1, 0]], device)
    assert gradcheck(lambda t: t.scatter(0, positions, 1.5), (x,))


@pytest.mark.parametrize("method", ["scatter_", "scatter_add_"])
def test_scatter_in_place_on_graph_tensor(method: str, device: str, rng) -> None:
    def fn(x: ember.Tensor, s: ember.Tensor) -> ember.Tensor:
        y = x * 3.0
        out = getattr(y, method)(1, index([[1, 0], [2, 3], [0, 3]], device), s)
        assert out is y
        return y * x

    x, s = leaf(rng.uniform(-1, 1, (3, 4)), device), leaf(rng.uniform(-1, 1, (3, 2)), device)
    assert gradcheck(fn, (x, s))


@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_gradient(dim: int, device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    positions = index([2, 0, 2, 2], device)
    assert gradcheck(lambda t: ember.index_select(t, dim, positions), (x,))
    assert gradgradcheck(lambda t: t.index_select(dim, positions).sin(), (x,))


def test_index_select_zero_d(device: str) -> None:
    x = leaf(1.5, device)
    assert gradcheck(lambda t: t.index_select(0, index([0], device)), (x,))


def test_take_gradient(device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    positions = index([[0, 11, -1], [5, 5, 0]], device)
    assert gradcheck(lambda t: ember.take(t, positions), (x,))
    assert gradgradcheck(lambda t: t.take(positions) ** 2, (x,))


# -- masked_fill, fill_, zero_ -------------------------------------------------------------------


def test_masked_fill_gradient(device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (3, 4)), device)
    mask = ember.tensor(rng.random((3, 4)) < 0.5, device=device)
    assert gradcheck(lambda t: ember.masked_fill(t, mask, 2.0), (x,))
    assert gradgradcheck(lambda t: t.masked_fill(mask, 2.0) ** 2, (x,))


def test_masked_fill_broadcast_mask_and_tensor_value(device: str, rng) -> None:
    x = leaf(rng.uniform(-1, 1, (4,)), device)
    value = leaf(0.5, device)
    mask = ember.tensor(rng.random((3, 4)) < 0.5, device=device)
    assert gradcheck(lambda t, v: t.masked_fill(mask, v), (x, value))


def test_masked_fill_in_place(device: str, rng) -> None:
    mask = ember.tensor(rng.random((3, 4)) < 0.5, device=device)

    def fn(x: ember.Tensor) -> ember.Tensor:
        y = x * 2.0
        assert y.masked_fill_(mask, -1.0) is y
        return y * x

    assert gradcheck(fn, (leaf(rng.uniform(-1, 1, (3, 4)), device),))


@pytest.mark.parametrize("method", ["fill_", "zero_"])
def test_fill_on_graph_tensor(method: str, device: str, rng) -> None:
    """Filling a graph tensor cuts the gradient to its old values."""

    def fn(x: ember.Tensor) -> ember.Tensor:
        y = x * 2.0
        z = y[1:]
        z = z * 1.0
        getattr(z, method)(*((3.0,) if method == "fill_" else ()))
        return ember.cat([y, z])

    assert gradcheck(fn, (leaf(rng.uniform(-1, 1, (3, 2)), device),))


@pytest.mark.parametrize("method", ["fill_", "zero_"])
def test_fill_on_leaf_raises(method: str, device: str) -> None:
    x = leaf(np.zeros(3), device)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(x, method)(*((1.0,) if method == "fill_" else ()))


# -- in-place writes through views ------------------------------------------------------------

#: name -> function of (x, y) writing in place through a view of a graph tensor
VIEW_WRITES: dict[str, Callable[[ember.Tensor, ember.Tensor], ember.Tensor]] = {
    "row_mul_": lambda b, y: b[0].mul_(y[0]),
    "column_iadd": lambda b, y: b.__setitem__((slice(None), 1), b[:, 1].__iadd__(y[:, 0])),
    "strided_exp_": lambda b, y: b[:, ::2].exp_(),
    "view_of_view": lambda b, y: b[1:][:, 1:].mul_(y[1:, :2]),
    "transposed_add_": lambda b, y: b.t()[1].add_(y[:, 1]),
    "reshaped_clamp_": lambda b, y: b.reshape(6)[1:4].clamp_(-0.5, 0.5),
    "view_setitem": lambda b, y: b[1].__setitem__(slice(0, 2), y[0, :2]),
    "view_fill_": lambda b, y: b[:, 2].fill_(0.25),
}


@pytest.mark.parametrize("case", sorted(VIEW_WRITES))
def test_in_place_through_a_view_updates_the_base(case: str, device: str, rng) -> None:
    """The base sees the write (PyTorch's CopySlices): its gradient flows to the written
    region from the view's new history and elsewhere from its own."""

    def fn(x: ember.Tensor, y: ember.Tensor) -> ember.Tensor:
        base = x * 1.5
        VIEW_WRITES[case](base, y)
        return base * x

    x = leaf(rng.uniform(-1, 1, (2, 3)), device)
    y = leaf(rng.uniform(-1, 1, (2, 3)), device)
    assert gradcheck(fn, (x, y))


def test_view_taken_before_its_base_changed(device: str, rng) -> None:
    """A view whose base was then modified in place reads the new values: its gradient
    goes through the modification too."""

    def fn(x: ember.Tensor) -> ember.Tensor:
        base = x * 2.0
        row = base[1]
        base.mul_(x)
        return row * 3.0

    assert gradcheck(fn, (leaf(rng.uniform(-1, 1, (2, 3)), device),))


def test_in_place_through_a_view_second_derivative(device: str, rng) -> None:
    def fn(x: ember.Tensor) -> ember.Tensor:
        base = x * x
        base[0].mul_(x[1])
        return base

    assert gradgradcheck(fn, (leaf(rng.uniform(-1, 1, (2, 3)), device),))


def test_in_place_on_a_view_of_a_leaf_raises(device: str) -> None:
    x = leaf(np.zeros((2, 3)), device)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].add_(1.0)


def test_in_place_through_a_view_matches_torch(device: str) -> None:
    torch = pytest.importorskip("torch")
    data = np.arange(1.0, 7.0).reshape(2, 3)

    def run(lib: Any, x: Any) -> Any:
        base = x * 2.0
        base[0].mul_(3.0)
        column = base[:, 1]
        base.add_(1.0)
        return (base * column[:, None]).sum()

    t = torch.tensor(data, requires_grad=True)
    run(torch, t).backward()
    e = leaf(data, device)
    run(ember, e).backward()
    np.testing.assert_allclose(e.grad.numpy(force=True), t.grad.numpy(force=True), rtol=1e-12)
