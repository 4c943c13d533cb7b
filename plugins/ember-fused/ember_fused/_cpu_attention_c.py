"""The C of the flash-style cpu attention kernels (compiled by `_cpu_attention`).

Two paths: head widths that are multiples of 16 (at most 128) run on 16-float vectors,
query rows in blocks of four and keys in groups of up to four, so that every load feeds
several multiply-adds into registers; any other width runs the general loops, vectorised
by the compiler where it can.

Operands are (B, H, rows, width) with unit stride along the width and any other strides
(`geo` below), so that heads interleaved in a (B, L, H * E) projection are read and written
in place: no copy into (B, H, L, E) order and back.
"""

from __future__ import annotations

from ember_fused._cpu_attention_fast_c import FAST_SOURCE

__all__ = ["SOURCE"]

_COMMON = r"""
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "elementwise_math.h"

#define TILE 64

/* The layout of one operand: batch, head and row strides (elements; unit along a row). */
typedef struct { int64_t b, h, r; } layout_t;

static layout_t layout_at(const int64_t *g) { return (layout_t){g[0], g[1], g[2]}; }

static void transpose(float *dst, const float *src, int64_t rows, int64_t cols,
                      int64_t stride) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * stride + c];
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

"""

_ENTRY = r"""
/* geo: B, H, L, S, E, Ev, then the (batch, head, row) strides of q, k, v and out; lse is
   (B, H, L) contiguous. Returns 0, or -1 when scratch memory could not be had. */
int attention_f32(float *out, float *lse, const float *q, const float *k, const float *v,
                  const int64_t *geo, float scale, int causal) {
    const int64_t batch = geo[0], heads = geo[1], len = geo[2], src = geo[3], e = geo[4];
    const int64_t ev = geo[5];
    const layout_t sq = layout_at(geo + 6), sk = layout_at(geo + 9), sv = layout_at(geo + 12);
    const layout_t so = layout_at(geo + 15);
    if (fast_shape(e, ev))
        return attention_fast(out, lse, q, k, v, batch, heads, len, src, e, ev, sq, sk, sv, so,
                              scale, causal);
    int failed = 0;
    #pragma omp parallel for schedule(static) reduction(| : failed)
    for (int64_t bh = 0; bh < batch * heads; bh++) {
        const int64_t b = bh / heads, h = bh % heads;
        float *kt = malloc(sizeof(float) * (size_t)(e * src + ev + TILE));
        if (!kt) { failed = 1; continue; }
        float *acc = kt + e * src, *s = acc + ev;
        const float *qh = q + b * sq.b + h * sq.h, *vh = v + b * sv.b + h * sv.h;
        float *oh = out + b * so.b + h * so.h;
        transpose(kt, k + b * sk.b + h * sk.h, src, e, sk.r);
        for (int64_t i = 0; i < len; i++) {
            const int64_t keys = causal ? (i + 1 < src ? i + 1 : src) : src;
            float peak = -INFINITY, total = 0.0f;
            for (int64_t d = 0; d < ev; d++) acc[d] = 0.0f;
            for (int64_t j0 = 0; j0 < keys; j0 += TILE) {
                const int64_t n = keys - j0 < TILE ? keys - j0 : TILE;
                scores(s, qh + i * sq.r, kt, e, src, j0, n, scale);
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
                    const float *vr = vh + (j0 + j) * sv.r;
                    #pragma omp simd
                    for (int64_t d = 0; d < ev; d++) acc[d] += p * vr[d];
                }
                peak = tile_peak;
            }
            float *o = oh + i * so.r;
            const float inverse = 1.0f / total;
            for (int64_t d = 0; d < ev; d++) o[d] = acc[d] * inverse;
            lse[bh * len + i] = peak + logf(total);
        }
        free(kt);
    }
    return failed ? -1 : 0;
}

/* With p = exp(s - lse) recomputed per row and D = dO . O:
   dV[j] += p_j dO_i; dp_j = dO_i . V_j; ds_j = p_j (dp_j - D); dQ_i = scale sum_j ds_j K_j;
   dK_j += scale ds_j Q_i. */
/* geo: B, H, L, S, E, Ev, then the (batch, head, row) strides of q, k, v, out, grad_out,
   grad_q, grad_k and grad_v; lse (B, H, L) contiguous. */
int attention_backward_f32(float *gq, float *gk, float *gv, const float *go, const float *q,
                           const float *k, const float *v, const float *out, const float *lse,
                           const int64_t *geo, float scale, int causal) {
    const int64_t batch = geo[0], heads = geo[1], len = geo[2], src = geo[3], e = geo[4];
    const int64_t ev = geo[5];
    layout_t st[8];
    for (int t = 0; t < 8; t++) st[t] = layout_at(geo + 6 + 3 * t);
    if (fast_shape(e, ev))
        return attention_backward_fast(gq, gk, gv, go, q, k, v, out, lse, batch, heads, len,
                                       src, e, ev, st, scale, causal);
    const layout_t sq = st[0], sk = st[1], sv = st[2], so = st[3], sgo = st[4], sgq = st[5];
    const layout_t sgk = st[6], sgv = st[7];
    int failed = 0;
    #pragma omp parallel for schedule(static) reduction(| : failed)
    for (int64_t bh = 0; bh < batch * heads; bh++) {
        const int64_t b = bh / heads, h = bh % heads;
        float *kt = malloc(sizeof(float) * (size_t)(e * src + ev * src + 2 * src));
        if (!kt) { failed = 1; continue; }
        float *vt = kt + e * src, *p = vt + ev * src, *ds = p + src;
        const float *qh = q + b * sq.b + h * sq.h, *kh = k + b * sk.b + h * sk.h;
        const float *vh = v + b * sv.b + h * sv.h, *goh = go + b * sgo.b + h * sgo.h;
        const float *oh = out + b * so.b + h * so.h;
        float *gqh = gq + b * sgq.b + h * sgq.h, *gkh = gk + b * sgk.b + h * sgk.h;
        float *gvh = gv + b * sgv.b + h * sgv.h;
        transpose(kt, kh, src, e, sk.r);
        transpose(vt, vh, src, ev, sv.r);
        for (int64_t j = 0; j < src; j++) {
            memset(gkh + j * sgk.r, 0, sizeof(float) * (size_t)e);
            memset(gvh + j * sgv.r, 0, sizeof(float) * (size_t)ev);
        }
        for (int64_t i = 0; i < len; i++) {
            const int64_t keys = causal ? (i + 1 < src ? i + 1 : src) : src;
            const float *qi = qh + i * sq.r, *goi = goh + i * sgo.r;
            const float *oi = oh + i * so.r;
            const float row_lse = lse[bh * len + i];
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
            float *gqi = gqh + i * sgq.r;
            for (int64_t d = 0; d < e; d++) gqi[d] = 0.0f;
            for (int64_t j = 0; j < keys; j++) {
                const float pj = p[j], dsj = ds[j];
                const float *kj = kh + j * sk.r;
                float *gkj = gkh + j * sgk.r, *gvj = gvh + j * sgv.r;
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

SOURCE = _COMMON + FAST_SOURCE + _ENTRY
