/* Float32 math that the compiler can vectorise.
 *
 * glibc only exposes its vector math (libmvec) under -ffast-math, so a loop calling expf
 * stays scalar. These inline versions are branch-free arithmetic that gcc turns into
 * SIMD code; their accuracy is within 2 ulp of the correctly rounded result, with IEEE
 * behaviour at the edges (NaN propagates, overflow gives inf, underflow gives subnormals
 * then 0).
 */
#ifndef EMBER_CPU_ELEMENTWISE_MATH_H
#define EMBER_CPU_ELEMENTWISE_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float em_bits_to_float(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* e^x: x = n ln2 + r with |r| <= ln2/2 (Cody-Waite split of ln2), e^r from the Cephes
 * minimax polynomial, 2^n applied as two factors so that n in [-150, 128] covers the
 * subnormal range and overflow without a branch. */
static inline float em_expf(float x) {
    x = x > 88.8f ? 88.8f : x; /* comparisons are false for NaN: it passes through */
    x = x < -104.0f ? -104.0f : x;
    float n = rintf(x * 1.44269504088896341f);
    float r = fmaf(n, -0.693359375f, x);
    r = fmaf(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = fmaf(p, r, 1.3981999507e-3f);
    p = fmaf(p, r, 8.3334519073e-3f);
    p = fmaf(p, r, 4.1665795894e-2f);
    p = fmaf(p, r, 1.6666665459e-1f);
    p = fmaf(p, r, 5.0000001201e-1f);
    p = fmaf(p, r * r, r) + 1.0f;
    int32_t k = (int32_t)n;
    int32_t k1 = k >> 1;
    int32_t k2 = k - k1;
    return p * em_bits_to_float((uint32_t)(k1 + 127) << 23) *
           em_bits_to_float((uint32_t)(k2 + 127) << 23);
}

static inline float em_sigmoidf(float x) { return 1.0f / (1.0f + em_expf(-x)); }

/* tanh (Cephes tanhf): an odd minimax polynomial for |x| < 0.625, else
 * 1 - 2 / (e^{2|x|} + 1) with the sign restored; both computed, one selected. */
static inline float em_tanhf(float x) {
    float ax = fabsf(x);
    float z = x * x;
    float p = -5.70498872745e-3f;
    p = fmaf(p, z, 2.06390887954e-2f);
    p = fmaf(p, z, -5.37397155531e-2f);
    p = fmaf(p, z, 1.33314422036e-1f);
    p = fmaf(p, z, -3.33332819422e-1f);
    float small = fmaf(p * z, x, x);
    float large = copysignf(1.0f - 2.0f / (em_expf(2.0f * ax) + 1.0f), x);
    return ax < 0.625f ? small : large;
}

static inline double em_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

#endif
