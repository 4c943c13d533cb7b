/* Reductions of the CPU device: sum, prod, amax, amin, any, all (argmax, argmin and
 * cumsum, which walk one dim, are in scan.c).
 *
 * The runtime's ReductionPlan gives the kept dims (K) and the reduced dims (R), each
 * coalesced and in row-major order; one of two loops runs:
 *   - rows: each output reduces R, whose innermost dim is a (usually contiguous) row;
 *     a single output (a.sum()) is split into chunks across threads;
 *   - columns: when a kept dim is contiguous in the input (sum over dim 0 of a matrix),
 *     up to COL_CHUNK outputs are accumulated side by side, eight reduced positions
 *     combined per pass (see DEFINE_COL).
 * Parallel regions are entered only for work above EM_PARALLEL_GRAIN (run_parts).
 * Accumulators: int64 for integers and bool (wrapping like PyTorch), double for floats;
 * float32 sums add float lanes over blocks of SUM_BLOCK elements, then add the blocks in
 * double, which keeps 16M-element sums within ~1e-7 relative at memory speed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __F16C__
#include <immintrin.h>
#endif

#include "strided.h"

enum { RED_SUM, RED_PROD, RED_AMAX, RED_AMIN, RED_ANY, RED_ALL, RED_COUNT };

#define SUM_BLOCK 4096  /* float32/float16 elements summed in float lanes before double */

/* acc op= p[0], p[stride], ..., p[(n-1)*stride] */
typedef void (*row_fn)(const char* p, int64_t n, int64_t stride, acc_t* acc);
/* acc[j] op= p[r * rs + j] for r < rows, j < n (rows contiguous, rs apart); acc is
 * int64_t[], double[] or float[] (see col_kind; never acc_t[]: GCC does not vectorise
 * loops over union members). */
typedef void (*col_fn)(const char* p, int64_t rs, int rows, int64_t n, void* acc);

/* ---- row and column kernels ----------------------------------------------------------- */

#define DEFINE_INT_KERNELS(SUF, T)                                                       \
    static void row_sum_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {      \
        const T* p = (const T*)base;                                                      \
        uint64_t total = 0;                                                               \
        if (s == 1) {                                                                     \
            for (int64_t i = 0; i < n; i++) total += (uint64_t)(int64_t)p[i];             \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) total += (uint64_t)(int64_t)p[i * s];         \
        }                                                                                 \
        acc->i = WRAP_ADD(acc->i, total);                                                 \
    }                                                                                     \
    static void row_prod_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {     \
        const T* p = (const T*)base;                                                      \
        uint64_t total = (uint64_t)acc->i;                                                \
        for (int64_t i = 0; i < n; i++) total *= (uint64_t)(int64_t)p[i * s];             \
        acc->i = (int64_t)total;                                                          \
    }                                                                                     \
    static void row_amax_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {     \
        const T* p = (const T*)base;                                                      \
        int64_t m = acc->i;                                                               \
        if (s == 1) {                                                                     \
            for (int64_t i = 0; i < n; i++) m = (int64_t)p[i] > m ? (int64_t)p[i] : m;    \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) m = (int64_t)p[i * s] > m ? (int64_t)p[i * s] : m; \
        }                                                                                 \
        acc->i = m;                                                                       \
    }                                                                                     \
    static void row_amin_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {     \
        const T* p = (const T*)base;                                                      \
        int64_t m = acc->i;                                                               \
        if (s == 1) {                                                                     \
            for (int64_t i = 0; i < n; i++) m = (int64_t)p[i] < m ? (int64_t)p[i] : m;    \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) m = (int64_t)p[i * s] < m ? (int64_t)p[i * s] : m; \
        }                                                                                 \
        acc->i = m;                                                                       \
    }

