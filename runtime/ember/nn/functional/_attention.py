"""scaled_dot_product_attention and multi_head_attention_forward (PyTorch's math paths)."""

from __future__ import annotations

import math

from ember import _dtype
from ember._autocast import autocast_op
from ember._ops import creation, indexing, linalg, reduction, unary
from ember._ops import elementwise as ew
from ember._ops import shape as shape_ops
from ember._tensor import Tensor
from ember.nn.functional._activation import softmax
from ember.nn.functional._dropout import dropout
from ember.nn.functional._fused_attention import fused_attention
from ember.nn.functional._linear import linear

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")


def _causal_mask(rows: int, columns: int, like: Tensor) -> Tensor:
    """Bool (rows, columns), true on and below the diagonal: who may attend to whom."""
    row = creation.arange(rows, device=like._device)
    column = creation.arange(columns, device=like._device)
    return ew.ge(shape_ops.unsqueeze(row, 1), shape_ops.unsqueeze(column, 0))


def _repeat_heads(t: Tensor, repeats: int) -> Tensor:
    """(..., H, S, E) -> (..., H * repeats, S, E), each head repeated in place."""
    lead, (heads, length, width) = t._shape[:-3], t._shape[-3:]
    expanded = shape_ops.expand(shape_ops.unsqueeze(t, -3), (*lead, heads, repeats, length, width))
    return shape_ops.reshape(expanded, (*lead, heads * repeats, length, width))


@autocast_op("scaled_dot_product_attention")
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(q kᵀ · scale + mask) v; a bool mask is true where attention is allowed."""
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    length, source = query._shape[-2], key._shape[-2]
    factor = 1.0 / math.sqrt(query._shape[-1]) if scale is None else scale
    if enable_gqa and query.ndim >= 3 and key._shape[-3] != query._shape[-3]:
        key = _repeat_heads(key, query._shape[-3] // key._shape[-3])
        value = _repeat_heads(value, query._shape[-3] // value._shape[-3])
    if attn_mask is None and dropout_p == 0.0:  # a device's fused kernel, when it has one
        fused = fused_attention(query, key, value, is_causal, factor)
        if fused is not None:
            return fused
    scores = ew.mul(linalg.matmul(query, shape_ops.transpose(key, -2, -1)), factor)
    if is_causal:
        allowed = _causal_mask(length, source, query)
        scores = indexing.masked_fill(scores, unary.logical_not(allowed), _NEG_INF)
    elif attn_mask is not None:
        if attn_mask._dtype is _dtype.bool:
            scores = indexing.masked_fill(scores, unary.logical_not(attn_mask), _NEG_INF)
        else:
            scores = ew.add(scores, attn_mask)
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return linalg.matmul(weights, value)


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim, with 0 (not nan) in rows where everything is masked."""
    weights = softmax(scores, -1)
    masked_rows = reduction.all(ew.eq(scores.detach(), _NEG_INF), -1, keepdim=True)
    if not reduction.any(masked_rows).item():
        return weights
    return indexing.masked_fill(weights, masked_rows, 0.0)


def _canonical_mask(mask: Tensor | None, name: str, dtype: _dtype.dtype) -> Tensor | None:
    """A float additive mask: bool masks become -inf where true (positions to ignore)."""
    if mask is None:
        return None
    if mask._dtype is _dtype.bool:
        zeros = creation.zeros(mask._shape, dtype=dtype, device=mask._device)
        return indexing.masked_fill(zeros, mask, _NEG_INF)
    if not mask._dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_column(t: Tensor) -> Tensor:
    """Append one zero column along the last dim."""
    zeros = creation.zeros((*t._shape[:-1], 1), dtype=t._dtype, device=t._device)
    return shape_ops.cat([t, zeros], -1)


