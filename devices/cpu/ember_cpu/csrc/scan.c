/* Scans along one dim of the CPU device: argmax, argmin and cumsum.
 *
 * The runtime's plan gives the kept dims (coalesced) and the one dim scanned; each kept
 * position is one line along it. The tie and NaN rules of argmax and cumsum's accumulators
 * are em_reduce.h's. Contiguous lines are searched a vectorised block at a time (argmax)
 * or run sequentially (cumsum); when the lines are strided but a kept dim is contiguous
 * (argmax/cumsum over dim 0 of a matrix), COL_CHUNK lines advance side by side.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "em_reduce.h"
#include "strided.h"

/* ---- argmax / argmin ------------------------------------------------------------------ */

#define ARG_BLOCK 512 /* contiguous rows are searched a vectorised block extreme at a time */

/* Scalar search of p[begin..end) (stride s), continuing from (*best, *bi); returns the
 * index of a NaN (which wins at once), else -1. */
#define DEFINE_ARG_SCAN(SUF, T, FLOAT)                                                    \
    static int64_t arg_scan_##SUF(const T* p, int64_t begin, int64_t end, int64_t s,      \
                                  int is_max, T* best, int64_t* bi) {                     \
        for (int64_t i = begin; i < end; i++) {                                           \
            T x = p[i * s];                                                               \
            if (is_max ? x > *best : x < *best) {                                         \
                *best = x;                                                                \
                *bi = i;                                                                  \
            } else if (FLOAT && x != x) {                                                 \
                return i;                                                                 \
            }                                                                             \
        }                                                                                 \
        return -1;                                                                        \
    }

/* The extreme of a contiguous block of n (a multiple of 2W) elements, by vector compares
 * and blends; *nan is set when the block holds a NaN. */
#define DEFINE_BLOCK_EXTREME(NAME, T, VT, VI, W, CMP)                                     \
    static T NAME(const T* p, int64_t n, int* nan) {                                      \
        VT m0 = *(const VT*)p, m1 = *(const VT*)(p + W);                                  \
        VI n0 = m0 != m0, n1 = m1 != m1;                                                  \
        for (int64_t i = 2 * W; i < n; i += 2 * W) {                                      \
            VT x0 = *(const VT*)(p + i), x1 = *(const VT*)(p + i + W);                    \
            VI c0 = x0 CMP m0, c1 = x1 CMP m1;                                            \
            m0 = (VT)(((VI)x0 & c0) | ((VI)m0 & ~c0));                                    \
            m1 = (VT)(((VI)x1 & c1) | ((VI)m1 & ~c1));                                    \
            n0 |= x0 != x0;                                                               \
            n1 |= x1 != x1;                                                               \
        }                                                                                 \
        T m = m0[0];                                                                      \
        int any_nan = 0;                                                                  \
        for (int l = 0; l < W; l++) {                                                     \
            m = m0[l] CMP m ? m0[l] : m;                                                  \
            m = m1[l] CMP m ? m1[l] : m;                                                  \
            any_nan |= (n0[l] | n1[l]) != 0;                                              \
        }                                                                                 \
        *nan = any_nan;                                                                   \
        return m;                                                                         \
    }


/* Columns [j0, len) of p searched one at a time (float16; columns past the vectors) */
#define DEFINE_ARG_EACH_COL(SUF, T)                                                       \
    static void arg_each_col_##SUF(const T* p, int64_t n, int64_t s, int64_t j0,          \
                                   int64_t len, int is_max, int64_t* out) {               \
        for (int64_t j = j0; j < len; j++) {                                              \
            T b = p[j];                                                                   \
            out[j] = 0;                                                                   \
            if (b != b) continue;                                                         \
            int64_t nan_at = arg_scan_##SUF(p + j, 1, n, s, is_max, &b, &out[j]);         \
            if (nan_at >= 0) out[j] = nan_at;                                             \
        }                                                                                 \
    }

