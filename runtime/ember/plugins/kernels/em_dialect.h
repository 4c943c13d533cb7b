/* Ember's portable kernel dialect: C99 that compiles unchanged as OpenCL C and CUDA C.
 *
 * Kernel sources shared by several devices (this folder, `ember.plugins.kernels`) write
 * their element functions in it; each device wraps them in its own loop or launch (an
 * OpenMP loop on cpu, a work-item per element on OpenCL, a thread per element on CUDA).
 *
 *   em_u32, em_u64, em_i32, em_i64  fixed-width integers
 *   EM_FN                           qualifier of a device function (inlined)
 *   EM_GLOBAL                       address space of a pointer into a tensor's memory
 *   sqrtf, logf, cosf, fmaf, ...    C99's float math, aliased where the language overloads
 *   EM_HAS_DOUBLE                   defined where float64 is available
 */
#ifndef EM_DIALECT_H
#define EM_DIALECT_H

#if defined(__OPENCL_VERSION__)
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define EM_HAS_DOUBLE 1
#endif
typedef uint em_u32;
typedef ulong em_u64;
typedef int em_i32;
typedef long em_i64;
/* Forced, as CUDA's is: PoCL left plain `inline` calls out of line (col2im ~10% slower). */
#define EM_FN static inline __attribute__((always_inline))
#define EM_GLOBAL __global
#define sqrtf sqrt
#define logf log
#define cosf cos
#define sinf sin
#define fmaf fma
#elif defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define EM_HAS_DOUBLE 1
typedef unsigned int em_u32;
typedef unsigned long long em_u64;
typedef int em_i32;
typedef long long em_i64;
#define EM_FN __device__ __forceinline__
#define EM_GLOBAL
#else
#include <math.h>
#include <stdint.h>
#define EM_HAS_DOUBLE 1
typedef uint32_t em_u32;
typedef uint64_t em_u64;
typedef int32_t em_i32;
typedef int64_t em_i64;
#define EM_FN static inline
#define EM_GLOBAL
#endif

#endif /* EM_DIALECT_H */
