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

/* Hurwitz zeta(x, q) = sum_k (k + q)^-x: Euler-Maclaurin summation. inf at x = 1 and
 * at q a non-positive integer, NaN for x < 1 (and for q < 0 unless x is an integer). */
#define EM_SPECIAL_ZETA(T, SUF)                                                         \
    EM_FN T em_zeta_##SUF(T x, T q) {                                                   \
        const T machep = (T)1.11022302462515654042E-16;                                 \
        const T bernoulli[12] = {                                                       \
            (T)12.0, (T)-720.0, (T)30240.0, (T)-1209600.0, (T)47900160.0,               \
            (T)-1.8924375803183791606e9, (T)7.47242496e10, (T)-2.950130727918164224e12, \
            (T)1.1646782814350067249e14, (T)-4.5979787224074726105e15,                  \
            (T)1.8152105401943546773e17, (T)-7.1661652561756670113e18};                 \
        if (x == 1) return (T)INFINITY;                                                 \
        if (x < 1) return (T)NAN;                                                       \
        if (q <= 0) {                                                                   \
            if (q == (T)floor(q)) return (T)INFINITY;                                   \
            if (x != (T)floor(x)) return (T)NAN;                                        \
        }                                                                               \
        T s = (T)pow(q, -x), a = q, b = 0;                                              \
        int i = 0;                                                                      \
        while (i < 9 || a <= 9) {                                                       \
            i += 1;                                                                     \
            a += 1;                                                                     \
            b = (T)pow(a, -x);                                                          \
            s += b;                                                                     \
            if (-machep * s < b && b < machep * s) return s;                            \
        }                                                                               \
        const T w = a;                                                                  \
        s += b * w / (x - 1);                                                           \
        s -= (T)0.5 * b;                                                                \
        T f = 1, k = 0;                                                                 \
        for (i = 0; i < 12; i++) {                                                      \
            f *= x + k;                                                                 \
            b /= w;                                                                     \
            T t = f * b / bernoulli[i];                                                 \
            s = s + t;                                                                  \
            t = (T)fabs(t / s);                                                         \
            if (t < machep) return s;                                                   \
            k += 1;                                                                     \
            f *= x + k;                                                                 \
            b /= w;                                                                     \
            k += 1;                                                                     \
        }                                                                               \
        return s;                                                                       \
    }

/* The regularized incomplete gamma functions P(a, x) (igamma) and Q(a, x) (igammac), as
 * SciPy and PyTorch compute them (the power series, the series of Q, the continued
 * fraction, with x^a e^-x / gamma(a) from Boost's Lanczos sum), without their uniform
 * asymptotic expansion for large a near x, where the series take up to 2000 terms. */
