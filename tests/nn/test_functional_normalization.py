"""batch_norm, layer_norm, group_norm and normalize: NumPy float64 references, running
statistics, gradients against finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ._helpers import check_gradients, tensor


def _standardize(x: np.ndarray, axes: tuple[int, ...], eps: float) -> np.ndarray:
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 2)], ids=["1d", "2d", "3d"])
def test_batch_norm_training_values_and_running_stats(
    device: str, shape: tuple[int, ...], rng: Any
) -> None:
    x = rng.standard_normal(shape) * 2 + 1
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    axes = (0, *range(2, len(shape)))
    running_mean, running_var = tensor(np.zeros(3), device), tensor(np.ones(3), device)
    result = F.batch_norm(
        tensor(x, device), running_mean, running_var, tensor(w, device), tensor(b, device),
        training=True, momentum=0.2, eps=1e-3,
    )  # fmt: skip
    channel = (1, 3) + (1,) * (len(shape) - 2)
    expected = _standardize(x, axes, 1e-3) * w.reshape(channel) + b.reshape(channel)
    np.testing.assert_allclose(result.numpy(force=True), expected, atol=1e-12)
    count = x.size // 3
    np.testing.assert_allclose(running_mean.numpy(force=True), 0.2 * x.mean(axis=axes), atol=1e-12)
    unbiased = x.var(axis=axes) * count / (count - 1)
    np.testing.assert_allclose(running_var.numpy(force=True), 0.8 + 0.2 * unbiased, atol=1e-12)


def test_batch_norm_eval_uses_running_stats(device: str, rng: Any) -> None:
    x = rng.standard_normal((4, 3, 2))
    mean, var = rng.standard_normal(3), rng.uniform(0.5, 2.0, 3)
    result = F.batch_norm(tensor(x, device), tensor(mean, device), tensor(var, device), eps=1e-5)
    expected = (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-5)
    np.testing.assert_allclose(result.numpy(force=True), expected, atol=1e-12)


def test_batch_norm_errors(device: str) -> None:
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(ember.zeros(1, 3, device=device), None, None, training=True)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradients(device: str, training: bool, rng: Any) -> None:
    mean, var = tensor(rng.standard_normal(3), device), tensor(rng.uniform(0.5, 2, 3), device)

    def fn(x: Any, w: Any, b: Any) -> Any:
        # Copies, so that the finite-difference evaluations do not move the running stats.
        return F.batch_norm(x, mean.clone(), var.clone(), w, b, training=training)

    arrays = [rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3)]
    check_gradients(fn, arrays, device, atol=1e-5)


@pytest.mark.parametrize("normalized", [(4,), (3, 4)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(device: str, normalized: tuple[int, ...], affine: bool, rng: Any) -> None:
    x = rng.standard_normal((2, 3, 4)) * 3
    w, b = rng.standard_normal(normalized), rng.standard_normal(normalized)
    axes = tuple(range(3 - len(normalized), 3))
    expected = _standardize(x, axes, 1e-5) * (w if affine else 1) + (b if affine else 0)
    args = (tensor(w, device), tensor(b, device)) if affine else (None, None)
    result = F.layer_norm(tensor(x, device), normalized, *args)
    np.testing.assert_allclose(result.numpy(force=True), expected, atol=1e-12)
    if affine:
        check_gradients(lambda *t: F.layer_norm(t[0], normalized, t[1], t[2]), [x, w, b], device)
    else:
        check_gradients(lambda t: F.layer_norm(t, normalized), [x], device)


def test_layer_norm_shape_error(device: str) -> None:
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 4\]"):
        F.layer_norm(ember.zeros(2, 3, device=device), [4])


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_group_norm(device: str, groups: int, rng: Any) -> None:
    x = rng.standard_normal((2, 4, 3, 2))
    w, b = rng.standard_normal(4), rng.standard_normal(4)
    grouped = x.reshape(2, groups, -1)
    normalized = _standardize(grouped, (2,), 1e-5).reshape(x.shape)
    expected = normalized * w.reshape(1, 4, 1, 1) + b.reshape(1, 4, 1, 1)
    result = F.group_norm(tensor(x, device), groups, tensor(w, device), tensor(b, device))
    np.testing.assert_allclose(result.numpy(force=True), expected, atol=1e-12)
    check_gradients(lambda *t: F.group_norm(t[0], groups, t[1], t[2]), [x, w, b], device)


def test_group_norm_error(device: str) -> None:
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(ember.zeros(2, 6, 4, device=device), 4)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, float("inf")])
def test_normalize(device: str, p: float, rng: Any) -> None:
    x = rng.standard_normal((3, 4))
    norms = np.linalg.norm(x, ord=p, axis=1, keepdims=True)
    np.testing.assert_allclose(F.normalize(tensor(x, device), p, 1).numpy(force=True), x / norms)
    check_gradients(lambda t: F.normalize(t, p, 1), [x], device, atol=1e-5)


def test_norms_match_torch(device: str, rng: Any) -> None:
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = rng.standard_normal((4, 6, 3)).astype(np.float32)
    w, b = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    ex, ew, eb = (tensor(a, device, ember.float32) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a) for a in (x, w, b))
    pairs = [
        (F.group_norm(ex, 3, ew, eb), tf.group_norm(tx, 3, tw, tb)),
        (F.layer_norm(ex, (3,)), tf.layer_norm(tx, (3,))),
        (F.batch_norm(ex, None, None, ew, eb, True), tf.batch_norm(tx, None, None, tw, tb, True)),
        (F.normalize(ex, dim=2), tf.normalize(tx, dim=2)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(
            ours.numpy(force=True), theirs.numpy(force=True), rtol=1e-5, atol=1e-5
        )
