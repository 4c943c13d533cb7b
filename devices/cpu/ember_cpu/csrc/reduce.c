/* Reductions of the CPU device: sum, prod, amax, amin, any, all (argmax, argmin and
 * cumsum, which walk one dim, are in scan.c).
 *
 * What each op computes (accumulator types, identities, combines, the blocked order of
 * float sums and the pairwise tree of columns) is the shared em_reduce.h; this file keeps
 * the loops. The runtime's ReductionPlan gives the kept dims (K) and the reduced dims (R),
 * each coalesced and in row-major order; one of two loops runs:
 *   - rows: each output reduces R, whose innermost dim is a (usually contiguous) row;
 *     a single output (a.sum()) is split into chunks across threads;
 *   - columns: when a kept dim is contiguous in the input (sum over dim 0 of a matrix),
 *     up to COL_CHUNK outputs are accumulated side by side, EM_TREE_ROWS reduced
 *     positions combined per pass (see DEFINE_COL).
 * Parallel regions are entered only for work above EM_PARALLEL_GRAIN (run_parts). Rows
 * hold every accumulator in an acc_t (int64 or double: exact for each of em_reduce.h's).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __F16C__
#include <immintrin.h>
#endif

#include "em_reduce.h"
#include "strided.h"

/* The ops in the order of their codes (kernels_reduce.REDUCTION_CODES), and the dtypes
 * with kernels of their own: suffix, C type, em_reduce.h family (bool reads as uint8). */
#define FOR_OPS(X) X(SUM) X(PROD) X(AMAX) X(AMIN) X(ANY) X(ALL)
#define FOR_DTYPES(X, OP)                                                                 \
    X(OP, u8, uint8_t, INT) X(OP, i8, int8_t, INT) X(OP, i32, int32_t, INT)               \
    X(OP, i64, int64_t, INT) X(OP, f16, em_half, FLOAT) X(OP, f32, float, FLOAT)          \
    X(OP, f64, double, DOUBLE)
#define OP_CODE(OP) RED_##OP,
enum { FOR_OPS(OP_CODE) RED_COUNT };

#define ACC_T(OP, FAMILY) EM_RED_TYPE(EM_RED_ACC(OP, FAMILY))
#define PART_T(OP, FAMILY) EM_RED_TYPE(EM_RED_PART(OP, FAMILY))
#define COMBINE(OP) EM_RED_COMBINE(OP)
#define LOGICAL_BLOCK 4096 /* any/all stop at the first block that decides them */

/* acc op= p[0], p[stride], ..., p[(n-1)*stride] */
typedef void (*row_fn)(const char* p, int64_t n, int64_t stride, acc_t* acc);
/* acc[j] op= p[r * rs + j] for r < rows, j < n (rows contiguous, rs apart); acc holds the
 * accumulators of em_reduce.h's type (never acc_t[]: GCC does not vectorise loops over
 * union members). */
typedef void (*col_fn)(const char* p, int64_t rs, int rows, int64_t n, void* acc);

/* ---- row kernels ---------------------------------------------------------------------- */

/* Integers: one chain in the accumulator type, exact in any order, so GCC vectorises it. */
#define DEFINE_INT_ROW(OP, SUF, T, FAMILY)                                                \
    static void row_##OP##_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {    \
        typedef ACC_T(OP, FAMILY) acc_type;                                               \
        const T* p = (const T*)base;                                                      \
        acc_type total = (acc_type)acc->i;                                                \
        if (s == 1) {                                                                     \
            for (int64_t i = 0; i < n; i++) {                                             \
                const acc_type x = p[i];                                                  \
                total = COMBINE(OP)(total, x);                                            \
            }                                                                             \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) {                                             \
                const acc_type x = p[i * s];                                              \
                total = COMBINE(OP)(total, x);                                            \
            }                                                                             \
        }                                                                                 \
        acc->i = (int64_t)total;                                                          \
    }

