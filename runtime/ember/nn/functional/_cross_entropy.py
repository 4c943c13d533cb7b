"""nll_loss and cross_entropy (class indices or probabilities, weights, ignore_index,
label smoothing).

nll_loss records one node with its own derivative formula (a scatter of the picked
weights), so that cross_entropy costs two nodes: log_softmax and nll_loss.
"""

from __future__ import annotations

from ember import _dtype
from ember._autocast import autocast_op
from ember._errors import DTypeError
from ember._ops import _known_bounds, conversion, creation, indexing, unary
from ember._ops import elementwise as ew
from ember._ops import reduction as reduce_ops
from ember._ops import shape as shape_ops
from ember._ops._index_tensors import bounds
from ember._tensor import Tensor
from ember.autograd._graph import needs_grad, record
from ember.autograd._node import FormulaNode
from ember.nn.functional import _reduction
from ember.nn.functional._activation import log_softmax
from ember.nn.functional._fused_cross_entropy import fused_cross_entropy

__all__ = ["cross_entropy", "nll_loss"]


def _check_target_shape(input: Tensor, target: Tensor) -> None:
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(
                f"0D or 1D target tensor expected, multi-target not supported (got target of "
                f"shape {list(target._shape)} for input of shape {list(input._shape)})"
            )
        return
    if target.ndim == 0 or target._shape[0] != input._shape[0]:
        batch = target._shape[0] if target.ndim else 1
        raise ValueError(
            f"Expected input batch_size ({input._shape[0]}) to match target batch_size ({batch})."
        )
    expected = (input._shape[0], *input._shape[2:])
    if target._shape != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target._shape)}")


def _class_positions(
    input: Tensor, target: Tensor, ignore_index: int
) -> tuple[Tensor, Tensor | None]:
    """(positions, ignored): target with a class dim added and ignored entries set to 0;
    `ignored` is None when no entry is ignored (the common case, which then costs no mask)."""
    if target._dtype.is_floating_point or target._dtype is _dtype.bool:
        raise DTypeError(
            f"nll_loss(): expected target of an integer dtype (class indices), got "
            f"{target._dtype.name}"
        )
    class_dim = 0 if input.ndim == 1 else 1
    classes = input._shape[class_dim]
    index = shape_ops.unsqueeze(conversion.cast(target, _dtype.int64), class_dim)
    if not index.numel():
        return index, None

    # Bounds known without a device read (targets uploaded from the host) may do;
    # otherwise the exact ones are read.
    def all_valid(low: int, high: int) -> bool:
        return low >= 0 and high < classes and not low <= ignore_index <= high

    known = _known_bounds.known(index)
    if (known is not None and all_valid(*known)) or all_valid(*bounds(index)):
        _known_bounds.remember(index, 0, classes - 1)  # gather and scatter won't read it
        return index, None
    ignored = ew.eq(index, ignore_index)
    positions = unary.where(ignored, 0, index)
    low, high = bounds(positions)
    if low < 0 or high >= classes:
        raise IndexError(f"Target {low if low < 0 else high} is out of bounds.")
    _known_bounds.remember(positions, low, high)
    return positions, ignored


def _nll_backward(node: FormulaNode, grad: Tensor) -> tuple[Tensor | None, None, None]:
    saved = node.saved
    positions = saved[0]
    how, class_dim, input_shape, count = node.ctx
    if len(saved) == 1:
        # Every entry counts with weight 1: the gradient is -grad (/ count) at the targets.
        if how == "none":
            values = unary.neg(shape_ops.unsqueeze(grad, class_dim))
        else:
            scale = ew.div(grad, -count) if how == "mean" else unary.neg(grad)
            values = shape_ops.expand(scale, positions._shape)
    else:
        picked_weights, total = saved[1:]
        if how == "mean":
            grad = ew.div(grad, total)
        elif how == "none":
            grad = shape_ops.unsqueeze(grad, class_dim)
        values = ew.mul(unary.neg(picked_weights), grad)
    zeros = creation.zeros(input_shape, dtype=values._dtype, device=values._device)
    return indexing.scatter(zeros, class_dim, positions, values), None, None


def _picked_weights(
    positions: Tensor, ignored: Tensor | None, weight: Tensor | None, dtype: _dtype.dtype
) -> Tensor | None:
    """Each entry's weight (weight[target], 0 where ignored), or None when all are 1."""
    kept = None if ignored is None else conversion.cast(unary.logical_not(ignored), dtype)
    if weight is None:
        return kept
    flat = shape_ops.reshape(positions, (-1,))
    chosen = shape_ops.reshape(indexing.index_select(weight.detach(), 0, flat), positions._shape)
    return chosen if kept is None else ew.mul(chosen, kept)


