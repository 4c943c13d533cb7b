"""affine_grid and grid_sample: values and gradients (input and grid) against PyTorch for
every mode (bicubic in 2-D), padding mode and align_corners, in 2-D and 3-D; identity
round trips; errors and warnings as PyTorch's."""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ._helpers import check_gradients


@pytest.mark.parametrize("size", [(2, 3, 5, 4), (2, 2, 3, 4, 5), (1, 1, 1, 3)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch(
    device: str, rng: Any, size: tuple[int, ...], align_corners: bool
) -> None:
    import torch

    rank = len(size) - 2
    theta = rng.standard_normal((size[0], rank, rank + 1))
    unit_warning = align_corners and min(size[2:]) == 1
    with pytest.warns(UserWarning, match="unit-size grids") if unit_warning else nullcontext():
        out = F.affine_grid(ember.tensor(theta, device=device), size, align_corners)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.nn.functional.affine_grid(torch.tensor(theta), size, align_corners)
        check_gradients(lambda t: F.affine_grid(t, size, align_corners), [theta], device)
    np.testing.assert_allclose(out.numpy(force=True), expected.numpy(), atol=1e-12)


@pytest.mark.parametrize(
    ("mode", "rank"),
    [("bilinear", 2), ("nearest", 2), ("bicubic", 2), ("bilinear", 3), ("nearest", 3)],
)
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(
    device: str, rng: Any, mode: str, padding_mode: str, align_corners: bool, rank: int
) -> None:
    import torch

    shape, grid_shape = (
        ((2, 3, 5, 4), (2, 6, 7, 2)) if rank == 2 else ((2, 2, 3, 4, 5), (2, 3, 2, 4, 3))
    )
    image = rng.standard_normal(shape)
    # Beyond [-1, 1] too, so that every padding mode is exercised.
    grid = rng.uniform(-1.4, 1.4, grid_shape)
    ours_image = ember.tensor(image, device=device, requires_grad=True)
    ours_grid = ember.tensor(grid, device=device, requires_grad=True)
    theirs_image = torch.tensor(image, requires_grad=True)
    theirs_grid = torch.tensor(grid, requires_grad=True)
    out = F.grid_sample(ours_image, ours_grid, mode, padding_mode, align_corners)
    expected = torch.nn.functional.grid_sample(
        theirs_image, theirs_grid, mode, padding_mode, align_corners
    )
    np.testing.assert_allclose(out.numpy(force=True), expected.detach().numpy(), atol=1e-12)
    weights = rng.standard_normal(tuple(expected.shape))
    (out * ember.tensor(weights, device=device)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(
        ours_image.grad.numpy(force=True), theirs_image.grad.numpy(), atol=1e-10
    )
    np.testing.assert_allclose(
        ours_grid.grad.numpy(force=True), theirs_grid.grad.numpy(), atol=1e-10
    )


def test_identity_affine_grid_samples_the_image_back(rng: Any) -> None:
    image = ember.tensor(rng.standard_normal((2, 3, 4, 6)))
    theta = ember.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    for align_corners in (False, True):
        grid = F.affine_grid(theta, (2, 3, 4, 6), align_corners)
        for mode in ("bilinear", "nearest", "bicubic"):
            out = F.grid_sample(image, grid, mode, align_corners=align_corners)
            np.testing.assert_allclose(out.numpy(), image.numpy(), atol=1e-6)


def test_grid_sample_gradient_by_finite_differences(device: str, rng: Any) -> None:
    image = rng.standard_normal((1, 2, 3, 4))
    grid = rng.uniform(-0.9, 0.9, (1, 2, 3, 2))
    check_gradients(
        lambda x, g: F.grid_sample(x, g, "bilinear", "border", align_corners=False),
        [image, grid], device, atol=1e-5,
    )  # fmt: skip


def test_nearest_with_only_the_grid_requiring_grad_gives_zero_gradient() -> None:
    grid = ember.zeros(1, 2, 2, 2, requires_grad=True)
    F.grid_sample(ember.ones(1, 1, 3, 3), grid, "nearest", align_corners=False).sum().backward()
    np.testing.assert_array_equal(grid.grad.numpy(), np.zeros((1, 2, 2, 2)))


def test_errors_and_warnings_as_torch() -> None:
    image, grid = ember.zeros(1, 1, 3, 3), ember.zeros(1, 2, 2, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(image, grid)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(ember.zeros(1, 2, 3), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic'"):
        F.grid_sample(image, grid, "area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border'"):
        F.grid_sample(image, grid, padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        F.grid_sample(ember.zeros(2, 1, 3, 3), grid, align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(ember.zeros(1, 1, 2, 2, 2), ember.zeros(1, 1, 1, 1, 3), "bicubic",
                      align_corners=False)  # fmt: skip
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.grid_sample(image, grid.double(), align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid to have size 2 in last dimension"):
        F.grid_sample(image, ember.zeros(1, 2, 2, 3), align_corners=False)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(ember.zeros(1, 3, 4), (1, 1, 2, 2), False)
    with pytest.raises(ValueError, match="Expected theta to have floating point type"):
        F.affine_grid(ember.zeros(1, 2, 3, dtype=ember.int64), (1, 1, 2, 2), False)
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(ember.zeros(1, 2, 3), (1, 1, 2), False)
    with pytest.raises(ValueError, match="Expected non-zero, positive output size"):
        F.affine_grid(ember.zeros(1, 2, 3), (1, 1, 0, 2), False)
