/* Orthogonal polynomials of the elementwise table, P_n(x) for an integer degree n:
 * chebyshev_polynomial_t/u/v/w, their shifted forms, hermite_polynomial_h/he,
 * laguerre_polynomial_l, legendre_polynomial_p.
 *
 * Translated from PyTorch's aten/src/ATen/native/Math.h (the *_forward(x, n) templates:
 * three-term recurrences, with PyTorch's shortcuts at |x| = 1 and for large n) into this
 * folder's dialect: each function a macro instantiated for float (suffix f) and double
 * (suffix d). The table's binary rows call em_polynomial_degree_{S} on the degree, which
 * truncates it as PyTorch's cast does, NaN and infinities giving -1 (hence 0 or NaN).
 */
#ifndef EM_POLYNOMIALS_H
#define EM_POLYNOMIALS_H

#include "em_special.h"

#define EM_SPECIAL_CHEBYSHEV_POLYNOMIAL_T(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_chebyshev_polynomial_t_##SUF(T x, em_i64 n) { \
        if (n < 0) {                                         \
            return (T)(0.0);                                 \
        }                                                    \
        if (fabs(x) == (T)(1.0)) {                           \
            if (x > (T)(0.0) || n % 2 == 0) {                \
                return (T)(1.0);                             \
            }                                                \
            return (T)(-1.0);                                \
        }                                                    \
        if ((n > 6) && (fabs(x) < (T)(1.0))) {               \
            return cos(n * acos(x));                         \
        }                                                    \
        if (n == 0) {                                        \
            return (T)(1.0);                                 \
        }                                                    \
        if (n == 1) {                                        \
            return x;                                        \
        }                                                    \
        T p = (T)(1.0);                                      \
        T q = x;                                             \
        T r = x;                                             \
        for (em_i64 k = 2; (k <= n) && !((q) != (q)); k++) { \
            r = (x + x) * q - p;                             \
            p = q;                                           \
            q = r;                                           \
        }                                                    \
        return r;                                            \
    }                                                        \

#define EM_SPECIAL_CHEBYSHEV_POLYNOMIAL_U(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_chebyshev_polynomial_u_##SUF(T x, em_i64 n) {  \
        if (n < 0) {                                          \
            return (T)(0.0);                                  \
        }                                                     \
        if (fabs(x) == (T)(1.0)) {                            \
            if (x > (T)(0.0) || n % 2 == 0) {                 \
                return n + 1;                                 \
            }                                                 \
            return -(n + 1);                                  \
        }                                                     \
        if ((n > 8) && (fabs(x) < (T)(1.0))) {                \
            if (sin(acos(x)) != (T)(0.0)) {                   \
                return sin((n + 1) * acos(x)) / sin(acos(x)); \
            }                                                 \
            return (n + 1) * cos((n + 1) * acos(x)) / x;      \
        }                                                     \
        if (n == 0) {                                         \
            return (T)(1.0);                                  \
        }                                                     \
        if (n == 1) {                                         \
            return x + x;                                     \
        }                                                     \
        T p = (T)(1.0);                                       \
        T q = x + x;                                          \
        T r = (T)NAN;                                         \
        for (em_i64 k = 2; (k <= n) && !((q) != (q)); k++) {  \
            r = (x + x) * q - p;                              \
            p = q;                                            \
            q = r;                                            \
        }                                                     \
        return r;                                             \
    }                                                         \

