"""scaled_dot_product_attention through a device's fused `attention` kernel, when it has one.

The composite materialises the (L, S) scores, a mask, the softmax and their gradients: a
dozen ops each way. A fused kernel (flash-style on the cpu) streams over the keys with an
online softmax and keeps only each query row's log-sum-exp, from which the backward
recomputes the probabilities. Without an `attention_backward` kernel the gradient is the
composite formula below, in ember ops, from the saved inputs and log-sum-exps.

Layouts: the kernels take (B, H, L, E) views with any strides but a unit one along E, so
q, k and v split from one (B, L, 3·H·E) projection are read where they are, the output is
written heads-interleaved ((B, L, H, Ev) in memory, PyTorch's flash layout: the usual
`transpose(1, 2).contiguous()` after it copies nothing), and q, k and v's gradients land
in one buffer laid out as their common source, which split's backward then takes whole
instead of concatenating.
"""

from __future__ import annotations

from typing import Any

from ember._ops import creation, indexing, linalg, names, reduction, statistics, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._tensor import Tensor, empty_tensor, make_view
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
    q, k, v = (_four_d(t.detach()) for t in (query, key, value))
    batch, heads = q._shape[:2]
    value_width = v._shape[-1]
    if query.ndim == 4:  # heads interleaved, as PyTorch's flash kernel writes them
        dense = empty_tensor((batch, length, heads, value_width), q._dtype, q._device)
        out = shape_ops.transpose(dense, 1, 2)
    else:
        out = empty_tensor((batch, heads, length, value_width), q._dtype, q._device)
    lse = empty_tensor((batch, heads, length), q._dtype, q._device)
    kernel(out, lse, q, k, v, scale, is_causal)
    result = out if query.ndim == 4 else shape_ops.reshape(out, (*lead, length, value_width))
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
    g = _unit_rows(shape_ops.reshape(grad, out._shape))
    kernel = names.ATTENTION_BACKWARD.kernels.get(q._device.type)
    if needs_grad(grad) or kernel is None:
        # The composite; with create_graph, from the live inputs, so that it records the graph.
        if needs_grad(grad):
            q, k, v = (
                shape_ops.reshape(t, like._shape) for t, like in zip(live, (q, k, v), strict=True)
            )
        grads: tuple[Tensor, ...] = _composite_backward(g, q, k, v, scale, is_causal)
    else:
        grads = _gradient_buffers(q, k, v)
        kernel(*grads, g, q, k, v, out, lse, scale, is_causal)
    return tuple(
        shape_ops.reshape(gradient, original._shape) if node.needs_input_grad(i) else None
        for i, (gradient, original) in enumerate(zip(grads, live, strict=True))
    )


def _unit_rows(t: Tensor) -> Tensor:
    """t itself when its last dim has unit stride (or size 1), else a contiguous copy."""
    return t if t._strides[-1] == 1 or t._shape[-1] == 1 else t.contiguous()


def _four_d(t: Tensor) -> Tensor:
    """(B, H, rows, width) with unit-stride rows: a view where the layout allows."""
    if t.ndim != 4:
        rows, width = t._shape[-2:]
        lead = t._shape[:-2]
        heads = lead[-1] if lead else 1
        t = shape_ops.reshape(t, (-1, heads, rows, width))
    return _unit_rows(t)


def _gradient_buffers(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Outputs for q, k and v's gradients. When the three are same-shaped views of one
    storage (split from one projection), one buffer spanning them, each gradient at its
    input's place: split's backward then finds its pieces adjacent and takes them whole.
    Otherwise each contiguous."""
    if (
        q._storage is k._storage is v._storage
        and q._shape == k._shape == v._shape
        and q._strides == k._strides == v._strides
        and all(stride >= 0 for stride in q._strides)
    ):
        start = min(q._offset, k._offset, v._offset)
        extent = 1 + sum(
            (size - 1) * stride for size, stride in zip(q._shape, q._strides, strict=True)
        )
        span = max(q._offset, k._offset, v._offset) - start + extent
        buffer = empty_tensor((span,), q._dtype, q._device)
        return (
            make_view(buffer, q._offset - start, q._shape, q._strides),
            make_view(buffer, k._offset - start, k._shape, k._strides),
            make_view(buffer, v._offset - start, v._shape, v._strides),
        )
    return (
        empty_tensor(q._shape, q._dtype, q._device),
        empty_tensor(k._shape, k._dtype, k._device),
        empty_tensor(v._shape, v._dtype, v._device),
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
