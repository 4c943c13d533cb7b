/* 2-d pooling kernels of the OpenCL device: launches of em_pool.h's element and row
 * functions (kernels_pool.py prepends the shared source).
 *
 * Forward work items each compute one output row; backward work items each own one input
 * row (max: a run of a plane's pixels), so results match the CPU bit for bit without
 * atomics. Loops run along rows: on CPU devices a work item costs a few nanoseconds of
 * scheduling and a 64-bit division tens.
 *
 * Storage type T per dtype (-DEM_<DTYPE>) with LOAD/STORE: float16 through vload_half /
 * vstore_half, computing in float (this device need not have cl_khr_fp16).
 */

#ifdef EM_HAS_DOUBLE
#define ACC double
#else
#define ACC float
#endif

#if defined(EM_FLOAT16)
#define T half
#define V float
#define LOWEST (-INFINITY)
#define LOAD(p, i) vload_half((size_t)(i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (size_t)(i), (p))
#elif defined(EM_FLOAT32)
#define T float
#define LOWEST (-INFINITY)
#elif defined(EM_FLOAT64)
#define T double
#define LOWEST (-INFINITY)
#elif defined(EM_UINT8)
#define T uchar
#define LOWEST 0
#elif defined(EM_INT8)
#define T char
#define LOWEST CHAR_MIN
#elif defined(EM_INT32)
#define T int
#define LOWEST INT_MIN
#elif defined(EM_INT64)
#define T long
#define LOWEST LONG_MIN
#endif

#if defined(EM_FLOAT16) || defined(EM_FLOAT32) || defined(EM_FLOAT64)
#define FLOATING 1
#else
#define FLOATING 0
#endif

#ifndef LOAD
#define V T
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (T)(v))
#endif

#if defined(EM_FLOAT16)
/* v rounded to half, as the CPU's `T share = (T)...` does. */
static inline float ROUND(ACC v) {
    ushort bits;
    vstore_half_rte(v, 0, (__private half*)&bits);
    return vload_half(0, (__private const half*)&bits);
}
#else
#define ROUND(v) ((T)(v))
#endif

EM_MAX_POOL2D_CELL(max_cell, T, V, LOWEST, LOAD)
#if FLOATING
EM_AVG_POOL2D_CELL(avg_cell, T, ACC, LOAD)
EM_ADAPTIVE_AVG_POOL2D_CELL(adaptive_cell, T, ACC, LOAD)
EM_MAX_POOL2D_BACKWARD_RUN(max_backward_run, T, V, LOAD, STORE)
EM_AVG_POOL2D_SHARE(avg_share, T, V, ACC, LOAD, ROUND)
EM_ADAPTIVE_AVG_POOL2D_SHARE(adaptive_share, T, V, ACC, LOAD, ROUND)
EM_POOL2D_BACKWARD_ROW(avg_backward_row, avg_share, em_avg_pool2d_reaching, T, V, LOAD, STORE)
EM_POOL2D_BACKWARD_ROW(adaptive_backward_row, adaptive_share, em_adaptive_avg_pool2d_reaching,
                       T, V, LOAD, STORE)
#else
EM_AVG_POOL2D_CELL(avg_cell, T, long, LOAD)
#endif

/* Kernels take the geometry as scalars and build em_pool_geometry themselves: PoCL ran
 * adaptive_avg_pool2d ~10% slower with the struct passed by value. */
#define GEOMETRY_ARGS                                                                      \
    long h, long w, long oh, long ow, long kh, long kw, long sh, long sw, long ph,         \
        long pw, long dh, long dw, long count_include_pad, long divisor
#define GEOMETRY {h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, count_include_pad, divisor}

/* Global (OH, planes): output row y of one plane. */
__kernel void max_pool2d(__global T* out, long out_off, __global long* indices, long idx_off,
                         __global const T* in, long in_off, GEOMETRY_ARGS) {
    const em_pool_geometry g = GEOMETRY;
    const long y = get_global_id(0), plane = get_global_id(1), row = (plane * g.oh + y) * g.ow;
    const __global T* src = in + in_off + plane * g.h * g.w;
    long y0, y1;
    em_max_pool_taps(y, g.h, g.kh, g.sh, g.ph, g.dh, &y0, &y1);
    for (long x = 0; x < g.ow; x++) {
        long at;
        STORE(out, out_off + row + x, max_cell(src, &g, y0, y1, x, &at));
        indices[idx_off + row + x] = at;
    }
}

/* Global (OH, planes): output row y of one plane. */
__kernel void avg_pool2d(__global T* out, long out_off, __global const T* in, long in_off,
                         GEOMETRY_ARGS) {
    const em_pool_geometry g = GEOMETRY;
    const long y = get_global_id(0), plane = get_global_id(1);
    const __global T* src = in + in_off + plane * g.h * g.w;
    __global T* dst = out + out_off + (plane * g.oh + y) * g.ow;
    for (long x = 0; x < g.ow; x++) STORE(dst, x, avg_cell(src, &g, y, x));
}

#if FLOATING
/* Global (OH, planes): output row y of one plane. */
__kernel void adaptive_avg_pool2d(__global T* out, long out_off, __global const T* in,
                                  long in_off, GEOMETRY_ARGS) {
    const em_pool_geometry g = GEOMETRY;
    const long y = get_global_id(0), plane = get_global_id(1);
    const long y0 = em_adaptive_start(y, g.h, g.oh), y1 = em_adaptive_end(y, g.h, g.oh);
    const __global T* src = in + in_off + plane * g.h * g.w;
    __global T* dst = out + out_off + (plane * g.oh + y) * g.ow;
    for (long x = 0; x < g.ow; x++) STORE(dst, x, adaptive_cell(src, &g, y0, y1, x));
}

/* Global (H, planes): input row iy of one plane. */
#define BACKWARD(NAME, ROW)                                                                \
    __kernel void NAME(__global T* gi, long gi_off, __global const T* go, long go_off,     \
                       GEOMETRY_ARGS) {                                                    \
        const em_pool_geometry g = GEOMETRY;                                               \
        const long iy = get_global_id(0), plane = get_global_id(1);                        \
        __global T* row = gi + gi_off + (plane * g.h + iy) * g.w;                          \
        ROW(row, go + go_off + plane * g.oh * g.ow, &g, iy);                               \
    }

BACKWARD(avg_pool2d_backward, avg_backward_row)
BACKWARD(adaptive_avg_pool2d_backward, adaptive_backward_row)

/* Global (splits, planes): item s owns pixels [s * HW / splits, (s + 1) * HW / splits) of
 * its plane. */
__kernel void max_pool2d_backward(__global T* gi, long gi_off, __global const T* go,
                                  long go_off, __global const long* indices, long idx_off,
                                  GEOMETRY_ARGS) {
    const long s = get_global_id(0), splits = get_global_size(0), plane = get_global_id(1);
    const long hw = h * w, ohw = oh * ow;
    max_backward_run(gi + gi_off + plane * hw, go + go_off + plane * ohw,
                     indices + idx_off + plane * ohw, ohw, s * hw / splits,
                     (s + 1) * hw / splits);
}
#endif
