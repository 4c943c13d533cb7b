"""ember.nn.utils.clip_grad_norm_ / clip_grad_value_ against PyTorch and NumPy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import clip_grad_norm_, clip_grad_value_, get_total_norm


def _parameters(device: str, grads: list[np.ndarray]) -> list[Any]:
    parameters = []
    for g in grads:
        p = nn.Parameter(ember.zeros(*g.shape, device=device))
        p.grad = ember.tensor(g.astype(np.float32), device=device)
        parameters.append(p)
    return parameters


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(
    device: str, norm_type: float, max_norm: float, rng: Any
) -> None:
    torch = pytest.importorskip("torch")
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5), rng.standard_normal((2, 2, 2))]
    ours = _parameters(device, grads)
    theirs = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for p, g in zip(theirs, grads, strict=True):
        p.grad = torch.tensor(g.astype(np.float32))
    total = clip_grad_norm_(ours, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-5)
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(
            p.grad.numpy(force=True), q.grad.numpy(force=True), rtol=1e-5, atol=1e-7
        )


def test_clip_grad_norm_reference(device: str, rng: Any) -> None:
    grads = [rng.standard_normal((4, 4)), rng.standard_normal(3)]
    parameters = _parameters(device, grads)
    norm = math.sqrt(sum((g.astype(np.float32).astype(np.float64) ** 2).sum() for g in grads))
    total = clip_grad_norm_(parameters, 1.0)
    np.testing.assert_allclose(total.item(), norm, rtol=1e-5)
    clipped = math.sqrt(
        sum((p.grad.numpy(force=True).astype(np.float64) ** 2).sum() for p in parameters)
    )
    np.testing.assert_allclose(clipped, 1.0, rtol=1e-5)
    assert get_total_norm([p.grad for p in parameters]).item() == pytest.approx(1.0, rel=1e-5)


def test_clip_grad_norm_single_tensor_and_no_grads(device: str) -> None:
    (p,) = _parameters(device, [np.array([3.0, 4.0])])
    assert clip_grad_norm_(p, 10.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(force=True), [3.0, 4.0])
    bare = nn.Parameter(ember.zeros(2, device=device))
    assert clip_grad_norm_([bare], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite(device: str) -> None:
    (p,) = _parameters(device, [np.array([np.inf, 1.0])])
    with pytest.raises(RuntimeError, match=r"The total norm of order 2\.0 for gradients"):
        clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isinf(clip_grad_norm_([p], 1.0).item())


def test_clip_grad_value(device: str) -> None:
    (p,) = _parameters(device, [np.array([-3.0, 0.5, 2.0])])
    clip_grad_value_([p], 1.0)
    np.testing.assert_allclose(p.grad.numpy(force=True), [-1.0, 0.5, 1.0])


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_norm_foreach_paths_match_torch(
    device: str, norm_type: float, foreach: bool | None, rng: Any
) -> None:
    """The multi-tensor path (foreach None/True) and the per-tensor loop (False) agree with
    PyTorch, over a list that mixes sizes, a transposed (strided) gradient and float64."""
    torch = pytest.importorskip("torch")
    shapes = [(40, 30), (7,), (1,), (5, 6)]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ours = _parameters(device, grads)
    ours[3].grad = ember.tensor(grads[3].T.copy(), device=device).t()  # strided
    theirs = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for p, g in zip(theirs, grads, strict=True):
        p.grad = torch.tensor(g)
    total = clip_grad_norm_(ours, 1.0, norm_type, foreach=foreach)
    expected = torch.nn.utils.clip_grad_norm_(theirs, 1.0, norm_type)
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-5)
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(
            p.grad.numpy(force=True), q.grad.numpy(force=True), rtol=1e-5, atol=1e-7
        )


@pytest.mark.parametrize("foreach", [None, False])
def test_clip_grad_norm_foreach_dense_and_float64(
    device: str, foreach: bool | None, rng: Any
) -> None:
    """Dense float32 lists take the fused kernels where a device has them; a float64 list
    the composites' or the kernel's float64 path: both match float64 NumPy."""
    for dtype in (ember.float32, ember.float64):
        grads = [rng.standard_normal(s) for s in [(64, 33), (9,), (3, 3, 3)]]
        parameters = []
        for g in grads:
            p = nn.Parameter(ember.zeros(*g.shape, dtype=dtype, device=device))
            p.grad = ember.tensor(g, dtype=dtype, device=device)
            parameters.append(p)
        cast = [g.astype(dtype.numpy).astype(np.float64) for g in grads]
        norm = math.sqrt(sum((g**2).sum() for g in cast))
        total = clip_grad_norm_(parameters, 0.5, foreach=foreach)
        assert total.dtype is dtype
        np.testing.assert_allclose(total.item(), norm, rtol=1e-6)
        for p, g in zip(parameters, cast, strict=True):
            np.testing.assert_allclose(p.grad.numpy(force=True), g * 0.5 / (norm + 1e-6), rtol=1e-6)
        assert get_total_norm([p.grad for p in parameters], foreach=foreach).item() == (
            pytest.approx(0.5, rel=1e-5)
        )
