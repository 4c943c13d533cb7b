"""conv3d, conv_transpose3d and conv_tbc, as composites of the 2-d convolutions.

conv3d gathers the kd depth taps of every output plane into channels (unfold along the
depth dim), so one grouped conv2d over (N*D_out) images with a (C_out, C_in/G*kd, kh, kw)
weight computes it. conv_transpose3d runs one grouped conv_transpose2d whose output
channels are (C_out, kd) and scatters the depth taps back with fold (col2im along the
depth dim). Autograd (of every order) comes from those parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._autocast import autocast_op
from ember._tensor import Tensor
from ember.nn.functional._conv import (
    _check_bias,
    _check_tensors,
    conv1d,
    conv2d,
    conv_transpose2d,
)
from ember.nn.functional._convolution import Geometry
from ember.nn.functional._fold import _fold, _unfold
from ember.nn.functional._padding import pad

__all__ = ["conv3d", "conv_tbc", "conv_transpose3d"]

Triple = tuple[int, int, int]
IntArg = int | Sequence[int]


def _triple(value: Any, what: str) -> Triple:
    values = [value] * 3 if isinstance(value, int) else list(value)
    if len(values) != 3 or not all(isinstance(v, int) for v in values):
        raise RuntimeError(
            f"expected {what} to be a single integer value or a list of 3 values to match the "
            f"convolution dimensions, but got {what}={values}"
        )
    return (values[0], values[1], values[2])


def _check_geometry(s: Triple, p: Triple, d: Triple, groups: int) -> None:
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(d) <= 0:
        raise RuntimeError("non-positive dilation is not supported")


def _depth_last(x: Tensor) -> Tensor:
    """(N, C, D, H, W) -> (1, N*C*H*W, 1, D): depth as the width of a one-row image."""
    n, c, depth, h, w = x.shape
    return x.permute(0, 1, 3, 4, 2).reshape(1, n * c * h * w, 1, depth)


@autocast_op("conv3d")
def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntArg = 1,
    padding: IntArg | str = 0,
    dilation: IntArg = 1,
    groups: int = 1,
) -> Tensor:
    """3-d convolution over (N, C_in, D, H, W) or unbatched (C_in, D, H, W) input."""
    name = "conv3d"
    _check_tensors(name, 3, input, weight, bias)
    s, d = _triple(stride, "stride"), _triple(dilation, "dilation")
    kd = weight.shape[2]
    plane_padding: Any
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and s != (1, 1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = d[0] * (kd - 1) if padding == "same" else 0
        depth_pad, plane_padding = 0, padding
        if total:  # "same" may pad unevenly; the extra plane goes last, as in PyTorch
            input = pad(input, (0, 0, 0, 0, total // 2, total - total // 2))
        p = (0, 0, 0)
    else:
        p = _triple(padding, "padding")
        depth_pad, plane_padding = p[0], (p[1], p[2])
    _check_geometry(s, p, d, groups)
    if weight.shape[0] == 0 or weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead"
        )
    batched = input.ndim == 5
    x = input if batched else input.unsqueeze(0)
    n, channels, depth = x.shape[:3]
    if channels != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
            f"{channels} channels instead"
        )
    _check_bias(bias, weight.shape[0], weight, "")
    out_depth = (depth + 2 * depth_pad - d[0] * (kd - 1) - 1) // s[0] + 1
    if out_depth < 1:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({depth + 2 * depth_pad} x "
            f"{x.shape[3]} x {x.shape[4]}). Kernel size: ({d[0] * (kd - 1) + 1} x "
            f"{weight.shape[3]} x {weight.shape[4]}). Kernel size can't be greater than actual "
            "input size"
        )
    h, w = x.shape[3], x.shape[4]
    geo = Geometry((1, s[0]), (0, depth_pad), (1, d[0]), 1, 2)
    taps = _unfold(_depth_last(x), (1, kd), (1, out_depth), geo)  # (1, N*C*H*W*kd, D_out)
    taps = taps.reshape(n, channels, h, w, kd, out_depth).permute(0, 5, 1, 4, 2, 3)
    planes = taps.reshape(n * out_depth, channels * kd, h, w)
    c_out = weight.shape[0]
    w2 = weight.reshape(c_out, weight.shape[1] * kd, weight.shape[3], weight.shape[4])
    y = conv2d(planes, w2, bias, s[1:], plane_padding, d[1:], groups)
    y = y.reshape(n, out_depth, c_out, y.shape[2], y.shape[3]).permute(0, 2, 1, 3, 4)
    y = y.contiguous()
    return y if batched else y.squeeze(0)


@autocast_op("conv_transpose3d")
def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntArg = 1,
    padding: IntArg = 0,
    output_padding: IntArg = 0,
    groups: int = 1,
    dilation: IntArg = 1,
) -> Tensor:
    """3-d transposed convolution; weight is (C_in, C_out/groups, kd, kh, kw)."""
    name = "conv_transpose3d"
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    _check_tensors(name, 3, input, weight, bias)
    s, p = _triple(stride, "stride"), _triple(padding, "padding")
    d, op = _triple(dilation, "dilation"), _triple(output_padding, "output_padding")
    _check_geometry(s, p, d, groups)
    if any(o >= si and o >= di for o, si, di in zip(op, s, d, strict=True)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_depth: {op[0]} output_padding_height: {op[1]} "
            f"output_padding_width: {op[2]} stride_depth: {s[0]} stride_height: {s[1]} "
            f"stride_width: {s[2]} dilation_depth: {d[0]} dilation_height: {d[1]} "
            f"dilation_width: {d[2]}"
        )
    batched = input.ndim == 5
    x = input if batched else input.unsqueeze(0)
    n, channels, depth, h, w = x.shape
    if weight.shape[0] != channels:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {weight.shape[0]} channels, but got "
            f"{channels} channels instead"
        )
    if channels % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead"
        )
    c_group, kd = weight.shape[1], weight.shape[2]
    c_out = c_group * groups
    _check_bias(bias, c_out, weight, "transposed=1, ")
    out_depth = (depth - 1) * s[0] - 2 * p[0] + d[0] * (kd - 1) + 1  # before output_padding
    if out_depth + op[0] <= 0:
        raise RuntimeError(
            f"Given input size per channel: ({depth} x {h} x {w}). Calculated output size per "
            f"channel: ({out_depth + op[0]} x ...). Output size is too small"
        )
    planes = x.permute(0, 2, 1, 3, 4).reshape(n * depth, channels, h, w)
    # Output channels (C_out/G, kd) per group: the weight's (C_out/G, kd) dims merged.
    w2 = weight.reshape(channels, c_group * kd, weight.shape[3], weight.shape[4])
    z = conv_transpose2d(planes, w2, None, s[1:], p[1:], op[1:], groups, d[1:])
    ho, wo = z.shape[2], z.shape[3]
    taps = z.reshape(n, depth, c_out, kd, ho, wo).permute(0, 2, 4, 5, 3, 1)
    taps = taps.reshape(1, n * c_out * ho * wo * kd, depth)
    # output_padding extends the output into what padding would crop; when it reaches a
    # whole stride the extra windows are zero columns.
    extra = op[0] // s[0]
    if extra:
        taps = pad(taps, (0, extra))
    geo = Geometry((1, s[0]), (0, p[0]), (1, d[0]), 1, 2)
    out_depth += op[0]
    y = _fold(taps, (1, out_depth), (1, kd), (1, depth + extra), geo)  # (1, N*C*Ho*Wo, 1, D)
    y = y.reshape(n, c_out, ho, wo, out_depth).permute(0, 1, 4, 2, 3)
    if bias is not None:
        y = y + bias.reshape(1, c_out, 1, 1, 1)
    y = y.contiguous()
    return y if batched else y.squeeze(0)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-d convolution over (time, batch, channels) input; weight is (k, C_in, C_out)."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    y = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return y.permute(2, 0, 1).contiguous()
