"""Spatial transformers: affine_grid builds sampling grids from affine matrices, grid_sample
reads an image at a grid's (normalised, [-1, 1]) coordinates.

grid_sample is a composite over one gather per interpolation corner (4 in 2-D, 8 in 3-D)
on the flattened spatial dims; autograd reaches the input through the gathers and the grid
through the interpolation weights.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ember import _dtype
from ember._autocast import autocast_op
from ember._ops import creation, linalg, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops.indexing import gather
from ember._tensor import Tensor
from ember.autograd._graph import needs_grad

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _base_coordinates(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    """PyTorch's linspace(-1, 1, steps), scaled to pixel centres unless align_corners."""
    index = creation.arange(steps, dtype=like._dtype, device=like._device)
    if align_corners:
        if steps <= 1:
            return ew.mul(index, 0.0)
        return ew.div(ew.sub(ew.mul(index, 2.0), steps - 1), steps - 1)
    return ew.div(ew.sub(ew.mul(index, 2.0), steps - 1), steps)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) or (N, D, H, W, 3) grid of theta applied to the output's normalised
    pixel coordinates (x, y[, z], 1)."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta._dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta._shape[-2:]) != (2, 3):
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{size}. Got {theta.shape}."
            )
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta._shape[-2:]) != (3, 4):
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{size}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            UserWarning,
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    rank = len(spatial)
    # Component k of the grid runs along spatial dim rank - 1 - k (x is the last dim).
    components = []
    for k in range(rank):
        dim = rank - 1 - k
        line = _base_coordinates(spatial[dim], align_corners, theta)
        view = [1] * rank
        view[dim] = spatial[dim]
        components.append(shape_ops.expand(shape_ops.reshape(line, view), spatial))
    components.append(ew.add(ew.mul(components[0], 0.0), 1.0))
    base = shape_ops.reshape(shape_ops.stack(components, -1), (1, -1, rank + 1))
    grid = linalg.matmul(base, shape_ops.transpose(theta, 1, 2))
    return shape_ops.reshape(grid, (size[0], *spatial, rank))