#define EM_SPECIAL_CHEBYSHEV_POLYNOMIAL_V(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_chebyshev_polynomial_v_##SUF(T x, em_i64 n) {                    \
        if (n < 0) {                                                            \
            return (T)(0.0);                                                    \
        }                                                                       \
        if (fabs(x) == (T)(1.0)) {                                              \
            if (x > (T)(0.0)) {                                                 \
                return (T)(1.0);                                                \
            }                                                                   \
            if (n % 2 == 0) {                                                   \
                return n + n + 1;                                               \
            }                                                                   \
            return -(n + n + 1);                                                \
        }                                                                       \
        if ((n > 8) && (fabs(x) < (T)(1.0))) {                                  \
            if (sin(acos(x) / (T)(2.0)) != (T)(1.0)) {                          \
                return cos((n + (T)(0.5)) * acos(x)) / cos(acos(x) / (T)(2.0)); \
            }                                                                   \
            if (n % 2 == 0) {                                                   \
                return n + n + 1;                                               \
            }                                                                   \
            return -(n + n + 1);                                                \
        }                                                                       \
        if (n == 0) {                                                           \
            return (T)(1.0);                                                    \
        }                                                                       \
        if (n == 1) {                                                           \
            return x + x - (T)(1.0);                                            \
        }                                                                       \
        T p = (T)(1.0);                                                         \
        T q = x + x - (T)(1.0);                                                 \
        T r = (T)NAN;                                                           \
        for (em_i64 k = 2; (k <= n) && !((q) != (q)); k++) {                    \
            r = (x + x) * q - p;                                                \
            p = q;                                                              \
            q = r;                                                              \
        }                                                                       \
        return r;                                                               \
    }                                                                           \

#define EM_SPECIAL_CHEBYSHEV_POLYNOMIAL_W(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_chebyshev_polynomial_w_##SUF(T x, em_i64 n) {                    \
        if (n < 0) {                                                            \
            return (T)(0.0);                                                    \
        }                                                                       \
        if (fabs(x) == (T)(1.0)) {                                              \
            if (x > (T)(0.0)) {                                                 \
                return n + n + 1;                                               \
            }                                                                   \
            if (n % 2 == 0) {                                                   \
                return (T)(1.0);                                                \
            }                                                                   \
            return (T)(-1.0);                                                   \
        }                                                                       \
        if ((n > 8) && (fabs(x) < (T)(1.0))) {                                  \
            if (cos(acos(x) / (T)(2.0)) != (T)(1.0)) {                          \
                return sin((n + (T)(0.5)) * acos(x)) / sin(acos(x) / (T)(2.0)); \
            }                                                                   \
            if (x > (T)(0.0)) {                                                 \
                return n + n + 1;                                               \
            }                                                                   \
            if (n % 2 == 0) {                                                   \
                return (T)(1.0);                                                \
            }                                                                   \
            return (T)(-1.0);                                                   \
        }                                                                       \
        if (n == 0) {                                                           \
            return (T)(1.0);                                                    \
        }                                                                       \
        if (n == 1) {                                                           \
            return x + x + (T)(1.0);                                            \
        }                                                                       \
        T p = (T)(1.0);                                                         \
        T q = x + x + (T)(1.0);                                                 \
        T r = (T)NAN;                                                           \
        for (em_i64 k = 2; (k <= n) && !((q) != (q)); k++) {                    \
            r = (x + x) * q - p;                                                \
            p = q;                                                              \
            q = r;                                                              \
        }                                                                       \
        return r;                                                               \
    }                                                                           \

#define EM_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_T(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_shifted_chebyshev_polynomial_t_##SUF(T x, em_i64 n) { \
        if (n < 0) {                                                 \
            return (T)(0.0);                                         \
        }                                                            \
        if (x == (T)(1.0)) {                                         \
            return (T)(1.0);                                         \
        }                                                            \
        if (x == (T)(0.0)) {                                         \
            if (n % 2 == 0) {                                        \
                return (T)(1.0);                                     \
            }                                                        \
            return (T)(-1.0);                                        \
        }                                                            \
        if ((n > 6) && (fabs(x + x - (T)(1.0)) < (T)(1.0))) {        \
            return cos(n * acos(x + x - (T)(1.0)));                  \
        }                                                            \
        if (n == 0) {                                                \
            return (T)(1.0);                                         \
        }                                                            \
        if (n == 1) {                                                \
            return x + x - (T)(1.0);                                 \
        }                                                            \
        T p = (T)(1.0);                                              \
        T q = x + x - (T)(1.0);                                      \
        T r = (T)NAN;                                                \
        for (em_i64 k = 2; (k <= n) && !((q) != (q)); k++) {         \
            r = (x + x - (T)(1.0) + (x + x - (T)(1.0))) * q - p;     \
            p = q;                                                   \
            q = r;                                                   \
        }                                                            \
        return r;                                                    \
    }                                                                \

