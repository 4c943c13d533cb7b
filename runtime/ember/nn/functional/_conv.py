"""conv1d, conv2d and conv_transpose2d: PyTorch's argument rules, shapes and errors.

The computation and its autograd live in _convolution.py (the im2col/col2im device ops,
one GEMM per batch); this module parses stride/padding/dilation/groups, works out output
sizes (padding "same" may be asymmetric: the extra row/column goes bottom/right, as in
PyTorch) and raises PyTorch's errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._autocast import autocast_op
from ember._errors import DTypeError
from ember._ops._meta import same_device
from ember._tensor import Tensor
from ember.nn.functional._convolution import (
    Geometry,
    convolution,
    convolution_transpose,
)

__all__ = ["conv1d", "conv2d", "conv_transpose2d"]

Pair = tuple[int, int]
IntArg = int | Sequence[int]

# PyTorch names tensor types by their C++ scalar names in conv's dtype errors.
_CPP_NAMES = {
    "uint8": "unsigned char", "int8": "signed char", "int32": "int", "int64": "long int",
    "float16": "c10::Half", "float32": "float", "float64": "double", "bool": "bool",
    "bfloat16": "c10::BFloat16",
}  # fmt: skip


@autocast_op("conv1d")
def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntArg = 1,
    padding: IntArg | str = 0,
    dilation: IntArg = 1,
    groups: int = 1,
) -> Tensor:
    """1-d convolution over (N, C_in, L) or unbatched (C_in, L) input."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv2d")