def _check_shapes(query: Tensor, key: Tensor, value: Tensor, padding: Tensor | None) -> bool:
    """Whether the input is batched (3-D); PyTorch's assertions otherwise."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.ndim}-D and {value.ndim}-D tensors respectively"
            )
        if padding is not None and padding.ndim != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                f"but found {padding.ndim}-D tensor instead"
            )
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.ndim}-D and {value.ndim}-D tensors respectively"
            )
        return False
    raise AssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
        "tensor"
    )


def _project(
    query: Tensor, key: Tensor, value: Tensor, weights: tuple[Tensor, Tensor, Tensor],
    biases: tuple[Tensor | None, Tensor | None, Tensor | None],
) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
    q = linear(query, weights[0], biases[0])
    k = linear(key, weights[1], biases[1])
    v = linear(value, weights[2], biases[2])
    return q, k, v


def _merge_masks(
    attn_mask: Tensor | None,
    padding: Tensor | None,
    batch: int,
    heads: int,
    lengths: tuple[int, int],
) -> Tensor | None:
    """One additive mask of shape (1 or batch*heads, L, S) from the attention and padding masks."""
    target, source = lengths
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if attn_mask._shape != (target, source):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(target, source)}."
                )
            attn_mask = shape_ops.unsqueeze(attn_mask, 0)
        elif attn_mask.ndim == 3:
            if attn_mask._shape != (batch * heads, target, source):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(batch * heads, target, source)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if padding is None:
        return attn_mask
    expanded = shape_ops.expand(shape_ops.reshape(padding, (batch, 1, 1, -1)), (-1, heads, 1, -1))
    padding = shape_ops.reshape(expanded, (batch * heads, 1, -1))
    return padding if attn_mask is None else ew.add(attn_mask, padding)


def _heads_first(t: Tensor, batch: int, heads: int) -> Tensor:
    """(S, N, E) -> (N * heads, S, E / heads)."""
    return shape_ops.transpose(shape_ops.reshape(t, (t._shape[0], batch * heads, -1)), 0, 1)


def _extra_key_slots(
    k: Tensor, v: Tensor, bias_k: Tensor | None, bias_v: Tensor | None, batch: int
) -> tuple[Tensor, Tensor, bool]:
    """Append the learned bias_k / bias_v key slot (sequence-first layout)."""
    if bias_k is None or bias_v is None:
        return k, v, False
    k = shape_ops.cat([k, shape_ops.expand(bias_k, (1, batch, -1))], 0)
    v = shape_ops.cat([v, shape_ops.expand(bias_v, (1, batch, -1))], 0)
    return k, v, True


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first (L, N, E) or unbatched (L, E) input."""
    batched = _check_shapes(query, key, value, key_padding_mask)
    if not batched:
        query, key, value = (shape_ops.unsqueeze(x, 1) for x in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = shape_ops.unsqueeze(key_padding_mask, 0)
    target_length, batch, embed_dim = query._shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    if embed_dim % num_heads:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    head_dim = embed_dim // num_heads
    padding = _canonical_mask(key_padding_mask, "key_padding_mask", query._dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    causal_shortcut = is_causal and padding is None and not need_weights
    mask = None if causal_shortcut else _canonical_mask(attn_mask, "attn_mask", query._dtype)
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but a projection weight is None")
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        weights = shape_ops.chunk(in_proj_weight, 3)  # type: ignore[assignment]
    biases = (None, None, None) if in_proj_bias is None else shape_ops.chunk(in_proj_bias, 3)
    q, k, v = _project(query, key, value, weights, biases)  # type: ignore[arg-type]
    k, v, extended = _extra_key_slots(k, v, bias_k, bias_v, batch)
    if extended:
        mask = None if mask is None else _pad_column(mask)
        padding = None if padding is None else _pad_column(padding)
    q = _heads_first(q, batch, num_heads)
    k = _heads_first(k, batch, num_heads) if static_k is None else static_k
    v = _heads_first(v, batch, num_heads) if static_v is None else static_v
    if add_zero_attn:
        zeros = creation.zeros((batch * num_heads, 1, head_dim), dtype=k._dtype, device=k._device)
        k, v = shape_ops.cat([k, zeros], 1), shape_ops.cat([v, zeros], 1)
        mask = None if mask is None else _pad_column(mask)
        padding = None if padding is None else _pad_column(padding)
    source_length = k._shape[1]
    if padding is not None and padding._shape != (batch, source_length):
        raise AssertionError(
            f"expecting key_padding_mask shape of {(batch, source_length)}, but got {padding.shape}"
        )
    lengths = (target_length, source_length)
    mask = _merge_masks(mask, padding, batch, num_heads, lengths)
    p = dropout_p if training else 0.0
    if need_weights:
        scores = linalg.bmm(ew.mul(q, math.sqrt(1.0 / head_dim)), shape_ops.transpose(k, 1, 2))
        if mask is not None:
            scores = ew.add(scores, mask)
        attention = softmax(scores, -1)
        if p > 0.0:
            attention = dropout(attention, p)
        output = linalg.bmm(attention, v)
    else:
        output = scaled_dot_product_attention(q, k, v, mask, p, causal_shortcut)
        attention = None
    output = shape_ops.reshape(shape_ops.transpose(output, 0, 1), (-1, embed_dim))
    output = linear(output, out_proj_weight, out_proj_bias)
    output = shape_ops.reshape(output, (target_length, batch, -1))
    if attention is not None:
        attention = shape_ops.reshape(attention, (batch, num_heads, target_length, source_length))
        if average_attn_weights:
            attention = reduction.mean(attention, 1)
    if not batched:
        output = shape_ops.squeeze(output, 1)
        attention = None if attention is None else shape_ops.squeeze(attention, 0)
    return output, attention
