"""cross_entropy of (N, C) logits and class indices through a device's fused kernel.

The composite is log_softmax, a gather and, backward, a scatter into zeros plus
log_softmax's derivative: some eight passes over the logits. The fused `cross_entropy`
kernel reads them once forward (each row's log-sum-exp, kept for the backward, and the
loss) and `cross_entropy_backward` once backward (softmax minus the one-hot target, times
each row's incoming gradient). Only the plain case is fused (no class weights, no label
smoothing, every target a valid class); everything else, and any device without the
kernels, runs the composite.
"""

from __future__ import annotations

from typing import Any

from ember import _dtype
from ember._ops import _index_tensors, _known_bounds, conversion, creation, names
from ember._ops import elementwise as ew
from ember._ops import reduction as reduce_ops
from ember._ops import shape as shape_ops
from ember._tensor import Tensor, empty_tensor
from ember.autograd._graph import needs_grad, record
from ember.nn.functional._activation import softmax

__all__ = ["fused_cross_entropy"]


def fused_cross_entropy(
    input: Tensor, target: Tensor, ignore_index: int, how: str
) -> Tensor | None:
    """The loss, or None when the fused kernel does not apply (the caller's composite runs)."""
    kernel = names.CROSS_ENTROPY.kernels.get(input._device.type)
    if (
        kernel is None
        or input.ndim != 2
        or not input._dtype.is_floating_point
        or target._dtype is not _dtype.int64
        or target._shape != input._shape[:1]
        or target._device is not input._device
        or 0 in input._shape
        or not _valid_classes(target, input._shape[1], ignore_index)
    ):
        return None
    rows = input._shape[0]
    x = input.detach().contiguous()
    labels = target.contiguous()
    losses = empty_tensor((rows,), x._dtype, x._device)
    lse = empty_tensor((rows,), x._dtype, x._device)
    kernel(losses, lse, x, labels)
    if how == "none":
        out = losses
    else:
        out = reduce_ops.sum(losses)
        if how == "mean":
            ew.div_(out, float(rows))  # in place: a fresh, untracked result
    if not needs_grad(input):
        return out
    return record(
        "CrossEntropyLossBackward0", _backward, (input, target), out,
        save=(x, labels, lse, input), ctx=how,
    )  # fmt: skip


def _valid_classes(target: Tensor, classes: int, ignore_index: int) -> bool:
    """Every target in [0, classes), none ignored: from known bounds when there are some
    (targets uploaded from the host: no device read), else read once and remembered."""
    known = _known_bounds.known(target)
    low, high = known if known is not None else _index_tensors.bounds(target)
    valid = low >= 0 and high < classes and not low <= ignore_index <= high
    if valid and known is None:
        _known_bounds.remember(target, low, high)
    return valid


def _backward(node: Any, grad: Tensor) -> tuple[Tensor | None, None]:
    x, labels, lse, live = node.saved
    how = node.ctx
    rows = x._shape[0]
    # One gradient per row, or one for every row (a reduced loss) with the mean's scale.
    per_row = grad.contiguous() if how == "none" else shape_ops.reshape(grad, (1,))
    scale = 1.0 / rows if how == "mean" else 1.0
    kernel = names.CROSS_ENTROPY_BACKWARD.kernels.get(x._device.type)
    if kernel is None or needs_grad(grad):
        # The composite; with create_graph, from the live input, so that it records the graph.
        source = live if needs_grad(grad) else x
        return _composite_backward(source, labels, per_row, scale), None
    grad_x = empty_tensor(x._shape, x._dtype, x._device)
    kernel(grad_x, x, labels, lse, per_row, scale)
    return grad_x, None


def _composite_backward(x: Tensor, labels: Tensor, per_row: Tensor, scale: float) -> Tensor:
    """(softmax(x) - one_hot(labels)) * per_row[:, None] * scale."""
    columns = shape_ops.unsqueeze(creation.arange(x._shape[1], device=x._device), 0)
    hits = ew.eq(shape_ops.unsqueeze(labels, 1), columns)
    one_hot = conversion.cast(hits, x._dtype)
    weights = ew.mul(shape_ops.unsqueeze(per_row, 1), scale)
    return ew.mul(ew.sub(softmax(x, 1), one_hot), weights)
