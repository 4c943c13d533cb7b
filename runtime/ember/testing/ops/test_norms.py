"""Vector and matrix norms (ember.norm, Tensor.norm, ember.linalg.vector_norm /
matrix_norm / norm) against torch in float64, with gradients by finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember

from .test_gradients_reduction import check_gradients

torch = pytest.importorskip("torch")

VECTOR_ORDS = [2, 1, 0, 3, 0.5, -1, math.inf, -math.inf]
DIMS = [None, 0, -1, (0, 2), (-1, 1)]


def _both(rng: np.random.Generator, shape: tuple[int, ...], device: str):
    values = rng.standard_normal(shape)
    return ember.tensor(values, device=device), torch.tensor(values)


def _check(got: ember.Tensor, want, rtol: float = 1e-10) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(force=True), want.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_vector_norm(device: str, rng, ord, dim, keepdim: bool) -> None:
    e, t = _both(rng, (3, 4, 2), device)
    got = ember.linalg.vector_norm(e, ord, dim, keepdim)
    _check(got, torch.linalg.vector_norm(t, ord, dim, keepdim))


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf], ids=str)
@pytest.mark.parametrize("dim", [(-2, -1), (0, 2), (2, 0)], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm_batched(device: str, rng, ord, dim, keepdim: bool) -> None:
    e, t = _both(rng, (3, 4, 5), device)
    got = ember.linalg.matrix_norm(e, ord, dim, keepdim)
    _check(got, torch.linalg.matrix_norm(t, ord, dim, keepdim))


@pytest.mark.parametrize(
    "args",
    [{}, {"ord": 1}, {"ord": "fro"}, {"ord": math.inf}, {"dim": 1}, {"dim": (0, 1)},
     {"ord": 3, "dim": 0}, {"ord": 1, "dim": (1, 0)}],
    ids=str,
)  # fmt: skip
def test_linalg_norm_picks_vector_or_matrix(device: str, rng, args) -> None:
    e, t = _both(rng, (4, 3), device)
    _check(ember.linalg.norm(e, **args), torch.linalg.norm(t, **args))


@pytest.mark.parametrize(
    "args", [(), ("fro",), (2, 1), (1, (0, 1)), ("fro", (0, 2), True), (math.inf, -1)], ids=str
)
def test_torch_norm_and_tensor_method(device: str, rng, args) -> None:
    e, t = _both(rng, (2, 3, 4), device)
    _check(ember.norm(e, *args), torch.norm(t, *args))
    _check(e.norm(*args), t.norm(*args))


def test_norm_float32_and_dtype_argument(device: str, rng) -> None:
    values = rng.standard_normal((5, 6)).astype(np.float32)
    e, t = ember.tensor(values, device=device), torch.tensor(values)
    _check(ember.linalg.vector_norm(e), torch.linalg.vector_norm(t), rtol=1e-5)
    got = ember.linalg.vector_norm(e, dtype=ember.float64)
    _check(got, torch.linalg.vector_norm(t, dtype=torch.float64), rtol=1e-6)


def test_norm_errors_like_torch(device: str) -> None:
    ints = ember.tensor([1, 2, 3], device=device)
    with pytest.raises(RuntimeError, match=r"floating point or complex tensor as input\. Got Long"):
        ember.linalg.vector_norm(ints)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ember.linalg.matrix_norm(ember.ones(3, device=device))
    with pytest.raises(RuntimeError, match="identity"):
        ember.linalg.vector_norm(ember.ones(0, device=device), math.inf)
    with pytest.raises(RuntimeError, match="input must be 1D or 2D"):
        ember.linalg.norm(ember.ones(2, 2, 2, device=device), 1)


def test_empty_norm_is_zero(device: str) -> None:
    got = ember.linalg.vector_norm(ember.ones(0, 3, device=device), 2, 0)
    _check(got, torch.linalg.vector_norm(torch.ones(0, 3), 2, 0))


@pytest.mark.parametrize("ord", [2, 1, 3, math.inf], ids=str)
def test_vector_norm_gradient(device: str, rng, ord) -> None:
    values = rng.standard_normal((3, 4)) + 0.1  # away from the kinks at 0 and at ties
    check_gradients(lambda x: ember.linalg.vector_norm(x, ord, 1), values, device=device)


@pytest.mark.parametrize("ord", ["fro", 1, math.inf], ids=str)
def test_matrix_norm_gradient_matches_torch(device: str, rng, ord) -> None:
    values = rng.standard_normal((2, 3, 3))
    e = ember.tensor(values, device=device).requires_grad_()
    t = torch.tensor(values, requires_grad=True)
    ember.linalg.matrix_norm(e, ord).sum().backward()
    torch.linalg.matrix_norm(t, ord).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(force=True), t.grad.numpy(), rtol=1e-10)