#define EM_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_U(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_shifted_chebyshev_polynomial_u_##SUF(T x, em_i64 n) {                        \
        if (n < 0) {                                                                        \
            return (T)(0.0);                                                                \
        }                                                                                   \
        if (x == (T)(1.0)) {                                                                \
            return n + 1;                                                                   \
        }                                                                                   \
        if (x == (T)(0.0)) {                                                                \
            if (n % 2 == 0) {                                                               \
                return n + 1;                                                               \
            }                                                                               \
            return -(n + 1);                                                                \
        }                                                                                   \
        if ((n > 6) && (fabs(x + x - (T)(1.0)) < (T)(1.0))) {                               \
            if (sin(acos(x + x - (T)(1.0))) != (T)(0.0)) {                                  \
                return sin((n + 1) * acos(x + x - (T)(1.0))) / sin(acos(x + x - (T)(1.0))); \
            }                                                                               \
            return (n + 1) * cos((n + 1) * acos(x + x - (T)(1.0))) / (x + x - (T)(1.0));    \
        }                                                                                   \
        if (n == 0) {                                                                       \
            return (T)(1.0);                                                                \
        }                                                                                   \
        if (n == 1) {                                                                       \
            return x + x - (T)(1.0) + (x + x - (T)(1.0));                                   \
        }                                                                                   \
        T p = (T)(1.0);                                                                     \
        T q = x + x - (T)(1.0) + (x + x - (T)(1.0));                                        \
        T r = (T)NAN;                                                                       \
        for (em_i64 k = 2; (k <= n) && !((q) != (q)); k++) {                                \
            r = (x + x - (T)(1.0) + (x + x - (T)(1.0))) * q - p;                            \
            p = q;                                                                          \
            q = r;                                                                          \
        }                                                                                   \
        return r;                                                                           \
    }                                                                                       \

#define EM_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_V(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_shifted_chebyshev_polynomial_v_##SUF(T x, em_i64 n) {                                          \
        if (n < 0) {                                                                                          \
            return (T)(0.0);                                                                                  \
        }                                                                                                     \
        if (x == (T)(1.0)) {                                                                                  \
            return (T)(1.0);                                                                                  \
        }                                                                                                     \
        if (x == (T)(0.0)) {                                                                                  \
            if (n % 2 == 0) {                                                                                 \
                return (n + n + 1);                                                                           \
            }                                                                                                 \
            return -(n + n + 1);                                                                              \
        }                                                                                                     \
        if ((n > 6) && (fabs(x + x - (T)(1.0)) < (T)(1.0))) {                                                 \
            if (sin(acos(x + x - (T)(1.0)) / (T)(2.0)) != (T)(1.0)) {                                         \
                return cos((n + (T)(0.5)) * acos(x + x - (T)(1.0))) / cos(acos(x + x - (T)(1.0)) / (T)(2.0)); \
            }                                                                                                 \
            if (n % 2 == 0) {                                                                                 \
                return n + n + 1;                                                                             \
            }                                                                                                 \
            return -(n + n + 1);                                                                              \
        }                                                                                                     \
        if (n == 0) {                                                                                         \
            return (T)(1.0);                                                                                  \
        }                                                                                                     \
        if (n == 1) {                                                                                         \
            return x + x - (T)(1.0) + (x + x - (T)(1.0)) - (T)(1.0);                                          \
        }                                                                                                     \
        T p = (T)(1.0);                                                                                       \
        T q = x + x - (T)(1.0) + (x + x - (T)(1.0)) - (T)(1.0);                                               \
        T r = (T)NAN;                                                                                         \
        for (em_i64 k = 2; (k <= n) && !((q) != (q)); k++) {                                                  \
            r = (x + x - (T)(1.0) + (x + x - (T)(1.0))) * q - p;                                              \
            p = q;                                                                                            \
            q = r;                                                                                            \
        }                                                                                                     \
        return r;                                                                                             \
    }                                                                                                         \

