/* Random kernels: Philox4x32-10, the stream specified in devices/cpu/ember_cpu/csrc/random.c.
 *
 * Element i (t's row-major logical index) draws the four words of counter
 * (lo32(offset + i), hi32(offset + i), 0, 0) under key (lo32(seed), hi32(seed)), so the CPU
 * and this device produce the same numbers. The CPU build contracts `lo + u * (hi - lo)`
 * and `mean + std * z` into fused multiply-adds; fma() here rounds the same way, while
 * FP_CONTRACT is off so that nothing else gets fused behind our back.
 *
 * Specialised by the host with:
 *   EM_T        storage type of t (half for float16, accessed with vload_half/vstore_half)
 *   EM_DTYPE    dtype code (0 bool, 1 uint8, 2 int8, 3 int32, 4 int64, 5 float16,
 *               6 float32, 7 float64)
 * plus the geometry declaration (EmGeometry, em_offset) prepended by the host.
 */
#pragma OPENCL FP_CONTRACT OFF
#if EM_DTYPE == 7
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define EM_PHILOX_M0 0xD2511F53u
#define EM_PHILOX_M1 0xCD9E8D57u
#define EM_PHILOX_W0 0x9E3779B9u
#define EM_PHILOX_W1 0xBB67AE85u

/* Random123's Philox4x32-10: a round with the key, then 9 times bump the key and round.
 * Round r's key is the seed key plus r times the bumps (mod 2^32), which lets the compiler
 * unroll the rounds; 64-bit products give the high and low halves at once. */
inline uint4 em_philox(ulong counter, uint k0, uint k1) {
    uint4 c = (uint4)((uint)counter, (uint)(counter >> 32), 0u, 0u);
#pragma unroll
    for (uint round = 0; round < 10; round++) {
        uint r0 = k0 + round * EM_PHILOX_W0, r1 = k1 + round * EM_PHILOX_W1;
        ulong p0 = (ulong)EM_PHILOX_M0 * c.x, p1 = (ulong)EM_PHILOX_M1 * c.z;
        c = (uint4)((uint)(p1 >> 32) ^ c.y ^ r0, (uint)p1, (uint)(p0 >> 32) ^ c.w ^ r1, (uint)p0);
    }
    return c;
}

#define EM_TWO_POW_M11 4.8828125e-04f
#define EM_TWO_POW_M24 5.9604644775390625e-08f
#define EM_TWO_POW_M53 1.1102230246251565e-16
#define EM_TWO_PI_F 6.28318530717958647692f
#define EM_TWO_PI 6.28318530717958647692

inline ulong em_bits64(uint hi, uint lo) { return ((ulong)hi << 32) | lo; }

#if EM_DTYPE == 5
#define EM_STORE(p, i, v) vstore_half((v), (i), (p))
#else
#define EM_STORE(p, i, v) ((p)[i] = (v))
#endif

#if EM_DTYPE == 5 || EM_DTYPE == 6
/* a, b: low and high as float32 (the CPU rounds them to float first). */
inline float em_uniform_value(uint4 x, float a, float b) {
#if EM_DTYPE == 5
    float u = (float)(x.x >> 21) * EM_TWO_POW_M11;
#else
    float u = (float)(x.x >> 8) * EM_TWO_POW_M24;
#endif
    return fma(u, b - a, a);
}

inline float em_normal_value(uint4 x, float mean, float std) {
    float u1 = (float)((x.x >> 8) + 1u) * EM_TWO_POW_M24;
    float u2 = (float)(x.y >> 8) * EM_TWO_POW_M24;
    float z = sqrt(-2.0f * log(u1)) * cos(EM_TWO_PI_F * u2);
    return fma(std, z, mean);
}
#define EM_SCALAR float
#elif EM_DTYPE == 7
inline double em_uniform_value(uint4 x, double a, double b) {
    double u = (double)(em_bits64(x.x, x.y) >> 11) * EM_TWO_POW_M53;
    return fma(u, b - a, a);
}

inline double em_normal_value(uint4 x, double mean, double std) {
    double u1 = (double)((em_bits64(x.x, x.y) >> 11) + 1) * EM_TWO_POW_M53;
    double u2 = (double)(em_bits64(x.z, x.w) >> 11) * EM_TWO_POW_M53;
    double z = sqrt(-2.0 * log(u1)) * cos(EM_TWO_PI * u2);
    return fma(std, z, mean);
}
#define EM_SCALAR double
#endif

#ifdef EM_SCALAR
__kernel void em_uniform(__global EM_T* t, long t_off, EmGeometry g, long n, uint k0, uint k1,
                         ulong offset, EM_SCALAR a, EM_SCALAR b) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
        uint4 x = em_philox(offset + (ulong)i, k0, k1);
        EM_STORE(t, t_off + em_offset(g, 0, i), em_uniform_value(x, a, b));
    }
}

__kernel void em_normal(__global EM_T* t, long t_off, EmGeometry g, long n, uint k0, uint k1,
                        ulong offset, EM_SCALAR mean, EM_SCALAR std) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
        uint4 x = em_philox(offset + (ulong)i, k0, k1);
        EM_STORE(t, t_off + em_offset(g, 0, i), em_normal_value(x, mean, std));
    }
}
#endif

/* random_: ((x0 << 32 | x1) mod span) + low in uint64 (span 0 means 2^64), stored with
 * copy_'s conversion: integers wrap, floats round to nearest, bool is r != 0. */
inline long em_random_int(uint4 x, long low, ulong span) {
    ulong k = em_bits64(x.x, x.y);
    return (long)((span ? k % span : k) + (ulong)low);
}

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

__kernel void em_random(__global EM_T* t, long t_off, EmGeometry g, long n, uint k0, uint k1,
                        ulong offset, long low, ulong span) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
        uint4 x = em_philox(offset + (ulong)i, k0, k1);
        EM_STORE(t, t_off + em_offset(g, 0, i), EM_CONVERT(em_random_int(x, low, span)));
    }
}

/* ---- randperm_: the stable argsort of n Philox keys -----------------------------------
 * The keys are padded to a power of two p with (ULONG_MAX, i >= n), and sorted by the pair
 * (key, index): the indices are distinct, so this order is exactly the stable argsort the
 * CPU computes, and the padding sorts last. The sort is bitonic: each compare-exchange
 * step is data-independent, so it runs in parallel with no atomics. */

__kernel void em_randperm_keys(__global ulong* key, __global long* idx, long n, long p, uint k0,
                               uint k1, ulong offset) {
    for (long i = get_global_id(0); i < p; i += get_global_size(0)) {
        if (i < n) {
            uint4 x = em_philox(offset + (ulong)i, k0, k1);
            key[i] = em_bits64(x.x, x.y);
        } else {
            key[i] = ULONG_MAX;
        }
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
