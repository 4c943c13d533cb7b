/* Indexing kernels of the CPU device: index_select, gather, scatter_, scatter_add_, take,
 * index_put_ and nonzero: OpenMP row loops around the element functions of the shared
 * em_index.h (index checks, addressing, accumulation, nonzero's walk).
 *
 * gather-like ops iterate over the index's shape, coalesced here, row by row with three
 * operands (destination, index, source). Copies move raw elements by item size, so one
 * loop serves every dtype; only the accumulating variants and nonzero switch on the dtype.
 *
 * Every index is range-checked here too (the runtime checks first, but the kernels are
 * also called directly): a bad one returns 1 with PyTorch's message. In-place ops
 * (scatter_, scatter_add_, index_put_) check before writing anything, so a failed call
 * leaves the target untouched; they run serially in the row-major order of the index, so
 * with duplicate indices the last write wins (scatter_, index_put_ without accumulate) and
 * additions are deterministic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "em_index.h"
#include "strided.h"

enum { DST, IDX, SRC };

/* The iteration space: rows of `size[n-1]` elements (a 0-d space is one row of one). */
typedef struct {
    int n;
    int64_t size[EM_MAX_DIMS];
    int64_t s[3][EM_MAX_DIMS];
} geo_t;

/* A tensor addressed by row-major position; `contiguous`: the position is the offset. */
typedef struct {
    em_shape s;
    int contiguous;
    int64_t numel;
} flat_t;

static int index_error(int64_t value, int dim, int64_t size) {
    snprintf(em_error_message, sizeof em_error_message,
             "index %lld is out of bounds for dimension %d with size %lld", (long long)value,
             dim, (long long)size);
    return 1;
}

/* geo_t over `shape` with the operands' strides (NULL: all zero); operand `along` is the
 * one addressed through the index, so its stride on `dim` is zeroed (dim < 0: none). */
static void geo_init(geo_t* g, int ndim, const int64_t* shape, const int64_t* dst,
                     const int64_t* idx, const int64_t* src, int along, int dim) {
    const int64_t* strides[3] = {dst, idx, src};
    g->n = ndim;
    for (int d = 0; d < ndim; d++) {
        g->size[d] = shape[d];
        for (int k = 0; k < 3; k++)
            g->s[k][d] = strides[k] && !(k == along && d == dim) ? strides[k][d] : 0;
    }
}

/* Drops size-1 dims and merges neighbours that address like one dim for all operands;
 * the row-major order of the iteration is kept. */
static void coalesce(geo_t* g) {
    int m = 0;
    for (int i = 0; i < g->n; i++) {
        if (g->size[i] == 1) continue;
        int merge = m > 0;
        for (int k = 0; k < 3 && merge; k++)
            merge = g->s[k][m - 1] == g->s[k][i] * g->size[i];
        if (merge) {
            g->size[m - 1] *= g->size[i];
            for (int k = 0; k < 3; k++) g->s[k][m - 1] = g->s[k][i];
        } else {
            g->size[m] = g->size[i];
            for (int k = 0; k < 3; k++) g->s[k][m] = g->s[k][i];
            m++;
        }
    }
    g->n = m;
}

static int64_t geo_numel(const geo_t* g) {
    int64_t n = 1;
    for (int i = 0; i < g->n; i++) n *= g->size[i];
    return n;
}

static int64_t row_len(const geo_t* g) { return g->n ? g->size[g->n - 1] : 1; }
static int64_t row_stride(const geo_t* g, int k) { return g->n ? g->s[k][g->n - 1] : 0; }

/* Offsets of row r (rows are all dims but the last). */
static void row_offsets(const geo_t* g, int64_t r, int64_t* idx, int64_t* off) {
    off[0] = off[1] = off[2] = 0;
    for (int d = g->n - 2; d >= 0; d--) {
        idx[d] = r % g->size[d];
        r /= g->size[d];
        for (int k = 0; k < 3; k++) off[k] += idx[d] * g->s[k][d];
    }
}