/* any/all for every dtype: a NaN is non-zero, hence true. Exits early per block. */
#define DEFINE_LOGICAL_KERNELS(SUF, T)                                                   \
    static void row_any_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {      \
        const T* p = (const T*)base;                                                      \
        for (int64_t i0 = 0; i0 < n && !acc->i; i0 += SUM_BLOCK) {                        \
            int64_t end = min64(n, i0 + SUM_BLOCK);                                       \
            int r = 0;                                                                    \
            if (s == 1) {                                                                 \
                for (int64_t i = i0; i < end; i++) r |= p[i] != 0;                        \
            } else {                                                                      \
                for (int64_t i = i0; i < end; i++) r |= p[i * s] != 0;                    \
            }                                                                             \
            acc->i |= r;                                                                  \
        }                                                                                 \
    }                                                                                     \
    static void row_all_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {      \
        const T* p = (const T*)base;                                                      \
        for (int64_t i0 = 0; i0 < n && acc->i; i0 += SUM_BLOCK) {                         \
            int64_t end = min64(n, i0 + SUM_BLOCK);                                       \
            int r = 1;                                                                    \
            if (s == 1) {                                                                 \
                for (int64_t i = i0; i < end; i++) r &= p[i] != 0;                        \
            } else {                                                                      \
                for (int64_t i = i0; i < end; i++) r &= p[i * s] != 0;                    \
            }                                                                             \
            acc->i &= r;                                                                  \
        }                                                                                 \
    }


/* Float kernels shared by float16, float32 and float64 (row sum, max and min are
 * specialised below). Column max/min let a NaN overwrite, so NaN propagates. */
#define DEFINE_FLOAT_KERNELS(SUF, T)                                                     \
    static void row_prod_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {     \
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

DEFINE_INT_KERNELS(u8, uint8_t)
DEFINE_INT_KERNELS(i8, int8_t)
DEFINE_INT_KERNELS(i32, int32_t)
DEFINE_INT_KERNELS(i64, int64_t)
DEFINE_LOGICAL_KERNELS(u8, uint8_t)
DEFINE_LOGICAL_KERNELS(i8, int8_t)
DEFINE_LOGICAL_KERNELS(i32, int32_t)
DEFINE_LOGICAL_KERNELS(i64, int64_t)
DEFINE_LOGICAL_KERNELS(f16, em_half)
DEFINE_LOGICAL_KERNELS(f32, float)
DEFINE_LOGICAL_KERNELS(f64, double)
DEFINE_FLOAT_KERNELS(f16, em_half)
DEFINE_FLOAT_KERNELS(f32, float)
DEFINE_FLOAT_KERNELS(f64, double)

/* float16 max and min: compare in float, OR a NaN flag. */
#define DEFINE_SCALAR_EXTREMES(SUF, T)                                                   \
    static void row_amax_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {     \
        const T* p = (const T*)base;                                                      \
        T m = (T)-INFINITY;                                                               \
        int nan = 0;                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                 \
            T x = p[i * s];                                                               \
            m = x > m ? x : m;                                                            \
            nan |= x != x;                                                                \
        }                                                                                 \
        double r = nan ? (double)NAN : (double)m;                                         \
        if (r != r || r > acc->f) acc->f = r;                                             \
    }                                                                                     \
    static void row_amin_##SUF(const char* base, int64_t n, int64_t s, acc_t* acc) {     \
        const T* p = (const T*)base;                                                      \
        T m = (T)INFINITY;                                                                \
        int nan = 0;                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                 \
            T x = p[i * s];                                                               \
            m = x < m ? x : m;                                                            \
            nan |= x != x;                                                                \
        }                                                                                 \
        double r = nan ? (double)NAN : (double)m;                                         \
        if (r != r || r < acc->f) acc->f = r;                                             \
    }

DEFINE_SCALAR_EXTREMES(f16, em_half)

/* float16 sum: float lanes per block (converted 8 at a time by F16C where the CPU has
 * it), blocks added in double. */