/* any/all for every dtype, a block at a time until one decides the result. */
#define DEFINE_LOGICAL_ROW(OP, SUF, T, FAMILY)                                            \
    static void row_##OP##_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {    \
        const T* p = (const T*)base;                                                      \
        const int undecided = EM_RED_IDENTITY(OP, FAMILY);                                \
        for (int64_t i0 = 0; i0 < n && acc->i == undecided; i0 += LOGICAL_BLOCK) {        \
            int64_t end = min64(n, i0 + LOGICAL_BLOCK);                                   \
            int r = undecided;                                                            \
            if (s == 1) {                                                                 \
                for (int64_t i = i0; i < end; i++)                                        \
                    r = COMBINE(OP)(r, EM_RED_TERM(OP, T, p[i]));                         \
            } else {                                                                      \
                for (int64_t i = i0; i < end; i++)                                        \
                    r = COMBINE(OP)(r, EM_RED_TERM(OP, T, p[i * s]));                     \
            }                                                                             \
            acc->i = COMBINE(OP)(acc->i, r);                                              \
        }                                                                                 \
    }

/* Float products in eight lanes of their double part over contiguous rows. */
#define DEFINE_PROD_ROW(SUF, T)                                                           \
    static void row_PROD_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {      \
        const T* p = (const T*)base;                                                      \
        double lane[8] = {1, 1, 1, 1, 1, 1, 1, 1};                                        \
        int64_t i = 0;                                                                    \
        if (s == 1) {                                                                     \
            for (; i + 8 <= n; i += 8)                                                    \
                for (int l = 0; l < 8; l++) lane[l] *= (double)p[i + l];                  \
        }                                                                                 \
        double total = acc->f;                                                            \
        for (int l = 0; l < 8; l++) total *= lane[l];                                     \
        for (; i < n; i++) total *= (double)p[i * s];                                     \
        acc->f = total;                                                                   \
    }

#define INT_ROWS(OP) DEFINE_INT_ROW(OP, u8, uint8_t, INT) DEFINE_INT_ROW(OP, i8, int8_t, INT) \
    DEFINE_INT_ROW(OP, i32, int32_t, INT) DEFINE_INT_ROW(OP, i64, int64_t, INT)
INT_ROWS(SUM)
INT_ROWS(PROD)
INT_ROWS(AMAX)
INT_ROWS(AMIN)
FOR_DTYPES(DEFINE_LOGICAL_ROW, ANY)
FOR_DTYPES(DEFINE_LOGICAL_ROW, ALL)
DEFINE_PROD_ROW(f16, em_half)
DEFINE_PROD_ROW(f32, float)
DEFINE_PROD_ROW(f64, double)

/* Float max and min: compares, and a NaN flag on the side (the compare alone would skip
 * NaN); contiguous float32/float64 rows by vector compares and blends, 2W at a time. */
#define DEFINE_EXTREME_ROW(OP, CMP, SUF, T, VT, VI, W)                                    \
    static void row_##OP##_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {    \
        const T* p = (const T*)base;                                                      \
        const T init = EM_RED_IDENTITY(OP, FLOAT);                                        \
        int64_t i = 0;                                                                    \
        T m = init;                                                                       \
        int nan = 0;                                                                      \
        if (W > 1 && s == 1 && n >= 2 * W) {                                              \
            VT m0, m1;                                                                    \
            VI n0 = {0}, n1 = {0};                                                        \
            for (int l = 0; l < W; l++) m0[l] = m1[l] = init;                             \
            for (; i + 2 * W <= n; i += 2 * W) {                                          \
                VT x0 = *(const VT*)(p + i), x1 = *(const VT*)(p + i + W);                \
                VI c0 = x0 CMP m0, c1 = x1 CMP m1;                                        \
                m0 = (VT)(((VI)x0 & c0) | ((VI)m0 & ~c0));                                \
                m1 = (VT)(((VI)x1 & c1) | ((VI)m1 & ~c1));                                \
                n0 |= x0 != x0;                                                           \
                n1 |= x1 != x1;                                                           \
            }                                                                             \
            n0 |= n1;                                                                     \
            for (int l = 0; l < W; l++) {                                                 \
                m = m0[l] CMP m ? m0[l] : m;                                              \
                m = m1[l] CMP m ? m1[l] : m;                                              \
                nan |= n0[l] != 0;                                                        \
            }                                                                             \
        }                                                                                 \
        for (; i < n; i++) {                                                              \
            T x = p[i * s];                                                               \
            m = x CMP m ? x : m;                                                          \
            nan |= x != x;                                                                \
        }                                                                                 \
        const double r = nan ? (double)NAN : (double)m;                                   \
        acc->f = COMBINE(OP)(acc->f, r);                                                  \
    }