#define EM_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_W(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_shifted_chebyshev_polynomial_w_##SUF(T x, em_i64 n) {                                          \
        if (n < 0) {                                                                                          \
            return (T)(0.0);                                                                                  \
        }                                                                                                     \
        if (x == (T)(1.0)) {                                                                                  \
            return n + n + 1;                                                                                 \
        }                                                                                                     \
        if (x == (T)(0.0)) {                                                                                  \
            if (n % 2 == 0) {                                                                                 \
                return (T)(1.0);                                                                              \
            }                                                                                                 \
            return (T)(-1.0);                                                                                 \
        }                                                                                                     \
        if ((n > 4) && (fabs(x + x - (T)(1.0)) < (T)(1.0))) {                                                 \
            if (cos(acos(x + x - (T)(1.0)) / (T)(2.0)) != (T)(1.0)) {                                         \
                return sin((n + (T)(0.5)) * acos(x + x - (T)(1.0))) / sin(acos(x + x - (T)(1.0)) / (T)(2.0)); \
            }                                                                                                 \
            if (n % 2 == 0) {                                                                                 \
                return (T)(1.0);                                                                              \
            }                                                                                                 \
            return (T)(-1.0);                                                                                 \
        }                                                                                                     \
        if (n == 0) {                                                                                         \
            return (T)(1.0);                                                                                  \
        }                                                                                                     \
        if (n == 1) {                                                                                         \
            return x + x - (T)(1.0) + (x + x - (T)(1.0)) + (T)(1.0);                                          \
        }                                                                                                     \
        T p = (T)(1.0);                                                                                       \
        T q = x + x - (T)(1.0) + (x + x - (T)(1.0)) + (T)(1.0);                                               \
        T r = (T)NAN;                                                                                         \
        for (em_i64 k = 2; (k <= n) && !((q) != (q)); k++) {                                                  \
            r = (x + x - (T)(1.0) + (x + x - (T)(1.0))) * q - p;                                              \
            p = q;                                                                                            \
            q = r;                                                                                            \
        }                                                                                                     \
        return r;                                                                                             \
    }                                                                                                         \

#define EM_SPECIAL_HERMITE_POLYNOMIAL_H(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_hermite_polynomial_h_##SUF(T x, em_i64 n) { \
        if (n < 0) {                                       \
            return (T)(0.0);                               \
        }                                                  \
        if (n == 0) {                                      \
            return (T)(1.0);                               \
        }                                                  \
        if (n == 1) {                                      \
            return x + x;                                  \
        }                                                  \
        if (n > HERMITE_LIMIT) {                           \
            return (T)NAN;                                 \
        }                                                  \
        T p = (T)(1.0);                                    \
        T q = x + x;                                       \
        T r = (T)(0.0);                                    \
        for (em_i64 k = 2; k < n + n; k += 2) {            \
            r = (x + x) * q - k * p;                       \
            p = q;                                         \
            q = r;                                         \
        }                                                  \
        return r;                                          \
    }                                                      \

#define EM_SPECIAL_HERMITE_POLYNOMIAL_HE(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_hermite_polynomial_he_##SUF(T x, em_i64 n) { \
        if (n < 0) {                                        \
            return (T)(0.0);                                \
        }                                                   \
        if (n == 0) {                                       \
            return (T)(1.0);                                \
        }                                                   \
        if (n == 1) {                                       \
            return x;                                       \
        }                                                   \
        if (n > HERMITE_LIMIT) {                            \
            return (T)NAN;                                  \
        }                                                   \
        T p = (T)(1.0);                                     \
        T q = x;                                            \
        T r = (T)NAN;                                       \
        for (em_i64 k = 1; k < n; k++) {                    \
            r = x * q - k * p;                              \
            p = q;                                          \
            q = r;                                          \
        }                                                   \
        return r;                                           \
    }                                                       \

