/* Softmax and log-softmax along one dim of a float16, float32 or float64 tensor: the
 * fused kernels of the composite ops of ember.nn.functional._activation.
 *
 * A row (the elements along `dim` at one position of the other dims) takes three passes:
 * its maximum m, s = the sum of exp(x - m), then the write; the formulas (and what NaN and
 * infinities give) are em_reduce.h's. float16 converts blocks to float (F16C), computes
 * there and rounds once. exp is branch-free arithmetic (em_expf, exp_f64) so that the
 * loops vectorise. Contiguous rows keep exp(x - m) from the sum pass for softmax and scale
 * it in place, and sum in lanes of the compute type over blocks of EM_SUM_BLOCK, then the
 * blocks in double; the other loops sum in double.
 *
 * The other dims come sorted by output stride and coalesced (kernels_softmax.py), then one
 * of three loops runs:
 *   - contiguous rows (dim last, the common case): vector loops along each row;
 *   - columns, when the innermost other dim is contiguous in input and output (dim 0 of a
 *     matrix, the channels of NCHW): up to COL_CHUNK rows side by side, so that every pass
 *     walks memory in order and vectorises across rows;
 *   - anything else: each row walked with its strides.
 * Rows (or column chunks) are split across threads above EM_PARALLEL_GRAIN (run_parts).
 */
#include <math.h>

#include "elementwise.h"      /* em_half_to_float, em_float_to_half */
#include "elementwise_math.h" /* em_expf */
#include "em_reduce.h"
#include "strided.h"

#define LANES 16 /* one AVX-512 or two AVX2 float vectors: independent chains (FOLD) */
#define ROW_CHUNK 2048 /* float16 elements converted to float at a time */

