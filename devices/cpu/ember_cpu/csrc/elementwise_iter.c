/* The iterator under every rendered elementwise kernel, and its entry points.
 *
 * The plan's geometry is already coalesced, so a dense or row-broadcast operand of any
 * rank arrives as one or two dims. The element range is split evenly across OpenMP
 * threads; each thread walks its range row by row, calling the inner loop once per row.
 * float16 operands are converted to float blocks around the loop (call_loop).
 */
#include <omp.h>
#include <stdio.h>

#include "elementwise.h"

typedef struct {
    const em_kernel* k;
    const em_scalar* scalar;
    int ndim;
    int64_t numel;
    int64_t shape[EM_MAX_DIMS];
    int64_t stride[EM_MAX_OPERANDS][EM_MAX_DIMS]; /* bytes */
    char* base[EM_MAX_OPERANDS];
} em_iter;

static int fail(const char* message, int value) {
    snprintf(em_error_message, sizeof em_error_message, message, value);
    return 2;
}

/* Loads bfloat16 operand k (n elements, stride s) into out as float; stride 0 loads one. */
static int64_t load_bf16(const char* p, int64_t s, float* out, int64_t n) {
    if (s == 0) {
        out[0] = em_bf16_to_f(*(const em_bf16*)p);
        return 0;
    }
    if (s == sizeof(em_bf16)) {
        em_bf16_to_float((const em_bf16*)p, out, n);
    } else {
        for (int64_t i = 0; i < n; i++) out[i] = em_bf16_to_f(*(const em_bf16*)(p + i * s));
    }
    return sizeof(float);
}

/* Loads float16 operand k (n elements, stride s) into out as float; stride 0 loads one. */
static int64_t load_half(const char* p, int64_t s, float* out, int64_t n) {
    if (s == 0) {
        out[0] = (float)*(const em_half*)p;
        return 0;
    }
    if (s == sizeof(em_half)) {
        em_half_to_float((const em_half*)p, out, n);
    } else {
        for (int64_t i = 0; i < n; i++) out[i] = (float)*(const em_half*)(p + i * s);
    }
    return sizeof(float);
}

/* The kernel's loop on one row: directly, or on float blocks for its float16 operands. */
static int call_loop(const em_iter* it, int64_t n, char* const* p, const int64_t* s) {
    const em_kernel* k = it->k;
    if (!k->half) return k->loop(n, p, s, it->scalar);
    const int side = it->scalar ? it->scalar->side : -1;
    float buf[EM_MAX_OPERANDS][EM_BLOCK];
    char* q[EM_MAX_OPERANDS];
    int64_t qs[EM_MAX_OPERANDS];
    for (int64_t i0 = 0; i0 < n; i0 += EM_BLOCK) {
        const int64_t m = n - i0 < EM_BLOCK ? n - i0 : EM_BLOCK;
        for (int j = 0; j < k->nops; j++) {
            q[j] = p[j] + i0 * s[j];
            qs[j] = s[j];
            if (!((k->half >> j) & 1) || j == side) continue;
            const int bf16 = (k->half >> (EM_BF16_SHIFT + j)) & 1;
            qs[j] = j == 0  ? (int64_t)sizeof(float)
                    : bf16 ? load_bf16(q[j], s[j], buf[j], m)
                           : load_half(q[j], s[j], buf[j], m);
            q[j] = (char*)buf[j];
        }
        k->loop(m, q, qs, it->scalar);
        if (k->half & (1 << EM_BF16_SHIFT)) {
            char* out = p[0] + i0 * s[0];
            if (s[0] == sizeof(em_bf16)) {
                em_float_to_bf16(buf[0], (em_bf16*)out, m);
            } else {
                for (int64_t i = 0; i < m; i++)
                    *(em_bf16*)(out + i * s[0]) = em_f_to_bf16(buf[0][i]);
            }
        } else if (k->half & 1) {
            char* out = p[0] + i0 * s[0];
            if (s[0] == sizeof(em_half)) {
                em_float_to_half(buf[0], (em_half*)out, m);
            } else {
                for (int64_t i = 0; i < m; i++) *(em_half*)(out + i * s[0]) = (em_half)buf[0][i];
            }
        }
    }
    return 0;
}

