/* im2col and col2im over NCHW images, shared by devices, as functions of one (Ho, Wo) block
 * of columns or one image row that a device puts its loop or launch around.
 *
 *   em_conv_geometry      the geometry (ember.plugins.kernels.windows.conv2d)
 *   em_conv_valid_span    the outputs of a row whose input position lies in the image
 *   EM_IM2COL_BLOCK       im2col of one (Ho, Wo) block
 *   EM_COL2IM_BLOCK       col2im of one block, added into its image
 *   EM_COL2IM_ROW         col2im of one image row, alone
 *
 * cols is the logical 6-d tensor (N, C, kh, kw, Ho, Wo): cols[n, c, i, j, y, x] is the
 * input pixel x[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw], or 0 where that falls in the
 * padding. Its (Ho, Wo) block is contiguous; the strides of (N, C, kh, kw) are free, so a
 * runtime may lay cols out as a (C*kh*kw, N*Ho*Wo) matrix and multiply a whole batch with
 * one GEMM. Padding is given for the top and left only: the output size says how far the
 * windows reach, so asymmetric ("same") padding needs nothing more.
 *
 * im2col only moves elements, so a device defines it per item size (T an unsigned type of
 * that width). col2im adds the columns back into the image (the adjoint of im2col), block
 * by block in (i, j) order: a device that owns whole images adds each block into a zeroed
 * image (EM_COL2IM_BLOCK, the cpu device); one that owns rows computes an image row alone,
 * adding the column elements that land in it in that same order (EM_COL2IM_ROW, opencl).
 * Both give the same bits, and neither needs atomics. Integers add in unsigned arithmetic
 * of their width (T unsigned), which wraps exactly as two's-complement addition would.
 */
#ifndef EM_IM2COL_H
#define EM_IM2COL_H

#include "em_dialect.h"

/* Images N x C x H x W, kernel, output size, stride, top-left padding, dilation, and the
 * strides of cols' (N, C, kh, kw) dims in elements. */
typedef struct {
    em_i64 n, c, h, w, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
    em_i64 s_n, s_c, s_i, s_j;
} em_conv_geometry;

/* a / b for a >= 0, b > 0, skipping the division (tens of cycles) when b is 1. */
EM_FN em_i64 em_conv_divide(em_i64 a, em_i64 b) { return b == 1 ? a : a / b; }

/* The outputs [*lo, *hi) of a row whose input position o*stride + off lies in [0, size). */
EM_FN void em_conv_valid_span(em_i64 off, em_i64 stride, em_i64 size, em_i64 out, em_i64* lo,
                              em_i64* hi) {
    em_i64 l = off >= 0 ? 0 : em_conv_divide(-off + stride - 1, stride);
    em_i64 h = size - 1 - off < 0 ? 0 : em_conv_divide(size - 1 - off, stride) + 1;
    l = l < out ? l : out;
    h = h < out ? h : out;
    *lo = l;
    *hi = h < l ? l : h;
}

/* void NAME(cols, image, g, n, c, i, j): the (Ho, Wo) block cols[n, c, i, j] from image, the
 * H x W plane of (n, c). */
#define EM_IM2COL_BLOCK(NAME, T)                                                           \
    EM_FN void NAME(EM_GLOBAL T* cols, const EM_GLOBAL T* image,                           \
                    const em_conv_geometry* g, em_i64 n, em_i64 c, em_i64 i, em_i64 j) {   \
        EM_GLOBAL T* dst = cols + n * g->s_n + c * g->s_c + i * g->s_i + j * g->s_j;       \
        const em_i64 offh = i * g->dh - g->ph, offw = j * g->dw - g->pw;                   \
        em_i64 lo, hi;                                                                     \
        em_conv_valid_span(offw, g->sw, g->w, g->ow, &lo, &hi);                            \
        for (em_i64 y = 0, ih = offh; y < g->oh; y++, ih += g->sh, dst += g->ow) {         \
            if (ih < 0 || ih >= g->h) {                                                    \
                for (em_i64 x = 0; x < g->ow; x++) dst[x] = 0;                             \
                continue;                                                                  \
            }                                                                              \
            const EM_GLOBAL T* src = image + ih * g->w + offw;                             \
            for (em_i64 x = 0; x < lo; x++) dst[x] = 0;                                    \
            if (g->sw == 1) {                                                              \
                for (em_i64 x = lo; x < hi; x++) dst[x] = src[x];                          \
            } else {                                                                       \
                for (em_i64 x = lo; x < hi; x++) dst[x] = src[x * g->sw];                  \
            }                                                                              \
            for (em_i64 x = hi; x < g->ow; x++) dst[x] = 0;                                \
        }                                                                                  \
    }

