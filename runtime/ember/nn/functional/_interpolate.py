"""interpolate (and the deprecated upsample*): nearest, nearest-exact, (bi/tri)linear,
bicubic and area resampling of the spatial dims of (N, C, *spatial) input.

Every mode but area is separable, so each spatial dim is resampled on its own: gather the
source rows with index_select and blend them with per-output-position weights. Autograd
comes from those parts. Source positions follow PyTorch's CPU kernels (nearest indices in
float32 arithmetic, as PyTorch computes them, so ties land on the same pixel).
"""

from __future__ import annotations

import math
import struct
import warnings
from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import creation, indexing
from ember._tensor import Tensor
from ember.nn.functional._pool import adaptive_avg_pool2d

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]

_RANKS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) bicubic coefficient


def _f32(x: float) -> float:
    """x rounded to float32, as PyTorch's nearest kernels compute source indices."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _scale(in_size: int, out_size: int, scale: float | None, align_corners: bool) -> float:
    """PyTorch's area_pixel_compute_scale: output position -> source position ratio."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _nearest_index(mode: str, in_size: int, out_size: int, scale: float | None) -> list[int]:
    if mode == "nearest" and out_size == in_size:
        return list(range(out_size))
    if mode == "nearest" and out_size == 2 * in_size:
        return [i >> 1 for i in range(out_size)]
    ratio = _f32(1.0 / scale if scale is not None and scale > 0 else in_size / out_size)
    if mode == "nearest":
        return [min(math.floor(_f32(_f32(i) * ratio)), in_size - 1) for i in range(out_size)]
    return [min(math.floor(_f32((i + 0.5) * ratio)), in_size - 1) for i in range(out_size)]


def _select(x: Tensor, dim: int, positions: list[int]) -> Tensor:
    index = creation.tensor(positions, dtype=_dtype.int64, device=x._device)
    return indexing.index_select(x, dim, index)


def _weights(x: Tensor, dim: int, values: list[float]) -> Tensor:
    """values as a tensor shaped to broadcast along dim of x."""
    shape = [1] * x.ndim
    shape[dim] = len(values)
    return creation.tensor(values, dtype=x._dtype, device=x._device).reshape(shape)


def _linear_dim(x: Tensor, dim: int, out: int, scale: float | None, corners: bool) -> Tensor:
    size = x._shape[dim]
    ratio = _scale(size, out, scale, corners)
    low, high, lam = [], [], []
    for i in range(out):
        src = ratio * i if corners else max(ratio * (i + 0.5) - 0.5, 0.0)
        i0 = min(int(src), size - 1)
        low.append(i0)
        high.append(min(i0 + 1, size - 1))
        lam.append(src - i0)
    w1 = _weights(x, dim, lam)
    return _select(x, dim, low) * (1.0 - w1) + _select(x, dim, high) * w1


def _cubic_taps(t: float) -> list[float]:
    """The four convolution weights for offsets -1, 0, 1, 2 at fractional position t."""

    def near(d: float) -> float:  # |d| <= 1
        return ((_CUBIC_A + 2) * d - (_CUBIC_A + 3)) * d * d + 1

    def far(d: float) -> float:  # 1 < |d| < 2
        return ((_CUBIC_A * d - 5 * _CUBIC_A) * d + 8 * _CUBIC_A) * d - 4 * _CUBIC_A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_dim(x: Tensor, dim: int, out: int, scale: float | None, corners: bool) -> Tensor:
    size = x._shape[dim]
    ratio = _scale(size, out, scale, corners)
    taps: list[list[int]] = [[], [], [], []]
    weights: list[list[float]] = [[], [], [], []]
    for i in range(out):
        src = ratio * i if corners else ratio * (i + 0.5) - 0.5  # not clamped, unlike linear
        base = math.floor(src)
        for k, w in enumerate(_cubic_taps(src - base)):
            taps[k].append(min(max(base - 1 + k, 0), size - 1))
            weights[k].append(w)
    result = _select(x, dim, taps[0]) * _weights(x, dim, weights[0])
    for k in range(1, 4):
        result = result + _select(x, dim, taps[k]) * _weights(x, dim, weights[k])
    return result


def _output_size(
    input: Tensor, size: Any, scale_factor: Any, recompute: bool | None
) -> tuple[list[int], list[float | None]]:
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if not all(isinstance(s, int) and not isinstance(s, bool) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}"
                )
            sizes = [int(s) for s in size]
        else:
            sizes = [int(size)] * dim
        return sizes, [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {spatial} and scale_factor of shape "
                f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and scale_factor in (s1, s2, ...,sK) format."
            )
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    sizes = [math.floor(n * s) for n, s in zip(spatial, scales, strict=True)]
    return sizes, [None] * dim if recompute else list(scales)


def _check_mode(input: Tensor, mode: str, align_corners: bool | None, antialias: bool) -> None:
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if antialias:
        raise NotImplementedError("interpolate(): antialias=True is not supported")
    if input.ndim not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})"
        )
    needed = _RANKS.get(mode)
    if mode not in ("nearest", "nearest-exact", "area") and needed is None:
        raise NotImplementedError(f"interpolate(): unknown mode {mode!r}")
    if needed is not None and needed != input.ndim:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {needed}D input")
    if mode == "area" and input.ndim != 4:
        raise NotImplementedError(f"interpolate(): area mode on {input.ndim}D input")
    if needed is not None and not input._dtype.is_floating_point:
        raise RuntimeError(
            f"upsample_{mode}{input.ndim - 2}d: not implemented for {input._dtype.name} input"
        )


def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resample the spatial dims of (N, C, *spatial) input to `size` or by `scale_factor`."""
    _check_mode(input, mode, align_corners, antialias)
    sizes, scales = _output_size(input, size, scale_factor, recompute_scale_factor)
    if any(s <= 0 for s in sizes):
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input "
            f"({', '.join(map(str, input.shape[2:]))}) output ({', '.join(map(str, sizes))})"
        )
    if mode == "area":
        return adaptive_avg_pool2d(input, sizes)
    corners = bool(align_corners)
    result = input
    for k, (out, scale) in enumerate(zip(sizes, scales, strict=True)):
        dim = 2 + k
        if mode in ("nearest", "nearest-exact"):
            positions = _nearest_index(mode, input._shape[dim], out, scale)
            result = _select(result, dim, positions)
        elif mode == "bicubic":
            result = _cubic_dim(result, dim, out, scale, corners)
        else:
            result = _linear_dim(result, dim, out, scale, corners)
    return result


def upsample(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of interpolate (PyTorch warns the same way)."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor, size: int | Sequence[int] | None = None, scale_factor: Any = None
) -> Tensor:
    """Deprecated: interpolate(..., mode="nearest")."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor, size: int | Sequence[int] | None = None, scale_factor: Any = None
) -> Tensor:
    """Deprecated: interpolate(..., mode="bilinear", align_corners=True)."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
