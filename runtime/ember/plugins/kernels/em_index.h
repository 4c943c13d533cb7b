/* The indexing ops' element functions, shared by devices: index_select, gather, scatter_,
 * scatter_add_, take, index_put_ and nonzero.
 *
 * Each device keeps its loop or launch, its strategy for duplicate indices (serial order,
 * claims, atomics) and its float16 loads; what every device computes the same way is here:
 *
 *   em_index_in_range(v, size)       whether index value v addresses a dim of `size`
 *   em_index_along(base, v, stride)  the element index value v reaches along `dim`
 *   em_shape, em_shape_offset        a tensor addressed by row-major (flat) position
 *   em_shape_position, em_shape_next the coordinates of a position, and the next position
 *   EM_INDEX_ADD(code, t, v)         what scatter_add_ and accumulating index_put_ add
 *   EM_INDEX_NONZERO(SUFFIX, T, NZ)  nonzero's count and coordinates over a range of positions
 *
 * gather and index_select iterate over the index's shape with three operands (output,
 * index, source), scatter_ over the same shape with (target, index, src); the operand
 * addressed through the index has its stride on `dim` zeroed in that iteration, and the
 * index value times that stride (`em_index_along`) takes its place. index_select is the
 * gather whose index strides are zero except on `dim`. take and index_put_ address their
 * source or target by flat position (`em_shape_offset`).
 *
 * The runtime wraps negative indices (where an op allows them) and range-checks every
 * index before a launch; a device that checks again, because its kernels are also called
 * directly, tests each value with `em_index_in_range` and reports the value itself.
 */
#ifndef EM_INDEX_H
#define EM_INDEX_H

#include "em_dialect.h"

/* 1 if v is one of 0 .. size-1: one unsigned comparison also rejects negative values. */
EM_FN int em_index_in_range(em_i64 v, em_i64 size) { return (em_u64)v < (em_u64)size; }

/* The offset of the element that index value v reaches along `dim`: `base` is the
 * operand's offset with its `dim` coordinate left out, `dim_stride` its stride on `dim`. */
EM_FN em_i64 em_index_along(em_i64 base, em_i64 v, em_i64 dim_stride) {
    return base + v * dim_stride;
}

/* ---- tensors addressed by row-major position ------------------------------------------ */

#define EM_SHAPE_MAX_DIMS 16

/* A tensor's shape and strides (in elements), read by row-major position (OpenCL and
 * CUDA take it by value: its layout is `1 + 2 * EM_SHAPE_MAX_DIMS` int64s). */
typedef struct {
    em_i64 ndim;
    em_i64 shape[EM_SHAPE_MAX_DIMS];
    em_i64 stride[EM_SHAPE_MAX_DIMS];
} em_shape;

/* The storage offset of row-major position v (0 <= v < numel). */
EM_FN em_i64 em_shape_offset(const em_shape* s, em_i64 v) {
    em_i64 off = 0;
    int d = (int)s->ndim - 1;
    for (; d > 0; d--) {
        off += (v % s->shape[d]) * s->stride[d];
        v /= s->shape[d];
    }
    return d == 0 ? off + v * s->stride[0] : off;
}

/* The storage offset of row-major position v, and its coordinates in `coord`. */
EM_FN em_i64 em_shape_position(const em_shape* s, em_i64 v, em_i64* coord) {
    em_i64 off = 0;
    for (int d = (int)s->ndim - 1; d >= 0; d--) {
        coord[d] = v % s->shape[d];
        off += coord[d] * s->stride[d];
        v /= s->shape[d];
    }
    return off;
}

/* Moves `coord` (at offset `off`) to the next row-major position; returns its offset. */
EM_FN em_i64 em_shape_next(const em_shape* s, em_i64* coord, em_i64 off) {
    for (int d = (int)s->ndim - 1; d >= 0; d--) {
        if (++coord[d] < s->shape[d]) return off + s->stride[d];
        off -= s->stride[d] * (s->shape[d] - 1);
        coord[d] = 0;
    }
    return off;
}

/* ---- accumulation --------------------------------------------------------------------- */

/* t + v as scatter_add_ and index_put_(accumulate=True) define it, by dtype code (the
 * runtime's dtype.index: 0 bool, 1 uint8, 2 int8, 3 int32, 4 int64, 5 float16, 6 float32,
 * 7 float64): bool "adds" with or; int32 and int64 wrap in two's complement (C's signed
 * overflow is undefined); 8-bit sums wrap when stored; float16 adds in the type the device
 * loads it as. `code` must be a literal or a macro that expands to one. */