static inline double bits_to_double(uint64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* e^x for double, branch-free so that loops vectorise (glibc's exp does not): x = n ln2 + r
 * with |r| <= ln2/2 (Cody-Waite split of ln2), e^r by its Taylor series to degree 13
 * (truncation below 2^-55), 2^n applied as two factors to reach subnormals and overflow.
 * Within 1 ulp over [-746, 710]; NaN passes through. */
static inline double exp_f64(double x) {
    x = x > 710.0 ? 710.0 : x;
    x = x < -746.0 ? -746.0 : x;
    const double n = rint(x * 1.4426950408889634);
    double r = fma(n, -6.93147180369123816490e-01, x);
    r = fma(n, -1.90821492927058770002e-10, r);
    double p = 1.0 / 6227020800.0;
    p = fma(p, r, 1.0 / 479001600.0);
    p = fma(p, r, 1.0 / 39916800.0);
    p = fma(p, r, 1.0 / 3628800.0);
    p = fma(p, r, 1.0 / 362880.0);
    p = fma(p, r, 1.0 / 40320.0);
    p = fma(p, r, 1.0 / 5040.0);
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p, r * r, r) + 1.0;
    const int64_t k = (int64_t)n, k1 = k >> 1, k2 = k - k1;
    return p * bits_to_double((uint64_t)(k1 + 1023) << 52) *
           bits_to_double((uint64_t)(k2 + 1023) << 52);
}

#define EXP(x) _Generic((x), float: em_expf, default: exp_f64)(x)
#define MAX EM_SOFTMAX_MAX
#define FACTOR(C, log_out, s) ((C)EM_SOFTMAX_FACTOR(log_out, s))
#define ADD(a, b) ((a) + (b))
/* lane[0] = OP over the LANES lanes, as a tree that the compiler turns into a few vector
 * ops: a chain of 16 dependent adds would cost more than a short row's whole pass. */
#define FOLD(lane, OP)                                                                    \
    do {                                                                                  \
        for (int l = 0; l < 8; l++) lane[l] = OP(lane[l], lane[l + 8]);                   \
        for (int l = 0; l < 4; l++) lane[l] = OP(lane[l], lane[l + 4]);                   \
        for (int l = 0; l < 2; l++) lane[l] = OP(lane[l], lane[l + 2]);                   \
        lane[0] = OP(lane[0], lane[1]);                                                   \
    } while (0)

/* ---- passes over contiguous float or double rows -------------------------------------- */

#define DEFINE_PASSES(SUF, C)                                                             \
    static C max_##SUF(const C* restrict p, int64_t n, C m) {                             \
        C lane[LANES];                                                                    \
        for (int l = 0; l < LANES; l++) lane[l] = m;                                      \
        int64_t i = 0;                                                                    \
        for (; i + LANES <= n; i += LANES)                                                \
            for (int l = 0; l < LANES; l++) lane[l] = MAX(lane[l], p[i + l]);             \
        if (i > 0) {                                                                      \
            FOLD(lane, MAX);                                                              \
            m = lane[0];                                                                  \
        }                                                                                 \
        for (; i < n; i++) m = MAX(m, p[i]);                                              \
        return m;                                                                         \
    }                                                                                     \
    /* the sum of exp(p[i] - m); the terms are also stored to q unless it is NULL */      \
    static double sum_exp_##SUF(const C* restrict p, C* restrict q, int64_t n, C m) {     \
        double total = 0.0;                                                               \
        for (int64_t i0 = 0; i0 < n; i0 += EM_SUM_BLOCK) {                                \
            const int64_t end = min64(n, i0 + EM_SUM_BLOCK);                              \
            int64_t i = i0;                                                               \
            C lane[LANES] = {0};                                                          \
            if (q) {                                                                      \
                for (; i + LANES <= end; i += LANES)                                      \
                    for (int l = 0; l < LANES; l++) {                                     \
                        const C e = EXP(p[i + l] - m);                                    \
                        q[i + l] = e;                                                     \
                        lane[l] += e;                                                     \
                    }                                                                     \
            } else {                                                                      \
                for (; i + LANES <= end; i += LANES)                                      \
                    for (int l = 0; l < LANES; l++) lane[l] += EXP(p[i + l] - m);         \
            }                                                                             \
            C block = 0;                                                                  \
            if (i > i0) {                                                                 \
                FOLD(lane, ADD);                                                          \
                block = lane[0];                                                          \
            }                                                                             \
            if (q) {                                                                      \
                for (; i < end; i++) block += q[i] = EXP(p[i] - m);                       \
            } else {                                                                      \
                for (; i < end; i++) block += EXP(p[i] - m);                              \
            }                                                                             \
            total += block;                                                               \
        }                                                                                 \
        return total;                                                                     \
    }                                                                                     \
    /* q = (p - m) - f for log-softmax (f = log s), else exp(p - m) * f (f = 1 / s) */    \
    static void write_##SUF(int log_out, const C* restrict p, C* restrict q, int64_t n,   \
                            C m, C f) {                                                   \
        if (log_out) {                                                                    \
            for (int64_t i = 0; i < n; i++) q[i] = EM_LOG_SOFTMAX_OUT(p[i] - m, f);       \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) q[i] = EM_SOFTMAX_OUT(EXP(p[i] - m), f);      \
        }                                                                                 \
    }                                                                                     \
    /* The same passes for w rows side by side: r[j] is an element of row j. */           \
    static void col_max_##SUF(const C* restrict r, C* restrict m, int64_t w) {            \
        for (int64_t j = 0; j < w; j++) m[j] = MAX(m[j], r[j]);                           \
    }                                                                                     \
    static void col_sum_exp_##SUF(const C* restrict r, const C* restrict m,               \
                                  double* restrict s, int64_t w) {                        \
        for (int64_t j = 0; j < w; j++) s[j] += EXP(r[j] - m[j]);                         \
    }                                                                                     \
    static void col_write_##SUF(int log_out, const C* restrict r, C* restrict o,          \
                                const C* restrict m, const C* restrict f, int64_t w) {    \
        if (log_out) {                                                                    \
            for (int64_t j = 0; j < w; j++) o[j] = EM_LOG_SOFTMAX_OUT(r[j] - m[j], f[j]); \
        } else {                                                                          \
            for (int64_t j = 0; j < w; j++) o[j] = EM_SOFTMAX_OUT(EXP(r[j] - m[j]), f[j]); \
        }                                                                                 \
    }

