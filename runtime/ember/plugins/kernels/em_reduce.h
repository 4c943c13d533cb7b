/* Reductions and scans as every device computes them: sum, prod, amax, amin, any, all;
 * argmax, argmin; cumsum; softmax and log_softmax.
 *
 * A device keeps its traversal (loops, vector widths, how a long reduction is split over
 * threads or work items) and takes from here what fixes the results: the types terms and
 * accumulators combine in, identities, combines, the blocked and pairwise orders of sums,
 * argmax's tie and NaN rules, cumsum's accumulator and softmax's formulas.
 *
 * sum, prod, amax, amin, any, all. An input dtype falls in a family: INT (bool and the
 * integers), FLOAT (float16, float32) or DOUBLE (float64). Per op (a token: SUM, PROD,
 * AMAX, AMIN, ANY, ALL; OpenCL C defines `any` and `all` as macros) and family:
 *   EM_RED_PART(op, family)  the tag of the type a block's terms combine in
 *   EM_RED_ACC(op, family)   the tag of the accumulator blocks combine into (and partials)
 *   EM_RED_IDENTITY(op, family), EM_RED_TERM(op, T, x) (an element x of type T, or in
 *   OpenCL C a vector of T, as a term still to be converted to the part type) and
 *   EM_RED_COMBINE(op)(a, b)
 * Tags name types: u64, i64, i32, f32, f64; EM_RED_TYPE(tag) is the dialect's scalar type (a
 * device derives its vector types from the tag). Integer sums and products wrap in u64
 * (like PyTorch), extremes compare in i64; any and all combine truth values; amax and amin
 * let a NaN win. A device may hold a part or accumulator in a wider type of the same kind
 * where that is exact (float extremes in double, truth values in int64).
 *
 * Orders. Sums of FLOAT inputs add terms in lanes of the part type over blocks of
 * EM_SUM_BLOCK elements, then the blocks into the accumulator, which keeps long float32
 * sums within ~1e-7 relative at memory speed. Columns (reductions over a leading dim)
 * combine EM_TREE_ROWS reduced positions per pass as EM_TREE8's pairwise tree, then fold
 * that into the accumulator once.
 *
 * Combines and EM_TREE8 evaluate their operands more than once: pass plain variables.
 * They apply to scalars and, in OpenCL C, to vectors alike.
 */
#ifndef EM_REDUCE_H
#define EM_REDUCE_H

#include "em_dialect.h"

#define EM_RED_CAT_(a, b) a##b
#define EM_RED_CAT(a, b) EM_RED_CAT_(a, b)
#define EM_RED_CAT3_(a, b, c) a##b##c
#define EM_RED_CAT3(a, b, c) EM_RED_CAT3_(a, b, c)
#define EM_RED_CAT4_(a, b, c, d) a##b##c##d
#define EM_RED_CAT4(a, b, c, d) EM_RED_CAT4_(a, b, c, d)

#define EM_RED_TYPE(tag) EM_RED_CAT(EM_RED_TYPE_, tag)
#define EM_RED_TYPE_u64 em_u64
#define EM_RED_TYPE_i64 em_i64
#define EM_RED_TYPE_i32 em_i32
#define EM_RED_TYPE_f32 float
#define EM_RED_TYPE_f64 double

#define EM_SUM_BLOCK 4096
#define EM_TREE_ROWS 8

/* ---- sum, prod, amax, amin, any, all -------------------------------------------------- */

#define EM_RED_PART(op, family) EM_RED_PICK(EM_RED_PART_, op, family)
#define EM_RED_ACC(op, family) EM_RED_PICK(EM_RED_ACC_, op, family)
#define EM_RED_IDENTITY(op, family) EM_RED_PICK(EM_RED_IDENTITY_, op, family)
#define EM_RED_TERM(op, T, x) EM_RED_CAT(EM_RED_TERM_, op)(T, x)
#define EM_RED_COMBINE(op) EM_RED_CAT(EM_RED_COMBINE_, op)

