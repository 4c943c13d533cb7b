"""index_put(_), index_add(_), index_copy(_), index_fill(_), put(_), masked_scatter(_),
scatter_reduce(_) and index_reduce(_) against torch 2.13: values (repeated indices
accumulating, negative dims and indices, integer dtypes), in-place forms, errors, and
gradients against torch's autograd and by finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember


def _torch() -> Any:
    return pytest.importorskip("torch")


def _pair(data: Any, dtype: str, device: str, grad: bool = False) -> tuple[ember.Tensor, Any]:
    torch = _torch()
    array = np.asarray(data, dtype=dtype)
    return (
        ember.tensor(array, device=device, requires_grad=grad),
        torch.tensor(array, requires_grad=grad),
    )


def _same(ours: ember.Tensor, theirs: Any) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(force=True), theirs.detach().numpy(), rtol=1e-12)


def _random(shape: tuple[int, ...], seed: int, dtype: str = "float64") -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 4, shape).astype(dtype)  # ties, for the extreme reductions


@pytest.mark.parametrize("dtype", ["float64", "int64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_add_copy_fill_match_torch(device: str, dtype: str, dim: int) -> None:
    base = _random((4, 5), 0, dtype)
    index = np.array([0, 2, 0, 3])  # a repeat: index_add accumulates it
    source = _random((4, 5) if dim == 0 else (4, 4), 1, dtype)
    ours, theirs = _pair(base, dtype, device)
    ours_i, theirs_i = _pair(index, "int64", device)
    ours_s, theirs_s = _pair(source, dtype, device)
    _same(ember.index_add(ours, dim, ours_i, ours_s), theirs.index_add(dim, theirs_i, theirs_s))
    _same(
        ours.index_add(dim, ours_i, ours_s, alpha=3),
        theirs.index_add(dim, theirs_i, theirs_s, alpha=3),
    )
    unique, theirs_unique = _pair([3, 0, 1, 2], "int64", device)
    _same(
        ember.index_copy(ours, dim, unique, ours_s), theirs.index_copy(dim, theirs_unique, theirs_s)
    )
    _same(ember.index_fill(ours, dim, ours_i, -7), theirs.index_fill(dim, theirs_i, -7))
    _same(ours, theirs)  # the out-of-place forms left the input as it was


def test_in_place_index_writes_match_torch(device: str) -> None:
    ours, theirs = _pair(_random((3, 4), 2), "float64", device)
    ours_i, theirs_i = _pair([2, 3, 0], "int64", device)
    ours_s, theirs_s = _pair(_random((3, 3), 3), "float64", device)
    assert ours.index_add_(1, ours_i, ours_s) is ours
    theirs.index_add_(1, theirs_i, theirs_s)
    _same(ours, theirs)
    ours.index_copy_(1, ours_i, ours_s)
    theirs.index_copy_(1, theirs_i, theirs_s)
    _same(ours, theirs)
    negative, theirs_negative = _pair([2, -1], "int64", device)  # index_fill_ counts back
    ours.index_fill_(0, negative, ember.tensor(2.5, dtype=ember.float64, device=device))
    theirs.index_fill_(0, theirs_negative, 2.5)
    _same(ours, theirs)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_matches_torch(device: str, accumulate: bool) -> None:
    ours, theirs = _pair(_random((4, 3), 4), "float64", device)
    rows, theirs_rows = _pair([0, 2, 0 if accumulate else 3], "int64", device)
    columns, theirs_columns = _pair([1, 2, 1 if accumulate else 0], "int64", device)
    values, theirs_values = _pair([1.0, 2.0, 3.0], "float64", device)
    expected = theirs.index_put((theirs_rows, theirs_columns), theirs_values, accumulate)
    _same(ember.index_put(ours, (rows, columns), values, accumulate), expected)
    row_values, theirs_row_values = _pair([10.0, 20.0, 30.0], "float64", device)  # broadcast
    ours.index_put_((rows,), row_values, accumulate=accumulate)
    theirs.index_put_((theirs_rows,), theirs_row_values, accumulate=accumulate)
    _same(ours, theirs)
    with pytest.raises(
        RuntimeError, match="Index put requires the source and destination dtypes match"
    ):
        ours.index_put_((rows,), ember.ones(3, device=device))


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_matches_torch(device: str, accumulate: bool) -> None:
    ours, theirs = _pair(_random((3, 4), 5), "float64", device)
    index, theirs_index = _pair([[0, -1], [5, 0 if accumulate else 7]], "int64", device)
    source, theirs_source = _pair([[1.0, 2.0], [3.0, 4.0]], "float64", device)
    _same(
        ember.put(ours, index, source, accumulate),
        theirs.put(theirs_index, theirs_source, accumulate),
    )
    ours.put_(index, source, accumulate)
    theirs.put_(theirs_index, theirs_source, accumulate)
    _same(ours, theirs)
    with pytest.raises(IndexError, match="tried to access index 12 on a tensor of 12 elements"):
        ours.put(
            ember.tensor([12], device=device), ember.ones(1, dtype=ember.float64, device=device)
        )
    with pytest.raises(IndexError, match="same number of elements"):
        ours.put_(
            ember.tensor([1, 2], device=device), ember.ones(3, dtype=ember.float64, device=device)
        )


def test_masked_scatter_matches_torch(device: str) -> None:
    ours, theirs = _pair(_random((3, 4), 6), "float64", device)
    mask = np.random.default_rng(7).random((3, 4)) > 0.5
    ours_m, theirs_m = _pair(mask, "bool", device)
    ours_s, theirs_s = _pair(np.arange(20.0), "float64", device)
    _same(ember.masked_scatter(ours, ours_m, ours_s), theirs.masked_scatter(theirs_m, theirs_s))
    row, theirs_row = _pair([True, False, True, False], "bool", device)  # broadcast mask
    ours.masked_scatter_(row, ours_s)
    theirs.masked_scatter_(theirs_row, theirs_s)
    _same(ours, theirs)
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
        ours.masked_scatter(ember.ones(3, 4, dtype=ember.bool, device=device), ours_s[:5])
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        ours.masked_scatter(ember.ones(3, 4, device=device), ours_s)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_scatter_reduce_matches_torch(
    device: str, reduce: str, include_self: bool, dtype: str
) -> None:
    base = _random((4, 5), 8, dtype)
    index = np.random.default_rng(9).integers(0, 4, (5, 4))  # smaller than src and self
    source = _random((6, 5), 10, dtype)
    ours, theirs = _pair(base, dtype, device)
    ours_i, theirs_i = _pair(index, "int64", device)
    ours_s, theirs_s = _pair(source, dtype, device)
    for dim in (0, -1):
        idx, theirs_idx = (ours_i, theirs_i) if dim == 0 else (ours_i[:4], theirs_i[:4])
        expected = theirs.scatter_reduce(
            dim, theirs_idx, theirs_s, reduce, include_self=include_self
        )
        _same(
            ember.scatter_reduce(ours, dim, idx, ours_s, reduce, include_self=include_self),
            expected,
        )
    ours.scatter_reduce_(0, ours_i, ours_s, reduce, include_self=include_self)
    theirs.scatter_reduce_(0, theirs_i, theirs_s, reduce, include_self=include_self)
    _same(ours, theirs)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_torch(device: str, reduce: str, include_self: bool) -> None:
    ours, theirs = _pair(_random((3, 5), 11), "float64", device)
    ours_i, theirs_i = _pair([0, 4, 0, 2], "int64", device)
    ours_s, theirs_s = _pair(_random((3, 4), 12), "float64", device)
    expected = theirs.index_reduce(1, theirs_i, theirs_s, reduce, include_self=include_self)
    _same(ember.index_reduce(ours, 1, ours_i, ours_s, reduce, include_self=include_self), expected)
    ours.index_reduce_(-1, ours_i, ours_s, reduce, include_self=include_self)
    theirs.index_reduce_(-1, theirs_i, theirs_s, reduce, include_self=include_self)
    _same(ours, theirs)


def test_reduction_errors_match_torch(device: str) -> None:
    x = ember.zeros(3, 4, device=device)
    index = ember.tensor([[0, 1]], device=device)
    with pytest.raises(
        RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin, got foo"
    ):
        x.scatter_reduce(0, index, ember.ones(2, 4, device=device), "foo")
    with pytest.raises(
        RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum"
    ):
        x.index_reduce(
            0, ember.tensor([0, 1], device=device), ember.ones(2, 4, device=device), "sum"
        )
    with pytest.raises(IndexError, match="out of bounds"):
        x.scatter_reduce(
            0, ember.tensor([[5, 0]], device=device), ember.ones(2, 4, device=device), "amax"
        )


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda x, i: x.index_add(0, i, ember.ones(3, 4, device=x.device)),
            RuntimeError,
            "Number of indices \\(2\\)",
        ),
        (
            lambda x, i: x.index_add(0, i, ember.ones(2, 4, dtype=ember.float64, device=x.device)),
            RuntimeError,
            "self \\(Float\\) and source \\(Double\\) must have the same scalar type",
        ),
        (
            lambda x, i: x.index_add(0, i.reshape(1, 2), ember.ones(2, 4, device=x.device)),
            IndexError,
            "vector",
        ),
        (
            lambda x, i: x.index_add(0, i.float(), ember.ones(2, 4, device=x.device)),
            RuntimeError,
            "int32/int64",
        ),
        (
            lambda x, i: x.index_copy(0, i, ember.ones(3, 4, device=x.device)),
            IndexError,
            "Number of indices",
        ),
        (lambda x, i: x.index_fill(0, i * 7, 1.0), IndexError, "out of bounds"),
        (
            lambda x, i: x.index_add(1, i, ember.ones(2, 2, device=x.device)),
            RuntimeError,
            "source tensor shape",
        ),
        (
            lambda x, i: x.index_add(1, i - 1, ember.ones(3, 2, device=x.device)),
            RuntimeError,
            "index -1 is out of bounds for dimension 1 with size 4",
        ),
        (
            lambda x, i: x.index_copy(1, i - 1, ember.ones(3, 2, device=x.device)),
            IndexError,
            "index_copy_\\(\\): index -1 is out of bounds",
        ),
    ],
)
def test_index_write_errors_match_torch(device: str, call: Any, error: type, message: str) -> None:
    x = ember.zeros(3, 4, device=device)
    before = x.numpy(force=True).copy()
    with pytest.raises(error, match=message):
        call(x, ember.tensor([0, 1], device=device))
    np.testing.assert_array_equal(x.numpy(force=True), before)  # left intact


def _grads_match(ours_fn: Any, theirs_fn: Any, inputs: list[np.ndarray], device: str) -> None:
    torch = _torch()
    ours = [ember.tensor(a, device=device, requires_grad=True) for a in inputs]
    theirs = [torch.tensor(a, requires_grad=True) for a in inputs]
    out_ours, out_theirs = ours_fn(*ours), theirs_fn(*theirs)
    weights = np.random.default_rng(13).random(tuple(out_theirs.shape))
    (out_ours * ember.tensor(weights, device=device)).sum().backward()
    (out_theirs * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(force=True), b.grad.numpy(), rtol=1e-12)


def test_index_write_gradients_match_torch(device: str) -> None:
    torch = _torch()
    index = [0, 2, 0]
    ours_i, theirs_i = ember.tensor(index, device=device), torch.tensor(index)
    base, source = np.random.default_rng(14).standard_normal((2, 3, 4))[:, :, :3]
    _grads_match(
        lambda x, s: x.index_add(0, ours_i, s, alpha=2),
        lambda x, s: x.index_add(0, theirs_i, s, alpha=2),
        [base, source],
        device,
    )
    _grads_match(
        lambda x, s: ember.index_put(x, (ours_i,), s, accumulate=True),
        lambda x, s: torch.index_put(x, (theirs_i,), s, accumulate=True),
        [base, source],
        device,
    )
    mask = np.array([[True, False, True], [False, False, True], [True, True, False]])
    _grads_match(
        lambda x, s: x.masked_scatter(ember.tensor(mask, device=device), s),
        lambda x, s: x.masked_scatter(torch.tensor(mask), s),
        [base, source],
        device,
    )


@pytest.mark.parametrize("reduce", ["sum", "mean", "prod", "amax"])
def test_scatter_reduce_gradients_match_torch(device: str, reduce: str) -> None:
    torch = _torch()
    index = np.array([[0, 1, 0], [2, 0, 1]])
    ours_i, theirs_i = ember.tensor(index, device=device), torch.tensor(index)
    rng = np.random.default_rng(15)
    base, source = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    _grads_match(
        lambda x, s: x.scatter_reduce(0, ours_i, s, reduce),
        lambda x, s: x.scatter_reduce(0, theirs_i, s, reduce),
        [base, source],
        device,
    )


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_by_finite_differences(
    device: str, reduce: str, include_self: bool
) -> None:
    rng = np.random.default_rng(16)
    x = ember.tensor(rng.standard_normal((3, 4)), device=device, requires_grad=True)
    src = ember.tensor(rng.standard_normal((3, 4)), device=device, requires_grad=True)
    index = ember.tensor(rng.integers(0, 3, (3, 4)), device=device)
    assert ember.autograd.gradcheck(
        lambda a, b: a.scatter_reduce(0, index, b, reduce, include_self=include_self), (x, src)
    )


def test_extreme_gradient_is_shared_among_ties(device: str) -> None:
    torch = _torch()
    _grads_match(
        lambda x, s: x.scatter_reduce(0, ember.tensor([0, 0, 1], device=device), s, "amax"),
        lambda x, s: x.scatter_reduce(0, torch.tensor([0, 0, 1]), s, "amax"),
        [np.array([2.0, 5.0]), np.array([2.0, 2.0, 1.0])],
        device,
    )


def test_empty_indices_and_scalar_inputs_match_torch(device: str) -> None:
    torch = _torch()
    no_rows = ember.zeros(0, 2, dtype=ember.int64, device=device)
    ours = ember.zeros(3, 2, device=device).scatter_reduce(
        0, no_rows, ember.zeros(0, 2, device=device), "amax"
    )
    _same(
        ours,
        torch.zeros(3, 2).scatter_reduce(
            0, torch.zeros(0, 2, dtype=torch.int64), torch.zeros(0, 2), "amax"
        ),
    )
    nothing = ember.zeros(0, dtype=ember.int64, device=device)
    ours = ember.zeros(3, 2, device=device).index_add(0, nothing, ember.zeros(0, 2, device=device))
    _same(
        ours, torch.zeros(3, 2).index_add(0, torch.zeros(0, dtype=torch.int64), torch.zeros(0, 2))
    )
    scalar = ember.tensor(1.0, device=device)
    _same(
        scalar.index_fill(0, ember.tensor([-1], device=device), 5.0),
        torch.tensor(1.0).index_fill(0, torch.tensor([-1]), 5.0),
    )
    _same(scalar.index_fill(0, nothing, 5.0), torch.tensor(1.0))
    with pytest.raises(IndexError, match="index 1 is out of bounds for dimension 0 with size 1"):
        scalar.index_fill(0, ember.tensor([1], device=device), 5.0)