/* First index of the extreme of a row; the first NaN wins. */
#define DEFINE_ARG_ROW(SUF, T, VT, VI, W, FLOAT)                                          \
    DEFINE_ARG_SCAN(SUF, T, FLOAT)                                                        \
    DEFINE_BLOCK_EXTREME(block_max_##SUF, T, VT, VI, W, >)                                \
    DEFINE_BLOCK_EXTREME(block_min_##SUF, T, VT, VI, W, <)                                \
    static int64_t arg_row_##SUF(const char* base, int64_t n, int64_t s, int is_max) {    \
        const T* p = (const T*)base;                                                      \
        T best = p[0];                                                                    \
        int64_t bi = 0, b0 = 0;                                                           \
        if (FLOAT && best != best) return 0;                                              \
        if (s == 1) {                                                                     \
            for (; b0 + ARG_BLOCK <= n; b0 += ARG_BLOCK) {                                \
                int nan;                                                                  \
                T m = is_max ? block_max_##SUF(p + b0, ARG_BLOCK, &nan)                   \
                             : block_min_##SUF(p + b0, ARG_BLOCK, &nan);                  \
                if (FLOAT && nan) {                                                       \
                    for (int64_t i = b0;; i++)                                            \
                        if (p[i] != p[i]) return i;                                       \
                }                                                                         \
                if (is_max ? m > best : m < best) {                                       \
                    int64_t i = b0;                                                       \
                    while (p[i] != m) i++;                                                \
                    best = m;                                                             \
                    bi = i;                                                               \
                }                                                                         \
            }                                                                             \
        }                                                                                 \
        int64_t nan_at = arg_scan_##SUF(p, b0 > 0 ? b0 : 1, n, s, is_max, &best, &bi);    \
        return nan_at >= 0 ? nan_at : bi;                                                 \
    }

DEFINE_ARG_ROW(u8, uint8_t, v32u8, v32i8, 32, 0)
DEFINE_ARG_ROW(i8, int8_t, v32i8, v32i8, 32, 0)
DEFINE_ARG_ROW(i32, int32_t, v8i32, v8i32, 8, 0)
DEFINE_ARG_ROW(i64, int64_t, v4i64, v4i64, 4, 0)
DEFINE_ARG_ROW(f32, float, v8f, v8i, 8, 1)
DEFINE_ARG_ROW(f64, double, v4d, v4l, 4, 1)

/* Row i+R of the side-by-side columns folded into (b, k) by EM_ARG_TAKES. Selects only,
 * so the column loop vectorises. */
#define ARG_STEP(BT, IT, CMP, R)                                                          \
    {                                                                                     \
        BT x = (BT)p[(i + R) * s + j];                                                    \
        int upd = EM_ARG_TAKES(x CMP b, x, b);                                            \
        b = upd ? x : b;                                                                  \
        k = upd ? (IT)(i + R) : k;                                                        \
    }
#define ARG_COLS_PASS(BT, IT, CMP, ROWS)                                                  \
    for (int64_t j = 0; j < len; j++) {                                                   \
        BT b = best[j];                                                                   \
        IT k = idx[j];                                                                    \
        ARG_STEP(BT, IT, CMP, 0)                                                          \
        if (ROWS == 4) {                                                                  \
            ARG_STEP(BT, IT, CMP, 1)                                                      \
            ARG_STEP(BT, IT, CMP, 2)                                                      \
            ARG_STEP(BT, IT, CMP, 3)                                                      \
        }                                                                                 \
        best[j] = b;                                                                      \
        idx[j] = k;                                                                       \
    }

/* `len` side-by-side contiguous columns, rows `s` apart, n rows. The running best (type
 * BT) and its row (type IT, as wide as BT: GCC does not vectorise selects of mixed
 * widths) stay in registers over four rows per pass. */
#define DEFINE_ARG_COLS(SUF, T, BT, IT)                                                   \
    static void arg_cols_##SUF(const char* base, int64_t n, int64_t s, int64_t len,       \
                               int is_max, int64_t* out) {                                \
        const T* p = (const T*)base;                                                      \
        BT best[COL_CHUNK];                                                               \
        IT idx[COL_CHUNK];                                                                \
        for (int64_t j = 0; j < len; j++) {                                               \
            best[j] = (BT)p[j];                                                           \
            idx[j] = 0;                                                                   \
        }                                                                                 \
        int64_t i = 1;                                                                    \
        if (is_max) {                                                                     \
            for (; i + 4 <= n; i += 4) ARG_COLS_PASS(BT, IT, >, 4)                        \
            for (; i < n; i++) ARG_COLS_PASS(BT, IT, >, 1)                                \
        } else {                                                                          \
            for (; i + 4 <= n; i += 4) ARG_COLS_PASS(BT, IT, <, 4)                        \
            for (; i < n; i++) ARG_COLS_PASS(BT, IT, <, 1)                                \
        }                                                                                 \
        for (int64_t j = 0; j < len; j++) out[j] = idx[j];                                \
    }

