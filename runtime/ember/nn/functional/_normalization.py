"""Normalization: batch_norm, layer_norm, group_norm and normalize.

Statistics use the biased variance, as PyTorch's do; batch_norm's running variance is
updated with the unbiased one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ember._autocast import autocast_op
from ember._ops import elementwise as ew
from ember._ops import reduction, statistics, unary
from ember._ops import shape as shape_ops
from ember._tensor import Tensor
from ember.autograd._mode import no_grad
from ember.nn.functional._fused_layer_norm import fused_layer_norm

__all__ = ["batch_norm", "group_norm", "layer_norm", "normalize"]


def _channel_shape(input: Tensor) -> tuple[int, ...]:
    """(1, C, 1, ...): per-channel parameters broadcast against (N, C, *) input."""
    return (1, input._shape[1], *([1] * (input.ndim - 2)))


def _affine(
    x: Tensor, weight: Tensor | None, bias: Tensor | None, shape: tuple[int, ...] | None
) -> Tensor:
    if weight is not None:
        x = ew.mul(x, weight if shape is None else shape_ops.reshape(weight, shape))
    if bias is not None:
        x = ew.add(x, bias if shape is None else shape_ops.reshape(bias, shape))
    return x


def _standardize(x: Tensor, mean: Tensor, var: Tensor, eps: float) -> Tensor:
    return ew.mul(ew.sub(x, mean), unary.rsqrt(ew.add(var, eps)))


def _update_running(
    running: Tensor | None, batch_value: Tensor, momentum: float, correction: float
) -> None:
    if running is None:
        return
    with no_grad():
        value = shape_ops.reshape(batch_value.detach(), running._shape)
        if correction != 1.0:
            value = ew.mul(value, correction)
        ew.mul_(running, 1.0 - momentum)
        ew.add_(running, ew.mul(value, momentum))


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel of (N, C, *) input by batch statistics (training) or running ones."""
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected at least 2D input (got {input.ndim}D input)")
    channels = input._shape[1]
    shape = _channel_shape(input)
    dims = (0, *range(2, input.ndim))
    count = input.numel() // channels if channels else 0
    if training and count == 1:
        raise ValueError(
            "Expected more than 1 value per channel when training, got input size "
            f"{list(input._shape)}"
        )
    if not training and running_mean is not None and running_var is not None:
        mean = shape_ops.reshape(running_mean, shape)
        var = shape_ops.reshape(running_var, shape)
    else:
        if running_mean is None and running_var is None and not training:
            raise RuntimeError("batch_norm: running_mean and running_var must be defined in eval")
        mean = reduction.mean(input, dims, keepdim=True)
        var = statistics.var(input, dims, correction=0, keepdim=True)
        if training:
            _update_running(running_mean, mean, momentum, 1.0)
            _update_running(running_var, var, momentum, count / max(count - 1, 1))
    return _affine(_standardize(input, mean, var, eps), weight, bias, shape)


@autocast_op("layer_norm")
def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the trailing `normalized_shape` dims, then scale and shift."""
    normalized = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
    normalized = tuple(normalized)
    k = len(normalized)
    if k == 0 or input._shape[input.ndim - k :] != normalized or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized)}], but got input of size"
            f"{list(input._shape)}"
        )
    if k == 1:  # a device's fused kernel, when it has one
        fused = fused_layer_norm(input, weight, bias, eps)
        if fused is not None:
            return fused
    dims = tuple(range(input.ndim - k, input.ndim))
    mean = reduction.mean(input, dims, keepdim=True)
    var = statistics.var(input, dims, correction=0, keepdim=True)
    return _affine(_standardize(input, mean, var, eps), weight, bias, None)


@autocast_op("group_norm")
def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize (N, C, *) input over groups of C / num_groups channels."""
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    n, channels = input._shape[:2]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input._shape)} and num_groups={num_groups}"
        )
    grouped = shape_ops.reshape(input, (n, num_groups, -1))
    mean = reduction.mean(grouped, 2, keepdim=True)
    var = statistics.var(grouped, 2, correction=0, keepdim=True)
    result = shape_ops.reshape(_standardize(grouped, mean, var, eps), input._shape)
    return _affine(result, weight, bias, _channel_shape(input))


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """input / max(||input||_p along dim, eps)."""
    if p == math.inf:
        norm = reduction.amax(unary.abs(input), dim, keepdim=True)
    elif p == 2.0:
        norm = unary.sqrt(reduction.sum(ew.mul(input, input), dim, keepdim=True))
    elif p == 1.0:
        norm = reduction.sum(unary.abs(input), dim, keepdim=True)
    else:
        norm = ew.pow(reduction.sum(ew.pow(unary.abs(input), p), dim, keepdim=True), 1.0 / p)
    result = ew.div(input, unary.clamp(norm, min=eps))
    return result if out is None else out.copy_(result)
