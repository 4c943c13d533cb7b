/* Random kernels: counter-based Philox4x32-10, so every device draws identical streams.
 *
 * The specification every device follows (the OpenCL device replicates it):
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
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ember_cpu.h"

#define EM_PHILOX_M0 0xD2511F53u
#define EM_PHILOX_M1 0xCD9E8D57u
#define EM_PHILOX_W0 0x9E3779B9u
#define EM_PHILOX_W1 0xBB67AE85u

static inline void philox4x32_10(uint32_t c[4], uint32_t k0, uint32_t k1) {
    for (int round = 0; round < 10; round++) {
        if (round) {
            k0 += EM_PHILOX_W0;
            k1 += EM_PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)EM_PHILOX_M0 * c[0];
        uint64_t p1 = (uint64_t)EM_PHILOX_M1 * c[2];
        uint32_t c1 = c[1], c3 = c[3];
        c[0] = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        c[1] = (uint32_t)p1;
        c[2] = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c[3] = (uint32_t)p0;
    }
}

void em_philox4x32_10(const uint32_t* counter, const uint32_t* key, uint32_t* out) {
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
    philox4x32_10(c, key[0], key[1]);
    for (int k = 0; k < 4; k++) out[k] = c[k];
}

typedef struct {
    uint32_t key0, key1;
    uint64_t offset;
    double a, b;   /* uniform: low, high; normal: mean, std */
    int64_t low;   /* random_ */
    uint64_t span; /* random_: high - low mod 2^64 */
} random_params;

/* The four words for logical element `index`. */
static inline void draw(const random_params* r, int64_t index, uint32_t x[4]) {
    uint64_t counter = r->offset + (uint64_t)index;
    x[0] = (uint32_t)counter;
    x[1] = (uint32_t)(counter >> 32);
    x[2] = 0;
    x[3] = 0;
    philox4x32_10(x, r->key0, r->key1);
}

#define EM_TWO_POW_M11 4.8828125e-04f
#define EM_TWO_POW_M24 5.9604644775390625e-08f
#define EM_TWO_POW_M53 1.1102230246251565e-16
#define EM_TWO_PI_F 6.28318530717958647692f
#define EM_TWO_PI 6.28318530717958647692

static inline uint64_t bits53(uint32_t hi, uint32_t lo) {
    return (((uint64_t)hi << 32) | lo) >> 11;
}

/* One loop per (distribution, dtype) over a contiguous t (the Python side draws into a
 * contiguous buffer for other layouts): VALUE computes `v` from the words x[0..3]. */
typedef void (*random_fn)(int64_t n, char* out, const random_params* r);

#define EM_RANDOM_LOOP(NAME, T, VALUE)                                                 \
    static void NAME(int64_t n, char* out, const random_params* r) {                   \
        _Pragma("omp parallel for num_threads(em_threads()) if (n >= EM_PARALLEL_GRAIN)") \
        for (int64_t i = 0; i < n; i++) {                                              \
            uint32_t x[4];                                                             \
            draw(r, i, x);                                                             \
            ((T*)out)[i] = (T)(VALUE);                                                 \
        }                                                                              \
    }

static inline float uniform_f(const random_params* r, float u) {
    return fmaf(u, (float)r->b - (float)r->a, (float)r->a);
}
#define EM_UNIFORM_D(x) fma((double)bits53((x)[0], (x)[1]) * EM_TWO_POW_M53, r->b - r->a, r->a)
EM_RANDOM_LOOP(uniform_f16, em_half, uniform_f(r, (float)(x[0] >> 21) * EM_TWO_POW_M11))
EM_RANDOM_LOOP(uniform_f32, float, uniform_f(r, (float)(x[0] >> 8) * EM_TWO_POW_M24))
EM_RANDOM_LOOP(uniform_f64, double, EM_UNIFORM_D(x))

static inline float normal_f(const random_params* r, const uint32_t* x) {
    float u1 = (float)((x[0] >> 8) + 1) * EM_TWO_POW_M24;
    float u2 = (float)(x[1] >> 8) * EM_TWO_POW_M24;
    float z = sqrtf(-2.0f * logf(u1)) * cosf(EM_TWO_PI_F * u2);
    return fmaf((float)r->b, z, (float)r->a);
}
static inline double normal_d(const random_params* r, const uint32_t* x) {
    double u1 = (double)(bits53(x[0], x[1]) + 1) * EM_TWO_POW_M53;
    double u2 = (double)bits53(x[2], x[3]) * EM_TWO_POW_M53;
    double z = sqrt(-2.0 * log(u1)) * cos(EM_TWO_PI * u2);
    return fma(r->b, z, r->a);
}
EM_RANDOM_LOOP(normal_f16, em_half, normal_f(r, x))
EM_RANDOM_LOOP(normal_f32, float, normal_f(r, x))
EM_RANDOM_LOOP(normal_f64, double, normal_d(r, x))

