"""Affine maps: linear and bilinear."""

from __future__ import annotations

from ember import _autocast
from ember._ops import elementwise as ew
from ember._ops import linalg, reduction
from ember._ops import shape as shape_ops
from ember._tensor import Tensor
from ember.autograd._graph import needs_grad, record
from ember.autograd._node import FormulaNode

__all__ = ["bilinear", "linear"]


def _wants(node: FormulaNode, index: int) -> bool:
    """Whether input `index` of the node takes part in the graph (needs a gradient)."""
    return node.next_functions[index][0] is not None


def _linear_backward(node: FormulaNode, grad: Tensor) -> tuple[Tensor | None, ...]:
    # The saved tensors are the inputs themselves (not detached), so with create_graph the
    # gradients are differentiable in them as well.
    input, weight = node.saved
    has_bias = node.ctx
    g = shape_ops.reshape(grad, (-1, grad._shape[-1])) if grad.ndim != 2 else grad
    gx = gw = gb = None
    if _wants(node, 0):
        gx = shape_ops.reshape(linalg.mm(g, weight), input._shape)
    if _wants(node, 1):
        x = input if input.ndim == 2 else shape_ops.reshape(input, (-1, input._shape[-1]))
        gw = linalg.mm(shape_ops.t(g), x)
    if has_bias and _wants(node, 2):
        gb = reduction.sum(g, 0)
    return gx, gw, gb


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, with weight of shape (out_features, in_features)."""
    if _autocast._active and not _autocast.STATE.suspended:
        return _autocast.call("linear", linear, input, weight, bias)
    if input.ndim < 2 or weight.ndim != 2:
        # 1-D input or weight: matmul's vector rules, recorded by its own ops.
        result = linalg.matmul(input, shape_ops.t(weight))
        return result if bias is None else ew.add(result, bias)
    grad = needs_grad(input, weight, bias)
    x = input.detach() if grad else input
    w = weight.detach() if grad else weight
    x2 = x if x.ndim == 2 else shape_ops.reshape(x, (-1, x._shape[-1]))
    out = linalg.mm(x2, shape_ops.t(w))
    if bias is not None:
        ew.add_(out, bias.detach() if grad else bias)
    if x.ndim != 2:
        out = shape_ops.reshape(out, (*x._shape[:-1], out._shape[-1]))
    if not grad:
        return out
    return record(
        "AddmmBackward0",
        _linear_backward,
        (input, weight, bias),
        out,
        save=(input, weight),
        ctx=bias is not None,
    )


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = x1[..., i] * weight[o, i, j] * x2[..., j] + bias[o]."""
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D, got {weight.ndim}-D")
    out_features, in1, in2 = weight._shape
    lead = input1._shape[:-1]
    x1 = shape_ops.reshape(input1, (-1, in1))
    x2 = shape_ops.reshape(input2, (-1, in2))
    # (B, in1) @ (in1, out * in2) -> (B, out, in2), then contracted with x2 over in2.
    w = shape_ops.reshape(shape_ops.permute(weight, (1, 0, 2)), (in1, out_features * in2))
    mixed = shape_ops.reshape(linalg.mm(x1, w), (-1, out_features, in2))
    result = reduction.sum(ew.mul(mixed, shape_ops.unsqueeze(x2, 1)), -1)
    if bias is not None:
        result = ew.add(result, bias)
    return shape_ops.reshape(result, (*lead, out_features))
