"""Distances and norm limits: cdist, pdist and renorm, composites over the elementwise ops,
the reductions and matmul.

A p-norm of a difference is differentiable everywhere PyTorch's is: at a zero distance the
gradient is 0, not the NaN that the root's derivative at 0 would give. cdist with p=2 on
more than 25 rows a side uses |x|² + |y|² - 2 x·y through matmul (O(P R) memory, where the
differences would need O(P R M)), as PyTorch's default compute_mode does.
"""

from __future__ import annotations

import math

from ember._ops import conversion, indexing, linalg, reduction, triangle, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._ops._meta import wrap_dim
from ember._tensor import Tensor

__all__ = ["cdist", "pdist", "renorm"]

_MM_ROWS = 25  # PyTorch's threshold for the matmul form of euclidean distances


def cdist(
    x1: Tensor,
    x2: Tensor,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> Tensor:
    """The p-norm distance between each row of `x1` (..., P, M) and each of `x2` (..., R, M):
    (..., P, R)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(
            f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D"
            if x1.ndim < 2
            else f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D"
        )
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1._shape[-1]} X2: "
            f"{x2._shape[-1]}"
        )
    if not x1._dtype.is_floating_point or not x2._dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1._dtype.name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = (
        "use_mm_for_euclid_dist_if_necessary",
        "use_mm_for_euclid_dist",
        "donot_use_mm_for_euclid_dist",
    )
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    rows1, rows2 = x1._shape[-2], x2._shape[-2]
    use_mm = p == 2 and (
        compute_mode == "use_mm_for_euclid_dist"
        or (compute_mode == modes[0] and (rows1 > _MM_ROWS or rows2 > _MM_ROWS))
    )
    if use_mm:
        return _euclidean_by_matmul(x1, x2)
    difference = ew.sub(shape_ops.unsqueeze(x1, -2), shape_ops.unsqueeze(x2, -3))
    return _norm_last(difference, p)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of the 2-d `input`, for each pair i < j in
    row-major order: N (N - 1) / 2 of them."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input._dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input._shape[0]
    pairs = triangle.triu_indices(n, n, 1, device=input._device)
    first = indexing.index_select(input, 0, pairs[0])
    second = indexing.index_select(input, 0, pairs[1])
    return _norm_last(ew.sub(first, second), p)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """`input` with each slice along `dim` whose p-norm exceeds `maxnorm` scaled down to it."""
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if not input._dtype.is_floating_point:
        raise RuntimeError(f"renorm: expected a floating point tensor, got {input._dtype.name}")
    d = wrap_dim(dim, input.ndim, "renorm")
    others = tuple(j for j in range(input.ndim) if j != d)
    magnitude = unary.abs(input)
    if p == math.inf:
        norms = reduction.amax(magnitude, others, keepdim=True)
    else:
        norms = ew.pow(reduction.sum(ew.pow(magnitude, p), others, keepdim=True), 1.0 / p)
    # PyTorch's factor, its 1e-7 included; the gradient flows through the norm too, as there.
    factor = unary.where(ew.gt(norms, maxnorm), ew.div(maxnorm, ew.add(norms, 1e-7)), 1.0)
    return ew.mul(input, factor)


def renorm_(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """In-place renorm."""
    conversion.copy_(input, renorm(input, p, dim, maxnorm))
    return input


def _norm_last(difference: Tensor, p: float) -> Tensor:
    """The p-norm over the last dim, with a 0 gradient at a zero vector."""
    magnitude = unary.abs(difference)
    if difference._shape[-1] == 0:
        return reduction.sum(magnitude, -1)
    if p == 0:
        return reduction.sum(ew.ne(magnitude, 0).to(difference._dtype), -1)
    if p == math.inf:
        return reduction.amax(magnitude, -1)
    if p == 1:
        return reduction.sum(magnitude, -1)
    powered = ew.mul(difference, difference) if p == 2 else ew.pow(magnitude, p)
    return _safe_root(reduction.sum(powered, -1), p)


def _safe_root(total: Tensor, p: float) -> Tensor:
    """total ** (1/p), its gradient 0 where total is 0 (instead of inf times 0)."""
    positive = ew.gt(total, 0)
    safe = unary.where(positive, total, 1.0)
    root = unary.sqrt(safe) if p == 2 else ew.pow(safe, 1.0 / p)
    return unary.where(positive, root, 0.0)


def _euclidean_by_matmul(x1: Tensor, x2: Tensor) -> Tensor:
    squares1 = reduction.sum(ew.mul(x1, x1), -1, keepdim=True)  # (..., P, 1)
    squares2 = reduction.sum(ew.mul(x2, x2), -1, keepdim=True)  # (..., R, 1)
    products = linalg.matmul(x1, x2.transpose(-1, -2))  # (..., P, R)
    total = ew.add(ew.sub(squares1, ew.mul(products, 2.0)), squares2.transpose(-1, -2))
    return _safe_root(unary.clamp(total, 0.0), 2)
