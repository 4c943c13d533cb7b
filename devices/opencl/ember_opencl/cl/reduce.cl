/* Reductions of the OpenCL device: sum, prod, amax, amin, any, all.
 *
 * What each op computes (accumulator types, identities, combines, the blocked order of
 * float sums and the pairwise tree of columns) is the shared em_reduce.h; this file keeps
 * the launches. The host separates the kept dims (K) from the reduced dims (R), coalesces
 * each, and passes them in a RedGeometry (K first, then R; the innermost of each last). It
 * picks one of three launches:
 *   - reduce_rows: one work item per output, walking R a row (its innermost dim) at a
 *     time; contiguous rows are read 8 elements per load;
 *   - reduce_cols: when the innermost kept dim is contiguous in the input and the rows
 *     are not (a sum over dim 0), each work item reduces a tile of up to TILE
 *     side-by-side outputs, reading each reduced position's run of the tile with vector
 *     loads;
 *   - either of them split: when there are too few outputs to fill the device, each
 *     output's reduced positions are cut into `nsplit` chunks whose partial accumulators
 *     reduce_finish combines in order (a.sum() of a long tensor).
 * Work-group sizes are fixed per kernel (PoCL compiles a kernel again for every new one),
 * so every kernel takes its number of work items, `count`, and skips the rest.
 *
 * Specialised by the host's defines (see kernels_reduce.py):
 *   RED_OP, RED_FAMILY                  em_reduce.h's op and the input's family
 *   A_T, A_C, A_C8, A_LOAD(p, i), A_LOAD8(p, i)  input storage and compute types, loads
 *   O_T, O_STORE(p, i, v)               output storage type and store of an accumulator
 */

#define OP(a, b) EM_RED_COMBINE(RED_OP)(a, b)
#define PART_TAG EM_RED_PART(RED_OP, RED_FAMILY)
#define ACC_TAG EM_RED_ACC(RED_OP, RED_FAMILY)
#define PART_T EM_RED_TYPE(PART_TAG)
#define ACC_T EM_RED_TYPE(ACC_TAG)
#define PART_IDENT ((PART_T)EM_RED_IDENTITY(RED_OP, RED_FAMILY))
#define ACC_IDENT ((ACC_T)EM_RED_IDENTITY(RED_OP, RED_FAMILY))
#define TO_PART(x) ((PART_T)EM_RED_TERM(RED_OP, A_C, x))

/* OpenCL C's vector types of the tags */
#define CL_u64 ulong
#define CL_i64 long
#define CL_i32 int
#define CL_f32 float
#define CL_f64 double
#define CL_NAME(tag) EM_RED_CAT(CL_, tag)
#define VEC(tag, n) EM_RED_CAT(CL_NAME(tag), n)
#define PART2_T VEC(PART_TAG, 2)
#define PART4_T VEC(PART_TAG, 4)
#define PART8_T VEC(PART_TAG, 8)
#define ACC8_T VEC(ACC_TAG, 8)

/* PoCL 3.0 on a CPU without AVX-512 mishandles 512-bit vectors (double8, long8) at call
 * boundaries: passed to a builtin (vstore8, convert_int8, an identity convert_long8) they
 * crash its code generator or lose the program's kernels once cached, and vload8 returns
 * a wrong upper half. So the 8-lane helpers here are macros, 64-bit loads are two vload4
 * (kernels_reduce.py), and 8 lanes convert inline where the compiler is clang (PoCL's;
 * free between equal types), else as two halves of 4. OP and CONVERT8 may name an
 * operand twice: callers pass plain variables. */
#if defined(__clang__)
#define CONVERT8(tag, v) __builtin_convertvector((v), VEC(tag, 8))
#else
#define CONVERT8(tag, v)                                                                  \
    ((VEC(tag, 8))(EM_RED_CAT3(convert_, CL_NAME(tag), 4)((v).lo),                        \
                   EM_RED_CAT3(convert_, CL_NAME(tag), 4)((v).hi)))
#endif
#define TO_PART8(x) CONVERT8(PART_TAG, EM_RED_TERM(RED_OP, A_C, x))
#define FOLD8(v, out)                                                                     \
    {                                                                                     \
        const PART4_T h_ = OP((v).lo, (v).hi);                                            \
        const PART2_T q_ = OP(h_.lo, h_.hi);                                              \
        out = OP(q_.lo, q_.hi);                                                           \
    }
