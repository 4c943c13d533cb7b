/* 2-d pooling windows shared by devices: max, average and adaptive average pooling, forward
 * and backward, as functions of one output element, share or input row that a device puts
 * its loop or launch around.
 *
 *   em_pool_geometry                    the geometry (ember.plugins.kernels.windows.pool2d)
 *   em_max_pool_taps, EM_MAX_TAKES      max pooling's taps along one axis; its argmax rule
 *   EM_MAX_POOL2D_CELL                  one max output and its index
 *   EM_MAX_POOL2D_BACKWARD_RUN          a run of a grad_input plane, from the indices
 *   em_avg_pool2d_window                an average window and its divisor
 *   EM_AVG_POOL2D_CELL, _SHARE          one average output; one output's gradient share
 *   em_adaptive_start, _end             an adaptive window along one axis
 *   EM_ADAPTIVE_AVG_POOL2D_CELL, _SHARE the same for adaptive average pooling
 *   em_*_reaching, EM_POOL2D_BACKWARD_ROW  the outputs reaching an input row; its gradient
 *
 * Planes are contiguous H x W (the runtime's NCHW tensors are N*C planes). The rules are
 * PyTorch's CPU kernels':
 *   max: output (y, x) reads rows y*sh - ph + a*dh (a < kh) and columns x*sw - pw + e*dw
 *        (e < kw) inside the plane; its first position starts as the argmax and a value
 *        wins when greater or NaN (NaN propagates, the last NaN's index is kept); indices
 *        are flat positions y * W + x within the plane.
 *   avg: the window [y*sh - ph, +kh) x [x*sw - pw, +kw) of the padded input clipped to
 *        H + ph, W + pw, then to the plane; its divisor is the override, or the first
 *        clip's size (count_include_pad), or the count of real pixels; an empty window
 *        averages to 0. Floats sum in ACC (double where the device has it), integers in
 *        int64 and divide truncating.
 *   adaptive avg: rows [floor(i*H/OH), ceil((i+1)*H/OH)), columns likewise.
 * Backward spreads each output's gradient over its window, for avg and adaptive avg in
 * equal shares rounded to the storage type (the *_SHARE functions), outputs in row-major
 * order, each sum stored in the storage type. A device that owns whole planes scatters the
 * shares in that order (the cpu device); one that owns rows gathers them with
 * EM_POOL2D_BACKWARD_ROW, which zeroes a row and adds the shares of the outputs reaching
 * it in that same order (opencl). Both give the same bits, and neither needs atomics.
 *
 * Element functions are defined per element type by the EM_*_POOL2D_* macros, which take
 * the function's NAME, the storage type T, the type V values are compared or shares held
 * in, the accumulator ACC, and the device's element access: LOAD(p, i) reads p[i] as V,
 * STORE(p, i, v) writes v to p[i], ROUND(v) is v rounded to the storage type as a V
 * (float16 storage passes its conversions here).
 */
#ifndef EM_POOL_H
#define EM_POOL_H

#include "em_dialect.h"

/* H x W planes pooled to OH x OW: kernel, stride, top-left padding, dilation (max), and for
 * average pooling count_include_pad and the divisor override (0: none). */
typedef struct {
    em_i64 h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, count_include_pad, divisor;
} em_pool_geometry;

/* A value v replaces the running maximum best: greater, or NaN. A bitwise or, so that a
 * loop of these selects stays branch-free (vectorisable). */
#define EM_MAX_TAKES(v, best) (((v) > (best)) | ((v) != (v)))

/* Max pooling along one axis: output o's taps o*s - p + a*d (a < k) inside [0, size) run
 * from *lo, by d, to before *hi. */
EM_FN void em_max_pool_taps(em_i64 o, em_i64 size, em_i64 k, em_i64 s, em_i64 p, em_i64 d,
                            em_i64* lo, em_i64* hi) {
    em_i64 first = o * s - p;
    const em_i64 end = first + (k - 1) * d + 1;
    while (first < 0) first += d;
    *lo = first;
    *hi = end < size ? end : size;
}

/* V NAME(plane, g, y0, y1, x, at): the maximum of output x's window in the output row whose
 * taps run over rows [y0, y1) (em_max_pool_taps of its y, once per row), its index in *at. */
