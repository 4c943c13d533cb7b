/* Indexing kernels of the CPU device: index_select, gather, scatter_, scatter_add_, take,
 * index_put_ and nonzero.
 *
 * gather-like ops iterate over the index's shape with three operands (destination, index,
 * source); the operand addressed through the index has its stride on `dim` replaced by
 * index value * stride. Copies move raw elements by item size, so one loop serves every
 * dtype; only the accumulating variants switch on the dtype.
 *
 * Every index is range-checked here too (the runtime checks first): a bad one returns 1
 * with PyTorch's message. In-place ops (scatter_, scatter_add_, index_put_) check before
 * writing anything, so a failed call leaves the target untouched; they run serially in
 * the row-major order of the index, so with duplicate indices the last write wins
 * (scatter_, index_put_ without accumulate) and additions are deterministic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strided.h"

enum { DST, IDX, SRC };

/* The iteration space: rows of `size[n-1]` elements (a 0-d space is one row of one). */
typedef struct {
    int n;
    int64_t size[EM_MAX_DIMS];
    int64_t s[3][EM_MAX_DIMS];
} geo_t;

static int index_error(int64_t value, int dim, int64_t size) {
    snprintf(em_error_message, sizeof em_error_message,
             "index %lld is out of bounds for dimension %d with size %lld", (long long)value,
             dim, (long long)size);
    return 1;
}

/* A row loop split across threads; the first bad index any of them meets is kept. */
typedef struct {
    const geo_t* g;
    char* dst;
    const int64_t* index;
    const char* src;
    int64_t dstride, dsize, rows;
    const void* flat; /* take: the source's flat_t */
    void (*fn)(void); /* a gather_rows_fn or take_rows_fn */
    int found;
    int64_t bad;
} rows_job_t;

static void record_bad(rows_job_t* job, int64_t bad) {
#pragma omp critical
    if (!job->found) {
        job->found = 1;
        job->bad = bad;
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

/* ---- gather, index_select ------------------------------------------------------------- */

/* dst[pos] = src[pos with dim -> index[pos]] for the rows [rbegin, rend); on an
 * out-of-range index, stores it in *bad and returns 1. */
#define DEFINE_GATHER_ROWS(T)                                                            \
    static int gather_rows_##T(const geo_t* g, char* dst, const int64_t* index,          \
                                const char* src, int64_t dstride, int64_t dsize,          \
                                int64_t rbegin, int64_t rend, int64_t* bad) {             \
        int64_t idx[EM_MAX_DIMS], off[3], len = row_len(g);                               \
        int64_t r0 = row_stride(g, DST), r1 = row_stride(g, IDX), r2 = row_stride(g, SRC); \
        if (rbegin >= rend) return 0;                                                     \
        row_offsets(g, rbegin, idx, off);                                                 \
        for (int64_t r = rbegin; r < rend; r++) {                                         \
            T* d = (T*)dst + off[DST];                                                    \
            const int64_t* x = index + off[IDX];                                          \
            const T* s = (const T*)src + off[SRC];                                        \
            if (r0 == 1 && r1 == 1) { /* the common layout, strides known */              \
                for (int64_t j = 0; j < len; j++) {                                       \
                    int64_t v = x[j];                                                     \
                    if ((uint64_t)v >= (uint64_t)dsize) {                                 \
                        *bad = v;                                                         \
                        return 1;                                                         \
                    }                                                                     \
                    d[j] = s[v * dstride + j * r2];                                       \
                }                                                                         \
            } else {                                                                      \
                for (int64_t j = 0; j < len; j++) {                                       \
                    int64_t v = x[j * r1];                                                \
                    if ((uint64_t)v >= (uint64_t)dsize) {                                 \
                        *bad = v;                                                         \
                        return 1;                                                         \
                    }                                                                     \
                    d[j * r0] = s[v * dstride + j * r2];                                  \
                }                                                                         \
            }                                                                             \
            next_row(g, idx, off);                                                        \
        }                                                                                 \
        return 0;                                                                         \
    }

DEFINE_GATHER_ROWS(uint8_t)
DEFINE_GATHER_ROWS(uint16_t)
DEFINE_GATHER_ROWS(uint32_t)
DEFINE_GATHER_ROWS(uint64_t)

typedef int (*gather_rows_fn)(const geo_t*, char*, const int64_t*, const char*, int64_t,
                               int64_t, int64_t, int64_t, int64_t*);

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
    if (((gather_rows_fn)job->fn)(job->g, job->dst, job->index, job->src, job->dstride,
                                  job->dsize, job->rows * t / nt, job->rows * (t + 1) / nt, &bad))
        record_bad(job, bad);
}