static void next_row(const geo_t* g, int64_t* idx, int64_t* off) {
    for (int d = g->n - 2; d >= 0; d--) {
        if (++idx[d] < g->size[d]) {
            for (int k = 0; k < 3; k++) off[k] += g->s[k][d];
            return;
        }
        for (int k = 0; k < 3; k++) off[k] -= g->s[k][d] * (g->size[d] - 1);
        idx[d] = 0;
    }
}

/* keep_ones keeps size-1 dims (nonzero reports coordinates in them); they add nothing to
 * an offset otherwise. */
static void flat_init(flat_t* f, int ndim, const int64_t* shape, const int64_t* strides,
                      int keep_ones) {
    f->s.ndim = 0;
    f->numel = 1;
    for (int d = 0; d < ndim; d++) {
        f->numel *= shape[d];
        if (shape[d] == 1 && !keep_ones) continue;
        f->s.shape[f->s.ndim] = shape[d];
        f->s.stride[f->s.ndim++] = strides[d];
    }
    f->contiguous = 1;
    int64_t step = 1;
    for (int d = (int)f->s.ndim - 1; d >= 0; d--) {
        if (f->s.shape[d] != 1 && f->s.stride[d] != step) f->contiguous = 0;
        step *= f->s.shape[d];
    }
}

static inline int64_t flat_offset(const flat_t* f, int64_t v) {
    return f->contiguous ? v : em_shape_offset(&f->s, v);
}

/* ---- gather, index_select, take --------------------------------------------------------- */

/* A row loop split across threads; the first bad index any of them meets is kept. */
typedef struct rows_job rows_job_t;
typedef int (*gather_rows_fn)(const rows_job_t*, int64_t, int64_t, int64_t*);

struct rows_job {
    const geo_t* g;
    char* dst;
    const int64_t* index;
    const char* src;
    int64_t dstride, dsize, rows;
    const flat_t* flat; /* take: the source, addressed by flat position (dstride unused) */
    gather_rows_fn fn;
    int found;
    int64_t bad;
};

static void record_bad(rows_job_t* job, int64_t bad) {
#pragma omp critical
    if (!job->found) {
        job->found = 1;
        job->bad = bad;
    }
}

#define GATHER_ROW(D, X, SOURCE)                                                          \
    for (int64_t j = 0; j < len; j++) {                                                   \
        int64_t v = x[X];                                                                 \
        if (!em_index_in_range(v, dsize)) {                                               \
            *bad = v;                                                                     \
            return 1;                                                                     \
        }                                                                                 \
        d[D] = s[SOURCE];                                                                 \
    }

/* dst[pos] = src[pos with dim -> index[pos]] (take: src[index[pos]] by flat position) for
 * the rows [rbegin, rend); on an out-of-range index, stores it in *bad and returns 1. */
#define DEFINE_GATHER_ROWS(T)                                                             \
    static int gather_rows_##T(const rows_job_t* job, int64_t rbegin, int64_t rend,       \
                               int64_t* bad) {                                            \
        const geo_t* g = job->g;                                                          \
        int64_t idx[EM_MAX_DIMS], off[3], len = row_len(g);                               \
        int64_t dstride = job->dstride, dsize = job->dsize;                               \
        int64_t r0 = row_stride(g, DST), r1 = row_stride(g, IDX), r2 = row_stride(g, SRC); \
        if (rbegin >= rend) return 0;                                                     \
        row_offsets(g, rbegin, idx, off);                                                 \
        for (int64_t r = rbegin; r < rend; r++) {                                         \
            T* d = (T*)job->dst + off[DST];                                               \
            const int64_t* x = job->index + off[IDX];                                     \
            const T* s = (const T*)job->src + off[SRC];                                   \
            if (job->flat)                                                                \
                GATHER_ROW(j * r0, j * r1, flat_offset(job->flat, v))                     \
            else if (r0 == 1 && r1 == 1) /* the common layout, strides known */           \
                GATHER_ROW(j, j, em_index_along(j * r2, v, dstride))                      \
            else                                                                          \
                GATHER_ROW(j * r0, j * r1, em_index_along(j * r2, v, dstride))            \
            next_row(g, idx, off);                                                        \
        }                                                                                 \
        return 0;                                                                         \
    }

