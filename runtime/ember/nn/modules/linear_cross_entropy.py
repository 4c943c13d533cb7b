"""LinearCrossEntropyLoss and LinearCrossEntropyOptions (PyTorch 2.13): a classifier head
fused with its cross-entropy loss, and the (here advisory) chunking options."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ember import _dtype
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.linear import Linear
from ember.nn.modules.loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]

_ACC_POLICIES = frozenset({"auto", "accurate", "balanced", "compact"})


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's chunking options for linear_cross_entropy, validated as there.

    Ember computes the reference path whatever they say (see F.linear_cross_entropy)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, separator, factor = self.chunking_method.partition(":")
            if not separator:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        supported = (_dtype.float16, _dtype.float32, _dtype.float64)
        if self.acc_dtype is not None and self.acc_dtype not in supported:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                "pick automatically."
            )


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of the logits of a held Linear layer (`self.linear`, whose weight is
    stored flat as (C * prod(out_features), in_features))."""

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device: Any = None,
        dtype: Any = None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(
            in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
            dtype=dtype,
        )  # fmt: skip
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        linear_weight = self.linear.weight.reshape((*shape, self.linear.in_features))
        bias = self.linear.bias.reshape(shape) if self.linear.bias is not None else None
        return F.linear_cross_entropy(
            input, linear_weight, target, linear_bias=bias, weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