/* float16 has no vector type here: W = 1 leaves out the vector loop */
DEFINE_EXTREME_ROW(AMAX, >, f16, em_half, v8f, v8i, 1)
DEFINE_EXTREME_ROW(AMIN, <, f16, em_half, v8f, v8i, 1)
DEFINE_EXTREME_ROW(AMAX, >, f32, float, v8f, v8i, 8)
DEFINE_EXTREME_ROW(AMIN, <, f32, float, v8f, v8i, 8)
DEFINE_EXTREME_ROW(AMAX, >, f64, double, v4d, v4l, 4)
DEFINE_EXTREME_ROW(AMIN, <, f64, double, v4d, v4l, 4)

/* Float sums: eight W-lane vector accumulators over contiguous p[i, end) (from i, which
 * advances), added pairwise into v. */
#define SUM8_VECTORS(VT, W, v)                                                            \
    VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};    \
    for (; i + 8 * W <= end; i += 8 * W) {                                                \
        a0 += *(const VT*)(p + i);                                                        \
        a1 += *(const VT*)(p + i + W);                                                    \
        a2 += *(const VT*)(p + i + 2 * W);                                                \
        a3 += *(const VT*)(p + i + 3 * W);                                                \
        a4 += *(const VT*)(p + i + 4 * W);                                                \
        a5 += *(const VT*)(p + i + 5 * W);                                                \
        a6 += *(const VT*)(p + i + 6 * W);                                                \
        a7 += *(const VT*)(p + i + 7 * W);                                                \
    }                                                                                     \
    VT v = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))

/* float16 sum: float lanes per block (converted 8 at a time by F16C where the CPU has
 * it), blocks added in double. */
static void row_SUM_f16(const char* base, int64_t n, int64_t s, acc_t* acc) {
    const em_half* p = (const em_half*)base;
    double total = 0.0;
    for (int64_t i0 = 0; i0 < n; i0 += EM_SUM_BLOCK) {
        int64_t end = min64(n, i0 + EM_SUM_BLOCK), i = i0;
        double block = 0.0;
        if (s == 1) {
#ifdef __F16C__
            v8f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
            for (; i + 32 <= end; i += 32) {
                a0 += (v8f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(p + i)));
                a1 += (v8f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(p + i + 8)));
                a2 += (v8f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(p + i + 16)));
                a3 += (v8f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(p + i + 24)));
            }
            v8f v = (a0 + a1) + (a2 + a3);
            for (int l = 0; l < 8; l++) block += v[l];
#else
            float lane[16] = {0};
            for (; i + 16 <= end; i += 16)
                for (int l = 0; l < 16; l++) lane[l] += (float)p[i + l];
            for (int l = 0; l < 16; l++) block += lane[l];
#endif
        }
        for (; i < end; i++) block += (float)p[i * s];
        total += block;
    }
    acc->f += total;
}

/* float32 sum: eight 8-lane float accumulators per block, blocks in double. 256-bit
 * vectors stream at least as fast as 512-bit ones on the CPUs measured. */
static void row_SUM_f32(const char* base, int64_t n, int64_t s, acc_t* acc) {
    const float* p = (const float*)base;
    double total = 0.0;
    for (int64_t i0 = 0; i0 < n; i0 += EM_SUM_BLOCK) {
        int64_t end = min64(n, i0 + EM_SUM_BLOCK), i = i0;
        double block = 0.0;
        if (s == 1) {
            SUM8_VECTORS(v8f, 8, v);
            for (int l = 0; l < 8; l++) block += v[l];
            for (; i < end; i++) block += p[i];
        } else {
            float b = 0.0f;
            for (; i < end; i++) b += p[i * s];
            block = b;
        }
        total += block;
    }
    acc->f += total;
}

static void row_SUM_f64(const char* base, int64_t n, int64_t s, acc_t* acc) {
    const double* p = (const double*)base;
    const int64_t end = n;
    double total = 0.0;
    int64_t i = 0;
    if (s == 1) {
        SUM8_VECTORS(v4d, 4, v);
        for (int l = 0; l < 4; l++) total += v[l];
    }
    for (; i < n; i++) total += p[i * s];
    acc->f += total;
}

