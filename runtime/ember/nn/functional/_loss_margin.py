"""Margin and embedding losses: margin ranking, hinge and cosine embedding, soft margin,
multi-label (soft) margin, multi-class margin, and the triplet losses.

Each is a composite of elementwise ops, gathers and reductions, written as PyTorch's
kernels define them, so autograd's gradients are theirs too.
"""

from __future__ import annotations

from collections.abc import Callable

from ember import _dtype
from ember._autocast import autocast_op
from ember._ops import creation, scan_composites, unary
from ember._ops import elementwise as ew
from ember._ops import reduction as red
from ember._ops import shape as shape_ops
from ember._ops.indexing import gather, scatter_add
from ember._tensor import Tensor
from ember.nn.functional import _reduction
from ember.nn.functional._activation import logsigmoid
from ember.nn.functional._distance import pairwise_distance

__all__ = [
    "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "soft_margin_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
]  # fmt: skip

_TORCH_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "bool": "Bool"}

# PyTorch's cosine_embedding_loss adds this to both squared magnitudes.
_COSINE_EPSILON = 1e-12


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    how = _reduction.resolve(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    ranked = ew.mul(unary.neg(target), ew.sub(input1, input2))
    return _reduction.reduce(unary.clamp(ew.add(ranked, margin), min=0.0), how)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """x where target is 1, max(0, margin - x) where it is -1 (both terms for other values)."""
    how = _reduction.resolve(size_average, reduce, reduction)
    margin_term = unary.where(ew.ne(target, 1), unary.clamp(ew.sub(margin, input), min=0.0), 0.0)
    self_term = unary.where(ew.ne(target, -1), input, 0.0)
    return _reduction.reduce(ew.add(margin_term, self_term), how)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    how = _reduction.resolve(size_average, reduce, reduction)
    rank = target.ndim
    if rank not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != rank + 1 or input2.ndim != rank + 1:
        raise RuntimeError(
            f"{rank}D target tensor expects {rank + 1}D input tensors, but found inputs with "
            f"sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    products = red.sum(ew.mul(input1, input2), rank)
    square1 = ew.add(red.sum(ew.mul(input1, input1), rank), _COSINE_EPSILON)
    square2 = ew.add(red.sum(ew.mul(input2, input2), rank), _COSINE_EPSILON)
    cosine = ew.div(products, unary.sqrt(ew.mul(square1, square2)))
    positive = unary.where(ew.eq(target, 1), ew.sub(1.0, cosine), 0.0)
    negative = unary.where(ew.eq(target, -1), unary.clamp(ew.sub(cosine, margin), min=0.0), 0.0)
    return _reduction.reduce(ew.add(positive, negative), how)


@autocast_op("soft_margin_loss")
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """log(1 + exp(-target * input))."""
    how = _reduction.resolve(size_average, reduce, reduction)
    losses = unary.log1p(unary.exp(ew.mul(unary.neg(input), target)))
    return _reduction.reduce(losses, how)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Per-class binary logistic loss, averaged over the classes (the last dim)."""
    how = _reduction.resolve(size_average, reduce, reduction)
    positive = ew.mul(target, logsigmoid(input))
    negative = ew.mul(ew.sub(1.0, target), logsigmoid(unary.neg(input)))
    losses = unary.neg(ew.add(positive, negative))
    if weight is not None:
        losses = ew.mul(losses, weight)
    class_dim = input.ndim - 1
    per_sample = ew.div(red.sum(losses, class_dim), input._shape[class_dim])
    return _reduction.reduce(per_sample, how)


def _as_batch(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor, bool]:
    """(N, C) input and (N, ...) target from 0-d, 1-d or 2-d forms; whether it was batched."""
    if input.ndim > 2:
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    batched = input.ndim == 2
    if not batched:
        input = shape_ops.reshape(input, (1, -1 if input.numel() else 0))
        target = shape_ops.reshape(target, (1, -1 if target.numel() else 0))
    return input, target, batched


def _check_class_target(target: Tensor) -> None:
    if target._dtype.is_floating_point or target._dtype == _dtype.bool:
        raise RuntimeError(
            "expected scalar type Long but found "
            f"{_TORCH_NAMES.get(target._dtype.name, target._dtype.name)}"
        )


@autocast_op("multi_margin_loss")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Sum over wrong classes j of w[y] max(0, margin - x[y] + x[j])^p, divided by C."""
    how = _reduction.resolve(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_class_target(target)
    x, y, batched = _as_batch(input, target)
    classes = x._shape[1]
    y = shape_ops.reshape(y, (-1, 1))
    if y._shape[0] != x._shape[0]:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{x._shape[0]}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if y.numel():
        low, high = int(red.amin(y).item()), int(red.amax(y).item())
        if low < 0 or high >= classes:
            raise RuntimeError("target out of range")
    chosen = gather(x, 1, y)
    hinge = unary.clamp(ew.add(ew.sub(x, chosen), margin), min=0.0)
    if p == 2:
        hinge = ew.mul(hinge, hinge)
    if weight is not None:
        hinge = ew.mul(hinge, gather(weight, 0, shape_ops.reshape(y, (-1,))).unsqueeze(1))
    # The true class's own term (margin^p) is not part of the loss.
    own = ew.eq(creation.arange(classes, device=x._device).unsqueeze(0), y)
    hinge = unary.where(own, 0.0, hinge)
    losses = ew.div(red.sum(hinge, 1), classes)
    if not batched:
        losses = shape_ops.reshape(losses, ())
    return _reduction.reduce(losses, how)


@autocast_op("multilabel_margin_loss")
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Sum over target classes j (the indices before the first -1) and non-target classes i
    of max(0, 1 - (x[j] - x[i])), divided by C."""
    how = _reduction.resolve(size_average, reduce, reduction)
    _check_class_target(target)
    x, y, batched = _as_batch(input, target)
    if y._shape != x._shape:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    classes = x._shape[1]
    if y.numel():
        low, high = int(red.amin(y).item()), int(red.amax(y).item())
        if low < -1 or high >= classes:
            raise RuntimeError("argument #2 'target' is out of range")
    # Valid targets are those before the first -1 in each row.
    valid = scan_composites.cumprod(ew.ne(y, -1).to(x._dtype), 1)
    index = unary.where(ew.gt(valid, 0), y, 0)
    is_target = ew.gt(scatter_add(valid.mul(0.0), 1, index, valid), 0)
    target_scores = gather(x, 1, index)  # (N, T)
    # (N, T, C): one hinge per (target j, class i).
    hinge = unary.clamp(ew.add(ew.sub(x.unsqueeze(1), target_scores.unsqueeze(2)), 1.0), min=0.0)
    keep = ew.mul(valid.unsqueeze(2), unary.logical_not(is_target).to(x._dtype).unsqueeze(1))
    losses = ew.div(red.sum(ew.mul(hinge, keep), (1, 2)), classes)
    if not batched:
        losses = shape_ops.reshape(losses, ())
    return _reduction.reduce(losses, how)


def _check_triplet_ranks(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )


def _triplet(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    distance: Callable[[Tensor, Tensor], Tensor],
    margin: float,
    swap: bool,
    how: str,
) -> Tensor:
    to_positive = distance(anchor, positive)
    to_negative = distance(anchor, negative)
    if swap:
        to_negative = ew.minimum(to_negative, distance(positive, negative))
    losses = unary.clamp(ew.sub(ew.add(to_positive, margin), to_negative), min=0.0)
    return _reduction.reduce(losses, how)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with the p-norm pairwise distance."""
    how = _reduction.resolve(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_ranks(anchor, positive, negative)
    if anchor.ndim not in (1, 2):
        raise RuntimeError(
            f"triplet_margin_loss: expected 1D or 2D inputs, got {anchor.ndim}D anchor"
        )

    def distance(a: Tensor, b: Tensor) -> Tensor:
        return pairwise_distance(a, b, p, eps)

    return _triplet(anchor, positive, negative, distance, margin, swap, how)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with any distance (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_ranks(anchor, positive, negative)
    distance = distance_function if distance_function is not None else pairwise_distance
    return _triplet(anchor, positive, negative, distance, margin, swap, reduction)