DEFINE_PASSES(f32, float)
DEFINE_PASSES(f64, double)

/* One row of n elements at p[i * si], written to q[i * so], in the compute type C. */
#define DEFINE_STRIDED_ROW(SUF, T, C)                                                     \
    static void strided_row_##SUF(int log_out, const T* p, int64_t si, T* q, int64_t so,  \
                                  int64_t n) {                                            \
        C m = -INFINITY;                                                                  \
        for (int64_t i = 0; i < n; i++) m = MAX(m, (C)p[i * si]);                         \
        double s = 0.0;                                                                   \
        for (int64_t i = 0; i < n; i++) s += EXP((C)p[i * si] - m);                       \
        const C f = FACTOR(C, log_out, s);                                                \
        if (log_out) {                                                                    \
            for (int64_t i = 0; i < n; i++)                                               \
                q[i * so] = (T)EM_LOG_SOFTMAX_OUT((C)p[i * si] - m, f);                   \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++)                                               \
                q[i * so] = (T)EM_SOFTMAX_OUT(EXP((C)p[i * si] - m), f);                  \
        }                                                                                 \
    }

DEFINE_STRIDED_ROW(f16, em_half, float)
DEFINE_STRIDED_ROW(f32, float, float)
DEFINE_STRIDED_ROW(f64, double, double)

/* ---- rows and column chunks per dtype ------------------------------------------------- */

/* One row: n elements at p[i * si], written to q[i * so]. */
typedef void (*row_fn)(int log_out, const void* p, int64_t si, void* q, int64_t so, int64_t n);
/* w <= COL_CHUNK rows side by side: element k of row j at p[k * si + j], out at q[k * so + j]. */
typedef void (*cols_fn)(int log_out, const void* p, int64_t si, void* q, int64_t so, int64_t n,
                        int64_t w);

#define DEFINE_DRIVERS(SUF, C)                                                            \
    static void row_##SUF(int log_out, const void* pv, int64_t si, void* qv, int64_t so,  \
                          int64_t n) {                                                    \
        const C* p = pv;                                                                  \
        C* q = qv;                                                                        \
        if (si != 1 || so != 1) {                                                         \
            strided_row_##SUF(log_out, p, si, q, so, n);                                  \
            return;                                                                       \
        }                                                                                 \
        const C m = max_##SUF(p, n, -INFINITY);                                           \
        const double s = sum_exp_##SUF(p, log_out ? NULL : q, n, m);                      \
        if (log_out) {                                                                    \
            write_##SUF(1, p, q, n, m, FACTOR(C, 1, s));                                  \
        } else {                                                                          \
            const C f = FACTOR(C, 0, s);                                                  \
            for (int64_t i = 0; i < n; i++) q[i] = EM_SOFTMAX_OUT(q[i], f);               \
        }                                                                                 \
    }                                                                                     \
    static void cols_##SUF(int log_out, const void* pv, int64_t si, void* qv, int64_t so, \
                           int64_t n, int64_t w) {                                        \
        const C* p = pv;                                                                  \
        C* q = qv;                                                                        \
        C m[COL_CHUNK], f[COL_CHUNK];                                                     \
        double s[COL_CHUNK];                                                              \
        for (int64_t j = 0; j < w; j++) m[j] = -INFINITY, s[j] = 0.0;                     \
        for (int64_t k = 0; k < n; k++) col_max_##SUF(p + k * si, m, w);                  \
        for (int64_t k = 0; k < n; k++) col_sum_exp_##SUF(p + k * si, m, s, w);           \
        for (int64_t j = 0; j < w; j++) f[j] = FACTOR(C, log_out, s[j]);                  \
        for (int64_t k = 0; k < n; k++)                                                   \
            col_write_##SUF(log_out, p + k * si, q + k * so, m, f, w);                    \
    }

DEFINE_DRIVERS(f32, float)
DEFINE_DRIVERS(f64, double)

