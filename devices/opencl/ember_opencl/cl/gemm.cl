/* Batched matrix product c[z] = a[z] @ b[z] with arbitrary (element) strides on a and b
 * and a contiguous c.
 *
 * A work group computes one TM x TN tile of c. For each slice of KC columns of a (rows of
 * b) it stages the a block (k-major, TM contiguous) and the b block (k-major, TN
 * contiguous, as RN-wide vectors) in local memory, converting to the compute type and
 * zero-padding past the matrix edges; so any layout of a and b, row- or column-major or
 * strided, is read in place. Each work item then accumulates RM x RN register blocks: per
 * k, NV vector loads of b times RM broadcasts of a.
 *
 * The shape of the work is set by the host per device: on CPU devices one work item per
 * group walks the whole tile (barriers vanish and the accumulators stay in registers over
 * a long k loop); on GPUs WX x WY items share it, one register block each. Loops in the
 * hot path use operators only: the PoCL build used here calls vload/fma out of line.
 *
 * Compute types: float for float16 and float32 (float16 is read and rounded once through
 * vload_half/vstore_half), double, and for integers unsigned arithmetic of at least
 * 32 bits (ulong for int64): products and sums wrap exactly as two's-complement int64
 * accumulation truncated to the output width would.
 */

#ifndef TM
#define TM 64
#endif
#ifndef TN
#define TN 64
#endif
#ifndef KC
#define KC 128
#endif
#ifndef RM
#define RM 4
#endif
#ifndef NV
#define NV 1
#endif
#ifndef WX
#define WX 1
#endif
#ifndef WY
#define WY 1
#endif

