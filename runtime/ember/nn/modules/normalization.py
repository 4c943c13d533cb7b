"""Normalization layers: BatchNorm1d/2d (running statistics), LayerNorm and GroupNorm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import _dtype
from ember._ops import creation
from ember._tensor import Tensor
from ember.autograd._mode import no_grad
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "LayerNorm"]


def _add_affine(module: Module, shape: Any, bias: bool, device: Any, dtype: Any) -> None:
    """Register `weight` (and `bias` unless disabled) of `shape`, or both as None."""
    if shape is None:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)
        return
    module.weight = Parameter(creation.empty(shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(creation.empty(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def _reset_affine(module: Module) -> None:
    """Weight 1 and bias 0, the initialisation of every normalisation layer."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    """Parameters and running-statistics buffers shared by the batch norms."""

    _version = 2
    weight: Parameter | None
    bias: Parameter | None
    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _add_affine(self, num_features if affine else None, bias, device, dtype)
        if track_running_stats:
            self.register_buffer(
                "running_mean", creation.zeros(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "running_var", creation.ones(num_features, device=device, dtype=dtype)
            )
            self.register_buffer(
                "num_batches_tracked", creation.tensor(0, dtype=_dtype.int64, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()  # type: ignore[union-attr]
                self.running_var.fill_(1)  # type: ignore[union-attr]
                self.num_batches_tracked.zero_()  # type: ignore[union-attr]

    def reset_parameters(self) -> None:
        """Reset the running statistics; weight 1 and bias 0."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self, state_dict: dict[str, Any], prefix: str, local_metadata: dict[str, Any],
        strict: bool, missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str],
    ) -> None:  # fmt: skip
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            # Checkpoints from before num_batches_tracked existed (PyTorch's version 1).
            tracked = self.num_batches_tracked
            state_dict[key] = tracked if tracked is not None else creation.tensor(0)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
            error_msgs,
        )  # fmt: skip


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # A cumulative moving average: every batch so far weighs the same.
                factor = 1.0 / float(self.num_batches_tracked.item())
        if self.training:
            use_batch_stats = True
        else:
            use_batch_stats = self.running_mean is None and self.running_var is None
        keep_stats = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep_stats else None,
            self.running_var if keep_stats else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) input."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) input."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) input."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class LayerNorm(Module):
    """Normalization over the trailing `normalized_shape` dims, with elementwise affine."""

    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        shape = self.normalized_shape if elementwise_affine else None
        _add_affine(self, shape, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1 and bias 0."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalization over groups of channels of (N, C, *) input, with per-channel affine."""

    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _add_affine(self, num_channels if affine else None, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1 and bias 0."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )
