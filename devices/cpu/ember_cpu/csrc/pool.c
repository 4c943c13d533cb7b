/* 2-d pooling of the CPU device: max, average and adaptive average, forward and backward.
 *
 * Inputs and outputs are contiguous stacks of planes (N*C planes of H x W, the runtime's
 * NCHW tensors); planes are split across OpenMP threads, so each plane is written by
 * one thread. Windows follow PyTorch's CPU kernels exactly:
 *   max: the window's first valid position starts as the argmax; a value wins when it is
 *        greater or NaN (so NaN propagates, the last NaN's index is kept); indices are
 *        flat positions within the plane (y * W + x).
 *   avg: a window of the padded input clipped to H + pad; its divisor is the override, or
 *        the clipped window's size (count_include_pad), or the count of real pixels.
 *   adaptive avg: rows [floor(i*H/OH), ceil((i+1)*H/OH)), columns likewise.
 * Floats accumulate in double; integer averages sum in int64 and divide truncating.
 */
#include <math.h>
#include <string.h>

#include "strided.h"

typedef struct {
    int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
} pool_t;

/* geometry: planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw */
static pool_t read_pool(const int64_t* g) {
    pool_t p = {g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12]};
    return p;
}

typedef struct {
    pool_t g;
    char* out;
    char* in;
    int64_t* indices;
    int count_include_pad;
    int64_t divisor; /* 0: none */
} pool_job_t;

static int bad_dtype(const char* op, int dt) {
    snprintf(em_error_message, sizeof em_error_message, "%s: unsupported dtype code %d", op, dt);
    return 2;
}

static void run_planes(const pool_t* g, int64_t per_plane, part_fn fn, pool_job_t* job) {
    if (g->planes == 0) return;
    run_parts(g->planes * per_plane, g->planes, fn, job);
}

/* ---- max pooling ------------------------------------------------------------------------ */

/* Max pooling walks one output row at a time. Windows that lie wholly inside the input
 * (the interior columns [xa, xb)) are done MAX_CHUNK at a time, window position by window
 * position, with branch-free selects the compiler vectorises: a data-dependent branch per
 * element mispredicts about half the time on real data, which made the plain loop ten
 * times slower. Border windows take the scalar loop. Both visit a window's positions in
 * row-major order, so ties keep the first maximum and NaN keeps the last NaN.
 * V is the type values are compared in; LOWEST starts the running maximum. */
#define MAX_CHUNK 256

