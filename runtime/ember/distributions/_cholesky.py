"""A batched Cholesky factorisation and triangular solves as composites of ember ops, for
MultivariateNormal and the positive-definite constraint.

Placeholder until ember.linalg has LAPACK-backed cholesky / solve_triangular (the `linalg`
family): these loop over the n columns (rows) in Python, each step a batched matrix-vector
product, so they suit the small event sizes of distributions and differentiate through
their parts.
"""

from __future__ import annotations

from ember import _ops as ops
from ember._tensor import Tensor

__all__ = ["cholesky", "cholesky_ok", "solve_lower", "solve_upper"]


def _pivots(a: Tensor) -> tuple[Tensor, list[Tensor]]:
    """The lower factor's columns and the pivots (before the square root) of `a`."""
    n = a.shape[-1]
    rows = ops.arange(n, device=a.device)
    columns: list[Tensor] = []
    pivots: list[Tensor] = []
    for j in range(n):
        v = a[..., :, j]
        if columns:
            done = ops.stack(columns, -1)  # (..., n, j)
            v = v - ops.matmul(done, done[..., j, :].unsqueeze(-1)).squeeze(-1)
        pivot = v[..., j]
        pivots.append(pivot)
        column = v / pivot.clamp(min=0.0).sqrt().unsqueeze(-1)
        columns.append(ops.where(rows >= j, column, ops.zeros_like(column)))
    return ops.stack(columns, -1), pivots


def cholesky(a: Tensor) -> Tensor:
    """The lower-triangular L with L @ L.mT == a, for symmetric positive-definite `a`."""
    factor, _ = _pivots(a)
    return factor


def cholesky_ok(a: Tensor) -> Tensor:
    """Per matrix of the batch, whether the factorisation succeeds (every pivot > 0)."""
    _, pivots = _pivots(a.detach())
    return (ops.stack(pivots, -1) > 0).all(-1)


def solve_lower(lower: Tensor, b: Tensor) -> Tensor:
    """X with lower @ X == b (lower triangular, b of shape (..., n, k)); forward substitution."""
    n = lower.shape[-1]
    solved: list[Tensor] = []
    for i in range(n):
        row = b[..., i, :]
        if solved:
            known = ops.stack(solved, -2)  # (..., i, k)
            row = row - ops.matmul(lower[..., i, :i].unsqueeze(-2), known).squeeze(-2)
        solved.append(row / lower[..., i, i].unsqueeze(-1))
    return ops.stack(solved, -2)


def solve_upper(upper: Tensor, b: Tensor) -> Tensor:
    """X with upper @ X == b (upper triangular); back substitution."""
    flipped = upper.flip(-1).flip(-2)
    return solve_lower(flipped, b.flip(-2)).flip(-2)
