"""The fast path of the cpu attention kernels: head widths that are multiples of 16.

Its C (`FAST_SOURCE`) is pasted between the common definitions and the entry points of
`_cpu_attention_c`, which call `attention_fast` and `attention_backward_fast` when
`fast_shape` holds.
"""

from __future__ import annotations

__all__ = ["FAST_SOURCE"]

FAST_SOURCE = r"""
/* ---- the fast path: head widths E and Ev multiples of 16, at most 128 ----------------
   16 keys at a time as one vector (GCC vector extensions, any x86-64 target), and blocks
   of query rows or keys sharing each vector load. Keys and values are transposed and
   zero-padded to a multiple of 16 once per head. */
typedef float v16 __attribute__((vector_size(64), aligned(4)));
#define LANES 16
#define MAXV 8

static inline v16 load16(const float *p) { return *(const v16 *)p; }
static inline void store16(float *p, v16 x) { *(v16 *)p = x; }
/* Spelled out: `(v16){0} + x` costs a scalar add (0 + x is not x for x = -0) before the
   broadcast, in every multiply-add of the score and gradient loops. */
static inline v16 splat(float x) {
    return (v16){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
}

static void transpose_padded(float *dst, const float *src, int64_t rows, int64_t cols,
                             int64_t stride, int64_t padded) {
    for (int64_t c = 0; c < cols; c++) {
        for (int64_t r = 0; r < rows; r++) dst[c * padded + r] = src[r * stride + c];
        for (int64_t r = rows; r < padded; r++) dst[c * padded + r] = 0.0f;
    }
}

static int fast_shape(int64_t e, int64_t ev) {
    return e % LANES == 0 && ev % LANES == 0 && e <= LANES * MAXV && ev <= LANES * MAXV;
}

/* Rows [i0, i0 + R) of one (batch, head) of the forward, keys in tiles of KEY_TILE. The R
   query rows share every load of K^T and V: a tile's scores are R vectors per 16 keys, one
   K^T load feeding R multiply-adds, and each V row loaded once adds into all R outputs.
   Then per row one vectorised max and one exp-and-sum (online softmax across tiles).
   Inlined with R and nv (the output width in vectors) constants, so that the R output rows
   stay in registers. Causal rows of the block see different key counts: a row's weights
   past its last key are zero, so the block runs to the last row's bound (a NaN or inf in
   a V row a causal row may not see then reaches it as 0 * inf, as in PyTorch's math
   path, which multiplies the masked probabilities by V too). */
#define KEY_TILE 64
#define QUERY_BLOCK 4

static inline __attribute__((always_inline)) void attention_rows_fast(
    float *oh, float *lh, const float *qh, const float *kt, const float *vh, int64_t i0,
    const int R, int64_t src, int64_t e, const int64_t nv, int64_t padded, layout_t sq,
    layout_t sv, layout_t so, float scale, int causal) {
    int64_t keys[QUERY_BLOCK];
    for (int r = 0; r < R; r++) keys[r] = causal ? (i0 + r + 1 < src ? i0 + r + 1 : src) : src;
    const int64_t last = keys[R - 1];
    v16 o[QUERY_BLOCK][MAXV];
    float peak[QUERY_BLOCK], total[QUERY_BLOCK];
    for (int r = 0; r < R; r++) {
        for (int64_t t = 0; t < nv; t++) o[r][t] = (v16){0};
        peak[r] = -INFINITY;
        total[r] = 0.0f;
    }
    for (int64_t j0 = 0; j0 < last; j0 += KEY_TILE) {
        const int64_t n = last - j0 < KEY_TILE ? last - j0 : KEY_TILE;
        const int width = (int)((n + LANES - 1) / LANES * LANES);
        float s[QUERY_BLOCK][KEY_TILE] __attribute__((aligned(64)));
        float p[QUERY_BLOCK][KEY_TILE] __attribute__((aligned(64)));
        for (int u = 0; u < width; u += LANES) {
            v16 acc[QUERY_BLOCK];
            for (int r = 0; r < R; r++) acc[r] = (v16){0};
            const float *column = kt + j0 + u;
            for (int64_t d = 0; d < e; d++) {
                const v16 kd = load16(column + d * padded);
                for (int r = 0; r < R; r++) acc[r] += splat(qh[(i0 + r) * sq.r + d]) * kd;
            }
            for (int r = 0; r < R; r++) store16(s[r] + u, acc[r] * scale);
        }
        for (int r = 0; r < R; r++) {
            const int64_t seen = keys[r] - j0 < n ? keys[r] - j0 : n; /* may be 0 */
            float tile_peak = peak[r];
            #pragma omp simd reduction(max : tile_peak)
            for (int c = 0; c < width; c++) {
                const float x = c < seen ? s[r][c] : -INFINITY;
                tile_peak = x > tile_peak ? x : tile_peak;
            }
            if (tile_peak > peak[r]) {
                const float rescale =
                    peak[r] == -INFINITY ? 0.0f : em_expf(peak[r] - tile_peak);
                total[r] *= rescale;
                for (int64_t t = 0; t < nv; t++) o[r][t] *= rescale;
                peak[r] = tile_peak;
            }
            const float row_peak = peak[r];
            float tile_total = 0.0f;
            #pragma omp simd reduction(+ : tile_total)
            for (int c = 0; c < width; c++) {
                const float x = em_expf(s[r][c] - row_peak);
                p[r][c] = c < seen ? x : 0.0f;
                tile_total += p[r][c];
            }
            total[r] += tile_total;
        }
        const float *rows = vh + j0 * sv.r;
        for (int64_t c = 0; c < n; c++, rows += sv.r) {
            for (int64_t t = 0; t < nv; t++) {
                const v16 x = load16(rows + t * LANES);
                for (int r = 0; r < R; r++) o[r][t] += splat(p[r][c]) * x;
            }
        }
    }
    for (int r = 0; r < R; r++) {
        float *row = oh + (i0 + r) * so.r;
        const float inverse = 1.0f / total[r];
        for (int64_t t = 0; t < nv; t++) store16(row + t * LANES, o[r][t] * inverse);
        lh[i0 + r] = peak[r] + logf(total[r]);
    }
}

/* One (batch, head) of the forward: blocks of QUERY_BLOCK rows, then the rest one by one. */
static inline __attribute__((always_inline)) void attention_head_fast(
    float *oh, float *lh, const float *qh, const float *kt, const float *vh, int64_t len,
    int64_t src, int64_t e, const int64_t nv, int64_t padded, layout_t sq, layout_t sv,
    layout_t so, float scale, int causal) {
    int64_t i = 0;
    for (; i + QUERY_BLOCK <= len; i += QUERY_BLOCK)
        attention_rows_fast(oh, lh, qh, kt, vh, i, QUERY_BLOCK, src, e, nv, padded, sq, sv, so,
                            scale, causal);
    for (; i < len; i++)
        attention_rows_fast(oh, lh, qh, kt, vh, i, 1, src, e, nv, padded, sq, sv, so, scale,
                            causal);
}

static int attention_fast(float *out, float *lse, const float *q, const float *k,
                          const float *v, int64_t batch, int64_t heads, int64_t len,
                          int64_t src, int64_t e, int64_t ev, layout_t sq, layout_t sk,
                          layout_t sv, layout_t so, float scale, int causal) {
    const int64_t padded = (src + LANES - 1) / LANES * LANES, nv = ev / LANES;
    int failed = 0;
    #pragma omp parallel for schedule(static) reduction(| : failed)
    for (int64_t bh = 0; bh < batch * heads; bh++) {
        const int64_t b = bh / heads, h = bh % heads;
        float *kt = malloc(sizeof(float) * (size_t)(e * padded));
        if (!kt) { failed = 1; continue; }
        const float *qh = q + b * sq.b + h * sq.h, *vh = v + b * sv.b + h * sv.h;
        float *oh = out + b * so.b + h * so.h, *lh = lse + bh * len;
        transpose_padded(kt, k + b * sk.b + h * sk.h, src, e, sk.r, padded);
        #define HEAD(NV) attention_head_fast(oh, lh, qh, kt, vh, len, src, e, NV, padded, sq, \
                                             sv, so, scale, causal)
        switch (nv) {
            case 1: HEAD(1); break;
            case 2: HEAD(2); break;
            case 3: HEAD(3); break;
            case 4: HEAD(4); break;
            default: HEAD(nv); break;
        }
        #undef HEAD
        free(kt);
    }
    return failed ? -1 : 0;
}

/* Query rows [i0, i0 + R) against the 16 keys at j0 (n of them real) in the backward:
   each row's P and dS (stored as rows of 16 in pb, dsb), and dQ += dS K. The R rows share
   every load of K^T, V^T and K. */
static inline __attribute__((always_inline)) void backward_rows_fast(
    float *gqh, const float *goh, const float *qh, const float *kh, const float *kt,
    const float *vt, const float *lh, const float *dot, float *pb, float *dsb, int64_t i0,
    const int R, int64_t j0, int64_t n, int64_t e, int64_t ev, const int64_t ne,
    int64_t padded, const layout_t *s, float scale, int causal) {
    const layout_t sq = s[0], sk = s[1], sgo = s[4], sgq = s[5];
    v16 sc[QUERY_BLOCK], dp[QUERY_BLOCK];
    for (int r = 0; r < R; r++) sc[r] = dp[r] = (v16){0};
    for (int64_t d = 0; d < e; d++) {
        const v16 kd = load16(kt + d * padded + j0);
        for (int r = 0; r < R; r++) sc[r] += splat(qh[(i0 + r) * sq.r + d]) * kd;
    }
    for (int64_t d = 0; d < ev; d++) {
        const v16 vd = load16(vt + d * padded + j0);
        for (int r = 0; r < R; r++) dp[r] += splat(goh[(i0 + r) * sgo.r + d]) * vd;
    }
    float ds[QUERY_BLOCK][LANES] __attribute__((aligned(64)));
    int64_t m_last = 0;
    for (int r = 0; r < R; r++) {
        const int64_t i = i0 + r;
        const int64_t visible = causal ? i + 1 - j0 : n;
        const int64_t m = visible < n ? visible : n;
        m_last = m > m_last ? m : m_last;
        float p[LANES] __attribute__((aligned(64))), dps[LANES] __attribute__((aligned(64)));
        store16(p, sc[r] * scale);
        store16(dps, dp[r]);
        const float row_lse = lh[i], row_dot = dot[i];
        #pragma omp simd
        for (int c = 0; c < LANES; c++) {
            const float x = em_expf(p[c] - row_lse);
            p[c] = c < m ? x : 0.0f;
            ds[r][c] = p[c] * (dps[c] - row_dot) * scale;
        }
        store16(pb + i * LANES, load16(p));
        store16(dsb + i * LANES, load16(ds[r]));
    }
    /* dQ_i += dS_ic K_c: each K row loaded once for the R rows (zero dS past a row's
       last key). */
    v16 dq[QUERY_BLOCK][MAXV];
    for (int r = 0; r < R; r++)
        for (int64_t t = 0; t < ne; t++) dq[r][t] = load16(gqh + (i0 + r) * sgq.r + t * LANES);
    const float *rows = kh + j0 * sk.r;
    for (int64_t c = 0; c < m_last; c++, rows += sk.r)
        for (int64_t t = 0; t < ne; t++) {
            const v16 x = load16(rows + t * LANES);
            for (int r = 0; r < R; r++) dq[r][t] += splat(ds[r][c]) * x;
        }
    for (int r = 0; r < R; r++)
        for (int64_t t = 0; t < ne; t++) store16(gqh + (i0 + r) * sgq.r + t * LANES, dq[r][t]);
}

/* dK and dV of KB keys from c (count of them real) of the block at j0: sums over the
   queries that see them, each Q and dO row loaded once for the KB keys. A query before
   a key (causal) has p = ds = 0 there, so the group may start at its first key's first
   query. */
static inline __attribute__((always_inline)) void backward_keys_fast(
    float *gkh, float *gvh, const float *goh, const float *qh, const float *pb,
    const float *dsb, int64_t len, int64_t j0, int64_t c, int64_t count, const int KB,
    const int64_t ne, const int64_t nv, const layout_t *s, int causal) {
    const layout_t sq = s[0], sgo = s[4], sgk = s[6], sgv = s[7];
    v16 dk[4][MAXV], dv[4][MAXV];
    for (int k = 0; k < KB; k++) {
        for (int64_t t = 0; t < ne; t++) dk[k][t] = (v16){0};
        for (int64_t t = 0; t < nv; t++) dv[k][t] = (v16){0};
    }
    const int64_t start = causal ? (j0 + c < len ? j0 + c : len) : 0;
    for (int64_t i = start; i < len; i++) {
        const float *ds_row = dsb + i * LANES + c, *p_row = pb + i * LANES + c;
        for (int64_t t = 0; t < ne; t++) {
            const v16 x = load16(qh + i * sq.r + t * LANES);
            for (int k = 0; k < KB; k++) dk[k][t] += splat(ds_row[k]) * x;
        }
        for (int64_t t = 0; t < nv; t++) {
            const v16 x = load16(goh + i * sgo.r + t * LANES);
            for (int k = 0; k < KB; k++) dv[k][t] += splat(p_row[k]) * x;
        }
    }
    for (int k = 0; k < KB && k < count; k++) {
        for (int64_t t = 0; t < ne; t++) store16(gkh + (j0 + c + k) * sgk.r + t * LANES, dk[k][t]);
        for (int64_t t = 0; t < nv; t++) store16(gvh + (j0 + c + k) * sgv.r + t * LANES, dv[k][t]);
    }
}

/* One (batch, head) of the backward; inlined with ne and nv (the head widths in vectors)
   and KB (keys per dK/dV group) constants, so that the dQ, dK and dV sums stay in
   registers. scratch holds K^T, V^T, the P and dS rows of a block of keys, and each row's
   dO . O. */
static inline __attribute__((always_inline)) void attention_head_backward_fast(
    float *gqh, float *gkh, float *gvh, const float *goh, const float *qh, const float *kh,
    const float *vh, const float *oh, const float *lh, float *scratch, int64_t len,
    int64_t src, int64_t e, int64_t ev, const int64_t ne, const int64_t nv, const int KB,
    int64_t padded, const layout_t *s, float scale, int causal) {
    const layout_t sk = s[1], sv = s[2], so = s[3], sgo = s[4], sgq = s[5];
    float *kt = scratch, *vt = kt + e * padded, *pb = vt + ev * padded;
    float *dsb = pb + len * LANES, *dot = dsb + len * LANES;
    transpose_padded(kt, kh, src, e, sk.r, padded);
    transpose_padded(vt, vh, src, ev, sv.r, padded);
    for (int64_t i = 0; i < len; i++) {
        v16 acc = {0};
        for (int64_t t = 0; t < nv; t++)
            acc += load16(goh + i * sgo.r + t * LANES) * load16(oh + i * so.r + t * LANES);
        float sum = 0.0f;
        for (int c = 0; c < LANES; c++) sum += acc[c];
        dot[i] = sum;
    }
    for (int64_t i = 0; i < len; i++) memset(gqh + i * sgq.r, 0, sizeof(float) * (size_t)e);
    for (int64_t j0 = 0; j0 < src; j0 += LANES) {
        const int64_t n = src - j0 < LANES ? src - j0 : LANES;
        const int64_t first = causal ? (j0 < len ? j0 : len) : 0;
        int64_t i = first;
        for (; i + QUERY_BLOCK <= len; i += QUERY_BLOCK)
            backward_rows_fast(gqh, goh, qh, kh, kt, vt, lh, dot, pb, dsb, i, QUERY_BLOCK, j0,
                               n, e, ev, ne, padded, s, scale, causal);
        for (; i < len; i++)
            backward_rows_fast(gqh, goh, qh, kh, kt, vt, lh, dot, pb, dsb, i, 1, j0, n, e, ev,
                               ne, padded, s, scale, causal);
        for (int64_t c = 0; c < n; c += KB)
            backward_keys_fast(gkh, gvh, goh, qh, pb, dsb, len, j0, c, n - c, KB, ne, nv, s,
                               causal);
    }
}

/* Per block of 16 keys: one pass over the queries that see them stores P and dS (rows of
   16) and adds dS K into dQ; a second pass over the block's keys sums dK = dS^T Q and
   dV = P^T dO in registers. */
static int attention_backward_fast(float *gq, float *gk, float *gv, const float *go,
                                   const float *q, const float *k, const float *v,
                                   const float *out, const float *lse, int64_t batch,
                                   int64_t heads, int64_t len, int64_t src, int64_t e,
                                   int64_t ev, const layout_t *s, float scale, int causal) {
    const int64_t padded = (src + LANES - 1) / LANES * LANES;
    const int64_t ne = e / LANES, nv = ev / LANES;
    const layout_t sq = s[0], sk = s[1], sv = s[2], so = s[3], sgo = s[4], sgq = s[5];
    const layout_t sgk = s[6], sgv = s[7];
    int failed = 0;
    #pragma omp parallel for schedule(static) reduction(| : failed)
    for (int64_t bh = 0; bh < batch * heads; bh++) {
        const int64_t b = bh / heads, h = bh % heads;
        float *scratch =
            malloc(sizeof(float) * (size_t)((e + ev) * padded + 2 * len * LANES + len));
        if (!scratch) { failed = 1; continue; }
        const float *qh = q + b * sq.b + h * sq.h, *kh = k + b * sk.b + h * sk.h;
        const float *vh = v + b * sv.b + h * sv.h, *goh = go + b * sgo.b + h * sgo.h;
        const float *oh = out + b * so.b + h * so.h, *lh = lse + bh * len;
        float *gqh = gq + b * sgq.b + h * sgq.h, *gkh = gk + b * sgk.b + h * sgk.h;
        float *gvh = gv + b * sgv.b + h * sgv.h;
        /* Four keys per dK/dV group while their 4 (ne + nv) sums fit the 32 registers. */
        #define HEAD(NE, NV, KB) attention_head_backward_fast(gqh, gkh, gvh, goh, qh, kh, vh, \
            oh, lh, scratch, len, src, e, ev, NE, NV, KB, padded, s, scale, causal)
        if (ne == 1 && nv == 1) HEAD(1, 1, 4);
        else if (ne == 2 && nv == 2) HEAD(2, 2, 4);
        else if (ne == 4 && nv == 4) HEAD(4, 4, 2);
        else HEAD(ne, nv, 2);
        #undef HEAD
        free(scratch);
    }
    return failed ? -1 : 0;
}

"""
