/* im2col and col2im kernels of the OpenCL device: launches of em_im2col.h's block and row
 * functions (kernels_conv.py prepends the shared source). T is the element type: an
 * unsigned type of the item size for im2col, the adding type for col2im.
 *
 * Work items loop over whole rows rather than owning one element: on CPU devices a work
 * item costs a few nanoseconds of scheduling and 64-bit divisions cost tens, so both are
 * kept out of the per-element path.
 */

EM_IM2COL_BLOCK(im2col_block, T)
EM_COL2IM_ROW(col2im_row, T)

/* Global (KH * KW, N * C): the whole (Ho, Wo) block of one (n, c, i, j). */
__kernel void im2col(__global T* cols, long cols_off, __global const T* x, long x_off,
                     em_conv_geometry g) {
    const long q = get_global_id(0), plane = get_global_id(1);
    const long i = q / g.kw, n = plane / g.c;
    im2col_block(cols + cols_off, x + x_off + plane * g.h * g.w, &g, n, plane - n * g.c, i,
                 q - i * g.kw);
}

/* Global (H, N * C): image row ih of one plane = the sum of its column elements. */
__kernel void col2im(__global T* x, long x_off, __global const T* cols, long cols_off,
                     em_conv_geometry g) {
    const long ih = get_global_id(0), plane = get_global_id(1), n = plane / g.c;
    col2im_row(x + x_off + (plane * g.h + ih) * g.w, cols + cols_off, &g, n, plane - n * g.c,
               ih);
}
