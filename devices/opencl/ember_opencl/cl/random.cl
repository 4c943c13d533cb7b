/* Random kernels of the OpenCL device: a work-item per element around the Philox4x32-10
 * streams that em_random.h (ember.plugins.kernels) specifies and computes, which the host
 * prepends, after FP_CONTRACT OFF; and randperm_'s bitonic sort of the stream's keys.
 *
 * Specialised by the host with:
 *   EM_T        storage type of t (half for float16, accessed with vload_half/vstore_half)
 *   EM_DTYPE    dtype code (0 bool, 1 uint8, 2 int8, 3 int32, 4 int64, 5 float16,
 *               6 float32, 7 float64, 8 bfloat16)
 * plus the geometry declaration (EmGeometry, em_offset) prepended by the host.
 */
#if EM_DTYPE == 5
#define EM_STORE(p, i, v) vstore_half((v), (i), (p))
#elif EM_DTYPE == 8
/* bfloat16 (ushort): the float value rounded to nearest even, NaN quiet */
static inline ushort em_bf16_round(float v) {
    const uint u = as_uint(v);
    return isnan(v) ? (ushort)0x7FC0 : (ushort)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
#define EM_STORE(p, i, v) ((p)[i] = em_bf16_round(v))
#else
#define EM_STORE(p, i, v) ((p)[i] = (v))
#endif

/* Element i of t (looping past the grid) draws counter offset + i; the kernel's trailing
 * parameters (...) are the distribution's, VALUE its value from the words x. */
#define EM_RANDOM_KERNEL(NAME, VALUE, ...)                                                  \
    __kernel void NAME(__global EM_T* t, long t_off, EmGeometry g, long n, uint k0, uint k1, \
                       ulong offset, __VA_ARGS__) {                                         \
        for (long i = get_global_id(0); i < n; i += get_global_size(0)) {                  \
            em_philox4 x = em_philox_at(offset + (ulong)i, k0, k1);                         \
            EM_STORE(t, t_off + em_offset(g, 0, i), VALUE);                                 \
        }                                                                                   \
    }

#if EM_DTYPE == 5
EM_RANDOM_KERNEL(em_uniform, em_uniform_f16(x, a, b), float a, float b)
EM_RANDOM_KERNEL(em_normal, em_normal_f32(x, a, b), float a, float b)
#elif EM_DTYPE == 6
EM_RANDOM_KERNEL(em_uniform, em_uniform_f32(x, a, b), float a, float b)
EM_RANDOM_KERNEL(em_normal, em_normal_f32(x, a, b), float a, float b)
#elif EM_DTYPE == 7
EM_RANDOM_KERNEL(em_uniform, em_uniform_f64(x, a, b), double a, double b)
EM_RANDOM_KERNEL(em_normal, em_normal_f64(x, a, b), double a, double b)
#elif EM_DTYPE == 8
EM_RANDOM_KERNEL(em_uniform, em_uniform_bf16(x, a, b), float a, float b)
EM_RANDOM_KERNEL(em_normal, em_normal_f32(x, a, b), float a, float b)
#endif

/* random_ stores with copy_'s conversion: integers wrap, floats round to nearest, bool is
 * r != 0. */
#if EM_DTYPE == 0
#define EM_CONVERT(r) ((uchar)((r) != 0))
#elif EM_DTYPE == 1
#define EM_CONVERT(r) ((uchar)(ulong)(r))
#elif EM_DTYPE == 2
#define EM_CONVERT(r) ((char)(uchar)(ulong)(r))
#elif EM_DTYPE == 3
#define EM_CONVERT(r) ((int)(uint)(ulong)(r))
#elif EM_DTYPE == 4
#define EM_CONVERT(r) (r)
#elif EM_DTYPE == 7
#define EM_CONVERT(r) convert_double_rte(r)
#else
/* float16 too: int64 -> float is exact below 2^24 and every larger value overflows half
 * to infinity either way, so rounding through float equals the CPU's direct rounding. */
#define EM_CONVERT(r) convert_float_rte(r)
#endif

EM_RANDOM_KERNEL(em_random, EM_CONVERT(em_random_int(x, low, span)), long low, ulong span)

/* ---- randperm_: the stable argsort of n Philox keys -----------------------------------
 * The keys are padded to a power of two p with (ULONG_MAX, i >= n), and sorted by the pair
 * (key, index): the indices are distinct, so this order is exactly the stable argsort the
 * CPU computes, and the padding sorts last. The sort is bitonic: each compare-exchange
 * step is data-independent, so it runs in parallel with no atomics. */

__kernel void em_randperm_keys(__global ulong* key, __global long* idx, long n, long p, uint k0,
                               uint k1, ulong offset) {
    for (long i = get_global_id(0); i < p; i += get_global_size(0)) {
        key[i] = i < n ? em_randperm_key(em_philox_at(offset + (ulong)i, k0, k1)) : ULONG_MAX;
        idx[i] = i;
    }
}

/* One compare-exchange of step (k, j) for pair number t. */
inline void em_bitonic_pair(__global ulong* key, __global long* idx, long t, long k, long j) {
    long lo = ((t & ~(j - 1)) << 1) | (t & (j - 1));
    long hi = lo | j;
    ulong ka = key[lo], kb = key[hi];
    long ia = idx[lo], ib = idx[hi];
    int greater = ka > kb || (ka == kb && ia > ib);
    if (greater == ((lo & k) == 0)) {
        key[lo] = kb;
        key[hi] = ka;
        idx[lo] = ib;
        idx[hi] = ia;
    }
}

/* A step whose partners may lie in different work groups: one launch per step. */
__kernel void em_bitonic_global(__global ulong* key, __global long* idx, long k, long j) {
    em_bitonic_pair(key, idx, get_global_id(0), k, j);
}

/* Every step k in [k_first, k_last] (doubling), j from min(k / 2, local size) down to 1:
 * the partners then lie in the work group's own segment of 2 * local size elements, so a
 * work-group barrier orders the steps. */
__kernel void em_bitonic_local(__global ulong* key, __global long* idx, long k_first,
                               long k_last) {
    long t = get_global_id(0);
    long width = get_local_size(0);
    for (long k = k_first; k <= k_last; k <<= 1) {
        for (long j = min(k >> 1, width); j > 0; j >>= 1) {
            em_bitonic_pair(key, idx, t, k, j);
            barrier(CLK_GLOBAL_MEM_FENCE);
        }
    }
}

__kernel void em_randperm_store(__global long* out, long out_off, long stride,
                                __global const long* idx, long n) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0))
        out[out_off + i * stride] = idx[i];
}