static inline int64_t random_int(const random_params* r, const uint32_t* x) {
    uint64_t k = ((uint64_t)x[0] << 32) | x[1];
    return (int64_t)((r->span ? k % r->span : k) + (uint64_t)r->low);
}
EM_RANDOM_LOOP(random_b, uint8_t, random_int(r, x) != 0)
EM_RANDOM_LOOP(random_u8, uint8_t, random_int(r, x))
EM_RANDOM_LOOP(random_i8, int8_t, random_int(r, x))
EM_RANDOM_LOOP(random_i32, int32_t, random_int(r, x))
EM_RANDOM_LOOP(random_i64, int64_t, random_int(r, x))
EM_RANDOM_LOOP(random_f16, em_half, random_int(r, x))
EM_RANDOM_LOOP(random_f32, float, random_int(r, x))
EM_RANDOM_LOOP(random_f64, double, random_int(r, x))

static const random_fn uniform_table[8] = {[5] = uniform_f16, uniform_f32, uniform_f64};
static const random_fn normal_table[8] = {[5] = normal_f16, normal_f32, normal_f64};
static const random_fn random_table[8] = {random_b,   random_u8,  random_i8,  random_i32,
                                          random_i64, random_f16, random_f32, random_f64};

static int run_random(const random_fn* table, int dtype, int64_t n, intptr_t t,
                      const random_params* params) {
    if (dtype < 0 || dtype > 7 || !table[dtype]) {
        snprintf(em_error_message, sizeof em_error_message, "not implemented for dtype code %d",
                 dtype);
        return 2;
    }
    table[dtype](n, (char*)t, params);
    return 0;
}

static random_params make_params(uint64_t seed, uint64_t offset) {
    random_params params = {0};
    params.key0 = (uint32_t)seed;
    params.key1 = (uint32_t)(seed >> 32);
    params.offset = offset;
    return params;
}

int em_uniform(int dtype, int64_t n, intptr_t t, double low, double high, uint64_t seed,
               uint64_t offset) {
    random_params params = make_params(seed, offset);
    params.a = low;
    params.b = high;
    return run_random(uniform_table, dtype, n, t, &params);
}

int em_normal(int dtype, int64_t n, intptr_t t, double mean, double std, uint64_t seed,
              uint64_t offset) {
    random_params params = make_params(seed, offset);
    params.a = mean;
    params.b = std;
    return run_random(normal_table, dtype, n, t, &params);
}

int em_random(int dtype, int64_t n, intptr_t t, int64_t low, uint64_t span, uint64_t seed,
              uint64_t offset) {
    random_params params = make_params(seed, offset);
    params.low = low;
    params.span = span;
    return run_random(random_table, dtype, n, t, &params);
}

/* Stable LSD radix sort of (key, index) pairs, 8 bits per pass; a pass whose digit is the
 * same for every key is skipped. Returns the array that holds the sorted indices (the
 * passes alternate between idx and idx_tmp). */
static const int64_t* radix_argsort(int64_t n, uint64_t* key, int64_t* idx, uint64_t* key_tmp,
                                    int64_t* idx_tmp) {
    for (int shift = 0; shift < 64; shift += 8) {
        int64_t count[257] = {0};
        for (int64_t i = 0; i < n; i++) count[((key[i] >> shift) & 0xff) + 1]++;
        if (count[((key[0] >> shift) & 0xff) + 1] == n) continue;
        for (int d = 0; d < 256; d++) count[d + 1] += count[d];
        for (int64_t i = 0; i < n; i++) {
            int64_t dst = count[(key[i] >> shift) & 0xff]++;
            key_tmp[dst] = key[i];
            idx_tmp[dst] = idx[i];
        }
        uint64_t* k = key;
        key = key_tmp;
        key_tmp = k;
        int64_t* x = idx;
        idx = idx_tmp;
        idx_tmp = x;
    }
    return idx;
}

int em_randperm(int64_t n, intptr_t out, int64_t stride, uint64_t seed, uint64_t offset) {
    if (n <= 0) return 0;
    uint64_t* keys = malloc(sizeof(uint64_t) * (size_t)n * 2);
    int64_t* idx = malloc(sizeof(int64_t) * (size_t)n * 2);
    if (!keys || !idx) {
        free(keys);
        free(idx);
        snprintf(em_error_message, sizeof em_error_message, "out of memory for %lld keys",
                 (long long)n);
        return 2;
    }
    random_params params = make_params(seed, offset);
#pragma omp parallel for if (n >= EM_PARALLEL_GRAIN) schedule(static) num_threads(em_threads())
    for (int64_t i = 0; i < n; i++) {
        uint32_t x[4];
        draw(&params, i, x);
        keys[i] = ((uint64_t)x[0] << 32) | x[1];
        idx[i] = i;
    }
    const int64_t* sorted = radix_argsort(n, keys, idx, keys + n, idx + n);
    int64_t* o = (int64_t*)out;
    for (int64_t i = 0; i < n; i++) o[i * stride] = sorted[i];
    free(keys);
    free(idx);
    return 0;
}