#if defined(EM_FLOAT16)
#define ST half
#define CT float
#define LOAD(p, i) vload_half((size_t)(i), (p))
#define STORE(p, i, v) vstore_half_rte((v), (size_t)(i), (p))
#elif defined(EM_BFLOAT16)
/* bfloat16: the top half of a float; products in float, rounded once to nearest even */
#define ST ushort
#define CT float
#define LOAD(p, i) as_float((uint)(p)[i] << 16)
static inline ushort em_bf16_round(float v) {
    const uint u = as_uint(v);
    return isnan(v) ? (ushort)0x7FC0 : (ushort)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
#define STORE(p, i, v) ((p)[i] = em_bf16_round(v))
#elif defined(EM_FLOAT32)
#define ST float
#define CT float
#elif defined(EM_FLOAT64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define ST double
#define CT double
#elif defined(EM_INT64)
#define ST long
#define CT ulong
#elif defined(EM_INT32)
#define ST int
#define CT uint
#elif defined(EM_INT8)
#define ST char
#define CT uint
#elif defined(EM_UINT8)
#define ST uchar
#define CT uint
#endif

#ifndef LOAD
#define LOAD(p, i) ((CT)(p)[i])
#define STORE(p, i, v) ((p)[i] = (ST)(v))
#endif

#ifndef VW
#define VW 8
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define CV CAT(CT, VW)

#define RN (VW * NV)         /* columns of a register block */
#define PM (TM / RM / WY)    /* register blocks per work item, down */
#define PN (TN / RN / WX)    /* and across */
#define NT (WX * WY)

typedef union {
    CV v;
    CT s[VW];
} lanes_t;

/* The staging loops below visit (kk, i) pairs: nested when one work item does them all,
 * else spread over the group with compile-time divisors. k_fast puts k innermost (the
 * operand's unit-stride direction); it is an argument, not a build option, to keep the
 * number of programs (and of compilations on a cold cache) down. */
#if NT == 1
#define FOR_PAIRS(k_fast, kk, i, kc, TI)                              \
    for (int o_ = 0; o_ < (k_fast ? TI : kc); o_++)                   \
        for (int n_ = 0; n_ < (k_fast ? kc : TI); n_++)               \
            for (int kk = k_fast ? n_ : o_, i = k_fast ? o_ : n_, once_ = 1; once_; once_ = 0)
#else
#define FOR_PAIRS(k_fast, kk, i, kc, TI)                              \
    for (int e_ = lid; e_ < KC * TI; e_ += NT)                        \
        for (int kk = k_fast ? e_ % KC : e_ / TI, i = k_fast ? e_ / KC : e_ % TI, once_ = 1; \
             once_ && kk < kc; once_ = 0)
#endif

/* Stage rows [k0, k0 + kc) of the tile's a block as la[kk * TM + i] (zero past tm). */
static inline void stage_a(__local CT* la, const __global ST* a, long sar, long sac, long k0,
                           int kc, int tm, int lid, bool k_fast) {
    FOR_PAIRS(k_fast, kk, i, kc, TM) {
        la[kk * TM + i] = i < tm ? LOAD(a, i * sar + (k0 + kk) * sac) : (CT)0;
    }
}

/* Stage rows [k0, k0 + kc) of the tile's b block as lb[kk * TN + j] (zero past tn). */
static inline void stage_b(__local CT* lb, const __global ST* b, long sbr, long sbc, long k0,
                           int kc, int tn, int lid, bool k_fast) {
    FOR_PAIRS(k_fast, kk, j, kc, TN) {
        lb[kk * TN + j] = j < tn ? LOAD(b, (k0 + kk) * sbr + j * sbc) : (CT)0;
    }
}

/* Sizes, element offsets and strides, passed by value as one argument. */
typedef struct {
    long m, n, k;
    long c_off, a_off, b_off;
    long sab, sar, sac; /* a's batch, row and column strides */
    long sbb, sbr, sbc;
    long a_k_fast, b_k_fast; /* stage along k: a row-major, b column-major */
} GemmShape;

__kernel __attribute__((reqd_work_group_size(WX, WY, 1))) void gemm(
    __global ST* c, __global const ST* a, __global const ST* b, GemmShape g) {
    const long M = g.m, N = g.n, K = g.k, sar = g.sar, sac = g.sac, sbr = g.sbr, sbc = g.sbc;
    __local CT la[KC * TM];
    __local CV lb[KC * TN / VW];
    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * WX + lx;
    const long jb = get_group_id(0) * TN, ib = get_group_id(1) * TM, z = get_group_id(2);
    const int tm = M - ib < TM ? (int)(M - ib) : TM;
    const int tn = N - jb < TN ? (int)(N - jb) : TN;
    a += g.a_off + z * g.sab + ib * sar;
    b += g.b_off + z * g.sbb + jb * sbc;
    c += g.c_off + z * M * N;

    /* Register blocks wholly past the matrix edge are skipped: they would only multiply
     * padding. */
#define FOR_BLOCKS                                                  \
    for (int x = 0; x < PM && (x * WY + ly) * RM < tm; x++)         \
        for (int y = 0; y < PN && (y * WX + lx) * RN < tn; y++)
    CV acc[PM][PN][RM * NV];
    FOR_BLOCKS {
        for (int r = 0; r < RM * NV; r++) acc[x][y][r] = (CV)0;
    }

    for (long k0 = 0; k0 < K; k0 += KC) {
        const int kc = K - k0 < KC ? (int)(K - k0) : KC;
        barrier(CLK_LOCAL_MEM_FENCE);
        stage_a(la, a, sar, sac, k0, kc, tm, lid, g.a_k_fast != 0);
        stage_b((__local CT*)lb, b, sbr, sbc, k0, kc, tn, lid, g.b_k_fast != 0);
        barrier(CLK_LOCAL_MEM_FENCE);
        FOR_BLOCKS {
            const __local CT* ap = la + (x * WY + ly) * RM;
            const __local CV* bp = lb + (y * WX + lx) * NV;
            CV blk[RM * NV];
            for (int r = 0; r < RM * NV; r++) blk[r] = acc[x][y][r];
            for (int kk = 0; kk < kc; kk++) {
                const __local CV* bk = bp + kk * (TN / VW);
#pragma unroll
                for (int r = 0; r < RM; r++) {
                    CT av = ap[kk * TM + r];
#pragma unroll
                    for (int v = 0; v < NV; v++) blk[v * RM + r] += av * bk[v];
                }
            }
            for (int r = 0; r < RM * NV; r++) acc[x][y][r] = blk[r];
        }
    }

    FOR_BLOCKS {
        for (int r = 0; r < RM * NV; r++) {
            const int i = (x * WY + ly) * RM + r % RM;
            const int j = (y * WX + lx) * RN + (r / RM) * VW;
            if (i >= tm) continue;
            lanes_t out;
            out.v = acc[x][y][r];
            __global ST* row = c + (ib + i) * N + jb;
            for (int q = 0; q < VW && j + q < tn; q++) STORE(row, j + q, out.s[q]);
        }
    }
}