@autocast_op("nll_loss")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices given log-probabilities (N, C, *)."""
    how = _reduction.resolve(size_average, reduce, reduction)
    if input.ndim < 1:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    _check_target_shape(input, target)
    class_dim = 0 if input.ndim == 1 else 1
    if weight is not None and weight._shape != (input._shape[class_dim],):
        raise RuntimeError(
            f"weight tensor should be defined either for all {input._shape[class_dim]} classes "
            f"or no classes but got weight tensor of shape: {list(weight._shape)}"
        )
    positions, ignored = _class_positions(input, target, ignore_index)
    grad = needs_grad(input)
    x = input.detach() if grad else input
    picked = indexing.gather(x, class_dim, positions)
    weights = _picked_weights(positions, ignored, weight, x._dtype)
    count = float(positions.numel())
    saved: tuple[Tensor, ...] = (positions,)
    if weights is None:
        if how == "none":
            out = shape_ops.squeeze(unary.neg(picked), class_dim)
        elif how == "sum":
            out = unary.neg(reduce_ops.sum(picked))
        else:
            out = ew.div(reduce_ops.sum(picked), -count)
    else:
        losses = unary.neg(ew.mul(picked, weights))
        total = reduce_ops.sum(weights)
        saved = (positions, weights, total)
        if how == "none":
            out = shape_ops.squeeze(losses, class_dim)
        elif how == "sum":
            out = reduce_ops.sum(losses)
        else:
            out = ew.div(reduce_ops.sum(losses), total)
    if not grad:
        return out
    return record(
        "NllLossBackward0",
        _nll_backward,
        (input, target, weight),
        out,
        save=saved,
        ctx=(how, class_dim, input._shape, count),
    )


def _smoothing_term(
    logp: Tensor,
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    how: str,
    class_dim: int,
) -> Tensor:
    """PyTorch's label-smoothing term: the (weighted) sum of -log p over all classes."""
    classes = logp._shape[class_dim]
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = classes
        logp = ew.mul(logp, shape_ops.reshape(weight, tuple(shape)))
    ignored = ew.eq(target, ignore_index)
    smooth = indexing.masked_fill(unary.neg(reduce_ops.sum(logp, class_dim)), ignored, 0.0)
    if how == "none":
        return smooth
    total = reduce_ops.sum(smooth)
    if how == "sum":
        return total
    if weight is None:
        return ew.div(total, reduce_ops.sum(unary.logical_not(ignored)))
    safe = unary.where(ignored, 0, conversion.cast(target, _dtype.int64))
    picked = indexing.index_select(weight, 0, shape_ops.reshape(safe, (-1,)))
    kept = conversion.cast(unary.logical_not(shape_ops.reshape(ignored, (-1,))), weight._dtype)
    return ew.div(total, reduce_ops.sum(ew.mul(picked, kept)))


def _cross_entropy_probabilities(
    logp: Tensor, target: Tensor, weight: Tensor | None, how: str, smoothing: float
) -> Tensor:
    class_dim = 0 if logp.ndim == 1 else 1
    classes = logp._shape[class_dim]
    if smoothing > 0.0:
        target = ew.add(ew.mul(target, 1.0 - smoothing), smoothing / classes)
    products = ew.mul(logp, target)
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = classes
        products = ew.mul(products, shape_ops.reshape(weight, tuple(shape)))
    if how == "none":
        return unary.neg(reduce_ops.sum(products, class_dim))
    total = unary.neg(reduce_ops.sum(products))
    if how == "sum":
        return total
    # The mean is over samples (and spatial positions), not over classes.
    return ew.div(total, float(logp.numel() // classes) if logp.numel() else float("nan"))


@autocast_op("cross_entropy")
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy between logits (N, C, *) and class indices or class probabilities."""
    how = _reduction.resolve(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim < 1:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    class_dim = 0 if input.ndim == 1 else 1
    if weight is None and label_smoothing == 0.0 and target._shape != input._shape:
        fused = fused_cross_entropy(
            input, target, ignore_index, how
        )  # a device's kernel, when it has one
        if fused is not None:
            return fused
    logp = log_softmax(input, class_dim)
    if target._shape == input._shape:
        # Same shape as the input: class probabilities (PyTorch decides by shape too).
        if not target._dtype.is_floating_point:
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{target._dtype.name}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probabilities(logp, target, weight, how, label_smoothing)
    loss = nll_loss(logp, target, weight, None, ignore_index, None, how)
    if label_smoothing == 0.0:
        return loss
    smooth = _smoothing_term(logp, target, weight, ignore_index, how, class_dim)
    classes = input._shape[class_dim]
    return ew.add(ew.mul(loss, 1.0 - label_smoothing), ew.mul(smooth, label_smoothing / classes))
