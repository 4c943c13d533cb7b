/* Memory kernels: copy_ with dtype conversion, fill_, arange_ and where.
 *
 * copy_ between equal dtypes moves bytes (memcpy when both sides are contiguous);
 * between different dtypes it runs one of the 56 conversion loops generated below.
 * Conversions follow C casts: float to integer truncates toward zero (through int32 for
 * the narrow integer types, as PyTorch and NumPy do on x86), anything to bool is != 0.
 */
#include <omp.h>

#include "elementwise.h"

/* --- same-dtype copies, by element size --------------------------------------------- */

#define EM_MOVE_LOOP(BITS)                                                                \
    static int move_##BITS(int64_t n, char* const* p, const int64_t* s, int64_t index,     \
                           const void* ctx) {                                             \
        (void)index;                                                                      \
        (void)ctx;                                                                        \
        const int64_t size = BITS / 8;                                                    \
        if (s[0] == size && s[1] == size) {                                               \
            memmove(p[0], p[1], (size_t)(n * size));                                      \
        } else if (s[1] == 0) {                                                           \
            const uint##BITS##_t v = *(const uint##BITS##_t*)p[1];                        \
            for (int64_t i = 0; i < n; i++) *(uint##BITS##_t*)(p[0] + i * s[0]) = v;      \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++)                                               \
                *(uint##BITS##_t*)(p[0] + i * s[0]) =                                     \
                    *(const uint##BITS##_t*)(p[1] + i * s[1]);                            \
        }                                                                                 \
        return 0;                                                                         \
    }
EM_MOVE_LOOP(8)
EM_MOVE_LOOP(16)
EM_MOVE_LOOP(32)
EM_MOVE_LOOP(64)

static em_loop move_loop(int itemsize) {
    switch (itemsize) {
        case 1: return move_8;
        case 2: return move_16;
        case 4: return move_32;
        default: return move_64;
    }
}

/* --- conversions -------------------------------------------------------------------- */

#define EM_CONVERT_LOOP(NAME, T, S, EXPR)                                                 \
    static int NAME(int64_t n, char* const* p, const int64_t* s, int64_t index,           \
                    const void* ctx) {                                                    \
        (void)index;                                                                      \
        (void)ctx;                                                                        \
        if (EM_IS_HALF(S) && s[0] == sizeof(T) && s[1] == sizeof(S)) {                   \
            float buf[EM_BLOCK];                                                          \
            for (int64_t i0 = 0; i0 < n; i0 += EM_BLOCK) {                                \
                int64_t m = n - i0 < EM_BLOCK ? n - i0 : EM_BLOCK;                        \
                em_half_to_float((const em_half*)p[1] + i0, buf, m);                      \
                for (int64_t i = 0; i < m; i++) {                                         \
                    float x = buf[i];                                                     \
                    ((T*)p[0])[i0 + i] = (T)(EXPR);                                       \
                }                                                                         \
            }                                                                             \
        } else if (EM_IS_HALF(T) && !EM_IS_DOUBLE(S) && s[0] == sizeof(T) &&              \
                   s[1] == sizeof(S)) {                                                   \
            /* Through float, exact for every source but double (rounded once there). */  \
            float buf[EM_BLOCK];                                                          \
            for (int64_t i0 = 0; i0 < n; i0 += EM_BLOCK) {                                \
                int64_t m = n - i0 < EM_BLOCK ? n - i0 : EM_BLOCK;                        \
                for (int64_t i = 0; i < m; i++) buf[i] = (float)((const S*)p[1])[i0 + i]; \
                em_float_to_half(buf, (em_half*)p[0] + i0, m);                            \
            }                                                                             \
        } else if (s[0] == sizeof(T) && s[1] == sizeof(S)) {                              \
            T* restrict o = (T*)p[0];                                                     \
            const S* restrict in = (const S*)p[1];                                        \
            for (int64_t i = 0; i < n; i++) {                                             \
                S x = in[i];                                                              \
                o[i] = (T)(EXPR);                                                         \
            }                                                                             \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) {                                             \
                S x = *(const S*)(p[1] + i * s[1]);                                       \
                *(T*)(p[0] + i * s[0]) = (T)(EXPR);                                       \
            }                                                                             \
        }                                                                                 \
        return 0;                                                                         \
    }

/* The source type list, repeated because a macro cannot expand inside itself. */
#define EM_SOURCES(X, ...)                                   \
    X(EM_BOOL, b, uint8_t, __VA_ARGS__)                      \
    X(EM_UINT8, u8, uint8_t, __VA_ARGS__)                    \
    X(EM_INT8, i8, int8_t, __VA_ARGS__)                      \
    X(EM_INT32, i32, int32_t, __VA_ARGS__)                   \
    X(EM_INT64, i64, int64_t, __VA_ARGS__)                   \
    X(EM_FLOAT16, f16, em_half, __VA_ARGS__)                 \
    X(EM_FLOAT32, f32, float, __VA_ARGS__)                   \
    X(EM_FLOAT64, f64, double, __VA_ARGS__)

/* Integer results from floats go through int64 when either side is 8 bytes wide. */
#define EM_TO_INT(T, S, x) \
    ((S)0.5 == 0 || sizeof(T) == 8 || sizeof(S) == 8 ? (int64_t)(x) : (int32_t)(x))

#define EM_CONVERT_TO_BOOL(SCODE, SSUF, S, DSUF, T) \
    EM_CONVERT_LOOP(convert_##DSUF##_##SSUF, T, S, x != 0)
#define EM_CONVERT_TO_INT(SCODE, SSUF, S, DSUF, T) \
    EM_CONVERT_LOOP(convert_##DSUF##_##SSUF, T, S, EM_TO_INT(T, S, x))
#define EM_CONVERT_TO_FLOAT(SCODE, SSUF, S, DSUF, T) \
    EM_CONVERT_LOOP(convert_##DSUF##_##SSUF, T, S, x)

#define EM_CONVERT_INT_ROW(CODE, SUF, T, C, U, unused) EM_SOURCES(EM_CONVERT_TO_INT, SUF, T)
#define EM_CONVERT_FLOAT_ROW(CODE, SUF, T, C, U, unused) EM_SOURCES(EM_CONVERT_TO_FLOAT, SUF, T)

EM_SOURCES(EM_CONVERT_TO_BOOL, b, uint8_t)
EM_INT_TYPES(EM_CONVERT_INT_ROW, 0)
EM_FLOAT_TYPES(EM_CONVERT_FLOAT_ROW, 0)

#define EM_CONVERT_ENTRY(SCODE, SSUF, S, DSUF, unused) [SCODE] = convert_##DSUF##_##SSUF,
#define EM_CONVERT_TABLE_ROW(CODE, SUF, T, C, U, unused) \
    [CODE] = {EM_SOURCES(EM_CONVERT_ENTRY, SUF, 0)},

/* convert_table[dst][src]; the diagonal is unused (same-dtype copies move bytes). */
static const em_loop convert_table[8][8] = {EM_ALL_TYPES(EM_CONVERT_TABLE_ROW, 0)};

static int check_dtype(int dtype) {
    if (dtype < 0 || dtype > 7) return em_ew_fail("bad dtype code %d", dtype);
    return 0;
}

static em_loop copy_loop(int dst_dtype, int src_dtype) {
    if (dst_dtype == src_dtype) return move_loop(em_ew_itemsize[dst_dtype]);
    return convert_table[dst_dtype][src_dtype];
}

int em_copy(int dst_dtype, int src_dtype, int64_t n, intptr_t dst, intptr_t src) {
    if (check_dtype(dst_dtype) || check_dtype(src_dtype)) return EM_STATUS_ERROR;
    if (n <= 0) return 0;
    if (dst_dtype == src_dtype) {
        const int64_t nbytes = n * em_ew_itemsize[dst_dtype];
        /* Overlapping ranges must be one memmove; disjoint ones are split into byte
         * ranges, one memmove per thread. */
        if (dst + nbytes > src && src + nbytes > dst) {
            memmove((void*)dst, (const void*)src, (size_t)nbytes);
            return 0;
        }
        char* base[2] = {(char*)dst, (char*)src};
        const int64_t stride[2] = {1, 1};
        return em_ew_run_flat(2, nbytes, base, stride, move_8, NULL);
    }
    char* base[2] = {(char*)dst, (char*)src};
    const int64_t stride[2] = {em_ew_itemsize[dst_dtype], em_ew_itemsize[src_dtype]};
    return em_ew_run_flat(2, n, base, stride, convert_table[dst_dtype][src_dtype], NULL);
}

/* --- transposing copies ----------------------------------------------------------------
 * When one side walks memory along the innermost dim and the other along another dim
 * (x.t().contiguous(), permutes), row-by-row copying touches a new cache line per element
 * on the strided side. Copying in EM_TILE x EM_TILE tiles of those two dims reuses each
 * line EM_TILE times. Copies are order-free, so the dims can be rearranged for it. */
#define EM_TILE 32

/* The dim (other than the innermost) along which the operand that is strided in the
 * innermost dim is contiguous; -1 when tiling does not apply. */
static int tile_dim(const em_iter* it, const int* itemsize) {
    const int nd = it->ndim;
    if (nd < 2 || it->shape[nd - 1] < EM_TILE) return -1;
    for (int k = 0; k < 2; k++) {
        if (it->stride[1 - k][nd - 1] != itemsize[1 - k] || it->stride[k][nd - 1] == itemsize[k])
            continue;
        for (int d = nd - 2; d >= 0; d--)
            if (it->stride[k][d] == itemsize[k] && it->shape[d] >= EM_TILE) return d;
    }
    return -1;
}

static int copy_tiled(em_iter* it, int d, em_loop loop) {
    /* Move dim d next to the innermost one; the rest become the outer loop. */
    const int nd = it->ndim;
    int64_t shape = it->shape[d], stride[2] = {it->stride[0][d], it->stride[1][d]};
    for (int e = d; e < nd - 2; e++) {
        it->shape[e] = it->shape[e + 1];
        for (int k = 0; k < 2; k++) it->stride[k][e] = it->stride[k][e + 1];
    }
    it->shape[nd - 2] = shape;
    for (int k = 0; k < 2; k++) it->stride[k][nd - 2] = stride[k];
    const int64_t rows = it->shape[nd - 2], cols = it->shape[nd - 1];
    const int64_t row_tiles = (rows + EM_TILE - 1) / EM_TILE;
    const int64_t col_tiles = (cols + EM_TILE - 1) / EM_TILE;
    const int64_t outer = it->numel / (rows * cols);
    const int64_t tiles = outer * row_tiles * col_tiles;
    const int64_t inner_stride[2] = {it->stride[0][nd - 1], it->stride[1][nd - 1]};
    int code = 0;
#pragma omp parallel for schedule(static) reduction(| : code) num_threads(em_threads()) \
    if (it->numel >= 2 * EM_PARALLEL_GRAIN && !omp_in_parallel())
    for (int64_t t = 0; t < tiles; t++) {
        int64_t o = t / (row_tiles * col_tiles), r0 = (t / col_tiles) % row_tiles * EM_TILE,
                c0 = t % col_tiles * EM_TILE;
        char* p[2] = {it->base[0], it->base[1]};
        for (int e = nd - 3; e >= 0; e--) {
            int64_t i = o % it->shape[e];
            o /= it->shape[e];
            for (int k = 0; k < 2; k++) p[k] += i * it->stride[k][e];
        }
        const int64_t r1 = r0 + EM_TILE < rows ? r0 + EM_TILE : rows;
        const int64_t len = c0 + EM_TILE < cols ? EM_TILE : cols - c0;
        for (int64_t r = r0; r < r1; r++) {
            char* q[2] = {p[0] + r * it->stride[0][nd - 2] + c0 * inner_stride[0],
                          p[1] + r * it->stride[1][nd - 2] + c0 * inner_stride[1]};
            code |= loop(len, q, inner_stride, 0, NULL);
        }
    }
    return code;
}

int em_copy_strided(int dst_dtype, int src_dtype, int ndim, const char* geometry, intptr_t dst,
                    intptr_t src) {
    if (check_dtype(dst_dtype) || check_dtype(src_dtype)) return EM_STATUS_ERROR;
    char* base[2] = {(char*)dst, (char*)src};
    const int itemsize[2] = {em_ew_itemsize[dst_dtype], em_ew_itemsize[src_dtype]};
    const int has_strides[2] = {1, 1};
    em_iter it;
    if (em_ew_iter_init(&it, 2, ndim, geometry, base, itemsize, has_strides))
        return EM_STATUS_ERROR;
    if (it.numel == 0) return 0;
    em_loop loop = copy_loop(dst_dtype, src_dtype);
    int d = tile_dim(&it, itemsize);
    return d >= 0 ? copy_tiled(&it, d, loop) : em_ew_iter_run(&it, loop, NULL);
}

/* --- fill_ ---------------------------------------------------------------------------- */

int em_fill(int dtype, int ndim, const char* geometry, intptr_t dst, double d, int64_t i,
            int use_int) {
    if (check_dtype(dtype)) return EM_STATUS_ERROR;
    uint64_t value = 0;
    em_ew_scalar_to(dtype, d, i, use_int, &value);
    const int size = em_ew_itemsize[dtype];
    /* A fill is a copy from a stride-0 source: the move loops hoist it. */
    char* base[2] = {(char*)dst, (char*)&value};
    const int itemsize[2] = {size, size};
    const int has_strides[2] = {1, 0};
    em_iter it;
    if (em_ew_iter_init(&it, 2, ndim, geometry, base, itemsize, has_strides))
        return EM_STATUS_ERROR;
    return em_ew_iter_run(&it, move_loop(size), NULL);
}

int em_fill_flat(int dtype, int64_t n, intptr_t dst, double d, int64_t i, int use_int) {
    if (check_dtype(dtype)) return EM_STATUS_ERROR;
    uint64_t value = 0;
    em_ew_scalar_to(dtype, d, i, use_int, &value);
    const int64_t size = em_ew_itemsize[dtype];
    if (value == 0 && n > 0) {
        char* base[2] = {(char*)dst, (char*)&value};
        const int64_t stride[2] = {1, 0};
        return em_ew_run_flat(2, n * size, base, stride, move_8, NULL);
    }
    char* base[2] = {(char*)dst, (char*)&value};
    const int64_t stride[2] = {size, 0};
    return em_ew_run_flat(2, n, base, stride, move_loop((int)size), NULL);
}

/* --- arange_ -------------------------------------------------------------------------- */

typedef struct {
    double start, step;
    int64_t start_i, step_i;
    int in_double;
} arange_params;

/* Float results, and integer results of float bounds, compute start + i * step in double
 * (then truncate); integer bounds compute in wrapping int64. */
#define EM_ARANGE_LOOP(CODE, SUF, T, C, U, unused)                                              \
    static int arange_##SUF(int64_t n, char* const* p, const int64_t* s, int64_t index,     \
                            const void* ctx) {                                             \
        const arange_params* a = ctx;                                                      \
        T* o = (T*)p[0];                                                                   \
        (void)s;                                                                           \
        if (a->in_double) {                                                                \
            for (int64_t i = 0; i < n; i++) {                                              \
                double v = a->start + (double)(index + i) * a->step;                       \
                o[i] = (T)0.5 != 0 ? (T)v : (T)(int64_t)v;                                 \
            }                                                                              \
        } else {                                                                           \
            for (int64_t i = 0; i < n; i++)                                                \
                o[i] = (T)((uint64_t)a->start_i + (uint64_t)(index + i) * (uint64_t)a->step_i); \
        }                                                                                  \
        return 0;                                                                          \
    }
EM_INT_TYPES(EM_ARANGE_LOOP, 0)
EM_FLOAT_TYPES(EM_ARANGE_LOOP, 0)

static const em_loop arange_table[8] = {EM_INT_TYPES(EM_ENTRY, arange)
                                            EM_FLOAT_TYPES(EM_ENTRY, arange)};

int em_arange(int dtype, int64_t n, intptr_t out, double start, double step, int64_t start_i,
              int64_t step_i, int use_int) {
    if (check_dtype(dtype)) return EM_STATUS_ERROR;
    if (!arange_table[dtype])
        return em_ew_fail("not implemented for dtype %s", em_ew_dtype_names[dtype]);
    arange_params params = {start, step, start_i, step_i, !use_int};
    if (use_int && dtype >= EM_FLOAT16) {
        params.start = (double)start_i;
        params.step = (double)step_i;
        params.in_double = 1;
    }
    char* base[1] = {(char*)out};
    const int64_t stride[1] = {em_ew_itemsize[dtype]};
    return em_ew_run_flat(1, n, base, stride, arange_table[dtype], &params);
}

/* --- where ---------------------------------------------------------------------------- */

#define EM_WHERE_LOOP(BITS)                                                                \
    static int where_##BITS(int64_t n, char* const* p, const int64_t* s, int64_t index,     \
                            const void* ctx) {                                             \
        typedef uint##BITS##_t T;                                                          \
        (void)index;                                                                       \
        (void)ctx;                                                                         \
        if (s[0] == sizeof(T) && s[1] == 1 && s[2] == sizeof(T) && s[3] == sizeof(T)) {    \
            T* restrict o = (T*)p[0];                                                      \
            const uint8_t* restrict c = (const uint8_t*)p[1];                              \
            const T* restrict a = (const T*)p[2];                                          \
            const T* restrict b = (const T*)p[3];                                          \
            for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b[i];                     \
        } else {                                                                           \
            for (int64_t i = 0; i < n; i++)                                                \
                *(T*)(p[0] + i * s[0]) = *(const uint8_t*)(p[1] + i * s[1])                \
                                             ? *(const T*)(p[2] + i * s[2])                \
                                             : *(const T*)(p[3] + i * s[3]);               \
        }                                                                                  \
        return 0;                                                                          \
    }
EM_WHERE_LOOP(8)
EM_WHERE_LOOP(16)
EM_WHERE_LOOP(32)
EM_WHERE_LOOP(64)

static em_loop where_loop(int itemsize) {
    switch (itemsize) {
        case 1: return where_8;
        case 2: return where_16;
        case 4: return where_32;
        default: return where_64;
    }
}

int em_where(int dtype, int64_t n, intptr_t out, intptr_t cond, intptr_t a, intptr_t b) {
    if (check_dtype(dtype)) return EM_STATUS_ERROR;
    const int64_t size = em_ew_itemsize[dtype];
    char* base[4] = {(char*)out, (char*)cond, (char*)a, (char*)b};
    const int64_t stride[4] = {size, 1, size, size};
    return em_ew_run_flat(4, n, base, stride, where_loop((int)size), NULL);
}

int em_where_strided(int dtype, int ndim, const char* geometry, intptr_t out, intptr_t cond,
                     intptr_t a, intptr_t b) {
    if (check_dtype(dtype)) return EM_STATUS_ERROR;
    const int size = em_ew_itemsize[dtype];
    char* base[4] = {(char*)out, (char*)cond, (char*)a, (char*)b};
    const int itemsize[4] = {size, 1, size, size};
    const int has_strides[4] = {1, 1, 1, 1};
    em_iter it;
    if (em_ew_iter_init(&it, 4, ndim, geometry, base, itemsize, has_strides))
        return EM_STATUS_ERROR;
    return em_ew_iter_run(&it, where_loop(size), NULL);
}