DEFINE_GATHER_ROWS(uint8_t)
DEFINE_GATHER_ROWS(uint16_t)
DEFINE_GATHER_ROWS(uint32_t)
DEFINE_GATHER_ROWS(uint64_t)

static gather_rows_fn gather_rows_for(int isz) {
    switch (isz) {
        case 1: return gather_rows_uint8_t;
        case 2: return gather_rows_uint16_t;
        case 4: return gather_rows_uint32_t;
        default: return gather_rows_uint64_t;
    }
}

static void gather_part(void* ctx, int t, int nt) {
    rows_job_t* job = ctx;
    int64_t bad = 0;
    if (job->fn(job, job->rows * t / nt, job->rows * (t + 1) / nt, &bad)) record_bad(job, bad);
}

static int run_gather(geo_t* g, int isz, char* dst, const int64_t* index, const char* src,
                      int64_t dstride, int64_t dsize, const flat_t* flat, int dim) {
    coalesce(g);
    int64_t total = geo_numel(g);
    if (total == 0) return 0;
    rows_job_t job = {g, dst, index, src, dstride, dsize, total / row_len(g),
                      flat, gather_rows_for(isz), 0, 0};
    run_parts(total, job.rows, gather_part, &job);
    return job.found ? index_error(job.bad, dim, dsize) : 0;
}

/* geometry: shape (= index's), out strides, index strides, a strides */
int em_gather(intptr_t out, intptr_t a, intptr_t index, int itemsize, int ndim, int dim,
              int64_t a_dim_size, const int64_t* geometry) {
    geo_t g;
    geo_init(&g, ndim, geometry, geometry + ndim, geometry + 2 * ndim, geometry + 3 * ndim, SRC,
             dim);
    int64_t dstride = ndim ? geometry[3 * ndim + dim] : 0;
    return run_gather(&g, itemsize, (char*)out, (const int64_t*)index, (const char*)a, dstride,
                      a_dim_size, NULL, dim);
}

/* Both contiguous: out is (outer, n, inner) blocks copied from a's (outer, asize, inner). */
typedef struct {
    char* out;
    const char* a;
    const int64_t* index;
    int64_t istride, n, block, asize, items;
} select_job_t;

static void select_part(void* ctx, int t, int nt) {
    const select_job_t* job = ctx;
    int64_t begin = job->items * t / nt, end = job->items * (t + 1) / nt;
    for (int64_t it = begin; it < end; it++) {
        int64_t o = it / job->n, i = it % job->n;
        int64_t block = em_index_along(o * job->asize, job->index[i * job->istride], 1);
        memcpy(job->out + it * job->block, job->a + block * job->block, (size_t)job->block);
    }
}

static int select_contiguous(int isz, char* out, const char* a, const int64_t* index,
                             int64_t istride, int64_t n, int64_t outer, int64_t inner,
                             int64_t asize, int dim) {
    for (int64_t i = 0; i < n; i++)
        if (!em_index_in_range(index[i * istride], asize))
            return index_error(index[i * istride], dim, asize);
    select_job_t job = {out, a, index, istride, n, inner * isz, asize, outer * n};
    run_parts(outer * n * inner, outer * n, select_part, &job);
    return 0;
}