static void row_f16(int log_out, const void* pv, int64_t si, void* qv, int64_t so, int64_t n) {
    const em_half* p = pv;
    em_half* q = qv;
    if (si != 1 || so != 1) {
        strided_row_f16(log_out, p, si, q, so, n);
        return;
    }
    float x[ROW_CHUNK], y[ROW_CHUNK], m = -INFINITY;
    if (n <= ROW_CHUNK) { /* converted once; softmax keeps its exps like float32 */
        em_half_to_float(p, x, n);
        m = max_f32(x, n, -INFINITY);
        const double s = sum_exp_f32(x, log_out ? NULL : y, n, m);
        if (log_out) {
            write_f32(1, x, y, n, m, FACTOR(float, 1, s));
        } else {
            const float f = FACTOR(float, 0, s);
            for (int64_t i = 0; i < n; i++) y[i] = EM_SOFTMAX_OUT(y[i], f);
        }
        em_float_to_half(y, q, n);
        return;
    }
    for (int64_t i = 0; i < n; i += ROW_CHUNK) {
        const int64_t len = min64(ROW_CHUNK, n - i);
        em_half_to_float(p + i, x, len);
        m = max_f32(x, len, m);
    }
    double s = 0.0;
    for (int64_t i = 0; i < n; i += ROW_CHUNK) {
        const int64_t len = min64(ROW_CHUNK, n - i);
        em_half_to_float(p + i, x, len);
        s += sum_exp_f32(x, NULL, len, m);
    }
    const float f = FACTOR(float, log_out, s);
    for (int64_t i = 0; i < n; i += ROW_CHUNK) {
        const int64_t len = min64(ROW_CHUNK, n - i);
        em_half_to_float(p + i, x, len);
        write_f32(log_out, x, y, len, m, f);
        em_float_to_half(y, q + i, len);
    }
}

static void cols_f16(int log_out, const void* pv, int64_t si, void* qv, int64_t so, int64_t n,
                     int64_t w) {
    const em_half* p = pv;
    em_half* q = qv;
    float m[COL_CHUNK], f[COL_CHUNK], x[COL_CHUNK], y[COL_CHUNK];
    double s[COL_CHUNK];
    for (int64_t j = 0; j < w; j++) m[j] = -INFINITY, s[j] = 0.0;
    for (int64_t k = 0; k < n; k++) {
        em_half_to_float(p + k * si, x, w);
        col_max_f32(x, m, w);
    }
    for (int64_t k = 0; k < n; k++) {
        em_half_to_float(p + k * si, x, w);
        col_sum_exp_f32(x, m, s, w);
    }
    for (int64_t j = 0; j < w; j++) f[j] = FACTOR(float, log_out, s[j]);
    for (int64_t k = 0; k < n; k++) {
        em_half_to_float(p + k * si, x, w);
        col_write_f32(log_out, x, y, m, f, w);
        em_float_to_half(y, q + k * so, w);
    }
}

static const row_fn ROWS[3] = {row_f16, row_f32, row_f64};
static const cols_fn COLS[3] = {cols_f16, cols_f32, cols_f64};

/* ---- planning and threads ------------------------------------------------------------- */

typedef struct {
    int log_out, itemsize;
    row_fn row;
    cols_fn cols;
    const char* a;
    char* out;
    dims_t d;          /* the other dims (one per row); in column mode less the innermost */
    int64_t n, si, so; /* the softmax dim: its length and strides */
    int64_t w, width, chunks; /* column mode: the innermost other dim's size, split into
                               * `chunks` pieces of `width` <= COL_CHUNK */
} plan_t;

static void rows_part(void* ctx, int t, int nt) {
    const plan_t* pl = ctx;
    int64_t begin, end, idx[EM_MAX_DIMS], o1, o2;
    split(numel(&pl->d), t, nt, &begin, &end);
    if (begin >= end) return;
    unravel(&pl->d, begin, idx, &o1, &o2);
    for (int64_t r = begin; r < end; r++) {
        pl->row(pl->log_out, pl->a + o1 * pl->itemsize, pl->si, pl->out + o2 * pl->itemsize,
                pl->so, pl->n);
        advance(&pl->d, idx, &o1, &o2);
    }
}

