/* Ember's random streams: counter-based Philox4x32-10, so that every device draws the same
 * numbers for a (seed, offset) and a generator needs no device state.
 *
 * The specification every device follows:
 *
 *   key     = (seed & 0xffffffff, seed >> 32)
 *   element i of t (its row-major logical index, whatever t's strides):
 *   counter = (lo32(offset + i), hi32(offset + i), 0, 0)    (offset + i wraps mod 2^64)
 *   x0..x3  = philox4x32_10(counter, key), Random123's Philox with
 *             M0 = 0xD2511F53, M1 = 0xCD9E8D57, W0 = 0x9E3779B9, W1 = 0xBB67AE85
 *             (round with the key, then 9 times: bump the key, round).
 *
 *   uniform_  u takes as many bits as the dtype's significand (as PyTorch does), so that it
 *             is exact and below 1: float32: u = (x0 >> 8) * 2^-24; float16: u = (x0 >> 21)
 *             * 2^-11; v = fma(u, hi - lo, lo) in float32 arithmetic (lo, hi rounded to
 *             float32 first), float16 stores v rounded to nearest.
 *             float64: u = ((x0 << 32 | x1) >> 11) * 2^-53, v = fma(u, hi - lo, lo) in double.
 *   normal_   float32/float16: u1 = ((x0 >> 8) + 1) * 2^-24 (in (0, 1]),
 *             u2 = (x1 >> 8) * 2^-24, z = sqrt(-2 log u1) * cos(2 pi u2),
 *             v = fma(std, z, mean), all in float32.
 *             float64: u1 = (((x0 << 32 | x1) >> 11) + 1) * 2^-53,
 *             u2 = ((x2 << 32 | x3) >> 11) * 2^-53, same formula in double.
 *   random_   r = ((x0 << 32 | x1) mod (hi - lo)) + lo, as uint64 arithmetic (hi - lo == 2^64
 *             is passed as span 0 and means no reduction); stored with copy_'s conversion.
 *   randperm_ key_i = x0 << 32 | x1 for i in [0, n); out = the stable argsort of the keys.
 *
 * A device loops over the elements, calls em_philox_at(offset + i, k0, k1) and one value
 * function below, and stores the value in its dtype: float16 values are computed in float32
 * and rounded by the device's own half conversion, random_'s int64 by copy_'s conversion.
 * Only normal_ may differ across devices, in the last bits of their log and cos.
 *
 * Every product that meets an addition is an explicit fmaf/fma call: a compiler that
 * contracts a * b + c by default (gcc, OpenCL C, nvcc) then rounds as one that does not.
 */
#ifndef EM_RANDOM_H
#define EM_RANDOM_H

#include "em_dialect.h"

#define EM_PHILOX_M0 0xD2511F53u
#define EM_PHILOX_M1 0xCD9E8D57u
#define EM_PHILOX_W0 0x9E3779B9u
#define EM_PHILOX_W1 0xBB67AE85u

/* Philox's 128-bit counter, and the four words it draws. */
typedef struct {
    em_u32 x0, x1, x2, x3;
} em_philox4;

/* Round R, under the seed key plus R bumps (mod 2^32); a 64-bit product gives both halves
 * at once. The ten rounds are written out, on scalars, because PoCL's LLVM keeps a loop of
 * them rolled (a third slower) and multiplies a struct's words packed in 64-bit registers. */
#define EM_PHILOX_ROUND(R)                                                   \
    p0 = (em_u64)EM_PHILOX_M0 * x0;                                          \
    p1 = (em_u64)EM_PHILOX_M1 * x2;                                          \
    x0 = (em_u32)(p1 >> 32) ^ x1 ^ (k0 + (R) * EM_PHILOX_W0);                \
    x2 = (em_u32)(p0 >> 32) ^ x3 ^ (k1 + (R) * EM_PHILOX_W1);                \
    x1 = (em_u32)p1;                                                         \
    x3 = (em_u32)p0

