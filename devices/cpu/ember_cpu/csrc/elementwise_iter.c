/* The strided iterator under every elementwise kernel.
 *
 * Geometry is coalesced first (size-1 dims dropped, adjacent dims merged when every
 * operand steps through them as one), so a contiguous or row-broadcast tensor of any rank
 * runs as one or two flat loops. The element range is split evenly across OpenMP threads;
 * each thread walks its range row by row, calling the inner loop once per row.
 */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>

#include "elementwise.h"

const char* const em_ew_dtype_names[8] = {
    "bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64",
};

const int em_ew_itemsize[8] = {1, 1, 1, 4, 8, 2, 4, 8};

/* Float to integer as C casts it, through int32 for the narrow types (defined for every
 * in-range value, and what PyTorch and NumPy do on x86 for the rest). */
#define EM_SCALAR_CASE(CODE, SUF, T, C, U, unused)                                     \
    case CODE: {                                                                  \
        T v = use_int ? (T)i : (T)(sizeof(T) == 8 ? (int64_t)d : (int64_t)(int32_t)d); \
        memcpy(out, &v, sizeof v);                                                \
        return;                                                                   \
    }
#define EM_SCALAR_FLOAT_CASE(CODE, SUF, T, C, U, unused) \
    case CODE: {                                    \
        T v = use_int ? (T)i : (T)d;                \
        memcpy(out, &v, sizeof v);                  \
        return;                                     \
    }

void em_ew_scalar_to(int dtype, double d, int64_t i, int use_int, void* out) {
    switch (dtype) {
        case EM_BOOL: {
            uint8_t v = use_int ? i != 0 : d != 0;
            memcpy(out, &v, 1);
            return;
        }
        EM_INT_TYPES(EM_SCALAR_CASE, 0)
        EM_FLOAT_TYPES(EM_SCALAR_FLOAT_CASE, 0)
        default:
            return;
    }
}

int em_ew_fail(const char* format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(em_error_message, sizeof em_error_message, format, args);
    va_end(args);
    return EM_STATUS_ERROR;
}

int em_ew_loop_failure(int code) {
    if (code == EM_LOOP_ZERO_DIVISION) return em_ew_fail("ZeroDivisionError");
    return em_ew_fail("kernel failed with code %d", code);
}

int em_ew_iter_init(em_iter* it, int nops, int ndim, const char* geometry, char* const* base,
                 const int* itemsize, const int* has_strides) {
    if (ndim < 0 || ndim > EM_MAX_DIMS)
        return em_ew_fail("at most %d dims are supported", EM_MAX_DIMS);
    int64_t shape[EM_MAX_DIMS];
    int64_t stride[EM_MAX_OPERANDS][EM_MAX_DIMS];
    /* The packed buffer may be unaligned: copy it out. */
    memcpy(shape, geometry, sizeof(int64_t) * (size_t)ndim);
    int packed = 1;
    for (int k = 0; k < nops; k++) {
        if (has_strides[k]) {
            memcpy(stride[k], geometry + sizeof(int64_t) * (size_t)(packed * ndim),
                   sizeof(int64_t) * (size_t)ndim);
            packed++;
            for (int d = 0; d < ndim; d++) stride[k][d] *= itemsize[k];
        } else {
            for (int d = 0; d < ndim; d++) stride[k][d] = 0;
        }
    }
    it->nops = nops;
    it->numel = 1;
    for (int k = 0; k < nops; k++) it->base[k] = base[k];
    int out = 0;
    for (int d = 0; d < ndim; d++) {
        it->numel *= shape[d];
        if (shape[d] == 1) continue;
        /* Merge into the previous kept dim when each operand's outer stride equals
         * inner stride * inner size. */
        int merge = out > 0;
        for (int k = 0; merge && k < nops; k++)
            merge = it->stride[k][out - 1] == stride[k][d] * shape[d];
        if (merge) {
            it->shape[out - 1] *= shape[d];
            for (int k = 0; k < nops; k++) it->stride[k][out - 1] = stride[k][d];
        } else {
            it->shape[out] = shape[d];
            for (int k = 0; k < nops; k++) it->stride[k][out] = stride[k][d];
            out++;
        }
    }
    if (out == 0) {
        it->shape[0] = 1;
        for (int k = 0; k < nops; k++) it->stride[k][0] = 0;
        out = 1;
    }
    it->ndim = out;
    return 0;
}

