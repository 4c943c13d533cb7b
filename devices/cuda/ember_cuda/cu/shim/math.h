/* <math.h> for NVRTC, which has none: CUDA's math functions (expf, fmod, erf, ...) and
 * their float overloads are built into the compiler, so nothing needs declaring. */
#ifndef EM_CUDA_MATH_H
#define EM_CUDA_MATH_H
#endif
