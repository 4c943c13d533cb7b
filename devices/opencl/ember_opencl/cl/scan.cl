/* Walks along one dim of the OpenCL device: argmax, argmin and cumsum.
 *
 * The host passes the other dims, coalesced, as the kept dims of a RedGeometry and the
 * walked dim as its single reduced dim (size n, input stride sa[nk], output stride
 * so[nk]). One work item walks one line; when there are too few lines to fill the device
 * (argmax of a flattened tensor, cumsum of a vector), each line is cut into `nsplit`
 * chunks and a second kernel combines them in order:
 *   - argmax/argmin: each chunk finds its own first extreme; arg_finish re-reads the
 *     chunks' winners and keeps the first of the best by em_reduce.h's EM_ARG_TAKES;
 *   - cumsum: each chunk sums its elements, then rescans them starting from the sum of
 *     the chunks before it.
 * Every kernel takes its number of work items, `count` (fixed work-group sizes).
 *
 * Defines: A_T, A_C, A_LOAD (input, from the prelude); for argmax ARGEXTREME,
 * BETTER(x, best) (> or <), A_C8 and A_LOAD8(p, i) (8 lanes of A_C), IS_FLOAT, IS_NAN;
 * for cumsum O_T, O_STORE and CUMSUM, the output's family for em_reduce.h's
 * EM_CUMSUM_ACC.
 */

#ifdef ARGEXTREME

/* The first index of the extreme of p[begin * s], ..., p[(end - 1) * s], continuing the
 * search from (best, at) by EM_ARG_TAKES, stopping at the first NaN (IS_NAN is 0 for
 * integers): its index, else -1. */
inline long arg_scan(const __global A_T* p, long begin, long end, long s, A_C* best, long* at) {
    for (long i = begin; i < end; i++) {
        const A_C x = A_LOAD(p, i * s);
        if (BETTER(x, *best)) {
            *best = x;
            *at = i;
        } else if (IS_NAN(x)) {
            return i;
        }
    }
    return -1;
}

/* Contiguous lines are searched a block at a time: the block's extreme by 8-lane
 * compares and selects, then its first position only when it beats the best so far. A
 * float block whose lanes of x - x do not sum to 0 holds a NaN (or an infinity, which
 * costs only speed): it is scanned element by element. */
#define ARG_BLOCK 512
#define LANES8(v, t) /* by component: see the 512-bit note in reduce.cl */ \
    t[0] = (v).s0, t[1] = (v).s1, t[2] = (v).s2, t[3] = (v).s3;         \
    t[4] = (v).s4, t[5] = (v).s5, t[6] = (v).s6, t[7] = (v).s7

inline long arg_range(const __global A_T* p, long begin, long end, long s) {
    A_C best = A_LOAD(p, begin * s);
    long at = begin;
    if (IS_NAN(best)) return begin;
    long b0 = begin + 1;
    for (; s == 1 && b0 + ARG_BLOCK <= end; b0 += ARG_BLOCK) {
        A_C8 m = A_LOAD8(p, b0);
#if IS_FLOAT
        A_C8 z = m - m;
#endif
        for (long i = b0 + 8; i < b0 + ARG_BLOCK; i += 8) {
            const A_C8 x = A_LOAD8(p, i);
            m = BETTER(x, m) ? x : m;
#if IS_FLOAT
            z += x - x;
#endif
        }
#if IS_FLOAT
        A_C zt[8];
        LANES8(z, zt);
        const A_C zs = ((zt[0] + zt[1]) + (zt[2] + zt[3])) + ((zt[4] + zt[5]) + (zt[6] + zt[7]));
        if (zs != 0) {
            const long nan_at = arg_scan(p, b0, b0 + ARG_BLOCK, 1, &best, &at);
            if (nan_at >= 0) return nan_at;
            continue;
        }
#endif
        A_C t[8];
        LANES8(m, t);
        A_C bm = t[0];
        for (int l = 1; l < 8; l++) bm = BETTER(t[l], bm) ? t[l] : bm;
        if (BETTER(bm, best)) {
            long i = b0;
            while (A_LOAD(p, i) != bm) i++;
            best = bm;
            at = i;
        }
    }
    const long nan_at = arg_scan(p, b0, end, s, &best, &at);
    return nan_at >= 0 ? nan_at : at;
}

