/* Elementwise kernels of Ember's OpenCL device: one template, specialised per program.
 *
 * kernels_elementwise.py prepends, per program:
 *   - GEOMETRY_C (the EmGeometry struct and em_offset) and `prelude` blocks: O_* for the
 *     output, A_* and B_* for the inputs, W_* for where's condition;
 *   - EM_NAME, the kernel-name prefix (e.g. add_float32_), and EM_VEC;
 *   - exactly one of EM_UNARY, EM_BINARY, EM_BINARY_SCALAR, EM_FILL, EM_ARANGE, EM_WHERE,
 *     with the op as EM_OP(x) (unary, copy) or EM_OP(a, b) (binary) on compute values;
 *   - EM_SCALAR_A when the scalar of EM_BINARY_SCALAR is the left operand;
 *   - EM_FLAGS when EM_OP may report an error: the binary kernels then take a last
 *     argument `__global int* em_error` that EM_OP sets to 1 (integer division by zero).
 *
 * Contiguous kernels give each work item EM_VEC consecutive elements (restrict pointers:
 * an output may only alias an input exactly, element for element); strided kernels take
 * one element per work item and find it through the geometry struct.
 */

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define EM_CAT_(a, b) a##b
#define EM_CAT(a, b) EM_CAT_(a, b)
#define EM_KERNEL(variant) EM_CAT(EM_NAME, variant)
#ifdef EM_FLAGS
#define EM_FLAG_ARG , __global int* em_error
/* The value of an integer division by zero: flagged, so the host raises. */
#define EM_ZERO_DIVISION(T) (*em_error = 1, (T)0)
#else
#define EM_FLAG_ARG
#endif

/* --- integer division, PyTorch's rounding; b == 0 handled by the callers ---------------
 * b == -1 negates with wrap-around instead of trapping on INT_MIN / -1 (x86 traps). */
long em_trunc_div_s(long a, long b) { return b == -1 ? (long)(0 - (ulong)a) : a / b; }
long em_floor_div_s(long a, long b) {
    if (b == -1) return (long)(0 - (ulong)a);
    const long q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
long em_fmod_s(long a, long b) { return b == -1 ? 0 : a % b; }
long em_remainder_s(long a, long b) {
    if (b == -1) return 0;
    const long r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
/* Integer power by squaring, wrapping; negative exponents as PyTorch's powi. */
long em_pow_s(long a, long b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    ulong result = 1, base = (ulong)a;
    while (b) {
        if (b & 1) result *= base;
        base *= base;
        b >>= 1;
    }
    return (long)result;
}

/* --- floating floor division and remainder (PyTorch's formulas) ---------------------- */
#define EM_FLOAT_HELPERS(T, SUF)                                       \
    T em_floor_div_##SUF(T a, T b) {                                   \
        if (b == 0) return a / b;                                      \
        const T mod = fmod(a, b);                                      \
        T div = (a - mod) / b;                                         \
        if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                \
        if (div == 0) return copysign((T)0, a / b);                    \
        const T floored = floor(div);                                  \
        return div - floored > (T)0.5 ? floored + 1 : floored;         \
    }                                                                  \
    T em_remainder_##SUF(T a, T b) {                                   \
        const T mod = fmod(a, b);                                      \
        return (mod != 0 && (b < 0) != (mod < 0)) ? mod + b : mod;     \
    }
EM_FLOAT_HELPERS(float, f)
#ifdef cl_khr_fp64
EM_FLOAT_HELPERS(double, d)
#endif

/* --- unary and copy: out = EM_OP(a) ---------------------------------------------------- */
#ifdef EM_UNARY
__kernel void EM_KERNEL(contiguous)(__global O_T* restrict out, long out_off,
                                    __global const A_T* restrict a, long a_off, long n) {
    const long first = get_global_id(0) * EM_VEC;
    if (first + EM_VEC <= n) {
#pragma unroll
        for (int j = 0; j < EM_VEC; j++) {
            const A_C x = A_LOAD(a, a_off + first + j);
            O_STORE(out, out_off + first + j, EM_OP(x));
        }
    } else {
        for (long i = first; i < n; i++) {
            const A_C x = A_LOAD(a, a_off + i);
            O_STORE(out, out_off + i, EM_OP(x));
        }
    }
}

__kernel void EM_KERNEL(strided)(__global O_T* out, long out_off, __global const A_T* a,
                                 long a_off, long n, EmGeometry g) {
    const long i = get_global_id(0);
    if (i >= n) return;
    const A_C x = A_LOAD(a, a_off + em_offset(g, 1, i));
    O_STORE(out, out_off + em_offset(g, 0, i), EM_OP(x));
}
#endif

/* --- binary: out = EM_OP(a, b) ---------------------------------------------------------- */
#ifdef EM_BINARY
__kernel void EM_KERNEL(contiguous)(__global O_T* restrict out, long out_off,
                                    __global const A_T* restrict a, long a_off,
                                    __global const B_T* restrict b, long b_off,
                                    long n EM_FLAG_ARG) {
    const long first = get_global_id(0) * EM_VEC;
    if (first + EM_VEC <= n) {
#pragma unroll
        for (int j = 0; j < EM_VEC; j++) {
            const A_C x = A_LOAD(a, a_off + first + j);
            const B_C y = B_LOAD(b, b_off + first + j);
            O_STORE(out, out_off + first + j, EM_OP(x, y));
        }
    } else {
        for (long i = first; i < n; i++) {
            const A_C x = A_LOAD(a, a_off + i);
            const B_C y = B_LOAD(b, b_off + i);
            O_STORE(out, out_off + i, EM_OP(x, y));
        }
    }
}

