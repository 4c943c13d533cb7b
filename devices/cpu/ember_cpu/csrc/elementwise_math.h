/* Float32 math that the compiler can vectorise.
 *
 * glibc only exposes its vector math (libmvec) under -ffast-math, so a loop calling expf
 * stays scalar. These inline versions are branch-free arithmetic that gcc turns into
 * SIMD code (given -fno-trapping-math, see _build.py); their accuracy is within 3 ulp of
 * the correctly rounded result, with IEEE behaviour at the edges (NaN propagates,
 * overflow gives inf, underflow gives subnormals then 0).
 */
#ifndef EMBER_CPU_ELEMENTWISE_MATH_H
#define EMBER_CPU_ELEMENTWISE_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* For loops that these functions make compute-bound (exp, erf, GELU, ...): 512-bit
 * vectors where the CPU has them, whatever the device-wide preference for 256 bits (set
 * for AMD Zen 1, see _build.py). On AVX-512 Intel cores such loops run about 1.4x faster
 * so; where there is no AVX-512 the attribute changes nothing. GCC only (clang would
 * warn and ignore it). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define EM_HAVE_WIDE_VECTORS 1 /* for `#pragma GCC target`, around whole functions */
#define EM_WIDE_VECTORS __attribute__((target("prefer-vector-width=512")))
#else
#define EM_WIDE_VECTORS
#endif

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

static inline uint32_t em_float_to_bits(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* log (Cephes logf): x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) from a minimax
 * polynomial in m - 1, e ln2 added in two parts. Subnormals are scaled by 2^23 first;
 * 0, negatives, inf and NaN are patched in at the end. */
static inline float em_logf(float x) {
    const int subnormal = x < 1.17549435e-38f;
    const float xs = subnormal ? x * 8388608.0f : x;
    const uint32_t bits = em_float_to_bits(xs);
    float e = (float)((int32_t)((bits >> 23) & 0xff) - 126 - (subnormal ? 23 : 0));
    float m = em_bits_to_float((bits & 0x007fffffu) | 0x3f000000u); /* [0.5, 1) */
    const int below = m < 0.707106781186547524f;
    e = below ? e - 1.0f : e;
    const float f = below ? m + m - 1.0f : m - 1.0f;
    const float z = f * f;
    float p = 7.0376836292e-2f;
    p = fmaf(p, f, -1.1514610310e-1f);
    p = fmaf(p, f, 1.1676998740e-1f);
    p = fmaf(p, f, -1.2420140846e-1f);
    p = fmaf(p, f, 1.4249322787e-1f);
    p = fmaf(p, f, -1.6668057665e-1f);
    p = fmaf(p, f, 2.0000714765e-1f);
    p = fmaf(p, f, -2.4999993993e-1f);
    p = fmaf(p, f, 3.3333331174e-1f);
    float y = p * f * z;
    y = fmaf(e, -2.12194440e-4f, y);
    y = fmaf(z, -0.5f, y);
    float r = fmaf(e, 0.693359375f, f + y);
    r = x == INFINITY ? x : r;
    r = x == 0.0f ? -INFINITY : r;
    return x < 0.0f || x != x ? NAN : r;
}

/* erf: erf(x) = x P(x^2) for |x| < 1; else 1 - e^{-x^2} Q(1/|x|) / |x| with the sign
 * restored (|x| is capped at 4, where erf rounds to 1). P and Q are least-squares fits
 * of relative error below 1e-8; the result is within 3 ulp. */
static inline float em_erff(float x) {
    const float ax = fabsf(x);
    const float z = x * x;
    float p = 7.923287444e-05f;
    p = fmaf(p, z, -8.030977442e-04f);
    p = fmaf(p, z, 5.190675130e-03f);
    p = fmaf(p, z, -2.685504853e-02f);
    p = fmaf(p, z, 1.128361535e-01f);
    p = fmaf(p, z, -3.761262871e-01f);
    p = fmaf(p, z, 1.128379166e+00f);
    const float small = x * p;
    const float c = ax < 4.0f ? ax : 4.0f;
    const float u = 1.0f / c;
    float q = -4.815849420e-02f;
    q = fmaf(q, u, 3.257863095e-01f);
    q = fmaf(q, u, -9.761977954e-01f);
    q = fmaf(q, u, 1.683977590e+00f);
    q = fmaf(q, u, -1.785654007e+00f);
    q = fmaf(q, u, 1.075576000e+00f);
    q = fmaf(q, u, -1.494818957e-01f);
    q = fmaf(q, u, -2.607921205e-01f);
    q = fmaf(q, u, -1.721342661e-03f);
    q = fmaf(q, u, 5.642493287e-01f);
    const float large = copysignf(1.0f - em_expf(-c * c) * u * q, x);
    return ax < 1.0f || x != x ? small : large;
}

/* The standard normal's cdf Phi(x), and its density phi(x) through `pdf`: GELU's two
 * factors, sharing one exp. With z = |x|/sqrt(2) and t = 1/(1 + 0.4 z),
 * Phi(-|x|) = erfc(z)/2 = t P(t) e^{-z^2}, where P (degree 8) is a least-squares fit of
 * erfcx(z)/(2t) over t in (0, 1], of relative error below 4e-7 for every z >= 0: the far
 * tail keeps its relative accuracy, which A&S 7.1.26 (PyTorch's vectorised erf) does not.
 * e^{-z^2} = e^{-x^2/2} is phi's exponential too. About half em_erff's work. */
static inline float em_normal_cdf_pdf(float x, float *pdf) {
    const float z = fabsf(x) * 0.70710678118654752f;
    const float t = 1.0f / fmaf(0.4f, z, 1.0f);
    float p = 2.509364415e-02f;
    p = fmaf(p, t, -9.130767336e-02f);
    p = fmaf(p, t, 8.432192898e-02f);
    p = fmaf(p, t, -2.627704968e-03f);
    p = fmaf(p, t, 7.063867049e-02f);
    p = fmaf(p, t, 8.428908582e-02f);
    p = fmaf(p, t, 1.039192919e-01f);
    p = fmaf(p, t, 1.128348866e-01f);
    p = fmaf(p, t, 1.128379304e-01f);
    const float e = em_expf(-0.5f * x * x);
    const float tail = t * p * e;
    *pdf = e * 0.39894228040143268f;
    return x < 0.0f ? tail : 1.0f - tail; /* NaN: 1 - NaN */
}

static inline float em_normal_cdf(float x) {
    float pdf;
    return em_normal_cdf_pdf(x, &pdf);
}

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
    float small = copysignf(fmaf(p * z, x, x), x); /* keeps tanh(-0) == -0 */
    float large = copysignf(1.0f - 2.0f / (em_expf(2.0f * ax) + 1.0f), x);
    return ax < 0.625f ? small : large;
}

#endif