DEFINE_ARG_COLS(u8, uint8_t, int32_t, int32_t)
DEFINE_ARG_COLS(i8, int8_t, int32_t, int32_t)

/* The same with explicit vectors of W lanes (GCC will not vectorise the loop above
 * without proof that the stack arrays do not alias the input); leftover columns are
 * scanned one at a time. */
#define ARG_VSTEP(VT, VI, IT, W, CMP, R)                                                  \
    {                                                                                     \
        VT x = *(const VT*)(p + (i + R) * s + v * W);                                     \
        VI upd = EM_ARG_TAKES(x CMP b, x, b);                                             \
        b = (VT)(((VI)x & upd) | ((VI)b & ~upd));                                         \
        k = (k & ~upd) | (((VI){0} + (IT)(i + R)) & upd);                                 \
    }
#define ARG_VPASS(VT, VI, IT, W, CMP, ROWS)                                               \
    for (int64_t v = 0; v < nv; v++) {                                                    \
        VT b = best[v];                                                                   \
        VI k = idx[v];                                                                    \
        ARG_VSTEP(VT, VI, IT, W, CMP, 0)                                                  \
        if (ROWS == 4) {                                                                  \
            ARG_VSTEP(VT, VI, IT, W, CMP, 1)                                              \
            ARG_VSTEP(VT, VI, IT, W, CMP, 2)                                              \
            ARG_VSTEP(VT, VI, IT, W, CMP, 3)                                              \
        }                                                                                 \
        best[v] = b;                                                                      \
        idx[v] = k;                                                                       \
    }
#define DEFINE_ARG_COLS_VEC(SUF, T, VT, VI, IT, W)                                        \
    DEFINE_ARG_EACH_COL(SUF, T)                                                           \
    static void arg_cols_##SUF(const char* base, int64_t n, int64_t s, int64_t len,       \
                               int is_max, int64_t* out) {                                \
        const T* p = (const T*)base;                                                      \
        VT best[COL_CHUNK / W];                                                           \
        VI idx[COL_CHUNK / W];                                                            \
        int64_t nv = len / W, i = 1;                                                      \
        for (int64_t v = 0; v < nv; v++) {                                                \
            best[v] = *(const VT*)(p + v * W);                                            \
            idx[v] = (VI){0};                                                             \
        }                                                                                 \
        if (is_max) {                                                                     \
            for (; i + 4 <= n; i += 4) ARG_VPASS(VT, VI, IT, W, >, 4)                     \
            for (; i < n; i++) ARG_VPASS(VT, VI, IT, W, >, 1)                             \
        } else {                                                                          \
            for (; i + 4 <= n; i += 4) ARG_VPASS(VT, VI, IT, W, <, 4)                     \
            for (; i < n; i++) ARG_VPASS(VT, VI, IT, W, <, 1)                             \
        }                                                                                 \
        for (int64_t v = 0; v < nv; v++)                                                  \
            for (int l = 0; l < W; l++) out[v * W + l] = idx[v][l];                       \
        arg_each_col_##SUF(p, n, s, nv * W, len, is_max, out);                            \
    }