static int run_gather(geo_t* g, int isz, char* dst, const int64_t* index, const char* src,
                      int64_t dstride, int dim, int64_t dsize) {
    coalesce(g);
    int64_t total = geo_numel(g);
    if (total == 0) return 0;
    rows_job_t job = {g, dst, index, src, dstride, dsize, total / row_len(g), NULL,
                      (void (*)(void))gather_rows_for(isz), 0, 0};
    run_parts(total, job.rows, gather_part, &job);
    return job.found ? index_error(job.bad, dim, dsize) : 0;
}

/* geometry: shape (= index's), out strides, index strides, a strides */
int em_gather(intptr_t out, intptr_t a, intptr_t index, int itemsize, int ndim, int dim,
              int64_t a_dim_size, const int64_t* geometry) {
    geo_t g;
    g.n = ndim;
    int64_t dstride = ndim ? geometry[3 * ndim + dim] : 0;
    for (int d = 0; d < ndim; d++) {
        g.size[d] = geometry[d];
        g.s[DST][d] = geometry[ndim + d];
        g.s[IDX][d] = geometry[2 * ndim + d];
        g.s[SRC][d] = d == dim ? 0 : geometry[3 * ndim + d];
    }
    return run_gather(&g, itemsize, (char*)out, (const int64_t*)index, (const char*)a, dstride,
                      dim, a_dim_size);
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
        memcpy(job->out + it * job->block,
               job->a + (o * job->asize + job->index[i * job->istride]) * job->block,
               (size_t)job->block);
    }
}

static int select_contiguous(int isz, char* out, const char* a, const int64_t* index,
                             int64_t istride, int64_t n, int64_t outer, int64_t inner,
                             int64_t asize, int dim) {
    for (int64_t i = 0; i < n; i++)
        if ((uint64_t)index[i * istride] >= (uint64_t)asize)
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
    geo_t g;
    g.n = ndim;
    for (int d = 0; d < ndim; d++) {
        g.size[d] = shape[d];
        g.s[DST][d] = so[d];
        g.s[IDX][d] = d == dim ? index_stride : 0;
        g.s[SRC][d] = d == dim ? 0 : sa[d];
    }
    return run_gather(&g, itemsize, (char*)out, pindex, (const char*)a, sa[dim], dim,
                      a_dim_size);
}

/* ---- scatter_, scatter_add_ --------------------------------------------------------------- */

static int check_indices(const geo_t* g, const int64_t* index, int dim, int64_t size) {
    int64_t total = geo_numel(g);
    if (total == 0) return 0;
    int64_t rows = total / row_len(g), len = row_len(g), rs = row_stride(g, IDX);
    int64_t idx[EM_MAX_DIMS], off[3];
    row_offsets(g, 0, idx, off);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t* x = index + off[IDX];
        for (int64_t j = 0; j < len; j++)
            if ((uint64_t)x[j * rs] >= (uint64_t)size) return index_error(x[j * rs], dim, size);
        next_row(g, idx, off);
    }
    return 0;
}

#define DEFINE_SCATTER_ROWS(NAME, T, OP)                                                  \
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
                T* target = d + x[j * r1] * dstride + j * r0;                             \
                OP(*target, s[j * r2]);                                                   \
            }                                                                             \
            next_row(g, idx, off);                                                        \
        }                                                                                 \
    }

#define ASSIGN(t, v) ((t) = (v))
#define ADD(t, v) ((t) = (t) + (v))
#define ADD_WRAP(t, v) ((t) = (int64_t)((uint64_t)(t) + (uint64_t)(v)))
#define OR(t, v) ((t) = (t) | (v))

