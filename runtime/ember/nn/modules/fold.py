"""Fold and Unfold: col2im and im2col as layers."""

from __future__ import annotations

from collections.abc import Sequence

from ember._tensor import Tensor
from ember.nn.functional._fold import fold, unfold
from ember.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]

IntArg = int | Sequence[int]


class Fold(Module):
    """Sums (N, C*kh*kw, L) sliding blocks back into an (N, C, *output_size) image."""

    def __init__(
        self,
        output_size: IntArg,
        kernel_size: IntArg,
        dilation: IntArg = 1,
        padding: IntArg = 0,
        stride: IntArg = 1,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Extracts sliding blocks of (N, C, H, W) input as (N, C*kh*kw, L) columns."""

    def __init__(
        self,
        kernel_size: IntArg,
        dilation: IntArg = 1,
        padding: IntArg = 0,
        stride: IntArg = 1,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
