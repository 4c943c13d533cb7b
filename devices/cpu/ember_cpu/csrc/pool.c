/* 2-d pooling of the CPU device: OpenMP loops over em_pool.h's windows, forward and
 * backward, for max, average and adaptive average pooling.
 *
 * Inputs and outputs are contiguous stacks of planes; planes are split across threads, so
 * each plane is written by one thread. Max pooling adds a vectorised path for the windows
 * that lie wholly inside the input (below); the rest loops over the shared functions, the
 * backward ones scattering each output's share over its window, outputs in row-major
 * order (em_pool.h's order).
 */
#include "em_pool.h"
#include "strided.h"

enum { MAX, MAX_BACKWARD, AVG, AVG_BACKWARD, ADAPTIVE, ADAPTIVE_BACKWARD, POOL_OPS };

typedef struct {
    int64_t planes;
    em_pool_geometry g;
    char* out; /* the op's output: pooled, or grad_input */
    const char* in;
    int64_t* indices;
} pool_job_t;

#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define KEEP(v) (v) /* shares are held in the storage type itself */

/* ---- max pooling ------------------------------------------------------------------------ */

/* Windows that lie wholly inside the input (the interior columns [xa, xb) of a row) are
 * done MAX_CHUNK at a time, window position by window position, with branch-free selects
 * the compiler vectorises: a data-dependent branch per element mispredicts about half the
 * time on real data, which made the plain loop ten times slower. Border windows take the
 * shared cell. Both visit a window's positions in row-major order, so they agree on ties
 * and NaN. */
#define MAX_CHUNK 256

static inline void interior_columns(const em_pool_geometry* g, int64_t* xa, int64_t* xb) {
    int64_t a = (g->pw + g->sw - 1) / g->sw;
    int64_t last = g->w - 1 - (g->kw - 1) * g->dw + g->pw; /* largest x*sw in bounds */
    int64_t b = last < 0 ? 0 : last / g->sw + 1;
    if (a > g->ow) a = g->ow;
    if (b > g->ow) b = g->ow;
    if (b < a) b = a;
    *xa = a;
    *xb = b;
}

