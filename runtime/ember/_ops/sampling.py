"""Sampling from tensors of probabilities: `multinomial` and `bernoulli`, composites over
the uniform generator (so every device samples, with the same stream for the same seed).

multinomial with replacement inverts the unnormalised CDF: u ~ U[0, total) picks the
first category whose cumulative weight exceeds u, so a zero-weight category is never
drawn. Without replacement it is the exponential race (Efraimidis and Spirakis): category i
gets key -log(u_i) / w_i and the `num_samples` smallest keys win, which draws without
replacement with probabilities proportional to the weights, as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any

from ember import _dtype
from ember._ops import conversion as conv
from ember._ops import elementwise as ew
from ember._ops import random as rnd
from ember._ops import reduction as red
from ember._ops import shape as shape_ops
from ember._ops import sorting, unary
from ember._tensor import Tensor

__all__ = ["bernoulli", "multinomial"]


def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: rnd.Generator | None = None,
) -> Tensor:
    """`num_samples` category indices per row of `input` (1-d or 2-d non-negative weights,
    not necessarily summing to one); int64."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"multinomial(): argument 'input' must be Tensor, not {type(input).__name__}"
        )
    if len(input._shape) not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input._dtype.is_floating_point:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {_name(input)}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input._shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    rows = input.detach() if len(input._shape) == 2 else shape_ops.unsqueeze(input.detach(), 0)
    weights = conv.to(rows, _dtype.float64)
    _check_weights(weights)
    if replacement:
        cdf = red.cumsum(weights, -1)
        total = shape_ops.narrow(cdf, 1, categories - 1, 1)
        u = ew.mul(_uniform(rows._shape[0], num_samples, rows, generator), total)
        below = ew.le(shape_ops.unsqueeze(cdf, 1), shape_ops.unsqueeze(u, 2))
        picked = red.sum(below, -1)
    else:
        u = _uniform(rows._shape[0], categories, rows, generator)
        # A zero weight gets key +inf: drawn only after every positive one, as in PyTorch.
        keys = ew.div(unary.neg(unary.log(u)), weights)
        picked = sorting.topk(keys, num_samples, -1, largest=False).indices
    picked = conv.to(picked, _dtype.int64)
    return picked if len(input._shape) == 2 else shape_ops.squeeze(picked, 0)


def _uniform(rows: int, count: int, like: Tensor, generator: rnd.Generator | None) -> Tensor:
    # U(0, 1]: 1 - U[0, 1), so that log(u) is finite in the exponential race.
    u = rnd.rand(rows, count, generator=generator, dtype=_dtype.float64, device=like._device)
    return ew.sub(1.0, u)


def _check_weights(weights: Tensor) -> None:
    bad = ew.logical_or(ew.lt(weights, 0), ew.ne(weights, weights))
    bad = ew.logical_or(bad, ew.eq(unary.abs(weights), math.inf))
    if bool(red.any(bad).item()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if bool(red.any(ew.le(red.sum(weights, -1), 0)).item()):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def bernoulli(
    input: Tensor, p: float | None = None, *, generator: rnd.Generator | None = None
) -> Tensor:
    """1 with probability `input` (or `p`), else 0, in `input`'s dtype and shape."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be Tensor, not {type(input).__name__}")
    probability: Any = input.detach() if p is None else p
    if p is not None and not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    if p is None and not input._dtype.is_floating_point:
        raise RuntimeError(
            f"bernoulli: expected a floating-point probability tensor, got {_name(input)}"
        )
    u = rnd.rand(*input._shape, generator=generator, dtype=_dtype.float64, device=input._device)
    if isinstance(probability, Tensor):
        probability = conv.to(probability, _dtype.float64)
    return conv.to(ew.lt(u, probability), input._dtype)


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
               "int32": "Int", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "bfloat16": "BFloat16"}  # fmt: skip


def _name(t: Tensor) -> str:
    """PyTorch's scalar-type name in its messages (Float, Long, ...)."""
    return _TYPE_NAMES.get(t._dtype.name, t._dtype.name)