/* ---- column kernels ------------------------------------------------------------------- */

/* EM_TREE_ROWS rows are combined per pass as EM_TREE8 in the part type (float for
 * float32 sums), then folded into the accumulator once: a read-modify-write of the
 * accumulators per input element would cap the loop at half the memory bandwidth. Every
 * load is unconditional: the combine may be a select that GCC must if-convert. */
#define DEFINE_COL(OP, SUF, T, FAMILY)                                                    \
    static void col_##OP##_##SUF(const char* base, int64_t rs, int rows, int64_t n,       \
                                 void* accumulators) {                                    \
        typedef PART_T(OP, FAMILY) part_t;                                                \
        typedef ACC_T(OP, FAMILY) acc_type;                                               \
        const T* p0 = (const T*)base;                                                     \
        acc_type* a = accumulators;                                                       \
        if (rows == EM_TREE_ROWS) {                                                       \
            const T *p1 = p0 + rs, *p2 = p0 + 2 * rs, *p3 = p0 + 3 * rs, *p4 = p0 + 4 * rs; \
            const T *p5 = p0 + 5 * rs, *p6 = p0 + 6 * rs, *p7 = p0 + 7 * rs;              \
            for (int64_t j = 0; j < n; j++) {                                             \
                const part_t v0 = EM_RED_TERM(OP, T, p0[j]), v1 = EM_RED_TERM(OP, T, p1[j]); \
                const part_t v2 = EM_RED_TERM(OP, T, p2[j]), v3 = EM_RED_TERM(OP, T, p3[j]); \
                const part_t v4 = EM_RED_TERM(OP, T, p4[j]), v5 = EM_RED_TERM(OP, T, p5[j]); \
                const part_t v6 = EM_RED_TERM(OP, T, p6[j]), v7 = EM_RED_TERM(OP, T, p7[j]); \
                part_t tree;                                                              \
                EM_TREE8(part_t, COMBINE(OP), tree, v0, v1, v2, v3, v4, v5, v6, v7)       \
                const acc_type prev = a[j], rows8 = (acc_type)tree;                       \
                a[j] = COMBINE(OP)(prev, rows8);                                          \
            }                                                                             \
            return;                                                                       \
        }                                                                                 \
        for (int r = 0; r < rows; r++) {                                                  \
            const T* q = p0 + r * rs;                                                     \
            for (int64_t j = 0; j < n; j++) {                                             \
                const acc_type prev = a[j], v = (acc_type)(part_t)EM_RED_TERM(OP, T, q[j]); \
                a[j] = COMBINE(OP)(prev, v);                                              \
            }                                                                             \
        }                                                                                 \
    }

#define COLS_OF(OP) FOR_DTYPES(DEFINE_COL, OP)
FOR_OPS(COLS_OF)

/* ---- per op and dtype: kernels, accumulator kind, identity -------------------------- */

/* The accumulator of a column buffer, by em_reduce.h tag; kinds from KIND_f32 on are
 * floats, held in an acc_t's f (the others in its i). */
enum { KIND_u64, KIND_i64, KIND_i32, KIND_f32, KIND_f64 };
#define IDENTITY_AS_u64(x) {.i = (int64_t)(x)}
#define IDENTITY_AS_i64(x) {.i = (x)}
#define IDENTITY_AS_i32(x) {.i = (x)}
#define IDENTITY_AS_f32(x) {.f = (x)}
#define IDENTITY_AS_f64(x) {.f = (x)}

typedef struct {
    row_fn row;
    col_fn col;
    int kind;
    acc_t identity;
} reduction_t;

#define ENTRY(OP, SUF, T, FAMILY)                                                         \
    {row_##OP##_##SUF, col_##OP##_##SUF, EM_RED_CAT(KIND_, EM_RED_ACC(OP, FAMILY)),       \
     EM_RED_CAT(IDENTITY_AS_, EM_RED_ACC(OP, FAMILY))(EM_RED_IDENTITY(OP, FAMILY))},