#define EM_SPECIAL_IGAMMA(T, SUF, EPS, MAXLOG, BIG)                                      \
    EM_FN T em_lanczos_sum_expg_scaled_##SUF(T x) {                                     \
        const T num[13] = {                                                             \
            (T)0.006061842346248906525783753964555936883222,                            \
            (T)0.5098416655656676188125178644804694509993,                              \
            (T)19.51992788247617482847860966235652136208,                               \
            (T)449.9445569063168119446858607650988409623,                               \
            (T)6955.999602515376140356310115515198987526,                               \
            (T)75999.29304014542649875303443598909137092,                               \
            (T)601859.6171681098786670226533699352302507,                               \
            (T)3481712.15498064590882071018964774556468,                                \
            (T)14605578.08768506808414169982791359218571,                               \
            (T)43338889.32467613834773723740590533316085,                               \
            (T)86363131.28813859145546927288977868422342,                               \
            (T)103794043.1163445451906271053616070238554,                               \
            (T)56906521.91347156388090791033559122686859};                              \
        const T denom[13] = {(T)1., (T)66., (T)1925., (T)32670., (T)357423.,            \
            (T)2637558., (T)13339535., (T)45995730., (T)105258076., (T)150917976.,      \
            (T)120543840., (T)39916800., (T)0.};                                        \
        T n = 0, d = 0;                                                                 \
        if (fabs(x) > 1) { /* a polynomial in 1/x, the coefficients reversed */         \
            const T y = 1 / x;                                                          \
            for (int i = 12; i >= 0; i--) {                                             \
                n = n * y + num[i];                                                     \
                d = d * y + denom[i];                                                   \
            }                                                                           \
        } else {                                                                        \
            for (int i = 0; i <= 12; i++) {                                             \
                n = n * x + num[i];                                                     \
                d = d * x + denom[i];                                                   \
            }                                                                           \
        }                                                                               \
        return n / d;                                                                   \
    }                                                                                   \
    /* x^a e^-x / gamma(a) */                                                           \
    EM_FN T em_igam_fac_##SUF(T a, T x) {                                               \
        if (fabs(a - x) > (T)0.4 * fabs(a)) {                                           \
            const T ax = a * (T)log(x) - x - (T)lgamma(a);                              \
            return ax < -(T)(MAXLOG) ? 0 : (T)exp(ax);                                  \
        }                                                                               \
        const T g = (T)6.024680040776729583740234375;                                   \
        const T fac = a + g - (T)0.5;                                                   \
        T res = (T)sqrt(fac / (T)2.718281828459045) / em_lanczos_sum_expg_scaled_##SUF(a); \
        if (a < 200 && x < 200) {                                                       \
            res *= (T)exp(a - x) * (T)pow(x / fac, a);                                  \
        } else {                                                                        \
            const T numfac = (x - a - g + (T)0.5) / fac;                                \
            res *= (T)exp(a * ((T)log1p(numfac) - numfac) + x * ((T)0.5 - g) / fac);    \
        }                                                                               \
        return res;                                                                     \
    }                                                                                   \
    EM_FN T em_igam_series_##SUF(T a, T x) {                                            \
        const T ax = em_igam_fac_##SUF(a, x);                                           \
        if (ax == 0) return 0;                                                          \
        T r = a, c = 1, ans = 1;                                                        \
        for (int i = 0; i < 2000; i++) {                                                \
            r += 1;                                                                     \
            c *= x / r;                                                                 \
            ans += c;                                                                   \
            if (c <= (T)(EPS) * ans) break;                                             \
        }                                                                               \
        return ans * ax / a;                                                            \
    }                                                                                   \
    EM_FN T em_igamc_series_##SUF(T a, T x) {                                           \
        T fac = 1, sum = 0;                                                             \
        for (int n = 1; n < 2000; n++) {                                                \
            fac *= -x / (T)n;                                                           \
            const T term = fac / (a + (T)n);                                            \
            sum += term;                                                                \
            if (fabs(term) <= (T)(EPS) * fabs(sum)) break;                              \
        }                                                                               \
        const T logx = (T)log(x);                                                       \
        return -(T)expm1(a * logx - (T)lgamma(1 + a))                                   \
               - (T)exp(a * logx - (T)lgamma(a)) * sum;                                 \
    }                                                                                   \
    EM_FN T em_igamc_fraction_##SUF(T a, T x) {                                         \
        const T ax = em_igam_fac_##SUF(a, x);                                           \
        if (ax == 0) return 0;                                                          \
        T y = 1 - a, z = x + y + 1, c = 0;                                              \
        T pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;                               \
        T ans = pkm1 / qkm1;                                                            \
        for (int i = 0; i < 2000; i++) {                                                \
            c += 1;                                                                     \
            y += 1;                                                                     \
            z += 2;                                                                     \
            const T yc = y * c;                                                         \
            const T pk = pkm1 * z - pkm2 * yc;                                          \
            const T qk = qkm1 * z - qkm2 * yc;                                          \
            T t = 1;                                                                    \
            if (qk != 0) {                                                              \
                const T r = pk / qk;                                                    \
                t = (T)fabs((ans - r) / r);                                             \
                ans = r;                                                                \
            }                                                                           \
            pkm2 = pkm1;                                                                \
            pkm1 = pk;                                                                  \
            qkm2 = qkm1;                                                                \
            qkm1 = qk;                                                                  \
            if (fabs(pk) > (T)(BIG)) {                                                  \
                pkm2 /= (T)(BIG);                                                       \
                pkm1 /= (T)(BIG);                                                       \
                qkm2 /= (T)(BIG);                                                       \
                qkm1 /= (T)(BIG);                                                       \
            }                                                                           \
            if (t <= (T)(EPS)) break;                                                   \
        }                                                                               \
        return ans * ax;                                                                \
    }                                                                                   \
    EM_FN T em_igammac_##SUF(T a, T x) {                                                \
        if (x < 0 || a < 0) return (T)NAN;                                              \
        if (a == 0) return x > 0 ? 0 : (T)NAN;                                          \
        if (x == 0) return 1;                                                           \
        if (a == (T)INFINITY) return x == (T)INFINITY ? (T)NAN : 1;                     \
        if (x == (T)INFINITY) return 0;                                                 \
        if (x > (T)1.1) {                                                               \
            return x < a ? 1 - em_igam_series_##SUF(a, x) : em_igamc_fraction_##SUF(a, x); \
        }                                                                               \
        if (x <= (T)0.5) {                                                              \
            return (T)-0.4 / (T)log(x) < a ? 1 - em_igam_series_##SUF(a, x)              \
                                           : em_igamc_series_##SUF(a, x);               \
        }                                                                               \
        return x * (T)1.1 < a ? 1 - em_igam_series_##SUF(a, x) : em_igamc_series_##SUF(a, x); \
    }                                                                                   \
    EM_FN T em_igamma_##SUF(T a, T x) {                                                 \
        if (x < 0 || a < 0) return (T)NAN;                                              \
        if (a == 0) return x > 0 ? 1 : (T)NAN;                                          \
        if (x == 0) return 0;                                                           \
        if (a == (T)INFINITY) return x == (T)INFINITY ? (T)NAN : 0;                     \
        if (x == (T)INFINITY) return 1;                                                 \
        if (x > 1 && x > a) return 1 - em_igammac_##SUF(a, x);                          \
        return em_igam_series_##SUF(a, x);                                              \
    }

