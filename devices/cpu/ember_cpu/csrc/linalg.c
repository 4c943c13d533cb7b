/* Matrix products of the CPU device: mm and bmm for every numeric dtype.
 *
 * float32/float64 go to OpenBLAS, float32 to oneDNN's sgemm instead where the plugin found
 * it (em_set_sgemm; see ember_cpu/_sgemm.py for why). A strided operand is handed over in
 * place whenever one of its dims has unit stride (row-major, or transposed with the Trans
 * flag); a column-major output is computed as C^T = B^T A^T; anything else is packed into
 * a contiguous buffer first. float16 is packed to float32, multiplied by sgemm (so it
 * accumulates in float) and rounded once. Integers and bool use a C loop accumulating in
 * int64 (wrapping like PyTorch); bool stores "any product term is true".
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cblas.h"
#include "strided.h"

/* A batch of (rows x cols) matrices; strides in elements. */
typedef struct {
    char* p;
    int64_t rows, cols, srow, scol, sbatch;
} mat_t;

static mat_t transposed(mat_t m) {
    mat_t t = m;
    t.rows = m.cols;
    t.cols = m.rows;
    t.srow = m.scol;
    t.scol = m.srow;
    return t;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int fits_blas(int64_t x) { return x >= 0 && x <= INT_MAX; }

/* Whether BLAS reads m in place as row-major (NoTrans) or column-major (Trans), and with
 * which leading dimension. */
static int blas_layout(const mat_t* m, enum CBLAS_TRANSPOSE* trans, int64_t* ld) {
    if ((m->cols == 1 || m->scol == 1) && (m->rows == 1 || m->srow >= max64(m->cols, 1))) {
        *trans = CblasNoTrans;
        *ld = m->rows == 1 ? max64(m->cols, 1) : m->srow;
        return fits_blas(*ld);
    }
    if ((m->rows == 1 || m->srow == 1) && (m->cols == 1 || m->scol >= max64(m->rows, 1))) {
        *trans = CblasTrans;
        *ld = m->cols == 1 ? max64(m->rows, 1) : m->scol;
        return fits_blas(*ld);
    }
    return 0;
}

static int row_major(const mat_t* m, int64_t* ld) {
    enum CBLAS_TRANSPOSE t;
    return blas_layout(m, &t, ld) && t == CblasNoTrans;
}

/* ---- packing and unpacking ------------------------------------------------------------- */

/* A copy between a strided batch of matrices and a contiguous (batch x rows x cols) one,
 * its rows split across threads. */
typedef struct {
    const mat_t* strided;
    void* dense;
    int64_t batch;
} copy_job_t;

/* dense (type DT) = strided (type ST) */
#define DEFINE_PACK_CVT(NAME, DT, ST, CVT)                                                       \
    static void NAME##_part(void* ctx, int t, int nt) {                                   \
        const copy_job_t* job = ctx;                                                      \
        const mat_t* m = job->strided;                                                    \
        int64_t rows = job->batch * m->rows;                                              \
        for (int64_t r = rows * t / nt; r < rows * (t + 1) / nt; r++) {                   \
            const ST* s = (const ST*)m->p + (r / m->rows) * m->sbatch + (r % m->rows) * m->srow; \
            DT* d = (DT*)job->dense + r * m->cols;                                        \
            if (m->scol == 1) {                                                           \
                for (int64_t j = 0; j < m->cols; j++) d[j] = CVT(s[j]);                    \
            } else {                                                                      \
                for (int64_t j = 0; j < m->cols; j++) d[j] = CVT(s[j * m->scol]);          \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
    static void NAME(DT* dense, const mat_t* src, int64_t batch) {                        \
        copy_job_t job = {src, dense, batch};                                             \
        run_parts(batch * src->rows * src->cols, batch * src->rows, NAME##_part, &job);   \
    }

/* strided (type DT) = dense (type ST) */
#define DEFINE_UNPACK_CVT(NAME, DT, ST, CVT)                                                     \
    static void NAME##_part(void* ctx, int t, int nt) {                                   \
        const copy_job_t* job = ctx;                                                      \
        const mat_t* m = job->strided;                                                    \
        int64_t rows = job->batch * m->rows;                                              \
        for (int64_t r = rows * t / nt; r < rows * (t + 1) / nt; r++) {                   \
            DT* d = (DT*)m->p + (r / m->rows) * m->sbatch + (r % m->rows) * m->srow;      \
            const ST* s = (const ST*)job->dense + r * m->cols;                            \
            for (int64_t j = 0; j < m->cols; j++) d[j * m->scol] = CVT(s[j]);              \
        }                                                                                 \
    }                                                                                     \
    static void NAME(const mat_t* dst, ST* dense, int64_t batch) {                        \
        copy_job_t job = {dst, dense, batch};                                             \
        run_parts(batch * dst->rows * dst->cols, batch * dst->rows, NAME##_part, &job);   \
    }

#define DEFINE_PACK(NAME, DT, ST) DEFINE_PACK_CVT(NAME, DT, ST, (DT))
#define DEFINE_UNPACK(NAME, DT, ST) DEFINE_UNPACK_CVT(NAME, DT, ST, (DT))
DEFINE_PACK(pack_f32, float, float)
DEFINE_PACK(pack_f64, double, double)
DEFINE_PACK(pack_f16_f32, float, em_half)
DEFINE_UNPACK(unpack_f32, float, float)
DEFINE_UNPACK(unpack_f64, double, double)
DEFINE_UNPACK(unpack_f32_f16, em_half, float)
DEFINE_PACK_CVT(pack_bf16_f32, float, em_bf16, em_bf16_to_f)
DEFINE_UNPACK_CVT(unpack_f32_bf16, em_bf16, float, em_f_to_bf16)

static int out_of_memory(void) {
    strcpy(em_error_message, "out of memory");
    return 2;
}

/* ---- BLAS ------------------------------------------------------------------------------ */

/* A float32 GEMM to use instead of OpenBLAS's, set by the plugin when it finds one
 * (oneDNN's dnnl_sgemm: row-major, 'N'/'T' flags, 64-bit sizes, 0 on success). */
typedef int (*em_sgemm_fn)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t,
                           const float*, int64_t, float, float*, int64_t);
static em_sgemm_fn sgemm_engine = NULL;

void em_set_sgemm(intptr_t fn) { sgemm_engine = (em_sgemm_fn)fn; }

static void gemm_one(int f64, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int64_t m,
                     int64_t n, int64_t k, const char* a, int64_t lda, const char* b,
                     int64_t ldb, char* c, int64_t ldc) {
    /* oneDNN threads with the calling thread's OpenMP default, which set_num_threads only
     * set on its own thread: hand it the budget here. The engine validates like BLAS does;
     * on a refusal OpenBLAS computes the product instead. */
    if (!f64 && sgemm_engine) {
        if (!omp_in_parallel() && omp_get_max_threads() != em_threads())
            omp_set_num_threads(em_threads());
        if (sgemm_engine(ta == CblasTrans ? 'T' : 'N', tb == CblasTrans ? 'T' : 'N', m, n, k,
                         1.0f, (const float*)a, lda, (const float*)b, ldb, 0.0f, (float*)c,
                         ldc) == 0)
            return;
    }
    if (f64)
        scipy_cblas_dgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, 1.0,
                          (const double*)a, (blasint)lda, (const double*)b, (blasint)ldb, 0.0,
                          (double*)c, (blasint)ldc);
    else
        scipy_cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, 1.0f,
                          (const float*)a, (blasint)lda, (const float*)b, (blasint)ldb, 0.0f,
                          (float*)c, (blasint)ldc);
}

/* OpenBLAS's strided batch call, where the installed OpenBLAS has it (0.3.30 on); bound
 * weakly so that an older one still links. */
void scipy_cblas_sgemm_batch_strided(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE,
                                     blasint, blasint, blasint, float, const float*, blasint,
                                     blasint, const float*, blasint, blasint, float, float*,
                                     blasint, blasint, blasint) __attribute__((weak));
void scipy_cblas_dgemm_batch_strided(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE,
                                     blasint, blasint, blasint, double, const double*, blasint,
                                     blasint, const double*, blasint, blasint, double, double*,
                                     blasint, blasint, blasint) __attribute__((weak));

#define SMALL_GEMM (96 * 96 * 96) /* below this OpenBLAS runs one thread per call */

typedef struct {
    int f64;
    enum CBLAS_TRANSPOSE ta, tb;
    int64_t batch, m, n, k, lda, ldb, ldc;
    const mat_t *a, *b, *c;
} batch_job_t;

static void batch_part(void* ctx, int t, int nt) {
    const batch_job_t* job = ctx;
    size_t isz = job->f64 ? sizeof(double) : sizeof(float);
    for (int64_t i = job->batch * t / nt; i < job->batch * (t + 1) / nt; i++)
        gemm_one(job->f64, job->ta, job->tb, job->m, job->n, job->k,
                 job->a->p + i * job->a->sbatch * isz, job->lda,
                 job->b->p + i * job->b->sbatch * isz, job->ldb,
                 job->c->p + i * job->c->sbatch * isz, job->ldc);
}

/* Every product of the batch: small ones spread over OpenMP threads (OpenBLAS would run
 * each on one thread anyway), larger ones through the strided batch call when there is
 * one (it threads inside), else one call per matrix. */
static void gemm_batch(int f64, int64_t batch, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                       int64_t m, int64_t n, int64_t k, const mat_t a, int64_t lda,
                       const mat_t b, int64_t ldb, const mat_t c, int64_t ldc) {
    batch_job_t job = {f64, ta, tb, batch, m, n, k, lda, ldb, ldc, &a, &b, &c};
    /* The engine has no batch call: its products go one by one, each threaded inside. */
    int strided = batch > 1 && m * n * k >= SMALL_GEMM && (f64 || !sgemm_engine) &&
                  fits_blas(batch) &&
                  fits_blas(a.sbatch) && fits_blas(b.sbatch) && fits_blas(c.sbatch) &&
                  (f64 ? scipy_cblas_dgemm_batch_strided != NULL
                       : scipy_cblas_sgemm_batch_strided != NULL);
    if (!strided) {
        run_parts(m * n * k < SMALL_GEMM ? batch * m * n * k : 0, batch, batch_part, &job);
    } else if (f64) {
        scipy_cblas_dgemm_batch_strided(CblasRowMajor, ta, tb, (blasint)m, (blasint)n,
                                        (blasint)k, 1.0, (const double*)a.p, (blasint)lda,
                                        (blasint)a.sbatch, (const double*)b.p, (blasint)ldb,
                                        (blasint)b.sbatch, 0.0, (double*)c.p, (blasint)ldc,
                                        (blasint)c.sbatch, (blasint)batch);
    } else {
        scipy_cblas_sgemm_batch_strided(CblasRowMajor, ta, tb, (blasint)m, (blasint)n,
                                        (blasint)k, 1.0f, (const float*)a.p, (blasint)lda,
                                        (blasint)a.sbatch, (const float*)b.p, (blasint)ldb,
                                        (blasint)b.sbatch, 0.0f, (float*)c.p, (blasint)ldc,
                                        (blasint)c.sbatch, (blasint)batch);
    }
}

/* An operand BLAS can read: in place, or packed into `*buffer` (caller frees). */
static int blas_operand(int f64, mat_t* m, int64_t batch, enum CBLAS_TRANSPOSE* t, int64_t* ld,
                        void** buffer) {
    *buffer = NULL;
    if (blas_layout(m, t, ld)) return 0;
    int64_t packed = m->sbatch == 0 ? 1 : batch; /* a broadcast batch is packed once */
    size_t isz = f64 ? sizeof(double) : sizeof(float);
    *buffer = malloc((size_t)(packed * m->rows * m->cols) * isz);
    if (!*buffer) return out_of_memory();
    if (f64) pack_f64(*buffer, m, packed); else pack_f32(*buffer, m, packed);
    m->p = *buffer;
    m->sbatch = m->sbatch == 0 ? 0 : m->rows * m->cols;
    m->srow = m->cols;
    m->scol = 1;
    *t = CblasNoTrans;
    *ld = max64(m->cols, 1);
    return 0;
}

/* c = a @ b for float32 (f64 = 0) or float64 operands; c row-major or column-major or
 * strided (then computed into a buffer). */
static int gemm_real(int f64, int64_t batch, mat_t a, mat_t b, mat_t c) {
    int64_t ldc;
    if (!row_major(&c, &ldc)) {
        mat_t ct = transposed(c);
        if (row_major(&ct, &ldc)) { /* C^T = B^T A^T */
            mat_t at = transposed(a);
            a = transposed(b);
            b = at;
            c = ct;
        }
    }
    int64_t m = c.rows, n = c.cols, k = a.cols;
    if (!fits_blas(m) || !fits_blas(n) || !fits_blas(k)) {
        strcpy(em_error_message, "matrix dimensions exceed the 32-bit BLAS limit");
        return 2;
    }
    void *abuf = NULL, *bbuf = NULL, *cbuf = NULL;
    enum CBLAS_TRANSPOSE ta, tb;
    int64_t lda, ldb;
    int status = blas_operand(f64, &a, batch, &ta, &lda, &abuf);
    if (!status) status = blas_operand(f64, &b, batch, &tb, &ldb, &bbuf);
    mat_t target = c;
    if (!status && !row_major(&c, &ldc)) {
        size_t isz = f64 ? sizeof(double) : sizeof(float);
        cbuf = malloc((size_t)(batch * m * n) * isz);
        if (!cbuf) status = out_of_memory();
        c.p = cbuf;
        c.srow = ldc = max64(n, 1);
        c.scol = 1;
        c.sbatch = m * n;
    }
    if (!status) {
        gemm_batch(f64, batch, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
        if (cbuf) {
            if (f64) unpack_f64(&target, cbuf, batch); else unpack_f32(&target, cbuf, batch);
        }
    }
    free(abuf);
    free(bbuf);
    free(cbuf);
    return status;
}

/* float16 and bfloat16: pack to float32, sgemm, round once into the output. */
static int gemm_half(int bf16, int64_t batch, mat_t a, mat_t b, mat_t c) {
    int64_t m = c.rows, n = c.cols, k = a.cols;
    int64_t ab = a.sbatch == 0 ? 1 : batch, bb = b.sbatch == 0 ? 1 : batch;
    float* pa = malloc((size_t)(ab * m * k) * sizeof(float));
    float* pb = malloc((size_t)(bb * k * n) * sizeof(float));
    float* pc = malloc((size_t)(batch * m * n) * sizeof(float));
    int status = 0;
    if (!pa || !pb || !pc) {
        status = out_of_memory();
    } else {
        if (bf16) {
            pack_bf16_f32(pa, &a, ab);
            pack_bf16_f32(pb, &b, bb);
        } else {
            pack_f16_f32(pa, &a, ab);
            pack_f16_f32(pb, &b, bb);
        }
        mat_t fa = {(char*)pa, m, k, k, 1, a.sbatch == 0 ? 0 : m * k};
        mat_t fb = {(char*)pb, k, n, n, 1, b.sbatch == 0 ? 0 : k * n};
        mat_t fc = {(char*)pc, m, n, n, 1, m * n};
        status = gemm_real(0, batch, fa, fb, fc);
        if (!status && bf16) unpack_f32_bf16(&c, pc, batch);
        if (!status && !bf16) unpack_f32_f16(&c, pc, batch);
    }
    free(pa);
    free(pb);
    free(pc);
    return status;
}

/* ---- integers ---------------------------------------------------------------------------- */

static inline int64_t load_int(int dt, const char* p) {
    switch (dt) {
        case EM_BOOL: case EM_UINT8: return *(const uint8_t*)p;
        case EM_INT8: return *(const int8_t*)p;
        case EM_INT32: return *(const int32_t*)p;
        default: return *(const int64_t*)p;
    }
}

static inline void store_int(int dt, char* p, int64_t v) {
    switch (dt) {
        case EM_BOOL: *(uint8_t*)p = v != 0; break;
        case EM_UINT8: *(uint8_t*)p = (uint8_t)v; break;
        case EM_INT8: *(int8_t*)p = (int8_t)v; break;
        case EM_INT32: *(int32_t*)p = (int32_t)v; break;
        default: *(int64_t*)p = v; break;
    }
}

/* One batch of the integer product: out rows split across threads, each accumulating
 * a[i, k] * B[k, :] in int64 (vectorised) against B widened to a contiguous buffer. */
typedef struct {
    int dt;
    int64_t m, n, k, isz;
    const mat_t *a, *c;
    const char* pa;
    char* pc;
    const uint64_t* wide;
    int failed;
} int_job_t;

static void gemm_int_part(void* ctx, int t, int nt) {
    int_job_t* job = ctx;
    int64_t n = job->n, k = job->k, isz = job->isz;
    uint64_t* acc = malloc((size_t)max64(n, 1) * sizeof(uint64_t));
    if (!acc) {
#pragma omp atomic write
        job->failed = 1;
        return;
    }
    for (int64_t i = job->m * t / nt; i < job->m * (t + 1) / nt; i++) {
        for (int64_t j = 0; j < n; j++) acc[j] = 0;
        for (int64_t kk = 0; kk < k; kk++) {
            const char* pa = job->pa + (i * job->a->srow + kk * job->a->scol) * isz;
            uint64_t x = (uint64_t)load_int(job->dt, pa);
            if (x == 0) continue;
            const uint64_t* w = job->wide + kk * n;
            for (int64_t j = 0; j < n; j++) acc[j] += x * w[j];
        }
        for (int64_t j = 0; j < n; j++)
            store_int(job->dt, job->pc + (i * job->c->srow + j * job->c->scol) * isz,
                      (int64_t)acc[j]);
    }
    free(acc);
}

static int gemm_int(int dt, int64_t batch, mat_t a, mat_t b, mat_t c) {
    int64_t m = c.rows, n = c.cols, k = a.cols, isz = ITEMSIZE[dt];
    uint64_t* wide = malloc((size_t)max64(k * n, 1) * sizeof(uint64_t));
    if (!wide) return out_of_memory();
    int_job_t job = {dt, m, n, k, isz, &a, &c, NULL, NULL, wide, 0};
    for (int64_t bi = 0; bi < batch && !job.failed; bi++) {
        const char* pb = b.p + bi * b.sbatch * isz;
        for (int64_t kk = 0; kk < k; kk++)
            for (int64_t j = 0; j < n; j++)
                wide[kk * n + j] = (uint64_t)load_int(dt, pb + (kk * b.srow + j * b.scol) * isz);
        job.pa = a.p + bi * a.sbatch * isz;
        job.pc = c.p + bi * c.sbatch * isz;
        run_parts(m * n * k, m, gemm_int_part, &job);
    }
    free(wide);
    return job.failed ? out_of_memory() : 0;
}

/* ---- entry points ------------------------------------------------------------------------ */

static void zero_fill(int dt, mat_t c, int64_t batch) {
    int64_t isz = ITEMSIZE[dt];
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < c.rows; i++)
            for (int64_t j = 0; j < c.cols; j++)
                memset(c.p + (b * c.sbatch + i * c.srow + j * c.scol) * isz, 0, (size_t)isz);
}

/* geometry: B, M, N, K, then the batch, row and column strides of a, b and out. */
int em_bmm(int dt, intptr_t out, intptr_t a, intptr_t b, const int64_t* g) {
    int64_t batch = g[0], m = g[1], n = g[2], k = g[3];
    mat_t ma = {(char*)a, m, k, g[5], g[6], g[4]};
    mat_t mb = {(char*)b, k, n, g[8], g[9], g[7]};
    mat_t mc = {(char*)out, m, n, g[11], g[12], g[10]};
    if (batch == 0 || m == 0 || n == 0) return 0;
    if (batch == 1) ma.sbatch = mb.sbatch = mc.sbatch = 0;
    if (k == 0) {
        zero_fill(dt, mc, batch);
        return 0;
    }
    switch (dt) {
        case EM_FLOAT32: return gemm_real(0, batch, ma, mb, mc);
        case EM_FLOAT64: return gemm_real(1, batch, ma, mb, mc);
        case EM_FLOAT16: return gemm_half(0, batch, ma, mb, mc);
        case EM_BFLOAT16: return gemm_half(1, batch, ma, mb, mc);
        default: return gemm_int(dt, batch, ma, mb, mc);
    }
}

int em_mm_contiguous(int dt, intptr_t out, intptr_t a, intptr_t b, int64_t m, int64_t n,
                     int64_t k) {
    int64_t g[13] = {1, m, n, k, 0, k, 1, 0, n, 1, 0, n, 1};
    if ((dt == EM_FLOAT32 || dt == EM_FLOAT64) && m > 0 && n > 0 && k > 0 && fits_blas(m) &&
        fits_blas(n) && fits_blas(k)) {
        gemm_one(dt == EM_FLOAT64, CblasNoTrans, CblasNoTrans, m, n, k, (const char*)a, k,
                 (const char*)b, n, (char*)out, n);
        return 0;
    }
    return em_bmm(dt, out, a, b, g);
}
