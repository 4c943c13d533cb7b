"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d: F.interpolate as layers."""

from __future__ import annotations

from collections.abc import Sequence

from ember._tensor import Tensor
from ember.nn.functional._interpolate import interpolate
from ember.nn.modules.module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]

SizeArg = int | Sequence[int] | None
ScaleArg = float | Sequence[float] | None


class Upsample(Module):
    """Resample (N, C, *spatial) input to `size` or by `scale_factor` with `mode`."""

    def __init__(
        self,
        size: SizeArg = None,
        scale_factor: ScaleArg = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor: ScaleArg
        if isinstance(scale_factor, Sequence):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(
            input, self.size, self.scale_factor, self.mode, self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )  # fmt: skip

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """2-d nearest-neighbour upsampling."""

    def __init__(self, size: SizeArg = None, scale_factor: ScaleArg = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-d bilinear upsampling with align_corners=True."""

    def __init__(self, size: SizeArg = None, scale_factor: ScaleArg = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