#define EM_INDEX_ADD(code, t, v) EM_INDEX_ADD_BY_CODE(code, t, v)
#define EM_INDEX_ADD_BY_CODE(code, t, v) EM_INDEX_ADD_##code(t, v)
#define EM_INDEX_ADD_0(t, v) ((t) | (v))
#define EM_INDEX_ADD_1(t, v) ((t) + (v))
#define EM_INDEX_ADD_2(t, v) ((t) + (v))
#define EM_INDEX_ADD_3(t, v) ((em_i32)((em_u32)(t) + (em_u32)(v)))
#define EM_INDEX_ADD_4(t, v) ((em_i64)((em_u64)(t) + (em_u64)(v)))
#define EM_INDEX_ADD_5(t, v) ((t) + (v))
#define EM_INDEX_ADD_6(t, v) ((t) + (v))
#define EM_INDEX_ADD_7(t, v) ((t) + (v))

/* ---- nonzero -------------------------------------------------------------------------- */

/* Defines, for elements of type T (NZ(p, off): whether element `off` of p is non-zero),
 *   em_nonzero_count_SUFFIX(a, s, begin, end): the non-zeros among positions [begin, end);
 *   em_nonzero_fill_SUFFIX(a, s, begin, end, out, limit): their coordinates, s->ndim per
 *     row, in row-major order, into at most `limit` rows of `out`.
 * Both walk the positions a row (the innermost dim) at a time, so that the inner loop is a
 * plain strided one. The fill has no branch to mispredict: it writes every position's
 * innermost coordinate into the next free row and moves on only past non-zeros, then adds
 * the outer coordinates to the rows kept; it never writes past `limit` rows, so ranges
 * filled side by side stay apart. A device splits the positions into ranges as suits it,
 * counting before it fills; a 0-d tensor has one position and no coordinates. */
#define EM_INDEX_NONZERO(SUFFIX, T, NZ)                                                     \
    EM_FN em_i64 em_nonzero_count_##SUFFIX(EM_GLOBAL const T* a, const em_shape* s,         \
                                           em_i64 begin, em_i64 end) {                      \
        em_i64 coord[EM_SHAPE_MAX_DIMS], count = 0;                                          \
        int in = (int)s->ndim - 1;                                                           \
        if (in < 0) return begin < end && NZ(a, 0) ? 1 : 0;                                  \
        em_i64 off = em_shape_position(s, begin, coord), step = s->stride[in];               \
        for (em_i64 v = begin; v < end;) {                                                   \
            em_i64 run = s->shape[in] - coord[in] < end - v ? s->shape[in] - coord[in]        \
                                                            : end - v;                       \
            for (em_i64 j = 0; j < run; j++) count += NZ(a, off + j * step) ? 1 : 0;         \
            v += run;                                                                        \
            coord[in] += run - 1;                                                            \
            off = em_shape_next(s, coord, off + (run - 1) * step);                           \
        }                                                                                    \
        return count;                                                                        \
    }                                                                                        \
    EM_FN void em_nonzero_fill_##SUFFIX(EM_GLOBAL const T* a, const em_shape* s,            \
                                        em_i64 begin, em_i64 end, EM_GLOBAL em_i64* out,    \
                                        em_i64 limit) {                                     \
        em_i64 coord[EM_SHAPE_MAX_DIMS], written = 0;                                        \
        int in = (int)s->ndim - 1;                                                           \
        if (in < 0) return;                                                                  \
        em_i64 off = em_shape_position(s, begin, coord), step = s->stride[in];               \
        for (em_i64 v = begin; v < end && written < limit;) {                                \
            em_i64 run = s->shape[in] - coord[in] < end - v ? s->shape[in] - coord[in]        \
                                                            : end - v;                       \
            em_i64 first = coord[in], row = written, width = in + 1;                         \
            for (em_i64 j = 0; j < run && written < limit; j++) {                            \
                out[written * width + in] = first + j;                                       \
                written += NZ(a, off + j * step) ? 1 : 0;                                    \
            }                                                                                \
            for (int d = 0; d < in; d++)                                                     \
                for (em_i64 r = row; r < written; r++) out[r * width + d] = coord[d];        \
            v += run;                                                                        \
            coord[in] += run - 1;                                                            \
            off = em_shape_next(s, coord, off + (run - 1) * step);                           \
        }                                                                                    \
    }

#endif /* EM_INDEX_H */
