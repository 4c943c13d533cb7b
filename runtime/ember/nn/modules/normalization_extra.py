"""RMSNorm, LocalResponseNorm, CrossMapLRN2d and SyncBatchNorm (which, on one process,
normalizes as BatchNorm does: Ember has no process groups to synchronise over)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._ops import creation
from ember._tensor import Tensor
from ember.autograd._mode import no_grad
from ember.nn import init
from ember.nn.functional._normalization_extra import (
    cross_map_lrn2d,
    local_response_norm,
    rms_norm,
)
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import _BatchNorm
from ember.nn.parameter import Parameter

__all__ = ["CrossMapLRN2d", "LocalResponseNorm", "RMSNorm", "SyncBatchNorm"]


class RMSNorm(Module):
    """x / rms(x) over the trailing `normalized_shape` dims, times an elementwise weight."""

    weight: Parameter | None

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            weight = creation.empty(self.normalized_shape, device=device, dtype=dtype)
            self.weight = Parameter(weight)
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """Normalization of each channel by the mean square of its `size` neighbours."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """The legacy cross-channel LRN over (N, C, H, W) input."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over (N, C, *) input; statistics are this process's batch's."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """`module` with every BatchNorm*D layer replaced by a SyncBatchNorm sharing its
        parameters and buffers (recursively)."""
        result = module
        if isinstance(module, _BatchNorm):
            result = cls(
                module.num_features, module.eps, module.momentum, module.affine,
                module.track_running_stats, process_group, bias=module.bias is not None,
            )  # fmt: skip
            if module.affine:
                with no_grad():
                    result.weight = module.weight
                    result.bias = module.bias
            result.running_mean = module.running_mean
            result.running_var = module.running_var
            result.num_batches_tracked = module.num_batches_tracked
            result.training = module.training
            if hasattr(module, "qconfig"):
                result.qconfig = module.qconfig
        for name, child in module.named_children():
            result.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return result
