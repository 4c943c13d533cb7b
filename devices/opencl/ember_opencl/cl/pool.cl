/* 2-d pooling over contiguous stacks of planes, forward and backward, with the CPU
 * device's semantics (csrc/pool.c), which follow PyTorch's CPU kernels:
 *   max: the window's first valid position starts as the argmax; a value wins when it is
 *        greater or NaN (NaN propagates, the last NaN's index is kept); indices are flat
 *        positions y * W + x within the plane.
 *   avg: the window of the padded input clipped to H + pad, then to the input; divisor
 *        the override, or the clipped window's size (count_include_pad), or its count of
 *        real pixels. Floats sum in double (where the device has it), integers in long
 *        and divide truncating.
 *   adaptive avg: rows [floor(i*H/OH), ceil((i+1)*H/OH)), columns likewise.
 *
 * Forward work items each compute one output row. Backward work items each own one input
 * row (max: a run of a plane's pixels): they zero it and add into it the shares of the
 * outputs whose windows reach it, in the order the CPU adds them (outputs in row-major
 * order), each share rounded to the storage type and each sum stored, so results match
 * the CPU bit for bit without atomics. Loops run along rows: on CPU devices a work item
 * costs a few nanoseconds of scheduling and a 64-bit division tens.
 *
 * Storage type T with LOAD/STORE (float16 through vload_half/vstore_half, computing in
 * float: this device need not have cl_khr_fp16); V is the type values compare in.
 */

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
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
#define V float
#define LOWEST (-INFINITY)
#elif defined(EM_FLOAT64)
#define T double
#define V double
#define LOWEST (-INFINITY)
#elif defined(EM_UINT8)
#define T uchar
#define V uchar
#define LOWEST 0
#elif defined(EM_INT8)
#define T char
#define V char
#define LOWEST CHAR_MIN
#elif defined(EM_INT32)
#define T int
#define V int
#define LOWEST INT_MIN
#elif defined(EM_INT64)
#define T long
#define V long
#define LOWEST LONG_MIN
#endif

#ifndef LOAD
#define LOAD(p, i) ((V)(p)[i])
#define STORE(p, i, v) ((p)[i] = (T)(v))
#endif

#if defined(EM_FLOAT16) || defined(EM_FLOAT32) || defined(EM_FLOAT64)
#define FLOATING 1
#define IS_NAN(v) ((v) != (v))
#else
#define FLOATING 0
#define IS_NAN(v) 0
#endif

/* v rounded to the storage type, as the CPU's `T share = (T)...` and `gi += share` do. */
#if defined(EM_FLOAT16)
static inline float to_storage(ACC v) {
    ushort bits;
    vstore_half_rte(v, 0, (__private half*)&bits);
    return vload_half(0, (__private const half*)&bits);
}
#else
#define to_storage(v) ((T)(v))
#endif

/* ---- max --------------------------------------------------------------------------------- */

/* Global (OH, planes): output row y of one plane. */
__kernel void max_pool2d(__global T* out, long out_off, __global long* indices, long idx_off,
                         __global const T* in, long in_off, long H, long W, long OH, long OW,
                         long KH, long KW, long SH, long SW, long PH, long PW, long DH,
                         long DW) {
    const long y = get_global_id(0), plane = get_global_id(1);
    const __global T* src = in + in_off + plane * H * W;
    const long at = out_off + (plane * OH + y) * OW;
    __global long* idx = indices + idx_off - out_off + at;
    long y0 = y * SH - PH;
    const long y1 = min(y0 + (KH - 1) * DH + 1, H);
    while (y0 < 0) y0 += DH;
    for (long x = 0; x < OW; x++) {
        long x0 = x * SW - PW;
        const long x1 = min(x0 + (KW - 1) * DW + 1, W);
        while (x0 < 0) x0 += DW;
        long best_at = y0 * W + x0;
        V best = LOWEST;
        for (long iy = y0; iy < y1; iy += DH) {
            for (long ix = x0; ix < x1; ix += DW) {
                const V v = LOAD(src, iy * W + ix);
                if (v > best || IS_NAN(v)) {
                    best = v;
                    best_at = iy * W + ix;
                }
            }
        }
        STORE(out, at + x, best);
        idx[x] = best_at;
    }
}

/* Global (splits, planes): item s owns pixels [s * HW / splits, (s + 1) * HW / splits) of
 * its plane, zeroes them and adds every grad_out element whose index falls there, in
 * grad_out order (the indices carry no window geometry to gather by). */
__kernel void max_pool2d_backward(__global T* gi, long gi_off, __global const T* go,
                                  long go_off, __global const long* indices, long idx_off,
                                  long HW, long OHW) {
    const long s = get_global_id(0), splits = get_global_size(0), plane = get_global_id(1);
    const long lo = s * HW / splits, hi = (s + 1) * HW / splits;
    __global T* dst = gi + gi_off + plane * HW;
    const __global T* src = go + go_off + plane * OHW;
    const __global long* idx = indices + idx_off + plane * OHW;
    for (long k = lo; k < hi; k++) STORE(dst, k, (V)0);
    for (long k = 0; k < OHW; k++) {
        const long at = idx[k];
        if (at >= lo && at < hi) STORE(dst, at, LOAD(dst, at) + LOAD(src, k));
    }
}

/* ---- average ------------------------------------------------------------------------------ */