#define DEFINE_MAX(SUF, T, V, LOWEST)                                                      \
    EM_MAX_POOL2D_CELL(max_cell_##SUF, T, V, LOWEST, LOAD)                                 \
    static void max_chunk_##SUF(const em_pool_geometry* g, const T* in, int64_t y0,        \
                                int64_t y1, int64_t xa, int64_t n, T* out, int64_t* idx) { \
        V best[MAX_CHUNK];                                                                 \
        int64_t at[MAX_CHUNK];                                                             \
        int64_t sw = g->sw;                                                                \
        int64_t base = xa * sw - g->pw;                                                    \
        for (int64_t k = 0; k < n; k++) {                                                  \
            best[k] = LOWEST;                                                              \
            at[k] = y0 * g->w + base + k * sw;                                             \
        }                                                                                  \
        for (int64_t iy = y0; iy < y1; iy += g->dh) {                                      \
            for (int64_t j = 0; j < g->kw; j++) {                                          \
                int64_t off = iy * g->w + base + j * g->dw;                                \
                const T* row = in + off;                                                   \
                for (int64_t k = 0; k < n; k++) {                                          \
                    V v = (V)row[k * sw];                                                  \
                    int take = EM_MAX_TAKES(v, best[k]);                                   \
                    best[k] = take ? v : best[k];                                          \
                    at[k] = take ? off + k * sw : at[k];                                   \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        for (int64_t k = 0; k < n; k++) {                                                  \
            out[k] = (T)best[k];                                                           \
            idx[k] = at[k];                                                                \
        }                                                                                  \
    }                                                                                      \
    static void max_part_##SUF(void* ctx, int t, int nt) {                                 \
        const pool_job_t* job = ctx;                                                       \
        const em_pool_geometry* g = &job->g;                                               \
        int64_t begin, end, plane_in = g->h * g->w, plane_out = g->oh * g->ow, xa, xb;     \
        split(job->planes, t, nt, &begin, &end);                                           \
        interior_columns(g, &xa, &xb);                                                     \
        for (int64_t p = begin; p < end; p++) {                                            \
            const T* in = (const T*)job->in + p * plane_in;                                \
            for (int64_t y = 0; y < g->oh; y++) {                                          \
                T* out = (T*)job->out + p * plane_out + y * g->ow;                         \
                int64_t* idx = job->indices + p * plane_out + y * g->ow;                   \
                int64_t y0, y1;                                                            \
                em_max_pool_taps(y, g->h, g->kh, g->sh, g->ph, g->dh, &y0, &y1);           \
                for (int64_t x = 0; x < xa; x++)                                           \
                    out[x] = (T)max_cell_##SUF(in, g, y0, y1, x, idx + x);                 \
                for (int64_t x = xa; x < xb; x += MAX_CHUNK) {                             \
                    int64_t n = min64(MAX_CHUNK, xb - x);                                  \
                    max_chunk_##SUF(g, in, y0, y1, x, n, out + x, idx + x);                \
                }                                                                          \
                for (int64_t x = xb; x < g->ow; x++)                                       \
                    out[x] = (T)max_cell_##SUF(in, g, y0, y1, x, idx + x);                 \
            }                                                                              \
        }                                                                                  \
    }

/* ---- the other ops: a plane's output elements; the backward scatters ------------------- */

#define PLANES                                                                             \
    const pool_job_t* job = ctx;                                                           \
    const em_pool_geometry* g = &job->g;                                                   \
    int64_t begin, end;                                                                    \
    split(job->planes, t, nt, &begin, &end);

/* Average pooling: every output of each plane. */
#define DEFINE_AVG_CELLS(NAME, CELL, T)                                                    \
    static void NAME(void* ctx, int t, int nt) {                                           \
        PLANES                                                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            const T* in = (const T*)job->in + p * g->h * g->w;                             \
            T* out = (T*)job->out + p * g->oh * g->ow;                                     \
            for (int64_t y = 0; y < g->oh; y++)                                            \
                for (int64_t x = 0; x < g->ow; x++)                                        \
                    out[y * g->ow + x] = (T)CELL(in, g, y, x);                             \
        }                                                                                  \
    }

/* Adaptive average pooling: every output of each plane, the window rows once per row. */
#define DEFINE_ADAPTIVE(NAME, CELL, T)                                                     \
    static void NAME(void* ctx, int t, int nt) {                                           \
        PLANES                                                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            const T* in = (const T*)job->in + p * g->h * g->w;                             \
            T* out = (T*)job->out + p * g->oh * g->ow;                                     \
            for (int64_t y = 0; y < g->oh; y++) {                                          \
                const int64_t y0 = em_adaptive_start(y, g->h, g->oh);                      \
                const int64_t y1 = em_adaptive_end(y, g->h, g->oh);                        \
                for (int64_t x = 0; x < g->ow; x++)                                        \
                    out[y * g->ow + x] = (T)CELL(in, g, y0, y1, x);                        \
            }                                                                              \
        }                                                                                  \
    }

/* Each grad_input plane: the shares SHARE(...) of its outputs, in row-major order. Written
 * out in the part function: a call per plane measured ~10% slower. */
