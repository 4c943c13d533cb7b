"""linear, bilinear, embedding, one_hot, pad and dropout: values against NumPy float64,
gradients against finite differences, PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ._helpers import check_gradients, tensor


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3), (3,)], ids=["2d", "3d", "1d"])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(device: str, shape: tuple[int, ...], bias: bool, rng: Any) -> None:
    x, w, b = rng.standard_normal(shape), rng.standard_normal((2, 3)), rng.standard_normal(2)
    result = F.linear(tensor(x, device), tensor(w, device), tensor(b, device) if bias else None)
    np.testing.assert_allclose(result.numpy(force=True), x @ w.T + (b if bias else 0), atol=1e-12)
    if bias:
        check_gradients(F.linear, [x, w, b], device)
    else:
        check_gradients(F.linear, [x, w], device)


def test_linear_gradient_only_where_needed(device: str, rng: Any) -> None:
    x = tensor(rng.standard_normal((4, 3)), device)
    w = tensor(rng.standard_normal((2, 3)), device, grad=True)
    F.linear(x, w).backward(tensor(np.ones((4, 2)), device))
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(force=True), np.ones((2, 4)) @ x.numpy(force=True))


def test_linear_shape_mismatch(device: str) -> None:
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(4x3 and 5x2\)"):
        F.linear(ember.zeros(4, 3, device=device), ember.zeros(2, 5, device=device))


def test_bilinear(device: str, rng: Any) -> None:
    x1, x2 = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    w, b = rng.standard_normal((5, 3, 2)), rng.standard_normal(5)
    expected = np.einsum("ni,oij,nj->no", x1, w, x2) + b
    result = F.bilinear(*(tensor(a, device) for a in (x1, x2, w, b)))
    np.testing.assert_allclose(result.numpy(force=True), expected, atol=1e-12)
    check_gradients(F.bilinear, [x1, x2, w, b], device)


# -- embedding and one_hot ------------------------------------------------------------------


def test_embedding_lookup(device: str, rng: Any) -> None:
    weight = rng.standard_normal((6, 3))
    index = np.array([[0, 5, 2], [2, 2, 1]])
    result = F.embedding(ember.tensor(index, device=device), tensor(weight, device))
    assert result.shape == (2, 3, 3)
    np.testing.assert_array_equal(result.numpy(force=True), weight[index])


@pytest.mark.parametrize("padding_idx", [None, 2, -1])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding_gradients(device: str, padding_idx: int | None, scale: bool, rng: Any) -> None:
    index = ember.tensor([[0, 2, 2], [5, 1, 2]], device=device)
    weight = tensor(rng.standard_normal((6, 3)), device, grad=True)
    out = F.embedding(index, weight, padding_idx=padding_idx, scale_grad_by_freq=scale)
    g = rng.standard_normal((2, 3, 3))
    out.backward(tensor(g, device))
    expected = np.zeros((6, 3))
    flat, rows = g.reshape(-1, 3), index.numpy(force=True).reshape(-1)
    counts = np.bincount(rows, minlength=6)
    for row, grad in zip(rows, flat, strict=True):
        expected[row] += grad / (counts[row] if scale else 1)
    if padding_idx is not None:
        expected[padding_idx % 6] = 0
    np.testing.assert_allclose(weight.grad.numpy(force=True), expected, atol=1e-12)


def test_embedding_max_norm_renormalizes_rows_in_place(device: str) -> None:
    weight = tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], device)
    out = F.embedding(ember.tensor([0, 1], device=device), weight, max_norm=1.0)
    np.testing.assert_allclose(out.numpy(force=True), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    # Only the looked-up rows are renormalized.
    np.testing.assert_allclose(weight.numpy(force=True)[2], [6.0, 8.0])
    np.testing.assert_allclose(weight.numpy(force=True)[0], [0.6, 0.8], rtol=1e-6)


def test_embedding_errors(device: str) -> None:
    weight = ember.zeros(4, 2, device=device)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([4], device=device), weight)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types"):
        F.embedding(ember.tensor([1.0], device=device), weight)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(ember.tensor([1], device=device), weight, padding_idx=4)


def test_one_hot(device: str) -> None:
    result = F.one_hot(ember.tensor([[0, 2], [1, 0]], device=device))
    assert result.dtype == ember.int64 and result.shape == (2, 2, 3)
    np.testing.assert_array_equal(
        result.numpy(force=True), np.eye(3, dtype=np.int64)[[[0, 2], [1, 0]]]
    )
    assert F.one_hot(ember.tensor([1], device=device), 4).numpy(force=True).tolist() == [
        [0, 1, 0, 0]
    ]
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(ember.tensor([4], device=device), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(ember.tensor([-1], device=device))


# -- pad ---------------------------------------------------------------------------------------

_NUMPY_MODES = {
    "constant": "constant",
    "reflect": "reflect",
    "replicate": "edge",
    "circular": "wrap",
}


@pytest.mark.parametrize("mode", sorted(_NUMPY_MODES))
@pytest.mark.parametrize("amounts", [(1, 2), (2, 1, 0, 3)], ids=["last", "two"])
def test_pad_matches_numpy(device: str, mode: str, amounts: tuple[int, ...], rng: Any) -> None:
    x = rng.standard_normal((2, 4, 5))
    widths = [(0, 0)] * 3
    for k in range(len(amounts) // 2):
        widths[2 - k] = (amounts[2 * k], amounts[2 * k + 1])
    expected = np.pad(x, widths, mode=_NUMPY_MODES[mode])
    np.testing.assert_allclose(
        F.pad(tensor(x, device), amounts, mode=mode).numpy(force=True), expected
    )
    check_gradients(lambda t: F.pad(t, amounts, mode=mode), [x[:1, :4, :4]], device)


def test_pad_constant_value_and_cropping(device: str) -> None:
    x = tensor(np.arange(6.0).reshape(2, 3), device)
    result = F.pad(x, (-1, 2), value=-5.0)
    np.testing.assert_allclose(result.numpy(force=True), [[1, 2, -5, -5], [4, 5, -5, -5]])
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(x, (3, 0), mode="reflect")


# -- dropout -----------------------------------------------------------------------------------


def test_dropout_scales_kept_elements_and_is_reproducible(device: str) -> None:
    x = ember.ones(200, 50, device=device)
    ember.manual_seed(7)
    first = F.dropout(x, p=0.3).numpy(force=True)
    ember.manual_seed(7)
    second = F.dropout(x, p=0.3).numpy(force=True)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(np.unique(first), [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((first == 0).mean() - 0.3) < 0.02


def test_dropout_identity_cases(device: str) -> None:
    x = tensor([1.0, 2.0], device)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(force=True), [0.0, 0.0])
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout(x, 1.5)


def test_dropout_gradient_uses_the_same_mask(device: str, rng: Any) -> None:
    x = tensor(rng.standard_normal((20, 20)), device, grad=True)
    out = F.dropout(x, 0.4)
    out.backward(ember.ones_like(out))
    kept = out.numpy(force=True) != 0
    np.testing.assert_allclose(x.grad.numpy(force=True), np.where(kept, 1 / 0.6, 0.0))


@pytest.mark.parametrize("fn,shape", [(F.dropout1d, (8, 16, 5)), (F.dropout2d, (8, 16, 3, 4))])
def test_feature_dropout_zeroes_whole_channels(device: str, fn: Any, shape: Any) -> None:
    out = (
        fn(ember.ones(*shape, device=device), 0.5).numpy(force=True).reshape(shape[0], shape[1], -1)
    )
    per_channel = out.min(axis=2) == out.max(axis=2)
    assert per_channel.all()
    assert 0 < (out[:, :, 0] == 0).mean() < 1


def test_linear_second_derivatives(device: str, rng: Any) -> None:
    """The linear formula is differentiable again: d/dw of (d loss / dx) for a loss of x and w."""

    def first_derivative(x: Any, w: Any) -> Any:
        out = F.linear(x, w)
        (g,) = ember.autograd.grad([out * out], [x], [ember.ones_like(out)], create_graph=True)
        return g

    arrays = [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4))]
    check_gradients(first_derivative, arrays, device, atol=1e-5, graph_inside=True)
