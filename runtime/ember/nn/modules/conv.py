"""Convolution layers: Conv1d, Conv2d and ConvTranspose2d (PyTorch's parameters and init)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

from ember._ops import creation
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "ConvTranspose2d"]

IntArg = int | Sequence[int]
_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value: IntArg, n: int) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, Sequence) else (value,) * n


class _ConvNd(Module):
    weight: Parameter
    bias: Parameter | None

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: tuple[int, ...],
        stride: tuple[int, ...], padding: str | tuple[int, ...], dilation: tuple[int, ...],
        transposed: bool, output_padding: tuple[int, ...], groups: int, bias: bool,
        padding_mode: str, device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(padding, dilation, kernel_size)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(creation.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) weight and uniform(±1/sqrt(fan_in)) bias, as PyTorch."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _padded(self, input: Tensor) -> Tensor:
        """The input padded by padding_mode (for modes other than "zeros")."""
        return F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)


def _reversed_padding(
    padding: str | tuple[int, ...], dilation: tuple[int, ...], kernel_size: tuple[int, ...]
) -> list[int]:
    """F.pad's (last dim first) amounts for the padding, including "same"'s uneven split."""
    amounts = [0, 0] * len(kernel_size)
    if isinstance(padding, str):
        if padding == "same":
            n = len(kernel_size)
            for j, (d, k) in enumerate(zip(dilation, kernel_size, strict=True)):
                # Dim j is the (n - 1 - j)-th pair of F.pad's amounts; odd totals pad right.
                total = d * (k - 1)
                amounts[2 * (n - 1 - j)] = total // 2
                amounts[2 * (n - 1 - j) + 1] = total - total // 2
    else:
        for i, p in enumerate(reversed(padding)):
            amounts[2 * i] = amounts[2 * i + 1] = p
    return amounts


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L) input."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: IntArg, stride: IntArg = 1,
        padding: str | IntArg = 0, dilation: IntArg = 1, groups: int = 1, bias: bool = True,
        padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        pad = padding if isinstance(padding, str) else _ntuple(padding, 1)
        super().__init__(
            in_channels, out_channels, _ntuple(kernel_size, 1), _ntuple(stride, 1), pad,
            _ntuple(dilation, 1), False, (0,), groups, bias, padding_mode, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv1d(
                self._padded(input), self.weight, self.bias, self.stride, 0, self.dilation,
                self.groups,
            )  # fmt: skip
        return F.conv1d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W) input."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: IntArg, stride: IntArg = 1,
        padding: str | IntArg = 0, dilation: IntArg = 1, groups: int = 1, bias: bool = True,
        padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        pad = padding if isinstance(padding, str) else _ntuple(padding, 2)
        super().__init__(
            in_channels, out_channels, _ntuple(kernel_size, 2), _ntuple(stride, 2), pad,
            _ntuple(dilation, 2), False, (0, 0), groups, bias, padding_mode, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv2d(
                self._padded(input), self.weight, self.bias, self.stride, 0, self.dilation,
                self.groups,
            )  # fmt: skip
        return F.conv2d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class ConvTranspose2d(_ConvNd):
    """2-d transposed convolution (the adjoint of Conv2d in its input)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: IntArg, stride: IntArg = 1,
        padding: IntArg = 0, output_padding: IntArg = 0, groups: int = 1, bias: bool = True,
        dilation: IntArg = 1, padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(
            in_channels, out_channels, _ntuple(kernel_size, 2), _ntuple(stride, 2),
            _ntuple(padding, 2), _ntuple(dilation, 2), True, _ntuple(output_padding, 2), groups,
            bias, padding_mode, device, dtype,
        )  # fmt: skip

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple[int, ...]:
        """The output_padding that yields `output_size` (PyTorch's rule), or the configured one."""
        if output_size is None:
            return self.output_padding
        spatial = len(self.kernel_size)
        size = list(output_size)[-spatial:]
        if len(size) != spatial:
            raise ValueError(
                f"ConvTranspose{spatial}D: for {input.ndim}D input, output_size must have "
                f"{spatial} or {spatial + 2} elements (got {len(list(output_size))})"
            )
        padding = cast(tuple[int, ...], self.padding)  # transposed layers take no padding strings
        result = []
        for d in range(spatial):
            dim_size = input.shape[input.ndim - spatial + d]
            smallest = (
                (dim_size - 1) * self.stride[d] - 2 * padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1) + 1
            )  # fmt: skip
            largest = smallest + self.stride[d] - 1
            if not smallest <= size[d] <= largest:
                raise ValueError(
                    f"requested an output size of {size}, but valid sizes range from "
                    f"{smallest} to {largest} (for an input of {list(input.shape)[2:]})"
                )
            result.append(size[d] - smallest)
        return tuple(result)

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(
            input, self.weight, self.bias, self.stride, cast(tuple[int, ...], self.padding),
            output_padding, self.groups, self.dilation,
        )  # fmt: skip
