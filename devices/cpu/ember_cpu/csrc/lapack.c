/* The LAPACK-level primitives of ember.linalg on the CPU device, through the LAPACK that
 * the linked scipy-openblas32 library ships (its Fortran symbols carry the `scipy_`
 * prefix and take 32-bit integers; character arguments get their hidden lengths last).
 *
 * Every matrix is column-major (Fortran order) and a batch of them is contiguous, as the
 * runtime lays them out (ember._ops.linalg_primitives), so each call hands LAPACK the
 * memory in place. Workspace sizes come from LAPACK's own query (lwork = -1), once per
 * batch. `info` receives LAPACK's status per matrix; the runtime turns it into errors.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cblas.h"
#include "ember_cpu.h"

typedef int lp_int;

#define DECLARE_LAPACK(T, P)                                                                   \
    void scipy_##P##getrf_(const lp_int*, const lp_int*, T*, const lp_int*, lp_int*, lp_int*); \
    void scipy_##P##potrf_(const char*, const lp_int*, T*, const lp_int*, lp_int*, size_t);   \
    void scipy_##P##geqrf_(const lp_int*, const lp_int*, T*, const lp_int*, T*, T*,           \
                           const lp_int*, lp_int*);                                            \
    void scipy_##P##orgqr_(const lp_int*, const lp_int*, const lp_int*, T*, const lp_int*,    \
                           const T*, T*, const lp_int*, lp_int*);                              \
    void scipy_##P##syevd_(const char*, const char*, const lp_int*, T*, const lp_int*, T*,    \
                           T*, const lp_int*, lp_int*, const lp_int*, lp_int*, size_t, size_t); \
    void scipy_##P##gesdd_(const char*, const lp_int*, const lp_int*, T*, const lp_int*, T*,  \
                           T*, const lp_int*, T*, const lp_int*, T*, const lp_int*, lp_int*,  \
                           lp_int*, size_t);

DECLARE_LAPACK(double, d)
DECLARE_LAPACK(float, s)

static int too_large(int64_t x) { return x < 0 || x > INT_MAX; }

static int fail(const char* message) {
    strncpy(em_error_message, message, sizeof em_error_message - 1);
    return 2;
}

static lp_int max_int(lp_int a, lp_int b) { return a > b ? a : b; }

/* One definition per precision T (LAPACK prefix P, cblas prefix C). */
#define DEFINE_KERNELS(T, P)                                                                   \
    static int P##_lu_factor(T* a, lp_int* piv, lp_int* info, int64_t batch, lp_int m,        \
                             lp_int n) {                                                       \
        lp_int lda = max_int(m, 1), k = m < n ? m : n;                                         \
        for (int64_t z = 0; z < batch; z++)                                                    \
            scipy_##P##getrf_(&m, &n, a + z * m * n, &lda, piv + z * k, info + z);             \
        return 0;                                                                              \
    }                                                                                          \
    static int P##_cholesky(T* a, lp_int* info, int64_t batch, lp_int n) {                    \
        lp_int lda = max_int(n, 1);                                                            \
        for (int64_t z = 0; z < batch; z++)                                                    \
            scipy_##P##potrf_("L", &n, a + z * n * n, &lda, info + z, 1);                      \
        return 0;                                                                              \
    }                                                                                          \
    static int P##_householder_qr(T* a, T* tau, int64_t batch, lp_int m, lp_int n) {          \
        lp_int lda = max_int(m, 1), k = m < n ? m : n, query = -1, info = 0, lwork;            \
        T size = 0;                                                                            \
        scipy_##P##geqrf_(&m, &n, a, &lda, tau, &size, &query, &info);                         \
        lwork = max_int((lp_int)size, 1);                                                      \
        T* work = malloc(sizeof(T) * (size_t)lwork);                                           \
        if (!work) return fail("out of memory for the LAPACK workspace");                      \
        for (int64_t z = 0; z < batch; z++)                                                    \
            scipy_##P##geqrf_(&m, &n, a + z * m * n, &lda, tau + z * k, work, &lwork, &info);  \
        free(work);                                                                            \
        return 0;                                                                              \
    }                                                                                          \
    static int P##_householder_product(T* a, const T* tau, int64_t batch, lp_int m, lp_int n, \
                                       lp_int k) {                                             \
        lp_int lda = max_int(m, 1), query = -1, info = 0, lwork;                               \
        T size = 0;                                                                            \
        scipy_##P##orgqr_(&m, &n, &k, a, &lda, tau, &size, &query, &info);                     \
        lwork = max_int((lp_int)size, 1);                                                      \
        T* work = malloc(sizeof(T) * (size_t)lwork);                                           \
        if (!work) return fail("out of memory for the LAPACK workspace");                      \
        for (int64_t z = 0; z < batch; z++)                                                    \
            scipy_##P##orgqr_(&m, &n, &k, a + z * m * n, &lda, tau + z * k, work, &lwork,      \
                              &info);                                                          \
        free(work);                                                                            \
        return 0;                                                                              \
    }                                                                                          \
    static int P##_eigh(T* a, T* w, lp_int* info, int64_t batch, lp_int n) {                  \
        lp_int lda = max_int(n, 1), query = -1, lwork, liwork, isize = 0;                      \
        T size = 0;                                                                            \
        scipy_##P##syevd_("V", "L", &n, a, &lda, w, &size, &query, &isize, &query, info, 1,   \
                          1);                                                                  \
        lwork = max_int((lp_int)size, 1);                                                      \
        liwork = max_int(isize, 1);                                                            \
        T* work = malloc(sizeof(T) * (size_t)lwork);                                           \
        lp_int* iwork = malloc(sizeof(lp_int) * (size_t)liwork);                               \
        if (!work || !iwork) {                                                                 \
            free(work);                                                                        \
            free(iwork);                                                                       \
            return fail("out of memory for the LAPACK workspace");                             \
        }                                                                                      \
        for (int64_t z = 0; z < batch; z++)                                                    \
            scipy_##P##syevd_("V", "L", &n, a + z * n * n, &lda, w + z * n, work, &lwork,      \
                              iwork, &liwork, info + z, 1, 1);                                 \
        free(work);                                                                            \
        free(iwork);                                                                           \
        return 0;                                                                              \
    }                                                                                          \
    static int P##_svd(T* a, T* u, T* s, T* vh, lp_int* info, int64_t batch, lp_int m,        \
                       lp_int n, int full) {                                                   \
        lp_int k = m < n ? m : n, lda = max_int(m, 1), ldu = max_int(m, 1);                    \
        lp_int ucols = full ? m : k, vrows = full ? n : k, ldvt = max_int(vrows, 1);           \
        lp_int query = -1, lwork;                                                              \
        const char* job = full ? "A" : "S";                                                    \
        T size = 0;                                                                            \
        lp_int* iwork = malloc(sizeof(lp_int) * (size_t)max_int(8 * k, 1));                    \
        if (!iwork) return fail("out of memory for the LAPACK workspace");                     \
        scipy_##P##gesdd_(job, &m, &n, a, &lda, s, u, &ldu, vh, &ldvt, &size, &query, iwork,  \
                          info, 1);                                                            \
        lwork = max_int((lp_int)size, 1);                                                      \
        T* work = malloc(sizeof(T) * (size_t)lwork);                                           \
        if (!work) {                                                                           \
            free(iwork);                                                                       \
            return fail("out of memory for the LAPACK workspace");                             \
        }                                                                                      \
        for (int64_t z = 0; z < batch; z++)                                                    \
            scipy_##P##gesdd_(job, &m, &n, a + z * m * n, &lda, s + z * k, u + z * m * ucols,  \
                              &ldu, vh + z * vrows * n, &ldvt, work, &lwork, iwork, info + z,  \
                              1);                                                              \
        free(work);                                                                            \
        free(iwork);                                                                           \
        return 0;                                                                              \
    }                                                                                          \
    static int P##_triangular_solve(const T* a, T* b, int64_t batch, lp_int n, lp_int k,      \
                                    int upper, int unit) {                                     \
        lp_int ld = max_int(n, 1);                                                             \
        for (int64_t z = 0; z < batch; z++)                                                    \
            scipy_cblas_##P##trsm(CblasColMajor, CblasLeft, upper ? CblasUpper : CblasLower,   \
                                  CblasNoTrans, unit ? CblasUnit : CblasNonUnit, n, k, 1,      \
                                  a + z * n * n, ld, b + z * n * k, ld);                       \
        return 0;                                                                              \
    }