static void cols_part(void* ctx, int t, int nt) {
    const plan_t* pl = ctx;
    int64_t begin, end, idx[EM_MAX_DIMS], o1, o2;
    split(numel(&pl->d) * pl->chunks, t, nt, &begin, &end);
    for (int64_t u = begin; u < end; u++) {
        const int64_t j0 = (u % pl->chunks) * pl->width;
        unravel(&pl->d, u / pl->chunks, idx, &o1, &o2);
        pl->cols(pl->log_out, pl->a + (o1 + j0) * pl->itemsize, pl->si,
                 pl->out + (o2 + j0) * pl->itemsize, pl->so, pl->n, min64(pl->width, pl->w - j0));
    }
}

static int plan_init(plan_t* pl, int log_out, int dt, intptr_t out, intptr_t a) {
    if (dt < EM_FLOAT16 || dt > EM_FLOAT64) {
        snprintf(em_error_message, sizeof em_error_message,
                 "softmax expects a floating dtype, got dtype code %d", dt);
        return 2;
    }
    pl->log_out = log_out;
    pl->itemsize = ITEMSIZE[dt];
    pl->row = ROWS[dt - EM_FLOAT16];
    pl->cols = COLS[dt - EM_FLOAT16];
    pl->a = (const char*)a;
    pl->out = (char*)out;
    return 0;
}

int em_softmax_lastdim(int log_out, int dt, intptr_t out, intptr_t a, int64_t rows, int64_t n) {
    plan_t pl;
    const int status = plan_init(&pl, log_out, dt, out, a);
    if (status) return status;
    if (rows == 0 || n == 0) return 0;
    pl.d.n = 1;
    pl.d.size[0] = rows;
    pl.d.s1[0] = pl.d.s2[0] = n;
    pl.n = n;
    pl.si = pl.so = 1;
    run_parts(rows * n, rows, rows_part, &pl);
    return 0;
}

/* geometry: the other dims (nk of them, sorted by output stride and coalesced), then the
 * softmax dim, as load_dims reads them. */
int em_softmax(int log_out, int dt, intptr_t out, intptr_t a, int nk, const char* geometry) {
    plan_t pl;
    const int status = plan_init(&pl, log_out, dt, out, a);
    if (status) return status;
    if (nk > EM_MAX_DIMS) return too_many_dims(nk);
    dims_t along;
    load_dims(&along, 1, load_dims(&pl.d, nk, geometry));
    pl.n = along.size[0];
    pl.si = along.s1[0];
    pl.so = along.s2[0];
    const int64_t work = numel(&pl.d) * pl.n;
    if (work == 0) return 0;
    const int inner = pl.d.n - 1;
    if (inner >= 0 && pl.d.s1[inner] == 1 && pl.d.s2[inner] == 1 && pl.d.size[inner] >= COL_MIN &&
        pl.si != 1 && pl.n > 1) {
        pl.w = pl.d.size[inner];
        pl.d.n--;
        /* Narrower pieces when there are fewer sets of columns than threads (dim 0 of a
         * matrix), multiples of COL_MIN so that the vector loops stay full. */
        const int64_t sets = numel(&pl.d), threads = em_threads();
        const int split_sets = sets < threads && work >= EM_PARALLEL_GRAIN;
        const int64_t per_set = split_sets ? (threads + sets - 1) / sets : 1;
        const int64_t width = (pl.w + per_set - 1) / per_set;
        pl.width = min64(COL_CHUNK, (width + COL_MIN - 1) / COL_MIN * COL_MIN);
        pl.chunks = (pl.w + pl.width - 1) / pl.width;
        run_parts(work, sets * pl.chunks, cols_part, &pl);
    } else {
        run_parts(work, numel(&pl.d), rows_part, &pl);
    }
    return 0;
}
