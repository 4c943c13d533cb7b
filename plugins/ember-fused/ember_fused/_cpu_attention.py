"""A flash-style cpu kernel for Ember's fusable `attention` composite, forward and backward.

Per (batch·head) and query row, the keys stream by in tiles with an online softmax (the
running maximum and sum rescale what came before), so no (L, S) score matrix is ever
built: the forward keeps one tile of scores and each row's log-sum-exp, from which the
backward recomputes the probabilities row by row. Keys and values are transposed once
per head so that the score and dot-product loops run along contiguous keys (vectorised).
float32 runs in C (OpenMP across heads); other dtypes compute the composite's formulas
in ember ops.
"""

from __future__ import annotations

import functools
from typing import Any

import ember
from ember import Tensor
from ember.plugins import ops

__all__ = ["KERNELS"]

SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "elementwise_math.h"

#define TILE 64

static void transpose(float *dst, const float *src, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * cols + c];
}

/* s[j] = scale * q . kt[:, j0 + j] for j < n: kt is (E, S). */
static void scores(float *s, const float *q, const float *kt, int64_t e, int64_t src,
                   int64_t j0, int64_t n, float scale) {
    for (int64_t j = 0; j < n; j++) s[j] = 0.0f;
    for (int64_t d = 0; d < e; d++) {
        const float qd = q[d] * scale;
        const float *row = kt + d * src + j0;
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) s[j] += qd * row[j];
    }
}

/* Returns 0, or -1 when scratch memory could not be had. */
int attention_f32(float *out, float *lse, const float *q, const float *k, const float *v,
                  int64_t heads, int64_t len, int64_t src, int64_t e, int64_t ev, float scale,
                  int causal) {
    int failed = 0;
    #pragma omp parallel for schedule(static) reduction(| : failed)
    for (int64_t h = 0; h < heads; h++) {
        float *kt = malloc(sizeof(float) * (size_t)(e * src + ev + TILE));
        if (!kt) { failed = 1; continue; }
        float *acc = kt + e * src, *s = acc + ev;
        const float *qh = q + h * len * e, *vh = v + h * src * ev;
        transpose(kt, k + h * src * e, src, e);
        for (int64_t i = 0; i < len; i++) {
            const int64_t keys = causal ? (i + 1 < src ? i + 1 : src) : src;
            float peak = -INFINITY, total = 0.0f;
            for (int64_t d = 0; d < ev; d++) acc[d] = 0.0f;
            for (int64_t j0 = 0; j0 < keys; j0 += TILE) {
                const int64_t n = keys - j0 < TILE ? keys - j0 : TILE;
                scores(s, qh + i * e, kt, e, src, j0, n, scale);
                float tile_peak = peak;
                for (int64_t j = 0; j < n; j++) tile_peak = s[j] > tile_peak ? s[j] : tile_peak;
                const float rescale = peak == -INFINITY ? 0.0f : em_expf(peak - tile_peak);
                float tile_total = 0.0f;
                #pragma omp simd reduction(+ : tile_total)
                for (int64_t j = 0; j < n; j++) {
                    s[j] = em_expf(s[j] - tile_peak);
                    tile_total += s[j];
                }
                total = total * rescale + tile_total;
                for (int64_t d = 0; d < ev; d++) acc[d] *= rescale;
                for (int64_t j = 0; j < n; j++) {
                    const float p = s[j];
                    const float *vr = vh + (j0 + j) * ev;
                    #pragma omp simd
                    for (int64_t d = 0; d < ev; d++) acc[d] += p * vr[d];
                }
                peak = tile_peak;
            }
            float *o = out + (h * len + i) * ev;
            const float inverse = 1.0f / total;
            for (int64_t d = 0; d < ev; d++) o[d] = acc[d] * inverse;
            lse[h * len + i] = peak + logf(total);
        }
        free(kt);
    }
    return failed ? -1 : 0;
}

/* With p = exp(s - lse) recomputed per row and D = dO . O:
   dV[j] += p_j dO_i; dp_j = dO_i . V_j; ds_j = p_j (dp_j - D); dQ_i = scale sum_j ds_j K_j;
   dK_j += scale ds_j Q_i. */