#define EM_MAX_POOL2D_CELL(NAME, T, V, LOWEST, LOAD)                                       \
    EM_FN V NAME(const EM_GLOBAL T* plane, const em_pool_geometry* g, em_i64 y0,           \
                 em_i64 y1, em_i64 x, em_i64* at) {                                        \
        em_i64 x0, x1;                                                                     \
        em_max_pool_taps(x, g->w, g->kw, g->sw, g->pw, g->dw, &x0, &x1);                   \
        V best = LOWEST;                                                                   \
        em_i64 best_at = y0 * g->w + x0;                                                   \
        for (em_i64 iy = y0; iy < y1; iy += g->dh) {                                       \
            for (em_i64 ix = x0; ix < x1; ix += g->dw) {                                   \
                const V v = LOAD(plane, iy * g->w + ix);                                   \
                const int take = EM_MAX_TAKES(v, best);                                    \
                best = take ? v : best;                                                    \
                best_at = take ? iy * g->w + ix : best_at;                                 \
            }                                                                              \
        }                                                                                  \
        *at = best_at;                                                                     \
        return best;                                                                       \
    }

/* void NAME(grad_in, grad_out, indices, plane_out, lo, hi): pixels [lo, hi) of a grad_input
 * plane from the plane_out elements of grad_out and their indices, in grad_out order (the
 * indices carry no window to gather by). */
#define EM_MAX_POOL2D_BACKWARD_RUN(NAME, T, V, LOAD, STORE)                                \
    EM_FN void NAME(EM_GLOBAL T* grad_in, const EM_GLOBAL T* grad_out,                     \
                    const EM_GLOBAL em_i64* indices, em_i64 plane_out, em_i64 lo,          \
                    em_i64 hi) {                                                           \
        for (em_i64 k = lo; k < hi; k++) STORE(grad_in, k, (V)0);                          \
        for (em_i64 k = 0; k < plane_out; k++) {                                           \
            const em_i64 at = indices[k];                                                  \
            if (at >= lo && at < hi)                                                       \
                STORE(grad_in, at, LOAD(grad_in, at) + LOAD(grad_out, k));                 \
        }                                                                                  \
    }

/* Average pooling: output (y, x)'s window clipped to the plane, [*y0, *y1) x [*x0, *x1),
 * and its divisor; 0 when the window is empty. */
EM_FN em_i64 em_avg_pool2d_window(const em_pool_geometry* g, em_i64 y, em_i64 x, em_i64* y0,
                                  em_i64* y1, em_i64* x0, em_i64* x1) {
    const em_i64 top = y * g->sh - g->ph, left = x * g->sw - g->pw;
    const em_i64 bottom = top + g->kh < g->h + g->ph ? top + g->kh : g->h + g->ph;
    const em_i64 right = left + g->kw < g->w + g->pw ? left + g->kw : g->w + g->pw;
    *y0 = top < 0 ? 0 : top;
    *x0 = left < 0 ? 0 : left;
    *y1 = bottom < g->h ? bottom : g->h;
    *x1 = right < g->w ? right : g->w;
    if (*y0 >= *y1 || *x0 >= *x1) return 0;
    if (g->divisor) return g->divisor;
    return g->count_include_pad ? (bottom - top) * (right - left) : (*y1 - *y0) * (*x1 - *x0);
}

/* ACC NAME(plane, g, y, x): the mean of output (y, x)'s window. */
#define EM_AVG_POOL2D_CELL(NAME, T, ACC, LOAD)                                             \
    EM_FN ACC NAME(const EM_GLOBAL T* plane, const em_pool_geometry* g, em_i64 y,          \
                   em_i64 x) {                                                             \
        em_i64 y0, y1, x0, x1;                                                             \
        const em_i64 n = em_avg_pool2d_window(g, y, x, &y0, &y1, &x0, &x1);                \
        ACC sum = 0;                                                                       \
        if (n == 0) return sum;                                                            \
        for (em_i64 iy = y0; iy < y1; iy++)                                                \
            for (em_i64 ix = x0; ix < x1; ix++) sum += (ACC)LOAD(plane, iy * g->w + ix);   \
        return sum / (ACC)n;                                                               \
    }

/* V NAME(grad_out, g, y, x, y0, y1, x0, x1): output (y, x)'s share of its gradient, rounded
 * to the storage type, and its window; 0 for an empty window. */
#define EM_AVG_POOL2D_SHARE(NAME, T, V, ACC, LOAD, ROUND)                                  \
    EM_FN V NAME(const EM_GLOBAL T* grad_out, const em_pool_geometry* g, em_i64 y,         \
                 em_i64 x, em_i64* y0, em_i64* y1, em_i64* x0, em_i64* x1) {               \
        const em_i64 n = em_avg_pool2d_window(g, y, x, y0, y1, x0, x1);                    \
        return n == 0 ? (V)0 : ROUND((ACC)LOAD(grad_out, y * g->ow + x) / (ACC)n);         \
    }

/* The output rows [*lo, *hi) whose windows [y*sh - ph, +kh) hold input row i (the clip to
 * H + ph never drops a row of the input). */