def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntArg = 1,
    padding: IntArg | str = 0,
    dilation: IntArg = 1,
    groups: int = 1,
) -> Tensor:
    """2-d convolution over (N, C_in, H, W) or unbatched (C_in, H, W) input."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv_transpose2d")
def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntArg = 1,
    padding: IntArg = 0,
    output_padding: IntArg = 0,
    groups: int = 1,
    dilation: IntArg = 1,
) -> Tensor:
    """2-d transposed convolution (the gradient of conv2d in its input); weight is
    (C_in, C_out/groups, kh, kw)."""
    name = "conv_transpose2d"
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    _check_tensors(name, 2, input, weight, bias)
    s, p = _pair(name, stride, "stride", 2), _pair(name, padding, "padding", 2)
    d = _pair(name, dilation, "dilation", 2)
    out_pad = _pair(name, output_padding, "output_padding", 2)
    _check_geometry(s, p, d, groups)
    if any(o >= si and o >= di for o, si, di in zip(out_pad, s, d, strict=True)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {out_pad[0]} output_padding_width: {out_pad[1]} "
            f"stride_height: {s[0]} stride_width: {s[1]} dilation_height: {d[0]} "
            f"dilation_width: {d[1]}"
        )
    _check_groups(weight, groups)
    channels = input._shape[-3]
    if weight._shape[0] != channels:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight._shape)}, expected "
            f"input{list(input._shape)} to have {weight._shape[0]} channels, but got "
            f"{channels} channels instead"
        )
    _check_bias(bias, weight._shape[1] * groups, weight, "transposed=1, ")
    size = input._shape[-2:]
    kernel = weight._shape[-2:]
    out = tuple(
        (size[i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + out_pad[i] + 1 for i in (0, 1)
    )
    if min(out) <= 0:
        raise RuntimeError(
            f"Given input size per channel: ({size[0]} x {size[1]}). Calculated output size "
            f"per channel: ({out[0]} x {out[1]}). Output size is too small"
        )
    geo = Geometry(s, p, d, groups, 2)
    return convolution_transpose(input, weight, bias, geo, (out[0], out[1]))


# -- shared parsing and checks -----------------------------------------------------------------


def _conv(
    name: str, spatial: int, x: Tensor, w: Tensor, b: Tensor | None,
    stride: IntArg, padding: IntArg | str, dilation: IntArg, groups: int,
) -> Tensor:  # fmt: skip
    _check_tensors(name, spatial, x, w, b)
    s = _pair(name, stride, "stride", spatial)
    d = _pair(name, dilation, "dilation", spatial)
    kernel = (1, w._shape[-1]) if spatial == 1 else (w._shape[-2], w._shape[-1])
    before, after = _padding(name, padding, s, d, kernel, spatial)
    _check_geometry(s, before, d, groups)
    _check_groups(w, groups)
    channels = x._shape[-spatial - 1]
    if channels != w._shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(w._shape)}, expected "
            f"input{list(x._shape)} to have {w._shape[1] * groups} channels, but got "
            f"{channels} channels instead"
        )
    _check_bias(b, w._shape[0], w, "")
    size = (1, x._shape[-1]) if spatial == 1 else (x._shape[-2], x._shape[-1])
    padded = [size[i] + before[i] + after[i] for i in (0, 1)]
    extent = [d[i] * (kernel[i] - 1) + 1 for i in (0, 1)]
    if padded[0] < extent[0] or padded[1] < extent[1]:
        shown = slice(1, 2) if spatial == 1 else slice(0, 2)
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded[shown]))})."
            f" Kernel size: ({' x '.join(map(str, extent[shown]))}). Kernel size can't be "
            "greater than actual input size"
        )
    out = ((padded[0] - extent[0]) // s[0] + 1, (padded[1] - extent[1]) // s[1] + 1)
    return convolution(x, w, b, Geometry(s, before, d, groups, spatial), out)


def _check_tensors(name: str, spatial: int, x: Tensor, w: Tensor, b: Tensor | None) -> None:
    for arg, t in (("input", x), ("weight", w), ("bias", b)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    if len(x._shape) not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, "
            f"but got input of size: {list(x._shape)}"
        )
    if len(w._shape) != spatial + 2:
        raise RuntimeError(
            f"Expected {len(w._shape)}-dimensional input for {len(w._shape)}-dimensional weight "
            f"{list(w._shape)}, but got {len(x._shape)}-dimensional input of size "
            f"{list(x._shape)} instead"
        )
    same_device(name, *(t for t in (x, w, b) if t is not None))
    if x._dtype.name == "bool":
        raise DTypeError(f"\"{name}\" not implemented for 'Bool'")
    if w._dtype is not x._dtype:
        raise DTypeError(
            f"Input type ({_CPP_NAMES[x._dtype.name]}) and weight type "
            f"({_CPP_NAMES[w._dtype.name]}) should be the same"
        )
    if b is not None and b._dtype is not x._dtype:
        raise DTypeError(
            f"Input type ({_CPP_NAMES[x._dtype.name]}) and bias type "
            f"({_CPP_NAMES[b._dtype.name]}) should be the same"
        )


def _pair(name: str, value: Any, what: str, spatial: int) -> Pair:
    """An int or `spatial` ints as an (h, w) pair (h = 1's neutral value for 1-d)."""
    values = [value] * spatial if isinstance(value, int) else list(value)
    if len(values) != spatial or not all(isinstance(v, int) for v in values):
        raise RuntimeError(
            f"expected {what} to be a single integer value or a list of {spatial} values to "
            f"match the convolution dimensions, but got {what}={values}"
        )
    if spatial == 1:
        return (0 if what in ("padding", "output_padding") else 1, values[0])
    return (values[0], values[1])


def _padding(
    name: str, padding: IntArg | str, s: Pair, d: Pair, kernel: Pair, spatial: int
) -> tuple[Pair, Pair]:
    """(top, left) and (bottom, right) padding."""
    if not isinstance(padding, str):
        p = _pair(name, padding, "padding", spatial)
        return p, p
    if padding == "valid":
        return (0, 0), (0, 0)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if s != (1, 1):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    total = [d[i] * (kernel[i] - 1) for i in (0, 1)]
    return (total[0] // 2, total[1] // 2), (total[0] - total[0] // 2, total[1] - total[1] // 2)


def _check_geometry(s: Pair, p: Pair, d: Pair, groups: int) -> None:
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if min(s) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(d) <= 0:
        raise RuntimeError("non-positive dilation is not supported")


def _check_groups(w: Tensor, groups: int) -> None:
    if w._shape[0] == 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
            f"but got weight of size {list(w._shape)} instead"
        )
    if w._shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(w._shape)}] instead"
        )


def _check_bias(b: Tensor | None, channels: int, w: Tensor, transposed: str) -> None:
    if b is not None and b._shape != (channels,):
        raise RuntimeError(
            f"Given {transposed}weight of size {list(w._shape)}, expected bias to be "
            f"1-dimensional with {channels} elements, but got bias of size {list(b._shape)} "
            "instead"
        )