static inline void interior_columns(const pool_t* g, int64_t* xa, int64_t* xb) {
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
    static void max_cell_##SUF(const pool_t* g, const T* in, int64_t y0, int64_t y1,       \
                               int64_t x, T* out, int64_t* idx) {                          \
        int64_t x0 = x * g->sw - g->pw;                                                    \
        int64_t x1 = min64(x0 + (g->kw - 1) * g->dw + 1, g->w);                            \
        while (x0 < 0) x0 += g->dw;                                                        \
        int64_t best_at = y0 * g->w + x0;                                                  \
        V best = LOWEST;                                                                   \
        for (int64_t iy = y0; iy < y1; iy += g->dh) {                                      \
            for (int64_t ix = x0; ix < x1; ix += g->dw) {                                  \
                V v = (V)in[iy * g->w + ix];                                               \
                if (v > best || v != v) {                                                  \
                    best = v;                                                              \
                    best_at = iy * g->w + ix;                                              \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        *out = (T)best;                                                                    \
        *idx = best_at;                                                                    \
    }                                                                                      \
    static void max_chunk_##SUF(const pool_t* g, const T* in, int64_t y0, int64_t y1,      \
                                int64_t xa, int64_t n, T* out, int64_t* idx) {             \
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
                    int take = (v > best[k]) | (v != v);                                   \
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
        const pool_t* g = &job->g;                                                         \
        int64_t begin, end, plane_in = g->h * g->w, plane_out = g->oh * g->ow, xa, xb;     \
        split(g->planes, t, nt, &begin, &end);                                             \
        interior_columns(g, &xa, &xb);                                                     \
        for (int64_t p = begin; p < end; p++) {                                            \
            const T* in = (const T*)job->in + p * plane_in;                                \
            for (int64_t y = 0; y < g->oh; y++) {                                          \
                T* out = (T*)job->out + p * plane_out + y * g->ow;                         \
                int64_t* idx = job->indices + p * plane_out + y * g->ow;                   \
                int64_t y0 = y * g->sh - g->ph;                                            \
                int64_t y1 = min64(y0 + (g->kh - 1) * g->dh + 1, g->h);                    \
                while (y0 < 0) y0 += g->dh;                                                \
                for (int64_t x = 0; x < xa; x++)                                           \
                    max_cell_##SUF(g, in, y0, y1, x, out + x, idx + x);                    \
                for (int64_t x = xa; x < xb; x += MAX_CHUNK) {                             \
                    int64_t n = min64(MAX_CHUNK, xb - x);                                  \
                    max_chunk_##SUF(g, in, y0, y1, x, n, out + x, idx + x);                \
                }                                                                          \
                for (int64_t x = xb; x < g->ow; x++)                                       \
                    max_cell_##SUF(g, in, y0, y1, x, out + x, idx + x);                    \
            }                                                                              \
        }                                                                                  \
    }

DEFINE_MAX(f16, em_half, float, -INFINITY)
DEFINE_MAX(f32, float, float, -INFINITY)
DEFINE_MAX(f64, double, double, -INFINITY)
DEFINE_MAX(u8, uint8_t, uint8_t, 0)
DEFINE_MAX(i8, int8_t, int8_t, INT8_MIN)
DEFINE_MAX(i32, int32_t, int32_t, INT32_MIN)
DEFINE_MAX(i64, int64_t, int64_t, INT64_MIN)

int em_max_pool2d(int dt, intptr_t out, intptr_t indices, intptr_t input, const int64_t* geometry) {
    pool_job_t job = {read_pool(geometry), (char*)out, (char*)input, (int64_t*)indices, 0, 0};
    part_fn fn;
    switch (dt) {
        case EM_FLOAT16: fn = max_part_f16; break;
        case EM_FLOAT32: fn = max_part_f32; break;
        case EM_FLOAT64: fn = max_part_f64; break;
        case EM_UINT8: fn = max_part_u8; break;
        case EM_INT8: fn = max_part_i8; break;
        case EM_INT32: fn = max_part_i32; break;
        case EM_INT64: fn = max_part_i64; break;
        default: return bad_dtype("max_pool2d", dt);
    }
    const pool_t* g = &job.g;
    run_planes(g, g->oh * g->ow * g->kh * g->kw, fn, &job);
    return 0;
}

/* grad_input (planes of H*W) = 0, then grad_input[indices] += grad_out, plane by plane. */
#define DEFINE_MAX_BACKWARD(SUF, T)                                                        \
    static void max_backward_part_##SUF(void* ctx, int t, int nt) {                        \
        const pool_job_t* job = ctx;                                                       \
        const pool_t* g = &job->g;                                                         \
        int64_t begin, end, plane_in = g->h * g->w, plane_out = g->oh * g->ow;             \
        split(g->planes, t, nt, &begin, &end);                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            T* gi = (T*)job->out + p * plane_in;                                           \
            const T* go = (const T*)job->in + p * plane_out;                               \
            const int64_t* idx = job->indices + p * plane_out;                             \
            memset(gi, 0, (size_t)plane_in * sizeof(T));                                   \
            for (int64_t k = 0; k < plane_out; k++) gi[idx[k]] += go[k];                   \
        }                                                                                  \
    }

DEFINE_MAX_BACKWARD(f16, em_half)
DEFINE_MAX_BACKWARD(f32, float)
DEFINE_MAX_BACKWARD(f64, double)

/* geometry: planes, H*W, OH*OW */
int em_max_pool2d_backward(int dt, intptr_t grad_input, intptr_t grad_out, intptr_t indices,
                           int64_t planes, int64_t plane_in, int64_t plane_out) {
    pool_job_t job = {{planes, 1, plane_in, 1, plane_out, 1, 1, 1, 1, 0, 0, 1, 1},
                      (char*)grad_input, (char*)grad_out, (int64_t*)indices, 0, 0};
    part_fn fn;
    switch (dt) {
        case EM_FLOAT16: fn = max_backward_part_f16; break;
        case EM_FLOAT32: fn = max_backward_part_f32; break;
        case EM_FLOAT64: fn = max_backward_part_f64; break;
        default: return bad_dtype("max_pool2d_backward", dt);
    }
    run_planes(&job.g, plane_in + plane_out, fn, &job);
    return 0;
}

/* ---- average pooling -------------------------------------------------------------------- */

/* The clipped window of output (y, x) and its divisor; 0 when the window is empty. */
static inline int64_t avg_window(const pool_job_t* job, int64_t y, int64_t x, int64_t* y0,
                                 int64_t* y1, int64_t* x0, int64_t* x1) {
    const pool_t* g = &job->g;
    *y0 = y * g->sh - g->ph;
    *x0 = x * g->sw - g->pw;
    *y1 = min64(*y0 + g->kh, g->h + g->ph);
    *x1 = min64(*x0 + g->kw, g->w + g->pw);
    int64_t padded = (*y1 - *y0) * (*x1 - *x0);
    if (*y0 < 0) *y0 = 0;
    if (*x0 < 0) *x0 = 0;
    *y1 = min64(*y1, g->h);
    *x1 = min64(*x1, g->w);
    if (*y0 >= *y1 || *x0 >= *x1) return 0;
    if (job->divisor) return job->divisor;
    return job->count_include_pad ? padded : (*y1 - *y0) * (*x1 - *x0);
}