/* erfcx(x) = exp(x^2) erfc(x) without overflow: the Laplace continued fraction for
 * x >= 5 (60 terms, evaluated from the tail), the product below (where exp(x^2) loses
 * at most 25 ulp), 2 exp(x^2) - erfcx(-x) for negative x. */
#define EM_SPECIAL_ERFCX(T, SUF)                                                        \
    EM_FN T em_erfcx_positive_##SUF(T x) {                                              \
        if (x < 5) return (T)exp(x * x) * (T)erfc(x);                                   \
        if (x > (T)1e8) return (T)0.56418958354775628694807945156 / x;                  \
        T f = x;                                                                        \
        for (int k = 60; k >= 1; k--) f = x + (T)(0.5 * k) / f;                         \
        return (T)0.56418958354775628694807945156 / f;                                  \
    }                                                                                   \
    EM_FN T em_erfcx_##SUF(T x) {                                                       \
        if (x != x) return x;                                                           \
        if (x >= 0) return em_erfcx_positive_##SUF(x);                                  \
        if (x < (T)-26.7) return (T)INFINITY;                                           \
        return 2 * (T)exp(x * x) - em_erfcx_positive_##SUF(-x);                         \
    }

/* ndtri(p): the x at which the standard normal CDF is p (Cephes' rational approximations
 * in three intervals); -inf at 0, inf at 1, NaN outside [0, 1]. */
