/* Elementwise kernels of Ember's OpenCL device: one template for every family.
 *
 * kernels_elementwise.py renders, per program (one op, one set of dtypes):
 *   - GEOMETRY_C, ember.plugins.expressions.PRELUDE and a `prelude` block P<k>_* per
 *     operand k (0 = the output, then the inputs);
 *   - EM_NAME, the kernel-name prefix (e.g. add_float32_), EM_VEC and EM_OPERANDS;
 *   - EM_PARAMS: per operand `__global P<k>_T* EM_RESTRICT p<k>, long o<k>` for a tensor,
 *     `P<k>_C s<k>` for a scalar;
 *   - EM_STEP(i0, i1, i2, i3): loads each input at its element i<k> (or takes its scalar),
 *     applies the op and stores the result at i0; `i` is the element's row-major index
 *     (arange_ reads it).
 *
 * Contiguous kernels give each work item EM_VEC consecutive elements, with restrict
 * pointers (an output may only alias an input exactly, element for element); strided
 * kernels take one element per work item and find every operand's offset in one walk of
 * the plan's coalesced geometry.
 */

#define EM_CAT_(a, b) a##b
#define EM_CAT(a, b) EM_CAT_(a, b)

#define EM_RESTRICT restrict
__kernel void EM_CAT(EM_NAME, contiguous)(EM_PARAMS, long n) {
    const long first = get_global_id(0) * EM_VEC;
    if (first + EM_VEC <= n) {
#pragma unroll
        for (int j = 0; j < EM_VEC; j++) {
            const long i = first + j;
            EM_STEP(i, i, i, i);
        }
    } else {
        for (long i = first; i < n; i++) EM_STEP(i, i, i, i);
    }
}
#undef EM_RESTRICT
#define EM_RESTRICT

__kernel void EM_CAT(EM_NAME, strided)(EM_PARAMS, long n, EmGeometry g) {
    const long i = get_global_id(0);
    if (i >= n) return;
    long at[EM_MAX_OPERANDS] = {0, 0, 0, 0}, linear = i;
    for (int d = (int)g.ndim - 1; d >= 0; d--) {
        const long size = g.shape[d], c = linear % size;
        linear /= size;
        for (int k = 0; k < EM_OPERANDS; k++) at[k] += c * g.stride[k][d];
    }
    EM_STEP(at[0], at[1], at[2], at[3]);
}
