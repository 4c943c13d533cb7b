"""1-d and 3-d max/avg pooling, as composites of the 2-d pooling ops.

1-d pooling is 2-d pooling of a height-1 image. 3-d pooling is separable: a max over a
(kd, kh, kw) box is the max over the depth taps of each plane's (kh, kw) maximum, and an
average's divisor (the clipped window's volume, with or without padding) is a product of
per-dim lengths, so an average is the depth average of plane averages (divisor_override:
the sum of sums, divided once). Each pass is max_pool2d / avg_pool2d, so autograd comes
from them. Max pooling's first-occurrence tie rule in (d, h, w) order survives: each plane
keeps its first maximum, and the depth pass its first plane.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import creation, indexing
from ember._tensor import Tensor
from ember.nn.functional._pool import avg_pool2d, max_pool2d

__all__ = [
    "avg_pool1d", "avg_pool3d", "max_pool1d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d", "max_pool3d_with_indices",
]  # fmt: skip

IntArg = int | Sequence[int]
Triple = tuple[int, int, int]


def _single(name: str, value: Any, what: str) -> int:
    values = [value] if isinstance(value, int) else list(value)
    if len(values) != 1 or not isinstance(values[0], int):
        raise RuntimeError(f"{name}: {what} must be a single int, or a tuple of one int")
    return int(values[0])


def _triple(name: str, value: Any, what: str) -> Triple:
    values = [value] if isinstance(value, int) else list(value)
    if len(values) not in (1, 3) or not all(isinstance(v, int) for v in values):
        raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of three ints")
    return (values[0], values[len(values) // 2], values[-1])


def _stride_or_kernel(name: str, stride: Any, kernel: Any, parse: Any) -> Any:
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        return kernel
    return parse(name, stride, "stride")


def _check_1d(name: str, input: Tensor) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{name}() Expected 2D or 3D input tensor, but got {list(input.shape)}")


def _check_3d(name: str, input: Tensor) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim not in (4, 5) or 0 in input.shape[-4:]:  # only the batch may be empty
        raise RuntimeError(
            "non-empty 4D or 5D (batch mode) tensor expected for input, but got: "
            f"{list(input.shape)}"
        )


# -- 1-d ------------------------------------------------------------------------------------------


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: IntArg,
    stride: IntArg | None = None,
    padding: IntArg = 0,
    dilation: IntArg = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """(max, index along L) over sliding windows of (N, C, L) or (C, L) input."""
    name = "max_pool1d"
    _check_1d(name, input)
    k = _single(name, kernel_size, "kernel_size")
    s = _stride_or_kernel(name, stride, k, _single)
    p, d = _single(name, padding, "padding"), _single(name, dilation, "dilation")
    values, indices = max_pool2d(
        input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices=True
    )
    return values.squeeze(-2), indices.squeeze(-2)


def max_pool1d(
    input: Tensor,
    kernel_size: IntArg,
    stride: IntArg | None = None,
    padding: IntArg = 0,
    dilation: IntArg = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max over sliding windows of (N, C, L) or (C, L) input."""
    values, indices = max_pool1d_with_indices(
        input, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (values, indices) if return_indices else values


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: IntArg,
    stride: IntArg | None = None,
    padding: IntArg = 0,
    dilation: IntArg = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """(max, flat index in the H x W plane) over sliding windows."""
    result: tuple[Tensor, Tensor] = max_pool2d(
        input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True
    )
    return result


def avg_pool1d(
    input: Tensor,
    kernel_size: IntArg,
    stride: IntArg | None = None,
    padding: IntArg = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over sliding windows of (N, C, L) or (C, L) input."""
    name = "avg_pool1d"
    _check_1d(name, input)
    k = _single(name, kernel_size, "kernel_size")
    s = _stride_or_kernel(name, stride, k, _single)
    p = _single(name, padding, "padding")
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return out.squeeze(-2)


# -- 3-d ------------------------------------------------------------------------------------------


def _depth_rows(t: Tensor) -> tuple[Tensor, tuple[int, ...]]:
    """(*lead, D, H, W) -> (*lead * H * W, 1, D): each depth column as a one-row image."""
    depth, h, w = t.shape[-3:]
    moved = t.movedim(-3, -1)
    return moved.reshape(-1, 1, depth), (*t.shape[:-3], h, w)


def _from_depth_rows(t: Tensor, lead_hw: tuple[int, ...]) -> Tensor:
    """The inverse of _depth_rows for a pooled depth."""
    return t.reshape(*lead_hw, t.shape[-1]).movedim(-1, -3)


def _pooled_sizes(
    input: Tensor, k: Triple, s: Triple, p: Triple, d: Triple, ceil_mode: bool
) -> Triple:
    """PyTorch's pool3d_shape_check: the output (D, H, W), or its errors."""
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if min(s) <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dT: {s[0]} dH: {s[1]} dW: {s[2]}"
        )
    if min(k) <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kT: {k[0]} kH: {k[1]} kW: {k[2]}"
        )
    if min(d) <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationT: {d[0]} dilationH: "
            f"{d[1]} dilationW: {d[2]}"
        )
    for i in range(3):
        if p[i] < 0 or p[i] > int(((k[i] - 1) * d[i] + 1) / 2):  # C++'s truncating division
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                f"kernel_size={k[i]} and dilation={d[i]}"
            )
    sizes = input.shape[-3:]
    out = []
    for i in range(3):
        span = sizes[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1 + (s[i] - 1 if ceil_mode else 0)
        o = span // s[i] + 1
        if ceil_mode and (o - 1) * s[i] >= sizes[i] + p[i]:
            o -= 1
        out.append(o)
    if min(out) < 1:
        c = input.shape[-4]
        raise RuntimeError(
            f"Given input size: ({c}x{sizes[0]}x{sizes[1]}x{sizes[2]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small"
        )
    return (out[0], out[1], out[2])


def _planes(t: Tensor) -> Tensor:
    return t.reshape(-1, t.shape[-2], t.shape[-1])


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: IntArg,
    stride: IntArg | None = None,
    padding: IntArg = 0,
    dilation: IntArg = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """(max, flat index in the D x H x W volume) over sliding windows."""
    name = "max_pool3d"
    _check_3d(name, input)
    k = _triple(name, kernel_size, "kernel_size")
    s = _stride_or_kernel(name, stride, k, _triple)
    p = _triple(name, padding, "padding")
    d = _triple(name, dilation, "dilation")
    out_size = _pooled_sizes(input, k, s, p, d, ceil_mode)
    depth, h, w = input.shape[-3:]
    lead = input.shape[:-3]
    if input.numel() == 0:  # an empty batch
        empty = creation.zeros((*lead, *out_size), dtype=input._dtype, device=input._device)
        return empty, creation.zeros(empty.shape, dtype=_dtype.int64, device=input._device)
    plane_max, plane_index = max_pool2d(
        _planes(input), k[1:], s[1:], p[1:], d[1:], ceil_mode, return_indices=True
    )
    oh, ow = plane_max.shape[-2:]
    plane_max = plane_max.reshape(*lead, depth, oh, ow)
    rows, lead_hw = _depth_rows(plane_max)
    values, which = max_pool2d(
        rows, (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]), ceil_mode, return_indices=True
    )
    values = _from_depth_rows(values, lead_hw)
    which = _from_depth_rows(which, lead_hw)  # (*lead, Do, Ho, Wo): the winning plane
    in_plane = indexing.gather(plane_index.reshape(*lead, depth, oh, ow), -3, which)
    return values.contiguous(), which * (h * w) + in_plane