#define EM_SPECIAL_NDTRI(T, SUF)                                                        \
    EM_FN T em_polevl_##SUF(T x, const T* coefficients, int degree) {                   \
        T result = 0;                                                                   \
        for (int i = 0; i <= degree; i++) result = result * x + coefficients[i];        \
        return result;                                                                  \
    }                                                                                   \
    EM_FN T em_ndtri_##SUF(T y0) {                                                      \
        const T P0[5] = {(T)-5.99633501014107895267E1, (T)9.80010754185999661536E1,     \
            (T)-5.66762857469070293439E1, (T)1.39312609387279679503E1,                  \
            (T)-1.23916583867381258016E0};                                              \
        const T Q0[9] = {(T)1.00000000000000000000E0, (T)1.95448858338141759834E0,      \
            (T)4.67627912898881538453E0, (T)8.63602421390890590575E1,                   \
            (T)-2.25462687854119370527E2, (T)2.00260212380060660359E2,                  \
            (T)-8.20372256168333339912E1, (T)1.59056225126211695515E1,                  \
            (T)-1.18331621121330003142E0};                                              \
        const T P1[9] = {(T)4.05544892305962419923E0, (T)3.15251094599893866154E1,      \
            (T)5.71628192246421288162E1, (T)4.40805073893200834700E1,                   \
            (T)1.46849561928858024014E1, (T)2.18663306850790267539E0,                   \
            (T)-1.40256079171354495875E-1, (T)-3.50424626827848203418E-2,               \
            (T)-8.57456785154685413611E-4};                                             \
        const T Q1[9] = {(T)1.00000000000000000000E0, (T)1.57799883256466749731E1,      \
            (T)4.53907635128879210584E1, (T)4.13172038254672030440E1,                   \
            (T)1.50425385692907503408E1, (T)2.50464946208309415979E0,                   \
            (T)-1.42182922854787788574E-1, (T)-3.80806407691578277194E-2,               \
            (T)-9.33259480895457427372E-4};                                             \
        const T P2[9] = {(T)3.23774891776946035970E0, (T)6.91522889068984211695E0,      \
            (T)3.93881025292474443415E0, (T)1.33303460815807542389E0,                   \
            (T)2.01485389549179081538E-1, (T)1.23716634817820021358E-2,                 \
            (T)3.01581553508235416007E-4, (T)2.65806974686737550832E-6,                 \
            (T)6.23974539184983293730E-9};                                              \
        const T Q2[9] = {(T)1.00000000000000000000E0, (T)6.02427039364742014255E0,      \
            (T)3.67983563856160859403E0, (T)1.37702099489081330271E0,                   \
            (T)2.16236993594496635890E-1, (T)1.34204006088543189037E-2,                 \
            (T)3.28014464682127739104E-4, (T)2.89247864745380683936E-6,                 \
            (T)6.79019408009981274425E-9};                                              \
        if (y0 == 0) return -(T)INFINITY;                                               \
        if (y0 == 1) return (T)INFINITY;                                                \
        if (y0 < 0 || y0 > 1) return (T)NAN;                                            \
        int negate = 1;                                                                 \
        T y = y0;                                                                       \
        if (y > 1 - (T)0.13533528323661269189) { /* exp(-2) */                          \
            y = 1 - y;                                                                  \
            negate = 0;                                                                 \
        }                                                                               \
        if (y > (T)0.13533528323661269189) {                                            \
            y = y - (T)0.5;                                                             \
            const T y2 = y * y;                                                         \
            const T x = y + y * (y2 * em_polevl_##SUF(y2, P0, 4) / em_polevl_##SUF(y2, Q0, 8)); \
            return x * (T)2.50662827463100050242E0;                                     \
        }                                                                               \
        const T x = (T)sqrt(-2 * (T)log(y));                                            \
        const T x0 = x - (T)log(x) / x;                                                 \
        const T z = 1 / x;                                                              \
        const T x1 = x < 8 ? z * em_polevl_##SUF(z, P1, 8) / em_polevl_##SUF(z, Q1, 8)   \
                           : z * em_polevl_##SUF(z, P2, 8) / em_polevl_##SUF(z, Q2, 8);  \
        return negate ? x1 - x0 : x0 - x1;                                              \
    }

#define EM_SPECIAL_FUNCTIONS(T, SUF, EPS, MAXLOG, BIG) \
    EM_SPECIAL_DIGAMMA(T, SUF)                         \
    EM_SPECIAL_ERFINV(T, SUF)                          \
    EM_SPECIAL_IGAMMA(T, SUF, EPS, MAXLOG, BIG)        \
    EM_SPECIAL_ERFCX(T, SUF)                           \
    EM_SPECIAL_NDTRI(T, SUF)

EM_SPECIAL_FUNCTIONS(float, f, 5.9604644775390625E-8, 88.72283905206835, 16777216.)
#ifdef EM_HAS_DOUBLE
EM_SPECIAL_FUNCTIONS(double, d, 1.11022302462515654042E-16, 7.09782712893383996843E2,
                     4.503599627370496e15)
#endif

/* zeta's float version sums in double where there is one, as PyTorch's does: its terms
 * underflow float long before the sum converges. */
#ifdef EM_HAS_DOUBLE
EM_SPECIAL_ZETA(double, d)
EM_FN float em_zeta_f(float x, float q) { return (float)em_zeta_d((double)x, (double)q); }
#else
EM_SPECIAL_ZETA(float, f)
#endif

#endif /* EM_SPECIAL_H */