DEFINE_SCATTER_ROWS(scatter_1, uint8_t, ASSIGN)
DEFINE_SCATTER_ROWS(scatter_2, uint16_t, ASSIGN)
DEFINE_SCATTER_ROWS(scatter_4, uint32_t, ASSIGN)
DEFINE_SCATTER_ROWS(scatter_8, uint64_t, ASSIGN)
DEFINE_SCATTER_ROWS(scatter_add_b, uint8_t, OR)
DEFINE_SCATTER_ROWS(scatter_add_u8, uint8_t, ADD)
DEFINE_SCATTER_ROWS(scatter_add_i8, int8_t, ADD)
DEFINE_SCATTER_ROWS(scatter_add_i32, uint32_t, ADD)
DEFINE_SCATTER_ROWS(scatter_add_i64, int64_t, ADD_WRAP)
DEFINE_SCATTER_ROWS(scatter_add_f16, em_half, ADD)
DEFINE_SCATTER_ROWS(scatter_add_f32, float, ADD)
DEFINE_SCATTER_ROWS(scatter_add_f64, double, ADD)

typedef void (*scatter_rows_fn)(const geo_t*, char*, const int64_t*, const char*, int64_t);
static const scatter_rows_fn SCATTER_ADD[8] = {
    scatter_add_b, scatter_add_u8, scatter_add_i8, scatter_add_i32,
    scatter_add_i64, scatter_add_f16, scatter_add_f32, scatter_add_f64,
};
static const scatter_rows_fn SCATTER_ASSIGN[8] = {
    scatter_1, scatter_1, scatter_1, scatter_4, scatter_8, scatter_2, scatter_4, scatter_8,
};

/* geometry: shape (= index's), target strides, index strides, src strides */
int em_scatter(intptr_t target, intptr_t src, intptr_t index, int dt, int ndim, int dim,
               int64_t target_dim_size, const int64_t* geometry, int accumulate) {
    geo_t g;
    g.n = ndim;
    int64_t dstride = ndim ? geometry[ndim + dim] : 0;
    for (int d = 0; d < ndim; d++) {
        g.size[d] = geometry[d];
        g.s[DST][d] = d == dim ? 0 : geometry[ndim + d];
        g.s[IDX][d] = geometry[2 * ndim + d];
        g.s[SRC][d] = geometry[3 * ndim + d];
    }
    coalesce(&g);
    if (geo_numel(&g) == 0) return 0;
    int status = check_indices(&g, (const int64_t*)index, dim, target_dim_size);
    if (status) return status;
    (accumulate ? SCATTER_ADD : SCATTER_ASSIGN)[dt](&g, (char*)target, (const int64_t*)index,
                                                     (const char*)src, dstride);
    return 0;
}

/* ---- take, index_put_ --------------------------------------------------------------------- */

/* A tensor addressed by its row-major logical (flat) position. */
typedef struct {
    int n, contiguous;
    int64_t numel;
    int64_t size[EM_MAX_DIMS], stride[EM_MAX_DIMS];
} flat_t;

static void flat_init(flat_t* f, int ndim, const int64_t* shape, const int64_t* strides) {
    f->n = 0;
    f->numel = 1;
    f->contiguous = 1;
    int64_t step = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        f->numel *= shape[d];
        if (shape[d] == 1) continue;
        if (strides[d] != step) f->contiguous = 0;
        step *= shape[d];
    }
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        f->size[f->n] = shape[d];
        f->stride[f->n] = strides[d];
        f->n++;
    }
}

static inline int64_t flat_offset(const flat_t* f, int64_t v) {
    if (f->contiguous) return v;
    int64_t off = 0;
    for (int d = f->n - 1; d >= 0; d--) {
        off += (v % f->size[d]) * f->stride[d];
        v /= f->size[d];
    }
    return off;
}

#define DEFINE_TAKE_ROWS(T)                                                              \
    static int take_rows_##T(const geo_t* g, char* dst, const int64_t* index,            \
                              const flat_t* a, const char* src, int64_t rbegin,           \
                              int64_t rend, int64_t* bad) {                               \
        int64_t idx[EM_MAX_DIMS], off[3], len = row_len(g);                               \
        int64_t r0 = row_stride(g, DST), r1 = row_stride(g, IDX);                         \
        if (rbegin >= rend) return 0;                                                     \
        row_offsets(g, rbegin, idx, off);                                                 \
        for (int64_t r = rbegin; r < rend; r++) {                                         \
            T* d = (T*)dst + off[DST];                                                    \
            const int64_t* x = index + off[IDX];                                          \
            for (int64_t j = 0; j < len; j++) {                                           \
                int64_t v = x[j * r1];                                                    \
                if ((uint64_t)v >= (uint64_t)a->numel) {                                  \
                    *bad = v;                                                             \
                    return 1;                                                             \
                }                                                                         \
                d[j * r0] = ((const T*)src)[flat_offset(a, v)];                           \
            }                                                                             \
            next_row(g, idx, off);                                                        \
        }                                                                                 \
        return 0;                                                                         \
    }