#define ENTRIES(OP) {ENTRY(OP, u8, uint8_t, INT) FOR_DTYPES(ENTRY, OP)},
/* by op code, then dtype code (bool first, as uint8) */
static const reduction_t REDUCTIONS[RED_COUNT][8] = {FOR_OPS(ENTRIES)};

static inline void combine(int op, int fl, acc_t* into, acc_t v) {
#define COMBINE_CASE(OP)                                                                  \
    case RED_##OP:                                                                        \
        if (fl) {                                                                         \
            const ACC_T(OP, DOUBLE) a = (ACC_T(OP, DOUBLE))into->f, b = (ACC_T(OP, DOUBLE))v.f; \
            into->f = COMBINE(OP)(a, b);                                                  \
        } else {                                                                          \
            const ACC_T(OP, INT) a = (ACC_T(OP, INT))into->i, b = (ACC_T(OP, INT))v.i;    \
            into->i = (int64_t)COMBINE(OP)(a, b);                                         \
        }                                                                                 \
        break;
    switch (op) { FOR_OPS(COMBINE_CASE) }
}

/* ---- the reduction executor ----------------------------------------------------------- */

typedef struct {
    int op, fl, isz, out_dt, osz;
    const reduction_t* red;
    const char* a;
    char* out;
    dims_t k;      /* kept dims: s1 input strides, s2 output strides */
    dims_t r;      /* reduced dims: s1 input strides */
    dims_t router; /* reduced dims but the innermost (the rows) */
    int64_t rowlen, rowstride, rtotal, nout;
} plan_t;

/* acc op= the flattened reduced elements [begin, end) at input offset `base` (elements) */
static void reduce_span(const plan_t* pl, int64_t base, int64_t begin, int64_t end, acc_t* acc) {
    if (begin >= end) return;
    int64_t idx[EM_MAX_DIMS], off, unused;
    int64_t r = begin / pl->rowlen, c = begin % pl->rowlen;
    unravel(&pl->router, r, idx, &off, &unused);
    for (int64_t pos = begin; pos < end;) {
        int64_t len = min64(pl->rowlen - c, end - pos);
        pl->red->row(pl->a + (base + off + c * pl->rowstride) * pl->isz, len, pl->rowstride, acc);
        pos += len;
        c = 0;
        advance(&pl->router, idx, &off, &unused);
    }
}

/* rows: outputs split across threads, each reducing its whole span */
static void rows_part(void* ctx, int t, int nt) {
    const plan_t* pl = ctx;
    int64_t begin, end, idx[EM_MAX_DIMS], ka = 0, ko = 0;
    split(pl->nout, t, nt, &begin, &end);
    if (begin < end) unravel(&pl->k, begin, idx, &ka, &ko);
    for (int64_t o = begin; o < end; o++) {
        acc_t acc = pl->red->identity;
        reduce_span(pl, ka, 0, pl->rtotal, &acc);
        store(pl->out_dt, pl->out + ko * pl->osz, acc, pl->fl);
        advance(&pl->k, idx, &ka, &ko);
    }
}

/* rows, few outputs: each output's span cut into `per` chunks, partials in `part` */
typedef struct {
    const plan_t* pl;
    int64_t per;
    acc_t* part;
} chunks_t;

static void chunks_part(void* ctx, int t, int nt) {
    const chunks_t* ch = ctx;
    const plan_t* pl = ch->pl;
    int64_t begin, end;
    split(pl->nout * ch->per, t, nt, &begin, &end);
    for (int64_t it = begin; it < end; it++) {
        int64_t o = it / ch->per, c = it % ch->per, idx[EM_MAX_DIMS], ka, ko;
        unravel(&pl->k, o, idx, &ka, &ko);
        ch->part[it] = pl->red->identity;
        reduce_span(pl, ka, pl->rtotal * c / ch->per, pl->rtotal * (c + 1) / ch->per,
                    &ch->part[it]);
    }
}