/* op and family:    part  accumulator  identity */
#define EM_RED_SUM_INT    (u64, u64, 0)
#define EM_RED_SUM_FLOAT  (f32, f64, 0)
#define EM_RED_SUM_DOUBLE (f64, f64, 0)
#define EM_RED_PROD_INT    (u64, u64, 1)
#define EM_RED_PROD_FLOAT  (f64, f64, 1)
#define EM_RED_PROD_DOUBLE (f64, f64, 1)
#define EM_RED_AMAX_INT    (i64, i64, (-(em_i64)0x7fffffffffffffff - 1))
#define EM_RED_AMAX_FLOAT  (f32, f32, (-INFINITY))
#define EM_RED_AMAX_DOUBLE (f64, f64, (-INFINITY))
#define EM_RED_AMIN_INT    (i64, i64, ((em_i64)0x7fffffffffffffff))
#define EM_RED_AMIN_FLOAT  (f32, f32, INFINITY)
#define EM_RED_AMIN_DOUBLE (f64, f64, INFINITY)
#define EM_RED_ANY_INT    (i32, i32, 0)
#define EM_RED_ANY_FLOAT  (i32, i32, 0)
#define EM_RED_ANY_DOUBLE (i32, i32, 0)
#define EM_RED_ALL_INT    (i32, i32, 1)
#define EM_RED_ALL_FLOAT  (i32, i32, 1)
#define EM_RED_ALL_DOUBLE (i32, i32, 1)

#define EM_RED_PICK(field, op, family) EM_RED_APPLY(field, EM_RED_CAT4(EM_RED_, op, _, family))
#define EM_RED_APPLY(field, row) field row
#define EM_RED_PART_(part, acc, identity) part
#define EM_RED_ACC_(part, acc, identity) acc
#define EM_RED_IDENTITY_(part, acc, identity) identity

#define EM_RED_COMBINE_SUM(a, b) ((a) + (b))
#define EM_RED_COMBINE_PROD(a, b) ((a) * (b))
/* b wins when it is a NaN: a NaN on either side reaches the result (x != x is false for
 * integers) */
#define EM_RED_COMBINE_AMAX(a, b) ((b) != (b) ? (b) : (b) > (a) ? (b) : (a))
#define EM_RED_COMBINE_AMIN(a, b) ((b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define EM_RED_COMBINE_ANY(a, b) ((a) | (b))
#define EM_RED_COMBINE_ALL(a, b) ((a) & (b))

#define EM_RED_TERM_SUM(T, x) (x)
#define EM_RED_TERM_PROD(T, x) (x)
#define EM_RED_TERM_AMAX(T, x) (x)
#define EM_RED_TERM_AMIN(T, x) (x)
#define EM_RED_TERM_ANY(T, x) ((x) != (T)0) /* a NaN is non-zero, hence true */
#define EM_RED_TERM_ALL(T, x) ((x) != (T)0)

/* out = the pairwise tree of a..h under OP, of type T: ((ab)(cd))((ef)(gh)) */
#define EM_TREE8(T, OP, out, a, b, c, d, e, f, g, h)                                      \
    {                                                                                     \
        const T ab_ = OP(a, b), cd_ = OP(c, d), ef_ = OP(e, f), gh_ = OP(g, h);           \
        const T ad_ = OP(ab_, cd_), eh_ = OP(ef_, gh_);                                   \
        out = OP(ad_, eh_);                                                               \
    }

/* ---- argmax, argmin ------------------------------------------------------------------- */

/* Elements are taken in index order; x replaces the best so far when it is strictly
 * better (`better`: x > best for argmax, x < best for argmin), so the first of equal
 * extremes stays, or when it is a NaN and the best is not: the first NaN wins. A scan may
 * stop at its first NaN. Bitwise, so that it also selects lanes of vector masks. */
#define EM_ARG_TAKES(better, x, best) ((better) | (((x) != (x)) & ((best) == (best))))

/* ---- cumsum --------------------------------------------------------------------------- */

/* The tag of cumsum's running sum, by the family of the output: wrapping u64 into
 * integers (INT), f32 for float16 into float16 (HALF), f64 into other floats (FLOAT). */
#define EM_CUMSUM_ACC(family) EM_RED_CAT(EM_CUMSUM_ACC_, family)
#define EM_CUMSUM_ACC_INT u64
#define EM_CUMSUM_ACC_HALF f32
#define EM_CUMSUM_ACC_FLOAT f64

/* ---- softmax, log_softmax ------------------------------------------------------------- */

/* A row's maximum m skips NaN (`b > a`; a NaN then reaches every output through s); its
 * s = the sum of exp(x - m) goes in double (blocked like FLOAT sums where a device uses
 * lanes); the factor f = log(s) for log_softmax, else 1 / s, rounds to the compute type;
 * an element is then (x - m) - f, or exp(x - m) * f. A row holding a NaN, a +inf or only
 * -inf gives NaN throughout. */
#define EM_SOFTMAX_MAX(a, b) ((b) > (a) ? (b) : (a))
#define EM_SOFTMAX_FACTOR(log_out, s) ((log_out) ? log(s) : 1.0 / (s))
#define EM_LOG_SOFTMAX_OUT(d, f) ((d) - (f))
#define EM_SOFTMAX_OUT(e, f) ((e) * (f))

#endif /* EM_REDUCE_H */
