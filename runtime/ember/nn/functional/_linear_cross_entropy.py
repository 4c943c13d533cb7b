"""linear_cross_entropy: cross-entropy of a linear projection's logits (PyTorch 2.13).

Ember computes PyTorch's reference path (linear, then cross_entropy). `options` (a
LinearCrossEntropyOptions) is accepted and validated as PyTorch does, but it selects no
chunked kernel here: a composite keeps each chunk's logits for backward anyway, so
chunking would save no memory.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ember import _dtype
from ember._ops import shape as shape_ops
from ember._tensor import Tensor
from ember.nn.functional._cross_entropy import cross_entropy
from ember.nn.functional._linear import linear

__all__ = ["linear_cross_entropy"]


def _check_shapes(
    input: Tensor, linear_weight: Tensor, linear_bias: Tensor | None
) -> tuple[int, tuple[int, ...]]:
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}"
        )
    in_features = input._shape[-1]
    if in_features != linear_weight._shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight._shape[-1]}, respectively"
        )
    classes = linear_weight._shape[0]
    out_features = tuple(linear_weight._shape[1:-1])
    if linear_bias is not None and tuple(linear_bias._shape) != (classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(classes, *out_features)}, got "
            f"{tuple(linear_bias._shape)}"
        )
    if out_features and input.ndim == 1:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight._shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input._shape)}"
        )
    return classes, out_features


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...); a weight of
    shape (C, d1, ..., dK, in_features) gives the K-dimensional loss."""
    classes, out_features = _check_shapes(input, linear_weight, linear_bias)
    logits_shape = (*input._shape[:-1], classes, *out_features)
    if tuple(target._shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore = ignore_index if ignore_index is not None else -100
    if options is not None and (
        out_features
        or reduction not in {"mean", "sum", "none"}
        or label_smoothing != 0.0
        or target._dtype != _dtype.int64
    ):
        bias_shape = tuple(linear_bias._shape) if linear_bias is not None else None
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
            f"out_features == (). Got reduction={reduction!r}, label_smoothing="
            f"{label_smoothing}, target.dtype={target.dtype}, out_features={out_features}, "
            f"tracing=False, linear_bias.shape={bias_shape}.",
            UserWarning,
            stacklevel=2,
        )
    flat = math.prod(out_features, start=classes)
    if out_features:
        linear_weight = shape_ops.reshape(linear_weight, (flat, input._shape[-1]))
        if linear_bias is not None:
            linear_bias = shape_ops.reshape(linear_bias, (flat,))
    logits = shape_ops.reshape(linear(input, linear_weight, linear_bias), logits_shape)
    return cross_entropy(
        logits, target, weight=weight, reduction=reduction, ignore_index=ignore,
        label_smoothing=label_smoothing,
    )  # fmt: skip
