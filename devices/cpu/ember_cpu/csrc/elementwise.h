/* Private declarations of the elementwise family: the strided iterator that every
 * elementwise kernel runs on, the loop signature, and the per-dtype type lists that the
 * loop-generating macros expand over.
 *
 * Geometry crosses from Python as one packed int64 buffer: shape[ndim], then each tensor
 * operand's strides[ndim] (in elements), output first. Scalars never appear there; they
 * become stride-0 operands pointing at a local value.
 */
#ifndef EMBER_CPU_ELEMENTWISE_H
#define EMBER_CPU_ELEMENTWISE_H

#include <stdint.h>
#include <string.h>

#include "ember_cpu.h"

#define EM_MAX_OPERANDS 4

/* Status codes: 0 ok; EM_STATUS_ERROR makes the Python side raise RuntimeError with
 * em_error_message. Loops return one of the EM_LOOP_* codes, mapped to a message once. */
#define EM_STATUS_ERROR 2
#define EM_LOOP_OK 0
#define EM_LOOP_ZERO_DIVISION 1

/* One inner loop: n elements; p and s are each operand's pointer and byte stride (output
 * first); `index` is the row-major logical index of the first element (random kernels
 * use it); ctx holds op constants. Returns an EM_LOOP_* code. */
typedef int (*em_loop)(int64_t n, char* const* p, const int64_t* s, int64_t index,
                       const void* ctx);

/* A coalesced N-d iteration space: size-1 dims dropped, adjacent dims merged where every
 * operand allows it, strides in bytes, innermost dim last. ndim >= 1. */
typedef struct {
    int ndim;
    int nops;
    int64_t numel;
    int64_t shape[EM_MAX_DIMS];
    int64_t stride[EM_MAX_OPERANDS][EM_MAX_DIMS];
    char* base[EM_MAX_OPERANDS];
} em_iter;

/* Build `it` from packed geometry (shape, then strides of the operands that have one;
 * operands with has_strides[k] == 0 get stride 0, i.e. a scalar). */
int em_ew_iter_init(em_iter* it, int nops, int ndim, const char* geometry, char* const* base,
                 const int* itemsize, const int* has_strides);

/* Run `loop` over the iteration space, split across OpenMP threads when large. */
int em_ew_iter_run(const em_iter* it, em_loop loop, const void* ctx);

/* The common case without an iterator: every operand is contiguous (stride = itemsize)
 * or a scalar (stride 0), n elements. */
int em_ew_run_flat(int nops, int64_t n, char* const* base, const int64_t* stride, em_loop loop,
                const void* ctx);

/* Fail with a formatted message in em_error_message; returns EM_STATUS_ERROR. */
int em_ew_fail(const char* format, ...) __attribute__((format(printf, 1, 2)));

/* Message for a loop status code. */
int em_ew_loop_failure(int code);

extern const char* const em_ew_dtype_names[8];
extern const int em_ew_itemsize[8];

/* A Python scalar (given as a double, or as an int64 when use_int) converted to `dtype`,
 * with the same rules as copy_ (float to integer truncates, to bool tests != 0). */
void em_ew_scalar_to(int dtype, double d, int64_t i, int use_int, void* out);

/* Type lists: X(dtype code, suffix, storage type, compute type, unsigned type). The
 * compute type of float16 is float; unsigned types make integer wrap-around defined. */
#define EM_FLOAT_TYPES(X, ...)                                  \
    X(EM_FLOAT16, f16, em_half, float, uint16_t, __VA_ARGS__)   \
    X(EM_FLOAT32, f32, float, float, uint32_t, __VA_ARGS__)     \
    X(EM_FLOAT64, f64, double, double, uint64_t, __VA_ARGS__)
#define EM_SIGNED_TYPES(X, ...)                                 \
    X(EM_INT8, i8, int8_t, int8_t, uint8_t, __VA_ARGS__)        \
    X(EM_INT32, i32, int32_t, int32_t, uint32_t, __VA_ARGS__)   \
    X(EM_INT64, i64, int64_t, int64_t, uint64_t, __VA_ARGS__)
#define EM_UNSIGNED_TYPES(X, ...) X(EM_UINT8, u8, uint8_t, uint8_t, uint8_t, __VA_ARGS__)
#define EM_BOOL_TYPES(X, ...) X(EM_BOOL, b, uint8_t, uint8_t, uint8_t, __VA_ARGS__)
#define EM_INT_TYPES(X, ...) EM_UNSIGNED_TYPES(X, __VA_ARGS__) EM_SIGNED_TYPES(X, __VA_ARGS__)
#define EM_ALL_TYPES(X, ...)                                                             \
    EM_BOOL_TYPES(X, __VA_ARGS__) EM_INT_TYPES(X, __VA_ARGS__) EM_FLOAT_TYPES(X, __VA_ARGS__)

/* --- float16 in blocks ----------------------------------------------------------------
 * The compiler does not vectorise conversions to and from _Float16 (no AVX512-FP16), so
 * float16 loops convert blocks of EM_BLOCK elements to float with F16C / AVX-512, compute
 * in float, and convert back. */
#define EM_BLOCK 256
#define EM_IS_HALF(T) _Generic((T)0, em_half: 1, default: 0)
#define EM_IS_DOUBLE(T) _Generic((T)0, double: 1, default: 0)

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

/* Table entry helper: [dtype code] = name_suffix. */
#define EM_ENTRY(CODE, SUF, T, C, U, NAME) [CODE] = NAME##_##SUF,

#endif