DEFINE_TAKE_ROWS(uint8_t)
DEFINE_TAKE_ROWS(uint16_t)
DEFINE_TAKE_ROWS(uint32_t)
DEFINE_TAKE_ROWS(uint64_t)

typedef int (*take_rows_fn)(const geo_t*, char*, const int64_t*, const flat_t*, const char*,
                             int64_t, int64_t, int64_t*);

static void take_part(void* ctx, int t, int nt) {
    rows_job_t* job = ctx;
    int64_t bad = 0;
    if (((take_rows_fn)job->fn)(job->g, job->dst, job->index, job->flat, job->src,
                                job->rows * t / nt, job->rows * (t + 1) / nt, &bad))
        record_bad(job, bad);
}

/* geometry: shape (= index's = out's), out strides, index strides, then a's shape and
 * strides (a_ndim each). */
int em_take(intptr_t out, intptr_t a, intptr_t index, int itemsize, int ndim, int a_ndim,
            const int64_t* geometry) {
    geo_t g;
    g.n = ndim;
    for (int d = 0; d < ndim; d++) {
        g.size[d] = geometry[d];
        g.s[DST][d] = geometry[ndim + d];
        g.s[IDX][d] = geometry[2 * ndim + d];
        g.s[SRC][d] = 0;
    }
    flat_t fa;
    flat_init(&fa, a_ndim, geometry + 3 * ndim, geometry + 3 * ndim + a_ndim);
    coalesce(&g);
    int64_t total = geo_numel(&g);
    if (total == 0) return 0;
    take_rows_fn fn = itemsize == 1   ? take_rows_uint8_t
                      : itemsize == 2 ? take_rows_uint16_t
                      : itemsize == 4 ? take_rows_uint32_t
                                      : take_rows_uint64_t;
    rows_job_t job = {&g, (char*)out, (const int64_t*)index, (const char*)a, 0, fa.numel,
                      total / row_len(&g), &fa, (void (*)(void))fn, 0, 0};
    run_parts(total, job.rows, take_part, &job);
    return job.found ? index_error(job.bad, 0, fa.numel) : 0;
}

#define DEFINE_PUT(NAME, T, OP)                                                          \
    static void NAME(char* target, const flat_t* f, const int64_t* index, const char* values, \
                     int64_t n) {                                                         \
        T* t = (T*)target;                                                                \
        const T* v = (const T*)values;                                                    \
        for (int64_t i = 0; i < n; i++) OP(t[flat_offset(f, index[i])], v[i]);            \
    }

DEFINE_PUT(put_1, uint8_t, ASSIGN)
DEFINE_PUT(put_2, uint16_t, ASSIGN)
DEFINE_PUT(put_4, uint32_t, ASSIGN)
DEFINE_PUT(put_8, uint64_t, ASSIGN)
DEFINE_PUT(put_add_b, uint8_t, OR)
DEFINE_PUT(put_add_u8, uint8_t, ADD)
DEFINE_PUT(put_add_i8, int8_t, ADD)
DEFINE_PUT(put_add_i32, uint32_t, ADD)
DEFINE_PUT(put_add_i64, int64_t, ADD_WRAP)
DEFINE_PUT(put_add_f16, em_half, ADD)
DEFINE_PUT(put_add_f32, float, ADD)
DEFINE_PUT(put_add_f64, double, ADD)

typedef void (*put_fn)(char*, const flat_t*, const int64_t*, const char*, int64_t);
static const put_fn PUT[8] = {put_1, put_1, put_1, put_4, put_8, put_2, put_4, put_8};
static const put_fn PUT_ADD[8] = {put_add_b,   put_add_u8,  put_add_i8,  put_add_i32,
                                  put_add_i64, put_add_f16, put_add_f32, put_add_f64};

/* target.flatten()[index[i]] (+)= values[i]; geometry: target shape, target strides. */
int em_index_put(intptr_t target, intptr_t index, intptr_t values, int dt, int64_t n,
                 int accumulate, int ndim, const int64_t* geometry) {
    flat_t f;
    flat_init(&f, ndim, geometry, geometry + ndim);
    const int64_t* pindex = (const int64_t*)index;
    for (int64_t i = 0; i < n; i++)
        if ((uint64_t)pindex[i] >= (uint64_t)f.numel) return index_error(pindex[i], 0, f.numel);
    (accumulate ? PUT_ADD : PUT)[dt]((char*)target, &f, pindex, (const char*)values, n);
    return 0;
}

