/* Indexing kernels of the OpenCL device: gather (serves index_select too), take,
 * scatter_/scatter_add_, index_put_ and nonzero, as work-item loops around the element
 * functions of the shared em_index.h. The runtime range-checks every index before a
 * launch, so the kernels trust them.
 *
 * Specialised by the host with:
 *   EM_MOVE     the type that plain copies move (uchar/ushort/uint/ulong by item size)
 *   EM_T        the storage type for accumulation and nonzero (half for float16)
 *   EM_DTYPE    its dtype code (0 bool, 1 uint8, 2 int8, 3 int32, 4 int64, 5 float16,
 *               6 float32, 7 float64), -1 when only plain copies are built
 *   EM_ATOMIC   1: accumulate with atomics (many work items), 0: plain read-modify-write
 *               (the host then launches a single work item)
 * plus em_index.h (with the dialect) and the geometry declaration (EmGeometry, em_offset)
 * prepended by the host.
 *
 * Determinism: scatter_ and scatter_add_ give one work item per line along `dim`, which
 * walks that line in order; index_put_ without accumulate lets the highest index win. So
 * all of them reproduce the CPU's row-major "last write wins" and addition order exactly.
 * index_put_ with accumulate adds with atomics: the sums are right, their rounding order is
 * the device's.
 */
#pragma OPENCL FP_CONTRACT OFF
#if EM_ATOMIC && (EM_DTYPE == 4 || EM_DTYPE == 7)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

/* ---- gather, index_select, take -------------------------------------------------------
 * geometry operands: 0 out, 1 index, 2 source (its stride on `dim` zeroed: the index value
 * times `dstride` replaces it). */
__kernel void em_gather(__global EM_MOVE* out, long out_off, __global const long* index,
                        long index_off, __global const EM_MOVE* src, long src_off, long dstride,
                        EmGeometry g, long n) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
        long v = index[index_off + em_offset(g, 1, i)];
        out[out_off + em_offset(g, 0, i)] =
            src[em_index_along(src_off + em_offset(g, 2, i), v, dstride)];
    }
}

/* geometry operands: 0 out, 1 index; `a` is read at the row-major position index[p]. */
__kernel void em_take(__global EM_MOVE* out, long out_off, __global const long* index,
                      long index_off, __global const EM_MOVE* src, long src_off, EmGeometry g,
                      em_shape a, long n) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
        long v = index[index_off + em_offset(g, 1, i)];
        out[out_off + em_offset(g, 0, i)] = src[src_off + em_shape_offset(&a, v)];
    }
}

/* ---- accumulation: *p (+)= v ---------------------------------------------------------- */

#if EM_DTYPE == 5
#define EM_LOAD(p, i) vload_half((i), (p))
#define EM_STORE(p, i, v) vstore_half((v), (i), (p))
#define EM_VALUE float
#else
#define EM_LOAD(p, i) ((p)[i])
#define EM_STORE(p, i, v) ((p)[i] = (v))
#define EM_VALUE EM_T
#endif

#if EM_DTYPE >= 0
#if !EM_ATOMIC
inline void em_accumulate(__global EM_T* p, long i, EM_VALUE v) {
    EM_STORE(p, i, (EM_VALUE)EM_INDEX_ADD(EM_DTYPE, EM_LOAD(p, i), v));
}
#elif EM_DTYPE == 3
inline void em_accumulate(__global EM_T* p, long i, EM_VALUE v) { atomic_add(p + i, v); }
#elif EM_DTYPE == 4
inline void em_accumulate(__global EM_T* p, long i, EM_VALUE v) { atom_add(p + i, v); }
#elif EM_DTYPE == 6
inline void em_accumulate(__global EM_T* p, long i, EM_VALUE v) {
    volatile __global uint* w = (volatile __global uint*)(p + i);
    uint old = *w, seen;
    do {
        seen = old;
        old = atomic_cmpxchg(w, seen, as_uint(as_float(seen) + v));
    } while (old != seen);
}
#elif EM_DTYPE == 7
inline void em_accumulate(__global EM_T* p, long i, EM_VALUE v) {
    volatile __global ulong* w = (volatile __global ulong*)(p + i);
    ulong old = *w, seen;
    do {
        seen = old;
        old = atom_cmpxchg(w, seen, as_ulong(as_double(seen) + v));
    } while (old != seen);
}
#else
/* 1- and 2-byte elements: compare-and-swap the aligned 32-bit word that holds them (the
 * host guarantees that buffers are 4-byte aligned and sized, so the word is inside). */
inline uint em_subword_add(uint bits, EM_VALUE v) {
#if EM_DTYPE == 5
    ushort h = (ushort)bits;
    float sum = vload_half(0, (const half*)&h) + v;
    vstore_half(sum, 0, (half*)&h);
    return h;
#else
    return (uint)(uchar)EM_INDEX_ADD(EM_DTYPE, (EM_T)bits, v);
#endif
}

inline void em_accumulate(__global EM_T* p, long i, EM_VALUE v) {
    ulong byte = (ulong)i * sizeof(EM_T);
    volatile __global uint* w = (volatile __global uint*)p + (byte >> 2);
#ifdef __ENDIAN_LITTLE__
    uint shift = (uint)(byte & 3) * 8;
#else
    uint shift = (uint)(4 - sizeof(EM_T) - (byte & 3)) * 8;
#endif
    uint mask = (sizeof(EM_T) == 1 ? 0xffu : 0xffffu) << shift;
    uint old = *w, seen;
    do {
        seen = old;
        uint part = em_subword_add((seen & mask) >> shift, v) << shift;
        old = atomic_cmpxchg(w, seen, (seen & ~mask) | (part & mask));
    } while (old != seen);
}
#endif
#endif /* EM_DTYPE >= 0 */

