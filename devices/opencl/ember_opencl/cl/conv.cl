/* im2col and col2im over contiguous NCHW images (the CPU device's csrc/conv.c semantics).
 *
 * cols is the logical (N, C, kh, kw, Ho, Wo) tensor: cols[n, c, i, j, y, x] is the pixel
 * x[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw], or 0 where that lies in the padding. Its
 * (Ho, Wo) block is contiguous; the strides of (N, C, kh, kw) are arguments.
 *
 * im2col only moves elements, so it is built per item size (T an unsigned type of that
 * width). col2im is its adjoint: each work item owns one image row, zeroes it and adds
 * the column elements that land in it, in the (i, j) order of the CPU, so float sums
 * match it bit for bit and no atomics are needed. Integers add in unsigned arithmetic of
 * their width (two's-complement wrapping).
 *
 * Work items loop over whole rows rather than owning one element: on CPU devices a work
 * item costs a few nanoseconds of scheduling and 64-bit divisions cost tens, so both are
 * kept out of the per-element path.
 */

#ifdef cl_khr_fp64 /* T may be double */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* The geometry, passed by value as one argument: image and window sizes, stride,
 * top-left padding, dilation, the (N, C, kh, kw) strides of cols and both element
 * offsets. */
typedef struct {
    long C, H, W, KH, KW, OH, OW, SH, SW, PH, PW, DH, DW;
    long s_n, s_c, s_i, s_j;
    long x_off, cols_off;
} ConvGeometry;

#define UNPACK(g)                                                                         \
    const long C = g.C, H = g.H, W = g.W, KH = g.KH, KW = g.KW, OH = g.OH, OW = g.OW,     \
               SH = g.SH, SW = g.SW, PH = g.PH, PW = g.PW, DH = g.DH, DW = g.DW,          \
               s_n = g.s_n, s_c = g.s_c, s_i = g.s_i, s_j = g.s_j, x_off = g.x_off,       \
               cols_off = g.cols_off

/* a / b for a >= 0, b > 0, skipping the division (tens of cycles) when b is 1. */
static inline long divide(long a, long b) { return b == 1 ? a : a / b; }

/* The outputs [lo, hi) of a row whose input position o*stride + off lies in [0, size). */
static inline void valid_span(long off, long stride, long size, long out, long* lo, long* hi) {
    long l = off >= 0 ? 0 : divide(-off + stride - 1, stride);
    long h = size - 1 - off < 0 ? 0 : divide(size - 1 - off, stride) + 1;
    l = l < out ? l : out;
    h = h < out ? h : out;
    *lo = l;
    *hi = h < l ? l : h;
}

/* Global (KH * KW, N * C): the whole (Ho, Wo) block of one (n, c, i, j). */
__kernel void im2col(__global T* cols, __global const T* x, ConvGeometry g) {
    UNPACK(g);
    const long q = get_global_id(0), plane = get_global_id(1);
    const long i = q / KW, j = q - i * KW, n = plane / C, c = plane - n * C;
    const long offh = i * DH - PH, offw = j * DW - PW;
    long lo, hi;
    valid_span(offw, SW, W, OW, &lo, &hi);
    __global T* dst = cols + cols_off + n * s_n + c * s_c + i * s_i + j * s_j;
    const __global T* image = x + x_off + plane * H * W;
    for (long y = 0, ih = offh; y < OH; y++, ih += SH, dst += OW) {
        if (ih < 0 || ih >= H) {
            for (long xo = 0; xo < OW; xo++) dst[xo] = 0;
            continue;
        }
        const __global T* src = image + ih * W + offw;
        for (long xo = 0; xo < lo; xo++) dst[xo] = 0;
        for (long xo = lo; xo < hi; xo++) dst[xo] = src[xo * SW];
        for (long xo = hi; xo < OW; xo++) dst[xo] = 0;
    }
}

/* Global (H, N * C): image row ih of one plane = the sum of its column elements. */
__kernel void col2im(__global T* x, __global const T* cols, ConvGeometry g) {
    UNPACK(g);
    const long ih = get_global_id(0), plane = get_global_id(1);
    const long n = plane / C, c = plane - n * C;
    __global T* row = x + x_off + (plane * H + ih) * W;
    for (long iw = 0; iw < W; iw++) row[iw] = 0;
    for (long i = 0; i < KH; i++) {
        const long th = ih + PH - i * DH; /* = y * SH for the output row y that reads ih */
        if (th < 0) break;                /* th only falls as i grows */
        const long y = divide(th, SH);
        if (y * SH != th || y >= OH) continue;
        for (long j = 0; j < KW; j++) {
            const long offw = j * DW - PW;
            long lo, hi;
            valid_span(offw, SW, W, OW, &lo, &hi);
            const __global T* src = cols + cols_off + n * s_n + c * s_c + i * s_i + j * s_j + y * OW;
            __global T* dst = row + offw;
            for (long xo = lo; xo < hi; xo++) dst[xo * SW] += src[xo];
        }
    }
}
