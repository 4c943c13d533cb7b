/* Convolution primitives of the CPU device: im2col and col2im over NCHW images.
 *
 * cols is the logical 6-d tensor (N, C, kh, kw, Ho, Wo): cols[n, c, i, j, y, x] is the
 * input pixel x[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw], or 0 where that falls in the
 * padding. Its (Ho, Wo) block is contiguous; the strides of (N, C, kh, kw) are free, so
 * the runtime lays cols out as a (C*kh*kw, N*Ho*Wo) matrix and multiplies a whole batch
 * with one GEMM. Padding is given for the top and left only: the output size says how far
 * the windows reach, so asymmetric ("same") padding needs nothing more.
 *
 * im2col only moves elements, so it serves every dtype by item size. col2im adds the
 * columns back into the image (the adjoint of im2col, used by conv backward and
 * conv_transpose); integers add in unsigned arithmetic of their width, which wraps
 * exactly as signed two's-complement addition would. Both split images (n, c) across
 * OpenMP threads: each image is read or written by one thread only.
 */
#include <string.h>

#include "strided.h"

typedef struct {
    int64_t n, c, h, w, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
    int64_t s_n, s_c, s_i, s_j; /* cols strides of N, C, kh, kw, in elements */
} geom_t;

/* geometry: N, C, H, W, kh, kw, Ho, Wo, sh, sw, ph, pw, dh, dw, then the four strides. */
static geom_t read_geometry(const int64_t* g) {
    geom_t m = {g[0], g[1], g[2],  g[3],  g[4],  g[5],  g[6],  g[7],  g[8],
                g[9], g[10], g[11], g[12], g[13], g[14], g[15], g[16], g[17]};
    return m;
}

/* The output positions [lo, hi) of a row whose input position o*stride + off lies in
 * [0, size). */