/* The clipped window of output (y, x) and its divisor; 0 when the window is empty. */
static inline long avg_window(long y, long x, long H, long W, long KH, long KW, long SH,
                              long SW, long PH, long PW, int count_include_pad, long divisor,
                              long* y0, long* y1, long* x0, long* x1) {
    *y0 = y * SH - PH;
    *x0 = x * SW - PW;
    *y1 = min(*y0 + KH, H + PH);
    *x1 = min(*x0 + KW, W + PW);
    const long padded = (*y1 - *y0) * (*x1 - *x0);
    *y0 = max(*y0, 0L);
    *x0 = max(*x0, 0L);
    *y1 = min(*y1, H);
    *x1 = min(*x1, W);
    if (*y0 >= *y1 || *x0 >= *x1) return 0;
    if (divisor) return divisor;
    return count_include_pad ? padded : (*y1 - *y0) * (*x1 - *x0);
}

#define WINDOW_ARGS long H, long W, long OH, long OW, long KH, long KW, long SH, long SW, \
    long PH, long PW, int count_include_pad, long divisor
#define WINDOW(y, x) avg_window((y), (x), H, W, KH, KW, SH, SW, PH, PW, count_include_pad, \
                                divisor, &y0, &y1, &x0, &x1)

/* Global (OH, planes): output row y of one plane. */
__kernel void avg_pool2d(__global T* out, long out_off, __global const T* in, long in_off,
                         WINDOW_ARGS) {
    const long y = get_global_id(0), plane = get_global_id(1);
    const __global T* src = in + in_off + plane * H * W;
    const long at = out_off + (plane * OH + y) * OW;
    for (long x = 0; x < OW; x++) {
        long y0, y1, x0, x1;
        const long n = WINDOW(y, x);
#if FLOATING
        ACC sum = 0;
        if (n != 0) {
            for (long iy = y0; iy < y1; iy++)
                for (long ix = x0; ix < x1; ix++) sum += (ACC)LOAD(src, iy * W + ix);
            sum = sum / (ACC)n;
        }
#else
        long sum = 0;
        if (n != 0) {
            for (long iy = y0; iy < y1; iy++)
                for (long ix = x0; ix < x1; ix++) sum += (long)src[iy * W + ix];
            sum = sum / n;
        }
#endif
        STORE(out, at + x, sum);
    }
}

/* Global (H, planes); floats only: input row iy of one plane. Its outputs' windows
 * [o*S - P, o*S - P + K) hold iy for o in [ylo, yhi). */
__kernel void avg_pool2d_backward(__global T* gi, long gi_off, __global const T* go,
                                  long go_off, WINDOW_ARGS) {
    const long iy = get_global_id(0), plane = get_global_id(1);
    const __global T* src = go + go_off + plane * OH * OW;
    __global T* row = gi + gi_off + (plane * H + iy) * W;
    for (long ix = 0; ix < W; ix++) STORE(row, ix, (V)0);
    const long first = iy + PH - KH + 1;
    const long ylo = first <= 0 ? 0 : (first + SH - 1) / SH;
    const long yhi = min((iy + PH) / SH + 1, OH);
    for (long y = ylo; y < yhi; y++) {
        for (long x = 0; x < OW; x++) {
            long y0, y1, x0, x1;
            const long n = WINDOW(y, x);
            if (n == 0) continue;
            const V share = to_storage((ACC)LOAD(src, y * OW + x) / (ACC)n);
            for (long ix = x0; ix < x1; ix++) STORE(row, ix, LOAD(row, ix) + share);
        }
    }
}

/* ---- adaptive average ------------------------------------------------------------------------ */

static inline long start_of(long i, long in, long out) { return i * in / out; }
static inline long end_of(long i, long in, long out) { return ((i + 1) * in + out - 1) / out; }

/* Global (OH, planes); floats only: output row y of one plane. */
__kernel void adaptive_avg_pool2d(__global T* out, long out_off, __global const T* in,
                                  long in_off, long H, long W, long OH, long OW) {
    const long y = get_global_id(0), plane = get_global_id(1);
    const long y0 = start_of(y, H, OH), y1 = end_of(y, H, OH);
    const __global T* src = in + in_off + plane * H * W;
    const long at = out_off + (plane * OH + y) * OW;
    for (long x = 0; x < OW; x++) {
        const long x0 = start_of(x, W, OW), x1 = end_of(x, W, OW);
        ACC sum = 0;
        for (long iy = y0; iy < y1; iy++)
            for (long ix = x0; ix < x1; ix++) sum += (ACC)LOAD(src, iy * W + ix);
        STORE(out, at + x, sum / (ACC)((y1 - y0) * (x1 - x0)));
    }
}

/* Global (H, planes); floats only: input row iy of one plane. The outputs whose rows
 * [start_of(o), end_of(o)) hold iy run from floor(iy*OH/H) to floor(((iy+1)*OH - 1)/H). */
__kernel void adaptive_avg_pool2d_backward(__global T* gi, long gi_off, __global const T* go,
                                           long go_off, long H, long W, long OH, long OW) {
    const long iy = get_global_id(0), plane = get_global_id(1);
    const __global T* src = go + go_off + plane * OH * OW;
    __global T* row = gi + gi_off + (plane * H + iy) * W;
    for (long ix = 0; ix < W; ix++) STORE(row, ix, (V)0);
    const long ylo = iy * OH / H, yhi = min(((iy + 1) * OH - 1) / H + 1, OH);
    for (long y = ylo; y < yhi; y++) {
        const long rows = end_of(y, H, OH) - start_of(y, H, OH);
        for (long x = 0; x < OW; x++) {
            const long x0 = start_of(x, W, OW), x1 = end_of(x, W, OW);
            const V share = to_storage((ACC)LOAD(src, y * OW + x) / (ACC)(rows * (x1 - x0)));
            for (long ix = x0; ix < x1; ix++) STORE(row, ix, LOAD(row, ix) + share);
        }
    }
}
