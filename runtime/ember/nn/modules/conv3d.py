"""Conv3d and ConvTranspose3d: PyTorch's parameters, init and output_size rule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ember._tensor import Tensor
from ember.nn.functional._conv3d import conv3d, conv_transpose3d
from ember.nn.modules.conv import ConvTranspose2d, IntArg, _ConvNd, _ntuple

__all__ = ["Conv3d", "ConvTranspose3d"]


class Conv3d(_ConvNd):
    """3-d convolution over (N, C_in, D, H, W) input."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: IntArg, stride: IntArg = 1,
        padding: str | IntArg = 0, dilation: IntArg = 1, groups: int = 1, bias: bool = True,
        padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        pad = padding if isinstance(padding, str) else _ntuple(padding, 3)
        super().__init__(
            in_channels, out_channels, _ntuple(kernel_size, 3), _ntuple(stride, 3), pad,
            _ntuple(dilation, 3), False, (0, 0, 0), groups, bias, padding_mode, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            return conv3d(
                self._padded(input), self.weight, self.bias, self.stride, 0, self.dilation,
                self.groups,
            )  # fmt: skip
        return conv3d(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class ConvTranspose3d(ConvTranspose2d):
    """3-d transposed convolution (the adjoint of Conv3d in its input); weight is
    (C_in, C_out/groups, kd, kh, kw)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: IntArg, stride: IntArg = 1,
        padding: IntArg = 0, output_padding: IntArg = 0, groups: int = 1, bias: bool = True,
        dilation: IntArg = 1, padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        _ConvNd.__init__(
            self, in_channels, out_channels, _ntuple(kernel_size, 3), _ntuple(stride, 3),
            _ntuple(padding, 3), _ntuple(dilation, 3), True, _ntuple(output_padding, 3), groups,
            bias, padding_mode, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return conv_transpose3d(
            input, self.weight, self.bias, self.stride, cast(tuple[int, ...], self.padding),
            output_padding, self.groups, self.dilation,
        )  # fmt: skip
