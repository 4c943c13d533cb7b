"""cdist, pdist, renorm, cov and corrcoef against torch 2.13: values for each p (both cdist
forms: differences and the matmul form past 25 rows), batches, weights, 1-d inputs,
gradients (zero distances included) against torch's autograd and by finite differences."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ember

PS = [0.0, 1.0, 2.0, 3.0, math.inf]


def _torch() -> Any:
    return pytest.importorskip("torch")


def _close(ours: ember.Tensor, theirs: Any, rtol: float = 1e-10) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(
        ours.numpy(force=True), theirs.detach().numpy(), rtol=rtol, atol=1e-10
    )


@pytest.mark.parametrize("p", PS)
def test_cdist_and_pdist_match_torch(device: str, p: float) -> None:
    torch = _torch()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 30, 3))
    b[0, 0] = a[0, 0]  # a zero distance
    ours_a, ours_b = ember.tensor(a, device=device), ember.tensor(b, device=device)
    theirs_a, theirs_b = torch.tensor(a), torch.tensor(b)
    _close(ember.cdist(ours_a, ours_b, p), torch.cdist(theirs_a, theirs_b, p))
    _close(ember.cdist(ours_a, ours_a, p), torch.cdist(theirs_a, theirs_a, p))
    _close(ember.pdist(ours_a[0], p), torch.pdist(theirs_a[0], p))


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
def test_cdist_compute_modes_agree(device: str, mode: str) -> None:
    torch = _torch()
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((6, 3))
    ours = ember.cdist(
        ember.tensor(a, device=device), ember.tensor(b, device=device), compute_mode=mode
    )
    _close(ours, torch.cdist(torch.tensor(a), torch.tensor(b), compute_mode=mode), rtol=1e-8)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("rows", [4, 30])
def test_cdist_gradients_match_torch_even_at_zero_distance(
    device: str, p: float, rows: int
) -> None:
    torch = _torch()
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 2)), rng.standard_normal((rows, 2))
    b[1] = a[2]
    ours_a = ember.tensor(a, device=device, requires_grad=True)
    ours_b = ember.tensor(b, device=device, requires_grad=True)
    theirs_a, theirs_b = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    weights = rng.random((3, rows))
    (ember.cdist(ours_a, ours_b, p) * ember.tensor(weights, device=device)).sum().backward()
    (torch.cdist(theirs_a, theirs_b, p) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(
        ours_a.grad.numpy(force=True), theirs_a.grad.numpy(), rtol=1e-8, atol=1e-10
    )
    np.testing.assert_allclose(
        ours_b.grad.numpy(force=True), theirs_b.grad.numpy(), rtol=1e-8, atol=1e-10
    )


def test_distance_gradients_by_finite_differences(device: str) -> None:
    rng = np.random.default_rng(3)
    a = ember.tensor(rng.standard_normal((3, 2)), device=device, requires_grad=True)
    b = ember.tensor(rng.standard_normal((4, 2)), device=device, requires_grad=True)
    gradcheck = ember.autograd.gradcheck
    assert gradcheck(lambda x, y: ember.cdist(x, y), (a, b))
    assert gradcheck(lambda x, y: ember.cdist(x, y, 3.0), (a, b))
    assert gradcheck(lambda x: ember.pdist(x, 1.5), (a,))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda d: ember.cdist(ember.zeros(3, device=d), ember.zeros(2, 3, device=d)),
            "at least 2D tensors",
        ),
        (
            lambda d: ember.cdist(ember.zeros(2, 3, device=d), ember.zeros(2, 4, device=d)),
            "same number of columns",
        ),
        (
            lambda d: ember.cdist(ember.zeros(2, 3, device=d), ember.zeros(2, 3, device=d), -1.0),
            "non-negative p",
        ),
        (lambda d: ember.pdist(ember.zeros(2, 3, 1, device=d)), "pdist only supports 2D tensors"),
    ],
)
def test_distance_errors_match_torch(device: str, call: Any, message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        call(device)


@pytest.mark.parametrize(
    ("p", "dim", "maxnorm"), [(2.0, 0, 2.0), (1.0, 1, 3.0), (math.inf, -1, 1.0), (3.0, 0, 100.0)]
)
def test_renorm_matches_torch(device: str, p: float, dim: int, maxnorm: float) -> None:
    torch = _torch()
    data = np.random.default_rng(4).standard_normal((3, 4)) * 3
    ours = ember.tensor(data, device=device, requires_grad=True)
    theirs = torch.tensor(data, requires_grad=True)
    _close(ember.renorm(ours, p, dim, maxnorm), torch.renorm(theirs, p, dim, maxnorm))
    (ours.renorm(p, dim, maxnorm) * 1.5).sum().backward()
    (theirs.renorm(p, dim, maxnorm) * 1.5).sum().backward()
    np.testing.assert_allclose(
        ours.grad.numpy(force=True), theirs.grad.numpy(), rtol=1e-8, atol=1e-12
    )
    in_place = ember.tensor(data, device=device)
    assert in_place.renorm_(p, dim, maxnorm) is in_place
    _close(in_place, torch.tensor(data).renorm_(p, dim, maxnorm))


def test_cov_and_corrcoef_match_torch(device: str) -> None:
    torch = _torch()
    rng = np.random.default_rng(5)
    data = rng.standard_normal((3, 6))
    frequencies = np.array([1, 2, 1, 3, 1, 1])
    weights = rng.random(6)
    ours, theirs = ember.tensor(data, device=device), torch.tensor(data)
    _close(ember.cov(ours), torch.cov(theirs))
    _close(ours.cov(correction=0), theirs.cov(correction=0))
    _close(
        ember.cov(
            ours,
            fweights=ember.tensor(frequencies, device=device),
            aweights=ember.tensor(weights, device=device),
        ),
        torch.cov(theirs, fweights=torch.tensor(frequencies), aweights=torch.tensor(weights)),
    )
    _close(
        ember.cov(ours, aweights=ember.tensor(weights, device=device)),
        torch.cov(theirs, aweights=torch.tensor(weights)),
    )
    _close(ember.corrcoef(ours), torch.corrcoef(theirs))
    _close(ours[0].cov(), theirs[0].cov())
    _close(ember.corrcoef(ours[0]), torch.corrcoef(theirs[0]))
    integers = ember.tensor([[1, 2, 4], [2, 5, 9]], device=device)
    _close(ember.cov(integers), torch.cov(torch.tensor([[1, 2, 4], [2, 5, 9]])), rtol=1e-6)
    x = ember.tensor(data, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.corrcoef(t), (x,))
    with pytest.raises(RuntimeError, match="cov\\(\\): fweights cannot be negative"):
        ember.cov(ours, fweights=ember.tensor([1, -1, 1, 1, 1, 1], device=device))
    with pytest.raises(RuntimeError, match="two or fewer dimensions"):
        ember.cov(ember.zeros(2, 2, 2, device=device))
