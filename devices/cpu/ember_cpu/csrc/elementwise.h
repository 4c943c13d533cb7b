/* Private declarations of the elementwise family: the loop signature of the rendered
 * kernels (see ember_cpu/_render.py), their table, and float16 block conversions.
 *
 * Geometry comes from the runtime's ElementwisePlan, already broadcast and coalesced:
 * shape[ndim], then each operand's strides[ndim] in elements, outputs first, packed as one
 * int64 buffer. A scalar operand has zero strides and no pointer; its value is an
 * em_scalar passed as the loop's context.
 */
#ifndef EMBER_CPU_ELEMENTWISE_H
#define EMBER_CPU_ELEMENTWISE_H

#include <stdint.h>
#include <string.h>

#include "ember_cpu.h"

#define EM_MAX_OPERANDS 4
#define EM_BF16_SHIFT 4

/* One inner loop over n elements; p and s are each operand's pointer and byte stride,
 * output first. Returns 0. */
typedef int (*em_loop)(int64_t n, char* const* p, const int64_t* s, const void* ctx);

/* A Python scalar operand at position `side` (1 or 2), as a double or as an int64: each
 * loop reads the field of its compute type. */
typedef struct {
    int side;
    double f;
    int64_t i;
} em_scalar;

/* A rendered kernel: its "op.dtype" name, loop, operand count, which operands are float16
 * or bfloat16 (bit k: the loop computes operand k in float, on blocks the iterator
 * converts; bit EM_BF16_SHIFT + k: that operand is bfloat16, not float16) and
 * each operand's item size. */
typedef struct {
    const char* name;
    em_loop loop;
    int nops;
    int half;
    int itemsize[EM_MAX_OPERANDS];
} em_kernel;

extern const em_kernel em_kernels[];
extern const int em_kernel_count;

/* --- float16 in blocks ----------------------------------------------------------------
 * The compiler does not vectorise conversions to and from _Float16 (no AVX512-FP16), so
 * float16 operands are converted EM_BLOCK elements at a time with F16C / AVX-512. */
#define EM_BLOCK 256

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

static inline void em_half_to_float(const em_half* in, float* out, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(in + i))));
#elif defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(in + i))));
#endif
    for (; i < n; i++) out[i] = (float)in[i];
}

static inline void em_float_to_half(const float* in, em_half* out, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i*)(out + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
#elif defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i*)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; i++) out[i] = (em_half)in[i];
}

/* bfloat16 blocks: plain integer loops, which the compiler vectorises. */
static inline void em_bf16_to_float(const em_bf16* in, float* out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = em_bf16_to_f(in[i]);
}

static inline void em_float_to_bf16(const float* in, em_bf16* out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = em_f_to_bf16(in[i]);
}

#endif