static void row_sum_f16(const char* base, int64_t n, int64_t s, acc_t* acc) {
    const em_half* p = (const em_half*)base;
    double total = 0.0;
    for (int64_t i0 = 0; i0 < n; i0 += SUM_BLOCK) {
        int64_t end = min64(n, i0 + SUM_BLOCK), i = i0;
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

/* float32 sum: eight 8-lane float accumulators per block of SUM_BLOCK, blocks in double.
 * 256-bit vectors stream at least as fast as 512-bit ones on the CPUs measured. */
static void row_sum_f32(const char* base, int64_t n, int64_t s, acc_t* acc) {
    const float* p = (const float*)base;
    double total = 0.0;
    for (int64_t i0 = 0; i0 < n; i0 += SUM_BLOCK) {
        int64_t end = min64(n, i0 + SUM_BLOCK), i = i0;
        double block = 0.0;
        if (s == 1) {
            v8f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
            for (; i + 64 <= end; i += 64) {
                a0 += *(const v8f*)(p + i);
                a1 += *(const v8f*)(p + i + 8);
                a2 += *(const v8f*)(p + i + 16);
                a3 += *(const v8f*)(p + i + 24);
                a4 += *(const v8f*)(p + i + 32);
                a5 += *(const v8f*)(p + i + 40);
                a6 += *(const v8f*)(p + i + 48);
                a7 += *(const v8f*)(p + i + 56);
            }
            v8f v = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
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

static void row_sum_f64(const char* base, int64_t n, int64_t s, acc_t* acc) {
    const double* p = (const double*)base;
    double total = 0.0;
    int64_t i = 0;
    if (s == 1) {
        v4d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
        for (; i + 32 <= n; i += 32) {
            a0 += *(const v4d*)(p + i);
            a1 += *(const v4d*)(p + i + 4);
            a2 += *(const v4d*)(p + i + 8);
            a3 += *(const v4d*)(p + i + 12);
            a4 += *(const v4d*)(p + i + 16);
            a5 += *(const v4d*)(p + i + 20);
            a6 += *(const v4d*)(p + i + 24);
            a7 += *(const v4d*)(p + i + 28);
        }
        v4d v = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
        for (int l = 0; l < 4; l++) total += v[l];
    }
    for (; i < n; i++) total += p[i * s];
    acc->f += total;
}

/* float32/float64 max and min over contiguous rows: vector compares and blends, a NaN
 * flag on the side (the compare alone would skip NaN). */
#define DEFINE_VEC_EXTREME(NAME, T, VT, VI, W, CMP, INIT)                                \
    static void NAME(const char* base, int64_t n, int64_t s, acc_t* acc) {               \
        const T* p = (const T*)base;                                                      \
        int64_t i = 0;                                                                    \
        T m = INIT;                                                                       \
        int nan = 0;                                                                      \
        if (s == 1 && n >= 2 * W) {                                                       \
            VT m0, m1;                                                                    \
            VI n0 = {0}, n1 = {0};                                                        \
            for (int l = 0; l < W; l++) m0[l] = m1[l] = INIT;                             \
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
        double r = nan ? (double)NAN : (double)m;                                         \
        if (r != r || r CMP acc->f) acc->f = r;                                           \
    }

DEFINE_VEC_EXTREME(row_amax_f32, float, v8f, v8i, 8, >, -INFINITY)
DEFINE_VEC_EXTREME(row_amin_f32, float, v8f, v8i, 8, <, INFINITY)
DEFINE_VEC_EXTREME(row_amax_f64, double, v4d, v4l, 4, >, -INFINITY)
DEFINE_VEC_EXTREME(row_amin_f64, double, v4d, v4l, 4, <, INFINITY)

/* Column kernels. Eight rows are combined per pass (a pairwise tree in the PART type,
 * float for float32 sums), then folded into the accumulator once: a read-modify-write of
 * the accumulators per input element would cap the loop at half the memory bandwidth. */
#define COL_ROWS 8
#define DEFINE_COL(NAME, T, PART, ACC, LOAD, OP)                                          \
    static void NAME(const char* base, int64_t rs, int rows, int64_t n, void* acc) {      \
        const T* p = (const T*)base;                                                       \
        ACC* a = acc;                                                                      \
        if (rows == COL_ROWS) {                                                            \
            const T *p1 = p + rs, *p2 = p + 2 * rs, *p3 = p + 3 * rs, *p4 = p + 4 * rs;   \
            const T *p5 = p + 5 * rs, *p6 = p + 6 * rs, *p7 = p + 7 * rs;                  \
            for (int64_t j = 0; j < n; j++) {                                              \
                /* every load unconditional: OP may be a select GCC must if-convert */     \
                PART v0 = LOAD(PART, p[j]), v1 = LOAD(PART, p1[j]);                        \
                PART v2 = LOAD(PART, p2[j]), v3 = LOAD(PART, p3[j]);                       \
                PART v4 = LOAD(PART, p4[j]), v5 = LOAD(PART, p5[j]);                       \
                PART v6 = LOAD(PART, p6[j]), v7 = LOAD(PART, p7[j]);                       \
                PART x01 = OP(v0, v1), x23 = OP(v2, v3), x45 = OP(v4, v5), x67 = OP(v6, v7); \
                PART x03 = OP(x01, x23), x47 = OP(x45, x67);                               \
                ACC prev = a[j], rows8 = (ACC)OP(x03, x47);                                \
                a[j] = OP(prev, rows8);                                                    \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        for (int r = 0; r < rows; r++) {                                                   \
            const T* q = p + r * rs;                                                       \
            for (int64_t j = 0; j < n; j++) {                                              \
                ACC prev = a[j], v = (ACC)LOAD(PART, q[j]);                                \
                a[j] = OP(prev, v);                                                        \
            }                                                                              \
        }                                                                                  \
    }

#define VALUE(P, x) ((P)(x))
#define INT_VALUE(P, x) ((P)(int64_t)(x))
#define TRUTH(P, x) ((P)((x) != 0))
#define SUM_OP(a, b) ((a) + (b))
#define PROD_OP(a, b) ((a) * (b))
#define MAX_OP(a, b) ((b) > (a) ? (b) : (a))
#define MIN_OP(a, b) ((b) < (a) ? (b) : (a))
#define MAX_NAN_OP(a, b) ((b) != (b) ? (b) : (b) > (a) ? (b) : (a)) /* a NaN on either side wins */
#define MIN_NAN_OP(a, b) ((b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define OR_OP(a, b) ((a) | (b))
#define AND_OP(a, b) ((a) & (b))

#define DEFINE_INT_COLS(SUF, T)                                                           \
    DEFINE_COL(col_sum_##SUF, T, uint64_t, uint64_t, INT_VALUE, SUM_OP)                    \
    DEFINE_COL(col_prod_##SUF, T, uint64_t, uint64_t, INT_VALUE, PROD_OP)                  \
    DEFINE_COL(col_amax_##SUF, T, int64_t, int64_t, VALUE, MAX_OP)                         \
    DEFINE_COL(col_amin_##SUF, T, int64_t, int64_t, VALUE, MIN_OP)
/* max and min are exact in PART, and GCC vectorises their NaN-aware select only when
 * the types do not mix: they accumulate in PART (see col_kind). */
#define DEFINE_FLOAT_COLS(SUF, T, PART)                                                   \
    DEFINE_COL(col_sum_##SUF, T, PART, double, VALUE, SUM_OP)                              \
    DEFINE_COL(col_prod_##SUF, T, double, double, VALUE, PROD_OP)                          \
    DEFINE_COL(col_amax_##SUF, T, PART, PART, VALUE, MAX_NAN_OP)                           \
    DEFINE_COL(col_amin_##SUF, T, PART, PART, VALUE, MIN_NAN_OP)
#define DEFINE_LOGICAL_COLS(SUF, T)                                                       \
    DEFINE_COL(col_any_##SUF, T, int64_t, int64_t, TRUTH, OR_OP)                           \
    DEFINE_COL(col_all_##SUF, T, int64_t, int64_t, TRUTH, AND_OP)

DEFINE_INT_COLS(u8, uint8_t)
DEFINE_INT_COLS(i8, int8_t)
DEFINE_INT_COLS(i32, int32_t)
DEFINE_INT_COLS(i64, int64_t)
DEFINE_FLOAT_COLS(f16, em_half, float)
DEFINE_FLOAT_COLS(f32, float, float)
DEFINE_FLOAT_COLS(f64, double, double)
DEFINE_LOGICAL_COLS(u8, uint8_t)
DEFINE_LOGICAL_COLS(i8, int8_t)
DEFINE_LOGICAL_COLS(i32, int32_t)
DEFINE_LOGICAL_COLS(i64, int64_t)
DEFINE_LOGICAL_COLS(f16, em_half)
DEFINE_LOGICAL_COLS(f32, float)
DEFINE_LOGICAL_COLS(f64, double)

#define ROW_TABLE(OP)                                                                    \
    {row_##OP##_u8, row_##OP##_u8, row_##OP##_i8, row_##OP##_i32, row_##OP##_i64,           \
     row_##OP##_f16, row_##OP##_f32, row_##OP##_f64}
#define COL_TABLE(OP)                                                                    \
    {col_##OP##_u8, col_##OP##_u8, col_##OP##_i8, col_##OP##_i32, col_##OP##_i64,           \
     col_##OP##_f16, col_##OP##_f32, col_##OP##_f64}

static const row_fn ROWS[RED_COUNT][8] = {
    ROW_TABLE(sum),
    ROW_TABLE(prod),
    ROW_TABLE(amax),
    ROW_TABLE(amin),
    ROW_TABLE(any),
    ROW_TABLE(all),
};
static const col_fn COLS[RED_COUNT][8] = {
    COL_TABLE(sum), COL_TABLE(prod), COL_TABLE(amax),
    COL_TABLE(amin), COL_TABLE(any), COL_TABLE(all),
};

/* ---- accumulator helpers ---------------------------------------------------------------- */

/* Whether the accumulator of (op, input dtype) is a double (else an int64). */
static inline int acc_is_float(int op, int dt) { return op < RED_ANY && is_float(dt); }

static acc_t identity(int op, int fl) {
    acc_t a;
    switch (op) {
        case RED_SUM: if (fl) a.f = 0.0; else a.i = 0; break;
        case RED_PROD: if (fl) a.f = 1.0; else a.i = 1; break;
        case RED_AMAX: if (fl) a.f = -INFINITY; else a.i = INT64_MIN; break;
        case RED_AMIN: if (fl) a.f = INFINITY; else a.i = INT64_MAX; break;
        case RED_ANY: a.i = 0; break;
        default: a.i = 1; break;
    }
    return a;
}

static inline void combine(int op, int fl, acc_t* into, acc_t v) {
    switch (op) {
        case RED_SUM:
            if (fl) into->f += v.f; else into->i = WRAP_ADD(into->i, v.i);
            break;
        case RED_PROD:
            if (fl) into->f *= v.f; else into->i = WRAP_MUL(into->i, v.i);
            break;
        case RED_AMAX:
            if (fl) { if (v.f != v.f || v.f > into->f) into->f = v.f; }
            else if (v.i > into->i) into->i = v.i;
            break;
        case RED_AMIN:
            if (fl) { if (v.f != v.f || v.f < into->f) into->f = v.f; }
            else if (v.i < into->i) into->i = v.i;
            break;
        case RED_ANY: into->i |= v.i; break;
        default: into->i &= v.i; break;
    }
}

/* ---- the reduction executor ----------------------------------------------------------- */

typedef struct {
    int op, fl, isz, out_dt, osz, ckind;
    row_fn row;
    col_fn col;
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
        pl->row(pl->a + (base + off + c * pl->rowstride) * pl->isz, len, pl->rowstride, acc);
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
        acc_t acc = identity(pl->op, pl->fl);
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
        ch->part[it] = identity(pl->op, pl->fl);
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

/* The element type of column accumulators: int64 unless the accumulator is a double
 * (fl); float16/float32 max and min keep float. */
enum { COL_INT64, COL_DOUBLE, COL_FLOAT };

static int col_kind(int op, int dt, int fl) {
    if (!fl) return COL_INT64;
    return (op == RED_AMAX || op == RED_AMIN) && dt != EM_FLOAT64 ? COL_FLOAT : COL_DOUBLE;
}

static inline acc_t col_get(const void* buf, int kind, int64_t j) {
    acc_t a;
    if (kind == COL_INT64) a.i = ((const int64_t*)buf)[j];
    else if (kind == COL_DOUBLE) a.f = ((const double*)buf)[j];
    else a.f = ((const float*)buf)[j];
    return a;
}

static inline void col_set(void* buf, int kind, int64_t j, acc_t a) {
    if (kind == COL_INT64) ((int64_t*)buf)[j] = a.i;
    else if (kind == COL_DOUBLE) ((double*)buf)[j] = a.f;
    else ((float*)buf)[j] = (float)a.f;
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
    acc_t id = identity(pl->op, pl->fl);
    for (int64_t j = 0; j < len; j++) col_set(acc, pl->ckind, j, id);
    /* [rbegin, rend) runs over the reduced positions, the innermost reduced dim (rin
     * rows, rstride apart) fastest; its rows go to the kernel COL_ROWS at a time */
    int64_t rin = pl->r.n ? pl->r.size[pl->r.n - 1] : 1;
    int64_t rstride = pl->r.n ? pl->r.s1[pl->r.n - 1] : 0;
    int64_t c = rin ? rbegin % rin : 0;
    if (rbegin < rend) unravel(&pl->router, rbegin / rin, idx, &off, &unused);
    for (int64_t pos = rbegin; pos < rend;) {
        int64_t count = min64(rin - c, rend - pos);
        const char* line = pl->a + (ka + off + c * rstride + j0) * pl->isz;
        for (int64_t r = 0; r < count; r += COL_ROWS) {
            int rows = (int)min64(COL_ROWS, count - r);
            pl->col(line + r * rstride * pl->isz, rstride, rows, len, acc);
        }
        pos += count;
        c = 0;
        advance(&pl->router, idx, &off, &unused);
    }
    if (cs->rsplit == 1) {
        for (int64_t j = 0; j < len; j++)
            store(pl->out_dt, pl->out + (ko + (j0 + j) * cs->ostride) * pl->osz,
                  col_get(acc, pl->ckind, j), pl->fl);
    }
}

static void columns_part(void* ctx, int t, int nt) {
    const columns_t* cs = ctx;
    double local_d[COL_CHUNK];
    float local_f[COL_CHUNK];
    int64_t local_i[COL_CHUNK], begin, end;
    int64_t items = numel(cs->outer) * cs->chunks;
    split(items * cs->rsplit, t, nt, &begin, &end);
    for (int64_t it = begin; it < end; it++) {
        int kind = cs->pl->ckind;
        void* acc = cs->part               ? (char*)cs->part + it * COL_CHUNK * 8
                    : kind == COL_INT64  ? (void*)local_i
                    : kind == COL_DOUBLE ? (void*)local_d
                                         : (void*)local_f;
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
                acc_t total = col_get(acc, pl->ckind, j);
                for (int64_t rs = 1; rs < cs.rsplit; rs++)
                    combine(pl->op, pl->fl, &total,
                            col_get(acc + rs * COL_CHUNK * 8, pl->ckind, j));
                store(pl->out_dt, pl->out + (ko + (j0 + j) * ostride) * pl->osz, total, pl->fl);
            }
        }
        free(cs.part);
    }
    return 0;
}

static int execute(plan_t* pl) {
    if (pl->nout == 0) return 0;
    /* the column loop pays when a kept dim is contiguous and the rows are not */
    int inner_contig = pl->r.n > 0 && pl->r.s1[pl->r.n - 1] == 1;
    if (!inner_contig) {
        for (int c = pl->k.n - 1; c >= 0; c--) {
            if (pl->k.s1[c] != 1 || pl->k.size[c] < COL_MIN) continue;
            dims_t outer = pl->k;
            for (int i = c; i + 1 < outer.n; i++) {
                outer.size[i] = outer.size[i + 1];
                outer.s1[i] = outer.s1[i + 1];
                outer.s2[i] = outer.s2[i + 1];
            }
            outer.n--;
            return run_columns(pl, &outer, pl->k.size[c], pl->k.s2[c]);
        }
    }
    return run_rows(pl);
}

static void init_plan(plan_t* pl, int op, int in_dt, int out_dt, intptr_t a, intptr_t out) {
    pl->op = op;
    pl->fl = acc_is_float(op, in_dt);
    pl->ckind = col_kind(op, in_dt, pl->fl);
    pl->isz = ITEMSIZE[in_dt];
    pl->out_dt = out_dt;
    pl->osz = ITEMSIZE[out_dt];
    pl->row = ROWS[op][in_dt];
    pl->col = COLS[op][in_dt];
    pl->a = (const char*)a;
    pl->out = (char*)out;
}

static void finish_plan(plan_t* pl) {
    pl->nout = numel(&pl->k);
    pl->rtotal = numel(&pl->r);
    pl->router = pl->r;
    if (pl->r.n > 0) {
        pl->router.n--;
        pl->rowlen = pl->r.size[pl->r.n - 1];
        pl->rowstride = pl->r.s1[pl->r.n - 1];
    } else {
        pl->rowlen = 1;
        pl->rowstride = 0;
    }
    if (pl->rowlen == 0) pl->rowlen = 1; /* zero reduced elements: no rows at all */
}

int em_reduce(int op, int in_dt, int out_dt, intptr_t out, intptr_t a, int nk, int nr,
              const char* geometry) {
    if (nk > EM_MAX_DIMS || nr > EM_MAX_DIMS) return too_many_dims(nk > nr ? nk : nr);
    plan_t pl;
    init_plan(&pl, op, in_dt, out_dt, a, out);
    load_dims(&pl.r, nr, load_dims(&pl.k, nk, geometry));
    finish_plan(&pl);
    return execute(&pl);
}