#define EM_SPECIAL_LAGUERRE_POLYNOMIAL_L(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_laguerre_polynomial_l_##SUF(T x, em_i64 n) {         \
        if (n < 0) {                                                \
            return (T)(0.0);                                        \
        }                                                           \
        if (fabs(x) == (T)(0.0)) {                                  \
            return (T)(1.0);                                        \
        }                                                           \
        if (n == 0) {                                               \
            return (T)(1.0);                                        \
        }                                                           \
        if (n == 1) {                                               \
            return (T)(1.0) - x;                                    \
        }                                                           \
        T p = (T)(1.0);                                             \
        T q = (T)(1.0) - x;                                         \
        T r = (T)NAN;                                               \
        for (em_i64 k = 1; (k < n) && !((q) != (q)); k++) {         \
            r = (((k + k) + ((T)(1.0) - x)) * q - k * p) / (k + 1); \
            p = q;                                                  \
            q = r;                                                  \
        }                                                           \
        return r;                                                   \
    }                                                               \

#define EM_SPECIAL_LEGENDRE_POLYNOMIAL_P(T, SUF, EPS, HERMITE_LIMIT) \
    EM_FN T em_legendre_polynomial_p_##SUF(T x, em_i64 n) { \
        if (n < 0) {                                        \
            return (T)(0.0);                                \
        }                                                   \
        if (fabs(x) == (T)(1.0)) {                          \
            if (x > (T)(0.0) || n % 2 == 0) {               \
                return (T)(1.0);                            \
            }                                               \
            return (T)(-1.0);                               \
        }                                                   \
        if (n == 0) {                                       \
            return (T)(1.0);                                \
        }                                                   \
        if (n == 1) {                                       \
            return x;                                       \
        }                                                   \
        T p = (T)(1.0);                                     \
        T q = x;                                            \
        T r = (T)NAN;                                       \
        for (em_i64 k = 1; (k < n) && !((q) != (q)); k++) { \
            r = ((k + k + 1) * x * q - k * p) / (k + 1);    \
            p = q;                                          \
            q = r;                                          \
        }                                                   \
        return r;                                           \
    }                                                       \

#define EM_POLYNOMIAL_FUNCTIONS(T, SUF, HERMITE_LIMIT)                            \
    EM_FN em_i64 em_polynomial_degree_##SUF(T n) {                                \
        return (n != n || fabs(n) == (T)INFINITY) ? -1 : (em_i64)n;              \
    }                                                                             \
    EM_SPECIAL_CHEBYSHEV_POLYNOMIAL_T(T, SUF, 0, HERMITE_LIMIT)                   \
    EM_SPECIAL_CHEBYSHEV_POLYNOMIAL_U(T, SUF, 0, HERMITE_LIMIT)                   \
    EM_SPECIAL_CHEBYSHEV_POLYNOMIAL_V(T, SUF, 0, HERMITE_LIMIT)                   \
    EM_SPECIAL_CHEBYSHEV_POLYNOMIAL_W(T, SUF, 0, HERMITE_LIMIT)                   \
    EM_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_T(T, SUF, 0, HERMITE_LIMIT)           \
    EM_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_U(T, SUF, 0, HERMITE_LIMIT)           \
    EM_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_V(T, SUF, 0, HERMITE_LIMIT)           \
    EM_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_W(T, SUF, 0, HERMITE_LIMIT)           \
    EM_SPECIAL_HERMITE_POLYNOMIAL_H(T, SUF, 0, HERMITE_LIMIT)                     \
    EM_SPECIAL_HERMITE_POLYNOMIAL_HE(T, SUF, 0, HERMITE_LIMIT)                    \
    EM_SPECIAL_LAGUERRE_POLYNOMIAL_L(T, SUF, 0, HERMITE_LIMIT)                    \
    EM_SPECIAL_LEGENDRE_POLYNOMIAL_P(T, SUF, 0, HERMITE_LIMIT)

EM_POLYNOMIAL_FUNCTIONS(float, f, 128)
#ifdef EM_HAS_DOUBLE
EM_POLYNOMIAL_FUNCTIONS(double, d, 512)
#endif

#endif /* EM_POLYNOMIALS_H */
