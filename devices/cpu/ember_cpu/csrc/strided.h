/* Private helpers of the strided kernels (reduce.c, scan.c, index.c, linalg.c): dims
 * loading, the column dim, splitting work across OpenMP threads, vector types and
 * accumulator values.
 * Everything is static: each kernel file gets its own copy, nothing is exported.
 */
#ifndef EMBER_CPU_STRIDED_H
#define EMBER_CPU_STRIDED_H

#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "ember_cpu.h"

#define COL_CHUNK 2048 /* outputs processed side by side by the column loops */
#define COL_MIN 16     /* a contiguous kept dim shorter than this is not worth columns */

/* Unaligned, aliasing 256-bit vectors (GCC vector extensions; split where narrower). */
typedef float v8f __attribute__((vector_size(32), aligned(4), may_alias));
typedef double v4d __attribute__((vector_size(32), aligned(8), may_alias));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));
typedef uint8_t v32u8 __attribute__((vector_size(32), aligned(1), may_alias));
typedef int8_t v32i8 __attribute__((vector_size(32), aligned(1), may_alias));
typedef int32_t v8i32 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int64_t v4i64 __attribute__((vector_size(32), aligned(8), may_alias));

static const int ITEMSIZE[EM_DTYPE_COUNT] = {1, 1, 1, 4, 8, 2, 4, 8, 2};

static inline int is_float(int dt) { return dt >= EM_FLOAT16; } /* bfloat16 (8) too */
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The families that read bfloat16 through a float32 copy made by the Python kernel (see
 * ember_cpu/_bf16.py) never see its code; any other call is refused here. */
static inline int no_bf16(const char* op) {
    snprintf(em_error_message, sizeof em_error_message,
             "%s: not implemented for 'BFloat16' on the cpu device", op);
    return 2;
}

static inline int too_many_dims(int ndim) {
    snprintf(em_error_message, sizeof em_error_message,
             "the cpu device supports at most %d dims, got %d", EM_MAX_DIMS, ndim);
    return 2;
}

#define WRAP_ADD(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))
#define WRAP_MUL(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))

/* An accumulator: int64 for integers and bool, double for floats (fl). */
typedef union {
    int64_t i;
    double f;
} acc_t;

static inline void store(int dt, char* dst, acc_t v, int fl) {
    switch (dt) {
        case EM_BOOL: *(uint8_t*)dst = fl ? v.f != 0 : v.i != 0; break;
        case EM_UINT8: *(uint8_t*)dst = (uint8_t)(fl ? (int64_t)v.f : v.i); break;
        case EM_INT8: *(int8_t*)dst = (int8_t)(fl ? (int64_t)v.f : v.i); break;
        case EM_INT32: *(int32_t*)dst = (int32_t)(fl ? (int64_t)v.f : v.i); break;
        case EM_INT64: *(int64_t*)dst = fl ? (int64_t)v.f : v.i; break;
        case EM_FLOAT16: *(em_half*)dst = (em_half)(fl ? v.f : (double)v.i); break;
        case EM_FLOAT32: *(float*)dst = (float)(fl ? v.f : (double)v.i); break;
        case EM_BFLOAT16: *(em_bf16*)dst = em_f_to_bf16((float)(fl ? v.f : (double)v.i)); break;
        default: *(double*)dst = fl ? v.f : (double)v.i; break;
    }
}

/* ---- geometry ------------------------------------------------------------------------- */

typedef struct {
    int n;
    int64_t size[EM_MAX_DIMS];
    int64_t s1[EM_MAX_DIMS]; /* the input's strides */
    int64_t s2[EM_MAX_DIMS]; /* the output's strides (unused for reduced dims) */
} dims_t;

/* n dims from packed int64 geometry (sizes, input strides, output strides; the buffer may
 * be unaligned); returns where the next dims start. */
static inline const char* load_dims(dims_t* d, int n, const char* g) {
    const size_t bytes = sizeof(int64_t) * (size_t)n;
    d->n = n;
    memcpy(d->size, g, bytes);
    memcpy(d->s1, g + bytes, bytes);
    memcpy(d->s2, g + 2 * bytes, bytes);
    return g + 3 * bytes;
}

static inline int64_t numel(const dims_t* d) {
    int64_t n = 1;
    for (int i = 0; i < d->n; i++) n *= d->size[i];
    return n;
}

/* Position `p` of the row-major iteration over d: its index and both offsets. */
static inline void unravel(const dims_t* d, int64_t p, int64_t* idx, int64_t* o1, int64_t* o2) {
    *o1 = *o2 = 0;
    for (int k = d->n - 1; k >= 0; k--) {
        idx[k] = p % d->size[k];
        p /= d->size[k];
        *o1 += idx[k] * d->s1[k];
        *o2 += idx[k] * d->s2[k];
    }
}

static inline void advance(const dims_t* d, int64_t* idx, int64_t* o1, int64_t* o2) {
    for (int k = d->n - 1; k >= 0; k--) {
        if (++idx[k] < d->size[k]) {
            *o1 += d->s1[k];
            *o2 += d->s2[k];
            return;
        }
        *o1 -= d->s1[k] * (d->size[k] - 1);
        *o2 -= d->s2[k] * (d->size[k] - 1);
        idx[k] = 0;
    }
}

/* Finds a dim of k contiguous in the input (and, with need_out_unit, in the output) to
 * walk as side-by-side columns; removes it from k and returns its size and output stride,
 * or returns 0. */
static inline int64_t take_column_dim(dims_t* k, int64_t* ostride, int need_out_unit) {
    for (int c = k->n - 1; c >= 0; c--) {
        if (k->s1[c] != 1 || k->size[c] < COL_MIN || (need_out_unit && k->s2[c] != 1))
            continue;
        int64_t m = k->size[c];
        *ostride = k->s2[c];
        for (int i = c; i + 1 < k->n; i++) {
            k->size[i] = k->size[i + 1];
            k->s1[i] = k->s1[i + 1];
            k->s2[i] = k->s2[i + 1];
        }
        k->n--;
        return m;
    }
    return 0;
}

/* [begin, end) of n items for thread t of nt */
static inline void split(int64_t n, int t, int nt, int64_t* begin, int64_t* end) {
    *begin = n * t / nt;
    *end = n * (t + 1) / nt;
}

/* Runs fn(ctx, t, nt) on every thread when the work is worth a parallel region, else
 * fn(ctx, 0, 1) directly: even an `omp parallel if(0)` costs a team setup per call. */
typedef void (*part_fn)(void* ctx, int t, int nt);

static inline void run_parts(int64_t work, int64_t units, part_fn fn, void* ctx) {
    int threads = em_threads();
    if (work >= EM_PARALLEL_GRAIN && units > 1 && threads > 1) {
#pragma omp parallel num_threads(threads)
        fn(ctx, omp_get_thread_num(), omp_get_num_threads());
    } else {
        fn(ctx, 0, 1);
    }
}

#endif