DEFINE_KERNELS(double, d)
DEFINE_KERNELS(float, s)

static int check_sizes(int64_t m, int64_t n) {
    if (too_large(m) || too_large(n) || too_large(m * n))
        return fail("the matrix is too large for 32-bit LAPACK");
    return 0;
}

#define DISPATCH(call_d, call_s)                                                               \
    if (dt == EM_FLOAT64) return call_d;                                                       \
    if (dt == EM_FLOAT32) return call_s;                                                       \
    return fail("unsupported dtype (float32 and float64 only)")

int em_lu_factor(int dt, intptr_t a, intptr_t pivots, intptr_t info, int64_t batch, int64_t m,
                 int64_t n) {
    if (check_sizes(m, n)) return 2;
    DISPATCH(d_lu_factor((double*)a, (lp_int*)pivots, (lp_int*)info, batch, m, n),
             s_lu_factor((float*)a, (lp_int*)pivots, (lp_int*)info, batch, m, n));
}

int em_cholesky(int dt, intptr_t a, intptr_t info, int64_t batch, int64_t n) {
    if (check_sizes(n, n)) return 2;
    DISPATCH(d_cholesky((double*)a, (lp_int*)info, batch, n),
             s_cholesky((float*)a, (lp_int*)info, batch, n));
}