__kernel void arg_lines(__global long* out, long out_off, const __global A_T* a, long a_off,
                        RedGeometry g, long n, long count) {
    if (get_global_id(0) >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, get_global_id(0));
    out[out_off + k.y] = arg_range(a + a_off + k.x, 0, n, g.sa[g.nk]);
}

/* work item o * nsplit + c: chunk c of line o (nsplit <= n: no chunk is empty) */
__kernel void arg_lines_split(__global long* part, const __global A_T* a, long a_off,
                              RedGeometry g, long n, long nsplit, long count) {
    const long item = get_global_id(0), o = item / nsplit, c = item - o * nsplit;
    if (item >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, o);
    part[item] = arg_range(a + a_off + k.x, n * c / nsplit, n * (c + 1) / nsplit, g.sa[g.nk]);
}

/* n is unused: the signature is cumsum_chunks' (one host runner for both) */
__kernel void arg_finish(__global long* out, long out_off, const __global long* part,
                         const __global A_T* a, long a_off, RedGeometry g, long n, long nsplit,
                         long count) {
    const long o = get_global_id(0), s = g.sa[g.nk];
    if (o >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, o);
    const __global A_T* p = a + a_off + k.x;
    long at = part[o * nsplit];
    A_C best = A_LOAD(p, at * s);
    for (long c = 1; c < nsplit && !IS_NAN(best); c++) {
        const long i = part[o * nsplit + c];
        const A_C x = A_LOAD(p, i * s);
        if (EM_ARG_TAKES(BETTER(x, best), x, best)) {
            best = x;
            at = i;
        }
    }
    out[out_off + k.y] = at;
}

#endif /* ARGEXTREME */

#ifdef CUMSUM

#define ACC_T EM_RED_TYPE(EM_CUMSUM_ACC(CUMSUM))
#define TO_ACC(x) ((ACC_T)(x))

/* Writes the running sums of elements [begin, end) of a line, starting from acc. */
inline void scan_range(const __global A_T* p, long sa, __global O_T* q, long so, long begin,
                       long end, ACC_T acc) {
    for (long i = begin; i < end; i++) {
        acc += TO_ACC(A_LOAD(p, i * sa));
        O_STORE(q, i * so, acc);
    }
}

__kernel void cumsum_lines(__global O_T* out, long out_off, const __global A_T* a, long a_off,
                           RedGeometry g, long n, long count) {
    if (get_global_id(0) >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, get_global_id(0));
    scan_range(a + a_off + k.x, g.sa[g.nk], out + out_off + k.y, g.so[g.nk], 0, n, (ACC_T)0);
}

/* work item o * nsplit + c: the sum of chunk c of line o */
__kernel void cumsum_chunk_sums(__global ACC_T* part, const __global A_T* a, long a_off,
                                RedGeometry g, long n, long nsplit, long count) {
    const long item = get_global_id(0), o = item / nsplit, c = item - o * nsplit;
    if (item >= count) return;
    const long sa = g.sa[g.nk];
    const __global A_T* p = a + a_off + red_unravel(&g, 0, (int)g.nk, o).x;
    ACC_T acc = 0;
    for (long i = n * c / nsplit; i < n * (c + 1) / nsplit; i++) acc += TO_ACC(A_LOAD(p, i * sa));
    part[item] = acc;
}

/* work item o * nsplit + c: chunk c of line o, from the sum of the chunks before it */
__kernel void cumsum_chunks(__global O_T* out, long out_off, const __global ACC_T* part,
                            const __global A_T* a, long a_off, RedGeometry g, long n,
                            long nsplit, long count) {
    const long item = get_global_id(0), o = item / nsplit, c = item - o * nsplit;
    if (item >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, o);
    ACC_T acc = 0;
    for (long b = o * nsplit; b < item; b++) acc += part[b];
    scan_range(a + a_off + k.x, g.sa[g.nk], out + out_off + k.y, g.so[g.nk], n * c / nsplit,
               n * (c + 1) / nsplit, acc);
}

#endif /* CUMSUM */
