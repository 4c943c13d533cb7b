"""Distances between paired rows: cosine similarity and the p-norm pairwise distance."""

from __future__ import annotations

from ember._autocast import autocast_op
from ember._ops import elementwise as ew
from ember._ops import norms, reduction, unary
from ember._ops._meta import wrap_dim
from ember._ops.arrangement import broadcast_tensors
from ember._tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance"]


def _clamped_min(t: Tensor, low: float) -> Tensor:
    """t with its values raised to at least `low`, and the gradient of t itself.

    PyTorch clamps its norms in place under no_grad, so their derivative ignores the clamp;
    adding the (constant) lift keeps that."""
    lift = ew.sub(unary.clamp(t.detach(), min=low), t.detach())
    return ew.add(t, lift)


@autocast_op("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Sum over `dim` of (x1 / |x1|) (x2 / |x2|), each norm at least eps; broadcasts."""
    a, b = broadcast_tensors(x1, x2)
    d = wrap_dim(dim, a.ndim, "cosine_similarity")
    norm_a = _clamped_min(norms.vector_norm(a, 2, d, keepdim=True), eps)
    norm_b = _clamped_min(norms.vector_norm(b, 2, d, keepdim=True), eps)
    return reduction.sum(ew.mul(ew.div(a, norm_a), ew.div(b, norm_b)), d)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dim (of the broadcast shape)."""
    innermost = max(x1.ndim, x2.ndim) - 1
    if innermost < 0:
        # PyTorch reduces a 0-d difference over no dims: the |x1 - x2 + eps| itself.
        return unary.abs(ew.add(ew.sub(x1, x2), eps))
    return norms.vector_norm(ew.add(ew.sub(x1, x2), eps), p, innermost, keepdim)