int attention_backward_f32(float *gq, float *gk, float *gv, const float *go, const float *q,
                           const float *k, const float *v, const float *out, const float *lse,
                           int64_t heads, int64_t len, int64_t src, int64_t e, int64_t ev,
                           float scale, int causal) {
    int failed = 0;
    #pragma omp parallel for schedule(static) reduction(| : failed)
    for (int64_t h = 0; h < heads; h++) {
        float *kt = malloc(sizeof(float) * (size_t)(e * src + ev * src + 2 * src));
        if (!kt) { failed = 1; continue; }
        float *vt = kt + e * src, *p = vt + ev * src, *ds = p + src;
        const float *qh = q + h * len * e, *kh = k + h * src * e, *vh = v + h * src * ev;
        float *gqh = gq + h * len * e, *gkh = gk + h * src * e, *gvh = gv + h * src * ev;
        transpose(kt, kh, src, e);
        transpose(vt, vh, src, ev);
        memset(gkh, 0, sizeof(float) * (size_t)(src * e));
        memset(gvh, 0, sizeof(float) * (size_t)(src * ev));
        for (int64_t i = 0; i < len; i++) {
            const int64_t keys = causal ? (i + 1 < src ? i + 1 : src) : src;
            const float *qi = qh + i * e, *goi = go + (h * len + i) * ev;
            const float *oi = out + (h * len + i) * ev;
            const float row_lse = lse[h * len + i];
            float dot = 0.0f;
            for (int64_t d = 0; d < ev; d++) dot += goi[d] * oi[d];
            scores(p, qi, kt, e, src, 0, keys, scale);
            #pragma omp simd
            for (int64_t j = 0; j < keys; j++) p[j] = em_expf(p[j] - row_lse);
            /* dp_j = dO_i . V_j along contiguous keys (vt is (Ev, S)). */
            for (int64_t j = 0; j < keys; j++) ds[j] = 0.0f;
            for (int64_t d = 0; d < ev; d++) {
                const float g = goi[d];
                const float *row = vt + d * src;
                #pragma omp simd
                for (int64_t j = 0; j < keys; j++) ds[j] += g * row[j];
            }
            #pragma omp simd
            for (int64_t j = 0; j < keys; j++) ds[j] = p[j] * (ds[j] - dot) * scale;
            float *gqi = gqh + i * e;
            for (int64_t d = 0; d < e; d++) gqi[d] = 0.0f;
            for (int64_t j = 0; j < keys; j++) {
                const float pj = p[j], dsj = ds[j];
                const float *kj = kh + j * e;
                float *gkj = gkh + j * e, *gvj = gvh + j * ev;
                #pragma omp simd
                for (int64_t d = 0; d < e; d++) {
                    gqi[d] += dsj * kj[d];
                    gkj[d] += dsj * qi[d];
                }
                #pragma omp simd
                for (int64_t d = 0; d < ev; d++) gvj[d] += pj * goi[d];
            }
        }
        free(kt);
    }
    return failed ? -1 : 0;
}
"""

_FUNCTIONS = ("attention_f32", "attention_backward_f32")


@functools.cache
def _library() -> Any:
    import ember_cpu  # the cpu device's compiler; only needed once a cpu kernel runs

    return ember_cpu.load_inline(SOURCE, functions=_FUNCTIONS, name="ember_fused_attention")


def _f32(*tensors: Tensor) -> bool:
    return all(
        t.dtype == ember.float32 and t.is_contiguous() and t.storage_offset() == 0 for t in tensors
    )


def _geometry(q: Tensor, k: Tensor, v: Tensor) -> tuple[int, int, int, int, int]:
    heads, length, width = q.shape
    return heads, length, k.shape[1], width, v.shape[2]


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
    if _f32(out, lse, q, k, v):
        lib = _library()
        status = lib.attention_f32(
            lib.ptr(out), lib.ptr(lse), lib.ptr(q), lib.ptr(k), lib.ptr(v),
            *_geometry(q, k, v), scale, int(is_causal),
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
    if _f32(grad_q, grad_k, grad_v, grad_out, q, k, v, out, lse):
        lib = _library()
        status = lib.attention_backward_f32(
            lib.ptr(grad_q), lib.ptr(grad_k), lib.ptr(grad_v), lib.ptr(grad_out), lib.ptr(q),
            lib.ptr(k), lib.ptr(v), lib.ptr(out), lib.ptr(lse), *_geometry(q, k, v), scale,
            int(is_causal),
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
KERNELS = (
    (ops.ATTENTION, attention, 0),
    (ops.ATTENTION_BACKWARD, attention_backward, 0),
)
