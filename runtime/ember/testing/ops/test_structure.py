"""The structure family against torch 2.13: triangles, diagonals, flips, rolls, repeats,
grids, einsum, the scans (cumprod, cummax, cummin, logcumsumexp), diff and the NumPy-style
stack/split/axis names. Values, dtypes, views, errors, and gradients by finite
differences (and against torch's autograd for cumprod through zeros)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from ._reference import host, make
from .test_gradients_reduction import check_gradients

torch = pytest.importorskip("torch")

# Each case is written once over a module `m` (ember or torch): the two share the API.
Case = Callable[..., Any]

CASES: dict[str, tuple[tuple[tuple[int, ...], ...], Case]] = {
    "tril": (((3, 4, 5),), lambda m, x: m.tril(x)),
    "tril-neg": (((4, 5),), lambda m, x: m.tril(x, -2)),
    "triu": (((3, 4, 5),), lambda m, x: x.triu(1)),
    "triu-wide": (((2, 6),), lambda m, x: m.triu(x, -3)),
    "diagonal": (((3, 4, 5),), lambda m, x: x.diagonal()),
    "diagonal-dims": (((3, 4, 5),), lambda m, x: m.diagonal(x, 1, 2, 0)),
    "diagonal-neg": (((3, 4, 5),), lambda m, x: x.diagonal(-2, -1, -2)),
    "diagonal-empty": (((3, 4),), lambda m, x: x.diagonal(9)),
    "diag-1d": (((4,),), lambda m, x: m.diag(x, -1)),
    "diag-2d": (((4, 3),), lambda m, x: x.diag(1)),
    "diag_embed": (((2, 3),), lambda m, x: m.diag_embed(x)),
    "diag_embed-dims": (((2, 3),), lambda m, x: m.diag_embed(x, 1, 0, 2)),
    "diag_embed-swapped": (((2, 3),), lambda m, x: x.diag_embed(-1, 2, 0)),
    "diagflat": (((2, 3),), lambda m, x: m.diagflat(x, 2)),
    "trace": (((3, 5),), lambda m, x: m.trace(x)),
    "flip": (((3, 4, 5),), lambda m, x: m.flip(x, (0, -1))),
    "flip-method": (((3, 4),), lambda m, x: x.flip(1)),
    "fliplr": (((3, 4),), lambda m, x: m.fliplr(x)),
    "flipud": (((3, 4),), lambda m, x: x.flipud()),
    "roll": (((3, 4, 5),), lambda m, x: m.roll(x, (1, -7), (0, 2))),
    "roll-flat": (((3, 4),), lambda m, x: x.roll(5)),
    "rot90": (((3, 4, 2),), lambda m, x: m.rot90(x)),
    "rot90-k": (((3, 4, 2),), lambda m, x: m.rot90(x, -1, (2, 0))),
    "rot90-2": (((3, 4),), lambda m, x: x.rot90(2)),
    "rot90-3": (((3, 4),), lambda m, x: x.rot90(7, (1, 0))),
    "repeat": (((2, 3),), lambda m, x: x.repeat(2, 1, 3)),
    "tile": (((2, 3),), lambda m, x: m.tile(x, (2,))),
    "tile-more": (((2, 3),), lambda m, x: x.tile(2, 1, 2)),
    "repeat_interleave": (((2, 3),), lambda m, x: m.repeat_interleave(x, 2, 1)),
    "repeat_interleave-flat": (((2, 3),), lambda m, x: x.repeat_interleave(3)),
    "repeat_interleave-tensor": (
        ((3, 2),),
        lambda m, x: x.repeat_interleave(m.tensor([2, 0, 1], device=x.device), 0),
    ),
    "meshgrid-ij": (((3,), (4,)), lambda m, x, y: m.meshgrid(x, y, indexing="ij")),
    "meshgrid-xy": (((3,), (4,), (2,)), lambda m, x, y, z: m.meshgrid([x, y, z], indexing="xy")),
    "einsum-matmul": (((3, 4), (4, 5)), lambda m, a, b: m.einsum("ij,jk->ik", a, b)),
    "einsum-implicit": (((3, 4), (4, 5)), lambda m, a, b: m.einsum("ij,jk", a, b)),
    "einsum-transpose": (((3, 4),), lambda m, a: m.einsum("ij->ji", a)),
    "einsum-trace": (((4, 4),), lambda m, a: m.einsum("ii", a)),
    "einsum-diagonal": (((3, 2, 3),), lambda m, a: m.einsum("iji->ji", a)),
    "einsum-batch": (((2, 3, 4), (2, 4, 5)), lambda m, a, b: m.einsum("bij,bjk->bik", a, b)),
    "einsum-outer": (((3,), (4,)), lambda m, a, b: m.einsum("i,j->ij", a, b)),
    "einsum-ellipsis": (
        ((2, 1, 3, 4), (5, 4, 2)),
        lambda m, a, b: m.einsum("...ij,...jk", a, b),
    ),
    "einsum-three": (
        ((2, 3, 4), (4, 5), (5, 2)),
        lambda m, a, b, c: m.einsum("abc,cd,de->ae", [a, b, c]),
    ),
    "einsum-sum": (((3, 4),), lambda m, a: m.einsum("ij->", a)),
    "einsum-hadamard": (((3,), (3,), (3,)), lambda m, a, b, c: m.einsum("i,i,i->i", a, b, c)),
    "einsum-sublist": (((3, 4), (4, 2)), lambda m, a, b: m.einsum(a, [0, 1], b, [1, 2], [0, 2])),
    "cumprod": (((4, 5),), lambda m, x: m.cumprod(x, 1)),
    "cumprod-dim0": (((6, 2),), lambda m, x: x.cumprod(0)),
    "cummax": (((4, 6),), lambda m, x: m.cummax(x, 1)),
    "cummin": (((5, 3),), lambda m, x: x.cummin(0)),
    "logcumsumexp": (((4, 6),), lambda m, x: m.logcumsumexp(x, -1)),
    "diff": (((3, 5),), lambda m, x: m.diff(x)),
    "diff-n": (((3, 5),), lambda m, x: x.diff(2, 0, prepend=x[:1], append=x[:2])),
    "swapaxes": (((2, 3, 4),), lambda m, x: m.swapaxes(x, 0, 2)),
    "swapdims": (((2, 3, 4),), lambda m, x: x.swapdims(-1, 1)),
    "moveaxis": (((2, 3, 4),), lambda m, x: m.moveaxis(x, 0, -1)),
    "ravel": (((2, 3),), lambda m, x: x.t().ravel()),
    "atleast_1d": (((),), lambda m, x: m.atleast_1d(x)),
    "atleast_2d": (((3,),), lambda m, x: m.atleast_2d(x)),
    "atleast_3d": (((3,), (2, 3)), lambda m, x, y: m.atleast_3d(x, y)),
    "hstack": (((3,), (2,)), lambda m, x, y: m.hstack([x, y])),
    "vstack": (((3,), (2, 3)), lambda m, x, y: m.vstack([x, y])),
    "row_stack": (((2, 3), (3,)), lambda m, x, y: m.row_stack([x, y])),
    "dstack": (((2, 3), (2, 3)), lambda m, x, y: m.dstack([x, y])),
    "column_stack": (((3,), (3, 2)), lambda m, x, y: m.column_stack([x, y])),
    "tensor_split": (((7, 2),), lambda m, x: m.tensor_split(x, 3)),
    "tensor_split-indices": (((2, 7),), lambda m, x: x.tensor_split([1, -2, 9], 1)),
    "hsplit": (((2, 6),), lambda m, x: m.hsplit(x, 3)),
    "vsplit": (((4, 2),), lambda m, x: x.vsplit([1, 3])),
    "dsplit": (((1, 2, 4),), lambda m, x: m.dsplit(x, 2)),
    "broadcast_to": (((3, 1),), lambda m, x: m.broadcast_to(x, (2, 3, 4))),
    "broadcast_tensors": (((3, 1), (4,)), lambda m, x, y: m.broadcast_tensors(x, y)),
    "take_along_dim": (
        ((3, 4),),
        lambda m, x: m.take_along_dim(x, x.argmax(1, True), 1),
    ),
    "take_along_dim-flat": (((3, 4),), lambda m, x: x.take_along_dim(x.argmax().reshape(1))),
    "block_diag": (((2, 3), (3,), (), (1, 2)), lambda m, a, b, c, d: m.block_diag(a, b, c, d)),
    "cartesian_prod": (((3,), (2,), (2,)), lambda m, a, b, c: m.cartesian_prod(a, b, c)),
    "kron": (((2, 3), (3, 2)), lambda m, a, b: m.kron(a, b)),
    "kron-ranks": (((2,), (3, 2, 2)), lambda m, a, b: a.kron(b)),
    "unfold": (((3, 7),), lambda m, x: x.unfold(1, 3, 2)),
    "unfold-dim0": (((5, 2),), lambda m, x: x.unfold(0, 5, 1)),
    "unfold-transposed": (((4, 6),), lambda m, x: x.t().unfold(-1, 2, 3)),
    "split_with_sizes": (((5, 2),), lambda m, x: x.split_with_sizes([1, 4])),
    "diagonal_scatter": (((3, 4), (3,)), lambda m, x, s: m.diagonal_scatter(x, s)),
    "diagonal_scatter-dims": (
        ((3, 4, 5), (3, 4)),
        lambda m, x, s: m.diagonal_scatter(x, s, 1, 1, 2),
    ),
    "diagonal_scatter-neg": (((3, 4, 5), (4, 3)), lambda m, x, s: x.diagonal_scatter(s, -1, 2, 0)),
    "select_scatter": (((3, 4), (3,)), lambda m, x, s: m.select_scatter(x, s, 1, -2)),
    "slice_scatter": (((6, 2), (2, 2)), lambda m, x, s: m.slice_scatter(x, s, 0, 1, None, 3)),
    "slice_scatter-dim": (((2, 5), (2, 2)), lambda m, x, s: x.slice_scatter(s, -1, -3, -1)),
}


def _torch_values(result: Any) -> list[np.ndarray]:
    if isinstance(result, tuple | list):
        return [v for part in result for v in _torch_values(part)]
    return [result.detach().numpy()]


def _inputs(shapes: tuple[tuple[int, ...], ...], rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(device: str, name: str, rng: np.random.Generator) -> None:
    shapes, case = CASES[name]
    arrays = _inputs(shapes, rng)
    got = case(ember, *[make(a.astype(np.float32), device) for a in arrays])
    want = case(torch, *[torch.tensor(a, dtype=torch.float32) for a in arrays])
    got_values, want_values = _ember_values(got), _torch_values(want)
    assert len(got_values) == len(want_values)
    for g, w in zip(got_values, want_values, strict=True):
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _ember_values(result: Any) -> list[np.ndarray]:
    if isinstance(result, tuple | list):
        return [v for part in result for v in _ember_values(part)]
    return [host(result)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients(device: str, name: str, rng: np.random.Generator) -> None:
    shapes, case = CASES[name]
    arrays = _inputs(shapes, rng)

    def fn(*xs: ember.Tensor) -> Any:
        out = case(ember, *xs)
        if name.startswith(("cummax", "cummin")):
            return out.values
        if isinstance(out, tuple | list):
            return tuple(o for o in out if o.dtype.is_floating_point)
        return out

    check_gradients(fn, *arrays, device=device)


# -- the scans at zeros, negatives, ties and NaN --------------------------------------------

ZEROS = np.array([[2.0, -1.5, 0.0, 3.0, -2.0, 0.0, 0.5], [0.0, 1.0, -1.0, 2.0, 2.0, 1.0, -3.0]])


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_gradient_through_zeros(device: str, dim: int) -> None:
    # exp(cumsum(log|x|)) would give NaN here; the gradient at a lone zero is not zero.
    x = make(ZEROS, device, ember.float64).requires_grad_()
    tx = torch.tensor(ZEROS, requires_grad=True)
    weights = np.linspace(-1.0, 2.0, ZEROS.size).reshape(ZEROS.shape)
    (ember.cumprod(x, dim) * make(weights, device, ember.float64)).sum().backward()
    (torch.cumprod(tx, dim) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(
        host(ember.cumprod(x, dim).detach()), torch.cumprod(tx, dim).detach()
    )
    np.testing.assert_allclose(host(x.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    check_gradients(lambda t: ember.cumprod(t, dim), ZEROS, device=device)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_running_extremes_ties_and_nan(device: str, op: str) -> None:
    values = np.array([[1.0, 1.0, 3.0, 3.0, 2.0, np.nan, 5.0, np.nan, 1.0], [2.0] * 9])
    got = getattr(ember, op)(make(values, device), 1)
    want = getattr(torch, op)(torch.tensor(values), 1)
    np.testing.assert_array_equal(host(got.values), want.values.numpy())
    np.testing.assert_array_equal(host(got.indices), want.indices.numpy())
    assert got.indices.dtype == ember.int64


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_scans_of_integers(device: str, dtype: str, rng: np.random.Generator) -> None:
    values = rng.integers(-3, 4, (3, 6))
    values = values > 0 if dtype == "bool" else np.abs(values) if dtype == "uint8" else values
    e, t = (
        make(values, device, getattr(ember, dtype)),
        torch.tensor(values).to(getattr(torch, dtype)),
    )
    assert ember.cumprod(e, 1).dtype == ember.int64
    np.testing.assert_array_equal(host(ember.cumprod(e, 1)), torch.cumprod(t, 1).numpy())
    if dtype != "bool":
        for op in ("cummax", "cummin"):
            got, want = getattr(ember, op)(e, 0), getattr(torch, op)(t, 0)
            assert got.values.dtype == e.dtype
            np.testing.assert_array_equal(host(got.values), want.values.numpy())
            np.testing.assert_array_equal(host(got.indices), want.indices.numpy())


def test_logcumsumexp_is_stable(device: str) -> None:
    values = np.array([-np.inf, -np.inf, 1000.0, -1000.0, 0.0, 1000.0, -np.inf])
    got = host(ember.logcumsumexp(make(values, device, ember.float64), 0))
    np.testing.assert_allclose(got, torch.logcumsumexp(torch.tensor(values), 0).numpy())


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), ()])
def test_scans_of_empty_and_0d(device: str, shape: tuple[int, ...]) -> None:
    x = np.ones(shape) * 2.0
    e, t = make(x, device, ember.float32), torch.tensor(x, dtype=torch.float32)
    dim = -1
    np.testing.assert_array_equal(host(ember.cumprod(e, dim)), torch.cumprod(t, dim).numpy())
    got, want = ember.cummax(e, dim), torch.cummax(t, dim)
    assert tuple(got.values.shape) == tuple(want.values.shape)
    assert tuple(got.indices.shape) == tuple(want.indices.shape)
    assert ember.logcumsumexp(e, dim).shape == tuple(t.shape)


# -- views, in place, indices, dtypes --------------------------------------------------------


def test_diagonal_is_a_view(device: str) -> None:
    x = make(np.zeros((3, 4)), device, ember.float32)
    d = x.diagonal(1)
    d.fill_(7.0)
    expected = np.zeros((3, 4))
    expected[[0, 1, 2], [1, 2, 3]] = 7.0
    np.testing.assert_array_equal(host(x), expected)


@pytest.mark.parametrize("op", ["tril_", "triu_"])
def test_triangles_in_place(device: str, op: str, rng: np.random.Generator) -> None:
    values = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x = make(values, device)
    assert getattr(x, op)(-1) is x
    np.testing.assert_array_equal(host(x), getattr(torch.tensor(values), op)(-1).numpy())


def test_triangles_of_bool_keep_dtype(device: str) -> None:
    x = make(np.ones((3, 3), dtype=bool), device)
    assert ember.tril(x).dtype == ember.bool
    np.testing.assert_array_equal(host(ember.triu(x, 1)), np.triu(np.ones((3, 3), bool), 1))


@pytest.mark.parametrize(("row", "col", "offset"), [(4, 5, 1), (4, 3, -1), (3, 3, -5), (0, 2, 0)])
def test_triangle_indices(device: str, row: int, col: int, offset: int) -> None:
    for name in ("tril_indices", "triu_indices"):
        got = getattr(ember, name)(row, col, offset, device=device)
        assert got.dtype == ember.int64
        np.testing.assert_array_equal(host(got), getattr(torch, name)(row, col, offset).numpy())
    assert ember.tril_indices(3, 3, dtype=ember.int32).dtype == ember.int32


def test_trace_of_integers_is_int64(device: str) -> None:
    x = make(np.arange(9).reshape(3, 3), device, ember.int32)
    assert ember.trace(x).dtype == ember.int64
    assert ember.trace(x).item() == 12


def test_repeat_interleave_indices_and_output_size(device: str) -> None:
    repeats = make(np.array([1, 0, 3, 2]), device)
    np.testing.assert_array_equal(
        host(ember.repeat_interleave(repeats)),
        torch.repeat_interleave(torch.tensor([1, 0, 3, 2])).numpy(),
    )
    x = make(np.arange(4.0), device)
    got = x.repeat_interleave(repeats, 0, output_size=6)
    np.testing.assert_array_equal(host(got), [0.0, 2.0, 2.0, 2.0, 3.0, 3.0])


def test_unravel_index_and_broadcast_shapes(device: str) -> None:
    flat = np.array([0, 7, 23, 59])
    got = ember.unravel_index(make(flat, device), (3, 4, 5))
    want = torch.unravel_index(torch.tensor(flat), (3, 4, 5))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(host(g), w.numpy())
    assert ember.broadcast_shapes((2, 1), (3, 1, 1), 1) == torch.broadcast_shapes(
        (2, 1), (3, 1, 1), 1
    )


def test_diff_of_bool_is_xor(device: str) -> None:
    x = np.array([True, False, False, True])
    got = ember.diff(make(x, device))
    assert got.dtype == ember.bool
    np.testing.assert_array_equal(host(got), torch.diff(torch.tensor(x)).numpy())


# -- errors: PyTorch's exception class -------------------------------------------------------

ERRORS: dict[str, tuple[tuple[int, ...], Case]] = {
    "tril-1d": ((3,), lambda m, x: m.tril(x)),
    "diagonal-same-dims": ((3, 3), lambda m, x: x.diagonal(0, 1, 1)),
    "diag-3d": ((2, 2, 2), lambda m, x: m.diag(x)),
    "trace-3d": ((2, 2, 2), lambda m, x: m.trace(x)),
    "fliplr-1d": ((3,), lambda m, x: m.fliplr(x)),
    "rot90-same-dims": ((3, 3), lambda m, x: m.rot90(x, 1, (0, 0))),
    "roll-mismatch": ((3, 3), lambda m, x: m.roll(x, (1, 2), (0,))),
    "repeat-too-few": ((2, 3), lambda m, x: x.repeat(2)),
    "repeat_interleave-negative": ((3,), lambda m, x: x.repeat_interleave(-1)),
    "einsum-too-many-subscripts": ((3,), lambda m, x: m.einsum("ij", x)),
    "einsum-size-mismatch": ((3,), lambda m, x: m.einsum("i,i", x, x[:2])),
    "einsum-diagonal-mismatch": ((2, 3), lambda m, x: m.einsum("ii", x)),
    "einsum-bad-output": ((3,), lambda m, x: m.einsum("i->j", x)),
    "hsplit-uneven": ((2, 5), lambda m, x: m.hsplit(x, 2)),
    "vsplit-1d": ((4,), lambda m, x: m.vsplit(x, 2)),
    "diff-negative": ((3,), lambda m, x: m.diff(x, -1)),
    "cumprod-bad-dim": ((3,), lambda m, x: m.cumprod(x, 2)),
    "unfold-too-big": ((3,), lambda m, x: x.unfold(0, 4, 1)),
    "select_scatter-index": ((2, 3), lambda m, x: m.select_scatter(x, x[0], 0, 2)),
    "select_scatter-shape": ((2, 3), lambda m, x: m.select_scatter(x, x[0, :2], 0, 1)),
    "diagonal_scatter-shape": ((3, 3), lambda m, x: m.diagonal_scatter(x, x[0, :2])),
    "slice_scatter-shape": ((4, 3), lambda m, x: m.slice_scatter(x, x[:1], 0, 0, 4, 2)),
    "fill_diagonal_-1d": ((3,), lambda m, x: x.fill_diagonal_(1.0)),
    "fill_diagonal_-unequal": ((2, 3, 3), lambda m, x: x.fill_diagonal_(1.0)),
    "unfold-step": ((3,), lambda m, x: x.unfold(0, 2, 0)),
    "block_diag-3d": ((1, 1, 1), lambda m, x: m.block_diag(x)),
    "cartesian_prod-2d": ((2, 2), lambda m, x: m.cartesian_prod(x, x)),
    "split_with_sizes-sum": ((3,), lambda m, x: x.split_with_sizes([1, 1])),
    "logcumsumexp-int": ((3,), lambda m, x: m.logcumsumexp(x.long(), 0)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(device: str, name: str) -> None:
    shape, case = ERRORS[name]
    values = np.ones(shape, dtype=np.float32)
    with pytest.raises(Exception) as torch_error:
        case(torch, torch.tensor(values))
    # torch's "not implemented for 'Long'" is a NotImplementedError; Ember's DTypeError is,
    # like it, a RuntimeError (and a TypeError).
    expected = torch_error.type
    expected = RuntimeError if issubclass(expected, NotImplementedError) else expected
    x = make(values, device)
    with pytest.raises(expected):
        case(ember, x)
    np.testing.assert_array_equal(host(x), values)  # bad input leaves the tensor intact


def test_unfold_is_a_view_and_cumsum_in_place(device: str) -> None:
    x = make(np.arange(6.0, dtype=np.float32), device)
    windows = x.unfold(0, 2, 2)
    windows[:, 0].fill_(-1.0)
    np.testing.assert_array_equal(host(x), [-1.0, 1.0, -1.0, 3.0, -1.0, 5.0])
    assert x.cumsum_(0) is x
    np.testing.assert_array_equal(host(x), np.cumsum([-1.0, 1.0, -1.0, 3.0, -1.0, 5.0]))
    y = make(np.array([[1, 2], [3, 4]]), device, ember.int32)
    np.testing.assert_array_equal(host(y.cumprod_(1)), [[1, 2], [3, 12]])
    assert y.dtype == ember.int32


@pytest.mark.parametrize(
    ("shape", "wrap"),
    [((3, 3), False), ((5, 2), False), ((7, 3), True), ((2, 5), True), ((3, 3, 3), False)],
)
def test_fill_diagonal_(device: str, shape: tuple[int, ...], wrap: bool) -> None:
    x = make(np.zeros(shape, np.float32), device)
    assert x.fill_diagonal_(5.0, wrap) is x
    np.testing.assert_array_equal(host(x), torch.zeros(shape).fill_diagonal_(5.0, wrap).numpy())