static int run_rows(const plan_t* pl) {
    int nt = em_threads();
    if (pl->nout < nt && pl->rtotal >= 2 * EM_PARALLEL_GRAIN) {
        chunks_t ch = {pl, min64((nt + pl->nout - 1) / pl->nout, pl->rtotal / EM_PARALLEL_GRAIN),
                       NULL};
        ch.part = malloc((size_t)(pl->nout * ch.per) * sizeof(acc_t));
        if (!ch.part) {
            strcpy(em_error_message, "out of memory");
            return 2;
        }
        run_parts(pl->nout * pl->rtotal, pl->nout * ch.per, chunks_part, &ch);
        int64_t idx[EM_MAX_DIMS], ka, ko;
        unravel(&pl->k, 0, idx, &ka, &ko);
        for (int64_t o = 0; o < pl->nout; o++) {
            acc_t acc = ch.part[o * ch.per];
            for (int64_t c = 1; c < ch.per; c++)
                combine(pl->op, pl->fl, &acc, ch.part[o * ch.per + c]);
            store(pl->out_dt, pl->out + ko * pl->osz, acc, pl->fl);
            advance(&pl->k, idx, &ka, &ko);
        }
        free(ch.part);
        return 0;
    }
    run_parts(pl->nout * pl->rtotal, pl->nout, rows_part, (void*)pl);
    return 0;
}

static inline acc_t col_get(const void* buf, int kind, int64_t j) {
    acc_t a;
    switch (kind) {
        case KIND_i32: a.i = ((const int32_t*)buf)[j]; break;
        case KIND_f32: a.f = ((const float*)buf)[j]; break;
        case KIND_f64: a.f = ((const double*)buf)[j]; break;
        default: a.i = ((const int64_t*)buf)[j]; break;
    }
    return a;
}

static inline void col_set(void* buf, int kind, int64_t j, acc_t a) {
    switch (kind) {
        case KIND_i32: ((int32_t*)buf)[j] = (int32_t)a.i; break;
        case KIND_f32: ((float*)buf)[j] = (float)a.f; break;
        case KIND_f64: ((double*)buf)[j] = a.f; break;
        default: ((int64_t*)buf)[j] = a.i; break;
    }
}

/* columns: strips of up to COL_CHUNK outputs along the contiguous kept dim (size m,
 * output stride ostride), each strip reduced over rsplit parts of the reduced positions */
typedef struct {
    const plan_t* pl;
    const dims_t* outer; /* the kept dims but the column dim */
    int64_t m, ostride, chunks, rsplit;
    void* part; /* rsplit > 1: COL_CHUNK accumulators per (strip, part) */
} columns_t;

static void column_strip(const columns_t* cs, int64_t item, int64_t rs, void* acc) {
    const plan_t* pl = cs->pl;
    int64_t idx[EM_MAX_DIMS], ka, ko, off, unused;
    unravel(cs->outer, item / cs->chunks, idx, &ka, &ko);
    int64_t j0 = (item % cs->chunks) * COL_CHUNK, len = min64(COL_CHUNK, cs->m - j0);
    int64_t rbegin = pl->rtotal * rs / cs->rsplit, rend = pl->rtotal * (rs + 1) / cs->rsplit;
    for (int64_t j = 0; j < len; j++) col_set(acc, pl->red->kind, j, pl->red->identity);
    /* [rbegin, rend) runs over the reduced positions, the innermost reduced dim (rin
     * rows, rstride apart) fastest; its rows go to the kernel EM_TREE_ROWS at a time */
    int64_t rin = pl->r.n ? pl->r.size[pl->r.n - 1] : 1;
    int64_t rstride = pl->r.n ? pl->r.s1[pl->r.n - 1] : 0;
    int64_t c = rin ? rbegin % rin : 0;
    if (rbegin < rend) unravel(&pl->router, rbegin / rin, idx, &off, &unused);
    for (int64_t pos = rbegin; pos < rend;) {
        int64_t count = min64(rin - c, rend - pos);
        const char* line = pl->a + (ka + off + c * rstride + j0) * pl->isz;
        for (int64_t r = 0; r < count; r += EM_TREE_ROWS) {
            int rows = (int)min64(EM_TREE_ROWS, count - r);
            pl->red->col(line + r * rstride * pl->isz, rstride, rows, len, acc);
        }
        pos += count;
        c = 0;
        advance(&pl->router, idx, &off, &unused);
    }
    if (cs->rsplit == 1) {
        for (int64_t j = 0; j < len; j++)
            store(pl->out_dt, pl->out + (ko + (j0 + j) * cs->ostride) * pl->osz,
                  col_get(acc, pl->red->kind, j), pl->fl);
    }
}