def _unnormalize(coordinate: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return ew.mul(ew.add(coordinate, 1.0), (size - 1) / 2)
    return ew.div(ew.sub(ew.mul(ew.add(coordinate, 1.0), size), 1.0), 2)


def _reflect(coordinate: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """PyTorch's reflect_coordinates: fold the line into [low, high] by mirroring."""
    if twice_low == twice_high:
        return ew.mul(coordinate, 0.0)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = unary.abs(ew.sub(coordinate, low))
    extra = ew.fmod(distance, span)
    flips = unary.floor(ew.div(distance, span))
    even = ew.eq(ew.fmod(flips, 2.0), 0)
    return unary.where(even, ew.add(extra, low), ew.add(ew.sub(span, extra), low))


def _source_coordinate(
    coordinate: Tensor, size: int, padding_mode: str, align_corners: bool
) -> Tensor:
    pixel = _unnormalize(coordinate, size, align_corners)
    if padding_mode == "zeros":
        return pixel
    return _pad_position(pixel, size, padding_mode, align_corners)


def _check_sample_args(input: Tensor, grid: Tensor, mode: str, padding_mode: str) -> None:
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if input.ndim not in (4, 5):
        raise RuntimeError(
            "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
            f"but got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid.ndim != input.ndim:
        raise RuntimeError(
            "grid_sampler(): expected grid to have the same number of dimensions as input, but "
            f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid._shape[0] != input._shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input with "
            f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if input._dtype != grid._dtype:
        names = {"float16": "Half", "float32": "Float", "float64": "Double"}
        raise RuntimeError(
            f"expected scalar type {names.get(input._dtype.name, input._dtype.name)} but found "
            f"{names.get(grid._dtype.name, grid._dtype.name)}"
        )
    rank = input.ndim - 2
    if grid._shape[-1] != rank:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {rank} in last dimension, but got grid "
            f"with sizes {list(grid.shape)}"
        )
    if mode == "bicubic" and rank != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


Corner = list[tuple[Tensor, Tensor | None]]


def _linear_corners(pixels: list[Tensor], mode: str, grid_grad: bool) -> list[Corner]:
    """(position, weight) per dim for each corner: the nearest pixel, or the 2^rank
    neighbours with linear weights."""
    if mode == "nearest":
        # A weight of 1 that is 0 * grid keeps the output in the grid's graph (with the zero
        # gradient PyTorch gives it) when only the grid requires grad.
        unit = [ew.add(ew.mul(p, 0.0), 1.0) if grid_grad else None for p in pixels]
        return [[(unary.round(p), u) for p, u in zip(pixels, unit, strict=True)]]
    corners: list[Corner] = [[]]
    for p in pixels:
        below = unary.floor(p)
        above_weight = ew.sub(p, below)
        options = [(below, ew.sub(1.0, above_weight)), (ew.add(below, 1.0), above_weight)]
        corners = [[*c, o] for c in corners for o in options]
    return corners


# PyTorch's bicubic kernel (Keys' cubic convolution with A = -0.75).
_CUBIC_A = -0.75


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The four tap weights at fractional offset t (taps at -1, 0, 1, 2)."""

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ew.add(ew.mul(ew.mul(ew.sub(ew.mul(x, _CUBIC_A + 2), _CUBIC_A + 3), x), x), 1.0)

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        inner = ew.add(ew.mul(ew.sub(ew.mul(x, _CUBIC_A), 5 * _CUBIC_A), x), 8 * _CUBIC_A)
        return ew.sub(ew.mul(inner, x), 4 * _CUBIC_A)

    rest = ew.sub(1.0, t)
    return [far(ew.add(t, 1.0)), near(t), near(rest), far(ew.add(rest, 1.0))]


def _bicubic_taps(
    coordinates: list[Tensor], spatial: Sequence[int], padding_mode: str, align_corners: bool
) -> list[Corner]:
    """The 4^rank taps around each point; padding applies to each tap's (integer) position,
    as in PyTorch, so the gradient reaches the grid through the weights only."""
    corners: list[Corner] = [[]]
    for coordinate, size in zip(coordinates, spatial, strict=True):
        pixel = _unnormalize(coordinate, size, align_corners)
        base = unary.floor(pixel.detach())
        weights = _cubic_weights(ew.sub(pixel, base))
        options: Corner = []
        for offset, weight in zip((-1.0, 0.0, 1.0, 2.0), weights, strict=True):
            tap = ew.add(base, offset)
            if padding_mode != "zeros":
                tap = _pad_position(tap, size, padding_mode, align_corners)
            options.append((tap, weight))
        corners = [[*c, o] for c in corners for o in options]
    return corners


def _pad_position(position: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "reflection":
        if align_corners:
            position = _reflect(position, 0, 2 * (size - 1))
        else:
            position = _reflect(position, -1, 2 * size - 1)
    return unary.clamp(position, 0.0, size - 1.0)


@autocast_op("grid_sampler")
def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """input (N, C, [D,] H, W) read at grid (N, [D',] H', W', 2 or 3): bilinear (trilinear
    in 3-D), nearest or (2-D) bicubic interpolation; outside the image 0 (zeros), the nearest edge
    (border) or the mirrored image (reflection)."""
    _check_sample_args(input, grid, mode, padding_mode)
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    batch, channels = input._shape[:2]
    spatial = input._shape[2:]
    rank = len(spatial)
    out_spatial = grid._shape[1:-1]
    points = 1
    for s in out_spatial:
        points *= s
    flat_grid = shape_ops.reshape(grid, (batch, points, rank))
    flat_input = shape_ops.reshape(input, (batch, channels, -1))
    # Grid component k runs along input spatial dim rank - 1 - k.
    coordinates = [shape_ops.select(flat_grid, 2, rank - 1 - dim) for dim in range(rank)]
    if mode == "bicubic":
        corners = _bicubic_taps(coordinates, spatial, padding_mode, align_corners)
    else:
        pixels = [
            _source_coordinate(c, size, padding_mode, align_corners)
            for c, size in zip(coordinates, spatial, strict=True)
        ]
        corners = _linear_corners(pixels, mode, needs_grad(grid))
    total: Tensor | None = None
    for corner in corners:
        inside: Tensor | None = None
        flat_index: Tensor | None = None
        weight: Tensor | None = None
        for dim, (position, factor) in enumerate(corner):
            size = spatial[dim]
            ok = ew.logical_and(ew.ge(position, 0), ew.le(position, size - 1))
            inside = ok if inside is None else ew.logical_and(inside, ok)
            index = unary.clamp(position.detach(), 0.0, size - 1.0).to(_dtype.int64)
            flat_index = index if flat_index is None else ew.add(ew.mul(flat_index, size), index)
            if factor is not None:
                weight = factor if weight is None else ew.mul(weight, factor)
        assert inside is not None and flat_index is not None
        gathered = gather(
            flat_input, 2, shape_ops.expand(flat_index.unsqueeze(1), (batch, channels, points))
        )
        scale = unary.where(inside, 1.0 if weight is None else weight, 0.0)
        if scale._dtype != input._dtype:
            scale = scale.to(input._dtype)
        term = ew.mul(gathered, scale.unsqueeze(1))
        total = term if total is None else ew.add(total, term)
    assert total is not None
    return shape_ops.reshape(total, (batch, channels, *out_spatial))