/* ACC accumulates; DIV(sum, n) averages (a float division, or int64 truncating). */
#define DEFINE_AVG(SUF, T, ACC)                                                            \
    static void avg_part_##SUF(void* ctx, int t, int nt) {                                 \
        const pool_job_t* job = ctx;                                                       \
        const pool_t* g = &job->g;                                                         \
        int64_t begin, end, plane_in = g->h * g->w, plane_out = g->oh * g->ow;             \
        split(g->planes, t, nt, &begin, &end);                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            const T* in = (const T*)job->in + p * plane_in;                                \
            T* out = (T*)job->out + p * plane_out;                                         \
            for (int64_t y = 0; y < g->oh; y++) {                                          \
                for (int64_t x = 0; x < g->ow; x++) {                                      \
                    int64_t y0, y1, x0, x1;                                                \
                    int64_t n = avg_window(job, y, x, &y0, &y1, &x0, &x1);                 \
                    ACC sum = 0;                                                           \
                    if (n != 0) {                                                          \
                        for (int64_t iy = y0; iy < y1; iy++)                               \
                            for (int64_t ix = x0; ix < x1; ix++) sum += (ACC)in[iy * g->w + ix]; \
                        sum = (ACC)(sum / (ACC)n);                                         \
                    }                                                                      \
                    out[y * g->ow + x] = (T)sum;                                           \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

DEFINE_AVG(f16, em_half, double)
DEFINE_AVG(f32, float, double)
DEFINE_AVG(f64, double, double)
DEFINE_AVG(u8, uint8_t, int64_t)
DEFINE_AVG(i8, int8_t, int64_t)
DEFINE_AVG(i32, int32_t, int64_t)
DEFINE_AVG(i64, int64_t, int64_t)

#define DEFINE_AVG_BACKWARD(SUF, T)                                                        \
    static void avg_backward_part_##SUF(void* ctx, int t, int nt) {                        \
        const pool_job_t* job = ctx;                                                       \
        const pool_t* g = &job->g;                                                         \
        int64_t begin, end, plane_in = g->h * g->w, plane_out = g->oh * g->ow;             \
        split(g->planes, t, nt, &begin, &end);                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            T* gi = (T*)job->out + p * plane_in;                                           \
            const T* go = (const T*)job->in + p * plane_out;                               \
            memset(gi, 0, (size_t)plane_in * sizeof(T));                                   \
            for (int64_t y = 0; y < g->oh; y++) {                                          \
                for (int64_t x = 0; x < g->ow; x++) {                                      \
                    int64_t y0, y1, x0, x1;                                                \
                    int64_t n = avg_window(job, y, x, &y0, &y1, &x0, &x1);                 \
                    if (n == 0) continue;                                                  \
                    T share = (T)((double)go[y * g->ow + x] / (double)n);                  \
                    for (int64_t iy = y0; iy < y1; iy++)                                   \
                        for (int64_t ix = x0; ix < x1; ix++) gi[iy * g->w + ix] += share;  \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

DEFINE_AVG_BACKWARD(f16, em_half)
DEFINE_AVG_BACKWARD(f32, float)
DEFINE_AVG_BACKWARD(f64, double)

int em_avg_pool2d(int dt, intptr_t out, intptr_t input, const int64_t* geometry,
                  int count_include_pad, int64_t divisor) {
    pool_job_t job = {read_pool(geometry), (char*)out, (char*)input, NULL, count_include_pad,
                      divisor};
    part_fn fn;
    switch (dt) {
        case EM_FLOAT16: fn = avg_part_f16; break;
        case EM_FLOAT32: fn = avg_part_f32; break;
        case EM_FLOAT64: fn = avg_part_f64; break;
        case EM_UINT8: fn = avg_part_u8; break;
        case EM_INT8: fn = avg_part_i8; break;
        case EM_INT32: fn = avg_part_i32; break;
        case EM_INT64: fn = avg_part_i64; break;
        default: return bad_dtype("avg_pool2d", dt);
    }
    const pool_t* g = &job.g;
    run_planes(g, g->oh * g->ow * g->kh * g->kw, fn, &job);
    return 0;
}

int em_avg_pool2d_backward(int dt, intptr_t grad_input, intptr_t grad_out,
                           const int64_t* geometry, int count_include_pad, int64_t divisor) {
    pool_job_t job = {read_pool(geometry), (char*)grad_input, (char*)grad_out, NULL,
                      count_include_pad, divisor};
    part_fn fn;
    switch (dt) {
        case EM_FLOAT16: fn = avg_backward_part_f16; break;
        case EM_FLOAT32: fn = avg_backward_part_f32; break;
        case EM_FLOAT64: fn = avg_backward_part_f64; break;
        default: return bad_dtype("avg_pool2d_backward", dt);
    }
    const pool_t* g = &job.g;
    run_planes(g, g->h * g->w + g->oh * g->ow * g->kh * g->kw, fn, &job);
    return 0;
}

/* ---- adaptive average pooling ---------------------------------------------------------- */

static inline int64_t start_of(int64_t i, int64_t in, int64_t out) { return i * in / out; }
static inline int64_t end_of(int64_t i, int64_t in, int64_t out) {
    return ((i + 1) * in + out - 1) / out;
}

#define DEFINE_ADAPTIVE(SUF, T)                                                            \
    static void adaptive_part_##SUF(void* ctx, int t, int nt) {                            \
        const pool_job_t* job = ctx;                                                       \
        const pool_t* g = &job->g;                                                         \
        int64_t begin, end, plane_in = g->h * g->w, plane_out = g->oh * g->ow;             \
        split(g->planes, t, nt, &begin, &end);                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            const T* in = (const T*)job->in + p * plane_in;                                \
            T* out = (T*)job->out + p * plane_out;                                         \
            for (int64_t y = 0; y < g->oh; y++) {                                          \
                int64_t y0 = start_of(y, g->h, g->oh), y1 = end_of(y, g->h, g->oh);        \
                for (int64_t x = 0; x < g->ow; x++) {                                      \
                    int64_t x0 = start_of(x, g->w, g->ow), x1 = end_of(x, g->w, g->ow);    \
                    double sum = 0;                                                        \
                    for (int64_t iy = y0; iy < y1; iy++)                                   \
                        for (int64_t ix = x0; ix < x1; ix++) sum += (double)in[iy * g->w + ix]; \
                    out[y * g->ow + x] = (T)(sum / (double)((y1 - y0) * (x1 - x0)));       \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void adaptive_backward_part_##SUF(void* ctx, int t, int nt) {                   \
        const pool_job_t* job = ctx;                                                       \
        const pool_t* g = &job->g;                                                         \
        int64_t begin, end, plane_in = g->h * g->w, plane_out = g->oh * g->ow;             \
        split(g->planes, t, nt, &begin, &end);                                             \
        for (int64_t p = begin; p < end; p++) {                                            \
            T* gi = (T*)job->out + p * plane_in;                                           \
            const T* go = (const T*)job->in + p * plane_out;                               \
            memset(gi, 0, (size_t)plane_in * sizeof(T));                                   \
            for (int64_t y = 0; y < g->oh; y++) {                                          \
                int64_t y0 = start_of(y, g->h, g->oh), y1 = end_of(y, g->h, g->oh);        \
                for (int64_t x = 0; x < g->ow; x++) {                                      \
                    int64_t x0 = start_of(x, g->w, g->ow), x1 = end_of(x, g->w, g->ow);    \
                    T share = (T)((double)go[y * g->ow + x] / (double)((y1 - y0) * (x1 - x0))); \
                    for (int64_t iy = y0; iy < y1; iy++)                                   \
                        for (int64_t ix = x0; ix < x1; ix++) gi[iy * g->w + ix] += share;  \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

DEFINE_ADAPTIVE(f16, em_half)
DEFINE_ADAPTIVE(f32, float)
DEFINE_ADAPTIVE(f64, double)

/* forward: out (planes, OH, OW) from input (planes, H, W); backward: grad_input from
 * grad_out, the same geometry. */
int em_adaptive_avg_pool2d(int backward, int dt, intptr_t out, intptr_t input, int64_t planes,
                           int64_t h, int64_t w, int64_t oh, int64_t ow) {
    pool_job_t job = {{planes, h, w, oh, ow, 1, 1, 1, 1, 0, 0, 1, 1},
                      (char*)out, (char*)input, NULL, 0, 0};
    part_fn fn;
    switch (dt) {
        case EM_FLOAT16: fn = backward ? adaptive_backward_part_f16 : adaptive_part_f16; break;
        case EM_FLOAT32: fn = backward ? adaptive_backward_part_f32 : adaptive_part_f32; break;
        case EM_FLOAT64: fn = backward ? adaptive_backward_part_f64 : adaptive_part_f64; break;
        default: return bad_dtype("adaptive_avg_pool2d", dt);
    }
    if (oh == 0 || ow == 0) {
        if (backward) memset((void*)out, 0, (size_t)(planes * h * w) * (size_t)ITEMSIZE[dt]);
        return 0;
    }
    run_planes(&job.g, h * w + oh * ow, fn, &job);
    return 0;
}
