/* <stdint.h> for NVRTC, which has none: the fixed-width types of the LP64 ABI that CUDA
 * shares with its host (int64_t as `long long`, as em_dialect.h's em_i64). */
#ifndef EM_CUDA_STDINT_H
#define EM_CUDA_STDINT_H
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#endif