/* geometry: out shape, out strides, a strides; index is 1-d with `index_stride`. */
int em_index_select(intptr_t out, intptr_t a, intptr_t index, int itemsize, int ndim, int dim,
                    int64_t a_dim_size, int64_t index_stride, const int64_t* geometry) {
    const int64_t *shape = geometry, *so = geometry + ndim, *sa = geometry + 2 * ndim;
    const int64_t* pindex = (const int64_t*)index;
    int64_t n = ndim ? shape[dim] : 1;
    /* contiguous out and a (a has a_dim_size on dim) */
    int contiguous = 1;
    int64_t step_o = 1, step_a = 1, outer = 1, inner = 1;
    for (int d = ndim - 1; d >= 0 && contiguous; d--) {
        int64_t asz = d == dim ? a_dim_size : shape[d];
        contiguous = (shape[d] == 1 || so[d] == step_o) && (asz == 1 || sa[d] == step_a);
        step_o *= shape[d];
        step_a *= asz;
        if (d < dim) outer *= shape[d];
        if (d > dim) inner *= shape[d];
    }
    if (n * outer * inner == 0) return 0;
    if (contiguous)
        return select_contiguous(itemsize, (char*)out, (const char*)a, pindex, index_stride, n,
                                 outer, inner, a_dim_size, dim);
    /* a gather whose index strides are zero except on dim */
    geo_t g;
    geo_init(&g, ndim, shape, so, NULL, sa, SRC, dim);
    g.s[IDX][dim] = index_stride;
    return run_gather(&g, itemsize, (char*)out, pindex, (const char*)a, sa[dim], a_dim_size,
                      NULL, dim);
}

/* geometry: shape (= index's = out's), out strides, index strides, then a's shape and
 * strides (a_ndim each). */
int em_take(intptr_t out, intptr_t a, intptr_t index, int itemsize, int ndim, int a_ndim,
            const int64_t* geometry) {
    geo_t g;
    geo_init(&g, ndim, geometry, geometry + ndim, geometry + 2 * ndim, NULL, SRC, -1);
    flat_t fa;
    flat_init(&fa, a_ndim, geometry + 3 * ndim, geometry + 3 * ndim + a_ndim, 0);
    return run_gather(&g, itemsize, (char*)out, (const int64_t*)index, (const char*)a, 0,
                      fa.numel, &fa, 0);
}

/* ---- scatter_, scatter_add_, index_put_ ---------------------------------------------------- */

static int check_indices(const geo_t* g, const int64_t* index, int dim, int64_t size) {
    int64_t rows = geo_numel(g) / row_len(g), len = row_len(g), rs = row_stride(g, IDX);
    int64_t idx[EM_MAX_DIMS], off[3];
    row_offsets(g, 0, idx, off);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t* x = index + off[IDX];
        for (int64_t j = 0; j < len; j++)
            if (!em_index_in_range(x[j * rs], size)) return index_error(x[j * rs], dim, size);
        next_row(g, idx, off);
    }
    return 0;
}

/* How an in-place op updates element t with value v: OP(dtype code, t, v); ASSIGN moves
 * raw elements and takes no code. */
#define ASSIGN(code, t, v) ((t) = (v))
#define ADD(code, t, v) ((t) = EM_INDEX_ADD(code, t, v))

#define DEFINE_SCATTER_ROWS(NAME, T, OP, CODE)                                            \
    static void NAME(const geo_t* g, char* dst, const int64_t* index, const char* src,    \
                     int64_t dstride) {                                                   \
        int64_t rows = geo_numel(g) / row_len(g), len = row_len(g);                       \
        int64_t r0 = row_stride(g, DST), r1 = row_stride(g, IDX), r2 = row_stride(g, SRC); \
        int64_t idx[EM_MAX_DIMS], off[3];                                                 \
        row_offsets(g, 0, idx, off);                                                      \
        for (int64_t r = 0; r < rows; r++) {                                              \
            T* d = (T*)dst + off[DST];                                                    \
            const int64_t* x = index + off[IDX];                                          \
            const T* s = (const T*)src + off[SRC];                                        \
            for (int64_t j = 0; j < len; j++) {                                           \
                T* target = d + em_index_along(j * r0, x[j * r1], dstride);               \
                OP(CODE, *target, s[j * r2]);                                             \
            }                                                                             \
            next_row(g, idx, off);                                                        \
        }                                                                                 \
    }