static inline void valid_span(int64_t off, int64_t stride, int64_t size, int64_t out,
                              int64_t* lo, int64_t* hi) {
    int64_t l = off >= 0 ? 0 : (-off + stride - 1) / stride;
    int64_t h = size - 1 - off < 0 ? 0 : (size - 1 - off) / stride + 1;
    if (l > out) l = out;
    if (h > out) h = out;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

typedef struct {
    geom_t g;
    char* cols;
    char* image;
} conv_job_t;

/* The image (n, c) handled p-th. When the columns keep the batch inside each row (the
 * runtime's (C*kh*kw, N*Ho*Wo) matrix), images go channel by channel so that consecutive
 * images fill consecutive stretches of the same rows: long streams, not kh*kw*C short
 * ones per image. */
static inline void plane_of(const geom_t* g, int64_t p, int64_t* n, int64_t* c) {
    if (g->s_n < g->s_c) {
        *c = p / g->n;
        *n = p % g->n;
    } else {
        *n = p / g->c;
        *c = p % g->c;
    }
}

/* ---- im2col ----------------------------------------------------------------------------- */

#define DEFINE_IM2COL(SUF, T)                                                              \
    static void im2col_plane_##SUF(const geom_t* g, T* cols, const T* img, int64_t n,      \
                                   int64_t c) {                                            \
        for (int64_t i = 0; i < g->kh; i++) {                                              \
            for (int64_t j = 0; j < g->kw; j++) {                                          \
                T* dst = cols + n * g->s_n + c * g->s_c + i * g->s_i + j * g->s_j;         \
                int64_t offh = i * g->dh - g->ph, offw = j * g->dw - g->pw, lo, hi;        \
                valid_span(offw, g->sw, g->w, g->ow, &lo, &hi);                            \
                for (int64_t y = 0; y < g->oh; y++, dst += g->ow) {                        \
                    int64_t ih = y * g->sh + offh;                                         \
                    if (ih < 0 || ih >= g->h || lo == hi) {                                \
                        memset(dst, 0, (size_t)g->ow * sizeof(T));                         \
                        continue;                                                          \
                    }                                                                      \
                    const T* src = img + ih * g->w + offw;                                 \
                    for (int64_t x = 0; x < lo; x++) dst[x] = 0;                           \
                    if (g->sw == 1) {                                                      \
                        memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(T));         \
                    } else {                                                               \
                        for (int64_t x = lo; x < hi; x++) dst[x] = src[x * g->sw];         \
                    }                                                                      \
                    for (int64_t x = hi; x < g->ow; x++) dst[x] = 0;                       \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void im2col_part_##SUF(void* ctx, int t, int nt) {                              \
        const conv_job_t* job = ctx;                                                       \
        const geom_t* g = &job->g;                                                         \
        int64_t begin, end;                                                                \
        split(g->n * g->c, t, nt, &begin, &end);                                           \
        for (int64_t p = begin; p < end; p++) {                                            \
            int64_t n, c;                                                                  \
            plane_of(g, p, &n, &c);                                                        \
            im2col_plane_##SUF(g, (T*)job->cols,                                           \
                               (const T*)job->image + (n * g->c + c) * g->h * g->w, n, c); \
        }                                                                                  \
    }

DEFINE_IM2COL(1, uint8_t)
DEFINE_IM2COL(2, uint16_t)
DEFINE_IM2COL(4, uint32_t)
DEFINE_IM2COL(8, uint64_t)

int em_im2col(int itemsize, intptr_t cols, intptr_t image, const int64_t* geometry) {
    conv_job_t job = {read_geometry(geometry), (char*)cols, (char*)image};
    const geom_t* g = &job.g;
    int64_t work = g->n * g->c * g->kh * g->kw * g->oh * g->ow;
    if (work == 0) return 0;
    part_fn fn = itemsize == 1   ? im2col_part_1
                 : itemsize == 2 ? im2col_part_2
                 : itemsize == 4 ? im2col_part_4
                                 : im2col_part_8;
    run_parts(work, g->n * g->c, fn, &job);
    return 0;
}

/* ---- col2im ----------------------------------------------------------------------------- */

#define DEFINE_COL2IM(SUF, T)                                                              \
    static void col2im_plane_##SUF(const geom_t* g, const T* cols, T* img, int64_t n,      \
                                   int64_t c) {                                            \
        memset(img, 0, (size_t)(g->h * g->w) * sizeof(T));                                 \
        for (int64_t i = 0; i < g->kh; i++) {                                              \
            for (int64_t j = 0; j < g->kw; j++) {                                          \
                const T* src = cols + n * g->s_n + c * g->s_c + i * g->s_i + j * g->s_j;   \
                int64_t offh = i * g->dh - g->ph, offw = j * g->dw - g->pw, lo, hi;        \
                valid_span(offw, g->sw, g->w, g->ow, &lo, &hi);                            \
                for (int64_t y = 0; y < g->oh; y++, src += g->ow) {                        \
                    int64_t ih = y * g->sh + offh;                                         \
                    if (ih < 0 || ih >= g->h) continue;                                    \
                    T* dst = img + ih * g->w + offw;                                       \
                    if (g->sw == 1) {                                                      \
                        for (int64_t x = lo; x < hi; x++) dst[x] += src[x];                \
                    } else {                                                               \
                        for (int64_t x = lo; x < hi; x++) dst[x * g->sw] += src[x];        \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void col2im_part_##SUF(void* ctx, int t, int nt) {                              \
        const conv_job_t* job = ctx;                                                       \
        const geom_t* g = &job->g;                                                         \
        int64_t begin, end;                                                                \
        split(g->n * g->c, t, nt, &begin, &end);                                           \
        for (int64_t p = begin; p < end; p++) {                                            \
            int64_t n, c;                                                                  \
            plane_of(g, p, &n, &c);                                                        \
            col2im_plane_##SUF(g, (const T*)job->cols,                                     \
                               (T*)job->image + (n * g->c + c) * g->h * g->w, n, c);       \
        }                                                                                  \
    }

DEFINE_COL2IM(f32, float)
DEFINE_COL2IM(f64, double)
DEFINE_COL2IM(u8, uint8_t)
DEFINE_COL2IM(u32, uint32_t)
DEFINE_COL2IM(u64, uint64_t)

int em_col2im(int dt, intptr_t image, intptr_t cols, const int64_t* geometry) {
    conv_job_t job = {read_geometry(geometry), (char*)cols, (char*)image};
    const geom_t* g = &job.g;
    part_fn fn;
    switch (dt) {
        case EM_FLOAT32: fn = col2im_part_f32; break;
        case EM_FLOAT64: fn = col2im_part_f64; break;
        case EM_UINT8: case EM_INT8: fn = col2im_part_u8; break;
        case EM_INT32: fn = col2im_part_u32; break;
        case EM_INT64: fn = col2im_part_u64; break;
        default:
            snprintf(em_error_message, sizeof em_error_message,
                     "col2im: unsupported dtype code %d", dt);
            return 2;
    }
    if (g->n * g->c * g->h * g->w == 0) return 0;
    run_parts(g->n * g->c * (g->h * g->w + g->kh * g->kw * g->oh * g->ow), g->n * g->c, fn,
              &job);
    return 0;
}