/* ---- nonzero ---------------------------------------------------------------------------- */

#define DEFINE_NONZERO(SUF, T)                                                           \
    static int64_t count_##SUF(const char* base, const flat_t* f) {                       \
        const T* p = (const T*)base;                                                      \
        int64_t count = 0;                                                                \
        if (f->contiguous) {                                                              \
            for (int64_t i = 0; i < f->numel; i++) count += p[i] != 0;                    \
            return count;                                                                 \
        }                                                                                 \
        int64_t idx[EM_MAX_DIMS] = {0}, off = 0, len = f->n ? f->size[f->n - 1] : 1;      \
        int64_t rs = f->n ? f->stride[f->n - 1] : 0;                                      \
        for (int64_t r = 0; r < f->numel / len; r++) {                                    \
            for (int64_t j = 0; j < len; j++) count += p[off + j * rs] != 0;              \
            for (int d = f->n - 2; d >= 0; d--) {                                         \
                if (++idx[d] < f->size[d]) { off += f->stride[d]; break; }                \
                off -= f->stride[d] * (f->size[d] - 1);                                   \
                idx[d] = 0;                                                               \
            }                                                                             \
        }                                                                                 \
        return count;                                                                     \
    }                                                                                     \
    static void fill_##SUF(const char* base, int ndim, const int64_t* shape,              \
                           const int64_t* strides, int64_t* out, int64_t limit) {         \
        const T* p = (const T*)base;                                                      \
        int64_t idx[EM_MAX_DIMS] = {0}, off = 0, numel = 1, written = 0;                  \
        for (int d = 0; d < ndim; d++) numel *= shape[d];                                 \
        int64_t len = ndim ? shape[ndim - 1] : 1, rs = ndim ? strides[ndim - 1] : 0;      \
        if (numel == 0) return;                                                           \
        for (int64_t r = 0; r < numel / len; r++) {                                       \
            for (int64_t j = 0; j < len && written < limit; j++) {                        \
                if (p[off + j * rs] != 0) {                                               \
                    int64_t* row = out + written * ndim;                                  \
                    for (int d = 0; d + 1 < ndim; d++) row[d] = idx[d];                   \
                    row[ndim - 1] = j;                                                    \
                    written++;                                                            \
                }                                                                         \
            }                                                                             \
            for (int d = ndim - 2; d >= 0; d--) {                                         \
                if (++idx[d] < shape[d]) { off += strides[d]; break; }                    \
                off -= strides[d] * (shape[d] - 1);                                       \
                idx[d] = 0;                                                               \
            }                                                                             \
        }                                                                                 \
    }

DEFINE_NONZERO(u8, uint8_t)
DEFINE_NONZERO(i8, int8_t)
DEFINE_NONZERO(i32, int32_t)
DEFINE_NONZERO(i64, int64_t)
DEFINE_NONZERO(f16, em_half)
DEFINE_NONZERO(f32, float)
DEFINE_NONZERO(f64, double)

typedef int64_t (*count_fn)(const char*, const flat_t*);
typedef void (*fill_fn)(const char*, int, const int64_t*, const int64_t*, int64_t*, int64_t);
static const count_fn COUNT[8] = {count_u8,  count_u8,  count_i8,  count_i32,
                                  count_i64, count_f16, count_f32, count_f64};
static const fill_fn FILL[8] = {fill_u8,  fill_u8,  fill_i8,  fill_i32,
                                fill_i64, fill_f16, fill_f32, fill_f64};

/* geometry: shape, strides */
int64_t em_count_nonzero(int dt, intptr_t a, int ndim, const int64_t* geometry) {
    flat_t f;
    flat_init(&f, ndim, geometry, geometry + ndim);
    if (f.numel == 0) return 0;
    return COUNT[dt]((const char*)a, &f);
}

/* out (count, ndim) int64 contiguous: the indices of at most `count` non-zero elements,
 * in row-major order. */
int em_nonzero(int dt, intptr_t out, intptr_t a, int ndim, const int64_t* geometry,
               int64_t count) {
    if (ndim == 0 || count == 0) return 0;
    FILL[dt]((const char*)a, ndim, geometry, geometry + ndim, (int64_t*)out, count);
    return 0;
}
