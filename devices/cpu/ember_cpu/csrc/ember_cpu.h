/* Shared declarations of the ember-cpu kernels.
 *
 * Pointers cross the cffi boundary as intptr_t: Python keeps each storage's address as
 * an int, so a kernel call casts nothing per call (see DESIGN.md, "The hot-path budget").
 * Shapes and strides are in elements.
 */
#ifndef EMBER_CPU_H
#define EMBER_CPU_H

#include <stdint.h>
#include <stddef.h>

/* dtype codes: the runtime's ember.dtype.index values. */
enum {
    EM_BOOL = 0,
    EM_UINT8 = 1,
    EM_INT8 = 2,
    EM_INT32 = 3,
    EM_INT64 = 4,
    EM_FLOAT16 = 5,
    EM_FLOAT32 = 6,
    EM_FLOAT64 = 7,
    EM_BFLOAT16 = 8,
};

#define EM_DTYPE_COUNT 9

#define EM_MAX_DIMS 16

/* Elementwise loops above this many elements are split across OpenMP threads. */
#define EM_PARALLEL_GRAIN 32768

typedef _Float16 em_half;

/* bfloat16: the top 16 bits of a float32, computed in float (x86 has no bf16 arithmetic
 * short of AVX512-BF16). Widening is exact; narrowing rounds to nearest even and keeps
 * NaN a quiet NaN, bit for bit as PyTorch's c10::BFloat16 (round_to_nearest_even). */
typedef uint16_t em_bf16;

static inline float em_bf16_to_f(em_bf16 h) {
    union {
        uint32_t u;
        float f;
    } v = {(uint32_t)h << 16};
    return v.f;
}

static inline em_bf16 em_f_to_bf16(float f) {
    union {
        float f;
        uint32_t u;
    } v = {f};
    if (f != f) return (em_bf16)0x7FC0;
    return (em_bf16)((v.u + 0x7FFFu + ((v.u >> 16) & 1u)) >> 16);
}

/* The intra-op thread budget set by ember.set_num_threads. Global, unlike OpenMP's own
 * setting, which is per calling thread; every parallel region asks for this many. */
int em_threads(void);

/* Error reporting: kernels that can fail (an index out of range) return non-zero and
 * leave a message here; the Python side raises it. */
extern _Thread_local char em_error_message[256];

#endif