__kernel void EM_KERNEL(strided)(__global O_T* out, long out_off, __global const A_T* a,
                                 long a_off, __global const B_T* b, long b_off, long n,
                                 EmGeometry g EM_FLAG_ARG) {
    const long i = get_global_id(0);
    if (i >= n) return;
    const A_C x = A_LOAD(a, a_off + em_offset(g, 1, i));
    const B_C y = B_LOAD(b, b_off + em_offset(g, 2, i));
    O_STORE(out, out_off + em_offset(g, 0, i), EM_OP(x, y));
}
#endif

/* --- binary with a scalar operand (a kernel argument, never a buffer) ---------------- */
#ifdef EM_BINARY_SCALAR
#ifdef EM_SCALAR_A
#define EM_APPLY(x, s) EM_OP(s, x)
#else
#define EM_APPLY(x, s) EM_OP(x, s)
#endif
__kernel void EM_KERNEL(contiguous)(__global O_T* restrict out, long out_off,
                                    __global const A_T* restrict a, long a_off, A_C s,
                                    long n EM_FLAG_ARG) {
    const long first = get_global_id(0) * EM_VEC;
    if (first + EM_VEC <= n) {
#pragma unroll
        for (int j = 0; j < EM_VEC; j++) {
            const A_C x = A_LOAD(a, a_off + first + j);
            O_STORE(out, out_off + first + j, EM_APPLY(x, s));
        }
    } else {
        for (long i = first; i < n; i++) {
            const A_C x = A_LOAD(a, a_off + i);
            O_STORE(out, out_off + i, EM_APPLY(x, s));
        }
    }
}

__kernel void EM_KERNEL(strided)(__global O_T* out, long out_off, __global const A_T* a,
                                 long a_off, A_C s, long n, EmGeometry g EM_FLAG_ARG) {
    const long i = get_global_id(0);
    if (i >= n) return;
    const A_C x = A_LOAD(a, a_off + em_offset(g, 1, i));
    O_STORE(out, out_off + em_offset(g, 0, i), EM_APPLY(x, s));
}
#endif

/* --- fill_: O is the unsigned type of the element's width; value holds its bits ------ */
#ifdef EM_FILL
__kernel void EM_KERNEL(contiguous)(__global O_T* out, long out_off, O_T value, long n) {
    const long first = get_global_id(0) * EM_VEC;
    if (first + EM_VEC <= n) {
#pragma unroll
        for (int j = 0; j < EM_VEC; j++) out[out_off + first + j] = value;
    } else {
        for (long i = first; i < n; i++) out[out_off + i] = value;
    }
}

__kernel void EM_KERNEL(strided)(__global O_T* out, long out_off, O_T value, long n,
                                 EmGeometry g) {
    const long i = get_global_id(0);
    if (i >= n) return;
    out[out_off + em_offset(g, 0, i)] = value;
}
#endif

/* --- arange_: out[i] = start + i * step ------------------------------------------------
 * Float results, and integer results of float bounds, compute in EM_REAL (double where
 * the device has it, as the CPU device does) and truncate; integer bounds of integer
 * results wrap in long. */
#ifdef EM_ARANGE
__kernel void EM_KERNEL(contiguous)(__global O_T* out, long out_off, EM_REAL start,
                                    EM_REAL step, long start_i, long step_i, int in_real,
                                    long n) {
    const long i = get_global_id(0);
    if (i >= n) return;
    if (in_real) {
        const EM_REAL v = start + (EM_REAL)i * step;
        O_STORE(out, out_off + i, EM_FROM_REAL(v));
    } else {
        O_STORE(out, out_off + i, (long)((ulong)start_i + (ulong)i * (ulong)step_i));
    }
}
#endif

/* --- where: out = cond ? a : b, moved as bits of the element's width ----------------- */
#ifdef EM_WHERE
__kernel void EM_KERNEL(contiguous)(__global O_T* restrict out, long out_off,
                                    __global const uchar* restrict c, long c_off,
                                    __global const O_T* restrict a, long a_off,
                                    __global const O_T* restrict b, long b_off, long n) {
    const long first = get_global_id(0) * EM_VEC;
    if (first + EM_VEC <= n) {
#pragma unroll
        for (int j = 0; j < EM_VEC; j++) {
            const long i = first + j;
            out[out_off + i] = c[c_off + i] ? a[a_off + i] : b[b_off + i];
        }
    } else {
        for (long i = first; i < n; i++)
            out[out_off + i] = c[c_off + i] ? a[a_off + i] : b[b_off + i];
    }
}

__kernel void EM_KERNEL(strided)(__global O_T* out, long out_off, __global const uchar* c,
                                 long c_off, __global const O_T* a, long a_off,
                                 __global const O_T* b, long b_off, long n, EmGeometry g) {
    const long i = get_global_id(0);
    if (i >= n) return;
    out[out_off + em_offset(g, 0, i)] = c[c_off + em_offset(g, 1, i)]
                                            ? a[a_off + em_offset(g, 2, i)]
                                            : b[b_off + em_offset(g, 3, i)];
}
#endif
