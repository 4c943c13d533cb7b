"""Regression and binary-classification losses: mse, l1, huber, smooth_l1, binary
cross-entropy (on probabilities and on logits)."""

from __future__ import annotations

import warnings

from ember._autocast import autocast_op
from ember._ops import elementwise as ew
from ember._ops import reduction as reduce_ops
from ember._ops import unary
from ember._tensor import Tensor
from ember.nn.functional import _reduction
from ember.nn.functional._activation import logsigmoid

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "huber_loss",
    "l1_loss",
    "mse_loss",
    "smooth_l1_loss",
]


def _warn_if_broadcast(input: Tensor, target: Tensor) -> None:
    if target._shape != input._shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


@autocast_op("mse_loss")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """(input - target)² reduced."""
    how = _reduction.resolve(size_average, reduce, reduction)
    _warn_if_broadcast(input, target)
    difference = ew.sub(input, target)
    losses = ew.mul(difference, difference)
    if weight is not None:
        losses = ew.mul(losses, weight)
    return _reduction.reduce(losses, how)


@autocast_op("l1_loss")
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """|input - target| reduced."""
    how = _reduction.resolve(size_average, reduce, reduction)
    _warn_if_broadcast(input, target)
    losses = unary.abs(ew.sub(input, target))
    if weight is not None:
        losses = ew.mul(losses, weight)
    return _reduction.reduce(losses, how)


@autocast_op("huber_loss")
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 d² where |d| < delta, delta * (|d| - 0.5 delta) elsewhere (d = input - target)."""
    how = _reduction.resolve(None, None, reduction)
    if delta <= 0:
        raise RuntimeError(
            f"huber_loss does not support non-positive values for delta, got {delta}"
        )
    _warn_if_broadcast(input, target)
    difference = ew.sub(input, target)
    size = unary.abs(difference)
    quadratic = ew.mul(ew.mul(difference, difference), 0.5)
    linear = ew.mul(ew.sub(size, 0.5 * delta), delta)
    losses = unary.where(ew.lt(size, delta), quadratic, linear)
    if weight is not None:
        losses = ew.mul(losses, weight)
    return _reduction.reduce(losses, how)


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d² / beta where |d| < beta, |d| - 0.5 beta elsewhere (l1 when beta is 0)."""
    how = _reduction.resolve(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=how)
    _warn_if_broadcast(input, target)
    difference = ew.sub(input, target)
    size = unary.abs(difference)
    quadratic = ew.mul(ew.mul(difference, difference), 0.5 / beta)
    losses = unary.where(ew.lt(size, beta), quadratic, ew.sub(size, 0.5 * beta))
    return _reduction.reduce(losses, how)


def _check_same_size(input: Tensor, target: Tensor) -> None:
    if target._shape != input._shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """-(t log p + (1 - t) log(1 - p)), each log clamped at -100 as in PyTorch."""
    how = _reduction.resolve(size_average, reduce, reduction)
    _check_same_size(input, target)
    for what, t in (("input", input), ("target", target)):
        if t.numel():
            low, high = _value_range(t)
            if low < 0.0 or high > 1.0:
                raise RuntimeError(f"all elements of {what} should be between 0 and 1")
    log_p = unary.clamp(unary.log(input), min=-100.0)
    log_not_p = unary.clamp(unary.log1p(unary.neg(input)), min=-100.0)
    # -(t * log p + (1 - t) * log(1 - p)) = -(log(1 - p) + t * (log p - log(1 - p)))
    losses = unary.neg(ew.add(log_not_p, ew.mul(target, ew.sub(log_p, log_not_p))))
    if weight is not None:
        losses = ew.mul(losses, weight)
    return _reduction.reduce(losses, how)


def _value_range(t: Tensor) -> tuple[float, float]:
    low = reduce_ops.amin(t.detach()).item()
    high = reduce_ops.amax(t.detach()).item()
    return float(low), float(high)


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross-entropy of sigmoid(input), computed from logits without overflow."""
    how = _reduction.resolve(size_average, reduce, reduction)
    if target._shape != input._shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    # -log sigmoid(x) = softplus(-x) and -log(1 - sigmoid(x)) = x + softplus(-x).
    negative_log_sigmoid = unary.neg(logsigmoid(input))
    if pos_weight is None:
        positive = negative_log_sigmoid
    else:
        # (pos_weight - 1) * t + 1 weighs the positive term pos_weight * t * softplus(-x).
        log_weight = ew.add(ew.mul(ew.sub(pos_weight, 1.0), target), 1.0)
        positive = ew.mul(log_weight, negative_log_sigmoid)
    losses = ew.add(ew.mul(ew.sub(1.0, target), input), positive)
    if weight is not None:
        losses = ew.mul(losses, weight)
    return _reduction.reduce(losses, how)