DEFINE_SCATTER_ROWS(scatter_1, uint8_t, ASSIGN, -)
DEFINE_SCATTER_ROWS(scatter_2, uint16_t, ASSIGN, -)
DEFINE_SCATTER_ROWS(scatter_4, uint32_t, ASSIGN, -)
DEFINE_SCATTER_ROWS(scatter_8, uint64_t, ASSIGN, -)
DEFINE_SCATTER_ROWS(scatter_add_b, uint8_t, ADD, 0)
DEFINE_SCATTER_ROWS(scatter_add_u8, uint8_t, ADD, 1)
DEFINE_SCATTER_ROWS(scatter_add_i8, int8_t, ADD, 2)
DEFINE_SCATTER_ROWS(scatter_add_i32, int32_t, ADD, 3)
DEFINE_SCATTER_ROWS(scatter_add_i64, int64_t, ADD, 4)
DEFINE_SCATTER_ROWS(scatter_add_f16, em_half, ADD, 5)
DEFINE_SCATTER_ROWS(scatter_add_f32, float, ADD, 6)
DEFINE_SCATTER_ROWS(scatter_add_f64, double, ADD, 7)

typedef void (*scatter_rows_fn)(const geo_t*, char*, const int64_t*, const char*, int64_t);
/* bfloat16 (code 8) is assigned as bits; its additions run on float32 copies (see
 * kernels_index.py) and never reach SCATTER_ADD or PUT_ADD. */
static const scatter_rows_fn SCATTER_ADD[8] = {
    scatter_add_b, scatter_add_u8, scatter_add_i8, scatter_add_i32,
    scatter_add_i64, scatter_add_f16, scatter_add_f32, scatter_add_f64,
};
static const scatter_rows_fn SCATTER_ASSIGN[EM_DTYPE_COUNT] = {
    scatter_1, scatter_1, scatter_1, scatter_4, scatter_8, scatter_2, scatter_4, scatter_8,
    scatter_2,
};

/* geometry: shape (= index's), target strides, index strides, src strides */
int em_scatter(intptr_t target, intptr_t src, intptr_t index, int dt, int ndim, int dim,
               int64_t target_dim_size, const int64_t* geometry, int accumulate) {
    if (dt == EM_BFLOAT16 && accumulate) return no_bf16("scatter_add");
    geo_t g;
    geo_init(&g, ndim, geometry, geometry + ndim, geometry + 2 * ndim, geometry + 3 * ndim, DST,
             dim);
    int64_t dstride = ndim ? geometry[ndim + dim] : 0;
    coalesce(&g);
    if (geo_numel(&g) == 0) return 0;
    int status = check_indices(&g, (const int64_t*)index, dim, target_dim_size);
    if (status) return status;
    (accumulate ? SCATTER_ADD : SCATTER_ASSIGN)[dt](&g, (char*)target, (const int64_t*)index,
                                                     (const char*)src, dstride);
    return 0;
}

#define DEFINE_PUT(NAME, T, OP, CODE)                                                     \
    static void NAME(char* target, const flat_t* f, const int64_t* index, const char* values, \
                     int64_t n) {                                                         \
        const T* v = (const T*)values;                                                    \
        for (int64_t i = 0; i < n; i++) {                                                 \
            T* t = (T*)target + flat_offset(f, index[i]);                                 \
            OP(CODE, *t, v[i]);                                                           \
        }                                                                                 \
    }

DEFINE_PUT(put_1, uint8_t, ASSIGN, -)
DEFINE_PUT(put_2, uint16_t, ASSIGN, -)
DEFINE_PUT(put_4, uint32_t, ASSIGN, -)
DEFINE_PUT(put_8, uint64_t, ASSIGN, -)
DEFINE_PUT(put_add_b, uint8_t, ADD, 0)
DEFINE_PUT(put_add_u8, uint8_t, ADD, 1)
DEFINE_PUT(put_add_i8, int8_t, ADD, 2)
DEFINE_PUT(put_add_i32, int32_t, ADD, 3)
DEFINE_PUT(put_add_i64, int64_t, ADD, 4)
DEFINE_PUT(put_add_f16, em_half, ADD, 5)
DEFINE_PUT(put_add_f32, float, ADD, 6)
DEFINE_PUT(put_add_f64, double, ADD, 7)