def max_pool3d(
    input: Tensor,
    kernel_size: IntArg,
    stride: IntArg | None = None,
    padding: IntArg = 0,
    dilation: IntArg = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max over sliding windows of (N, C, D, H, W) or (C, D, H, W) input."""
    values, indices = max_pool3d_with_indices(
        input, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (values, indices) if return_indices else values


def avg_pool3d(
    input: Tensor,
    kernel_size: IntArg,
    stride: IntArg | None = None,
    padding: IntArg = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over sliding windows of (N, C, D, H, W) or (C, D, H, W) input."""
    name = "avg_pool3d"
    _check_3d(name, input)
    k = _triple(name, kernel_size, "kernel_size")
    s = _stride_or_kernel(name, stride, k, _triple)
    p = _triple(name, padding, "padding")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    divisor = None if divisor_override is None else 1  # sums, divided once at the end
    out_size = _pooled_sizes(input, k, s, p, (1, 1, 1), ceil_mode)
    depth = input.shape[-3]
    lead = input.shape[:-3]
    if input.numel() == 0:  # an empty batch
        return creation.zeros((*lead, *out_size), dtype=input._dtype, device=input._device)
    planes = avg_pool2d(_planes(input), k[1:], s[1:], p[1:], ceil_mode, count_include_pad, divisor)
    planes = planes.reshape(*lead, depth, *planes.shape[-2:])
    rows, lead_hw = _depth_rows(planes)
    out = avg_pool2d(rows, (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode, count_include_pad, divisor)
    result = _from_depth_rows(out, lead_hw).contiguous()
    if divisor_override is not None:
        result = result / divisor_override
    return result