#define DEFINE_SCATTER(NAME, SHARE, T)                                                     \
    static void NAME(void* ctx, int t, int nt) {                                           \
        PLANES                                                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            const T* go = (const T*)job->in + p * g->oh * g->ow;                           \
            T* gi = (T*)job->out + p * g->h * g->w;                                        \
            memset(gi, 0, (size_t)(g->h * g->w) * sizeof(T));                              \
            for (int64_t y = 0; y < g->oh; y++) {                                          \
                for (int64_t x = 0; x < g->ow; x++) {                                      \
                    int64_t y0, y1, x0, x1;                                                \
                    const T share = SHARE(go, g, y, x, &y0, &y1, &x0, &x1);                \
                    for (int64_t iy = y0; iy < y1; iy++)                                   \
                        for (int64_t ix = x0; ix < x1; ix++) gi[iy * g->w + ix] += share;  \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

/* grad_input planes from grad_out by the indices: each plane is one run of em_pool.h. */
#define DEFINE_MAX_BACKWARD(NAME, RUN, T)                                                  \
    static void NAME(void* ctx, int t, int nt) {                                           \
        PLANES                                                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            const int64_t at = p * g->oh * g->ow;                                          \
            RUN((T*)job->out + p * g->h * g->w, (const T*)job->in + at, job->indices + at, \
                g->oh * g->ow, 0, g->h * g->w);                                            \
        }                                                                                  \
    }

#define DEFINE_AVG(SUF, T, ACC)                                                            \
    EM_AVG_POOL2D_CELL(avg_cell_##SUF, T, ACC, LOAD)                                       \
    DEFINE_AVG_CELLS(avg_part_##SUF, avg_cell_##SUF, T)

/* The float-only ops: gradients, and adaptive average pooling. */
#define DEFINE_FLOAT(SUF, T)                                                               \
    DEFINE_AVG(SUF, T, double)                                                             \
    EM_ADAPTIVE_AVG_POOL2D_CELL(adaptive_cell_##SUF, T, double, LOAD)                      \
    DEFINE_ADAPTIVE(adaptive_part_##SUF, adaptive_cell_##SUF, T)                           \
    EM_MAX_POOL2D_BACKWARD_RUN(max_backward_run_##SUF, T, T, LOAD, STORE)                  \
    DEFINE_MAX_BACKWARD(max_backward_part_##SUF, max_backward_run_##SUF, T)                \
    EM_AVG_POOL2D_SHARE(avg_share_##SUF, T, T, double, LOAD, KEEP)                         \
    DEFINE_SCATTER(avg_backward_part_##SUF, avg_share_##SUF, T)                            \
    EM_ADAPTIVE_AVG_POOL2D_SHARE(adaptive_share_##SUF, T, T, double, LOAD, KEEP)           \
    DEFINE_SCATTER(adaptive_backward_part_##SUF, adaptive_share_##SUF, T)

DEFINE_MAX(f16, em_half, float, -INFINITY)
DEFINE_MAX(f32, float, float, -INFINITY)
DEFINE_MAX(f64, double, double, -INFINITY)
DEFINE_MAX(u8, uint8_t, uint8_t, 0)
DEFINE_MAX(i8, int8_t, int8_t, INT8_MIN)
DEFINE_MAX(i32, int32_t, int32_t, INT32_MIN)
DEFINE_MAX(i64, int64_t, int64_t, INT64_MIN)
DEFINE_FLOAT(f16, em_half)
DEFINE_FLOAT(f32, float)
DEFINE_FLOAT(f64, double)
DEFINE_AVG(u8, uint8_t, int64_t)
DEFINE_AVG(i8, int8_t, int64_t)
DEFINE_AVG(i32, int32_t, int64_t)
DEFINE_AVG(i64, int64_t, int64_t)

/* Each op's part function by dtype code (ember_cpu.h); NULL: unsupported. */
#define FLOATS(OP) [EM_FLOAT16] = OP##_f16, [EM_FLOAT32] = OP##_f32, [EM_FLOAT64] = OP##_f64
#define ALL(OP) FLOATS(OP), [EM_UINT8] = OP##_u8, [EM_INT8] = OP##_i8,                     \
                [EM_INT32] = OP##_i32, [EM_INT64] = OP##_i64
static const part_fn PARTS[POOL_OPS][8] = {
    [MAX] = {ALL(max_part)},
    [MAX_BACKWARD] = {FLOATS(max_backward_part)},
    [AVG] = {ALL(avg_part)},
    [AVG_BACKWARD] = {FLOATS(avg_backward_part)},
    [ADAPTIVE] = {FLOATS(adaptive_part)},
    [ADAPTIVE_BACKWARD] = {FLOATS(adaptive_backward_part)},
};
static const char* const NAMES[POOL_OPS] = {
    "max_pool2d", "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward",
    "adaptive_avg_pool2d", "adaptive_avg_pool2d_backward",
};

/* op: the enum above; out: the pooled output, or grad_input; in: the input, or grad_out;
 * geometry: em_pool_geometry's fields. */
int em_pool2d(int op, int dt, intptr_t out, intptr_t in, intptr_t indices, int64_t planes,
              const int64_t* geometry) {
    part_fn fn = op >= 0 && op < POOL_OPS && dt >= 0 && dt < 8 ? PARTS[op][dt] : NULL;
    if (fn == NULL) {
        snprintf(em_error_message, sizeof em_error_message, "%s: unsupported dtype code %d",
                 op >= 0 && op < POOL_OPS ? NAMES[op] : "pool2d", dt);
        return 2;
    }
    pool_job_t job = {planes, {0}, (char*)out, (const char*)in, (int64_t*)indices};
    memcpy(&job.g, geometry, sizeof job.g);
    const em_pool_geometry* g = &job.g;
    if (planes > 0)
        run_parts(planes * (g->h * g->w + g->oh * g->ow * g->kh * g->kw), planes, fn, &job);
    return 0;
}