static void columns_part(void* ctx, int t, int nt) {
    const columns_t* cs = ctx;
    _Alignas(64) union { /* the accumulators of one strip, of the op's kind */
        int64_t i[COL_CHUNK];
        int32_t w[COL_CHUNK];
        float f[COL_CHUNK];
        double d[COL_CHUNK];
    } local;
    int64_t begin, end;
    int64_t items = numel(cs->outer) * cs->chunks;
    split(items * cs->rsplit, t, nt, &begin, &end);
    for (int64_t it = begin; it < end; it++) {
        void* acc = cs->part ? (char*)cs->part + it * COL_CHUNK * 8 : (void*)&local;
        column_strip(cs, it / cs->rsplit, it % cs->rsplit, acc);
    }
}

static int run_columns(const plan_t* pl, const dims_t* outer, int64_t m, int64_t ostride) {
    int nt = em_threads();
    columns_t cs = {pl, outer, m, ostride, (m + COL_CHUNK - 1) / COL_CHUNK, 1, NULL};
    int64_t items = numel(outer) * cs.chunks, work = pl->nout * pl->rtotal;
    if (items < nt && work >= 2 * EM_PARALLEL_GRAIN) {
        cs.rsplit = min64((nt + items - 1) / items, pl->rtotal);
        cs.part = malloc((size_t)(items * cs.rsplit * COL_CHUNK) * 8);
        if (!cs.part) {
            strcpy(em_error_message, "out of memory");
            return 2;
        }
    }
    run_parts(work, items * cs.rsplit, columns_part, &cs);
    if (cs.part) {
        for (int64_t item = 0; item < items; item++) {
            int64_t idx[EM_MAX_DIMS], ka, ko;
            unravel(outer, item / cs.chunks, idx, &ka, &ko);
            int64_t j0 = (item % cs.chunks) * COL_CHUNK, len = min64(COL_CHUNK, m - j0);
            char* acc = (char*)cs.part + item * cs.rsplit * COL_CHUNK * 8;
            for (int64_t j = 0; j < len; j++) {
                acc_t total = col_get(acc, pl->red->kind, j);
                for (int64_t rs = 1; rs < cs.rsplit; rs++)
                    combine(pl->op, pl->fl, &total,
                            col_get(acc + rs * COL_CHUNK * 8, pl->red->kind, j));
                store(pl->out_dt, pl->out + (ko + (j0 + j) * ostride) * pl->osz, total, pl->fl);
            }
        }
        free(cs.part);
    }
    return 0;
}

int em_reduce(int op, int in_dt, int out_dt, intptr_t out, intptr_t a, int nk, int nr,
              const char* geometry) {
    if (nk > EM_MAX_DIMS || nr > EM_MAX_DIMS) return too_many_dims(nk > nr ? nk : nr);
    if (in_dt == EM_BFLOAT16) return no_bf16("reduce");
    plan_t pl = {.op = op, .red = &REDUCTIONS[op][in_dt], .isz = ITEMSIZE[in_dt],
                 .out_dt = out_dt, .osz = ITEMSIZE[out_dt], .a = (const char*)a,
                 .out = (char*)out};
    pl.fl = pl.red->kind >= KIND_f32;
    load_dims(&pl.r, nr, load_dims(&pl.k, nk, geometry));
    pl.nout = numel(&pl.k);
    pl.rtotal = numel(&pl.r);
    pl.router = pl.r;
    pl.rowlen = 1; /* also with zero reduced elements: no rows at all */
    if (pl.r.n > 0) {
        pl.router.n--;
        pl.rowlen = pl.r.size[pl.r.n - 1] ? pl.r.size[pl.r.n - 1] : 1;
        pl.rowstride = pl.r.s1[pl.r.n - 1];
    }
    if (pl.nout == 0) return 0;
    /* the column loop pays when a kept dim is contiguous and the rows are not */
    if (pl.r.n == 0 || pl.rowstride != 1) {
        dims_t outer = pl.k;
        int64_t ostride, m = take_column_dim(&outer, &ostride, 0);
        if (m) return run_columns(&pl, &outer, m, ostride);
    }
    return run_rows(&pl);
}
