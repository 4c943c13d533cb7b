"""layer_norm over the last dim through a device's fused `layer_norm` kernel, when it has one.

The composite in `_normalization.layer_norm` is eight ops forward and about twenty backward;
a fused kernel is one pass forward (keeping each row's mean and rstd) and one backward.
A device or a kernel plugin registers `layer_norm` (and, optionally, `layer_norm_backward`)
under `ember.plugins.ops`; without the backward kernel the gradient is the composite
formula below, in ember ops, from the saved statistics.
"""

from __future__ import annotations

from typing import Any

from ember._ops import elementwise as ew
from ember._ops import names, reduction, statistics, unary
from ember._ops import shape as shape_ops
from ember._tensor import Tensor, empty_tensor
from ember.autograd._graph import needs_grad, record

__all__ = ["fused_layer_norm"]


def fused_layer_norm(
    input: Tensor, weight: Tensor | None, bias: Tensor | None, eps: float
) -> Tensor | None:
    """The normalized input over its last dim, or None when no fused kernel applies."""
    kernel = names.LAYER_NORM.kernels.get(input._device.type)
    if kernel is None or not input._dtype.is_floating_point or input.numel() == 0:
        return None
    for vector in (weight, bias):
        if vector is not None and (
            vector._dtype is not input._dtype or vector._device is not input._device
        ):
            return None
    cols = input._shape[-1]
    rows = input.numel() // cols
    x = shape_ops.reshape(input.detach().contiguous(), (rows, cols))
    detached = [None if v is None else v.detach().contiguous() for v in (weight, bias)]
    out = empty_tensor((rows, cols), x._dtype, x._device)
    mean = empty_tensor((rows,), x._dtype, x._device)
    rstd = empty_tensor((rows,), x._dtype, x._device)
    kernel(out, mean, rstd, x, detached[0], detached[1], eps)
    result = shape_ops.reshape(out, input._shape)
    if not needs_grad(input, weight, bias):
        return result
    inputs = (input, weight, bias)
    save = (x, mean, rstd, detached[0], input, weight)
    return record("NativeLayerNormBackward0", _backward, inputs, result, save=save, ctx=eps)


def _backward(node: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    x, mean, rstd, weight, live_input, live_weight = node.saved
    wanted = [node.needs_input_grad(i) for i in range(3)]
    rows, cols = x._shape
    kernel = names.LAYER_NORM_BACKWARD.kernels.get(x._device.type)
    grad_weight: Tensor | None
    grad_bias: Tensor | None
    if needs_grad(grad) or kernel is None:
        # The composite; with create_graph, from the live inputs, so that it records the graph.
        source = shape_ops.reshape(live_input, (rows, cols)) if needs_grad(grad) else x
        vector = live_weight if needs_grad(grad) else weight
        g = shape_ops.reshape(grad, (rows, cols))
        grad_x, grad_weight, grad_bias = _composite_backward(g, source, vector, node.ctx)
    else:
        g = shape_ops.reshape(grad.contiguous(), (rows, cols))
        grad_x = empty_tensor((rows, cols), x._dtype, x._device)
        grad_weight = empty_tensor((cols,), x._dtype, x._device) if wanted[1] else None
        grad_bias = empty_tensor((cols,), x._dtype, x._device) if wanted[2] else None
        kernel(grad_x, grad_weight, grad_bias, g, x, mean, rstd, weight)
    return (
        shape_ops.reshape(grad_x, grad._shape) if wanted[0] else None,
        grad_weight if wanted[1] else None,
        grad_bias if wanted[2] else None,
    )


def _composite_backward(
    g: Tensor, x: Tensor, weight: Tensor | None, eps: float
) -> tuple[Tensor, Tensor, Tensor]:
    """dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) over each row, gw = g * weight."""
    mean = reduction.mean(x, -1, keepdim=True)
    rstd = unary.rsqrt(ew.add(statistics.var(x, -1, correction=0, keepdim=True), eps))
    xhat = ew.mul(ew.sub(x, mean), rstd)
    gw = g if weight is None else ew.mul(g, weight)
    centred = ew.sub(gw, reduction.mean(gw, -1, keepdim=True))
    projected = ew.mul(xhat, reduction.mean(ew.mul(gw, xhat), -1, keepdim=True))
    grad_x = ew.mul(ew.sub(centred, projected), rstd)
    return grad_x, reduction.sum(ew.mul(g, xhat), 0), reduction.sum(g, 0)
