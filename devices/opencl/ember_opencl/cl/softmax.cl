/* Softmax and log-softmax along one dim of a float16, float32 or float64 tensor: the fused
 * kernels of the composite ops of ember.nn.functional._activation.
 *
 * The host passes the other dims, coalesced, as the kept dims of a RedGeometry and the
 * softmax dim as its single reduced dim (size n, strides sa[nk] and so[nk]). A row takes
 * three passes: its maximum m, s = the sum of exp(x - m) in double, then the write; the
 * formulas (and what NaN and infinities give) are em_reduce.h's, shared with the CPU
 * device.
 *   - softmax_rows: one work item per row;
 *   - softmax_split + softmax_split_write: for few long rows, each row is cut into
 *     nsplit chunks; every chunk stores its own (m_c, s_c), then every chunk combines
 *     its row's pairs (M = max m_c, S = sum s_c exp(m_c - M)) and writes its elements.
 *
 * Defines: A_T, A_C, A_LOAD, A_STORE (the prelude of the dtype; A_C is float for
 * float16), LOG_OUT (0 or 1); for contiguous rows VW, A_V (VW lanes of A_C, 256 bits),
 * A_LOADV(p, i), A_STOREV(p, i, v) and C_STOREV(v, t) (into a private A_C[VW]).
 */

/* an element's output from d = x - m and the row's factor f */
#if LOG_OUT
#define OUT(d, f) EM_LOG_SOFTMAX_OUT(d, f)
#else
#define OUT(d, f) EM_SOFTMAX_OUT(exp(d), f)
#endif

inline A_C row_max(const __global A_T* p, long begin, long end, long s) {
    A_C m = -INFINITY;
    for (long i = begin; i < end; i++) {
        const A_C x = A_LOAD(p, i * s);
        m = EM_SOFTMAX_MAX(m, x);
    }
    return m;
}

/* exp(x - m) summed in double; x - m is NaN where m is (and where x is NaN or +inf) */
inline double row_sum_exp(const __global A_T* p, long begin, long end, long s, A_C m) {
    double total = 0.0;
    for (long i = begin; i < end; i++) total += exp(A_LOAD(p, i * s) - m);
    return total;
}

inline void row_write(const __global A_T* p, long si, __global A_T* q, long so, long begin,
                      long end, A_C m, double total) {
    const A_C f = (A_C)EM_SOFTMAX_FACTOR(LOG_OUT, total);
    for (long i = begin; i < end; i++) A_STORE(q, i * so, OUT(A_LOAD(p, i * si) - m, f));
}

/* The same three passes over a contiguous row, VW elements per vector (256 bits of the
 * compute type); sums of exp add lanes of the compute type over blocks of EM_SUM_BLOCK
 * elements, then the blocks in double, like the CPU device's contiguous rows. */

inline A_C lanes_max(const A_V v) {
    A_C t[VW];
    C_STOREV(v, t);
    A_C m = t[0];
    for (int l = 1; l < VW; l++) m = EM_SOFTMAX_MAX(m, t[l]);
    return m;
}

inline A_C lanes_sum(const A_V v) {
    A_C t[VW];
    C_STOREV(v, t);
    A_C total = t[0];
    for (int l = 1; l < VW; l++) total += t[l];
    return total;
}

inline A_C contiguous_max(const __global A_T* p, long n) {
    A_V mv = (A_V)(-INFINITY);
    long i = 0;
    for (; i + VW <= n; i += VW) {
        const A_V x = A_LOADV(p, i);
        mv = EM_SOFTMAX_MAX(mv, x);
    }
    A_C m = lanes_max(mv);
    for (; i < n; i++) {
        const A_C x = A_LOAD(p, i);
        m = EM_SOFTMAX_MAX(m, x);
    }
    return m;
}

inline double contiguous_sum_exp(const __global A_T* p, long n, A_C m) {
    double total = 0.0;
    for (long i0 = 0; i0 < n; i0 += EM_SUM_BLOCK) {
        const long end = min(n, i0 + EM_SUM_BLOCK);
        long i = i0;
        A_V sv = (A_V)(0);
        for (; i + VW <= end; i += VW) sv += exp(A_LOADV(p, i) - m);
        A_C block = lanes_sum(sv);
        for (; i < end; i++) block += exp(A_LOAD(p, i) - m);
        total += block;
    }
    return total;
}

inline void contiguous_write(const __global A_T* p, __global A_T* q, long n, A_C m,
                             double total) {
    long i = 0;
    const A_C f = (A_C)EM_SOFTMAX_FACTOR(LOG_OUT, total);
    for (; i + VW <= n; i += VW) A_STOREV(q, i, OUT(A_LOADV(p, i) - m, f));
    for (; i < n; i++) A_STORE(q, i, OUT(A_LOAD(p, i) - m, f));
}

__kernel void softmax_rows(__global A_T* out, long out_off, const __global A_T* a, long a_off,
                           RedGeometry g, long n, long count) {
    if (get_global_id(0) >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, get_global_id(0));
    const long si = g.sa[g.nk], so = g.so[g.nk];
    const __global A_T* p = a + a_off + k.x;
    __global A_T* q = out + out_off + k.y;
    if (si == 1 && so == 1) {
        const A_C m = contiguous_max(p, n);
        contiguous_write(p, q, n, m, contiguous_sum_exp(p, n, m));
        return;
    }
    const A_C m = row_max(p, 0, n, si);
    row_write(p, si, q, so, 0, n, m, row_sum_exp(p, 0, n, si, m));
}

/* work item o * nsplit + c: (m_c, s_c) of chunk c of row o into part[2 * item ..] */
__kernel void softmax_split(__global double* part, const __global A_T* a, long a_off,
                            RedGeometry g, long n, long nsplit, long count) {
    const long item = get_global_id(0), o = item / nsplit, c = item - o * nsplit;
    if (item >= count) return;
    const long si = g.sa[g.nk], begin = n * c / nsplit, end = n * (c + 1) / nsplit;
    const __global A_T* p = a + a_off + red_unravel(&g, 0, (int)g.nk, o).x;
    const A_C m = row_max(p, begin, end, si);
    part[2 * item] = m;
    /* a chunk of only -inf and NaN sums exp(x): 0, or NaN when it holds a NaN */
    part[2 * item + 1] = row_sum_exp(p, begin, end, si, m == -INFINITY ? 0 : m);
}

__kernel void softmax_split_write(__global A_T* out, long out_off, const __global double* part,
                                  const __global A_T* a, long a_off, RedGeometry g, long n,
                                  long nsplit, long count) {
    const long item = get_global_id(0), o = item / nsplit, c = item - o * nsplit;
    if (item >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, o);
    const __global double* row = part + 2 * o * nsplit;
    double m = -INFINITY, total = 0.0;
    for (long b = 0; b < nsplit; b++) {
        const double m_b = row[2 * b];
        m = EM_SOFTMAX_MAX(m, m_b);
    }
    /* m = -inf: the row holds only -inf and NaN, NaN throughout as in one pass; else a
     * chunk of only -inf adds s_b exp(-inf) = 0, and a NaN in s_b or m_b reaches total */
    for (long b = 0; b < nsplit; b++) total += row[2 * b + 1] * exp(row[2 * b] - m);
    if (m == -INFINITY) total = NAN;
    row_write(a + a_off + k.x, g.sa[g.nk], out + out_off + k.y, g.so[g.nk], n * c / nsplit,
              n * (c + 1) / nsplit, (A_C)m, total);
}
