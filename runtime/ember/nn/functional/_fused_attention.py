"""scaled_dot_product_attention through a device's fused `attention` kernel, when it has one.

The composite materialises the (L, S) scores, a mask, the softmax and their gradients: a
dozen ops each way. A fused kernel (flash-style on the cpu) streams over the keys with an
online softmax and keeps only each query row's log-sum-exp, from which the backward
recomputes the probabilities. Without an `attention_backward` kernel the gradient is the
composite formula below, in ember ops, from the saved inputs and log-sum-exps.
"""

from __future__ import annotations

from typing import Any

from ember._ops import creation, indexing, linalg, names, reduction, statistics, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._tensor import Tensor, empty_tensor
from ember.autograd._graph import needs_grad, record

__all__ = ["fused_attention"]


def fused_attention(
    query: Tensor, key: Tensor, value: Tensor, is_causal: bool, scale: float
) -> Tensor | None:
    """softmax(q kᵀ · scale [causal]) v, or None when no fused kernel applies."""
    kernel = names.ATTENTION.kernels.get(query._device.type)
    if kernel is None or query.ndim < 2 or not query._dtype.is_floating_point:
        return None
    lead = query._shape[:-2]
    length, width = query._shape[-2:]
    source = key._shape[-2] if key.ndim >= 2 else 0
    if (
        key._shape != (*lead, source, width)
        or value.ndim != query.ndim
        or value._shape[:-1] != (*lead, source)
        or any(t._dtype is not query._dtype or t._device is not query._device for t in (key, value))
        or 0 in (length, source, width, value._shape[-1])
    ):
        return None
    heads = query.numel() // (length * width)
    q, k, v = (
        shape_ops.reshape(t.detach().contiguous(), (heads, *t._shape[-2:]))
        for t in (query, key, value)
    )
    out = empty_tensor((heads, length, v._shape[-1]), q._dtype, q._device)
    lse = empty_tensor((heads, length), q._dtype, q._device)
    kernel(out, lse, q, k, v, scale, is_causal)
    result = shape_ops.reshape(out, (*lead, length, v._shape[-1]))
    if not needs_grad(query, key, value):
        return result
    save = (q, k, v, out, lse, query, key, value)
    return record(
        "ScaledDotProductFlashAttentionBackward0", _backward, (query, key, value), result,
        save=save, ctx=(scale, is_causal),
    )  # fmt: skip


def _backward(node: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
    q, k, v, out, lse, *live = node.saved
    scale, is_causal = node.ctx
    g = shape_ops.reshape(grad, out._shape)
    kernel = names.ATTENTION_BACKWARD.kernels.get(q._device.type)
    if needs_grad(grad) or kernel is None:
        # The composite; with create_graph, from the live inputs, so that it records the graph.
        if needs_grad(grad):
            q, k, v = (
                shape_ops.reshape(t, like._shape) for t, like in zip(live, (q, k, v), strict=True)
            )
        grads: tuple[Tensor, ...] = _composite_backward(g, q, k, v, scale, is_causal)
    else:
        grads = tuple(empty_tensor(t._shape, t._dtype, t._device) for t in (q, k, v))
        kernel(*grads, g.contiguous(), q, k, v, out, lse, scale, is_causal)
    return tuple(
        shape_ops.reshape(gradient, original._shape) if node.needs_input_grad(i) else None
        for i, (gradient, original) in enumerate(zip(grads, live, strict=True))
    )


def _composite_backward(
    g: Tensor, q: Tensor, k: Tensor, v: Tensor, scale: float, is_causal: bool
) -> tuple[Tensor, Tensor, Tensor]:
    """The softmax-attention gradients with the (L, S) probabilities materialised."""
    scores = ew.mul(linalg.matmul(q, shape_ops.transpose(k, -2, -1)), scale)
    if is_causal:
        rows, columns = scores._shape[-2:]
        row = shape_ops.unsqueeze(creation.arange(rows, device=q._device), 1)
        column = shape_ops.unsqueeze(creation.arange(columns, device=q._device), 0)
        scores = indexing.masked_fill(scores, ew.lt(row, column), float("-inf"))
    p = unary.exp(ew.sub(scores, statistics.logsumexp(scores, -1, keepdim=True)))
    grad_v = linalg.matmul(shape_ops.transpose(p, -2, -1), g)
    grad_p = linalg.matmul(g, shape_ops.transpose(v, -2, -1))
    row_dot = reduction.sum(ew.mul(grad_p, p), -1, keepdim=True)
    grad_scores = ew.mul(ew.mul(p, ew.sub(grad_p, row_dot)), scale)
    grad_q = linalg.matmul(grad_scores, k)
    grad_k = linalg.matmul(shape_ops.transpose(grad_scores, -2, -1), q)
    return grad_q, grad_k, grad_v
