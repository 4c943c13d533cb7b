"""ConvTranspose1d: PyTorch's parameters, init and output_size rule, on conv_transpose1d."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ember._tensor import Tensor
from ember.nn.functional._conv_transpose import conv_transpose1d
from ember.nn.modules.conv import ConvTranspose2d, IntArg, _ConvNd, _ntuple

__all__ = ["ConvTranspose1d"]


class ConvTranspose1d(ConvTranspose2d):
    """1-d transposed convolution (the adjoint of Conv1d in its input); weight is
    (C_in, C_out/groups, k)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: IntArg, stride: IntArg = 1,
        padding: IntArg = 0, output_padding: IntArg = 0, groups: int = 1, bias: bool = True,
        dilation: IntArg = 1, padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        _ConvNd.__init__(
            self, in_channels, out_channels, _ntuple(kernel_size, 1), _ntuple(stride, 1),
            _ntuple(padding, 1), _ntuple(dilation, 1), True, _ntuple(output_padding, 1), groups,
            bias, padding_mode, device, dtype,
        )  # fmt: skip

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return conv_transpose1d(
            input, self.weight, self.bias, self.stride, cast(tuple[int, ...], self.padding),
            output_padding, self.groups, self.dilation,
        )  # fmt: skip