EM_FN void em_avg_pool2d_reaching(em_i64 i, const em_pool_geometry* g, em_i64* lo,
                                  em_i64* hi) {
    const em_i64 first = i + g->ph - g->kh + 1, last = (i + g->ph) / g->sh + 1;
    *lo = first <= 0 ? 0 : (first + g->sh - 1) / g->sh;
    *hi = last < g->oh ? last : g->oh;
}

/* Adaptive average pooling along one axis of `in` positions pooled to `out`: output o's
 * window is [em_adaptive_start, em_adaptive_end). */
EM_FN em_i64 em_adaptive_start(em_i64 o, em_i64 in, em_i64 out) { return o * in / out; }
EM_FN em_i64 em_adaptive_end(em_i64 o, em_i64 in, em_i64 out) {
    return ((o + 1) * in + out - 1) / out;
}

/* ACC NAME(plane, g, y0, y1, x): the mean of output x's adaptive window in the output row
 * whose window rows are [y0, y1) (em_adaptive_start and _end of its y: a row's loop
 * computes them once, 64-bit divisions being costly). g needs only H, W, OH, OW. */
#define EM_ADAPTIVE_AVG_POOL2D_CELL(NAME, T, ACC, LOAD)                                    \
    EM_FN ACC NAME(const EM_GLOBAL T* plane, const em_pool_geometry* g, em_i64 y0,         \
                   em_i64 y1, em_i64 x) {                                                  \
        const em_i64 x0 = em_adaptive_start(x, g->w, g->ow);                               \
        const em_i64 x1 = em_adaptive_end(x, g->w, g->ow);                                 \
        ACC sum = 0;                                                                       \
        for (em_i64 iy = y0; iy < y1; iy++)                                                \
            for (em_i64 ix = x0; ix < x1; ix++) sum += (ACC)LOAD(plane, iy * g->w + ix);   \
        return sum / (ACC)((y1 - y0) * (x1 - x0));                                         \
    }

/* V NAME(grad_out, g, y, x, y0, y1, x0, x1): output (y, x)'s share of its gradient, rounded
 * to the storage type, and its adaptive window. */
#define EM_ADAPTIVE_AVG_POOL2D_SHARE(NAME, T, V, ACC, LOAD, ROUND)                         \
    EM_FN V NAME(const EM_GLOBAL T* grad_out, const em_pool_geometry* g, em_i64 y,         \
                 em_i64 x, em_i64* y0, em_i64* y1, em_i64* x0, em_i64* x1) {               \
        *y0 = em_adaptive_start(y, g->h, g->oh);                                           \
        *y1 = em_adaptive_end(y, g->h, g->oh);                                             \
        *x0 = em_adaptive_start(x, g->w, g->ow);                                           \
        *x1 = em_adaptive_end(x, g->w, g->ow);                                             \
        const ACC n = (ACC)((*y1 - *y0) * (*x1 - *x0));                                    \
        return ROUND((ACC)LOAD(grad_out, y * g->ow + x) / n);                              \
    }

/* The output rows [*lo, *hi) whose adaptive windows hold input row i: from floor(i*OH/H)
 * to floor(((i+1)*OH - 1)/H). */
EM_FN void em_adaptive_avg_pool2d_reaching(em_i64 i, const em_pool_geometry* g, em_i64* lo,
                                           em_i64* hi) {
    const em_i64 last = ((i + 1) * g->oh - 1) / g->h + 1;
    *lo = i * g->oh / g->h;
    *hi = last < g->oh ? last : g->oh;
}

/* Backward of avg or adaptive avg pooling by rows, through its SHARE and REACHING functions
 * (above). void NAME(row, grad_out, g, iy): input row iy of grad_input from grad_out's
 * plane, the shares of the outputs reaching it added in row-major order, each sum stored. */
#define EM_POOL2D_BACKWARD_ROW(NAME, SHARE, REACHING, T, V, LOAD, STORE)                   \
    EM_FN void NAME(EM_GLOBAL T* row, const EM_GLOBAL T* grad_out,                         \
                    const em_pool_geometry* g, em_i64 iy) {                                \
        em_i64 ylo, yhi;                                                                   \
        for (em_i64 ix = 0; ix < g->w; ix++) STORE(row, ix, (V)0);                         \
        REACHING(iy, g, &ylo, &yhi);                                                       \
        for (em_i64 y = ylo; y < yhi; y++) {                                               \
            for (em_i64 x = 0; x < g->ow; x++) {                                           \
                em_i64 y0, y1, x0, x1;                                                     \
                const V share = SHARE(grad_out, g, y, x, &y0, &y1, &x0, &x1);              \
                for (em_i64 ix = x0; ix < x1; ix++) STORE(row, ix, LOAD(row, ix) + share); \
            }                                                                              \
        }                                                                                  \
    }

#endif /* EM_POOL_H */