EM_FN em_philox4 em_philox(em_philox4 c, em_u32 k0, em_u32 k1) {
    em_u32 x0 = c.x0, x1 = c.x1, x2 = c.x2, x3 = c.x3;
    em_u64 p0, p1;
    EM_PHILOX_ROUND(0u);
    EM_PHILOX_ROUND(1u);
    EM_PHILOX_ROUND(2u);
    EM_PHILOX_ROUND(3u);
    EM_PHILOX_ROUND(4u);
    EM_PHILOX_ROUND(5u);
    EM_PHILOX_ROUND(6u);
    EM_PHILOX_ROUND(7u);
    EM_PHILOX_ROUND(8u);
    EM_PHILOX_ROUND(9u);
    em_philox4 out = {x0, x1, x2, x3};
    return out;
}
#undef EM_PHILOX_ROUND

/* The words of counter (lo32(counter), hi32(counter), 0, 0). */
EM_FN em_philox4 em_philox_at(em_u64 counter, em_u32 k0, em_u32 k1) {
    em_philox4 c = {(em_u32)counter, (em_u32)(counter >> 32), 0u, 0u};
    return em_philox(c, k0, k1);
}

EM_FN em_u64 em_philox_bits64(em_u32 hi, em_u32 lo) {
    return ((em_u64)hi << 32) | lo;
}

#define EM_TWO_POW_M11 4.8828125e-04f
#define EM_TWO_POW_M24 5.9604644775390625e-08f
#define EM_TWO_PI_F 6.28318530717958647692f

/* float16's uniform_ value, before the device rounds it to half. */
EM_FN float em_uniform_f16(em_philox4 x, float lo, float hi) {
    return fmaf((float)(x.x0 >> 21) * EM_TWO_POW_M11, hi - lo, lo);
}

/* bfloat16 keeps 8 significant bits: 8 random bits on [0, 1), so 1.0 is never drawn. */
EM_FN float em_uniform_bf16(em_philox4 x, float lo, float hi) {
    return fmaf((float)(x.x0 >> 24) * 0.00390625f, hi - lo, lo);
}

EM_FN float em_uniform_f32(em_philox4 x, float lo, float hi) {
    return fmaf((float)(x.x0 >> 8) * EM_TWO_POW_M24, hi - lo, lo);
}

/* normal_ of float32, and of float16 before the device rounds it to half. */
EM_FN float em_normal_f32(em_philox4 x, float mean, float std) {
    float u1 = (float)((x.x0 >> 8) + 1u) * EM_TWO_POW_M24;
    float u2 = (float)(x.x1 >> 8) * EM_TWO_POW_M24;
    float z = sqrtf(-2.0f * logf(u1)) * cosf(EM_TWO_PI_F * u2);
    return fmaf(std, z, mean);
}

#ifdef EM_HAS_DOUBLE
#define EM_TWO_POW_M53 1.1102230246251565e-16
#define EM_TWO_PI 6.28318530717958647692

EM_FN double em_uniform_f64(em_philox4 x, double lo, double hi) {
    return fma((double)(em_philox_bits64(x.x0, x.x1) >> 11) * EM_TWO_POW_M53, hi - lo, lo);
}

EM_FN double em_normal_f64(em_philox4 x, double mean, double std) {
    double u1 = (double)((em_philox_bits64(x.x0, x.x1) >> 11) + 1) * EM_TWO_POW_M53;
    double u2 = (double)(em_philox_bits64(x.x2, x.x3) >> 11) * EM_TWO_POW_M53;
    double z = sqrt(-2.0 * log(u1)) * cos(EM_TWO_PI * u2);
    return fma(std, z, mean);
}
#endif

/* random_'s value before its dtype's conversion; span 0 stands for 2^64. */
EM_FN em_i64 em_random_int(em_philox4 x, em_i64 low, em_u64 span) {
    em_u64 k = em_philox_bits64(x.x0, x.x1);
    return (em_i64)((span ? k % span : k) + (em_u64)low);
}

/* randperm_'s sort key of an element. */
EM_FN em_u64 em_randperm_key(em_philox4 x) {
    return em_philox_bits64(x.x0, x.x1);
}

#endif /* EM_RANDOM_H */
