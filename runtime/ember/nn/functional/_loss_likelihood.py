"""Likelihood losses: Kullback-Leibler divergence, Poisson and Gaussian negative
log-likelihood (composites of elementwise ops and reductions)."""

from __future__ import annotations

import math
import warnings

from ember._autocast import autocast_op
from ember._ops import elementwise as ew
from ember._ops import reduction as red
from ember._ops import shape as shape_ops
from ember._ops import unary
from ember._tensor import Tensor
from ember.nn.functional import _reduction

__all__ = ["gaussian_nll_loss", "kl_div", "poisson_nll_loss"]


def _xlogy(x: Tensor) -> Tensor:
    """x log x, 0 where x is 0 (the log of 1 stands in there, keeping the gradient finite)."""
    zero = ew.eq(x, 0)
    return unary.where(zero, 0.0, ew.mul(x, unary.log(unary.where(zero, 1.0, x))))


@autocast_op("kl_div")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """target (log target - input) with input log-probabilities; 'batchmean' divides the sum
    by the batch size (the KL divergence proper), 'mean' by the element count."""
    if size_average is not None or reduce is not None:
        how = _reduction.resolve(size_average, reduce, "mean")
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div "
                "math definition.'mean' will be changed to behave the same as 'batchmean' in the "
                "next major release.",
                UserWarning,
                stacklevel=2,
            )
        how = "sum" if reduction == "batchmean" else _reduction.resolve(None, None, reduction)
    if log_target:
        losses = ew.mul(unary.exp(target), ew.sub(target, input))
    else:
        losses = ew.sub(_xlogy(target), ew.mul(target, input))
    reduced = _reduction.reduce(losses, how)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = ew.div(reduced, input._shape[0])
    return reduced


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """exp(input) - target input (log_input) or input - target log(input + eps); `full` adds
    Stirling's approximation of log(target!) where target > 1."""
    how = _reduction.resolve(size_average, reduce, reduction)
    if log_input:
        losses = ew.sub(unary.exp(input), ew.mul(target, input))
    else:
        losses = ew.sub(input, ew.mul(target, unary.log(ew.add(input, eps))))
    if full:
        big = ew.gt(target, 1)
        safe = unary.where(big, target, 1.0)
        stirling = ew.add(
            ew.sub(ew.mul(safe, unary.log(safe)), safe),
            ew.mul(unary.log(ew.mul(safe, 2 * math.pi)), 0.5),
        )
        losses = ew.add(losses, unary.where(big, stirling, 0.0))
    return _reduction.reduce(losses, how)


def _var_for(input: Tensor, var: Tensor) -> Tensor:
    """var shaped to broadcast against input, as PyTorch accepts it (or ValueError)."""
    if var._shape == input._shape:
        return var
    if input._shape[:-1] == var._shape:
        return shape_ops.unsqueeze(var, -1)
    mismatched = [v for i, v in zip(input._shape, var._shape, strict=False) if i != v]
    if input.ndim == var.ndim and sum(mismatched) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """0.5 (log var + (input - target)² / var) (+ 0.5 log 2π when full), var at least eps."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ew.add(input.detach().mul(0.0), float(var))
    else:
        var = _var_for(input, var)
        if var.numel() and bool(red.any(ew.lt(var.detach(), 0)).item()):
            raise ValueError("var has negative entry/entries")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # PyTorch clamps a clone in place under no_grad: the value is raised, the gradient is var's.
    lift = ew.sub(unary.clamp(var.detach(), min=eps), var.detach())
    var = ew.add(var, lift)
    difference = ew.sub(input, target)
    losses = ew.mul(ew.add(unary.log(var), ew.div(ew.mul(difference, difference), var)), 0.5)
    if full:
        losses = ew.add(losses, 0.5 * math.log(2 * math.pi))
    return _reduction.reduce(losses, reduction)