DEFINE_ARG_COLS_VEC(i32, int32_t, v8i32, v8i32, int32_t, 8)
DEFINE_ARG_COLS_VEC(i64, int64_t, v4i64, v4i64, int64_t, 4)
DEFINE_ARG_COLS_VEC(f32, float, v8f, v8i, int32_t, 8)
DEFINE_ARG_COLS_VEC(f64, double, v4d, v4l, int64_t, 4)

/* float16 has no vector type here: a scalar search (a row is one column) */
DEFINE_ARG_SCAN(f16, em_half, 1)
DEFINE_ARG_EACH_COL(f16, em_half)
static int64_t arg_row_f16(const char* base, int64_t n, int64_t s, int is_max) {
    int64_t at;
    arg_each_col_f16((const em_half*)base, n, s, 0, 1, is_max, &at);
    return at;
}

static void arg_cols_f16(const char* base, int64_t n, int64_t s, int64_t len, int is_max,
                         int64_t* out) {
    arg_each_col_f16((const em_half*)base, n, s, 0, len, is_max, out);
}

typedef int64_t (*arg_row_fn)(const char*, int64_t, int64_t, int);
typedef void (*arg_cols_fn)(const char*, int64_t, int64_t, int64_t, int, int64_t*);
static const arg_row_fn ARG_ROWS[8] = {arg_row_u8, arg_row_u8, arg_row_i8, arg_row_i32,
                                       arg_row_i64, arg_row_f16, arg_row_f32, arg_row_f64};
static const arg_cols_fn ARG_COLS[8] = {arg_cols_u8, arg_cols_u8, arg_cols_i8, arg_cols_i32,
                                        arg_cols_i64, arg_cols_f16, arg_cols_f32, arg_cols_f64};

/* One pass along `dim` (size n, input stride s) for each position of the other dims k;
 * with m > 0, the innermost of them (size m, contiguous) is walked COL_CHUNK at a time. */
typedef struct {
    dims_t k;
    int64_t n, s, m, ostride, chunks, isz;
    int dt, is_max;
    const char* a;
    int64_t* out;
} arg_t;

static void arg_rows_part(void* ctx, int t, int nt) {
    const arg_t* g = ctx;
    int64_t begin, end, idx[EM_MAX_DIMS], ka = 0, ko = 0;
    split(numel(&g->k), t, nt, &begin, &end);
    if (begin < end) unravel(&g->k, begin, idx, &ka, &ko);
    for (int64_t o = begin; o < end; o++) {
        g->out[ko] = ARG_ROWS[g->dt](g->a + ka * g->isz, g->n, g->s, g->is_max);
        advance(&g->k, idx, &ka, &ko);
    }
}

static void arg_cols_part(void* ctx, int t, int nt) {
    const arg_t* g = ctx;
    int64_t begin, end, bi[COL_CHUNK];
    split(numel(&g->k) * g->chunks, t, nt, &begin, &end);
    for (int64_t it = begin; it < end; it++) {
        int64_t idx[EM_MAX_DIMS], ka, ko;
        unravel(&g->k, it / g->chunks, idx, &ka, &ko);
        int64_t j0 = (it % g->chunks) * COL_CHUNK, len = min64(COL_CHUNK, g->m - j0);
        ARG_COLS[g->dt](g->a + (ka + j0) * g->isz, g->n, g->s, len, g->is_max, bi);
        for (int64_t j = 0; j < len; j++) g->out[ko + (j0 + j) * g->ostride] = bi[j];
    }
}

