/* im2col and col2im of the CPU device: OpenMP loops over em_im2col.h's blocks.
 *
 * Images (n, c) are split across threads, so each is read or written by one thread only.
 * im2col serves every dtype by item size; col2im adds floats natively and integers in
 * unsigned arithmetic of their width.
 */
#include "em_im2col.h"
#include "strided.h"

typedef struct {
    em_conv_geometry g;
    char* cols;
    char* image;
} conv_job_t;

/* The image (n, c) handled p-th. When the columns keep the batch inside each row (the
 * runtime's (C*kh*kw, N*Ho*Wo) matrix), images go channel by channel so that consecutive
 * images fill consecutive stretches of the same rows: long streams, not kh*kw*C short
 * ones per image. */
static inline void plane_of(const em_conv_geometry* g, int64_t p, int64_t* n, int64_t* c) {
    if (g->s_n < g->s_c) {
        *c = p / g->n;
        *n = p % g->n;
    } else {
        *n = p / g->c;
        *c = p % g->c;
    }
}

#define DEFINE_IM2COL(SUF, T)                                                              \
    EM_IM2COL_BLOCK(im2col_block_##SUF, T)                                                 \
    static void im2col_part_##SUF(void* ctx, int t, int nt) {                              \
        const conv_job_t* job = ctx;                                                       \
        const em_conv_geometry* g = &job->g;                                               \
        int64_t begin, end, n, c;                                                          \
        split(g->n * g->c, t, nt, &begin, &end);                                           \
        for (int64_t p = begin; p < end; p++) {                                            \
            plane_of(g, p, &n, &c);                                                        \
            const T* image = (const T*)job->image + (n * g->c + c) * g->h * g->w;          \
            for (int64_t i = 0; i < g->kh; i++)                                            \
                for (int64_t j = 0; j < g->kw; j++)                                        \
                    im2col_block_##SUF((T*)job->cols, image, g, n, c, i, j);               \
        }                                                                                  \
    }

DEFINE_IM2COL(1, uint8_t)
DEFINE_IM2COL(2, uint16_t)
DEFINE_IM2COL(4, uint32_t)
DEFINE_IM2COL(8, uint64_t)

#define DEFINE_COL2IM(SUF, T)                                                              \
    EM_COL2IM_BLOCK(col2im_block_##SUF, T)                                                 \
    static void col2im_part_##SUF(void* ctx, int t, int nt) {                              \
        const conv_job_t* job = ctx;                                                       \
        const em_conv_geometry* g = &job->g;                                               \
        int64_t begin, end, n, c;                                                          \
        split(g->n * g->c, t, nt, &begin, &end);                                           \
        for (int64_t p = begin; p < end; p++) {                                            \
            plane_of(g, p, &n, &c);                                                        \
            T* image = (T*)job->image + (n * g->c + c) * g->h * g->w;                      \
            memset(image, 0, (size_t)(g->h * g->w) * sizeof(T));                           \
            for (int64_t i = 0; i < g->kh; i++)                                            \
                for (int64_t j = 0; j < g->kw; j++)                                        \
                    col2im_block_##SUF(image, (const T*)job->cols, g, n, c, i, j);         \
        }                                                                                  \
    }

DEFINE_COL2IM(f32, float)
DEFINE_COL2IM(f64, double)
DEFINE_COL2IM(u8, uint8_t)
DEFINE_COL2IM(u32, uint32_t)
DEFINE_COL2IM(u64, uint64_t)

/* geometry: em_conv_geometry's fields. */
int em_im2col(int itemsize, intptr_t cols, intptr_t image, const int64_t* geometry) {
    conv_job_t job = {.cols = (char*)cols, .image = (char*)image};
    memcpy(&job.g, geometry, sizeof job.g);
    const em_conv_geometry* g = &job.g;
    int64_t work = g->n * g->c * g->kh * g->kw * g->oh * g->ow;
    if (work == 0) return 0;
    part_fn fn = itemsize == 1   ? im2col_part_1
                 : itemsize == 2 ? im2col_part_2
                 : itemsize == 4 ? im2col_part_4
                                 : im2col_part_8;
    run_parts(work, g->n * g->c, fn, &job);
    return 0;
}

int em_col2im(int dt, intptr_t image, intptr_t cols, const int64_t* geometry) {
    conv_job_t job = {.cols = (char*)cols, .image = (char*)image};
    memcpy(&job.g, geometry, sizeof job.g);
    const em_conv_geometry* g = &job.g;
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
