/* Random kernels of the cpu device: an OpenMP loop per (distribution, dtype) around the
 * Philox4x32-10 streams that em_random.h (ember.plugins.kernels) specifies and computes,
 * and randperm_'s stable radix argsort of the stream's keys.
 */
#include <stdio.h>
#include <stdlib.h>

#include "em_random.h"
#include "ember_cpu.h"

/* Philox on any counter, for the known-answer tests. */
void em_philox4x32_10(const uint32_t* counter, const uint32_t* key, uint32_t* out) {
    em_philox4 c = {counter[0], counter[1], counter[2], counter[3]};
    c = em_philox(c, key[0], key[1]);
    out[0] = c.x0;
    out[1] = c.x1;
    out[2] = c.x2;
    out[3] = c.x3;
}

typedef struct {
    uint32_t key0, key1;
    uint64_t offset;
    double a, b;   /* uniform: low, high; normal: mean, std */
    int64_t low;   /* random_ */
    uint64_t span; /* random_: high - low mod 2^64 */
} random_params;

/* The four words for logical element `index`. */
static inline em_philox4 draw(const random_params* r, int64_t index) {
    return em_philox_at(r->offset + (uint64_t)index, r->key0, r->key1);
}

/* One loop per (distribution, dtype) over a contiguous t (the Python side draws into a
 * contiguous buffer for other layouts): VALUE computes `v` from the words x. */
typedef void (*random_fn)(int64_t n, char* out, const random_params* r);

#define EM_RANDOM_LOOP(NAME, T, VALUE)                                                 \
    static void NAME(int64_t n, char* out, const random_params* r) {                   \
        _Pragma("omp parallel for num_threads(em_threads()) if (n >= EM_PARALLEL_GRAIN)") \
        for (int64_t i = 0; i < n; i++) {                                              \
            em_philox4 x = draw(r, i);                                                 \
            ((T*)out)[i] = (T)(VALUE);                                                 \
        }                                                                              \
    }

/* bfloat16: the float value, rounded to nearest even. */
#define EM_RANDOM_LOOP_BF16(NAME, VALUE)                                               \
    static void NAME(int64_t n, char* out, const random_params* r) {                   \
        _Pragma("omp parallel for num_threads(em_threads()) if (n >= EM_PARALLEL_GRAIN)") \
        for (int64_t i = 0; i < n; i++) {                                              \
            em_philox4 x = draw(r, i);                                                 \
            ((em_bf16*)out)[i] = em_f_to_bf16((float)(VALUE));                         \
        }                                                                              \
    }

EM_RANDOM_LOOP_BF16(uniform_bf16, em_uniform_bf16(x, (float)r->a, (float)r->b))
EM_RANDOM_LOOP_BF16(normal_bf16, em_normal_f32(x, (float)r->a, (float)r->b))
EM_RANDOM_LOOP(uniform_f16, em_half, em_uniform_f16(x, (float)r->a, (float)r->b))
EM_RANDOM_LOOP(uniform_f32, float, em_uniform_f32(x, (float)r->a, (float)r->b))
EM_RANDOM_LOOP(uniform_f64, double, em_uniform_f64(x, r->a, r->b))
EM_RANDOM_LOOP(normal_f16, em_half, em_normal_f32(x, (float)r->a, (float)r->b))
EM_RANDOM_LOOP(normal_f32, float, em_normal_f32(x, (float)r->a, (float)r->b))
EM_RANDOM_LOOP(normal_f64, double, em_normal_f64(x, r->a, r->b))

#define EM_RANDOM_INT em_random_int(x, r->low, r->span)
EM_RANDOM_LOOP(random_b, uint8_t, EM_RANDOM_INT != 0)
EM_RANDOM_LOOP(random_u8, uint8_t, EM_RANDOM_INT)
EM_RANDOM_LOOP(random_i8, int8_t, EM_RANDOM_INT)
EM_RANDOM_LOOP(random_i32, int32_t, EM_RANDOM_INT)
EM_RANDOM_LOOP(random_i64, int64_t, EM_RANDOM_INT)
EM_RANDOM_LOOP(random_f16, em_half, EM_RANDOM_INT)
EM_RANDOM_LOOP(random_f32, float, EM_RANDOM_INT)
EM_RANDOM_LOOP(random_f64, double, EM_RANDOM_INT)
EM_RANDOM_LOOP_BF16(random_bf16, EM_RANDOM_INT)

static const random_fn uniform_table[EM_DTYPE_COUNT] = {[5] = uniform_f16, uniform_f32,
                                                        uniform_f64, uniform_bf16};
static const random_fn normal_table[EM_DTYPE_COUNT] = {[5] = normal_f16, normal_f32, normal_f64,
                                                       normal_bf16};
static const random_fn random_table[EM_DTYPE_COUNT] = {
    random_b,   random_u8,  random_i8,  random_i32,  random_i64,
    random_f16, random_f32, random_f64, random_bf16};

static int run_random(const random_fn* table, int dtype, int64_t n, intptr_t t,
                      const random_params* params) {
    if (dtype < 0 || dtype >= EM_DTYPE_COUNT || !table[dtype]) {
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
        keys[i] = em_randperm_key(draw(&params, i));
        idx[i] = i;
    }
    const int64_t* sorted = radix_argsort(n, keys, idx, keys + n, idx + n);
    int64_t* o = (int64_t*)out;
    for (int64_t i = 0; i < n; i++) o[i * stride] = sorted[i];
    free(keys);
    free(idx);
    return 0;
}