int em_argextreme(int is_max, int dt, intptr_t out, intptr_t a, int nk, const char* geometry) {
    if (dt == EM_BFLOAT16) return no_bf16("argmax/argmin");
    if (nk > EM_MAX_DIMS) return too_many_dims(nk);
    arg_t g;
    dims_t along;
    load_dims(&along, 1, load_dims(&g.k, nk, geometry));
    g.n = along.size[0];
    g.s = along.s1[0];
    int64_t nout = numel(&g.k);
    g.dt = dt;
    g.is_max = is_max;
    g.isz = ITEMSIZE[dt];
    g.a = (const char*)a;
    g.out = (int64_t*)out;
    /* side-by-side columns keep 32-bit row numbers for 1- to 4-byte types */
    int narrow = dt != EM_INT64 && dt != EM_FLOAT64 && dt != EM_FLOAT16;
    g.m = g.s != 1 && !(narrow && g.n > INT32_MAX) ? take_column_dim(&g.k, &g.ostride, 0) : 0;
    if (g.m) {
        g.chunks = (g.m + COL_CHUNK - 1) / COL_CHUNK;
        run_parts(nout * g.n, numel(&g.k) * g.chunks, arg_cols_part, &g);
    } else {
        run_parts(nout * g.n, nout, arg_rows_part, &g);
    }
    return 0;
}

/* ---- cumsum --------------------------------------------------------------------------- */

/* Any dtype's element as an accumulator: a double when fl, else an int64. */
static inline acc_t load(int dt, const char* p, int fl) {
    acc_t a;
#define LOAD_CASE(CODE, T)                                                                \
    case CODE: {                                                                          \
        const T x = *(const T*)p;                                                         \
        if (fl) a.f = (double)x; else a.i = (int64_t)x;                                   \
        break;                                                                            \
    }
    switch (dt) {
        LOAD_CASE(EM_BOOL, uint8_t) LOAD_CASE(EM_UINT8, uint8_t) LOAD_CASE(EM_INT8, int8_t)
        LOAD_CASE(EM_INT32, int32_t) LOAD_CASE(EM_INT64, int64_t)
        LOAD_CASE(EM_FLOAT16, em_half) LOAD_CASE(EM_FLOAT32, float)
        default: LOAD_CASE(EM_FLOAT64, double)
    }
    return a;
}

/* The common pairs get typed loops in em_reduce.h's accumulator of the output's family;
 * anything else converts element by element (into a double or a wrapping int64). */
#define CUMSUM_LINE(IT, OT, FAMILY)                                                       \
    {                                                                                     \
        const IT* p = (const IT*)pa;                                                      \
        OT* q = (OT*)po;                                                                  \
        EM_RED_TYPE(EM_CUMSUM_ACC(FAMILY)) acc = 0;                                       \
        for (int64_t i = 0; i < n; i++) {                                                 \
            acc += p[i * sa];                                                             \
            q[i * so] = (OT)acc;                                                          \
        }                                                                                 \
        return;                                                                           \
    }

static void cumsum_line(int in_dt, int out_dt, const char* pa, int64_t sa, char* po, int64_t so,
                        int64_t n) {
    if (out_dt == EM_INT64) {
        switch (in_dt) {
            case EM_BOOL: case EM_UINT8: CUMSUM_LINE(uint8_t, int64_t, INT)
            case EM_INT8: CUMSUM_LINE(int8_t, int64_t, INT)
            case EM_INT32: CUMSUM_LINE(int32_t, int64_t, INT)
            case EM_INT64: CUMSUM_LINE(int64_t, int64_t, INT)
            default: break;
        }
    } else if (out_dt == in_dt) {
        switch (in_dt) {
            case EM_FLOAT16: CUMSUM_LINE(em_half, em_half, HALF)
            case EM_FLOAT32: CUMSUM_LINE(float, float, FLOAT)
            case EM_FLOAT64: CUMSUM_LINE(double, double, FLOAT)
            default: break;
        }
    }
    int fl = is_float(out_dt), isz = ITEMSIZE[in_dt], osz = ITEMSIZE[out_dt];
    acc_t acc;
    if (fl) acc.f = 0.0; else acc.i = 0;
    for (int64_t i = 0; i < n; i++) {
        const acc_t x = load(in_dt, pa + i * sa * isz, fl);
        if (fl) acc.f += x.f; else acc.i = WRAP_ADD(acc.i, x.i);
        store(out_dt, po + i * so * osz, acc, fl);
    }
}