typedef void (*put_fn)(char*, const flat_t*, const int64_t*, const char*, int64_t);
static const put_fn PUT[EM_DTYPE_COUNT] = {put_1, put_1, put_1, put_4, put_8,
                                           put_2, put_4, put_8, put_2};
static const put_fn PUT_ADD[8] = {put_add_b,   put_add_u8,  put_add_i8,  put_add_i32,
                                  put_add_i64, put_add_f16, put_add_f32, put_add_f64};

/* target.flatten()[index[i]] (+)= values[i]; geometry: target shape, target strides. */
int em_index_put(intptr_t target, intptr_t index, intptr_t values, int dt, int64_t n,
                 int accumulate, int ndim, const int64_t* geometry) {
    if (dt == EM_BFLOAT16 && accumulate) return no_bf16("index_put (accumulate)");
    flat_t f;
    flat_init(&f, ndim, geometry, geometry + ndim, 0);
    const int64_t* pindex = (const int64_t*)index;
    for (int64_t i = 0; i < n; i++)
        if (!em_index_in_range(pindex[i], f.numel)) return index_error(pindex[i], 0, f.numel);
    (accumulate ? PUT_ADD : PUT)[dt]((char*)target, &f, pindex, (const char*)values, n);
    return 0;
}

/* ---- nonzero ---------------------------------------------------------------------------- */

#define IS_NONZERO(p, i) ((p)[i] != 0)

/* count_SUF: a contiguous input is one vectorised loop, a strided one em_index.h's walk. */
#define DEFINE_NONZERO(SUF, T)                                                            \
    EM_INDEX_NONZERO(SUF, T, IS_NONZERO)                                                  \
    static int64_t count_##SUF(const char* base, const flat_t* f) {                       \
        const T* p = (const T*)base;                                                      \
        if (!f->contiguous) return em_nonzero_count_##SUF(p, &f->s, 0, f->numel);         \
        int64_t count = 0;                                                                \
        for (int64_t i = 0; i < f->numel; i++) count += p[i] != 0;                        \
        return count;                                                                     \
    }                                                                                     \
    static void fill_##SUF(const char* base, const flat_t* f, int64_t* out, int64_t limit) { \
        em_nonzero_fill_##SUF((const T*)base, &f->s, 0, f->numel, out, limit);            \
    }

DEFINE_NONZERO(u8, uint8_t)
DEFINE_NONZERO(i8, int8_t)
DEFINE_NONZERO(i32, int32_t)
DEFINE_NONZERO(i64, int64_t)
DEFINE_NONZERO(f16, em_half)
DEFINE_NONZERO(f32, float)
DEFINE_NONZERO(f64, double)

typedef int64_t (*count_fn)(const char*, const flat_t*);
typedef void (*fill_fn)(const char*, const flat_t*, int64_t*, int64_t);
static const count_fn COUNT[8] = {count_u8,  count_u8,  count_i8,  count_i32,
                                  count_i64, count_f16, count_f32, count_f64};
static const fill_fn FILL[8] = {fill_u8,  fill_u8,  fill_i8,  fill_i32,
                                fill_i64, fill_f16, fill_f32, fill_f64};

/* geometry: shape, strides */
int64_t em_count_nonzero(int dt, intptr_t a, int ndim, const int64_t* geometry) {
    if (dt == EM_BFLOAT16) return -1; /* kernels_index.py widens bfloat16 first */
    flat_t f;
    flat_init(&f, ndim, geometry, geometry + ndim, 0);
    if (f.numel == 0) return 0;
    return COUNT[dt]((const char*)a, &f);
}

/* out (count, ndim) int64 contiguous: the indices of at most `count` non-zero elements,
 * in row-major order. */
int em_nonzero(int dt, intptr_t out, intptr_t a, int ndim, const int64_t* geometry,
               int64_t count) {
    if (dt == EM_BFLOAT16) return no_bf16("nonzero");
    if (ndim == 0 || count == 0) return 0;
    flat_t f;
    flat_init(&f, ndim, geometry, geometry + ndim, 1);
    FILL[dt]((const char*)a, &f, (int64_t*)out, count);
    return 0;
}
