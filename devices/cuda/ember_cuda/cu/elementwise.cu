/* Elementwise kernels of Ember's CUDA device: one template for every family.
 *
 * kernels_elementwise renders, per program (one op, one set of dtypes), before this text:
 *   - a block P<k>_T (storage), P<k>_C (compute type), P<k>_LOAD, P<k>_STORE per operand k
 *     (0 = the output, then the inputs);
 *   - EM_NAME, the kernel-name prefix (e.g. add_float32_), and EM_OPERANDS;
 *   - EM_PARAMS: per operand `P<k>_T* EM_RESTRICT p<k>, em_i64 o<k>` for a tensor,
 *     `P<k>_C s<k>` for a scalar;
 *   - EM_STEP(i0, i1, i2, i3): loads each input at its element i<k> (or takes its scalar),
 *     applies the op and stores the result at i0; `i` is the element's row-major index
 *     (arange_ reads it);
 * and after it #undefs them all, so that many programs can share one translation unit.
 * The header before the first program defines EM_BLOCK, EM_VEC, EM_CAT and EmGeometry.
 *
 * Contiguous kernels: a block of EM_BLOCK threads covers EM_BLOCK * EM_VEC consecutive
 * elements, thread t taking t, t + EM_BLOCK, ... so that each load of a warp is one
 * coalesced transaction; pointers are __restrict__ (an output may only alias an input
 * exactly, element for element). Strided kernels take one element per thread and find
 * every operand's offset in one walk of the plan's coalesced geometry.
 */

#define EM_RESTRICT __restrict__
extern "C" __global__ void __launch_bounds__(EM_BLOCK)
EM_CAT(EM_NAME, contiguous)(EM_PARAMS, const em_i64 n) {
    const em_i64 first = (em_i64)blockIdx.x * (EM_BLOCK * EM_VEC) + threadIdx.x;
#pragma unroll
    for (int j = 0; j < EM_VEC; j++) {
        const em_i64 i = first + (em_i64)j * EM_BLOCK;
        if (i < n) EM_STEP(i, i, i, i);
    }
}
#undef EM_RESTRICT
#define EM_RESTRICT

extern "C" __global__ void __launch_bounds__(EM_BLOCK)
EM_CAT(EM_NAME, strided)(EM_PARAMS, const em_i64 n, const EmGeometry g) {
    const em_i64 i = (em_i64)blockIdx.x * EM_BLOCK + threadIdx.x;
    if (i >= n) return;
    em_i64 at[EM_MAX_OPERANDS] = {0, 0, 0, 0};
    em_i64 linear = i;
    for (int d = (int)g.ndim - 1; d >= 0; d--) {
        const em_i64 size = g.shape[d], c = linear % size;
        linear /= size;
#pragma unroll
        for (int k = 0; k < EM_OPERANDS; k++) at[k] += c * g.stride[k][d];
    }
    EM_STEP(at[0], at[1], at[2], at[3]);
}
#undef EM_RESTRICT
