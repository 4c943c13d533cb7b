/* The C helpers that the expression table's integer and float formulas call
 * (runtime/ember/plugins/expressions.py), PyTorch's semantics. The runtime rejects integer
 * division by zero before a kernel runs; the guards in the table only keep C defined. */
#ifndef EMBER_CPU_ELEMENTWISE_OPS_H
#define EMBER_CPU_ELEMENTWISE_OPS_H

#include <math.h>
#include <stdint.h>

#define EM_ZERO_DIVISION(T) ((T)0)

/* Signed integer division in int64, b != 0; b == -1 negates with wrap-around instead of
 * trapping on INT_MIN / -1. floor_divide and remainder round toward -inf. */
static inline int64_t em_trunc_div_s(int64_t a, int64_t b) {
    return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
static inline int64_t em_floor_div_s(int64_t a, int64_t b) {
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
static inline int64_t em_fmod_s(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
static inline int64_t em_remainder_s(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

/* Integer power by squaring, wrapping; negative exponents as PyTorch's powi. */
static inline int64_t em_pow_s(int64_t a, int64_t b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t result = 1, base = (uint64_t)a;
    while (b) {
        if (b & 1) result *= base;
        base *= base;
        b >>= 1;
    }
    return (int64_t)result;
}

/* PyTorch's float floor_divide (rounds the exact quotient) and remainder (sign of b). */
#define EM_FLOAT_HELPERS(T, SUF, M)                                               \
    static inline T em_floor_div_##SUF(T a, T b) {                                \
        if (b == 0) return a / b;                                                 \
        T mod = fmod##M(a, b);                                                    \
        T div = (a - mod) / b;                                                    \
        if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                           \
        if (div == 0) return copysign##M((T)0, a / b);                            \
        T floored = floor##M(div);                                                \
        return div - floored > (T)0.5 ? floored + 1 : floored;                    \
    }                                                                             \
    static inline T em_remainder_##SUF(T a, T b) {                                \
        T mod = fmod##M(a, b);                                                    \
        return (mod != 0 && (b < 0) != (mod < 0)) ? mod + b : mod;                \
    }
EM_FLOAT_HELPERS(float, f, f)
EM_FLOAT_HELPERS(double, d, )

#endif