/* void NAME(image, cols, g, n, c, i, j): image (n, c), its H x W plane, += the block
 * cols[n, c, i, j]. */
#define EM_COL2IM_BLOCK(NAME, T)                                                           \
    EM_FN void NAME(EM_GLOBAL T* image, const EM_GLOBAL T* cols,                           \
                    const em_conv_geometry* g, em_i64 n, em_i64 c, em_i64 i, em_i64 j) {   \
        const EM_GLOBAL T* src = cols + n * g->s_n + c * g->s_c + i * g->s_i + j * g->s_j; \
        const em_i64 offh = i * g->dh - g->ph, offw = j * g->dw - g->pw;                   \
        em_i64 lo, hi;                                                                     \
        em_conv_valid_span(offw, g->sw, g->w, g->ow, &lo, &hi);                            \
        for (em_i64 y = 0, ih = offh; y < g->oh; y++, ih += g->sh, src += g->ow) {         \
            if (ih < 0 || ih >= g->h) continue;                                            \
            EM_GLOBAL T* dst = image + ih * g->w + offw;                                   \
            if (g->sw == 1) {                                                              \
                for (em_i64 x = lo; x < hi; x++) dst[x] += src[x];                         \
            } else {                                                                       \
                for (em_i64 x = lo; x < hi; x++) dst[x * g->sw] += src[x];                 \
            }                                                                              \
        }                                                                                  \
    }

/* void NAME(row, cols, g, n, c, ih): image row ih of (n, c), the sum of its column
 * elements. */
#define EM_COL2IM_ROW(NAME, T)                                                             \
    EM_FN void NAME(EM_GLOBAL T* row, const EM_GLOBAL T* cols, const em_conv_geometry* g,  \
                    em_i64 n, em_i64 c, em_i64 ih) {                                       \
        for (em_i64 iw = 0; iw < g->w; iw++) row[iw] = 0;                                  \
        for (em_i64 i = 0; i < g->kh; i++) {                                               \
            /* th = y * sh for the output row y that reads ih; it only falls as i grows */ \
            const em_i64 th = ih + g->ph - i * g->dh;                                      \
            if (th < 0) break;                                                             \
            const em_i64 y = em_conv_divide(th, g->sh);                                    \
            if (y * g->sh != th || y >= g->oh) continue;                                   \
            for (em_i64 j = 0; j < g->kw; j++) {                                           \
                const em_i64 offw = j * g->dw - g->pw;                                     \
                em_i64 lo, hi;                                                             \
                em_conv_valid_span(offw, g->sw, g->w, g->ow, &lo, &hi);                    \
                const EM_GLOBAL T* src =                                                   \
                    cols + n * g->s_n + c * g->s_c + i * g->s_i + j * g->s_j + y * g->ow;  \
                EM_GLOBAL T* dst = row + offw;                                             \
                if (g->sw == 1) {                                                          \
                    for (em_i64 x = lo; x < hi; x++) dst[x] += src[x];                     \
                } else {                                                                   \
                    for (em_i64 x = lo; x < hi; x++) dst[x * g->sw] += src[x];             \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

#endif /* EM_IM2COL_H */
