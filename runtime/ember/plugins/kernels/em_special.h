/* Special functions of the elementwise expression table (digamma, erfinv, zeta, ...).
 *
 * `ember.plugins.expressions` appends this file (without its include line) to PRELUDE,
 * so every device that renders the table compiles it: C99 on cpu, OpenCL C, CUDA C. Each
 * function is a macro instantiated for float (suffix f) and double (suffix d), as the
 * table's {S} placeholder names them; math calls use the overloaded names (log, tan, ...)
 * that all three languages accept for both types.
 *
 * The algorithms and constants are PyTorch's (aten/src/ATen/native/Math.h), which derive
 * from the Cephes Math Library (Copyright (c) 2018, Steven Moshier, 3-clause BSD
 * licence), so that results agree with torch.special within a few ulp.
 */
#ifndef EM_SPECIAL_H
#define EM_SPECIAL_H

#include "em_dialect.h"

#if (defined(__CUDACC__) || defined(__CUDACC_RTC__)) && !defined(INFINITY)
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#endif

#define EM_PI 3.14159265358979323846

/* psi(x): reflection for x < 0, recurrence up to x >= 10, then the asymptotic series.
 * psi(+-0) is -+inf and psi(negative integer) NaN, as in PyTorch and SciPy. */
#define EM_SPECIAL_DIGAMMA(T, SUF)                                                      \
    EM_FN T em_digamma_##SUF(T x) {                                                     \
        if (x == 0) return (T)copysign((T)INFINITY, -x);                                \
        T result = 0;                                                                   \
        if (x < 0) {                                                                    \
            if (x == (T)trunc(x)) return (T)NAN;                                        \
            /* tan of the fractional part: pi * x loses digits when |x| > 1 */          \
            result = -(T)EM_PI / (T)tan((T)EM_PI * (x - (T)trunc(x)));                 \
            x = 1 - x;                                                                  \
        }                                                                               \
        while (x < 10) {                                                                \
            result -= 1 / x;                                                            \
            x += 1;                                                                     \
        }                                                                               \
        if (x == 10) return result + (T)2.25175258906672110764;                         \
        T y = 0;                                                                        \
        if (x < (T)1.0e17) {                                                            \
            const T z = 1 / (x * x);                                                    \
            T p = (T)8.33333333333333333333E-2;                                         \
            p = p * z + (T)-2.10927960927960927961E-2;                                  \
            p = p * z + (T)7.57575757575757575758E-3;                                   \
            p = p * z + (T)-4.16666666666666666667E-3;                                  \
            p = p * z + (T)3.96825396825396825397E-3;                                   \
            p = p * z + (T)-8.33333333333333333333E-3;                                  \
            p = p * z + (T)8.33333333333333333333E-2;                                   \
            y = z * p;                                                                  \
        }                                                                               \
        return result + (T)log(x) - (T)0.5 / x - y;                                     \
    }

/* erfinv(y): a rational first guess (Pavlis' erfinv, as PyTorch) refined by two Newton
 * steps on erf; +-1 give +-inf, |y| > 1 NaN. */
#define EM_SPECIAL_ERFINV(T, SUF)                                                       \
    EM_FN T em_erfinv_##SUF(T y) {                                                      \
        const T y_abs = (T)fabs(y);                                                     \
        if (y_abs > 1) return (T)NAN;                                                   \
        if (y_abs == 1) return (T)copysign((T)INFINITY, y);                             \
        T x;                                                                            \
        if (y_abs <= (T)0.7) {                                                          \
            const T z = y * y;                                                          \
            const T num = (((T)-0.140543331 * z + (T)0.914624893) * z + (T)-1.645349621) \
                              * z + (T)0.886226899;                                     \
            const T dem = ((((T)0.012229801 * z + (T)-0.329097515) * z + (T)1.442710462) \
                              * z + (T)-2.118377725) * z + 1;                           \
            x = y * num / dem;                                                          \
        } else {                                                                        \
            const T z = (T)sqrt(-(T)log((1 - y_abs) / 2));                              \
            const T num = (((T)1.641345311 * z + (T)3.429567803) * z + (T)-1.624906493)  \
                              * z + (T)-1.970840454;                                    \
            const T dem = ((T)1.637067800 * z + (T)3.543889200) * z + 1;                \
            x = (T)copysign(num, y) / dem;                                              \
        }                                                                               \
        const T two_over_sqrt_pi = (T)1.12837916709551257390;                           \
        x = x - ((T)erf(x) - y) / (two_over_sqrt_pi * (T)exp(-x * x));                  \
        x = x - ((T)erf(x) - y) / (two_over_sqrt_pi * (T)exp(-x * x));                  \
        return x;                                                                       \
    }

#define EM_SPECIAL_FUNCTIONS(T, SUF) \
    EM_SPECIAL_DIGAMMA(T, SUF)       \
    EM_SPECIAL_ERFINV(T, SUF)

EM_SPECIAL_FUNCTIONS(float, f)
#ifdef EM_HAS_DOUBLE
EM_SPECIAL_FUNCTIONS(double, d)
#endif

#endif /* EM_SPECIAL_H */
