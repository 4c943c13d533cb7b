"""Pooling layers beyond the 2-d max/avg/adaptive-avg ones: 1-d and 3-d max and average
pooling, adaptive pooling, power-average pooling, unpooling and fractional max pooling,
with PyTorch's constructor arguments, stored attributes and reprs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._tensor import Tensor
from ember.nn.functional import _adaptive_pool as adaptive
from ember.nn.functional import _pool_extra as extra
from ember.nn.functional._pool3d import avg_pool1d, avg_pool3d, max_pool1d, max_pool3d
from ember.nn.modules.module import Module

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d",
]  # fmt: skip

IntArg = int | Sequence[int]


def _ntuple(value: Any, n: int) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, Sequence) else (value,) * n


class _MaxPoolNd(Module):
    def __init__(
        self, kernel_size: IntArg, stride: IntArg | None = None, padding: IntArg = 0,
        dilation: IntArg = 1, return_indices: bool = False, ceil_mode: bool = False,
    ) -> None:  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """Maximum over sliding windows of (N, C, L) input."""

    def forward(self, input: Tensor) -> Any:
        return max_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip


class MaxPool3d(_MaxPoolNd):
    """Maximum over sliding windows of (N, C, D, H, W) input."""

    def forward(self, input: Tensor) -> Any:
        return max_pool3d(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip


class AvgPool1d(Module):
    """Mean over sliding windows of (N, C, L) input."""

    def __init__(
        self, kernel_size: IntArg, stride: IntArg | None = None, padding: IntArg = 0,
        ceil_mode: bool = False, count_include_pad: bool = True,
    ) -> None:  # fmt: skip
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(Module):
    """Mean over sliding windows of (N, C, D, H, W) input."""

    def __init__(
        self, kernel_size: IntArg, stride: IntArg | None = None, padding: IntArg = 0,
        ceil_mode: bool = False, count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool3d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptivePoolNd(Module):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Mean over windows that tile (N, C, L) input into `output_size`."""

    def forward(self, input: Tensor) -> Tensor:
        return adaptive.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    """Mean over windows that tile (N, C, D, H, W) input into `output_size`."""

    def forward(self, input: Tensor) -> Tensor:
        return adaptive.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max over windows that tile (N, C, L) input into `output_size`."""

    def forward(self, input: Tensor) -> Any:
        return adaptive.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max over windows that tile (N, C, H, W) input into `output_size`."""

    def forward(self, input: Tensor) -> Any:
        return adaptive.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max over windows that tile (N, C, D, H, W) input into `output_size`."""

    def forward(self, input: Tensor) -> Any:
        return adaptive.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    def __init__(
        self, norm_type: float, kernel_size: IntArg, stride: IntArg | None = None,
        ceil_mode: bool = False,
    ) -> None:  # fmt: skip
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling of (N, C, L) input: (sum x^p)^(1/p) over each window."""

    def forward(self, input: Tensor) -> Tensor:
        kernel = self.kernel_size if isinstance(self.kernel_size, int) else self.kernel_size[0]
        return extra.lp_pool1d(input, self.norm_type, kernel, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling of (N, C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        return extra.lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling of (N, C, D, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        return extra.lp_pool3d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class _MaxUnpoolNd(Module):
    _spatial = 0

    def __init__(self, kernel_size: IntArg, stride: IntArg | None = None, padding: IntArg = 0):
        super().__init__()
        n = self._spatial
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def forward(
        self, input: Tensor, indices: Tensor, output_size: Sequence[int] | None = None
    ) -> Tensor:
        unpool = (extra.max_unpool1d, extra.max_unpool2d, extra.max_unpool3d)[self._spatial - 1]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: values at their indices, zeros elsewhere."""

    _spatial = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: values at their indices, zeros elsewhere."""

    _spatial = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d: values at their indices, zeros elsewhere."""

    _spatial = 3


class _FractionalMaxPoolNd(Module):
    _spatial = 0
    _random_samples: Tensor | None

    def __init__(
        self, kernel_size: IntArg, output_size: IntArg | None = None,
        output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        n, name = self._spatial, type(self).__name__
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        pool = extra.fractional_max_pool2d if self._spatial == 2 else extra.fractional_max_pool3d
        return pool(
            input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples,
        )  # fmt: skip


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, H, W) input (Graham, 2014)."""

    _spatial = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, T, H, W) input."""

    _spatial = 3