int em_householder_qr(int dt, intptr_t a, intptr_t tau, int64_t batch, int64_t m, int64_t n) {
    if (check_sizes(m, n)) return 2;
    DISPATCH(d_householder_qr((double*)a, (double*)tau, batch, m, n),
             s_householder_qr((float*)a, (float*)tau, batch, m, n));
}

int em_householder_product(int dt, intptr_t a, intptr_t tau, int64_t batch, int64_t m,
                           int64_t n, int64_t k) {
    if (check_sizes(m, n)) return 2;
    DISPATCH(d_householder_product((double*)a, (const double*)tau, batch, m, n, k),
             s_householder_product((float*)a, (const float*)tau, batch, m, n, k));
}

int em_eigh(int dt, intptr_t a, intptr_t w, intptr_t info, int64_t batch, int64_t n) {
    if (check_sizes(n, n)) return 2;
    DISPATCH(d_eigh((double*)a, (double*)w, (lp_int*)info, batch, n),
             s_eigh((float*)a, (float*)w, (lp_int*)info, batch, n));
}

int em_svd(int dt, intptr_t a, intptr_t u, intptr_t s, intptr_t vh, intptr_t info,
           int64_t batch, int64_t m, int64_t n, int full_matrices) {
    if (check_sizes(m, n) || check_sizes(m, m) || check_sizes(n, n)) return 2;
    DISPATCH(d_svd((double*)a, (double*)u, (double*)s, (double*)vh, (lp_int*)info, batch, m, n,
                   full_matrices),
             s_svd((float*)a, (float*)u, (float*)s, (float*)vh, (lp_int*)info, batch, m, n,
                   full_matrices));
}

int em_triangular_solve(int dt, intptr_t a, intptr_t b, int64_t batch, int64_t n, int64_t k,
                        int upper, int unitriangular) {
    if (check_sizes(n, n) || check_sizes(n, k)) return 2;
    DISPATCH(d_triangular_solve((const double*)a, (double*)b, batch, n, k, upper, unitriangular),
             s_triangular_solve((const float*)a, (float*)b, batch, n, k, upper, unitriangular));
}