/* Elements [start, end) of the iteration space, in row-major order. */
static int iter_range(const em_iter* it, int64_t start, int64_t end, em_loop loop,
                      const void* ctx) {
    const int nd = it->ndim, nops = it->nops;
    const int64_t inner = it->shape[nd - 1];
    int64_t idx[EM_MAX_DIMS];
    char* p[EM_MAX_OPERANDS];
    int64_t s[EM_MAX_OPERANDS];
    int64_t rem = start;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    for (int k = 0; k < nops; k++) {
        p[k] = it->base[k];
        for (int d = 0; d < nd; d++) p[k] += idx[d] * it->stride[k][d];
        s[k] = it->stride[k][nd - 1];
    }
    int64_t pos = start;
    while (pos < end) {
        int64_t len = inner - idx[nd - 1];
        if (len > end - pos) len = end - pos;
        int code = loop(len, p, s, pos, ctx);
        if (code) return code;
        pos += len;
        idx[nd - 1] += len;
        for (int k = 0; k < nops; k++) p[k] += len * s[k];
        if (idx[nd - 1] < inner || pos >= end) continue;
        /* End of a row: carry into the outer dims. */
        idx[nd - 1] = 0;
        for (int k = 0; k < nops; k++) p[k] -= inner * s[k];
        for (int d = nd - 2; d >= 0; d--) {
            idx[d]++;
            for (int k = 0; k < nops; k++) p[k] += it->stride[k][d];
            if (idx[d] < it->shape[d]) break;
            idx[d] = 0;
            for (int k = 0; k < nops; k++) p[k] -= it->shape[d] * it->stride[k][d];
        }
    }
    return 0;
}

/* How many threads a loop over n elements deserves. */
static int thread_count(int64_t n) {
    if (n < 2 * (int64_t)EM_PARALLEL_GRAIN || omp_in_parallel()) return 1;
    int64_t want = n / EM_PARALLEL_GRAIN;
    int have = em_threads();
    return want < have ? (int)want : have;
}

/* Chunk boundaries are rounded to 64 elements so threads rarely share a cache line. */
static void thread_range(int64_t n, int64_t* start, int64_t* end) {
    int nt = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t chunk = ((n + nt - 1) / nt + 63) & ~(int64_t)63;
    *start = chunk * t < n ? chunk * t : n;
    *end = *start + chunk < n ? *start + chunk : n;
}

int em_ew_iter_run(const em_iter* it, em_loop loop, const void* ctx) {
    const int64_t n = it->numel;
    if (n == 0) return 0;
    int threads = thread_count(n);
    if (threads == 1) return iter_range(it, 0, n, loop, ctx);
    int code = 0;
#pragma omp parallel num_threads(threads) reduction(| : code)
    {
        int64_t start, end;
        thread_range(n, &start, &end);
        if (start < end) code |= iter_range(it, start, end, loop, ctx);
    }
    return code;
}

int em_ew_run_flat(int nops, int64_t n, char* const* base, const int64_t* stride, em_loop loop,
                const void* ctx) {
    if (n <= 0) return 0;
    int threads = thread_count(n);
    if (threads == 1) return loop(n, base, stride, 0, ctx);
    int code = 0;
#pragma omp parallel num_threads(threads) reduction(| : code)
    {
        int64_t start, end;
        thread_range(n, &start, &end);
        if (start < end) {
            char* p[EM_MAX_OPERANDS];
            for (int k = 0; k < nops; k++) p[k] = base[k] + start * stride[k];
            code |= loop(end - start, p, stride, start, ctx);
        }
    }
    return code;
}