/* ---- scatter_, scatter_add_ ------------------------------------------------------------
 * geometry: the lines (the index's shape without `dim`), operands 0 target (the origin of
 * the line), 1 index, 2 src; the line has `len` elements with strides index_step and
 * src_step, and element j goes to target + index[j] * dstride. A single work item runs
 * everything in order when the host finds the target overlapping itself. scatter_ moves
 * raw elements (EM_MOVE); scatter_add_ adds in the storage type. */
#ifdef EM_ACCUMULATE
#define EM_SCATTER_T EM_T
#else
#define EM_SCATTER_T EM_MOVE
#endif

__kernel void em_scatter(__global EM_SCATTER_T* target, long target_off,
                         __global const long* index, long index_off,
                         __global const EM_SCATTER_T* src, long src_off, long dstride, long len,
                         long index_step, long src_step, EmGeometry g, long lines) {
    for (long l = get_global_id(0); l < lines; l += get_global_size(0)) {
        long t = target_off + em_offset(g, 0, l);
        long x = index_off + em_offset(g, 1, l);
        long s = src_off + em_offset(g, 2, l);
        for (long j = 0; j < len; j++) {
            long to = em_index_along(t, index[x + j * index_step], dstride);
#ifdef EM_ACCUMULATE
            em_accumulate(target, to, EM_LOAD(src, s + j * src_step));
#else
            target[to] = src[s + j * src_step];
#endif
        }
    }
}

/* ---- index_put_: target.flatten()[index[i]] (+)= values[i] ------------------------------ */

#ifdef EM_ACCUMULATE
__kernel void em_put_add(__global EM_T* target, long target_off, em_shape f,
                         __global const long* index, long index_off, long index_step,
                         __global const EM_T* values, long values_off, long values_step,
                         long n) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
        long pos = target_off + em_shape_offset(&f, index[index_off + i * index_step]);
        em_accumulate(target, pos, EM_LOAD(values, values_off + i * values_step));
    }
}
#endif

/* With repeated positions the last write wins: `winner` (one int per target position,
 * preset to -1) first records the highest i per position, then only that i writes. The
 * serial variant (winner unused) writes in order. */
__kernel void em_put_claim(__global int* winner, __global const long* index, long index_off,
                           long index_step, long n) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_max(winner + index[index_off + i * index_step], (int)i);
}

__kernel void em_put(__global EM_MOVE* target, long target_off, em_shape f,
                     __global const long* index, long index_off, long index_step,
                     __global const EM_MOVE* values, long values_off, long values_step, long n,
                     __global const int* winner, int serial) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
        long v = index[index_off + i * index_step];
        if (serial || winner[v] == (int)i)
            target[target_off + em_shape_offset(&f, v)] = values[values_off + i * values_step];
    }
}

__kernel void em_fill_int(__global int* p, int value, long n) {
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) p[i] = value;
}

/* ---- nonzero ---------------------------------------------------------------------------
 * Three steps over `chunks` chunks of `chunk` consecutive row-major positions: count the
 * non-zeros of each chunk, turn the counts into exclusive offsets (and the total), then
 * write each non-zero's coordinates at its chunk's offset, in index order. */

#if EM_DTYPE == 5
#define EM_NONZERO(p, i) (vload_half((i), (p)) != 0.0f)
#else
#define EM_NONZERO(p, i) ((p)[i] != 0)
#endif

#if EM_DTYPE >= 0
EM_INDEX_NONZERO(elements, EM_T, EM_NONZERO)

__kernel void em_nonzero_count(__global const EM_T* a, long a_off, em_shape s, long numel,
                               long chunk, long chunks, __global long* counts) {
    for (long c = get_global_id(0); c < chunks; c += get_global_size(0)) {
        long begin = c * chunk, end = min(begin + chunk, numel);
        counts[c] = em_nonzero_count_elements(a + a_off, &s, begin, end);
    }
}

__kernel void em_nonzero_fill(__global const EM_T* a, long a_off, em_shape s, long numel,
                              long chunk, long chunks, __global const long* offsets,
                              __global long* out) {
    for (long c = get_global_id(0); c < chunks; c += get_global_size(0)) {
        long begin = c * chunk, end = min(begin + chunk, numel);
        long first = offsets[c], limit = offsets[c + 1] - first;
        em_nonzero_fill_elements(a + a_off, &s, begin, end, out + first * s.ndim, limit);
    }
}
#endif

/* counts[0..n) -> exclusive prefix sums, and counts[n] = the total. One work group: each
 * work item sums a slice, item 0 scans the slice sums, then each rewrites its slice. */
__kernel void em_exclusive_scan(__global long* counts, long n) {
    __local long sums[256]; /* the host launches at most 256 work items */
    long lid = get_local_id(0), width = get_local_size(0);
    long begin = n * lid / width, end = n * (lid + 1) / width, total = 0;
    for (long i = begin; i < end; i++) total += counts[i];
    sums[lid] = total;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        long running = 0;
        for (long k = 0; k < width; k++) {
            long s = sums[k];
            sums[k] = running;
            running += s;
        }
        counts[n] = running;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    long running = sums[lid];
    for (long i = begin; i < end; i++) {
        long c = counts[i];
        counts[i] = running;
        running += c;
    }
}
