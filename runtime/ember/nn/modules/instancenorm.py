"""InstanceNorm1d/2d/3d: per-sample, per-channel normalization with optional affine and
running statistics (PyTorch's defaults: affine=False, track_running_stats=False)."""

from __future__ import annotations

import warnings
from typing import Any

from ember._tensor import Tensor
from ember.nn.functional._normalization_extra import instance_norm
from ember.nn.modules.normalization import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _spatial = 0

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def _check_input_dim(self, input: Tensor) -> None:
        ranks = (self._spatial + 1, self._spatial + 2)
        if input.ndim not in ranks:
            raise ValueError(f"expected {ranks[0]}D or {ranks[1]}D input (got {input.ndim}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps,
        )  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.ndim - (self._spatial + 1)
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        if input.ndim == self._spatial + 1:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) or (C, L) input."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) or (C, H, W) input."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over (N, C, D, H, W) or (C, D, H, W) input."""

    _spatial = 3