/* Side-by-side lines for float32 (the common case of a cumsum over a leading dim). */
static void cumsum_cols_f32(const float* p, int64_t sa, float* q, int64_t so, int64_t n,
                            int64_t len) {
    double acc[COL_CHUNK];
    for (int64_t j = 0; j < len; j++) acc[j] = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float* src = p + i * sa;
        float* dst = q + i * so;
        for (int64_t j = 0; j < len; j++) {
            acc[j] += src[j];
            dst[j] = (float)acc[j];
        }
    }
}

typedef struct {
    dims_t k;
    int64_t n, sa, so, m, chunks;
    int in_dt, out_dt;
    const char* a;
    char* out;
} scan_t;

static void scan_lines_part(void* ctx, int t, int nt) {
    const scan_t* g = ctx;
    int64_t begin, end, idx[EM_MAX_DIMS], ka = 0, ko = 0;
    split(numel(&g->k), t, nt, &begin, &end);
    if (begin < end) unravel(&g->k, begin, idx, &ka, &ko);
    for (int64_t o = begin; o < end; o++) {
        cumsum_line(g->in_dt, g->out_dt, g->a + ka * ITEMSIZE[g->in_dt], g->sa,
                    g->out + ko * ITEMSIZE[g->out_dt], g->so, g->n);
        advance(&g->k, idx, &ka, &ko);
    }
}

static void scan_cols_part(void* ctx, int t, int nt) {
    const scan_t* g = ctx;
    int64_t begin, end;
    split(numel(&g->k) * g->chunks, t, nt, &begin, &end);
    for (int64_t it = begin; it < end; it++) {
        int64_t idx[EM_MAX_DIMS], ka, ko;
        unravel(&g->k, it / g->chunks, idx, &ka, &ko);
        int64_t j0 = (it % g->chunks) * COL_CHUNK;
        cumsum_cols_f32((const float*)g->a + ka + j0, g->sa, (float*)g->out + ko + j0, g->so,
                        g->n, min64(COL_CHUNK, g->m - j0));
    }
}

int em_cumsum(int in_dt, int out_dt, intptr_t out, intptr_t a, int nk, const char* geometry) {
    if (in_dt == EM_BFLOAT16 || out_dt == EM_BFLOAT16) return no_bf16("cumsum");
    if (nk > EM_MAX_DIMS) return too_many_dims(nk);
    scan_t g;
    dims_t along;
    load_dims(&along, 1, load_dims(&g.k, nk, geometry));
    g.n = along.size[0];
    g.sa = along.s1[0];
    g.so = along.s2[0];
    g.in_dt = in_dt;
    g.out_dt = out_dt;
    g.a = (const char*)a;
    g.out = (char*)out;
    int64_t nout = numel(&g.k), ostride = 0;
    g.m = 0;
    if (in_dt == EM_FLOAT32 && out_dt == EM_FLOAT32 && g.sa != 1)
        g.m = take_column_dim(&g.k, &ostride, 1);
    if (g.m) {
        g.chunks = (g.m + COL_CHUNK - 1) / COL_CHUNK;
        run_parts(nout * g.n, numel(&g.k) * g.chunks, scan_cols_part, &g);
    } else {
        run_parts(nout * g.n, nout, scan_lines_part, &g);
    }
    return 0;
}
