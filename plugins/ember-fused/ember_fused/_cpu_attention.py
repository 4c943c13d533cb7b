"""A flash-style cpu kernel for Ember's fusable `attention` composite, forward and backward.

Per (batch, head) and query row, the keys stream by in tiles with an online softmax (the
running maximum and sum rescale what came before), so no (L, S) score matrix is ever
built: the forward keeps one tile of scores and each row's log-sum-exp, from which the
backward recomputes the probabilities a block of 16 keys at a time. Keys and values are
transposed once per head so that the score and dot-product loops run along contiguous
keys (vectorised); the C is in `_cpu_attention_c`. Operands are (B, H, rows, width)
views with unit stride along the width and any other strides, read and written in place.
float32 runs in C (OpenMP across heads); other dtypes compute the composite's formulas
in ember ops.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ember
from ember import Tensor
from ember.plugins import ops
from ember_fused._cpu_attention_c import SOURCE

__all__ = ["KERNELS"]

_FUNCTIONS = ("attention_f32", "attention_backward_f32")


@functools.cache
def _library() -> Any:
    import ember_cpu  # the cpu device's compiler; only needed once a cpu kernel runs

    return ember_cpu.load_inline(SOURCE, functions=_FUNCTIONS, name="ember_fused_attention")


def _f32(lse: Tensor, *tensors: Tensor) -> bool:
    """float32 throughout, rows of unit stride (4-d operands), lse contiguous."""
    return (
        lse.dtype == ember.float32
        and lse.is_contiguous()
        and all(t.dtype == ember.float32 and t.stride(-1) == 1 for t in tensors)
    )


def _geometry(lib: Any, q: Tensor, k: Tensor, v: Tensor, *operands: Tensor) -> Any:
    """B, H, L, S, E, Ev, then each operand's (batch, head, row) strides."""
    batch, heads, length, width = q.shape
    strides = [x for t in (q, k, v, *operands) for x in t.stride()[:3]]
    sizes = (batch, heads, length, k.shape[2], width, v.shape[3])
    return lib.ffi.new("int64_t[]", [*sizes, *strides])


def _four_d(*tensors: Tensor) -> list[Tensor]:
    """(B, H, rows, width) views: a 3-d operand (heads, rows, width) is one batch."""
    return [t if t.dim() == 4 else t.unsqueeze(0) for t in tensors]


def _check(status: int, op: str) -> None:
    if status:
        raise MemoryError(f"{op}: out of memory for the per-head scratch buffers")


def _probabilities(q: Tensor, k: Tensor, scale: float, is_causal: bool) -> Tensor:
    scores = (q @ k.transpose(-2, -1)) * scale
    if is_causal:
        rows, columns = scores.shape[-2:]
        allowed = ember.ones(rows, columns, dtype=ember.bool, device=q.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    return scores


def attention(
    out: Tensor, lse: Tensor, q: Tensor, k: Tensor, v: Tensor, scale: float, is_causal: bool
) -> None:
    """The `attention` kernel: out and lse written."""
    if _f32(lse, out, q, k, v):
        out4, q, k, v = _four_d(out, q, k, v)
        lib = _library()
        status = lib.attention_f32(
            lib.ptr(out4), lib.ptr(lse), lib.ptr(q), lib.ptr(k), lib.ptr(v),
            _geometry(lib, q, k, v, out4), scale, int(is_causal),
        )  # fmt: skip
        _check(status, "attention")
        return
    scores = _probabilities(q, k, scale, is_causal)
    row_lse = scores.logsumexp(-1, keepdim=True)
    out.copy_((scores - row_lse).exp() @ v)
    lse.copy_(row_lse.squeeze(-1))


def attention_backward(
    grad_q: Tensor, grad_k: Tensor, grad_v: Tensor, grad_out: Tensor, q: Tensor, k: Tensor,
    v: Tensor, out: Tensor, lse: Tensor, scale: float, is_causal: bool,
) -> None:  # fmt: skip
    """The `attention_backward` kernel: the three gradients overwritten."""
    if _f32(lse, grad_q, grad_k, grad_v, grad_out, q, k, v, out):
        gq, gk, gv, go, q4, k4, v4, o4 = _four_d(grad_q, grad_k, grad_v, grad_out, q, k, v, out)
        lib = _library()
        status = lib.attention_backward_f32(
            lib.ptr(gq), lib.ptr(gk), lib.ptr(gv), lib.ptr(go), lib.ptr(q4), lib.ptr(k4),
            lib.ptr(v4), lib.ptr(o4), lib.ptr(lse), _geometry(lib, q4, k4, v4, o4, go, gq, gk, gv),
            scale, int(is_causal),
        )  # fmt: skip
        _check(status, "attention_backward")
        return
    p = (_probabilities(q, k, scale, is_causal) - lse.unsqueeze(-1)).exp()
    grad_v.copy_(p.transpose(-2, -1) @ grad_out)
    row_dot = (grad_out * out).sum(-1, keepdim=True)
    grad_scores = p * (grad_out @ v.transpose(-2, -1) - row_dot) * scale
    grad_q.copy_(grad_scores @ k)
    grad_k.copy_(grad_scores.transpose(-2, -1) @ q)


#: (op, kernel, priority) for the cpu device
KERNELS: tuple[tuple[str, Callable[..., None], int], ...] = (
    (ops.ATTENTION, attention, 0),
    (ops.ATTENTION_BACKWARD, attention_backward, 0),
)