/* x: the 8 lanes of row[r] at column c as PART8_T */
#define ROW8(x, r, c)                                                                     \
    const A_C8 x##_in = A_LOAD8(row[r], c);                                               \
    const PART8_T x = TO_PART8(x##_in);

/* acc OP= p[0], p[s], ..., p[(n - 1) * s] */
inline ACC_T span(const __global A_T* p, long n, long s, ACC_T acc) {
    for (long i0 = 0; i0 < n; i0 += EM_SUM_BLOCK) {
        const long end = min(n, i0 + EM_SUM_BLOCK);
        long i = i0;
        PART_T block = PART_IDENT;
        if (s == 1) {
            /* four independent chains so that the adds overlap */
            PART8_T v0 = (PART8_T)(PART_IDENT), v1 = v0, v2 = v0, v3 = v0;
            for (; i + 32 <= end; i += 32) {
                const A_C8 y0 = A_LOAD8(p, i), y1 = A_LOAD8(p, i + 8);
                const A_C8 y2 = A_LOAD8(p, i + 16), y3 = A_LOAD8(p, i + 24);
                const PART8_T x0 = TO_PART8(y0), x1 = TO_PART8(y1), x2 = TO_PART8(y2);
                const PART8_T x3 = TO_PART8(y3);
                v0 = OP(v0, x0);
                v1 = OP(v1, x1);
                v2 = OP(v2, x2);
                v3 = OP(v3, x3);
            }
            v0 = OP(v0, v1);
            v2 = OP(v2, v3);
            v0 = OP(v0, v2);
            FOLD8(v0, block);
        }
        for (; i < end; i++) {
            const PART_T x = TO_PART(A_LOAD(p, i * s));
            block = OP(block, x);
        }
        const ACC_T b = (ACC_T)block;
        acc = OP(acc, b);
    }
    return acc;
}

/* acc OP= the flattened reduced positions [begin, end) of the input at `base` */
inline ACC_T reduce_range(const __global A_T* a, const RedGeometry* g, long base, long begin,
                          long end) {
    ACC_T acc = ACC_IDENT;
    if (begin >= end) return acc;
    const int last = (int)(g->nk + g->nr) - 1;
    const long rin = g->size[last], rs = g->sa[last];
    long row = begin / rin, c = begin - row * rin;
    for (long pos = begin; pos < end; row++) {
        const long len = min(rin - c, end - pos);
        const long off = red_unravel(g, (int)g->nk, last, row).x;
        acc = span(a + base + off + c * rs, len, rs, acc);
        pos += len;
        c = 0;
    }
    return acc;
}

__kernel void reduce_rows(__global O_T* out, long out_off, const __global A_T* a, long a_off,
                          RedGeometry g, long rtotal, long count) {
    const long o = get_global_id(0);
    if (o >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, o);
    const ACC_T acc = reduce_range(a, &g, a_off + k.x, 0, rtotal);
    O_STORE(out, out_off + k.y, acc);
}

/* work item o * nsplit + c: chunk c of output o */
__kernel void reduce_rows_split(__global ACC_T* part, const __global A_T* a, long a_off,
                                RedGeometry g, long rtotal, long nsplit, long count) {
    const long item = get_global_id(0), o = item / nsplit, c = item - o * nsplit;
    if (item >= count) return;
    const long2 k = red_unravel(&g, 0, (int)g.nk, o);
    part[item] = reduce_range(a, &g, a_off + k.x, rtotal * c / nsplit, rtotal * (c + 1) / nsplit);
}

__kernel void reduce_finish(__global O_T* out, long out_off, const __global ACC_T* part,
                            RedGeometry g, long nsplit, long count) {
    const long o = get_global_id(0);
    if (o >= count) return;
    ACC_T acc = part[o * nsplit];
    for (long c = 1; c < nsplit; c++) {
        const ACC_T x = part[o * nsplit + c];
        acc = OP(acc, x);
    }
    O_STORE(out, out_off + red_unravel(&g, 0, (int)g.nk, o).y, acc);
}

/* Columns: a tile of up to TILE side-by-side outputs along the innermost kept dim, which
 * is contiguous in the input, so that every reduced position is one contiguous run of
 * the tile's width: the loads stream. EM_TREE_ROWS positions are combined per pass in
 * PART as EM_TREE8 before one read-modify-write of the accumulators, like the CPU
 * device's column loop; the accumulators live in private memory, reused from the cache. */
#define TILE 256

/* work item (outer, tile, c): the outputs j0 .. j0 + TILE - 1 of the innermost kept dim
 * (size m) at position `outer` of the other kept dims, over chunk c of nsplit of the
 * reduced positions. With nsplit > 1 the partials go to part[(outer * m + j) * nsplit + c],
 * the layout reduce_finish reads. */
__kernel void reduce_cols(__global O_T* out, long out_off, __global ACC_T* part,
                          const __global A_T* a, long a_off, RedGeometry g, long rtotal,
                          long nsplit, long count) {
    if (get_global_id(0) >= count) return;
    const int inner = (int)g.nk - 1, end_dim = (int)(g.nk + g.nr);
    const long m = g.size[inner], tiles = (m + TILE - 1) / TILE;
    const long item = get_global_id(0) / nsplit, c = get_global_id(0) - item * nsplit;
    const long outer = item / tiles, j0 = (item - outer * tiles) * TILE;
    const long2 k = red_unravel(&g, 0, inner, outer);
    const __global A_T* base = a + a_off + k.x + j0;
    const int width = (int)min((long)TILE, m - j0), full = width / 8;
    ACC8_T acc[TILE / 8];
    ACC_T rest[8];
    for (int v = 0; v < full; v++) acc[v] = (ACC8_T)(ACC_IDENT);
    for (int j = 8 * full; j < width; j++) rest[j - 8 * full] = ACC_IDENT;
    const __global A_T* row[EM_TREE_ROWS];
    long pos = rtotal * c / nsplit;
    const long end = rtotal * (c + 1) / nsplit;
    for (; pos < end; pos += EM_TREE_ROWS) {
        const int count = (int)min((long)EM_TREE_ROWS, end - pos);
        for (int r = 0; r < count; r++) {
            row[r] = base + red_unravel(&g, (int)g.nk, end_dim, pos + r).x;
        }
        if (count == EM_TREE_ROWS) {
            for (int v = 0; v < full; v++) {
                ROW8(x0, 0, 8 * v) ROW8(x1, 1, 8 * v) ROW8(x2, 2, 8 * v) ROW8(x3, 3, 8 * v)
                ROW8(x4, 4, 8 * v) ROW8(x5, 5, 8 * v) ROW8(x6, 6, 8 * v) ROW8(x7, 7, 8 * v)
                PART8_T x;
                EM_TREE8(PART8_T, OP, x, x0, x1, x2, x3, x4, x5, x6, x7)
                const ACC8_T y = CONVERT8(ACC_TAG, x);
                acc[v] = OP(acc[v], y);
            }
            for (int j = 8 * full; j < width; j++) {
                const PART_T x0 = TO_PART(A_LOAD(row[0], j)), x1 = TO_PART(A_LOAD(row[1], j));
                const PART_T x2 = TO_PART(A_LOAD(row[2], j)), x3 = TO_PART(A_LOAD(row[3], j));
                const PART_T x4 = TO_PART(A_LOAD(row[4], j)), x5 = TO_PART(A_LOAD(row[5], j));
                const PART_T x6 = TO_PART(A_LOAD(row[6], j)), x7 = TO_PART(A_LOAD(row[7], j));
                PART_T x;
                EM_TREE8(PART_T, OP, x, x0, x1, x2, x3, x4, x5, x6, x7)
                const ACC_T y = (ACC_T)x;
                rest[j - 8 * full] = OP(rest[j - 8 * full], y);
            }
        } else {
            for (int r = 0; r < count; r++) {
                for (int v = 0; v < full; v++) {
                    ROW8(x, r, 8 * v)
                    const ACC8_T y = CONVERT8(ACC_TAG, x);
                    acc[v] = OP(acc[v], y);
                }
                for (int j = 8 * full; j < width; j++) {
                    const ACC_T y = (ACC_T)TO_PART(A_LOAD(row[r], j));
                    rest[j - 8 * full] = OP(rest[j - 8 * full], y);
                }
            }
        }
    }
    ACC_T lanes[8];
    for (int v = 0; v <= full; v++) {
        /* lanes by component: no 512-bit vector reaches a builtin such as vstore8 */
        const int n = v < full ? 8 : width - 8 * full;
        if (v < full) {
            const ACC8_T x = acc[v];
            lanes[0] = x.s0, lanes[1] = x.s1, lanes[2] = x.s2, lanes[3] = x.s3;
            lanes[4] = x.s4, lanes[5] = x.s5, lanes[6] = x.s6, lanes[7] = x.s7;
        } else {
            for (int j = 0; j < n; j++) lanes[j] = rest[j];
        }
        for (int j = 0; j < n; j++) {
            const long column = j0 + 8 * v + j;
            if (nsplit == 1) {
                O_STORE(out, out_off + k.y + column * g.so[inner], lanes[j]);
            } else {
                part[(outer * m + column) * nsplit + c] = lanes[j];
            }
        }
    }
}