/* Elements [start, end) of the iteration space, in row-major order. */
static void iter_range(const em_iter* it, int64_t start, int64_t end) {
    const int nd = it->ndim, nops = it->k->nops;
    const int64_t inner = it->shape[nd - 1];
    int64_t idx[EM_MAX_DIMS], s[EM_MAX_OPERANDS], rem = start;
    char* p[EM_MAX_OPERANDS];
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    for (int k = 0; k < nops; k++) {
        p[k] = it->base[k];
        for (int d = 0; d < nd; d++) p[k] += idx[d] * it->stride[k][d];
        s[k] = it->stride[k][nd - 1];
    }
    for (int64_t pos = start; pos < end;) {
        int64_t len = inner - idx[nd - 1];
        if (len > end - pos) len = end - pos;
        call_loop(it, len, p, s);
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
}

/* How many threads a loop over n elements deserves. */
static int thread_count(int64_t n) {
    if (n < 2 * (int64_t)EM_PARALLEL_GRAIN || omp_in_parallel()) return 1;
    int64_t want = n / EM_PARALLEL_GRAIN;
    int have = em_threads();
    return want < have ? (int)want : have;
}

static void run(const em_iter* it) {
    const int64_t n = it->numel;
    int threads = thread_count(n);
    if (threads == 1) {
        iter_range(it, 0, n);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        /* Chunks are rounded to 64 elements so threads rarely share a cache line. */
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        int64_t chunk = ((n + nt - 1) / nt + 63) & ~(int64_t)63;
        int64_t start = chunk * t < n ? chunk * t : n;
        int64_t end = start + chunk < n ? start + chunk : n;
        if (start < end) iter_range(it, start, end);
    }
}

static int init(em_iter* it, int kernel, const em_scalar* scalar, intptr_t p0, intptr_t p1,
                intptr_t p2, intptr_t p3) {
    if ((unsigned)kernel >= (unsigned)em_kernel_count)
        return fail("no cpu kernel for this op and dtype (%d)", kernel);
    it->k = &em_kernels[kernel];
    it->scalar = scalar;
    it->base[0] = (char*)p0;
    it->base[1] = (char*)p1;
    it->base[2] = (char*)p2;
    it->base[3] = (char*)p3;
    return 0;
}

/* A flat loop over n elements: each operand dense, or a scalar. */
static int flat(em_iter* it, int64_t n) {
    it->ndim = 1;
    it->numel = it->shape[0] = n;
    const int side = it->scalar ? it->scalar->side : -1;
    for (int k = 0; k < it->k->nops; k++) it->stride[k][0] = k == side ? 0 : it->k->itemsize[k];
    run(it);
    return 0;
}

int em_kernel_id(const char* name) {
    for (int k = 0; k < em_kernel_count; k++)
        if (strcmp(em_kernels[k].name, name) == 0) return k;
    return -1;
}

int em_flat2(int kernel, int64_t n, intptr_t p0, intptr_t p1) {
    em_iter it;
    return init(&it, kernel, NULL, p0, p1, 0, 0) ? 2 : flat(&it, n);
}

int em_flat3(int kernel, int64_t n, intptr_t p0, intptr_t p1, intptr_t p2) {
    em_iter it;
    return init(&it, kernel, NULL, p0, p1, p2, 0) ? 2 : flat(&it, n);
}

int em_flat4(int kernel, int64_t n, intptr_t p0, intptr_t p1, intptr_t p2, intptr_t p3) {
    em_iter it;
    return init(&it, kernel, NULL, p0, p1, p2, p3) ? 2 : flat(&it, n);
}

int em_flat_scalar(int kernel, int64_t n, intptr_t p0, intptr_t p1, intptr_t p2, int side,
                   double f, int64_t i) {
    em_iter it;
    const em_scalar scalar = {side, f, i};
    return init(&it, kernel, &scalar, p0, p1, p2, 0) ? 2 : flat(&it, n);
}

/* --- transposing copies ----------------------------------------------------------------
 * When one side walks memory along the innermost dim and the other along another dim
 * (x.t().contiguous(), permutes), row-by-row copying touches a new cache line per element
 * on the strided side. Copying in EM_TILE x EM_TILE tiles of those two dims reuses each
 * line EM_TILE times. Copies are order-free, so the dims can be rearranged for it. */
#define EM_TILE 32

/* The dim (other than the innermost) along which the operand that is strided in the
 * innermost dim is contiguous; -1 when tiling does not apply. */
static int tile_dim(const em_iter* it) {
    const int nd = it->ndim;
    const int* size = it->k->itemsize;
    if (it->k->nops != 2 || nd < 2 || it->shape[nd - 1] < EM_TILE) return -1;
    for (int k = 0; k < 2; k++) {
        if (it->stride[1 - k][nd - 1] != size[1 - k] || it->stride[k][nd - 1] == size[k])
            continue;
        for (int d = nd - 2; d >= 0; d--)
            if (it->stride[k][d] == size[k] && it->shape[d] >= EM_TILE) return d;
    }
    return -1;
}

static void copy_tiled(em_iter* it, int d) {
    /* Move dim d next to the innermost one; the rest become the outer loop. */
    const int nd = it->ndim;
    int64_t shape = it->shape[d], stride[2] = {it->stride[0][d], it->stride[1][d]};
    for (int e = d; e < nd - 2; e++) {
        it->shape[e] = it->shape[e + 1];
        for (int k = 0; k < 2; k++) it->stride[k][e] = it->stride[k][e + 1];
    }
    it->shape[nd - 2] = shape;
    for (int k = 0; k < 2; k++) it->stride[k][nd - 2] = stride[k];
    const int64_t rows = it->shape[nd - 2], cols = it->shape[nd - 1];
    const int64_t row_tiles = (rows + EM_TILE - 1) / EM_TILE;
    const int64_t col_tiles = (cols + EM_TILE - 1) / EM_TILE;
    const int64_t tiles = it->numel / (rows * cols) * row_tiles * col_tiles;
    const int64_t inner[2] = {it->stride[0][nd - 1], it->stride[1][nd - 1]};
#pragma omp parallel for schedule(static) num_threads(em_threads()) \
    if (it->numel >= 2 * EM_PARALLEL_GRAIN && !omp_in_parallel())
    for (int64_t t = 0; t < tiles; t++) {
        int64_t o = t / (row_tiles * col_tiles), r0 = (t / col_tiles) % row_tiles * EM_TILE,
                c0 = t % col_tiles * EM_TILE;
        char* p[2] = {it->base[0], it->base[1]};
        for (int e = nd - 3; e >= 0; e--) {
            int64_t i = o % it->shape[e];
            o /= it->shape[e];
            for (int k = 0; k < 2; k++) p[k] += i * it->stride[k][e];
        }
        const int64_t r1 = r0 + EM_TILE < rows ? r0 + EM_TILE : rows;
        const int64_t len = c0 + EM_TILE < cols ? EM_TILE : cols - c0;
        for (int64_t r = r0; r < r1; r++) {
            char* q[2] = {p[0] + r * it->stride[0][nd - 2] + c0 * inner[0],
                          p[1] + r * it->stride[1][nd - 2] + c0 * inner[1]};
            call_loop(it, len, q, inner);
        }
    }
}

int em_strided(int kernel, int ndim, const char* geometry, intptr_t p0, intptr_t p1, intptr_t p2,
               intptr_t p3, int side, double f, int64_t i) {
    em_iter it;
    const em_scalar scalar = {side, f, i};
    if (init(&it, kernel, side ? &scalar : NULL, p0, p1, p2, p3)) return 2;
    if (ndim > EM_MAX_DIMS) return fail("the cpu device supports at most 16 dims, got %d", ndim);
    const int nops = it.k->nops;
    it.ndim = ndim ? ndim : 1;
    it.shape[0] = 1;
    for (int k = 0; k < nops; k++) it.stride[k][0] = 0;
    /* The packed buffer may be unaligned: copy it out. */
    memcpy(it.shape, geometry, sizeof(int64_t) * (size_t)ndim);
    for (int k = 0; k < nops; k++) {
        memcpy(it.stride[k], geometry + sizeof(int64_t) * (size_t)((k + 1) * ndim),
               sizeof(int64_t) * (size_t)ndim);
        for (int d = 0; d < ndim; d++) it.stride[k][d] *= it.k->itemsize[k];
    }
    it.numel = 1;
    for (int d = 0; d < it.ndim; d++) it.numel *= it.shape[d];
    int d = tile_dim(&it);
    if (d >= 0) {
        copy_tiled(&it, d);
    } else {
        run(&it);
    }
    return 0;
}

/* --- arange_ ---------------------------------------------------------------------------
 * Float results, and integer results of float bounds, compute start + i * step in double
 * (then truncate); integer bounds compute in wrapping int64. */
#define EM_ARANGE(CODE, T)                                                                \
    case CODE:                                                                            \
        _Pragma("omp parallel for num_threads(em_threads()) if (n >= 2 * EM_PARALLEL_GRAIN)") \
        for (int64_t i = 0; i < n; i++) {                                                 \
            if (use_int && (T)0.5 == 0) {                                                 \
                ((T*)out)[i] = (T)((uint64_t)start_i + (uint64_t)i * (uint64_t)step_i);   \
            } else {                                                                      \
                double v = start + (double)i * step;                                      \
                ((T*)out)[i] = (T)0.5 != 0 ? (T)v : (T)(int64_t)v;                        \
            }                                                                             \
        }                                                                                 \
        return 0;

int em_arange(int dtype, int64_t n, intptr_t out, double start, double step, int64_t start_i,
              int64_t step_i, int use_int) {
    if (use_int) {
        start = (double)start_i;
        step = (double)step_i;
    }
    switch (dtype) {
        EM_ARANGE(EM_UINT8, uint8_t)
        EM_ARANGE(EM_INT8, int8_t)
        EM_ARANGE(EM_INT32, int32_t)
        EM_ARANGE(EM_INT64, int64_t)
        EM_ARANGE(EM_FLOAT16, em_half)
        EM_ARANGE(EM_FLOAT32, float)
        EM_ARANGE(EM_FLOAT64, double)
        case EM_BFLOAT16:
            for (int64_t i = 0; i < n; i++)
                ((em_bf16*)out)[i] = em_f_to_bf16((float)(start + (double)i * step));
            return 0;
        default: return fail("arange_: not implemented for dtype code %d", dtype);
    }
}
